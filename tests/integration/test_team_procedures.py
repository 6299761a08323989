"""Team procedures through the facade on the real embedded stack: who may propose, see and decide,
every state change audited, and ``assemble`` using approved procedures only, the member's
constraints flagged."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import SecretStr

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.domain.procedures import Decision, ProcedureStatus
from carnet.errors import Forbidden, ProcedureHasPersonalData, ProcedureNotFound, ProcedureState
from carnet.ports import Embedder
from carnet.services.door import operator
from carnet.services.memories.assemble import budgets
from carnet.services.memories.remember import NewMemory
from carnet.services.procedures import Proposal
from carnet.settings.root import CatalogBackend, PostgresSettings, Settings

AT = datetime(2025, 3, 1, tzinfo=UTC)
SUP = operator("t1", "sup-key", "supervisor")
AGENT = operator("t1", "agent-key", "agent")
ADMIN = operator("t1", "admin-key", "admin")
WATER = Proposal("Pour un dégât des eaux, toujours demander des photos avant d'envoyer l'expert.",
                 applies_when=("dégât des eaux", "fuite"))
EMAIL = Proposal("Pour une fuite, envoyer les documents de déclaration par e-mail.", applies_when=("fuite",))
QUERY = "Le membre appelle pour une fuite dans sa cuisine"


@pytest.fixture(params=["sqlite", "postgres"])
def both(request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder) -> Iterator[Container]:
    """The embedded stack, or one whose control plane (the procedures with it) is PostgreSQL."""
    if request.param == "sqlite":
        yield request.getfixturevalue("container")
        return
    dsn = request.getfixturevalue("postgres_dsn")
    c = build(Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", catalog=CatalogBackend.POSTGRES,
                       postgres=PostgresSettings(dsn=SecretStr(dsn), pool_size=2)), embedder=embedder)
    try:
        yield c
    finally:
        c.close()


def _member(c: Container, facts: list[str]) -> None:
    c.facade.remember(AGENT, subject_id="m-1", items=[NewMemory(text=t, occurred_at=AT) for t in facts])


def _team_texts(c: Container, query: str = QUERY, **kw: str) -> list[str]:
    ctx = c.facade.assemble(AGENT, subject_id="m-1", query=query, budget=budgets(c.deps, overrides={}), **kw)
    return [t.procedure.text for t in ctx.team]


def test_only_approved_procedures_reach_assemble(both: Container) -> None:
    c = both
    _member(c, ["Le membre a un contrat habitation."])
    f = c.facade
    water = f.propose_procedure(SUP, proposal=WATER)
    rejected = f.propose_procedure(AGENT, proposal=Proposal("Pour une fuite, rappeler le lendemain.",
                                                            applies_when=("fuite",)))
    retired = f.propose_procedure(SUP, proposal=Proposal("Pour une fuite, envoyer un plombier d'office.",
                                                         applies_when=("fuite",)))
    assert water.status is ProcedureStatus.PROPOSED and rejected.proposed_by == "agent-key"
    assert _team_texts(c) == []  # proposed: never used
    f.decide_procedure(SUP, procedure_id=water.id, decision=Decision.APPROVE)
    f.decide_procedure(SUP, procedure_id=rejected.id, decision=Decision.REJECT)
    f.decide_procedure(SUP, procedure_id=retired.id, decision=Decision.APPROVE)
    f.decide_procedure(SUP, procedure_id=retired.id, decision=Decision.RETIRE)
    assert _team_texts(c) == [WATER.text]
    ctx = f.assemble(AGENT, subject_id="m-1", query=QUERY, budget=budgets(c.deps, overrides={}))
    assert "#### Procédures de l'équipe (validées par un superviseur)\n- « " + WATER.text + " »" in ctx.prompt
    assert ctx.stats["team_procedures"] == 1 and ctx.stats["team_conflicts"] == 0
    assert _team_texts(c, "Quel est le solde de mon compte ?") == []  # not relevant to that query
    c.audit.flush()
    reads = [e.event.detail for e in c.audit.log.entries("t1") if e.event.action == "context.assemble"]
    assert [d.get("team_procedures") for d in reads] == [None, water.id, water.id, None]


def test_a_procedure_conflicting_with_the_members_constraint_is_flagged(both: Container) -> None:
    c = both
    _member(c, ["Le membre ne veut pas d'e-mail, seulement des SMS.", "Le membre a un contrat habitation."])
    p = c.facade.propose_procedure(SUP, proposal=EMAIL)
    c.facade.decide_procedure(SUP, procedure_id=p.id, decision=Decision.APPROVE)
    ctx = c.facade.assemble(AGENT, subject_id="m-1", query=QUERY, budget=budgets(c.deps, overrides={}))
    [pick] = ctx.team
    assert [(x.channel, x.constraint) for x in pick.conflicts] == [
        ("email", "Le membre ne veut pas d'e-mail, seulement des SMS.")]
    assert ("- « " + EMAIL.text + " »\n  ⚠ en conflit avec une contrainte du membre : "
            "« Le membre ne veut pas d'e-mail, seulement des SMS. »") in ctx.prompt
    assert ctx.stats["team_conflicts"] == 1


def test_scoped_procedures_reach_their_agent_or_queue_only(container: Container) -> None:
    c = container
    _member(c, ["Le membre a un contrat habitation."])
    for proposal in (Proposal("Pour une fuite, ouvrir le dossier en priorité.", queue="sinistres",
                              applies_when=("fuite",)),
                     Proposal("Pour une fuite, proposer le rappel d'un expert.", agent_id="a-7",
                              applies_when=("fuite",))):
        p = c.facade.propose_procedure(SUP, proposal=proposal)
        c.facade.decide_procedure(SUP, procedure_id=p.id, decision=Decision.APPROVE)
    assert _team_texts(c) == []
    assert _team_texts(c, queue="sinistres") == ["Pour une fuite, ouvrir le dossier en priorité."]
    assert _team_texts(c, agent_id="a-7") == ["Pour une fuite, proposer le rappel d'un expert."]


def test_roles_and_what_each_sees(container: Container) -> None:
    f = container.facade
    p = f.propose_procedure(AGENT, proposal=WATER)
    for who in (AGENT, ADMIN):  # admin does not imply supervisor
        with pytest.raises(Forbidden):
            f.decide_procedure(who, procedure_id=p.id, decision=Decision.APPROVE)
    with pytest.raises(Forbidden):
        f.propose_procedure(ADMIN, proposal=EMAIL)
    assert f.list_procedures(AGENT) == []  # an agent sees approved ones only
    with pytest.raises(Forbidden):
        f.list_procedures(AGENT, status=ProcedureStatus.PROPOSED)
    with pytest.raises(ProcedureNotFound):
        f.get_procedure(AGENT, procedure_id=p.id)
    assert [x.id for x in f.list_procedures(SUP, status=ProcedureStatus.PROPOSED)] == [p.id]
    f.decide_procedure(SUP, procedure_id=p.id, decision=Decision.APPROVE)
    assert [x.id for x in f.list_procedures(AGENT)] == [p.id]
    assert f.get_procedure(AGENT, procedure_id=p.id).decided_by == "sup-key"
    with pytest.raises(ProcedureNotFound):
        f.get_procedure(operator("t2", "sup-2", "supervisor"), procedure_id=p.id)  # another tenant's


def test_decisions_that_do_not_apply_and_personal_data_are_refused(container: Container) -> None:
    f = container.facade
    p = f.propose_procedure(SUP, proposal=WATER)
    with pytest.raises(ProcedureState):
        f.decide_procedure(SUP, procedure_id=p.id, decision=Decision.RETIRE)
    f.decide_procedure(SUP, procedure_id=p.id, decision=Decision.REJECT)
    with pytest.raises(ProcedureState):
        f.decide_procedure(SUP, procedure_id=p.id, decision=Decision.APPROVE)
    with pytest.raises(ProcedureNotFound):
        f.decide_procedure(SUP, procedure_id="00000000-0000-0000-0000-000000000000", decision=Decision.APPROVE)
    with pytest.raises(ProcedureHasPersonalData):
        f.propose_procedure(SUP, proposal=Proposal("Rappeler M. Jean Dupont au 06 12 34 56 78."))
    assert [x.id for x in f.list_procedures(SUP)] == [p.id]


def test_every_state_change_is_audited(container: Container) -> None:
    f = container.facade
    p = f.propose_procedure(SUP, proposal=WATER)
    f.decide_procedure(SUP, procedure_id=p.id, decision=Decision.APPROVE)
    with pytest.raises(Forbidden):
        f.decide_procedure(AGENT, procedure_id=p.id, decision=Decision.RETIRE)
    f.decide_procedure(SUP, procedure_id=p.id, decision=Decision.RETIRE)
    written = [(e.event.action, e.event.actor, e.event.outcome, e.event.targets)
               for e in container.audit.log.entries("t1")]
    assert written == [("procedure.propose", "sup-key", "ok", ()),
                       ("procedure.approve", "sup-key", "ok", (p.id,)),
                       ("procedure.retire", "agent-key", "refused", ()),
                       ("procedure.retire", "sup-key", "ok", (p.id,))]
    assert all(WATER.text not in str(e.event.detail) for e in container.audit.log.entries("t1"))
