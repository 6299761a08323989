"""The control plane on PostgreSQL (catalog, intake queue, audit trail) for several nodes.

psycopg 3 is an optional dependency: the embedded default (SQLite) never imports this package, and
importing it without the driver says how to install it."""

try:
    import psycopg  # noqa: F401
    import psycopg_pool  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only where the extra is missing
    raise ImportError(
        "CARNET_CATALOG=postgres needs psycopg 3 and psycopg-pool: run `pip install 'carnet[postgres]'`"
    ) from exc
