"""The servers of the production topology, started on one machine: a PostgreSQL cluster from
Debian's binaries, an OpenBao dev server, the Qdrant test server (Qdrant's REST protocol over
qdrant-edge, in a process of its own).

They live here, not under tests/, because ``carnet bench soak`` starts them and production code
(``carnet.bench`` included) never imports ``tests``; the test suite's fixtures (tests/support)
import them from here and add only what is pytest's (skip or fail without PostgreSQL, per-test
databases). They are test servers shipped with the benchmarks, never a way to run Carnet: nothing
outside ``carnet.bench`` imports them (pyproject's import contracts).
"""


class TopologyError(RuntimeError):
    """A server of the topology could not start or stop (its log's tail in the message)."""
