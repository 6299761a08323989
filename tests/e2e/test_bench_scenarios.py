"""The scenario benchmark's rules, on a tiny inline scenario through a real server."""

from __future__ import annotations

from carnet.api.app import create_app
from carnet.api.server import running
from carnet.bench.scenarios import evaluate
from carnet.bootstrap import Container
from carnet.services.apikeys import create_key

SPEC = {
    "tenants": {
        "t-a": {"subjects": {"s1": {
            "facts": [
                {"at": "2026-01-02T10:00:00Z", "text": "Le membre habite à Lyon 7e."},
                {"at": "2026-01-02T10:05:00Z", "text": "Il a un contrat auto formule Tiers."},
                {"at": "2026-03-01T10:00:00Z", "text": "Le membre habite maintenant à Villeurbanne."},
            ],
            "queries": [
                {"q": "Où habite le membre ?", "expect_any": ["Villeurbanne"], "not_old": 0},
                {"q": "Quel contrat auto ?", "expect_any": ["Tiers"]},
                {"q": "Quel est son animal ?", "expect_any": ["chat siamois"]},
            ],
            "superseded": [{"old": 0, "by": 2}],
        }}},
        "t-b": {"subjects": {"s2": {"facts": [{"at": "2026-01-02T10:00:00Z", "text": "La cliente a un livret A."}],
                                    "queries": []}}},
    },
    "cross_tenant_probes": [
        {"tenant": "t-b", "subject": "s1", "q": "Où habite le membre ?", "must_return": 0},
        {"tenant": "t-b", "subject": "s2", "q": "Villeurbanne Lyon contrat", "must_not_contain": ["Villeurbanne"]},
    ],
}


def test_scenario_rules_are_counted(container: Container) -> None:
    keys = {t: create_key(container.deps.catalog, container.pepper, tenant=t, roles=["agent"])[0]
            for t in SPEC["tenants"]}
    with running(create_app(container)) as base:
        tally = evaluate(base, keys, SPEC)
    assert tally.queries == 3
    assert tally.hits == 2  # the question about a pet has no answer stored: a miss, counted as one
    assert (tally.superseded_hidden, tally.superseded_total) == (1, 1)
    assert tally.leaks == 0
