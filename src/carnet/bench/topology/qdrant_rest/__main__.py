"""``python -m carnet.bench.topology.qdrant_rest --port P --root DIR [--api-key-env NAME]``: the Qdrant
test server in a process of its own (plain HTTP on 127.0.0.1), its collections kept under DIR and
reopened when it starts again: the soak kills and restarts it as one restarts a Qdrant node."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import uvicorn

from carnet.bench.topology.qdrant_rest.app import QdrantRestApp
from carnet.bench.topology.qdrant_rest.store import Store


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m carnet.bench.topology.qdrant_rest")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--api-key-env", help="The environment variable holding the API key (never argv).")
    args = parser.parse_args()
    args.root.mkdir(parents=True, exist_ok=True)
    store = Store(args.root, persist=True)
    app = QdrantRestApp(store)
    api_key = os.environ.get(args.api_key_env) if args.api_key_env else None
    try:
        uvicorn.run(app.asgi(api_key=api_key), host="127.0.0.1", port=args.port, access_log=False,
                    log_config=None, lifespan="off", timeout_graceful_shutdown=1)
    finally:
        store.release()


if __name__ == "__main__":
    main()
