"""What a closed record of several parts still says. Pure.

A call's turn is stored as one note of several parts joined by " ; " ("sa prime est de 968 euros par
an ; le conseiller ajoute Maxime en conducteur secondaire"). When a newer note makes one part untrue
("la prime annuelle passe à 1 124 euros"), reconcile closes the whole note: the premium must stop
coming back, but the second driver was lost with it. ``remainder`` gives the parts the newer note
leaves true, so the service can keep them as a record of their own.

A part is made untrue when the attribute rules (``topics.supersedes``, part against the newer note)
or the slot table (a conflicting value) say so, or, when the newer note moves on the file the note is
about (a status, a payment), when it states a status of that file other than its opening: "le
conseiller ouvre le dossier DEC-… ; il faudra l'acte de décès" keeps its opening. There is a remainder
only when the parts can be told apart: at least one part is made untrue and at least one is not. When
no single part is (the note was closed on its whole reading: the contradiction band), the whole note
stays closed, as before. A part that only completes the one before it (a bare value, or a part
pointing back at it: "il le fait au guichet") takes that one along when it is closed. A part about an
attribute the newer note gives is not kept either (the old request the new note answers). A remainder
of fewer than ``MIN_TERMS`` content words ("c'est noté") is not worth a record.
"""

from __future__ import annotations

import re

from carnet.domain.reconcile.slots import Reading, Relation, compare, read
from carnet.domain.reconcile.topics import PARTS, TopicReading, read_topics, same_case, supersedes
from carnet.domain.text import content_terms, fold

MIN_TERMS = 3
BARE_TERMS = 2  # words besides numbers in a part that only gives a value


def parts(text: str) -> list[str]:
    """The parts of a note (" ; "), without empty ones."""
    return [p.strip() for p in PARTS.split(text) if p.strip()]


def remainder(new_text: str, old_text: str, new_topics: TopicReading | None = None) -> str | None:
    """The parts of ``old_text`` that ``new_text`` leaves true, joined as they were; None when the note
    is closed whole. ``new_topics``: the newer note's topic reading as reconcile judged it (with the
    file its neighbours name: ``topics.bridged``), read from ``new_text`` when not given."""
    pieces = parts(old_text)
    if len(pieces) < 2:
        return None
    topics = new_topics or read_topics(new_text)
    slots = read(new_text)
    filed = (topics.case_state or topics.case_paid) and same_case(topics, read_topics(old_text))
    closed = [_closed(p, topics, slots, filed=filed) for p in pieces]
    if not any(closed) or all(closed):
        return None
    for i in range(len(pieces) - 1, 0, -1):
        if closed[i] and (_bare(pieces[i]) or _ANAPHORA.match(fold(pieces[i]))):
            closed[i - 1] = True  # "le membre laisse son numéro ; 06 39 98 41 27": the value's frame
    kept = [p for p, c in zip(pieces, closed, strict=True) if not c and not _about_same(p, topics)]
    if not kept:
        return None
    text = " ; ".join(kept)
    return text if len(set(content_terms(text))) >= MIN_TERMS else None


# A part that starts by pointing back at the one before ("il le fait au guichet", "ça passe à"):
# the two are one statement.
_ANAPHORA = re.compile(r"(?:il|elle|ils|elles|on|le membre|l'appelant)\s+(?:le|la|les|l'|en|y)\b|(?:ca|cela)\b")


def _bare(part: str) -> bool:
    """A part that is a value and little else, naming no attribute ("06 39 98 41 27", "300 euros, le
    10"): it completes the part before it."""
    words = [t for t in content_terms(part) if not any(ch.isdigit() for ch in t)]
    return not read_topics(part).topics and len(words) <= BARE_TERMS


def _about_same(part: str, topics: TopicReading) -> bool:
    """A part about an attribute the newer note gives ("voudrait changer d'assurance emprunteur" when
    the new note says the delegation is accepted): the newer note says what is true of it now."""
    return bool(read_topics(part).topics & topics.topics)


def _closed(part: str, topics: TopicReading, slots: Reading, *, filed: bool) -> bool:
    """``filed``: the newer note moves on the file the whole old note is about (``topics.moves_case``);
    then a part stating a status that is not the file's opening is closed."""
    reading = read_topics(part)
    if filed and reading.case_state and not reading.case_opening:
        return True
    found = supersedes(topics, reading)
    if found is not None and found != "case":
        return True
    return compare(read(part), slots).relation is Relation.CONFLICT
