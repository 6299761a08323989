#!/usr/bin/env bash
# Installs Carnet with its test tools into .venv and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's packages that the tests run for real, fetched by one apt-get (as root, without sudo) in the
# background while Python's are installed: SoftHSM2 (the HSM adapter's PKCS#11 token), PostgreSQL 15 (the
# control plane's tests start throwaway clusters of their own on free ports; Debian puts initdb and pg_ctl
# under /usr/lib/postgresql/<version>/bin), Chromium (the console's browser tests, tests/e2e/
# test_console_browser.py, driven by Playwright at /usr/bin/chromium: `playwright install` is never used).
missing=()
command -v softhsm2-util >/dev/null || missing+=(softhsm2)
command -v pg_ctl >/dev/null || compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null || missing+=(postgresql)
command -v chromium >/dev/null || missing+=(chromium)
apt_job=
if [ ${#missing[@]} -gt 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) &
  apt_job=$!
fi
python3 -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet 'torch==2.13.0'   # the CPU build, before anything that depends on torch
# The rest (about 2.5 GB with the test tools) through uv, which fetches and unpacks in parallel: minutes
# less than pip on a new machine. torch stays the one installed above (it satisfies the pin). pip is the
# fallback if uv cannot run here. The Python SDK is its own distribution (for tests/e2e/test_sdk.py).
.venv/bin/pip install --quiet uv
if ! SSL_CERT_FILE=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt} .venv/bin/uv pip install --quiet \
    --python .venv/bin/python -e '.[dev]' -e ./clients/python; then
  echo "uv could not install the test tools: pip instead" >&2
  .venv/bin/pip install --quiet -e '.[dev]' -e ./clients/python
fi
# axe-core, the accessibility check injected into each console page (pinned by tests/e2e/axe/package-lock.json).
(cd tests/e2e/axe && npm ci --no-audit --no-fund --silent)
bash scripts/install-helm.sh .venv/bin             # helm, for the chart's tests (tests/unit/test_helm.py)
if [ -n "$apt_job" ]; then wait "$apt_job"; fi     # Debian's packages, fetched meanwhile
# Lint, types and the import rules of docs/architecture.md (pyproject [tool.importlinter]) come first:
# a submission that breaks them fails before the tests run.
echo "ruff, mypy --strict, import rules…"
.venv/bin/ruff check src tests clients/python/src
.venv/bin/python -m mypy -n 2   # two workers: 14 s from an empty cache here, against 58 s before
.venv/bin/lint-imports --no-cache >/dev/null || .venv/bin/lint-imports --no-cache
# Any pytest arguments are passed on: `bash scripts/test.sh -m "not slow"` is the fast loop (docs in README).
# Three workers on two cores, each taking whole test files (--dist loadfile: a file's fixtures and its
# order stay in one process): many tests wait on subprocesses, servers and sleeps (molecule, `carnet serve`,
# PostgreSQL, OpenBao), so a third worker fills the cores while the others wait. On the 2-vCPU AMD EPYC of
# 2026-12-02 the same 1,743 tests took 12 min 29 s on three workers against 20 min 56 s on two (the CPU
# 98.6 % busy with three). --no-loadscope-reorder keeps the files in the order tests/conftest.py gives them
# (the longest first): by default xdist hands out the files with the most tests first, which left the
# one-test molecule scenario and the crash tests for last, one worker running them alone while the others idled.
exec .venv/bin/python -m pytest -q -n 3 --dist loadfile --no-loadscope-reorder "$@"
