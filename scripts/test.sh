#!/usr/bin/env bash
# Installs Carnet with its test tools into .venv and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# SoftHSM2, the real PKCS#11 token of the HSM adapter's tests (as root, without sudo).
if ! command -v softhsm2-util >/dev/null; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq softhsm2 >/dev/null; fi
# PostgreSQL 15, the real server of the PostgreSQL control plane's tests (they start a throwaway cluster of
# their own on a free port). Debian puts initdb and pg_ctl under /usr/lib/postgresql/<version>/bin.
if ! command -v pg_ctl >/dev/null && ! compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; fi
# Chromium, the real browser of the console's tests (tests/e2e/test_console_browser.py), driven by Playwright
# at /usr/bin/chromium: Playwright's own browser download (`playwright install`) is never used.
if ! command -v chromium >/dev/null; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; fi
python3 -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet 'torch==2.13.0'   # the CPU build, before anything that depends on torch
.venv/bin/pip install --quiet -e '.[dev]'
.venv/bin/pip install --quiet -e ./clients/python   # the Python SDK (its own distribution), for tests/e2e/test_sdk.py
# axe-core, the accessibility check injected into each console page (pinned by tests/e2e/axe/package-lock.json).
(cd tests/e2e/axe && npm ci --no-audit --no-fund --silent)
bash scripts/install-helm.sh .venv/bin             # helm, for the chart's tests (tests/unit/test_helm.py)
# Lint, types and the import rules of docs/architecture.md (pyproject [tool.importlinter]) come first:
# a submission that breaks them fails before the tests run.
echo "ruff, mypy --strict, import rules…"
.venv/bin/ruff check src tests clients/python/src
.venv/bin/python -m mypy
.venv/bin/lint-imports --no-cache >/dev/null || .venv/bin/lint-imports --no-cache
# Any pytest arguments are passed on: `bash scripts/test.sh -m "not slow"` is the fast loop (docs in README).
# Two workers, each taking whole test files (--dist loadfile: a file's fixtures and its order stay in one
# process): many tests wait on subprocesses (molecule, servers, PostgreSQL), so two share the 2 cores well.
# --no-loadscope-reorder keeps the files in the order tests/conftest.py gives them (the longest first):
# by default xdist hands out the files with the most tests first, which left the one-test, five-minute
# molecule scenario and the crash tests for last, one worker running them alone while the other idled.
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder "$@"
