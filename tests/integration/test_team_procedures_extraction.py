"""Procedures proposed from calls: an advisor's "pour un <cas>, on demande toujours …", read by the
intake worker, becomes one proposed team procedure (``proposed_by="extraction"``), never used before
a supervisor approves it, proposed once however often it is said, and never when it names someone."""

from __future__ import annotations

from carnet.adapters.extractors.rules import RuleExtractor
from carnet.bootstrap.container import Container
from carnet.domain.intake import Message
from carnet.domain.procedures import EXTRACTION, ProcedureStatus, stated_procedures
from carnet.services.door import operator
from carnet.services.intake.worker import Worker

AGENT = operator("t1", "agent-key", "agent")
SUP = operator("t1", "sup-key", "supervisor")
SAID = "Pour un dégât des eaux, on demande toujours des photos avant d'envoyer l'expert"


def test_the_rule_reads_general_statements_only() -> None:
    assert [(s.text, s.case) for s in stated_procedures([f"D'accord madame. {SAID}. Je vous rappelle."])] == [
        (SAID + ".", "dégât des eaux")]
    assert [s.case for s in stated_procedures(["Pour une résiliation, je propose toujours un rendez-vous."])] == [
        "résiliation"]
    assert [s.case for s in stated_procedures(["Pour les sinistres auto, nous devons toujours vérifier le constat"])
            ] == ["sinistres auto"]
    for plain in ("Pour un prêt, on regarde les revenus.", "Je demande toujours votre nom.",
                  "Vous habitez toujours à Lyon ?"):
        assert stated_procedures([plain]) == []


def _call(c: Container, worker: Worker, subject: str, advisor: str) -> None:
    c.facade.submit_messages(AGENT, subject_id=subject, session_id=None, idempotency_key=None, messages=[
        Message("user", "J'ai une fuite sous l'évier depuis hier."), Message("advisor", advisor)])
    assert worker.run_once() == 1


def test_an_advisors_recurring_statement_is_proposed_once(container: Container) -> None:
    c = container
    worker = Worker(c.deps, c.queue, RuleExtractor(), c.audit, owner="w1", propose=c.facade.propose_extracted)
    _call(c, worker, "m-1", f"{SAID}.")
    _call(c, worker, "m-2", f"Bien sûr. {SAID.lower()} !")
    _call(c, worker, "m-3", "Pour un dégât des eaux, on appelle toujours Mme Martine Durand au 06 12 34 56 78.")
    [proposed] = c.facade.list_procedures(SUP)
    assert (proposed.text, proposed.status, proposed.proposed_by, proposed.applies_when) == (
        SAID + ".", ProcedureStatus.PROPOSED, EXTRACTION, ("dégât des eaux",))
    assert c.facade.list_procedures(AGENT) == []  # proposed: not used
    entries = [e.event for e in c.audit.log.entries("t1") if e.event.action == "procedure.propose"]
    assert [(e.actor, e.detail) for e in entries] == [("worker:extraction", {"extracted": True})]
    assert c.queue.store.dead("t1") == []  # no intake failed for it
