"""Keys created and revoked by another process beside a server (issue 50: a key made with the demo's
printed command was refused by the demo server, from the second one on).

The server opens three stores on the catalog's one SQLite file (catalog, intake queue, team procedures).
Opening the second used to open and close the file itself, which drops every POSIX lock the process holds
on it: the next process to close its own connection then took the WAL away from under the server, which
saw nothing written after that. Real processes, the real adapters, as `carnet serve` builds them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from carnet.adapters.sqlite.catalog import SqliteCatalog
from carnet.adapters.sqlite.intakes import SqliteIntakeStore
from carnet.adapters.sqlite.procedures import SqliteTeamProcedures

_OTHER_PROCESS = """
import sys
from pathlib import Path
from carnet.adapters.sqlite.catalog import SqliteCatalog
catalog = SqliteCatalog(Path(sys.argv[1]))
if sys.argv[2] == "add":
    catalog.add_api_key(key_id=sys.argv[3], key_hash="h" + sys.argv[3], tenant="t", roles=["agent"], rate_limit=None,
                        name=None)
else:
    catalog.revoke_api_key(sys.argv[3], tenant=None)
catalog.close()
"""


def _other_process(path: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(path), *args], check=True, timeout=120)


def test_a_server_with_three_stores_on_the_catalog_file_sees_every_key_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite3"
    catalog = SqliteCatalog(path)
    intakes, procedures = SqliteIntakeStore(path), SqliteTeamProcedures(path)  # as bootstrap.stores opens them
    try:
        for key_id in ("0000000000a1", "0000000000a2", "0000000000a3"):
            _other_process(path, "add", key_id)
            found = catalog.find_api_key("h" + key_id)
            assert found is not None and not found.revoked, key_id
        _other_process(path, "revoke", "0000000000a1")
        revoked = catalog.find_api_key("h0000000000a1")
        assert revoked is not None and revoked.revoked  # a revocation beside the server holds at once
    finally:
        for store in (procedures, intakes, catalog):
            store.close()
