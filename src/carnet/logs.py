"""Structured logs (structlog, JSON or console). Callers log codes, ids and counts: never memory text,
queries, subject ids or keys."""

from __future__ import annotations

import logging
import sys

import structlog


class _StderrLogger:
    """Writes each rendered line to the *current* ``sys.stderr`` (looked up at every call, so a
    redirected or replaced stream, as under test capture or a daemon manager, is always honoured)."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


def _stderr_logger(*_args: object) -> _StderrLogger:
    return _StderrLogger()


def configure(level: str = "INFO", *, json: bool = False) -> None:
    logging.basicConfig(format="%(message)s", stream=sys.stderr, level=level.upper())
    # Client libraries log full URLs at INFO, and our URLs carry subject ids (personal data); the MCP
    # SDK logs received frames (tool arguments) at DEBUG.
    for noisy in ("httpx", "httpcore", "hpack", "urllib3", "mcp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )
