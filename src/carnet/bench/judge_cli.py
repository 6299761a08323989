"""``carnet bench judge`` and ``carnet judge train``: the supersession judge measured and trained on
labelled files (``carnet.bench.judge``). With ``--json`` the last line printed is one JSON object."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from carnet.bench.judge_fit import BAND_PRECISION
from carnet.domain.corrections import CorrectionPair

if TYPE_CHECKING:
    from carnet.ports import ContradictionJudge

judge_app = typer.Typer(help="The supersession judge: train it on labelled files.", no_args_is_help=True)


class JudgeKind(StrEnum):
    SHIPPED = "shipped"
    ORACLE = "oracle"


class LlmKind(StrEnum):
    NONE = "none"
    LABELS = "labels"
    MISTRAL = "mistral"


_BAND = typer.Option("--band-precision", min=0.01, max=1.0, help="The share of right closures the LLM's band must "
                                                                   "hold on the training files: lower asks the LLM "
                                                                   "more often.")


def _files(data: list[Path]) -> list[Path]:
    """``--data`` takes files and directories (every ``*.json`` in them, sorted)."""
    out: list[Path] = []
    for p in data:
        out.extend(sorted(p.glob("*.json")) if p.is_dir() else [p])
    if not out:
        raise typer.BadParameter("no labelled JSON file in --data")
    return out


def bench_judge(
    data: Annotated[list[Path], typer.Option("--data", exists=True, help="Labelled file or directory (repeat).")],
    judge: Annotated[JudgeKind, typer.Option("--judge", help="shipped: the judge in use (or --judge-file); "
                                                            "oracle: the labels, the bound candidates set.")
                     ] = JudgeKind.SHIPPED,
    leave_one_out: Annotated[bool, typer.Option("--leave-one-out", help="Train without each file, measure on it.")
                             ] = False,
    late: Annotated[float, typer.Option("--late", min=0.0, max=1.0, help="Share of labelled older facts written "
                                                                        "after all the others.")] = 0.0,
    judge_file: Annotated[Path | None, typer.Option("--judge-file", exists=True, dir_okay=False,
                                                    help="A judge written by `carnet judge train`.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary as the last line.")] = False,
    llm: Annotated[LlmKind, typer.Option("--llm", help="labels: run the cascade's LLM step with an LLM that is "
                                                        "always right (the labels): the bound the cascade can reach, "
                                                        "and the share of writes that call it; mistral: with the "
                                                        "Mistral the settings configure (CARNET_EXTRACTOR=mistral, "
                                                        "CARNET_LLM__*), what it reaches.")] = LlmKind.NONE,
    band_precision: Annotated[float, _BAND] = BAND_PRECISION,
    llm_error: Annotated[float, typer.Option("--llm-error", min=0.0, max=1.0, help="With --llm labels: the share "
                                                                                  "of its answers turned wrong.")
                         ] = 0.0,
) -> None:
    """Every new fact of labelled files against the subject's earlier ones, as reconcile sees them: per file,
    supersessions hidden, false closures (share of facts), merges that lose a fact, candidate recall."""
    from carnet.bench.judge import run
    from carnet.bench.judge_run import LlmStep

    files = _files(data)
    if llm is not LlmKind.MISTRAL:
        step = LlmStep(error=llm_error) if llm is LlmKind.LABELS else None
        run(data=files, judge=judge.value, leave_one_out_=leave_one_out, late_share=late, json_out=json_out,
            judge_path=judge_file, llm=step, band_precision=band_precision)
        return
    model, close = _configured_llm()
    try:
        run(data=files, judge=judge.value, leave_one_out_=leave_one_out, late_share=late, json_out=json_out,
            judge_path=judge_file, llm=LlmStep(model=model), band_precision=band_precision)
    finally:
        close()


def _configured_llm() -> tuple[ContradictionJudge, Callable[[], None]]:
    """The contradiction judgment the settings configure (``bootstrap.models.build_judge``), as ``carnet serve``
    would use it; refused with the settings to set when none is."""
    from carnet.bootstrap.models import build_judge
    from carnet.settings.root import Settings

    built = build_judge(Settings())
    if built is None:
        raise typer.BadParameter("--llm mistral needs an LLM configured: CARNET_EXTRACTOR=mistral and "
                                 "CARNET_LLM__BASE_URL (docs/configuration.md)", param_hint="--llm")
    return built


@judge_app.command("train")
def train(
    data: Annotated[list[Path], typer.Option("--data", exists=True, help="Labelled file or directory (repeat).")],
    out: Annotated[Path, typer.Option("--out", dir_okay=False, help="Where to write the judge (JSON).")],
    max_false: Annotated[float, typer.Option("--max-false", min=0.0, max=1.0, help="False closures allowed on the "
                                                                                 "training files, share of facts.")
                         ] = 0.03,
    version: Annotated[str, typer.Option("--version", help="The judge's version, kept in its manifest.")] = "1",
    keep_held_out: Annotated[Path | None, typer.Option(
        "--keep-held-out", file_okay=False, help="Also write each judge fitted without one file here "
                                                 "(without-<file>.json), to measure that file with it elsewhere.")
                             ] = None,
    corrections_from: Annotated[Path | None, typer.Option(
        "--corrections-from", file_okay=False, exists=True,
        help="A site's data directory: add its people's corrections (restored records, kept with "
             "CARNET_KEEP_CORRECTIONS) for the tenants named by --tenant. Stop the server first.")] = None,
    tenants: Annotated[list[str] | None, typer.Option("--tenant", help="A tenant whose corrections to add.")
                       ] = None,
    band_precision: Annotated[float, _BAND] = BAND_PRECISION,
) -> None:
    """Fit the judge on every file given, measure it one writer held out at a time with the same recipe,
    and write its weights, thresholds and manifest (files and checksums, commit, figures). Point
    CARNET_JUDGE_PATH at the file to use it."""
    from carnet.bench.judge import train_command
    from carnet.logs import configure

    configure("WARNING")
    if corrections_from is not None and not tenants:
        raise typer.BadParameter("--corrections-from needs at least one --tenant")
    pairs = _corrections(corrections_from, tenants or []) if corrections_from is not None else []
    train_command(data=_files(data), out=out, max_false=max_false, version=version, keep=keep_held_out,
                  corrections=pairs, band_precision=band_precision)


def _corrections(data_dir: Path, tenants: list[str]) -> list[CorrectionPair]:
    """The tenants' kept corrections, opened under their subjects' keys, from a store no server holds."""
    from carnet.bootstrap.wiring import build
    from carnet.services.memories.corrections import corrections_for
    from carnet.settings.root import Settings

    container = build(Settings(data_dir=data_dir))
    try:
        keeper = container.facade.corrections
        if keeper is None:
            raise typer.BadParameter("this store keeps no corrections")
        return [p for t in tenants for p in corrections_for(container.deps.catalog, keeper.sealer, t)]
    finally:
        container.close()
