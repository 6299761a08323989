"""What every ``carnet`` command shares: the settings (refused ones named), Carnet errors as exit code 2,
logging, and an admin command's passage through the door as a local operator."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from carnet.settings.root import Settings

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Data directory (default ./carnet-data).")]


def settings_for(data_dir: Path | None = None, **overrides: object) -> Settings:
    """The settings, or exit 2 naming each refused setting and why (never its value: it may be a secret)."""
    from pydantic import ValidationError

    values: dict[str, object] = {k: v for k, v in overrides.items() if v is not None}
    if data_dir is not None:
        values["data_dir"] = data_dir
    try:
        return Settings(**values)  # type: ignore[arg-type]
    except ValidationError as exc:
        for err in exc.errors(include_input=False, include_url=False):
            where = "__".join(str(p) for p in err["loc"]).upper()
            typer.echo(f"error: settings: {'CARNET_' + where + ': ' if where else ''}{err['msg']}", err=True)
        raise typer.Exit(2) from None


@contextmanager
def reported() -> Iterator[None]:
    """A Carnet error ends the command with its message on stderr and exit code 2 (no traceback)."""
    from carnet.errors import CarnetError

    try:
        yield
    except CarnetError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc


def configure_logs(settings: Settings) -> None:
    from carnet.logs import configure

    configure(settings.log_level)



@contextmanager
def audited(settings: Settings, tenant: str, action: str,
             detail: dict[str, str | int | bool] | None = None, *,
             check: Callable[[], object] | None = None) -> Iterator[None]:
    """An admin command through the door, as a local operator (actor ``cli:<noun>``): ``check`` refuses
    it with one ``refused`` entry; otherwise its entry is stored before it runs (and a ``failed`` one
    if it fails)."""
    from carnet.bootstrap.wiring import build_audit
    from carnet.services.door import Door, operator

    who = operator(tenant, "cli:" + action.split(".")[0], "admin")
    audit = build_audit(settings)
    try:
        with Door(audit).write(who, action, ("admin",), check=check, detail=detail):
            yield
    finally:
        audit.stop()
        audit.log.close()
