"""``bench scenarios --llm labels`` end to end on small labelled files written for this test. From calls: a
temporary server whose workers run the gated Mistral extractor as ``carnet serve`` builds it, the adapter
talking over real HTTP (the ``mistralai`` SDK) to the stand-in that answers from the labels. A call in which
the shipped turn filter keeps no turn is not sent; the call that says the facts is, and they are stored. From
facts: each write's uncertain band is asked of the same adapter, and what the labels say is closed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from carnet.bench.scenarios_llm import EXTRACTION, JUDGMENT, labelled_folds
from carnet.bench.scenarios_loo import run


def _call(at: str, *turns: tuple[str, str]) -> dict[str, Any]:
    return {"session_id": f"s-{at}", "at": at, "messages": [{"role": r, "content": c, "at": at} for r, c in turns]}


SUBJECT = {
    "facts": [{"at": "2025-03-02T10:10:00+01:00", "text": "Déménagement à Rennes, 4 rue des Tilleuls, le 1er mars."},
              {"at": "2025-03-02T10:11:00+01:00", "text": "Cotisation habitation : 32,50 euros par mois."}],
    "calls": [_call("2025-02-20T09:00:00+01:00",  # the shipped filter keeps none of these turns (p < 0.31)
                    ("advisor", "Bonjour, service clients, que puis-je faire pour vous ?"),
                    ("user", "Bonjour, je voulais juste savoir si vous étiez ouverts samedi."),
                    ("advisor", "Oui, de 9 heures à 12 heures."),
                    ("user", "Merci beaucoup, bonne journée."),
                    ("advisor", "Bonne journée à vous, au revoir.")),
              _call("2025-03-02T10:00:00+01:00",  # it keeps the two that say the facts (p 0.83, 0.66)
                    ("advisor", "Bonjour, que puis-je faire pour vous ?"),
                    ("user", "J'ai déménagé à Rennes, 4 rue des Tilleuls, depuis le 1er mars."),
                    ("advisor", "C'est noté. Votre cotisation habitation passe à 32,50 euros par mois."),
                    ("user", "Très bien."),
                    ("advisor", "Autre chose ?"),
                    ("user", "Non merci, au revoir."))],
    "queries": [{"q": "Quel est le montant de la cotisation habitation ?", "expect_any": ["32,50"],
                 "said_any": ["32,50"]}],
    "superseded": [],
}


def test_the_llm_path_sends_only_the_calls_the_filter_keeps_and_stores_what_the_labels_say(tmp_path: Path) -> None:
    data = tmp_path / "small.json"
    data.write_text(json.dumps({"about": "test", "tenants": {"assur-a": {"subjects": {"M-1": SUBJECT}}},
                                "cross_tenant_probes": []}), encoding="utf-8")
    with labelled_folds([data], leave_one_out=False) as fold:
        result = run(data=[data], source="calls", leave_one_out=False, judge_dir=None, judge_path=None,
                     extractor_for=fold, json_out=False, extraction=EXTRACTION)
    [row] = result["files"]
    assert (row["llm_sent"], row["llm_skipped"], row["llm_share"], row["llm_failures"]) == (1, 1, 0.5, 0)
    assert row["llm_labels"]["facts_requests"] == 1 and row["llm_labels"]["facts_answered"] == 2
    assert row["llm_labels"]["facts_not_sent"] == 0  # the call kept back says none of the facts
    assert (row["calls"], row["records"], row["noise"], row["dead_intakes"]) == (2, 2, 0.0, 0)
    assert row["recall_at_3_said"] == 1.0 and result["extraction"] == EXTRACTION


NOTES = {
    "facts": [{"at": "2025-01-10T09:00:00+01:00", "text": "Cotisation habitation : 32 euros par mois, prélevée le 5."},
              {"at": "2025-02-02T10:00:00+01:00", "text": "Préfère être appelé le matin, avant 11 heures."},
              {"at": "2025-09-15T16:00:00+02:00",
               "text": "Cotisation habitation portée à 35 euros par mois à compter d'octobre."}],
    "queries": [{"q": "Montant de la cotisation habitation ?", "expect_any": ["35 euros"], "not_old": 0}],
    "superseded": [{"old": 0, "by": 2}], "calls": [],
}


def test_from_facts_the_llm_settles_the_band_of_each_write(tmp_path: Path) -> None:
    """A judge that settles nothing (every pair in its band): without an LLM nothing is closed; with the
    stand-in, the labelled change closes the old premium and nothing else, and the judgments are counted."""
    from tests.support.judges import always_uncertain

    data = tmp_path / "notes.json"
    data.write_text(json.dumps({"about": "test", "tenants": {"assur-a": {"subjects": {"M-1": NOTES}}},
                                "cross_tenant_probes": []}), encoding="utf-8")
    judge = always_uncertain(tmp_path)
    alone = run(data=[data], source="facts", leave_one_out=False, judge_dir=None, judge_path=judge,
                extractor_for=None, json_out=False)
    with labelled_folds([data], leave_one_out=False) as fold:
        asked = run(data=[data], source="facts", leave_one_out=False, judge_dir=None, judge_path=judge,
                    extractor_for=fold, json_out=False, extraction=JUDGMENT)
    [before], [row] = alone["files"], asked["files"]
    # Three records, three results: the old premium, only contested without an LLM, is among them (stale).
    assert (before["recall_at_3"], before["stale"], before["false_superseded"]) == (0.0, 1.0, 0)
    assert "llm_labels" not in before and alone["extraction"] is None
    assert (row["recall_at_3"], row["stale"], row["false_superseded"]) == (1.0, 0.0, 0)  # closed: not returned
    assert row["llm_labels"]["obsolete_requests"] >= 2 and row["llm_labels"]["named"] == 1
    assert asked["extraction"] == JUDGMENT
