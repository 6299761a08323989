"""A damaged record is counted, not hidden silently, on every surface a caller reads: the MCP tools
(recall, list_memories; assemble_context through its stats), the Python SDK's ``Page``, and the
maintenance pass."""

from __future__ import annotations

import httpx
from carnet_client import CarnetClient

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.entrypoints.mcp.tools import TOOLS
from carnet.services.apikeys import authenticate, create_key
from carnet.services.lifecycle.maintain import maintain
from carnet.services.scope import scope_for
from tests.integration.test_tamper import SUBJECT, TENANT, TEXTS, _date_out_of_range, _flip_ciphertext_byte, _seed


def _seeded(container: Container) -> tuple[str, list[str]]:
    """The tamper suite's subject, written over REST; (agent key, record ids)."""
    key = create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=["agent"])[0]
    with running(create_app(container)) as base, httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60
    ) as agent:
        return key, _seed(agent)


def _damaged_store(container: Container) -> tuple[str, str]:
    """That subject with one record's ciphertext altered; (agent key, damaged id)."""
    key, ids = _seeded(container)
    _flip_ciphertext_byte(container, scope_for(container.deps, TENANT, SUBJECT), ids[0])
    return key, ids[0]


def test_mcp_tools_count_the_record_they_leave_out(container: Container) -> None:
    key, damaged = _damaged_store(container)
    who = authenticate(container.deps.catalog, container.pepper, key)
    for name, args in (("recall", {"subject_id": SUBJECT, "query": "où habite le membre", "k": 10}),
                       ("list_memories", {"subject_id": SUBJECT})):  # fmt: skip
        tool = TOOLS[name]
        out = tool.run(container.facade, who, tool.arguments.model_validate(args))
        shown = out.get("results", out.get("items"))
        assert out["unreadable"] == 1, name
        assert damaged not in {r["id"] for r in shown} and len(shown) == len(TEXTS) - 1, name


def test_the_sdk_page_counts_the_record_left_out(container: Container) -> None:
    key, damaged = _damaged_store(container)
    with running(create_app(container)) as base, CarnetClient(base, key, timeout=30) as carnet:
        page = carnet.list_memories(SUBJECT)
    assert page.unreadable == 1
    assert damaged not in {str(m.id) for m in page.items} and len(page.items) == len(TEXTS) - 1


def test_maintain_counts_the_records_whose_metadata_does_not_decode(container: Container) -> None:
    """A payload that no longer decodes is left as it is (its dates cannot be read, so retention cannot
    judge it) and counted: in the report, its audit entry and ``carnet_unreadable_records_total``."""
    _, ids = _seeded(container)
    _date_out_of_range(container, scope_for(container.deps, TENANT, SUBJECT), ids[1])
    before = container.deps.unreadable.counts().get(("maintain", "payload_invalid"), 0)
    report = maintain(container.deps, tenant=TENANT)
    assert report.tenants[TENANT].unreadable == 1 and report.tenants[TENANT].failed == 0
    assert report.as_dict()["tenants"][TENANT]["unreadable"] == 1  # type: ignore[index]
    assert container.deps.unreadable.counts()[("maintain", "payload_invalid")] == before + 1
