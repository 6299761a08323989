"""The demo's story told as raw call transcripts: the rule-based extractor, through the real intake
worker (pseudonymisation, extraction, values put back, remember) and the real read path, must give
the answers the demo shows when its facts are stored directly (``carnet.entrypoints.cli.demo``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from carnet.adapters.extractors.rules import RuleExtractor
from carnet.bootstrap.container import Container
from carnet.domain.extraction.model import Extraction
from carnet.domain.intake import Message
from carnet.domain.records import Kind, Status
from carnet.services.apikeys import Principal
from carnet.services.intake.worker import Worker
from carnet.services.memories.recall import Query

WHO = Principal("k0000000001", "demo-mutuelle", ("agent", "dpo"))
MEMBER = "ADH-0042"

CALLS: list[tuple[str, str, list[tuple[str, str]]]] = [
    ("call-1", "2024-01-15T10:00:00+01:00", [
        ("advisor", "Mutuelle Horizon, bonjour, Camille à l'appareil, que puis-je faire pour vous ?"),
        ("user", "Bonjour madame, Jean-Baptiste Lefèvre. J'ai un contrat habitation formule Confort depuis 2019 "
                 "et je voulais vérifier mes garanties."),
        ("advisor", "Très bien monsieur Lefèvre, je regarde votre dossier. Vous habitez toujours à Lyon 7e ?"),
        ("user", "Oui, c'est ça."),
        ("advisor", "Et comment préférez-vous être contacté ?"),
        ("user", "Par email plutôt que par téléphone, s'il vous plaît."),
        ("advisor", "C'est noté. Bonne journée !"),
    ]),
    ("call-2", "2024-03-04T09:30:00+01:00", [
        ("advisor", "Mutuelle Horizon, bonjour."),
        ("user", "Bonjour, je vous appelle parce que j'ai un dégât des eaux dans la cuisine, une fuite sous l'évier."),
        ("advisor", "Je suis désolée. Je vois que l'expert est passé le 28 février, l'indemnisation est en attente."),
        ("user", "D'accord. Autre chose : je cherche une assurance auto, mon budget maximum c'est 600 euros par an."),
        ("advisor", "Je vous envoie une proposition par email cette semaine."),
        ("user", "Merci, au revoir."),
    ]),
    ("call-3", "2024-06-10T14:00:00+02:00", [
        ("advisor", "Mutuelle Horizon, bonjour, que puis-je pour vous ?"),
        ("user", "Bonjour, je vous appelle parce que j'ai déménagé : j'habite maintenant à Villeurbanne."),
        ("advisor", "Très bien, je mets à jour votre adresse. Votre projet d'assurance auto tient toujours ?"),
        ("user", "Oui, et finalement mon budget maximum pour l'assurance auto est de 750 euros par an."),
        ("advisor", "C'est noté, je vous envoie un nouveau devis par email d'ici vendredi."),
    ]),
]


class _Watching(RuleExtractor):
    """The rule extractor, remembering what it was shown (it must only ever see placeholders)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def extract(self, messages: Sequence[Message], *, session_id: str | None, locale: str,
                context: Sequence[Message] = ()) -> Extraction:
        self.seen.extend(m.content for m in [*context, *messages])
        return super().extract(messages, session_id=session_id, locale=locale, context=context)


def _tell(container: Container, extractor: _Watching) -> None:
    worker = Worker(container.deps, container.queue, extractor, container.audit, owner="demo")
    for session, start, turns in CALLS:
        at = datetime.fromisoformat(start)
        messages = [Message(role, text, at + timedelta(minutes=n)) for n, (role, text) in enumerate(turns)]
        container.facade.submit_messages(WHO, subject_id=MEMBER, session_id=session, messages=messages,
                                         idempotency_key=None)
        assert worker.run_once() == 1


def _top(container: Container, question: str, k: int = 3) -> list[str]:
    return [r.memory.text for r in container.facade.search(WHO, subject_id=MEMBER, query=Query(question, k=k))]


def test_the_demo_story_works_from_raw_calls(container: Container) -> None:
    extractor = _Watching()
    _tell(container, extractor)

    assert "Villeurbanne" in _top(container, "Où habite l'adhérent ?", k=1)[0]
    budget = _top(container, "Quel budget pour l'assurance auto ?")
    assert "750 euros" in budget[0] and not any("600 euros" in t for t in budget)
    assert any("dégât des eaux" in t and "cuisine" in t
               for t in _top(container, "L'adhérent appelle au sujet de son sinistre dans la cuisine"))
    assert any("par email plutôt que par téléphone" in t for t in _top(container, "Comment contacter l'adhérent ?"))
    assert any("formule Confort" in t for t in _top(container, "Quel contrat habitation a-t-il ?"))
    assert any("expert est passé" in t for t in _top(container, "Où en est l'expertise du sinistre ?"))

    old = container.facade.list_memories(WHO, subject_id=MEMBER, status=Status.SUPERSEDED, limit=50)
    stale = " ".join(m.text for m in old.items)
    assert "Lyon 7e" in stale and "600 euros" in stale  # kept as history, hidden from recall

    everything = container.facade.list_memories(WHO, subject_id=MEMBER, status=None, limit=100).items
    episodes = [m.text for m in everything if m.kind is Kind.EPISODE]
    assert any(e.startswith("Appel du 4 mars 2024 : dégât des eaux") for e in episodes)
    # The greeting that names the member is no record (measured: docs/benchmarks.md, "Each extraction rule,
    # measured"); the name was in the calls, the extractor never saw it, and no placeholder reaches a reader.
    assert any("Lefèvre" in turn for _, _, turns in CALLS for _, turn in turns)
    assert not any("Lefèvre" in s for s in extractor.seen)
    assert not any("<PERSON_" in m.text for m in everything)
    assert not any("Bonjour" in m.text or "bonne journée" in m.text.lower() for m in everything)


def test_a_phone_number_dictated_in_words_is_remembered_in_digits(container: Container) -> None:
    """The pseudonymiser reads a number dictated in words; the fact gets it back as the advisor writes
    it, so the member's dictation and the read-back give one number to dial."""
    worker = Worker(container.deps, container.queue, RuleExtractor(), container.audit, owner="demo")
    at = datetime.fromisoformat("2024-09-02T10:00:00+02:00")
    turns = [
        ("advisor", "Mutuelle Horizon, bonjour. Un numéro où vous joindre ?"),
        ("user", "Oui, mon nouveau portable, c'est le zéro six, soixante et onze, quarante-deux, dix-huit, "
                 "quatre-vingt-treize."),
        ("advisor", "Je relis : 06 71 42 18 93. C'est noté."),
    ]
    messages = [Message(role, text, at + timedelta(minutes=n)) for n, (role, text) in enumerate(turns)]
    container.facade.submit_messages(WHO, subject_id="ADH-0043", session_id="call-9", messages=messages,
                                     idempotency_key=None)
    assert worker.run_once() == 1
    texts = [m.text for m in container.facade.list_memories(WHO, subject_id="ADH-0043", status=None,
                                                            limit=50).items]
    assert any("06 71 42 18 93" in t for t in texts), texts
    assert not any("soixante" in t for t in texts), texts
