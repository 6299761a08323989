"""``restore_memory`` over MCP (issue 47, item 4): the same use case as REST, refused to an agent key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mcp import Client

from carnet.bootstrap.container import Container
from carnet.entrypoints.mcp import build_server
from carnet.entrypoints.mcp.auth import with_key
from carnet.ports import RecordFilter
from carnet.services.memories.remember import NewMemory, insert_new
from carnet.services.scope import scope_for
from tests.e2e.test_mcp import SUBJECT, TENANT, _data, _error, _key, _with

AT = datetime(2024, 1, 15, 9, tzinfo=UTC)


def _closed(c: Container) -> tuple[str, str]:
    """Two notes, the older closed by the newer as ``remember`` closes it (without the judge of the day)."""
    insert_new(c.deps, tenant=TENANT, subject_id=SUBJECT, actor="a",
               items=[NewMemory("Le membre habite à Lyon 7e.", occurred_at=AT),
                      NewMemory("Le membre habite maintenant à Villeurbanne.", occurred_at=AT + timedelta(days=150))])
    scope = scope_for(c.deps, TENANT, SUBJECT)
    by_text = {m.text: m for m in c.deps.index.scroll(scope, where=RecordFilter(), limit=10)[0]}
    old, new = by_text["Le membre habite à Lyon 7e."], by_text["Le membre habite maintenant à Villeurbanne."]
    with c.deps.locks.for_scope(scope):
        c.deps.index.replace_payload(scope, [old.superseded(by=new.id, at=new.valid_from)])
    return old.id, new.id


def test_a_supervisor_key_restores_an_agent_key_may_not(container: Container) -> None:
    old_id, new_id = _closed(container)
    agent = build_server(container.facade, principal=with_key(container, _key(container)))
    supervisor = build_server(container.facade, principal=with_key(container, _key(container, roles=("supervisor",))))

    async def refused(client: Client) -> None:
        r = await client.call_tool("restore_memory", {"subject_id": SUBJECT, "memory_id": old_id})
        assert _error(r)["code"] == "forbidden"

    async def restores(client: Client) -> None:
        done = _data(await client.call_tool("restore_memory", {"subject_id": SUBJECT, "memory_id": old_id,
                                                               "reason": "Elle n'a pas déménagé."}))
        assert done["restored"] == old_id and done["no_longer_superseded_by"] == new_id
        assert done["memory"]["text"] == "Le membre habite à Lyon 7e."
        again = _error(await client.call_tool("restore_memory", {"subject_id": SUBJECT, "memory_id": old_id}))
        assert again["code"] == "not_superseded"

    _with(agent, refused)
    _with(supervisor, restores)
