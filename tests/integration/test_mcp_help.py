"""`carnet mcp --help` names the tools from the registry the server serves (issue 50: it named five where
seven were served), and the server lists exactly those."""

from __future__ import annotations

import anyio
from mcp import Client
from typer.testing import CliRunner

from carnet.entrypoints.cli.main import app
from carnet.entrypoints.mcp.tools import TOOLS


def test_the_help_names_every_tool_the_registry_holds() -> None:
    shown = CliRunner().invoke(app, ["mcp", "--help"], env={"COLUMNS": "400"})
    assert shown.exit_code == 0, shown.output
    line = next(line for line in shown.output.splitlines() if "tools served" in line)
    named = line.split("tools served:")[1].strip(" .│").split(", ")
    assert named == list(TOOLS) and f"The {len(TOOLS)} tools served" in line


def test_the_server_lists_the_registry(container: object) -> None:
    from carnet.bootstrap.container import Container
    from carnet.entrypoints.mcp import build_server
    from carnet.entrypoints.mcp.auth import with_key
    from carnet.services.apikeys import create_key

    assert isinstance(container, Container)
    key, _ = create_key(container.deps.catalog, container.pepper, tenant="t", roles=["agent"])
    server = build_server(container.facade, principal=with_key(container, key))

    async def listed() -> list[str]:
        async with Client(server) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert anyio.run(listed) == list(TOOLS)
