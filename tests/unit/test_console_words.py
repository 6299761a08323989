"""The console's words for codes, and its dates (issue 50, item 4): every audit action the code emits has
a label in both catalogs (read from the source, so a new action without words fails here), every
outcome and every extraction category too; dates read "1er mars 2024 à 10:00 (Europe/Paris)"; a day is
typed jj/mm/aaaa; counts agree in number; signals become words."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

import carnet
from carnet.domain.extraction.rules.classify import CATEGORIES as RULE_CATEGORIES
from carnet.domain.extraction.schemas import CATEGORIES as LLM_CATEGORIES
from carnet.domain.procedures import Decision
from carnet.entrypoints.http.console import i18n, views
from carnet.entrypoints.http.console.dates import Dates, parse_day
from carnet.errors import InvalidInput
from carnet.services import roles
from carnet.settings.console import ConsoleSettings

SRC = Path(carnet.__file__).parent
_ACTION = re.compile(r"^[a-z_]+\.[a-z_{}]+$")


def _strings(node: ast.expr) -> Iterator[str]:
    """The strings an argument can be: a literal, either branch of ``a if c else b``, an f-string's shape."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body)
        yield from _strings(node.orelse)
    elif isinstance(node, ast.JoinedStr):
        yield "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values)


def _emitted(keyword: str) -> set[str]:
    """Every value given as ``keyword=`` to a call in ``src/carnet`` (``audit.event(action=…)``), and for
    ``action``, the action of every ``door.read/write/allow(who, action, …)``."""
    found: set[str] = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            exprs = [k.value for k in node.keywords if k.arg == keyword]
            f = node.func
            if (keyword == "action" and isinstance(f, ast.Attribute) and f.attr in ("read", "write", "allow")
                    and ast.unparse(f.value).endswith("door") and len(node.args) >= 2):
                exprs.append(node.args[1])
            for e in exprs:
                found.update(_strings(e))
    return found


def _actions() -> set[str]:
    actions: set[str] = set()
    for code in _emitted("action"):
        if not _ACTION.match(code):
            continue  # e.g. a reconcile outcome ("superseded") passed as action= to a dataclass
        if code == "procedure.{}":  # facade_procedures: f"procedure.{decision.value}"
            actions.update(f"procedure.{d.value}" for d in Decision)
        else:
            assert "{}" not in code, f"an action built at run time that this test cannot expand: {code}"
            actions.add(code)
    return actions


def test_every_audit_action_emitted_has_words_in_both_languages() -> None:
    actions = _actions()
    assert {"memory.list", "console.login", "subject.erase", "procedure.approve", "access.denied"} <= actions
    assert len(actions) >= 40, sorted(actions)  # the reader found them all, not a handful
    for lang, words in (("fr", i18n.FR), ("en", i18n.EN)):
        missing = sorted(a for a in actions if f"action.{a}" not in words)
        assert not missing, f"{lang}: audit actions without a label: {missing}"
    labelled = {k.removeprefix("action.") for k in i18n.FR if k.startswith("action.")}
    assert labelled == actions, f"labels of actions nothing emits: {sorted(labelled - actions)}"
    label = i18n.labeller(i18n.translator("fr"))
    assert label("action", "memory.list") == "Liste des mémoires consultée"
    assert label("category", "un-code-inconnu") == "un-code-inconnu"  # a caller's own category, as given


def test_every_outcome_category_and_role_has_words() -> None:
    outcomes = {o for o in _emitted("outcome") if re.fullmatch(r"[a-z_]+", o)} | {"ok", "refused"}
    assert {"denied", "failed", "incomplete"} <= outcomes
    for code in sorted(outcomes):
        assert f"outcome.{code}" in i18n.FR and f"outcome.{code}" in i18n.EN, code
    for code in sorted(set(RULE_CATEGORIES) | set(LLM_CATEGORIES)):
        assert f"category.{code}" in i18n.FR and f"category.{code}" in i18n.EN, code
    assert i18n.FR["category.preference"] == "préférence" and i18n.FR["category.decision"] == "décision"
    for role in (roles.AGENT, roles.DPO, roles.ADMIN, roles.SUPERVISOR):
        assert f"role.{role}" in i18n.FR and f"role.{role}" in i18n.EN, role
    assert i18n.FR["role.supervisor"] == "superviseur"


def test_no_sentence_says_aucun_alone_and_plurals_agree() -> None:
    templates = (SRC / "entrypoints" / "http" / "console" / "templates").glob("*.html")
    assert "none" not in i18n.FR and not [p.name for p in templates if 't("none")' in p.read_text()]
    assert i18n.FR["none.procedure"] == "Aucune procédure." and i18n.FR["none.fact"] == "Aucun fait."
    fr, en = i18n.counter(i18n.translator("fr"), "fr"), i18n.counter(i18n.translator("en"), "en")
    assert fr("timeline.count", 0) == "0 enregistrement" and fr("timeline.count", 1) == "1 enregistrement"
    assert fr("timeline.count", 5) == "5 enregistrements"
    assert fr("audit.ok", 53) == "Chaîne intacte : 53 entrées vérifiées."
    assert en("timeline.count", 0) == "0 records" and en("timeline.count", 1) == "1 record"


PARIS = ZoneInfo("Europe/Paris")


@pytest.mark.parametrize(("at", "lang", "expected"), [
    (datetime(2024, 6, 10, 12, 5, tzinfo=UTC), "fr", "10 juin 2024 à 14:05 (Europe/Paris)"),  # summer: UTC+2
    (datetime(2024, 3, 1, 9, 0, tzinfo=UTC), "fr", "1er mars 2024 à 10:00 (Europe/Paris)"),  # winter: UTC+1
    (datetime(2024, 12, 31, 23, 30, tzinfo=UTC), "fr", "1er janvier 2025 à 00:30 (Europe/Paris)"),  # next day there
    (datetime(2024, 8, 15, 7, 0, tzinfo=UTC), "fr", "15 août 2024 à 09:00 (Europe/Paris)"),
    (datetime(2024, 6, 10, 12, 5, tzinfo=UTC), "en", "10 June 2024 at 14:05 (Europe/Paris)"),
])
def test_a_date_reads_in_words_in_the_console_zone_and_says_which(at: datetime, lang: str, expected: str) -> None:
    assert Dates(zone=PARIS, t=i18n.translator(lang)).when(at) == expected


def test_dates_without_the_zone_with_seconds_by_day_and_in_another_zone() -> None:
    fr = Dates(zone=PARIS, t=i18n.translator("fr"))
    at = datetime(2024, 6, 10, 12, 5, 9, tzinfo=UTC)
    assert fr.when(at, seconds=True, zone=False) == "10 juin 2024 à 14:05:09"
    assert fr.day(datetime(2031, 3, 2, 23, 30, tzinfo=UTC)) == "3 mars 2031"  # the day it is in Paris
    midnight = datetime(2026, 6, 30, tzinfo=UTC)  # a day stored as midnight UTC: the same day everywhere
    assert Dates(zone=ZoneInfo("America/New_York"), t=i18n.translator("fr")).calendar(midnight) == "30 juin 2026"
    assert fr.typed(midnight) == "30/06/2026" and fr.typed(None) == ""
    ny = Dates(zone=ZoneInfo("America/New_York"), t=i18n.translator("en"))
    assert ny.when(at) == "10 June 2024 at 08:05 (America/New_York)"


def test_a_day_is_typed_as_a_french_reader_writes_it() -> None:
    assert parse_day("30/06/2026") == date(2026, 6, 30)
    assert parse_day(" 1/7/2026 ") == date(2026, 7, 1) and parse_day("01.07.2026") == date(2026, 7, 1)
    assert parse_day("2026-06-30") == date(2026, 6, 30)  # ISO, as a script or an old form posts it
    assert parse_day("  ") is None
    for wrong in ("06/30/2026", "31/02/2026", "30 juin 2026", "2026/06/30"):
        with pytest.raises(InvalidInput):
            parse_day(wrong)


def test_the_zone_is_a_setting_checked_at_start() -> None:
    assert ConsoleSettings().time_zone == "Europe/Paris"
    assert ConsoleSettings(time_zone="America/Martinique").time_zone == "America/Martinique"
    with pytest.raises(ValidationError, match="unknown zone"):
        ConsoleSettings(time_zone="Europe/Lutece")


def test_signals_read_as_words_never_as_numbers() -> None:
    assert views.level("relevance", 0.54) == "high" and views.level("relevance", 0.25) == "medium"
    assert views.level("relevance", 0.0) == "low" and views.level("relevance", -0.4) == "low"
    assert views.level("importance", 0.5) == "medium" and views.level("confidence", 0.7) == "high"
    assert set(views.THRESHOLDS) == {"relevance", "keyword", "importance", "recency", "frequency", "confidence"}
    for level in views.LEVELS:
        assert i18n.FR[f"level.{level}"] in ("faible", "moyenne", "forte")
