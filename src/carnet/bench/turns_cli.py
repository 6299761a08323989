"""``carnet extract train``: the turn filter fitted on labelled files (``carnet.bench.turns_fit``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from carnet.bench.judge_cli import _files

extract_app = typer.Typer(help="The rule extractor's learned turn filter: train it on labelled files.",
                          no_args_is_help=True)


@extract_app.command("train")
def train(
    data: Annotated[list[Path], typer.Option("--data", exists=True, help="Labelled file or directory (repeat).")],
    out: Annotated[Path, typer.Option("--out", dir_okay=False, help="Where to write the turn filter (JSON).")],
    version: Annotated[str, typer.Option("--version", help="The filter's version, kept in its manifest.")] = "1",
    by_meaning: Annotated[bool, typer.Option(
        "--align-by-meaning", help="A fact whose words no turn holds is aligned to the turn of its call nearest "
                                   "by the configured embedder.")] = False,
) -> None:
    """Align the files' facts to their calls, measure the filter one writer held out at a time, fit it on
    every file, and write its weights, threshold and manifest (files and checksums, commit, figures).
    The rule extractor reads it from carnet/calibration/turn-filter.json (or CARNET_TURN_FILTER_PATH)."""
    from carnet.bench.turns_fit import train_command
    from carnet.logs import configure

    configure("WARNING")
    train_command(data=_files(data), out=out, version=version, meaning=by_meaning)
