"""Qdrant's point update operations (``PUT /points``, ``POST /points/delete``, ``POST /points/batch``
and the payload endpoints) as qdrant-edge ``UpdateOperation`` values; the shard key each names is
routed by the collection (``Collection.route``)."""

from __future__ import annotations

from qdrant_client.http import models as m
from qdrant_edge import UpdateMode
from qdrant_edge import UpdateOperation as EdgeOp

from carnet.bench.topology.qdrant_rest import convert as cv
from carnet.bench.topology.qdrant_rest.convert import NotReproduced


class FormatError(ValueError):
    """A body Qdrant refuses while deserialising it (400 "Format error in JSON body")."""


_MODES = {m.UpdateMode.UPSERT: UpdateMode.Upsert, m.UpdateMode.INSERT_ONLY: UpdateMode.InsertOnly,
          m.UpdateMode.UPDATE_ONLY: UpdateMode.UpdateOnly}


def upsert(op: m.PointInsertOperations) -> EdgeOp:
    mode = _MODES[op.update_mode] if op.update_mode is not None else None
    return EdgeOp.upsert_points(cv.points(op), condition=cv.flt(op.update_filter), update_mode=mode)


def delete(selector: m.PointsSelector) -> EdgeOp:
    if isinstance(selector, m.FilterSelector):
        return EdgeOp.delete_points_by_filter(cv.flt(selector.filter))
    return EdgeOp.delete_points(cv.ids(selector.points))


def set_payload(body: m.SetPayload, *, overwrite: bool) -> EdgeOp:
    """Qdrant requires ``points`` or ``filter``, not both."""
    if (body.points is None) == (body.filter is None):
        raise FormatError("Either list of point ids or filter must be provided")
    if body.filter is not None:
        by_filter = EdgeOp.overwrite_payload_by_filter if overwrite else EdgeOp.set_payload_by_filter
        return by_filter(cv.flt(body.filter), body.payload, key=body.key)
    by_ids = EdgeOp.overwrite_payload if overwrite else EdgeOp.set_payload
    return by_ids(cv.ids(body.points or []), body.payload, key=body.key)


def operation(op: m.UpdateOperation) -> EdgeOp:
    """One entry of ``POST /points/batch``."""
    match op:
        case m.UpsertOperation(upsert=body):
            return upsert(body)
        case m.DeleteOperation(delete=selector):
            return delete(selector)
        case m.SetPayloadOperation(set_payload=body):
            return set_payload(body, overwrite=False)
        case m.OverwritePayloadOperation(overwrite_payload=body):
            return set_payload(body, overwrite=True)
    raise NotReproduced(f"batch operation {type(op).__name__}")


def shard_key(op: m.UpdateOperation) -> m.ShardKeySelector | None:
    """The shard-key selector of one entry of ``POST /points/batch``."""
    match op:
        case m.UpsertOperation(upsert=body):
            return body.shard_key
        case m.DeleteOperation(delete=selector):
            return selector.shard_key
        case m.SetPayloadOperation(set_payload=body) | m.OverwritePayloadOperation(overwrite_payload=body):
            return body.shard_key
    raise NotReproduced(f"batch operation {type(op).__name__}")
