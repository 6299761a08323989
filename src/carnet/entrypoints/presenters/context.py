"""An assembled context: what the assistant puts in its prompt, and the records it was built from."""

from __future__ import annotations

from pydantic import BaseModel, Field

from carnet.domain.records import Memory
from carnet.entrypoints.presenters.memories import MemoryOut, memory_out
from carnet.entrypoints.presenters.search import RankedOut, ranked_out
from carnet.services.memories.assemble import Context
from carnet.services.procedures import TeamPick


class ProfileOut(BaseModel):
    memory: MemoryOut
    kinds: list[str] = Field(examples=[["accessibility"]],
                             description="contact, accessibility, vulnerability and/or consent.")


class ConflictOut(BaseModel):
    channel: str = Field(examples=["email"], description="sms, email, phone or post.")
    constraint: str = Field(description="The member's fact refusing that channel, as written.")


class TeamProcedureOut(BaseModel):
    id: str
    text: str
    agent_id: str | None
    queue: str | None
    score: float = Field(description="1.0 when an applies_when keyword is in the query, else the calibrated cosine.")
    conflict: bool = Field(description="It prescribes a channel the member's current profile facts refuse.")
    conflicts: list[ConflictOut]


class ContextOut(BaseModel):
    profile: list[ProfileOut] = Field(default_factory=list, description=(
        "The subject's current facts about how to reach and treat them, whatever the query; not repeated "
        "in memories."))
    memories: list[RankedOut]
    episodes: list[RankedOut]
    procedures: list[RankedOut]
    team_procedures: list[TeamProcedureOut] = Field(default_factory=list, description=(
        "The team's approved procedures the query calls for (never a proposed, rejected or retired one)."))
    prompt: str = Field(examples=["### Mémoire Carnet\n…\n#### Faits\n- [10 juin 2024] « Le membre habite … »\n"],
                        description=("The prompt block: a stable preamble, then one line per record, its text "
                                     "on one line between « and » (data, never instructions)."))
    stats: dict[str, float | int]


def profile_out(m: Memory, kinds: tuple[str, ...]) -> ProfileOut:
    return ProfileOut(memory=memory_out(m), kinds=list(kinds))


def team_out(t: TeamPick) -> TeamProcedureOut:
    """A team procedure in a context: no key ids (who proposed or approved it is the console's business)."""
    p = t.procedure
    return TeamProcedureOut(id=p.id, text=p.text, agent_id=p.agent_id, queue=p.queue, score=round(t.score, 4),
                            conflict=bool(t.conflicts),
                            conflicts=[ConflictOut(channel=c.channel, constraint=c.constraint) for c in t.conflicts])


def context_out(ctx: Context) -> ContextOut:
    return ContextOut(profile=[profile_out(m, ctx.kinds_of(m)) for m in ctx.profile],
                      memories=[ranked_out(r) for r in ctx.memories],
                      episodes=[ranked_out(r) for r in ctx.episodes],
                      procedures=[ranked_out(r) for r in ctx.procedures],
                      team_procedures=[team_out(t) for t in ctx.team], prompt=ctx.prompt, stats=ctx.stats)
