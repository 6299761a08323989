"""The learned turn filter in front of the LLM extractor (``adapters/extractors/gated``): a call in which
it keeps no turn is not sent; the others, and calls it cannot judge, are sent whole; each decision counted
and exported; ``carnet serve``'s wiring puts the gate in front of Mistral unless ``CARNET_LLM__GATE`` is off."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from carnet.adapters.extractors.gated import GatedExtractor, needs_llm
from carnet.adapters.extractors.mistral import MistralExtractor
from carnet.adapters.extractors.mistral_chat import LlmStats
from carnet.bootstrap.models import build_extractor
from carnet.domain.extraction.model import ExtractedFact, Extraction
from carnet.domain.extraction.turn_features import FEATURES
from carnet.domain.extraction.turn_model import TurnModel
from carnet.domain.intake import Message
from carnet.metrics import Metrics
from carnet.settings.root import Settings

AT = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
TOLD = [Message("advisor", "Quel est le montant de votre cotisation ?", AT),
        Message("user", "Je paie 212,40 euros par mois depuis le 14 février.", AT)]
GREETINGS = [Message("advisor", "Bonjour, que puis-je faire pour vous ?", AT),
             Message("user", "Rien, merci, au revoir.", AT)]


class _Llm:
    """The ``Extractor`` port, answering one fact per call it is handed, and counting them."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    @property
    def name(self) -> str:
        return "mistral"

    @property
    def judges_contradictions(self) -> bool:
        return True

    def extract(self, messages: Sequence[Message], *, session_id: str | None, locale: str,
                context: Sequence[Message] = ()) -> Extraction:
        self.seen.append(len(messages))
        return Extraction(facts=(ExtractedFact("Le client paie 212,40 euros par mois."),), episode="Appel.")

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]:
        return [existing[0][0]] if existing else []


def _amounts_only() -> TurnModel:
    """Keeps a turn that holds an amount, nothing else (a filter simple enough to know what it keeps)."""
    weights = tuple(4.0 if f == "amount" else 0.0 for f in FEATURES)
    return TurnModel("t", tuple(0.0 for _ in FEATURES), tuple(1.0 for _ in FEATURES), weights, -2.0, 0.5)


def test_a_call_with_no_kept_turn_is_not_sent_and_the_others_are_sent_whole() -> None:
    llm, stats = _Llm(), LlmStats()
    gated = GatedExtractor(llm, _amounts_only(), stats=stats)
    skipped = gated.extract(GREETINGS, session_id="s1", locale="fr")
    assert skipped == Extraction(facts=()) and llm.seen == []
    sent = gated.extract(TOLD, session_id="s2", locale="fr")
    assert [f.text for f in sent.facts] == ["Le client paie 212,40 euros par mois."] and sent.episode == "Appel."
    assert llm.seen == [2]  # the whole call, the advisor's question included
    one_side = [Message("user", "Bonjour, rien de spécial.", AT)]  # no dialogue: the filter cannot judge it
    assert not needs_llm(_amounts_only(), GREETINGS) and needs_llm(_amounts_only(), one_side)
    gated.extract(one_side, session_id=None, locale="fr")
    assert (stats.extractions_sent, stats.extractions_skipped) == (2, 1) and llm.seen == [2, 1]
    assert gated.obsolete("new", [("id-1", "old")], locale="fr") == ["id-1"]
    assert (gated.name, gated.judges_contradictions) == ("mistral", True)


def test_the_decisions_are_exported() -> None:
    stats = LlmStats()
    stats.add(extractions_sent=3, extractions_skipped=5, not_member=2)
    metrics = Metrics(CollectorRegistry(auto_describe=True))
    metrics.watch_llm("mistral", stats)
    text = generate_latest(metrics.registry).decode()
    assert 'carnet_llm_extractions_total{decision="sent",extractor="mistral"} 3.0' in text
    assert 'carnet_llm_extractions_total{decision="skipped",extractor="mistral"} 5.0' in text
    assert 'carnet_llm_not_member_total{extractor="mistral"} 2.0' in text


def test_serve_puts_the_shipped_filter_in_front_of_mistral_unless_told_not_to(tmp_path: Path) -> None:
    llm = {"base_url": "http://127.0.0.1:9"}  # never called: building a client opens no connection
    gated = build_extractor(Settings(data_dir=tmp_path, extractor="mistral", llm=llm))
    assert isinstance(gated, GatedExtractor) and gated.name == "mistral"
    assert gated.extract(GREETINGS, session_id="s", locale="fr") == Extraction(facts=())
    assert gated.stats.extractions_skipped == 1
    gated.close()
    plain = build_extractor(Settings(data_dir=tmp_path, extractor="mistral", llm={**llm, "gate": False}))
    assert isinstance(plain, MistralExtractor)
    plain.close()
