#!/usr/bin/env bash
# Installs Carnet into .venv and starts the server on embedded defaults with the demo (its own store).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet 'torch==2.13.0'   # the CPU build, before anything that depends on torch
.venv/bin/pip install --quiet -e .
# --demo: the demo's own store (./carnet-demo, keys in ./carnet-demo-keys), seeded and its key printed on the
# first start only; never ./carnet-data or CARNET_DATA_DIR.
exec .venv/bin/carnet serve --demo "$@"
