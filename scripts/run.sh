#!/usr/bin/env bash
# Installs Carnet into .venv and starts the server on embedded defaults, telling the demo story first.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet 'torch==2.13.0'   # the CPU build, before anything that depends on torch
.venv/bin/pip install --quiet -e .
exec .venv/bin/carnet serve --demo "$@"
