"""The store a benchmark measures: built once (or reused), then served by ``carnet serve`` in its own
process (it owns the shard) on a free loopback port."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from carnet.bench.report import progress
from carnet.bench.synthetic import fact

TENANT = "bench"
BATCH = 50
PORT_ATTEMPTS = 3  # a free port taken by another process before the server binds it: another port


def settings(root: Path, pii: bool = True) -> Any:
    from carnet.settings.root import Settings

    return Settings(data_dir=root / "data", key_dir=root / "keys", pii={"enabled": pii})


def subject(n: int) -> str:
    return f"sub-{n:06d}"


class StoreMismatch(ValueError):
    """The store holds another load, or one built another way: it is neither reused nor added to."""

    def __init__(self, root: Path, recorded: Mapping[str, Any], wanted: Mapping[str, Any]) -> None:
        super().__init__(f"the store at {root} holds {dict(recorded)}, not {dict(wanted)}: use another --store")


def load_wanted(memories: int, subjects: int, text_pool: int | None) -> dict[str, Any]:
    """What the marker records of a load: size, and for the pool builder how it was built."""
    wanted: dict[str, Any] = {"memories": memories, "subjects": subjects}
    if text_pool is not None:
        from carnet.bench.text_pool import BUILDER

        wanted.update(builder=BUILDER, text_pool=text_pool)
    return wanted


def reusable(root: Path, *, memories: int, subjects: int, text_pool: int | None = None) -> bool:
    """Whether the store at ``root`` holds that load, built that way (its marker says so); raises
    ``StoreMismatch`` when it holds one built another way, or when a pool-built load would be added to
    a store holding another load (cheap: callers check before loading any model)."""
    marker = root / "bench-load.json"
    if not marker.exists():
        return False
    wanted = load_wanted(memories, subjects, text_pool)
    recorded = json.loads(marker.read_text()).get("load", {})
    if recorded == wanted:
        return True
    if text_pool is not None or "builder" in recorded:
        raise StoreMismatch(root, recorded, wanted)
    return False  # the same builder, another size: `remember` adds to it, as it always did


def seeded(container: Any, root: Path, *, memories: int, subjects: int,
           text_pool: int | None = None) -> dict[str, Any]:
    """Ingest ``memories`` over ``subjects`` unless the store at ``root`` already holds that load (its
    marker file says so); the ingest figures, measured now or when it was built. ``text_pool``: build it
    with the bulk builder (``bench.text_pool``) from that many distinct texts. A store built one way is
    never reused, nor added to, by a run asked the other way (``StoreMismatch``), and a pool-built store
    is never added to."""
    marker = root / "bench-load.json"
    wanted = load_wanted(memories, subjects, text_pool)
    if reusable(root, memories=memories, subjects=subjects, text_pool=text_pool):
        progress(f"reusing the store at {root} ({memories} memories, {subjects} subjects)")
        figures: dict[str, Any] = json.loads(marker.read_text())["ingest"]
        return figures
    if text_pool is None:
        figures = ingest(container, memories, subjects)
    else:
        from carnet.bench.text_pool import ingest_pooled

        figures = ingest_pooled(container, memories, subjects, text_pool, tenant=TENANT, subject_id=subject)
    marker.write_text(json.dumps({"load": wanted, "ingest": figures}))
    return figures


def ingest(container: Any, memories: int, subjects: int) -> dict[str, Any]:
    from carnet.services.memories.remember import NewMemory, remember

    rng = random.Random(7)
    per_subject = max(1, memories // subjects)
    base = datetime(2024, 1, 1, tzinfo=UTC)
    counts: dict[str, int] = {}
    started = time.perf_counter()
    done = 0
    for s in range(subjects):
        left = per_subject if s < subjects - 1 else memories - per_subject * (subjects - 1)
        while left > 0:
            n = min(BATCH, left)
            items = [NewMemory(text=fact(rng), occurred_at=base + timedelta(hours=rng.randint(0, 24 * 700)))
                     for _ in range(n)]
            outcomes = remember(container.deps, tenant=TENANT, subject_id=subject(s), items=items, actor="bench")
            for o in outcomes:
                counts[o.action] = counts.get(o.action, 0) + 1
            left -= n
            done += n
            if done % 2000 < n:
                rate = done / (time.perf_counter() - started)
                progress(f"ingested {done}/{memories} memories ({rate:.0f}/s)")
    elapsed = time.perf_counter() - started
    return {"ingest_per_s": round(memories / elapsed, 1), "ingest_s": round(elapsed, 1),
            "ingest_outcomes": counts}


@contextmanager
def serving(root: Path, *, pii: bool, rate_limit: str | None = None,
            env: Mapping[str, str] | None = None) -> Iterator[tuple[str, str]]:
    """``carnet serve`` on the store at ``root``, in its own process; yields its base URL and a new
    agent key of the bench tenant (``rate_limit``: the key's own budget). The server's stderr goes to
    ``root/serve.log`` (its tail is shown if it fails to come up)."""
    with served_process(root, pii=pii, rate_limit=rate_limit, env=env) as (base, key, _):
        yield base, key


@contextmanager
def served_process(root: Path, *, pii: bool, rate_limit: str | None = None,
                   env: Mapping[str, str] | None = None) -> Iterator[tuple[str, str, int]]:
    """``serving``, also yielding the server's process id (to read its memory and CPU time)."""
    from carnet.bootstrap.stores import build_control_plane
    from carnet.entrypoints.http.server import free_port, wait_ready
    from carnet.services.apikeys import create_key

    plane = build_control_plane(settings(root, pii))
    key, _ = create_key(plane.catalog, plane.pepper, tenant=TENANT, roles=["agent"], rate_limit=rate_limit)
    plane.catalog.close()
    full_env = {**os.environ, "CARNET_KEY_DIR": str(root / "keys"), "CARNET_LOG_LEVEL": "WARNING",
                "CARNET_PII__ENABLED": "true" if pii else "false", **(env or {})}
    log_path = root / "serve.log"
    for attempt in range(1, PORT_ATTEMPTS + 1):
        port = free_port()
        cmd = [sys.executable, "-m", "carnet", "serve", "--data-dir", str(root / "data"), "--port", str(port)]
        with log_path.open("wb") as log:
            proc = subprocess.Popen(cmd, env=full_env, stdout=subprocess.DEVNULL, stderr=log)
            try:
                base = f"http://127.0.0.1:{port}"
                try:
                    wait_ready(base, timeout=600, alive=lambda p=proc: p.poll() is None)  # type: ignore[misc]
                except (RuntimeError, TimeoutError):
                    said = log_path.read_text(errors="replace")
                    if attempt < PORT_ATTEMPTS and "address already in use" in said.lower():
                        continue  # another process took the port meanwhile: our server could not bind it
                    progress(said[-2000:])
                    raise
                if not listening(port, proc.pid):  # another server took the free port first and answered
                    if attempt < PORT_ATTEMPTS:
                        continue
                    raise RuntimeError(f"port {port} is served by another process")
                yield base, key, proc.pid
                return
            finally:
                stop(proc, timeout=20)


def stop(proc: subprocess.Popen[bytes], *, timeout: float) -> None:
    """SIGTERM, then SIGKILL if the process has not ended within ``timeout`` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def listening(port: int, pid: int) -> bool:
    """Whether ``pid`` (or one of its children) holds the socket listening on ``port``: a free port found
    by ``free_port`` may be taken by another process before the server binds it, and that process's
    ``/healthz`` would answer for it (Linux: ``/proc/net/tcp*`` and ``/proc/<pid>/fd``)."""
    sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                sockets.add(f"socket:[{f[9]}]")
    for p in (pid, *child_pids(pid)):
        try:
            if any(os.readlink(fd) in sockets for fd in Path(f"/proc/{p}/fd").iterdir()):
                return True
        except OSError:
            continue
    return False


def rss_bytes(pid: int) -> dict[str, int]:
    """The process's resident memory now and at its peak (``VmRSS``, ``VmHWM`` in /proc; Linux only),
    and its child processes' now (the model's, by default: ``serve_children_rss_bytes``)."""
    out: dict[str, int] = {}
    own = _status(pid)
    for name, key in (("VmRSS", "serve_rss_bytes"), ("VmHWM", "serve_peak_rss_bytes")):
        if name in own:
            out[key] = own[name]
    if own:
        out["serve_children_rss_bytes"] = sum(_status(child).get("VmRSS", 0) for child in child_pids(pid))
    return out


def _status(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` of ``pid`` in bytes; empty when it is gone."""
    found: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                found[name] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return found


def child_pids(pid: int) -> list[int]:
    """Direct child processes of ``pid`` (``/proc/<pid>/task/*/children``)."""
    out: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            out.extend(int(c) for c in (task / "children").read_text().split())
    except OSError:
        pass
    return out


def disk_bytes(root: Path) -> int:
    """Bytes the store takes on disk (allocated blocks, so sparse files count what they use)."""
    total = 0
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_blocks * 512
    return total
