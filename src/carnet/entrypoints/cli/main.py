"""The ``carnet`` command line: ``serve`` and ``demo`` here, each other group in its own module, all of
them building what they need through ``carnet.bootstrap``."""

from __future__ import annotations

import typer

from carnet.entrypoints.cli.common import DataDir

app = typer.Typer(help="Carnet: sovereign long-term memory for LLM assistants.", no_args_is_help=True)


@app.callback()
def _entry() -> None:
    # Before any command: what Carnet (and the libraries it drives) creates is private to this user,
    # even when run by hand under umask 022 (carnet.private_fs).
    from carnet.private_fs import restrict_umask

    restrict_umask()


@app.command()
def demo(data_dir: DataDir = None) -> None:
    """A scripted French call-center story about one member, in a temporary store unless --data-dir."""
    from carnet.entrypoints.cli.demo import run_in_process

    run_in_process(data_dir)


def _register() -> None:
    from carnet.bench.cli import bench_app
    from carnet.bench.judge_cli import judge_app
    from carnet.bench.turns_cli import extract_app
    from carnet.entrypoints.cli import admin, audit, backup, db, intakes, maintain, mcp, serving

    for group in (serving, admin, audit, backup, db, intakes, maintain, mcp):
        group.register(app)
    app.add_typer(bench_app, name="bench")
    app.add_typer(judge_app, name="judge")
    app.add_typer(extract_app, name="extract")


_register()
