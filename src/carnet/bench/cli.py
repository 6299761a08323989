"""``carnet bench …``: benchmark commands. With ``--json`` the last line printed is one JSON object."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

import typer

from carnet.bench.judge_cli import _files, bench_judge
from carnet.ports.llm import Extractor

_ALL_FAULTS = ("kill-worker", "kill-api", "kms-freeze", "pg-restart", "qdrant-restart")  # bench.soak.faults.FAULTS

bench_app = typer.Typer(help="Benchmarks (recall and latency), run as commands, not as tests.",
                        no_args_is_help=True)


@bench_app.callback()
def _logs() -> None:
    """Logs (warnings and up) go to stderr, so stdout carries only the results."""
    from carnet.logs import configure

    configure("WARNING")


@bench_app.command("locomo")
def locomo(
    data: Annotated[Path, typer.Option("--data", exists=True, dir_okay=False, help="LoCoMo JSON file.")],
    k: Annotated[str, typer.Option("--k", help="Comma-separated cut-offs.")] = "1,5,10,25",
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary as the last line.")] = False,
    store: Annotated[Path | None, typer.Option("--store", help="Keep the store here (default: temporary).")] = None,
    pii: Annotated[bool, typer.Option("--pii/--no-pii", help="Pseudonymise before embedding (the default).")] = True,
    conversations: Annotated[str | None, typer.Option(
        "--conversations", help="Comma-separated sample ids to run, e.g. conv-26 (default: all).")] = None,
) -> None:
    """Recall@k of LoCoMo questions (categories 1-4) over one memory per dialog turn, overall, per
    category and per conversation."""
    from carnet.bench.locomo import run
    from carnet.bench.locomo_data import UnknownConversation

    wanted = [c.strip() for c in conversations.split(",") if c.strip()] if conversations else None
    try:
        run(data=data, ks=_ks(k), json_out=json_out, store=store, pii=pii, conversations=wanted)
    except UnknownConversation as exc:
        raise typer.BadParameter(str(exc), param_hint="--conversations") from exc


@bench_app.command("latency")
def latency(
    memories: Annotated[int, typer.Option("--memories", min=1, help="Memories in the store.")] = 100_000,
    subjects: Annotated[int, typer.Option("--subjects", min=1, help="Subjects they belong to.")] = 1_000,
    queries: Annotated[int, typer.Option("--queries", min=10, help="Assemble calls per path.")] = 1_000,
    store: Annotated[Path | None, typer.Option("--store", help="Build/reuse the store here.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary as the last line.")] = False,
    pii: Annotated[bool, typer.Option("--pii/--no-pii", help="Pseudonymise before embedding (the default).")] = True,
    text_pool: Annotated[int | None, typer.Option(
        "--text-pool", min=1, help="Build the store in bulk from this many distinct texts, each embedded once "
                                   "and reused across subjects, written as remember creates them but without "
                                   "reconcile (default: through remember).")] = None,
    curve: Annotated[str | None, typer.Option(
        "--curve", help="Sizes to measure in one run instead of --memories, e.g. 10000,100000,1000000: one "
                        "store per size under --store, all built first, then measured back to back.")] = None,
) -> None:
    """Ingest throughput, then assemble latency through the service layer and through HTTP. A store kept
    with --store is reused by a later run with the same load (only the queries are measured again); a
    store built one way (--text-pool or not, another pool size) is never reused by a run asked another."""
    from carnet.bench.latency import run
    from carnet.bench.served import StoreMismatch
    from carnet.bench.text_pool import PoolTooSmall

    try:
        sizes = [int(x) for x in curve.split(",") if x.strip()] if curve else None
    except ValueError as exc:
        raise typer.BadParameter("--curve takes integers separated by commas, e.g. 10000,100000") from exc
    if sizes is not None and (not sizes or min(sizes) < 1):
        raise typer.BadParameter("--curve values must be >= 1")
    try:
        run(memories=memories, subjects=subjects, queries=queries, store=store, json_out=json_out, pii=pii,
            text_pool=text_pool, curve=sizes)
    except StoreMismatch as exc:
        raise typer.BadParameter(str(exc), param_hint="--store") from exc
    except PoolTooSmall as exc:
        raise typer.BadParameter(str(exc), param_hint="--text-pool") from exc


@bench_app.command("load")
def load(
    rate: Annotated[str, typer.Option("--rate", help="Offered requests/s, one run per rate: 10,25,50.")] = "10",
    seconds: Annotated[float, typer.Option("--seconds", min=0.5, help="Length of each rate's run.")] = 5.0,
    write_share: Annotated[float, typer.Option(
        "--write-share", min=0.0, max=1.0, help="Share of writes (half remember, half messages).")] = 0.1,
    subjects: Annotated[int, typer.Option("--subjects", min=1, help="Subjects seeded and addressed.")] = 20,
    memories: Annotated[int, typer.Option("--memories", min=1, help="Memories seeded over them.")] = 1_000,
    store: Annotated[Path | None, typer.Option("--store", help="Build/reuse the store here.")] = None,
    url: Annotated[str | None, typer.Option(
        "--url", help="Load this server instead (its agent key in CARNET_API_KEY; subjects as seeded here).")] = None,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Client timeout per request (s).")] = 10.0,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary as the last line.")] = False,
    pii: Annotated[bool, typer.Option("--pii/--no-pii", help="Pseudonymise before embedding (the default).")] = True,
    text_pool: Annotated[int | None, typer.Option(
        "--text-pool", min=1, help="Build (or reuse) the store in bulk from this many distinct texts, as "
                                   "`carnet bench latency --text-pool` does (default: through remember).")] = None,
    recovery: Annotated[float, typer.Option(
        "--recovery", min=0.0, help="After each rate, go on at the first rate for this many seconds and say "
                                    "when the answers were back at that rate's figures (0: off).")] = 0.0,
    warmup: Annotated[int, typer.Option(
        "--warmup", min=1, help="Unmeasured assembles first, through the subjects in order (at least --subjects: "
                                "every subject's key and map cached, as on a server up for a while).")] = 10,
    turns: Annotated[int, typer.Option(
        "--turns", min=1, help="Questions per call about one member, with 64 calls on the line at once (1: each "
                               "question about a member drawn at random).")] = 1,
) -> None:
    """Open-loop load on `carnet serve` in its own process: assemble mixed with remember and messages,
    sent on a fixed schedule; per rate, achieved rate, p50/p95/p99 from the scheduled send time,
    refusals by status and code, timeouts; with --recovery, how soon the server is back at the first
    rate's figures after each rate."""
    from carnet.bench.load import run
    from carnet.bench.served import StoreMismatch
    from carnet.bench.text_pool import PoolTooSmall, check_pool

    try:
        rates = [float(x) for x in rate.split(",") if x.strip()]
    except ValueError as exc:
        raise typer.BadParameter("--rate takes numbers separated by commas, e.g. 10,25,50") from exc
    if not rates or min(rates) <= 0:
        raise typer.BadParameter("--rate values must be > 0")
    try:
        if text_pool is not None:
            check_pool(memories, subjects, text_pool)
        run(rates=rates, seconds=seconds, write_share=write_share, subjects=subjects, memories=memories,
            store=store, url=url, timeout=timeout, json_out=json_out, pii=pii, text_pool=text_pool,
            recovery=recovery, warmup=warmup, turns=turns)
    except StoreMismatch as exc:
        raise typer.BadParameter(str(exc), param_hint="--store") from exc
    except PoolTooSmall as exc:
        raise typer.BadParameter(str(exc), param_hint="--text-pool") from exc
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--url") from exc


@bench_app.command("ingest")
def ingest(
    rate: Annotated[float, typer.Option(min=0.1, help="Sustained intakes per second.")] = 10.0,
    seconds: Annotated[float, typer.Option(min=1, help="Length of the sustained phase.")] = 60.0,
    burst_rate: Annotated[float, typer.Option(min=0.1, help="Intakes per second in the burst phase.")] = 40.0,
    burst_seconds: Annotated[float, typer.Option(min=1, help="Length of the burst phase.")] = 10.0,
    subjects: Annotated[int, typer.Option(min=1, help="Subjects the intakes are spread over.")] = 200,
    threads: Annotated[int, typer.Option(min=1, help="The server's worker threads.")] = 2,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary as the last line.")] = False,
) -> None:
    """`POST …/messages` latency (202) and intake-to-searchable time against `carnet serve` in its own
    process, with the configured extractor (rules by default) and pseudonymisation on."""
    from carnet.bench.ingest import run

    _logs()
    run(rate=rate, seconds=seconds, burst_rate=burst_rate, burst_seconds=burst_seconds, subjects=subjects,
        threads=threads, json_out=json_out)


@bench_app.command("crypto")
def crypto(
    memories: Annotated[int, typer.Option("--memories", min=1, help="Memories in each store.")] = 10_000,
    subjects: Annotated[int, typer.Option("--subjects", min=1, help="Subjects they belong to.")] = 100,
    pairs: Annotated[int, typer.Option("--pairs", min=1, help="A/B rounds (sealed vs plain).")] = 5,
    queries: Annotated[int, typer.Option("--queries", min=10, help="Assemble calls per arm and round.")] = 200,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary as the last line.")] = False,
) -> None:
    """What encryption costs assemble: sealed vs plain stores, interleaved A/B pairs, KMS calls counted."""
    from carnet.bench.crypto import run

    run(memories=memories, subjects=subjects, pairs=pairs, queries=queries, json_out=json_out)


class ScenarioSource(StrEnum):
    FACTS = "facts"
    CALLS = "calls"


class ScenarioLlm(StrEnum):
    LABELS = "labels"


@bench_app.command("scenarios")
def scenarios(
    data: Annotated[list[Path], typer.Option("--data", exists=True, help="Scenario JSON file or directory "
                                                                         "(repeat: per file, mean and worst).")],
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary as the last line.")] = False,
    source: Annotated[ScenarioSource, typer.Option(
        "--from", help="facts: store each fact as written; calls: post each call to …/messages and let the "
                       "server's workers extract (the configured extractor).")] = ScenarioSource.FACTS,
    judge_file: Annotated[Path | None, typer.Option(
        "--judge-file", exists=True, dir_okay=False, help="The supersession judge to use (a file written by `carnet "
                                                          "judge train`, e.g. one fitted without this file).")] = None,
    leave_one_out: Annotated[bool, typer.Option(
        "--leave-one-out", help="Each file measured with what was learned without it: the judge of --judge-dir, "
                                "and from calls the turn filter fitted on the other files.")] = False,
    judge_dir: Annotated[Path | None, typer.Option(
        "--judge-dir", exists=True, file_okay=False, help="With --leave-one-out: the fold judges, "
                                                          "without-<file>.json (carnet judge train --keep-held-out)."
    )] = None,
    turn_filter: Annotated[bool, typer.Option(
        "--turn-filter/--no-turn-filter", help="From calls, several files: the rule extractor reads only the "
                                               "turns a filter keeps (with --leave-one-out one fitted without "
                                               "the file, else the configured one), or every turn.")] = True,
    llm: Annotated[ScenarioLlm | None, typer.Option(
        "--llm", help="The LLM path as served with Mistral configured, against a stand-in answering from the labels "
                      "(a bound, not a model's figures). From calls: the turn filter deciding which calls are sent, "
                      "the Mistral adapter over HTTP (labels: the facts said in each call); from facts: the judge's "
                      "uncertain band of each write asked (labels: the labelled supersessions).")] = None,
    llm_error: Annotated[float, typer.Option(
        "--llm-error", min=0.0, max=1.0, help="With --llm labels: the share of the stand-in's contradiction "
                                              "answers turned wrong (each candidate's, the same each run).")] = 0.0,
    messages_per_post: Annotated[int, typer.Option(
        "--messages-per-post", min=1, max=200, help="From calls: post each call this many messages at a time, "
                                                    "with its session id (2: an assistant that posts after every "
                                                    "exchange; default: each call whole).")] = 200,
) -> None:
    """French call-center scenarios through the REST API of a temporary embedded server: recall@3 (overall
    and per query kind), superseded facts hidden (from searches and from status), stale answers, false
    supersessions, and with --from calls facts per call and extraction noise."""
    files = _files(data)
    src: Literal["facts", "calls"] = "calls" if source is ScenarioSource.CALLS else "facts"
    if llm is not None:
        from carnet.bench.scenarios_llm import EXTRACTION, JUDGMENT, labelled_folds
        from carnet.bench.scenarios_loo import run as run_llm

        with labelled_folds(files, leave_one_out=leave_one_out, error=llm_error) as fold:
            run_llm(data=files, source=src, leave_one_out=leave_one_out, judge_dir=judge_dir, judge_path=judge_file,
                    extractor_for=fold, json_out=json_out, extraction=EXTRACTION if src == "calls" else JUDGMENT,
                    per_post=messages_per_post)
        return
    if len(files) == 1 and not leave_one_out:
        from carnet.bench.scenarios import run

        run(data=files[0], json_out=json_out, source=src, judge_path=judge_file,
            extractor=_every_turn(()) if not turn_filter else None, per_post=messages_per_post)
        return
    from carnet.bench.scenarios_loo import run as run_files
    from carnet.bench.turns_fit import fold_extractors

    folds: Callable[[Sequence[Path]], Extractor | None] | None = None
    extraction = "as configured"
    if src == "calls" and not turn_filter:
        folds, extraction = _every_turn, "rules, every turn"
    elif src == "calls" and leave_one_out:
        folds, extraction = fold_extractors(files), "rules, turns kept by a filter fitted without the file"
    run_files(data=files, source=src, leave_one_out=leave_one_out, judge_dir=judge_dir, judge_path=judge_file,
              extractor_for=folds, json_out=json_out, extraction=extraction, per_post=messages_per_post)


def _every_turn(others: Sequence[Path]) -> Extractor | None:
    from carnet.adapters.extractors.rules import RuleExtractor

    return RuleExtractor()


bench_app.command("judge")(bench_judge)


@bench_app.command("extract")
def extract(
    data: Annotated[Path, typer.Option("--data", exists=True, dir_okay=False, help="Scenario JSON file.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary as the last line.")] = False,
    show: Annotated[bool, typer.Option("--show", help="Print every extracted fact and episode.")] = False,
    source: Annotated[str, typer.Option(
        "--from", help="calls: a subject's `calls` transcripts when it has them; facts: its facts as member turns.",
    )] = "calls",
) -> None:
    """The scenarios told as raw messages to the rule-based extractor: what it keeps, stored through the
    service layer, then the same recall@3, superseded and leak checks as `bench scenarios`."""
    from carnet.bench.extract import SOURCES, run

    if source not in SOURCES:
        raise typer.BadParameter(f"--from must be one of {', '.join(SOURCES)}")
    run(data=data, json_out=json_out, show=show, source=source)


@bench_app.command("profile")
def profile(
    data: Annotated[Path, typer.Option("--data", exists=True, dir_okay=False, help="Scenario JSON file.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary as the last line.")] = False,
    compare: Annotated[bool, typer.Option("--compare", help="Compare the lexicon with embedding prototypes "
                                                            "instead (no store).")] = False,
) -> None:
    """The profile tier per query kind: how often the answer is in search's top 3, in assemble's
    profile tier, and anywhere in assemble's output."""
    from carnet.bench.profile import run

    run(data=data, json_out=json_out, compare=compare)


@bench_app.command("pii")
def pii(
    size: Annotated[int, typer.Option("--size", min=10, help="Filled templates (decoys are added).")] = 400,
    data: Annotated[Path | None, typer.Option(
        "--data", help="An outside corpus instead: a JSON list of {\"text\", \"values\": [...], \"type\"?}; "
                       "reports which values survive the write path's pseudonymisation.")] = None,
    notes: Annotated[list[Path] | None, typer.Option(
        "--notes", help="Labelled scenario files (or directories of them, repeat): their facts and calls "
                        "through the write path per subject; reports labelled values still readable "
                        "(survived) and placeholders over text no labelled value covers (over_masked).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary as the last line.")] = False,
) -> None:
    """PII detection on the project's French corpus: recall and precision per type (write and read
    paths), leaked characters, and the cost of pseudonymising one text and a batch. With --data: the
    values of an outside corpus that survive in the text that is embedded (survived, values, by_type).
    With --notes: the same on labelled notes and calls, and what is masked that is no personal data."""
    if notes:
        from carnet.bench.pii import run_notes
        from carnet.bench.pii_survival import BadCorpus

        try:
            run_notes(paths=notes, json_out=json_out)
        except BadCorpus as exc:
            raise typer.BadParameter(str(exc), param_hint="--notes") from exc
        return
    if data is None:
        from carnet.bench.pii import run

        run(size=size, json_out=json_out)
        return
    from carnet.bench.pii import run_data
    from carnet.bench.pii_survival import BadCorpus

    try:
        run_data(data=data, json_out=json_out)
    except BadCorpus as exc:
        raise typer.BadParameter(str(exc), param_hint="--data") from exc


def _ks(spec: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in spec.split(",") if x.strip()})
    except ValueError as exc:
        raise typer.BadParameter("--k takes integers separated by commas, e.g. 1,5,10") from exc
    if not ks or ks[0] < 1:
        raise typer.BadParameter("--k values must be >= 1")
    return ks


@bench_app.command("soak")
def soak(
    minutes: Annotated[float, typer.Option("--minutes", min=0.2, help="How long the assistants run.")] = 10.0,
    faults: Annotated[str, typer.Option(
        "--faults", help="Comma-separated, injected on a schedule: kill-worker, kill-api, kms-freeze, pg-restart, "
                         "qdrant-restart (empty: none).")] = ",".join(_ALL_FAULTS),
    assistants: Annotated[int, typer.Option("--assistants", min=1, help="Concurrent assistants per tenant.")] = 3,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary as the last line.")] = False,
    workdir: Annotated[Path | None, typer.Option(
        "--workdir", help="Keep the processes' data and logs here (default: a temporary directory, removed).")] = None,
) -> None:
    """The production topology on this machine (PostgreSQL, OpenBao, the Qdrant test server, 2 `carnet
    serve` behind a round-robin client, 2 `carnet worker`) under two tenants' assistants, with faults
    injected on a schedule; invariants checked on every answer and at the end."""
    from carnet.bench.soak.faults import FAULTS
    from carnet.bench.soak.run import run

    wanted = [f.strip() for f in faults.split(",") if f.strip()]
    unknown = sorted(set(wanted) - set(FAULTS))
    if unknown:
        raise typer.BadParameter(f"unknown fault(s) {', '.join(unknown)}; known: {', '.join(FAULTS)}",
                                 param_hint="--faults")
    run(minutes=minutes, faults=wanted, assistants=assistants, json_out=json_out, workdir=workdir)
