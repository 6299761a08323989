"""Which tenants keep people's corrections (``CARNET_KEEP_CORRECTIONS``, default none), and the
labelled pair's round trip through its sealed JSON form."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from carnet.domain.corrections import NOT_SUPERSEDED, CorrectionPair
from carnet.domain.records import Scope
from carnet.ports import SealedCorrection
from carnet.services.memories.corrections import CorrectionKeeper
from carnet.settings.root import Settings


class _Nowhere:
    def add_correction(self, scope: Scope, *, correction_id: str, at: datetime, sealed: bytes) -> None:
        raise AssertionError("nothing is kept in this test")

    def corrections(self, tenant: str) -> list[SealedCorrection]:
        return []

    def subject_corrections(self, scope: Scope) -> int:
        return 0


class _Clear:
    def seal(self, scope: Scope, pair: CorrectionPair) -> bytes:
        return b""

    def open(self, scope: Scope, correction_id: str, sealed: bytes) -> CorrectionPair:
        raise AssertionError("nothing is opened in this test")


def _keeper(tenants: dict[str, bool]) -> CorrectionKeeper:
    return CorrectionKeeper(_Nowhere(), _Clear(), tenants)


def test_off_unless_the_tenant_or_every_tenant_opted_in() -> None:
    assert not _keeper({}).keeps("acme")
    assert _keeper({"acme": True}).keeps("acme") and not _keeper({"acme": True}).keeps("other")
    assert _keeper({"*": True}).keeps("other") and not _keeper({"*": True, "acme": False}).keeps("acme")


def test_the_setting_is_read_per_tenant_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().keep_corrections == {}
    monkeypatch.setenv("CARNET_KEEP_CORRECTIONS", '{"acme": true, "*": false}')
    assert Settings().keep_corrections == {"acme": True, "*": False}
    monkeypatch.setenv("CARNET_KEEP_CORRECTIONS", '{"Not A Tenant": true}')
    with pytest.raises(ValidationError):
        Settings()


def test_a_pair_survives_its_json_form() -> None:
    at = datetime(2025, 1, 15, 10, tzinfo=UTC)
    pair = CorrectionPair(id="c1", older="Le membre habite à <LOC_1>.", newer="Le membre habite à <LOC_2>.",
                          older_valid_from=at, newer_valid_from=at, closed_at=None, corrected_at=at,
                          rule="same topic", reason="Sa fille habite à <LOC_2>.")
    assert CorrectionPair.from_json(pair.as_json()) == pair and pair.label == NOT_SUPERSEDED
