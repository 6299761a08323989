"""A case reference named in a question brings the records that carry it first, on the real stack."""

from __future__ import annotations

from datetime import UTC, datetime

from carnet.bootstrap.container import Container
from carnet.services import pii
from carnet.services.memories.recall import Query, exact_identifiers, keyword_query, search
from carnet.services.memories.remember import NewMemory, remember

AT = datetime(2025, 9, 1, tzinfo=UTC)

# A note that repeats most of the question's words (by meaning and by keyword it is the best match),
# and the one that carries the reference, which shares no other word with the question.
QUESTION = "Où en est le dossier de sinistre dégât des eaux dans la cuisine, SIN-2031-5531 ?"
NEIGHBOURS = [
    "Le dossier de sinistre dégât des eaux dans la cuisine de sa mère est en cours d'expertise.",
    "Vacances prévues en Bretagne au mois d'août.",
]
CARRIER = "Franchise de 150 euros retenue sur SIN-2031-5531, virement envoyé au garage."


def test_the_record_carrying_the_reference_comes_first(container: Container) -> None:
    items = [NewMemory(text=t, occurred_at=AT) for t in [*NEIGHBOURS, CARRIER]]
    remember(container.deps, tenant="t", subject_id="R1", items=items, actor="a")
    remember(
        container.deps,
        tenant="t",
        subject_id="R2",
        actor="a",
        items=[NewMemory(text="Dossier SIN-2031-5531 ouvert pour un autre assuré.", occurred_at=AT)],
    )
    found = search(container.deps, tenant="t", subject_id="R1", query=Query(text=QUESTION, k=1))
    assert [r.memory.text for r in found] == [CARRIER]


def test_without_the_reference_the_neighbour_wins(container: Container) -> None:
    """The same records and question less its reference: what the first test overturns."""
    items = [NewMemory(text=t, occurred_at=AT) for t in [*NEIGHBOURS, CARRIER]]
    remember(container.deps, tenant="t", subject_id="R3", items=items, actor="a")
    found = search(
        container.deps, tenant="t", subject_id="R3", query=Query(text=QUESTION.replace(", SIN-2031-5531", ""), k=1)
    )
    assert [r.memory.text for r in found] == [NEIGHBOURS[0]]


def test_references_and_personal_identifiers_are_both_looked_up() -> None:
    prepared = pii.Prepared("Dossier SIN-2031-5531 et IBAN <IBAN_1>", identifiers=("FR7630006000011234567890189",))
    named = exact_identifiers("Dossier SIN-2031-5531 et IBAN FR76 3000 6000 0112 3456 7890 189", prepared)
    assert named == ("FR7630006000011234567890189", "SIN-2031-5531")
    assert exact_identifiers("Adresse ?", pii.Prepared("Adresse ?")) == ()


def test_the_keyword_query_keeps_the_question_first() -> None:
    assert keyword_query("Adresse ?").startswith("Adresse ? ")
    assert keyword_query("Hello there") == "Hello there"


def test_the_subject_s_own_number_does_not_bring_its_greeting_up(container: Container) -> None:
    """The member number said at the start of a call is in the answer and in the greeting; linking
    by it put the greeting right behind any answer that repeated it."""
    answer = "Martin, CLI-880021 ; le membre a pris un gravillon sur l'autoroute, le pare-brise est fendu."
    greeting = "Pierre Martin, client depuis 2012 ; son numéro client, c'est CLI-880021."
    other = "Le pare-brise sera remplacé jeudi chez un réparateur agréé, sans franchise."
    remember(container.deps, tenant="t", subject_id="CLI-880021", actor="a",
             items=[NewMemory(text=t, occurred_at=AT) for t in (answer, greeting, other)])
    found = search(container.deps, tenant="t", subject_id="CLI-880021",
                   query=Query(text="Le pare-brise fendu par un gravillon, c'est réparé ?", k=2))
    assert [r.memory.text for r in found] == [answer, other]
