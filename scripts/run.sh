#!/usr/bin/env bash
# Installs Carnet into .venv and starts the server on embedded defaults with the demo (its own store).
set -euo pipefail
cd "$(dirname "$0")/.."
# Installed once: again only when what it installs from changed (the pyproject files, this script) or the venv
# lost its `carnet`; otherwise the server starts at once.
stamp=.venv/.run-installed
want=$(cat pyproject.toml clients/python/pyproject.toml scripts/run.sh | sha256sum | cut -d' ' -f1)
if [ ! -x .venv/bin/carnet ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --upgrade pip
  .venv/bin/pip install --quiet 'torch==2.13.0'   # the CPU build, before anything that depends on torch
  .venv/bin/pip install --quiet -e . -e ./clients/python   # the server, and the Python SDK of the README
  echo "$want" > "$stamp"
fi
# --demo: the demo's own store (./carnet-demo, keys in ./carnet-demo-keys), seeded with the story on the
# first start; every start prints the member, the console's address and a new key, last.
exec .venv/bin/carnet serve --demo "$@"
