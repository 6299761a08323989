"""The query-embedding cache is per tenant: a tenant's question never hits (nor evicts, nor is
cleared by) another tenant's cached one, so a tenant cannot time whether another asked it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.ports import Vector
from carnet.services.memories.query_cache import CachedEmbedder


class Counting:
    model_id, dim = "counting", 4

    def __init__(self) -> None:
        self.queries: list[str] = []

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        return np.zeros((len(texts), self.dim), dtype=np.float32)

    def embed_query(self, text: str) -> Vector:
        self.queries.append(text)
        return np.full(self.dim, len(self.queries), dtype=np.float32)


def test_a_question_cached_for_one_tenant_is_computed_again_for_another() -> None:
    inner = Counting()
    cache = CachedEmbedder(inner, size=8)
    cache.embed_query("le membre a-t-il un contrat auto ?", tenant="banque-a")
    cache.embed_query("le membre a-t-il un contrat auto ?", tenant="banque-b")
    assert len(inner.queries) == 2 and cache.hits == 0  # no hit across tenants: nothing to time
    cache.embed_query("le membre a-t-il un contrat auto ?", tenant="banque-b")
    assert len(inner.queries) == 2 and cache.hits == 1


def test_clearing_one_tenant_leaves_the_others_and_nothing_is_evicted_across_tenants() -> None:
    inner = Counting()
    cache = CachedEmbedder(inner, size=2)
    cache.embed_query("q", tenant="a")
    cache.embed_query("q", tenant="b")
    for n in range(5):  # tenant a fills its own cache over and over
        cache.embed_query(f"a{n}", tenant="a")
    cache.clear("a")
    before = len(inner.queries)
    cache.embed_query("q", tenant="b")
    assert len(inner.queries) == before  # b's entry survived a's traffic and a's erasure
    cache.embed_query("q", tenant="a")
    assert len(inner.queries) == before + 1
    cache.clear()
    cache.embed_query("q", tenant="b")
    assert len(inner.queries) == before + 2


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x", "y", "z", "w"])), max_size=40))
def test_whether_a_query_hits_depends_on_its_own_tenants_history_only(calls: list[tuple[str, str]]) -> None:
    shared = CachedEmbedder(Counting(), size=2)
    alone = {t: CachedEmbedder(Counting(), size=2) for t in "abc"}
    for tenant, text in calls:
        hits = shared.hits
        alone_hits = alone[tenant].hits
        shared.embed_query(text, tenant=tenant)
        alone[tenant].embed_query(text, tenant=tenant)
        assert (shared.hits - hits) == (alone[tenant].hits - alone_hits)
