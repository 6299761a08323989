"""Retention rules (pure): which records go and why; classes per tenant; settings validation."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from carnet.domain.records import Kind, Memory, RetentionClass, RetentionStart, Scope, Status
from carnet.domain.retention import DecayRule, Reason, RetentionPolicy, SubjectRetention, doomed
from carnet.settings.root import Settings

NOW = datetime(2026, 6, 1, tzinfo=UTC)
SCOPE = Scope("acme", "h1")
AML = RetentionClass("aml", 30, RetentionStart.RELATIONSHIP_END)
CLASSES = {"default": RetentionClass("default", None), "aml": AML}


def rec(mid: str, *, age_days: float = 1, **fields: object) -> Memory:
    at = NOW - timedelta(days=age_days)
    base = Memory(id=mid, scope=SCOPE, kind=Kind.FACT, text="x", pseudo_text="x", recorded_at=at, valid_from=at,
                  updated_at=at)
    return replace(base, **fields)  # type: ignore[arg-type]


def run(records: list[Memory], subject: SubjectRetention | None = None,
        decay: DecayRule | None = None) -> dict[str, Reason]:
    return doomed(records, now=NOW, classes=CLASSES, subject=subject or SubjectRetention(), decay=decay or DecayRule())


def test_expired_records_go_for_retention_and_live_ones_stay() -> None:
    gone = run([rec("a", expires_at=NOW - timedelta(seconds=1)), rec("b", expires_at=NOW + timedelta(days=1)),
                rec("c")])
    assert gone == {"a": Reason.RETENTION}


def test_relationship_end_class_waits_for_the_end_then_its_days() -> None:
    aml = rec("a", retention="aml", age_days=3000)
    assert run([aml]) == {}  # relationship open: never
    ended = SubjectRetention(relationship_end=NOW - timedelta(days=29))
    assert run([aml], ended) == {}
    ended = SubjectRetention(relationship_end=NOW - timedelta(days=30))
    assert run([aml], ended) == {"a": Reason.RELATIONSHIP_END}
    assert run([rec("b", age_days=3000)], ended) == {}  # other classes do not count from the end


def test_decay_takes_unimportant_untouched_records_only() -> None:
    records = [
        rec("old-low", importance=0.05, age_days=121),
        rec("old-high", importance=0.5, age_days=121),
        rec("young-low", importance=0.05, age_days=119),
        rec("read-low", importance=0.05, age_days=400, last_accessed_at=NOW - timedelta(days=10)),
        rec("told-again-low", importance=0.05, age_days=400, updated_at=NOW - timedelta(days=10)),
    ]
    assert run(records) == {"old-low": Reason.DECAY}
    assert run(records, decay=DecayRule(enabled=False)) == {}
    assert run(records, decay=DecayRule(untouched_days=5)).keys() == {"old-low", "young-low", "read-low",
                                                                      "told-again-low"}


def test_superseded_records_follow_their_gone_successor_along_the_chain() -> None:
    c = rec("c", importance=0.01, age_days=200)
    b = rec("b", status=Status.SUPERSEDED, superseded_by="c", age_days=300, updated_at=NOW)
    a = rec("a", status=Status.SUPERSEDED, superseded_by="b", age_days=400, updated_at=NOW)
    kept = rec("k", status=Status.SUPERSEDED, superseded_by="z", updated_at=NOW)
    z = rec("z")
    assert run([a, b, c, kept, z]) == {"c": Reason.DECAY, "b": Reason.SUPERSEDED_ORPHAN,
                                       "a": Reason.SUPERSEDED_ORPHAN}
    forgotten = rec("f", status=Status.SUPERSEDED, superseded_by="deleted-earlier", updated_at=NOW)
    assert run([forgotten]) == {"f": Reason.SUPERSEDED_ORPHAN}


def test_a_legal_hold_keeps_everything() -> None:
    records = [rec("a", expires_at=NOW - timedelta(days=1)), rec("b", importance=0.0, age_days=999),
               rec("c", retention="aml", age_days=999)]
    held = SubjectRetention(legal_hold=True, relationship_end=NOW - timedelta(days=999))
    assert run(records, held) == {}


def test_policy_gives_each_tenant_its_classes_or_the_star_ones_plus_default() -> None:
    policy = RetentionPolicy({"acme": {"call_note": RetentionClass("call_note", 183)},
                              "*": {"prospect": RetentionClass("prospect", 1095)}},
                             RetentionClass("default", 365))
    assert set(policy.classes("acme")) == {"default", "call_note"}
    assert set(policy.classes("other")) == {"default", "prospect"}
    assert policy.lookup("other", "call_note") is None
    assert policy.classes("acme")["default"].days == 365
    own_default = RetentionPolicy({"t": {"default": RetentionClass("default", 10)}}, RetentionClass("default", 365))
    assert own_default.classes("t")["default"].days == 10
    assert RetentionClass("aml", 10, RetentionStart.RELATIONSHIP_END).expires_at(NOW) is None


def test_settings_validate_retention_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARNET_RETENTION", '{"acme": {"call_note": {"days": 183}, '
                                           '"aml": {"days": 1826, "after": "relationship_end"}}, '
                                           '"*": {"prospect": {"days": 1095}}}')
    monkeypatch.setenv("CARNET_DECAY__UNTOUCHED_DAYS", "90")
    monkeypatch.setenv("CARNET_MAINTENANCE__BACKUP_INTERVAL_HOURS", "6")
    s = Settings()
    assert s.retention["acme"]["aml"].after.value == "relationship_end"
    assert s.decay.untouched_days == 90 and s.decay.importance_below == 0.1
    assert s.maintenance.backup_interval_hours == 6 and s.maintenance.scheduler
    for bad in ('{"acme": {"x": {"days": 0}}}', '{"acme": {"x": {"days": 3, "after": "birth"}}}',
                '{"Acme": {"x": {"days": 3}}}', '{"acme": {"x y": {"days": 3}}}',
                '{"acme": {"x": {"days": 3, "extra": 1}}}'):
        monkeypatch.setenv("CARNET_RETENTION", bad)
        with pytest.raises(ValidationError):
            Settings()
