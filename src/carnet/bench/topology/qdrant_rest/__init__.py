"""A Qdrant test server: Qdrant's REST protocol over qdrant-edge, for the server adapter's tests and
``carnet bench soak``.

A real HTTP(S) server (Starlette on uvicorn) on 127.0.0.1 and a free port: in a thread of the test
process (tests/support/qdrant_rest's ``serving``), or in a process of its own (``python -m
carnet.bench.topology.qdrant_rest``, the soak's, which it kills and restarts: that process keeps
its collections on disk and reopens them). One qdrant-edge shard per collection (or per shard key)
under a directory. The
server adapter (``carnet.adapters.vectors.qdrant_server``) talks to it with the real ``qdrant-client`` over
REST, so its requests go through the client's serialisation, HTTP, TLS and the API key as with a Qdrant server.

What it reproduces (the endpoints the server adapter calls, plus the single query, the payload
endpoints and prefetch with fusion, which share their code):

- ``GET /`` (version 1.19.0), ``/healthz``, ``/livez``, ``/readyz``; ``GET /collections``,
  ``GET|PUT|DELETE /collections/{name}``, ``GET /collections/{name}/exists``;
  ``PUT /collections/{name}/index`` (keyword and float parameters, or a bare type);
- ``PUT /points`` (with ``update_filter`` and ``update_mode``), ``POST /points`` (retrieve),
  ``POST /points/delete`` (ids or filter), ``POST|PUT /points/payload``, ``POST /points/batch``
  (upsert, delete, set and overwrite payload), ``POST /points/query`` and ``/points/query/batch``
  (nearest dense or sparse, ``prefetch`` with fusion RRF (Qdrant's default k = 2, or ``rrf.k``
  and weights) or DBSF, ``params.idf`` corpus), ``POST /points/scroll``, ``POST /points/count``;
- custom sharding (``sharding_method: custom``): ``PUT|GET /collections/{name}/shards`` (a shard key
  with one active shard), each shard key an engine shard of its own; a request's shard-key selector
  routes it (a key, or ``{target, fallback}``: the target's shard if it exists, else the fallback's:
  Qdrant's tiered multitenancy);
- filters: must/should/must_not/min_should, nested filters, match value/any/except/text, float
  ranges, has_id, is_empty, is_null, has_vector;
- every body parsed by qdrant-client's generated models (``extra="forbid"`` as Qdrant's serde
  ``deny_unknown_fields``): a shape Qdrant would refuse gets 400 ``{"status": {"error": "Format error
  in JSON body: ..."}, "time": 0.0}``; the few validation rules the models lack that a body could
  break here get 422 (``validate``); answers are built from the same models in Qdrant's envelope;
- ``api_key``: Qdrant's header check (``api-key`` or ``Authorization: Bearer``), with its open
  paths; ``tls``: HTTPS; ``mtls``: client certificates from the CA required.

``QdrantRestApp.requests`` records ``(method, route)`` of every call: a test pins the endpoints the
adapter uses (the single query, the payload endpoints and prefetch/fusion are not among them).
``QdrantRestApp.queries`` records the same with each call's query parameters (``ordering``,
``consistency``, ``wait``), checked as Qdrant deserialises them.

Distribution is recorded, not reproduced: a collection created with ``shard_number``,
``replication_factor`` and ``write_consistency_factor`` reports them in ``GET /collections/{name}``
(``config.params``) as a cluster would, so a test can prove what the adapter asked, but one
qdrant-edge shard on one node holds every point, and ``ordering`` and ``consistency`` change nothing.

What it does not reproduce: consensus, replication, shard transfer, several shards per key, a
shard key created ``Partial`` and ``replicate_points`` (a tenant's promotion: 501), a read without a
shard key on custom sharding other than a retrieve by ids, any distributed mode; gRPC (port 6334);
snapshots and aliases (the adapter uses neither: a Qdrant server is backed up with its own
snapshots); background optimizers (the engine optimises only when asked, and this server never
asks); quantization, strict mode, WAL settings, multivectors, inference (``Document``/``Image``),
recommend, discover, ``order_by`` with ``start_from`` (a scroll ordered by a key and a direction is
reproduced, through the engine's own ``OrderBy``), facets, geo and datetime conditions, the columnar ``PointsBatch``,
JWT and read-only keys, telemetry and metrics, ``timeout`` (accepted and ignored), Qdrant's other
validation rules. A valid request outside what it reproduces gets 501, never an approximation.
Engine refusals are 400 with the engine's message, which need not be Qdrant's text word for word.
"""
