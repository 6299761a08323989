"""The measures of ``carnet bench scenarios``, on one subject's stored records and a search function.

Pure: the records, the map from facts to records (``View``) and ``search`` (a query's top-3 as
(id, text) pairs) come from the caller, so the rules are tested without a server. Definitions (also in
docs/benchmarks.md, "French scenarios"):

- a query is a hit when one of ``expect_any`` is in a top-3 text and none of the top-3 carries its
  ``not_old`` fact; ``by_kind`` counts hits per query ``kind`` (``untagged`` without one).
- ``expected_said`` (``--from calls``): with ``said_any`` on the file's queries (substrings of the calls
  that carry the answer, ``said_basis`` "said_any"), every query that has one, and a hit is one of
  ``said_any`` (case folded) in a top-3 text with none of the top-3 carrying its ``not_old`` fact;
  without it (``said_basis`` "expect_any"), queries one of whose ``expect_any`` phrases is said word for
  word in the subject's calls (lower case), judged on ``expect_any``. ``recall_at_3_said`` is the share
  of those that hit. A query outside them can still hit (a date said without its year is written with it).
- ``stale``: share of the queries with a ``not_old`` whose top-3 holds a record carrying that fact.
- ``superseded_hidden`` (from what searches return): a pair ``old → by`` is hidden when neither the old
  fact's own text nor any query whose ``not_old`` names it returns, in its top-3, a record carrying the
  old fact. Pairs whose old fact left no record are not checked (``superseded_unmapped``).
- ``superseded_status``: a pair is hidden by status when every fact record carrying the old fact has
  status ``superseded``.
- ``false_superseded``: superseded records that carry a fact no pair names as ``old``;
  ``false_superseded_kept``: those of them whose facts an active record still carries (a turn closed
  for one part whose other parts reconcile kept as a record of their own: nothing true was lost).
- ``noise``: share of the stored fact records that carry no fact and hold no query's ``expect_any``
  (nor, from calls, its ``said_any``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from carnet.bench.scenarios_match import Weights, carried

Hit = tuple[str, str]
Search = Callable[[str], Sequence[Hit]]
UNTAGGED = "untagged"


@dataclass(frozen=True, slots=True)
class Record:
    id: str
    text: str
    status: str
    kind: str


@dataclass(frozen=True, slots=True)
class View:
    """One subject after ingestion: its records by id, and for each fact the ids of the records carrying it."""

    records: Mapping[str, Record]
    carriers: Sequence[frozenset[str]]

    def facts_of(self, record_id: str) -> frozenset[int]:
        return frozenset(i for i, ids in enumerate(self.carriers) if record_id in ids)


def view_by_id(records: Mapping[str, Record], ids: Sequence[str]) -> View:
    """Facts stored as written: fact ``i`` is the record the API answered for it (or merged it into)."""
    return View(records=records, carriers=[frozenset({i}) for i in ids])


def view_by_words(records: Mapping[str, Record], facts: Sequence[str], weights: Weights) -> View:
    """Facts told in calls: fact ``i`` is carried by the records ``scenarios_match.carried`` maps to it."""
    carriers: list[set[str]] = [set() for _ in facts]
    for rec in records.values():
        for i in carried(rec.text, facts, weights):
            carriers[i].add(rec.id)
    return View(records=records, carriers=[frozenset(c) for c in carriers])


@dataclass
class Scores:
    queries: int = 0
    hits: int = 0
    said: int = 0  # ``--from calls``: queries one of whose ``expect_any`` is said word for word in the calls
    said_hits: int = 0
    said_basis: str | None = None  # ``said_any`` when the file's queries carry it, else ``expect_any``
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # kind -> [hits, queries]
    stale_checked: int = 0
    stale_found: int = 0
    superseded_total: int = 0
    superseded_unmapped: int = 0
    superseded_checked: int = 0
    superseded_hidden: int = 0
    status_checked: int = 0
    status_hidden: int = 0
    false_superseded: int = 0
    false_superseded_kept: int = 0
    fact_records: int = 0
    noise_records: int = 0
    episodes: int = 0
    misses: list[str] = field(default_factory=list)


def judge(query: dict[str, Any], results: Sequence[Hit], *, old_ids: AbstractSet[str]) -> tuple[bool, bool]:
    """(one of ``expect_any`` is in a result's text, a result is a superseded fact's record), for
    ``results`` as (id, text) pairs. Shared with ``carnet bench extract``."""
    return _found(query["expect_any"], results), any(mid in old_ids for mid, _ in results)


def _found(phrases: Sequence[str], results: Sequence[Hit]) -> bool:
    return any(e.lower() in text.lower() for _, text in results for e in phrases)


def said_phrases(query: dict[str, Any], said: str) -> list[str] | None:
    """The phrases a query's answer is judged on from calls: its ``said_any`` when it has one, else those
    of its ``expect_any`` said word for word in ``said`` (the calls, lower case); ``None``: not said."""
    if query.get("said_any"):
        return list(query["said_any"])
    if any(e.lower() in said for e in query["expect_any"]):
        return list(query["expect_any"])
    return None


def score_queries(scores: Scores, subject: str, queries: Sequence[dict[str, Any]], view: View, search: Search,
                  *, said: str | None = None) -> None:
    """``said``: the subject's calls, lower-cased (``--from calls``), to count the queries an extractor
    that keeps the callers' words can answer at all (the judge is lexical, the phrases the file's)."""
    for query in queries:
        results = search(query["q"])
        old = query.get("not_old")
        found, stale = judge(query, results, old_ids=view.carriers[old] if old is not None else frozenset())
        hit = found and not stale
        scores.queries += 1
        scores.hits += hit
        phrases = said_phrases(query, said) if said is not None else None
        hit_said = False
        if phrases is not None:
            found = _found(phrases, results)  # the misses below say what was judged
            hit_said = found and not stale
            scores.said += 1
            scores.said_hits += hit_said
            basis = "said_any" if query.get("said_any") else "expect_any"
            scores.said_basis = basis if scores.said_basis in (None, basis) else "mixed"
        if old is not None:
            scores.stale_checked += 1
            scores.stale_found += stale
        judged = hit_said if phrases is not None else hit  # from calls, the kinds too are judged on what is said
        tally = scores.by_kind.setdefault(query.get("kind") or UNTAGGED, [0, 0])
        tally[0] += judged
        tally[1] += 1
        if not judged:
            scores.misses.append(f"{subject}: {query['q']} (found={found}, stale={stale})")


def score_superseded(scores: Scores, subject: str, sdata: dict[str, Any], view: View, search: Search) -> None:
    for pair in sdata.get("superseded", []):
        old = pair["old"]
        scores.superseded_total += 1
        carriers = view.carriers[old]
        if not carriers:
            scores.superseded_unmapped += 1
            scores.misses.append(f"{subject}: fact {old} (superseded by {pair['by']}) left no record")
            continue
        probes = [sdata["facts"][old]["text"]] + [q["q"] for q in sdata.get("queries", []) if q.get("not_old") == old]
        returned = sum(1 for p in probes if any(mid in carriers for mid, _ in search(p)))
        scores.superseded_checked += 1
        scores.superseded_hidden += returned == 0
        if returned:
            scores.misses.append(
                f"{subject}: fact {old} (superseded by {pair['by']}) returned by {returned}/{len(probes)} searches"
            )
        _score_status(scores, subject, pair, view)


def _score_status(scores: Scores, subject: str, pair: dict[str, Any], view: View) -> None:
    statuses = [
        view.records[mid].status
        for mid in view.carriers[pair["old"]]
        if mid in view.records and view.records[mid].kind == "fact"
    ]
    if not statuses:
        return
    scores.status_checked += 1
    if all(s == "superseded" for s in statuses):
        scores.status_hidden += 1
    else:
        scores.misses.append(
            f"{subject}: fact {pair['old']} not superseded by {pair['by']} (statuses {sorted(set(statuses))})"
        )


def score_records(scores: Scores, sdata: dict[str, Any], view: View) -> None:
    """False supersessions, and (for the caller's noise) fact records that carry nothing needed."""
    olds = {pair["old"] for pair in sdata.get("superseded", [])}
    expected = [e.lower() for q in sdata.get("queries", []) for e in [*q["expect_any"], *q.get("said_any", ())]]
    for rec in view.records.values():
        if rec.kind == "episode":
            scores.episodes += 1
        if rec.kind != "fact":
            continue
        facts = view.facts_of(rec.id)
        scores.fact_records += 1
        if rec.status == "superseded" and facts and not facts & olds:
            scores.false_superseded += 1
            if all(any(view.records[i].status == "active" for i in view.carriers[f]) for f in facts):
                scores.false_superseded_kept += 1
        if not facts and not any(e in rec.text.lower() for e in expected):
            scores.noise_records += 1
