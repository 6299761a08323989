"""What the two places that refuse ``503 overloaded`` share (the authentication gate, while a key
lookup waits for a thread, and admission, while a request waits for a slot): the time a request has
left before its deadline, and the route template its refusal is counted under."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

from starlette.routing import BaseRoute, Match
from starlette.types import Scope

BODY_SECONDS = "body_seconds"  # in the scope's state: the seconds the body limit spent reading the body


def time_left(scope: Scope, deadline: float) -> float:
    """Seconds until ``deadline`` after the request's arrival (``state["arrived"]``, a
    ``time.perf_counter`` stamp the access log sets), not counting the time its body took to arrive
    (``state["body_seconds"]``: waiting on the client is bounded by the body's own deadline); the whole
    deadline when it is not stamped."""
    state = scope.get("state", {})
    arrived, reading = state.get("arrived"), state.get(BODY_SECONDS)
    if not isinstance(arrived, float):
        return deadline
    waited_on_client = reading if isinstance(reading, float) else 0.0
    return deadline - (time.perf_counter() - arrived - waited_on_client)


def route_template(scope: Scope) -> str:
    """The path template of the route the router would pick (looked up only for a refusal), which
    also goes into the scope for the access log and the latency histogram; never the raw path, which
    carries a subject id."""
    routes = getattr(getattr(scope.get("app"), "router", None), "routes", ())
    partial = None
    for route in _flat(routes):
        match, _ = route.matches(scope)
        if match is Match.FULL:
            partial = route
            break
        if match is Match.PARTIAL and partial is None:
            partial = route
    if partial is None:
        return "<unmatched>"
    scope["route"] = partial
    return str(getattr(partial, "path", "<unmatched>"))


def _flat(routes: Sequence[BaseRoute]) -> Iterator[BaseRoute]:
    """The app's routes, with those of each included router (FastAPI keeps them in the router it was
    given: ``include_router`` adds no prefix here, the routers carry theirs)."""
    for route in routes:
        inner = getattr(getattr(route, "original_router", None), "routes", None)
        if inner:
            yield from _flat(inner)
        else:
            yield route
