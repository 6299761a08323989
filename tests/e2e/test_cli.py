"""The `carnet` command line, invoked in-process."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from carnet.bootstrap.container import Container
from carnet.entrypoints.cli.main import app
from carnet.services.apikeys import authenticate

runner = CliRunner()


def _env(c: Container) -> dict[str, str]:
    return {"CARNET_KEY_DIR": str(c.settings.resolved_key_dir)}


def test_apikey_create_prints_the_key_last_and_works_while_the_store_is_held(container: Container) -> None:
    # `container` holds the shard, as a running `carnet serve` would.
    data_dir = str(container.settings.data_dir)
    result = runner.invoke(app, ["apikey", "create", "--tenant", "assur-nord", "--role", "agent", "--role", "dpo",
                                 "--data-dir", data_dir], env=_env(container))
    assert result.exit_code == 0, result.output
    key = result.output.strip().splitlines()[-1]
    assert re.fullmatch(r"crn_[0-9a-f]{12}_[A-Za-z0-9_-]+", key)
    principal = authenticate(container.deps.catalog, container.pepper, key)
    assert principal.tenant == "assur-nord" and principal.roles == ("agent", "dpo")


def test_apikey_create_refuses_bad_input(container: Container) -> None:
    data_dir = str(container.settings.data_dir)
    result = runner.invoke(app, ["apikey", "create", "--tenant", "Bad Tenant!", "--role", "agent",
                                 "--data-dir", data_dir], env=_env(container))
    assert result.exit_code == 2 and "tenant must be" in result.output
    result = runner.invoke(app, ["apikey", "create", "--tenant", "t", "--role", "superuser",
                                 "--data-dir", data_dir], env=_env(container))
    assert result.exit_code == 2 and "roles must be among" in result.output


def test_serve_refuses_clearly_when_another_process_owns_the_store(container: Container) -> None:
    result = runner.invoke(app, ["serve", "--data-dir", str(container.settings.data_dir), "--port", "1"],
                           env=_env(container))
    assert result.exit_code == 2
    assert "held by another process" in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_demo_tells_the_story(tmp_path: object) -> None:
    result = runner.invoke(app, ["demo"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "superseded" in out and "merged" in out
    # the address question is answered with the new address first, the old one hidden
    answer = out.split("? Où habite l'adhérent ?")[1].splitlines()[1]
    assert "Villeurbanne" in answer and "Lyon 7e" not in out.split("Contexte assemblé")[1]
