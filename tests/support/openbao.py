"""The OpenBao dev server of the KMS tests: ``carnet.bench.topology.openbao`` (``carnet bench soak``
starts one too), imported from there."""

from carnet.bench.topology.openbao import Bao, transit_server

__all__ = ["Bao", "transit_server"]
