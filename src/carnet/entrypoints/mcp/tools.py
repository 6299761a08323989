"""The eight tools an MCP client sees: six on a person's memories, two on the team's procedures.

An agent may list the team's approved procedures and propose one (``propose_procedure``: it stays
``proposed``, unused, until a person with the ``supervisor`` role approves it in the console or over
REST). There is no tool to approve, reject or retire: approval is a human act, never a model's. Likewise
``restore_memory`` (undo a supersession) is refused to an ``agent`` key: it is there for a supervisor's
or DPO's own MCP client, a person correcting the memory, and runs the same use case as REST and the console.

Each tool is an argument model, whose JSON schema is the tool's input schema (so its descriptions
are written for the model reading them), and a function of the facade. A result lands in the model's
context, so the reading tools answer compactly by default: ``assemble_context`` the rendered prompt and
the ids of the records in it, ``recall`` and ``list_memories`` each record's id, text and date (and score);
``"format": "full"`` gives the REST API's shape, from the same presenters (``carnet.entrypoints.presenters``).
Arguments are checked by the model before the call, and again by the services, which own the limits
(text length, ``k``...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from uuid import UUID

from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from carnet.domain.reconcile.values import Fraction, Instant, Int, Label, Text
from carnet.domain.records import Kind
from carnet.entrypoints.mcp.compact import (
    compact_context,
    compact_memory,
    compact_page,
    compact_procedures,
    compact_results,
    forgotten,
    proposed,
)
from carnet.entrypoints.presenters.context import context_out
from carnet.entrypoints.presenters.memories import page_out
from carnet.entrypoints.presenters.plain import as_json
from carnet.entrypoints.presenters.remember import outcome_out
from carnet.entrypoints.presenters.search import search_out
from carnet.services.apikeys import Principal
from carnet.services.facade import Facade
from carnet.services.memories import recall
from carnet.services.memories.remember import NewMemory
from carnet.services.procedures import Proposal
from carnet.services.scope import SUBJECT_ID

Json = dict[str, Any]

SubjectId = Annotated[str, Field(
    min_length=1, max_length=128, pattern=SUBJECT_ID.pattern,
    description="Who the memories are about: the person's id in your own systems (a member, customer or case "
                "number such as 'ADH-0042'), never a name. Always the same id for the same person.",
)]
Query = Annotated[Text, Field(description="What you want to know about the person, in natural "
                                                       "language or keywords (e.g. 'Où habite le membre ?').")]


Count = Annotated[Int, Field(ge=1, le=1_000_000)]


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolArgs(Args):
    subject_id: SubjectId


Format = Annotated[Literal["compact", "full"], Field(description=(
    "compact (default): what you need to read and act on (texts, ids, dates); full: every field of each "
    "record (status, scores, provenance, retention...), much longer."))]


class RememberArgs(ToolArgs):
    text: Text = Field(description=(
        "One self-contained statement about the person, as a full sentence that makes sense on its own later "
        "(e.g. 'Le membre habite maintenant à Villeurbanne.'). One fact per call. Never passwords or card numbers."))
    kind: Kind = Field(Kind.FACT, description=(
        "fact: something true about the person (address, contract, preference); episode: something that "
        "happened (a call, a claim, a complaint); procedure: how to deal with this person (a standing instruction)."))
    occurred_at: Instant | None = Field(None, description=(
        "When it happened or became true, ISO 8601 with a time zone, between 1900 and 2199 (default: now). A "
        "newer fact supersedes an older one that it contradicts."))
    importance: Fraction | None = Field(None, description="How much it matters, 0 to 1 (default 0.5).")
    category: Annotated[Label, Field(max_length=64)] | None = Field(None, description=(
        "An optional label to group and filter memories (e.g. 'contact', 'contract', 'claims')."))


class RecallArgs(ToolArgs):
    query: Query
    k: Annotated[Int, Field(ge=1, le=10_000)] = Field(10, description="How many memories to return at most.")
    format: Format = "compact"


class AssembleArgs(ToolArgs):
    query: Query
    max_memories: Count | None = Field(None, description="At most this many facts (default: the server's).")
    max_episodes: Count | None = Field(None, description="At most this many episodes (default: the server's).")
    max_procedures: Count | None = Field(None, description="At most this many procedures (default: the "
                                                               "server's).")
    min_relevance: Fraction | None = Field(None, description="Leave out memories less relevant than "
                                                                     "this, 0 to 1 (default: the server's).")
    agent_id: Annotated[Label, Field(max_length=128)] | None = Field(None, description=(
        "Your agent id, if the team has procedures for it (tenant-wide procedures always apply)."))
    queue: Annotated[Label, Field(max_length=128)] | None = Field(None, description=(
        "The call's queue (e.g. 'sinistres'), if the team has procedures for it."))
    format: Format = "compact"


class ListProceduresArgs(Args):
    pass


class ProposeArgs(Args):
    text: Annotated[Text, Field(max_length=1000)] = Field(description=(
        "How the team handles a kind of case, as one general instruction with no one's name or identifier "
        "(e.g. 'Pour un dégât des eaux, toujours demander des photos avant d'envoyer l'expert.'). A supervisor "
        "reviews it; it is not used until approved."))
    applies_when: list[Annotated[Label, Field(max_length=60)]] = Field(default_factory=list, max_length=10,
                                                                      description="Keywords of the case.")


class ForgetArgs(ToolArgs):
    memory_id: UUID = Field(description="The memory's id, as returned by remember, recall or list_memories.")


class RestoreArgs(ToolArgs):
    memory_id: UUID = Field(description="The superseded memory's id, as list_memories or recall return it.")
    reason: Annotated[Text, Field(max_length=1000)] | None = Field(None, description=(
        "Why the memory is still true (optional). Kept only sealed with the person's data, never in logs."))


class ListArgs(ToolArgs):
    kind: Kind | None = Field(None, description="Only this kind of memory (default: all kinds).")
    limit: Annotated[Int, Field(ge=1, le=500)] = Field(50, description="Page size.")
    cursor: UUID | None = Field(None, description="The next_cursor of the previous page, to get the next one.")
    format: Format = "compact"


def _remember(api: Facade, who: Principal, a: RememberArgs) -> Json:
    item = NewMemory(text=a.text, kind=a.kind, occurred_at=a.occurred_at, importance=a.importance,
                     category=a.category)
    (outcome,) = api.remember(who, subject_id=a.subject_id, items=[item])
    return as_json(outcome_out(outcome))


def _recall(api: Facade, who: Principal, a: RecallArgs) -> Json:
    ranked = api.search(who, subject_id=a.subject_id, query=recall.Query(text=a.query, k=a.k))
    return as_json(search_out(ranked)) if a.format == "full" else compact_results(ranked)


def _assemble(api: Facade, who: Principal, a: AssembleArgs) -> Json:
    b = api.budgets({"max_memories": a.max_memories, "max_episodes": a.max_episodes,
                                     "max_procedures": a.max_procedures, "min_relevance": a.min_relevance})
    ctx = api.assemble(who, subject_id=a.subject_id, query=a.query, budget=b, agent_id=a.agent_id, queue=a.queue)
    return as_json(context_out(ctx)) if a.format == "full" else compact_context(ctx)


def _list_procedures(api: Facade, who: Principal, a: ListProceduresArgs) -> Json:
    return compact_procedures(api.list_procedures(who))


def _propose(api: Facade, who: Principal, a: ProposeArgs) -> Json:
    p = api.propose_procedure(who, proposal=Proposal(a.text, applies_when=tuple(a.applies_when)))
    return proposed(p)


def _forget(api: Facade, who: Principal, a: ForgetArgs) -> Json:
    api.forget(who, subject_id=a.subject_id, memory_id=str(a.memory_id))
    return forgotten(str(a.memory_id))


def _restore(api: Facade, who: Principal, a: RestoreArgs) -> Json:
    done = api.restore(who, subject_id=a.subject_id, memory_id=str(a.memory_id), reason=a.reason)
    return {"restored": done.memory.id, "no_longer_superseded_by": done.newer, "memory": compact_memory(done.memory)}


def _list(api: Facade, who: Principal, a: ListArgs) -> Json:
    page = api.list_memories(who, subject_id=a.subject_id, kind=a.kind, limit=a.limit,
                             cursor=str(a.cursor) if a.cursor else None)
    return as_json(page_out(page)) if a.format == "full" else compact_page(page)


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    title: str
    description: str
    arguments: type[Args]
    run: Callable[[Facade, Principal, Any], Json]  # (facade, caller, validated arguments) -> result
    annotations: ToolAnnotations


_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)

TOOLS: dict[str, Tool] = {t.name: t for t in (
    Tool("remember", "Remember", (
        "Store one memory about a person so that it can be recalled in later conversations. Carnet reconciles it "
        "with what it already knows: a repeat is merged, a newer fact that contradicts an older one supersedes it "
        "(`action` says which: created, merged, superseded or unchanged). Personal identifiers in the text are "
        "pseudonymised before anything is indexed."),
         RememberArgs, _remember, ToolAnnotations(destructive_hint=False, open_world_hint=False)),
    Tool("recall", "Recall", (
        "Search a person's memories by meaning and keywords: the best matches first, each with its id, text, date "
        "and score. Use it for a specific question; superseded and deleted memories are left out."),
         RecallArgs, _recall, _READ),
    Tool("assemble_context", "Assemble context", (
        "Get what to know about a person before answering: the relevant facts, recent episodes and standing "
        "procedures for this query, within a budget, ready to read in `prompt` (`ids`: the memories it holds, "
        "for forget_memory). Call it at the start of a conversation turn about that person; use recall for a "
        "targeted search."),
         AssembleArgs, _assemble, _READ),
    Tool("forget_memory", "Forget a memory", (
        "Delete one memory for good, when the person asks you to forget it or it is wrong. It cannot be undone "
        "(to change a fact, remember the new one instead: it supersedes the old)."),
         ForgetArgs, _forget, ToolAnnotations(destructive_hint=True, idempotent_hint=True, open_world_hint=False)),
    Tool("restore_memory", "Restore a superseded memory", (
        "For a supervisor or DPO correcting the memory (an agent key is refused): make a superseded memory "
        "current again, when the newer one did not in fact replace it. Both stay current afterwards."),
         RestoreArgs, _restore, ToolAnnotations(destructive_hint=False, idempotent_hint=False,
                                                open_world_hint=False)),
    Tool("list_memories", "List memories", (
        "List a person's current memories, a page at a time (pass next_cursor back for the next page)."),
         ListArgs, _list, _READ),
    Tool("list_procedures", "List team procedures", (
        "The team's procedures you may follow (approved by a supervisor): how the team handles kinds of cases. "
        "assemble_context already includes those relevant to the query."),
         ListProceduresArgs, _list_procedures, _READ),
    Tool("propose_procedure", "Propose a team procedure", (
        "Suggest a general way the team should handle a kind of case, for a supervisor to review. It is not "
        "used until a supervisor approves it; the same text proposed twice is one proposal."),
         ProposeArgs, _propose, ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False)),
)}
