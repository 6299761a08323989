"""Team procedures' pure rules: the lifecycle, the channels a text prescribes or refuses, the conflict
flag, keyword relevance, the proposal's dedup key, the prompt section, the personal-data refusal."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.domain.pii.detector import PatternDetector
from carnet.domain.pii.pseudonyms import PseudonymMap
from carnet.domain.procedures import (
    Decision,
    ProcedureStatus,
    TeamProcedure,
    after,
    conflicts,
    dedup_key,
    keyword_hit,
    prescribed_channels,
    refused_channels,
)
from carnet.domain.prompt import preamble, render
from carnet.domain.records import Scope
from carnet.errors import InvalidInput, ProcedureHasPersonalData
from carnet.services.pii import Pii
from carnet.services.procedures import Proposal, check_proposal

AT = datetime(2026, 12, 1, tzinfo=UTC)
S = ProcedureStatus


def _proc(text: str = "Demander des photos.", *, applies_when: tuple[str, ...] = (), agent: str | None = None,
          queue: str | None = None) -> TeamProcedure:
    return TeamProcedure("p1", "t1", text, S.APPROVED, "k1", AT, AT, agent_id=agent, queue=queue,
                         applies_when=applies_when)


@pytest.mark.parametrize(("decision", "start", "end"), [
    (Decision.APPROVE, S.PROPOSED, S.APPROVED), (Decision.REJECT, S.PROPOSED, S.REJECTED),
    (Decision.RETIRE, S.APPROVED, S.RETIRED)])
def test_each_decision_applies_from_one_status_only(decision: Decision, start: S, end: S) -> None:
    assert after(decision, start) is end
    assert [s for s in S if s is not start and after(decision, s) is not None] == []


@pytest.mark.parametrize(("fact", "channel"), [
    ("Le membre ne veut pas d'e-mail.", "email"), ("Jamais de papier, merci.", "post"),
    ("Pas d'appel avant 10 h.", "phone"), ("Plus de courrier postal.", "post"), ("Refuse les SMS.", "sms"),
    ("Le membre ne souhaite plus être contacté par téléphone.", "phone"), ("Never email him.", "email")])
def test_a_negated_channel_is_refused_not_prescribed(fact: str, channel: str) -> None:
    assert channel in refused_channels(fact) and channel not in prescribed_channels(fact)


def test_a_procedure_prescribes_the_channels_it_names() -> None:
    assert prescribed_channels("Envoyer les documents par e-mail au membre.") == ("email",)
    assert prescribed_channels("Confirmer par SMS puis par courrier postal.") == ("sms", "post")
    assert prescribed_channels("Demander des photos avant d'envoyer l'expert.") == ()


def test_conflict_is_a_refused_channel_the_procedure_prescribes() -> None:
    facts = ["Le membre ne veut pas d'e-mail.", "Joignable le matin sur son portable.", "Jamais de papier."]
    found = conflicts("Envoyer les documents par e-mail.", facts)
    assert [(c.channel, c.constraint) for c in found] == [("email", "Le membre ne veut pas d'e-mail.")]
    assert conflicts("Envoyer les documents par SMS.", facts) == []
    assert conflicts("Ne jamais envoyer de courrier papier.", facts) == []  # it refuses post too: no conflict


def test_keywords_match_whole_folded_words() -> None:
    p = _proc(applies_when=("dégât des eaux", "fuite"))
    assert keyword_hit(p, "Le membre signale une FUITE dans la cuisine")
    assert keyword_hit(p, "un degat des eaux hier")
    assert not keyword_hit(p, "les fuites de gaz")  # whole words only
    assert not keyword_hit(_proc(), "fuite")


def test_scope_agent_and_queue() -> None:
    assert _proc().applies_to(agent_id=None, queue=None)
    assert _proc(agent="a1").applies_to(agent_id="a1", queue="q")
    assert not _proc(agent="a1").applies_to(agent_id="a2", queue=None)
    assert not _proc(queue="sinistres").applies_to(agent_id="a1", queue=None)


def test_dedup_key_ignores_case_accents_spaces_and_final_dot() -> None:
    assert dedup_key("Demander  des PHOTOS avant l'expert.") == dedup_key("demander des photos avant l'expert")
    assert dedup_key("Demander des photos") != dedup_key("Demander des devis")


def test_team_section_is_marked_and_flags_conflicts_and_the_preamble_is_unchanged() -> None:
    prompt = render(facts=[], episodes=[], procedures=[], locale="fr",
                    team=[("Envoyer les documents par e-mail.", ["Le membre ne veut pas d'e-mail."])])
    assert prompt.startswith(preamble("fr"))
    assert ("#### Procédures de l'équipe (validées par un superviseur)\n"
            "- « Envoyer les documents par e-mail. »") in prompt
    assert "⚠ en conflit avec une contrainte du membre : « Le membre ne veut pas d'e-mail. »" in prompt
    assert prompt.index("Procédures de l'équipe") < prompt.index("#### Procédures\n")
    en = render(facts=[], episodes=[], procedures=[], locale="en", team=[("Send by email.", ["no email"])])
    assert "⚠ conflicts with the member's constraint: « no email »" in en
    assert "équipe" not in render(facts=[], episodes=[], procedures=[], locale="fr")  # no team: no section


class _NoMaps:
    def load(self, scope: Scope) -> PseudonymMap:
        raise AssertionError("a team procedure has no subject: no pseudonym map is read")

    def save(self, scope: Scope, pmap: PseudonymMap) -> None:
        raise AssertionError("never saved")

    def forget(self, scope: Scope) -> None:
        raise AssertionError("never forgotten")


PII = Pii(detector=PatternDetector(), query_detector=PatternDetector(), maps=_NoMaps())


@settings(max_examples=40, deadline=None)
@given(before=st.sampled_from(["Rappeler le ", "Pour ce dossier, écrire à ", "Virer sur "]),
       value=st.one_of(
           st.from_regex(r"0[67]( \d\d){4}", fullmatch=True),
           st.from_regex(r"[a-z]{3,8}\.[a-z]{3,8}@(orange|gmail|free)\.fr", fullmatch=True),
           st.just("FR76 3000 6000 0112 3456 7890 189")))
def test_personal_data_in_a_procedure_is_refused(before: str, value: str) -> None:
    with pytest.raises(ProcedureHasPersonalData) as caught:
        check_proposal(PII, "t1", Proposal(before + value + " avant la clôture."))
    assert caught.value.code == "procedure_personal_data" and value not in caught.value.message


def test_a_plain_procedure_and_bad_inputs() -> None:
    check_proposal(PII, "t1", Proposal("Pour un dégât des eaux, toujours demander des photos avant l'expert.",
                                       queue="sinistres", applies_when=("dégât des eaux",)))
    for bad in (Proposal("  "), Proposal("x" * 1001), Proposal("ok", agent_id="a b"),
                Proposal("ok", applies_when=("",)), Proposal("ok", applies_when=tuple("abcdefghijk"))):
        with pytest.raises(InvalidInput):
            check_proposal(PII, "t1", bad)
    with pytest.raises(ProcedureHasPersonalData):
        check_proposal(PII, "t1", Proposal("Demander des photos", applies_when=("06 12 34 56 78",)))
