"""The REST routes, Qdrant's envelope and errors, and its API-key check, as a Starlette app.

Answers are ``{"result": ..., "status": "ok", "time": <seconds>}`` built from qdrant-client's
models; errors are ``{"status": {"error": "..."}, "time": ...}``: 400 for a body that does not
parse into the request model (Qdrant: "Format error in JSON body: ...") or that the engine refuses,
422 for one that breaks a validation rule (``validate``) and for a bad collection name, 404 for a
missing collection, 409 for one that exists, 501 for a valid request the server does not reproduce.
``wait``, ``ordering``, ``consistency`` and ``timeout`` query parameters are accepted; every write is
applied before the answer (``wait=false`` still answers ``acknowledged``, as Qdrant does). ``ordering``
(``weak|medium|strong``) and ``consistency`` (a number or ``majority|quorum|all``) are checked as
Qdrant deserialises them (400 "Query deserialize error: ..." otherwise) and recorded in ``queries``;
with one replica they change nothing.
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pydantic
import qdrant_edge as edge
from qdrant_client.http import models as m
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from carnet.bench.topology.qdrant_rest import convert as cv
from carnet.bench.topology.qdrant_rest import updates, validate
from carnet.bench.topology.qdrant_rest.convert import NotReproduced
from carnet.bench.topology.qdrant_rest.store import BadName, Collection, CollectionExists, CollectionNotFound, Store

VERSION = "1.19.0"  # what ``GET /`` reports: the server adapter needs 1.19 (per-subject IDF)
OPEN_PATHS = ("/", "/healthz")  # Qdrant's API-key whitelist: these exactly, and /readyz*, /livez*
OPEN_PREFIXES = ("/readyz", "/livez")

T = TypeVar("T")
Handler = Callable[[Request], Awaitable[Response]]


def _error(status: int, message: str, started: float | None) -> JSONResponse:
    """``started=None``: refused before any work, Qdrant reports ``time`` 0.0."""
    elapsed = 0.0 if started is None else time.perf_counter() - started
    body = m.ErrorResponse(status=m.ErrorResponseStatus(error=message), time=elapsed)
    return JSONResponse(body.model_dump(mode="json", exclude_none=True), status_code=status)


def _dump(result: Any) -> Any:
    if isinstance(result, pydantic.BaseModel):
        return result.model_dump(mode="json", exclude_none=True)
    if isinstance(result, list):
        return [_dump(r) for r in result]
    return result


def _status(wait: bool) -> m.UpdateStatus:
    return m.UpdateStatus.COMPLETED if wait else m.UpdateStatus.ACKNOWLEDGED


class QueryError(ValueError):
    """A query-string parameter Qdrant would not deserialise."""


def _check_query(request: Request) -> None:
    """``ordering`` as ``WriteOrdering``, ``consistency`` as ``ReadConsistency`` (an unsigned integer or a name)."""
    asked = request.query_params
    try:
        if "ordering" in asked:
            m.WriteOrdering(asked["ordering"])
        if "consistency" in asked:
            value = asked["consistency"]
            if not value.isdigit():
                m.ReadConsistencyType(value)
    except ValueError as exc:
        raise QueryError(f"Query deserialize error: {exc}") from exc


def _check_insert(body: m.PointInsertOperations) -> None:
    if isinstance(body, m.PointsList):
        validate.points(body.points)


class ApiKey(BaseHTTPMiddleware):
    """``api-key: <key>`` or ``Authorization: Bearer <key>`` on every path but the open ones.
    Missing: 401 "Must provide an API key or an Authorization bearer token"; wrong: 401 "Invalid
    API key or JWT" (Qdrant's plain-text bodies)."""

    def __init__(self, app: Any, key: str) -> None:
        super().__init__(app)
        self._key = key.encode()

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        path = request.url.path
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            return await call_next(request)
        bearer = request.headers.get("authorization", "")
        given = request.headers.get("api-key") or (bearer[7:] if bearer.startswith("Bearer ") else None)
        if given is None:
            return PlainTextResponse("Must provide an API key or an Authorization bearer token", status_code=401)
        if not hmac.compare_digest(given.encode(), self._key):
            return PlainTextResponse("Invalid API key or JWT", status_code=401)
        return await call_next(request)


class QdrantRestApp:
    """The endpoints over ``store``. ``requests`` records ``(method, path template)`` of each call,
    ``queries`` the same with the call's query parameters."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.requests: list[tuple[str, str]] = []
        self.queries: list[tuple[str, str, dict[str, str]]] = []

    def asgi(self, *, api_key: str | None) -> Starlette:
        c = "/collections/{name}"
        p = f"{c}/points"
        routes = [
            Route("/", self._wrap(self.version, raw=True), methods=["GET"]),
            Route("/healthz", self._text("healthz check passed"), methods=["GET"]),
            Route("/livez", self._text("healthz check passed"), methods=["GET"]),
            Route("/readyz", self._text("all shards are ready"), methods=["GET"]),
            Route("/collections", self._wrap(self.list_collections), methods=["GET"]),
            Route(c, self._wrap(self.get_collection), methods=["GET"]),
            Route(c, self._wrap(self.create_collection), methods=["PUT"]),
            Route(c, self._wrap(self.delete_collection), methods=["DELETE"]),
            Route(f"{c}/exists", self._wrap(self.collection_exists), methods=["GET"]),
            Route(f"{c}/index", self._wrap(self.create_index), methods=["PUT"]),
            Route(f"{c}/shards", self._wrap(self.create_shard_key), methods=["PUT"]),
            Route(f"{c}/shards", self._wrap(self.list_shard_keys), methods=["GET"]),
            Route(p, self._wrap(self.upsert), methods=["PUT"]),
            Route(p, self._wrap(self.retrieve), methods=["POST"]),
            Route(f"{p}/delete", self._wrap(self.delete), methods=["POST"]),
            Route(f"{p}/payload", self._wrap(self.set_payload), methods=["POST"]),
            Route(f"{p}/payload", self._wrap(self.overwrite_payload), methods=["PUT"]),
            Route(f"{p}/batch", self._wrap(self.batch), methods=["POST"]),
            Route(f"{p}/query", self._wrap(self.query), methods=["POST"]),
            Route(f"{p}/query/batch", self._wrap(self.query_batch), methods=["POST"]),
            Route(f"{p}/scroll", self._wrap(self.scroll), methods=["POST"]),
            Route(f"{p}/count", self._wrap(self.count), methods=["POST"]),
        ]
        middleware = [Middleware(ApiKey, key=api_key)] if api_key is not None else []
        return Starlette(routes=routes, middleware=middleware)

    # -- plumbing ----------------------------------------------------------------------------

    def _text(self, text: str) -> Handler:
        async def endpoint(request: Request) -> Response:
            return PlainTextResponse(text)
        return endpoint

    def _wrap(self, fn: Callable[[Request, bytes], Any], *, raw: bool = False) -> Handler:
        """Read the body, run ``fn`` in a worker thread (the engine releases the GIL), wrap the answer."""
        async def endpoint(request: Request) -> Response:
            started = time.perf_counter()
            route = getattr(request.scope.get("route"), "path", request.url.path)
            self.requests.append((request.method, route))
            self.queries.append((request.method, route, dict(request.query_params)))
            body = await request.body()
            try:
                _check_query(request)
                result = await run_in_threadpool(fn, request, body)
            except QueryError as exc:
                return _error(400, str(exc), None)
            except (pydantic.ValidationError, updates.FormatError) as exc:
                return _error(400, f"Format error in JSON body: {exc}", None)
            except validate.Invalid as exc:
                return _error(422, str(exc), None)
            except CollectionNotFound as exc:
                return _error(404, str(exc), started)
            except CollectionExists as exc:
                return _error(409, str(exc), started)
            except BadName as exc:
                return _error(422, str(exc), None)
            except NotReproduced as exc:
                return _error(501, f"not reproduced by the Qdrant test server: {exc}", started)
            except ValueError as exc:
                return _error(400, f"Bad request: {exc}", started)
            except Exception as exc:
                if type(exc) is not Exception:  # the engine raises bare Exception for what it refuses
                    raise
                return _error(400, str(exc), started)
            if raw:
                return JSONResponse(_dump(result))
            return JSONResponse({"result": _dump(result), "status": "ok", "time": time.perf_counter() - started})
        return endpoint

    @staticmethod
    def _parse(tp: type[T] | Any, body: bytes, check: Callable[[Any], None] | None = None) -> Any:
        """The body as qdrant-client's model ``tp``, then Qdrant's validation rules ``check``."""
        parsed = pydantic.TypeAdapter(tp).validate_json(body or b"{}")
        if check is not None:
            check(parsed)
        return parsed

    def _collection(self, request: Request) -> Collection:
        return self.store.get(request.path_params["name"])

    def _done(self, request: Request, collection: Collection) -> m.UpdateResult:
        wait = request.query_params.get("wait", "false") == "true"
        return m.UpdateResult(operation_id=collection.next_operation(), status=_status(wait))

    # -- service and collections -------------------------------------------------------------

    def version(self, request: Request, body: bytes) -> m.VersionInfo:
        """``GET /``"""
        return m.VersionInfo(title="qdrant - vector search engine", version=VERSION)

    def list_collections(self, request: Request, body: bytes) -> m.CollectionsResponse:
        """``GET /collections``"""
        return m.CollectionsResponse(collections=[m.CollectionDescription(name=n) for n in self.store.names()])

    def get_collection(self, request: Request, body: bytes) -> m.CollectionInfo:
        """``GET /collections/{name}``"""
        return self._collection(request).info()

    def collection_exists(self, request: Request, body: bytes) -> m.CollectionExistence:
        """``GET /collections/{name}/exists``"""
        return m.CollectionExistence(exists=self.store.exists(request.path_params["name"]))

    def create_collection(self, request: Request, body: bytes) -> bool:
        """``PUT /collections/{name}``"""
        asked = self._parse(m.CreateCollection, body, validate.create_collection)
        self.store.create(request.path_params["name"], asked)
        return True

    def delete_collection(self, request: Request, body: bytes) -> bool:
        """``DELETE /collections/{name}``"""
        return self.store.delete(request.path_params["name"])

    def create_index(self, request: Request, body: bytes) -> m.UpdateResult:
        """``PUT /collections/{name}/index``"""
        collection = self.store.create_index(request.path_params["name"], self._parse(m.CreateFieldIndex, body))
        return self._done(request, collection)

    def create_shard_key(self, request: Request, body: bytes) -> bool:
        """``PUT /collections/{name}/shards``: a shard key of a custom-sharded collection (one shard, active)."""
        self._collection(request).add_shard_key(self._parse(m.CreateShardingKey, body))
        return True

    def list_shard_keys(self, request: Request, body: bytes) -> m.ShardKeysResponse:
        """``GET /collections/{name}/shards``: the shard keys (none listed with automatic sharding)."""
        collection = self._collection(request)
        if not collection.custom:
            return m.ShardKeysResponse(shard_keys=None)
        return m.ShardKeysResponse(shard_keys=[m.ShardKeyDescription(key=k) for k in collection.shard_keys()])

    # -- points ------------------------------------------------------------------------------

    def _update(self, request: Request, op: Any, selector: m.ShardKeySelector | None) -> m.UpdateResult:
        collection = self._collection(request)
        collection.route(selector, write=True).update(op)
        return self._done(request, collection)

    def upsert(self, request: Request, body: bytes) -> m.UpdateResult:
        """``PUT /collections/{name}/points``"""
        asked = self._parse(m.PointInsertOperations, body, _check_insert)
        return self._update(request, updates.upsert(asked), asked.shard_key)

    def delete(self, request: Request, body: bytes) -> m.UpdateResult:
        """``POST /collections/{name}/points/delete``"""
        asked = self._parse(m.PointsSelector, body)
        return self._update(request, updates.delete(asked), asked.shard_key)

    def set_payload(self, request: Request, body: bytes) -> m.UpdateResult:
        """``POST /collections/{name}/points/payload``"""
        asked = self._parse(m.SetPayload, body)
        return self._update(request, updates.set_payload(asked, overwrite=False), asked.shard_key)

    def overwrite_payload(self, request: Request, body: bytes) -> m.UpdateResult:
        """``PUT /collections/{name}/points/payload``"""
        asked = self._parse(m.SetPayload, body)
        return self._update(request, updates.set_payload(asked, overwrite=True), asked.shard_key)

    def batch(self, request: Request, body: bytes) -> list[m.UpdateResult]:
        """``POST /collections/{name}/points/batch``: the operations in order, each applied before the next."""
        ops = [(updates.operation(op), updates.shard_key(op))
               for op in self._parse(m.UpdateOperations, body, validate.batch).operations]
        return [self._update(request, op, selector) for op, selector in ops]

    def retrieve(self, request: Request, body: bytes) -> list[m.Record]:
        """``POST /collections/{name}/points``: without a shard key on custom sharding, every shard."""
        asked = self._parse(m.PointRequest, body)
        with_vector = asked.with_vector if asked.with_vector is not None else False
        wanted, payload = cv.ids(asked.ids), cv.with_payload(asked.with_payload, True)
        shards = self._collection(request).read_shards(asked.shard_key)
        return [cv.record(r) for shard in shards for r in shard.retrieve(wanted, payload, with_vector)]

    def query(self, request: Request, body: bytes) -> m.QueryResponse:
        """``POST /collections/{name}/points/query``"""
        parsed = self._parse(m.QueryRequest, body, validate.query)
        shard = self._collection(request).route(parsed.shard_key, write=False)
        return m.QueryResponse(points=[cv.scored(p) for p in shard.query(cv.query(parsed))])

    def query_batch(self, request: Request, body: bytes) -> list[m.QueryResponse]:
        """``POST /collections/{name}/points/query/batch``: one ``query_batch`` of the engine."""
        searches = self._parse(m.QueryRequestBatch, body, validate.query_batch).searches
        selectors = {json.dumps(_dump(q.shard_key), sort_keys=True) for q in searches}
        if len(selectors) > 1:
            raise NotReproduced("a batch of queries to different shard keys")
        shard = self._collection(request).route(searches[0].shard_key if searches else None, write=False)
        results = shard.query_batch(edge.QueryBatchRequest([cv.query(q) for q in searches]))
        return [m.QueryResponse(points=[cv.scored(p) for p in points]) for points in results]

    def scroll(self, request: Request, body: bytes) -> m.ScrollResult:
        """``POST /collections/{name}/points/scroll``"""
        parsed = self._parse(m.ScrollRequest, body, validate.scroll)
        records, nxt = self._collection(request).route(parsed.shard_key, write=False).scroll(cv.scroll(parsed))
        return m.ScrollResult(points=[cv.record(r) for r in records],
                              next_page_offset=None if nxt is None else cv.out_id(nxt))

    def count(self, request: Request, body: bytes) -> m.CountResult:
        """``POST /collections/{name}/points/count``"""
        asked = self._parse(m.CountRequest, body)
        exact = asked.exact if asked.exact is not None else True
        shard = self._collection(request).route(asked.shard_key, write=False)
        total = shard.count(edge.CountRequest(exact=exact, filter=cv.flt(asked.filter)))
        return m.CountResult(count=int(total))
