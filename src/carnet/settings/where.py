"""Where a process keeps its data, said in words a person can act on (``./carnet-demo``, not a hash):
for the hints of the CLI and the server's log, which must name the store a key belongs to."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from carnet.settings.root import Settings
from carnet.settings.stores import CatalogBackend


def shown_path(path: Path) -> str:
    """``path`` as a shell takes it from the current directory (``./carnet-demo``, ``.venv/bin/carnet``),
    or absolute when it is not under the current directory."""
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(Path.cwd())
    except ValueError:
        return str(absolute)
    text = str(relative)
    return text if "/" in text else f"./{text}"


def store_named(settings: Settings) -> str:
    """The store whose keys a process knows: its data dir, or the PostgreSQL catalog (host and database
    only: never the DSN, which may carry a password)."""
    if settings.catalog is CatalogBackend.POSTGRES:
        pg = settings.postgres
        where = "the DSN of CARNET_POSTGRES__DSN" if pg.dsn is not None else f"{pg.host}:{pg.port}/{pg.dbname}"
        return f"the PostgreSQL catalog ({where})"
    return f"the store {shown_path(settings.data_dir)}"


def carnet_command() -> str:
    """How to run ``carnet`` from this process's shell, for a hint to paste as printed: ``carnet`` when
    that is the one on the PATH, else its path (``.venv/bin/carnet`` under the current directory), or
    ``<python> -m carnet`` when started that way."""
    argv0 = os.path.abspath(sys.argv[0])
    if Path(argv0).name != "carnet":
        return f"{shown_path(Path(sys.executable))} -m carnet"
    on_path = shutil.which("carnet")
    if on_path is not None and os.path.abspath(on_path) == argv0:
        return "carnet"
    return shown_path(Path(argv0))


def key_command(settings: Settings, *, tenant: str = "<tenant>", roles: Sequence[str] = ("agent",)) -> str:
    """The command that makes a key this process will know (the store it reads, named)."""
    store = "" if settings.catalog is CatalogBackend.POSTGRES else f" --data-dir {shown_path(settings.data_dir)}"
    return f"{carnet_command()} apikey create --tenant {tenant}{''.join(f' --role {r}' for r in roles)}{store}"
