"""``carnet bench extract``'s rules on a tiny inline story (notes and a transcript) through the real
service layer: turns grouped into sessions, facts attributed to their turn, the scenario checks."""

from __future__ import annotations

from typing import Any

from carnet.adapters.extractors.rules import RuleExtractor
from carnet.bench.extract import evaluate, sessions, turns
from carnet.bootstrap.container import Container

SPEC: dict[str, Any] = {
    "tenants": {
        "t-a": {"subjects": {
            "s1": {
                "facts": [
                    {"at": "2026-01-02T10:00:00Z", "text": "Le membre habite à Lyon 7e."},
                    {"at": "2026-01-02T10:05:00Z", "text": "Bonjour, merci beaucoup !"},
                    {"at": "2026-03-01T10:00:00Z", "text": "Le membre habite maintenant à Villeurbanne."},
                ],
                "queries": [{"q": "Où habite le membre ?", "expect_any": ["Villeurbanne"], "not_old": 0}],
                "superseded": [{"old": 0, "by": 2}],
            },
            "s2": {
                "messages": [
                    {"at": "2026-02-01T09:00:00Z", "role": "advisor", "content": "Quel est votre numéro de contrat ?"},
                    {"at": "2026-02-01T09:01:00Z", "role": "user", "content": "C'est le CTR-445566."},
                    {"at": "2026-02-01T09:02:00Z", "role": "advisor",
                     "content": "Merci. Je vous envoie l'attestation par courriel aujourd'hui."},
                ],
                "queries": [{"q": "Quel est le numéro de contrat ?", "expect_any": ["CTR-445566"]}],
            },
        }},
        "t-b": {"subjects": {"s3": {"facts": [{"at": "2026-01-02T10:00:00Z", "text": "La cliente a un livret A."}]}}},
    },
    "cross_tenant_probes": [{"tenant": "t-b", "subject": "s1", "q": "Où habite le membre ?", "must_return": 0}],
}


def test_turns_are_grouped_by_day_or_session() -> None:
    story = turns(SPEC["tenants"]["t-a"]["subjects"]["s1"])
    assert [t.message.role for t in story] == ["user"] * 3
    assert [[t.index for t in run] for run in sessions(story)] == [[0, 1], [2]]


def test_the_story_is_extracted_stored_and_checked(container: Container) -> None:
    tally, stats = evaluate(container.deps, SPEC, RuleExtractor(), locale="fr")
    assert (tally.hits, tally.queries) == (2, 2), tally.misses
    assert (tally.superseded_hidden, tally.superseded_total) == (1, 1)
    assert tally.leaks == 0
    assert stats.messages == 7 and stats.silent == 2  # the thanks, and the advisor's question
    assert stats.facts == 5 and stats.episodes == 1  # the transcript is a conversation with a decision
    assert any("Le numéro de contrat du membre est CTR-445566." in line for line in stats.shown)


CALLS_SPEC: dict[str, Any] = {
    "tenants": {"t-c": {"subjects": {"s4": {
        "facts": [{"at": "2026-01-05T10:00:40Z", "text": "Le membre habite à Lyon."},
                  {"at": "2026-04-01T15:00:40Z", "text": "Le membre habite désormais à Grenoble."}],
        "calls": [
            {"session_id": "call-a", "at": "2026-01-05T10:00:00Z", "messages": [
                {"role": "advisor", "content": "Bonjour, je vous écoute.", "at": "2026-01-05T10:00:00Z"},
                {"role": "user", "content": "Bonjour. J habite à Lyon, je voulais vérifier mon contrat.",
                 "at": "2026-01-05T10:00:20Z"}]},
            {"session_id": "call-b", "at": "2026-04-01T15:00:00Z", "messages": [
                {"role": "user", "content": "J ai déménagé, j habite désormais à Grenoble.",
                 "at": "2026-04-01T15:00:20Z"},
                {"role": "advisor", "content": "C'est noté, merci.", "at": "2026-04-01T15:00:30Z"}]},
        ],
        "queries": [{"q": "Où habite le membre ?", "expect_any": ["Grenoble"], "not_old": 0, "kind": "latest"}],
        "superseded": [{"old": 0, "by": 1}],
    }}}},
}


def test_calls_are_sessions_and_the_checks_name_facts(container: Container) -> None:
    tally, stats = evaluate(container.deps, CALLS_SPEC, RuleExtractor(), locale="fr")
    assert stats.sessions == 2 and stats.messages == 4
    assert (tally.hits, tally.queries) == (1, 1), tally.misses
    assert (tally.superseded_hidden, tally.superseded_total) == (1, 1), tally.misses
    assert stats.by_kind == {"latest": [1, 1]}
