"""One side of the erase-versus-intake race, as its own process (``python -m tests.support.subject_race
CONFIG_JSON``): a worker applying the subject's intake, or a DPO's erasure of the subject. Both build
the whole stack from settings (PostgreSQL control plane, shared key store), on the vector store
``tests.support.shared_index`` serves; they meet only through those stores, as production's API and
``carnet worker`` processes do. Marker files in ``markers`` say where each one is, and gate it."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from carnet.bootstrap import wiring as bootstrap
from carnet.domain.extraction.model import Extraction
from carnet.domain.intake import Message
from carnet.ports import VectorIndex
from carnet.settings.root import CatalogBackend, PiiEngine, PiiSettings, PostgresSettings, Settings
from tests.support.extractors import ScriptedExtractor
from tests.support.shared_index import HashEmbedder, Hooked, connect

DEADLINE_S = 60.0


def settings(*, data_dir: Path, key_dir: Path, dsn: str) -> Settings:
    return Settings(data_dir=data_dir, key_dir=key_dir, catalog=CatalogBackend.POSTGRES,
                    postgres=PostgresSettings(dsn=SecretStr(dsn), pool_size=2, lock_timeout=30),
                    pii=PiiSettings(engine=PiiEngine.PATTERNS))


def wait_for(path: Path, *, timeout: float = DEADLINE_S) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path.name} never appeared")
        time.sleep(0.02)


class GatedExtractor(ScriptedExtractor):
    """Says it has the intake (``extracting``), then holds its extraction until ``go`` exists."""

    def __init__(self, markers: Path) -> None:
        super().__init__()
        self._markers = markers

    def extract(self, messages: Sequence[Message], *, session_id: str | None, locale: str,
                context: Sequence[Message] = ()) -> Extraction:
        (self._markers / "extracting").touch()
        wait_for(self._markers / "go")
        return super().extract(messages, session_id=session_id, locale=locale, context=context)


def _build(config: dict[str, Any], index: VectorIndex) -> bootstrap.Container:
    bootstrap.build_index = lambda settings, dim, model_id=None: index  # the store every process shares
    return bootstrap.build(settings(data_dir=Path(config["data_dir"]), key_dir=Path(config["key_dir"]),
                                    dsn=config["dsn"]), embedder=HashEmbedder())


def work(config: dict[str, Any], markers: Path) -> dict[str, object]:
    from carnet.services.intake.worker import Worker, owner_name

    slow = markers / "applying" if config["order"] == "worker_first" else None
    c = _build(config, Hooked(connect(tuple(config["address"]), bytes.fromhex(config["authkey"])),
                              slow_upsert=slow))
    try:
        worker = Worker(c.deps, c.queue, GatedExtractor(markers), c.audit, owner=owner_name("race", 0),
                        lease_seconds=30)
        deadline = time.monotonic() + DEADLINE_S
        while worker.run_once() == 0:
            if time.monotonic() > deadline:
                raise TimeoutError("no intake to take")
            time.sleep(0.05)
        return {"taken": 1}
    finally:
        c.close()


def erase(config: dict[str, Any], markers: Path) -> dict[str, object]:
    from carnet.services.rights.erase import erase_subject

    slow = markers / "erasing" if config["order"] == "erase_first" else None
    c = _build(config, Hooked(connect(tuple(config["address"]), bytes.fromhex(config["authkey"])),
                              slow_after_empty_scroll=slow))
    try:
        (markers / "ready-eraser").touch()
        wait_for(markers / "start-erase")
        return erase_subject(c.deps, tenant=config["tenant"], subject_id=config["subject"]).as_dict()
    finally:
        c.close()


def main(argv: list[str]) -> int:
    config = json.loads(argv[1])
    markers = Path(config["markers"])
    result = work(config, markers) if config["role"] == "worker" else erase(config, markers)
    (markers / f"result-{config['role']}.json").write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
