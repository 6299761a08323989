#!/usr/bin/env bash
# Installs Carnet with its test tools into .venv and runs the whole test suite.
# (The optional sentence-transformers extra is not installed here: it needs torch==2.13.0 first.)
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet -e '.[dev]'
exec .venv/bin/python -m pytest -q "$@"
