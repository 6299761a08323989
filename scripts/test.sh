#!/usr/bin/env bash
# Installs Carnet with its test tools into .venv and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet 'torch==2.13.0'   # the CPU build, before anything that depends on torch
.venv/bin/pip install --quiet -e '.[dev]'
exec .venv/bin/python -m pytest -q "$@"
