"""A throwaway PostgreSQL cluster for the tests (the server binaries from Debian's ``postgresql``
package, which scripts/test.sh installs): created once per session in a temp dir, one database per
test, stopped and deleted at the end. The cluster itself is ``carnet.bench.topology.postgres``
(``carnet bench soak`` starts one too); this adds what is pytest's:

- No PostgreSQL: the tests fail with the way to install it; ``TEST_ALLOW_NO_POSTGRES=1`` turns
  that into a skip on a developer's machine.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from carnet.bench.topology import TopologyError
from carnet.bench.topology.postgres import Cluster, bindir, free_port, server_user

if TYPE_CHECKING:
    from carnet.adapters.postgres.pool import Pool

__all__ = ["ALLOW_MISSING", "Cluster", "open_test_pool", "running_cluster"]

ALLOW_MISSING = "TEST_ALLOW_NO_POSTGRES"  # not CARNET_*: Settings refuses unknown CARNET_ variables


def _unavailable(why: str) -> None:
    message = (f"PostgreSQL is needed by these tests: {why}. Install the server (`apt-get install postgresql`; "
               f"scripts/test.sh does) or set {ALLOW_MISSING}=1 to skip them on a developer machine.")
    if os.environ.get(ALLOW_MISSING) == "1":
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


@contextlib.contextmanager
def running_cluster() -> Iterator[Cluster]:
    """A started cluster for the session (fails, or skips with the escape hatch, without PostgreSQL)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install -e '.[dev]')")
    binaries = bindir()
    if binaries is None:
        _unavailable("no initdb/pg_ctl on PATH or under /usr/lib/postgresql/*/bin")
        raise AssertionError("unreachable")
    try:
        run_as = server_user()
    except KeyError:
        _unavailable("running as root and there is no `postgres` system user to run the server as")
        raise AssertionError("unreachable") from None
    # Not pytest's tmp dir: its parents are private to us, and the server runs as another user.
    root = Path(tempfile.mkdtemp(prefix="carnet-pg-"))
    cluster = Cluster(root=root, bindir=binaries, port=free_port(), run_as=run_as)
    try:
        try:
            cluster.start()
        except TopologyError as exc:
            pytest.fail(str(exc), pytrace=False)
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def open_test_pool(dsn: str, *, size: int = 4) -> Pool:
    """A pool on a test database, migrating it first (what bootstrap does with the settings)."""
    from carnet.adapters.postgres.pool import open_pool

    return open_pool(dsn, size=size, timeout=10, migrate=True, name="test")
