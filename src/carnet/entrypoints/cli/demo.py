"""The demo: a French call-center story about one member, told through the REST API.

It always runs in a store of its own (``carnet demo``: a temporary one; ``carnet serve --demo`` and
scripts/run.sh: ./carnet-demo, seeded once), never in the real data dir."""

from __future__ import annotations

import json
import shlex
import socket
import tempfile
import threading
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import httpx
import structlog
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.ports import Catalog
from carnet.services.apikeys import create_key, key_id_of, revoke_key
from carnet.settings.root import Settings
from carnet.settings.where import key_command, shown_path

TENANT = "demo-mutuelle"
MEMBER = "ADH-0042"
MEMBERS = (MEMBER,)  # every member the story writes about: printed at each start
DEMO_DIR = Path("carnet-demo")  # `carnet serve --demo` (scripts/run.sh): its own store, never the real one

FIRST_CALL: list[dict[str, Any]] = [
    {"text": "Le membre a un contrat habitation formule Confort depuis 2019.", "importance": 0.7,
     "occurred_at": "2024-01-15T10:00:00+01:00", "category": "contrat"},
    {"text": "Le membre habite à Lyon 7e.", "importance": 0.6, "occurred_at": "2024-01-15T10:01:00+01:00",
     "category": "adresse"},
    {"text": "Le membre préfère être contacté par email plutôt que par téléphone.", "importance": 0.6,
     "occurred_at": "2024-01-15T10:02:00+01:00", "category": "preference"},
    {"text": "Sinistre dégât des eaux déclaré dans la cuisine ; l'expert est passé, indemnisation en attente.",
     "importance": 0.9, "occurred_at": "2024-03-04T09:30:00+01:00", "category": "sinistre"},
    {"text": "Budget maximum pour une assurance auto : 600 euros par an.", "importance": 0.5,
     "occurred_at": "2024-03-04T09:35:00+01:00", "category": "projet"},
]

SECOND_CALL: list[dict[str, Any]] = [
    {"text": "Le membre habite maintenant à Villeurbanne.", "importance": 0.6,
     "occurred_at": "2024-06-10T14:00:00+02:00", "category": "adresse"},
    {"text": "Budget maximum pour une assurance auto : 750 euros par an.", "importance": 0.5,
     "occurred_at": "2024-06-10T14:05:00+02:00", "category": "projet"},
    {"text": "Le membre a un contrat habitation Confort, souscrit en 2019.",
     "occurred_at": "2024-06-10T14:06:00+02:00"},
]


def tell_story(base_url: str, key: str, console: Console) -> None:
    h = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base_url, headers=h, timeout=30.0) as http:
        console.rule("[bold]Carnet — démo : un adhérent, deux appels")
        _call(console, http, "Premier appel (janvier–mars 2024)", FIRST_CALL)
        _call(console, http, "Second appel (juin 2024) : déménagement, nouveau budget", SECOND_CALL)
        _search(console, http, "Où habite l'adhérent ?")
        _search(console, http, "Quel budget pour l'assurance auto ?")
        r = http.post("/api/v1/context/assemble", json={
            "subject_id": MEMBER, "query": "L'adhérent appelle au sujet de son sinistre dans la cuisine"})
        r.raise_for_status()
        ctx = r.json()
        console.print(Panel(ctx["prompt"], title="Contexte assemblé pour le LLM", expand=False))
        console.print(f"stats: {ctx['stats']}")
        hist = http.get(f"/api/v1/subjects/{MEMBER}/memories", params={"status": "superseded"}).json()
        console.print(f"Historique conservé : {len(hist['items'])} fait(s) remplacé(s), masqué(s) du rappel.")


def _call(console: Console, http: httpx.Client, title: str, memories: list[dict[str, Any]]) -> None:
    r = http.post(f"/api/v1/subjects/{MEMBER}/memories", json={"memories": memories})
    r.raise_for_status()
    table = Table(title=title, show_lines=False)
    table.add_column("action")
    table.add_column("mémoire")
    for res in r.json()["results"]:
        note = res["action"]
        if res["superseded"]:
            note += f" ({len(res['superseded'])} ancien(s))"
        table.add_row(note, res["memory"]["text"])
    console.print(table)


def _search(console: Console, http: httpx.Client, question: str) -> None:
    r = http.post(f"/api/v1/subjects/{MEMBER}/search", json={"query": question, "k": 3})
    r.raise_for_status()
    console.print(f"[bold]? {question}")
    for res in r.json()["results"]:
        console.print(f"   {res['score']:.3f}  {res['memory']['text']}")


def demo_settings(settings: Settings, data_dir: Path | None) -> Settings:
    """The demo's own store: ``data_dir`` when given, else ./carnet-demo, never ``CARNET_DATA_DIR`` (the
    real store); its keys, backups, audit trail and erasure ledger beside it, not the real ones."""
    return settings.model_copy(update={"data_dir": data_dir or DEMO_DIR, "key_dir": None, "backup_dir": None,
                                       "audit_path": None, "erasure_ledger": None})


def seed_key(catalog: Catalog, pepper: bytes) -> str | None:
    """The demo tenant's key, created the first time only (then the story is told); None once seeded,
    so a restart tells the story once."""
    if catalog.api_keys(TENANT):
        return None
    key, _ = create_key(catalog, pepper, tenant=TENANT, roles=["agent"], name="demo")
    return key


def visitor_key(catalog: Catalog, pepper: bytes) -> str:
    """A key for the person at the terminal, made at every start (a key is shown once, stored as a hash:
    the one of an earlier start cannot be printed again). Earlier ones stay valid."""
    key, _ = create_key(catalog, pepper, tenant=TENANT, roles=["agent"], name="demo-visitor")
    return key


def what_to_type(base: str, key: str, settings: Settings) -> list[str]:
    """The last lines ``carnet serve --demo`` prints: the member, the console, a request to paste. Plain
    lines (no wrapping, no colour), so that each one can be copied whole."""
    body = json.dumps({"subject_id": MEMBER, "query": "Où habite le membre ?"}, ensure_ascii=False)
    other = key_command(settings, tenant=TENANT, roles=("supervisor",))
    return [
        f"Carnet écoute sur {base} (données de la démo : {shown_path(settings.data_dir)} ; Ctrl-C pour arrêter).",
        f"Adhérent de la démo : {', '.join(MEMBERS)} (organisation {TENANT}).",
        f"Console : {base}/console (collez-y la clé, puis cherchez {MEMBER}).",
        f"Une clé d'un autre rôle (supervisor, dpo, admin), dans un autre terminal : {other}",
        "Clé de démo (rôle agent, nouvelle à chaque démarrage ; les précédentes restent valables) :",
        key,
        "Essayez :",
        f"curl -fsS -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' "
        f"-d {shlex.quote(body)} {base}/api/v1/context/assemble",
    ]


def run_in_process(data_dir: Path | None) -> None:
    """``carnet demo``: in a temporary store, or in ``data_dir``; its key lives as long as the story."""
    from carnet.entrypoints.http.app import create_app
    from carnet.entrypoints.http.server import running

    with tempfile.TemporaryDirectory(prefix="carnet-demo-") as tmp:
        root = data_dir or Path(tmp) / "data"
        container = build(Settings(data_dir=root, key_dir=None if data_dir else Path(tmp) / "keys"))
        try:
            key, record = create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=["agent"])
            try:
                with running(create_app(container)) as base:
                    tell_story(base, key, Console())
            finally:
                revoke_key(container.deps.catalog, key_id=record.key_id)
        finally:
            container.close()


def run_against_server_when_ready(container: Container, settings: Settings) -> None:
    """For ``carnet serve --demo`` (``settings`` from ``demo_settings``): the first time, tell the story
    with the demo's own key once the server listens; at every start, print what to type last (the
    member, the console, a new key and a request with it). The story's requests are left out of the
    access log, so nothing of the demo's own prints after those lines."""
    story_key = seed_key(container.deps.catalog, container.pepper)
    key = visitor_key(container.deps.catalog, container.pepper)
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    base = f"http://{host}:{settings.port}"
    story_id = key_id_of(story_key)
    if story_id is not None:
        _quiet_access_log(story_id)

    def story() -> None:
        _wait_listening(host, settings.port)
        if story_key is not None:
            tell_story(base, story_key, Console())
        print("\n".join(what_to_type(base, key, settings)), flush=True)

    threading.Thread(target=story, name="carnet-demo", daemon=True).start()


def _wait_listening(host: str, port: int, timeout: float = 120.0) -> None:
    """Until the port accepts a connection (no HTTP request: it would print an access-log line)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=1.0):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # polling the port, with the deadline above


def _quiet_access_log(key_id: str) -> None:
    """Drop the access-log lines of the story's own requests (its key): they would follow the lines
    that say what to type."""

    def drop_story(_logger: object, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        if event.get("event") == "request" and event.get("key_id") == key_id:
            raise structlog.DropEvent
        return event

    processors = list(structlog.get_config()["processors"])
    structlog.configure(processors=[drop_story, *processors])
