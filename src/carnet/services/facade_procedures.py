"""The team procedures' use cases, part of the facade (``Facade`` inherits them): proposed by anyone
working the calls or read from an advisor's words by the intake worker, approved by a supervisor, then
used by ``assemble``. Each passes through the facade's ``Door`` like every other use case."""

from __future__ import annotations

from collections.abc import Sequence

from carnet.domain.procedures import Decision, ProcedureStatus, Stated, TeamProcedure, dedup_key
from carnet.errors import Forbidden, InvalidInput, ProcedureNotFound
from carnet.ports import TeamProcedures
from carnet.services import procedures as team
from carnet.services.apikeys import Principal
from carnet.services.deps import Deps
from carnet.services.door import Door, operator
from carnet.services.roles import AGENT, SUPERVISOR


class ProcedureUseCases:
    """What the facade's constructor sets and these use cases read."""

    deps: Deps
    door: Door
    procedures: TeamProcedures
    procedure_vectors: team.ProcedureVectors

    def list_procedures(self, who: Principal, *, status: ProcedureStatus | None = None) -> list[TeamProcedure]:
        """Supervisors see every status; an agent only what the assistant may follow (approved)."""
        def run() -> list[TeamProcedure]:
            if SUPERVISOR not in who.roles and status is not ProcedureStatus.APPROVED:
                if status is not None:
                    raise Forbidden("only a supervisor sees procedures that are not approved")
                return self.procedures.list(who.tenant, status=ProcedureStatus.APPROVED)
            return self.procedures.list(who.tenant, status=status)

        return self.door.read(who, "procedure.list", (AGENT, SUPERVISOR), run, seen=lambda found: [p.id for p in found])

    def get_procedure(self, who: Principal, *, procedure_id: str) -> TeamProcedure:
        def run() -> TeamProcedure:
            found = self.procedures.get(who.tenant, procedure_id)
            if found is None or (SUPERVISOR not in who.roles and found.status is not ProcedureStatus.APPROVED):
                raise ProcedureNotFound(procedure_id)
            return found

        return self.door.read(who, "procedure.get", (AGENT, SUPERVISOR), run, seen=lambda p: [p.id])

    def propose_procedure(self, who: Principal, *, proposal: team.Proposal) -> TeamProcedure:
        """Anyone working the calls may propose (an agent's assistant, a supervisor): nothing proposed
        is used before a supervisor approves it. Text with personal data is refused before the entry."""
        with self.door.write(who, "procedure.propose", (AGENT, SUPERVISOR),
                             check=lambda: team.check_proposal(self.deps.pii, who.tenant, proposal),
                             detail={"scoped": proposal.agent_id is not None or proposal.queue is not None}):
            return team.propose(self.procedures, self.deps.clock, tenant=who.tenant, proposal=proposal,
                                proposed_by=who.key_id)

    def propose_extracted(self, tenant: str, origin: str, stated: Sequence[Stated]) -> list[TeamProcedure]:
        """The intake worker's proposals, read from an advisor's pseudonymised words in a call of the
        member ``origin`` (its keyed hash; ``proposed_by="extraction"``), as the local operator
        ``worker:extraction``. Each is checked like a person's (one naming someone is dropped, not
        stored), keeps ``origin`` so the member's erasure deletes it (``forget_derived``), and is
        proposed once: one already proposed or approved is skipped without an entry, so a recurring
        statement is one proposal. The worker calls it under the member's lock."""
        who = operator(tenant, "worker:extraction", AGENT)
        live = {dedup_key(p.text) for p in self.procedures.list(tenant)
                if p.status in (ProcedureStatus.PROPOSED, ProcedureStatus.APPROVED)}
        made = []
        for s in stated:
            proposal = team.Proposal(s.text, applies_when=(s.case,))
            try:
                team.check_proposal(self.deps.pii, tenant, proposal)
            except InvalidInput:
                continue
            if dedup_key(s.text) in live:
                continue
            with self.door.write(who, "procedure.propose", (AGENT,), detail={"extracted": True}):
                made.append(team.propose(self.procedures, self.deps.clock, tenant=tenant, proposal=proposal,
                                         proposed_by=team.EXTRACTION, origin=origin))
            live.add(dedup_key(s.text))
        return made

    def forget_derived(self, tenant: str, origin: str) -> int:
        """Part of the member ``origin``'s erasure (under its lock): every procedure read from its calls
        is deleted, whatever its status (one approved too: a supervisor who wants to keep the rule
        proposes it in their own words, which adopts it), and its cached vector dropped."""
        gone = self.procedures.forget_origin(tenant, origin)
        for procedure_id in gone:
            self.procedure_vectors.forget(procedure_id)
        return len(gone)

    def derived_left(self, tenant: str, origin: str) -> bool:
        """Whether a procedure read from the member ``origin``'s calls is still stored (the receipt's check)."""
        return any(p.origin == origin for p in self.procedures.list(tenant, limit=100_000))

    def decide_procedure(self, who: Principal, *, procedure_id: str, decision: Decision) -> TeamProcedure:
        """approve / reject (a proposed one) and retire (an approved one): a person with the
        ``supervisor`` role only; ``admin`` does not imply it, and MCP offers no decision."""
        with self.door.write(who, f"procedure.{decision.value}", (SUPERVISOR,), targets=(procedure_id,),
                             check=lambda: team.check_decision(self.procedures, tenant=who.tenant,
                                                               procedure_id=procedure_id, decision=decision)):
            done = team.decide(self.procedures, self.deps.clock, tenant=who.tenant, procedure_id=procedure_id,
                               decision=decision, decided_by=who.key_id)
        self.procedure_vectors.forget(procedure_id)
        return done
