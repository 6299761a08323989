"""Topics: a newer note about the same attribute of the member makes the older one untrue. Pure.

The slot table (``carnet.domain.reconcile.slots``) reads exact values where it has a pattern for the wording;
this rule needs only to know what two notes are *about* (``topic_rules.TOPICS``) and whether the
newer one gives another value or says something changed, so it carries to wordings nobody wrote a
pattern for. The newer note ``N`` supersedes the older ``O`` when:

- **a case moves on**: both name the same file reference, ``N`` states its status ("clos") or a
  payment made on it ("versée le 10 juillet"), and ``O`` (or one of its parts) states an earlier
  status ("en attente d'expertise", "il faudra l'acte de décès") that is not the file's opening
  ("déclaré le 11 juillet", "conteste … réclamation enregistrée le"): opening a claim is an event and
  stays true, and so is a payment. A note that
  names its file by kind only ("le dossier grêle est clos") takes the reference of the one file of
  that kind its neighbours name (``bridged``); two notes naming no reference are about the same
  file when they name the same kind;
- **an attribute changes**: both are about one attribute that holds one value at a time (same
  qualifier: the mobile, not the landline; the auto premium, not the home one; the same person:
  a son's phone is not the member's), and ``N`` either says it changed ("désormais", "passe à",
  "n'… plus", "retire son accord", "le bon numéro est") or gives other values than ``O`` while
  ``O`` gives values ``N`` does not (both sides differ: a note that only refines keeps the old);
- **a plan is carried out**: ``O`` states a plan ("projet de", "envisage") and ``N`` that it was
  done ("posés le …"), and the two share at least two longer words;
- **one of several ends**: for attributes with several values (cars), ``N`` says one changed or
  ended and names a value of ``O`` ("la Clio a été vendue");
- **a holding ends**: ``N`` ends a holding it names with "l'", "le", "son"… ("j'annule l'option",
  "le contrat auto est résilié") and ``O`` names that holding (an option, a contract, a savings
  account), of the same product line when ``N`` says which.

Never when ``N`` only adds ("en plus du fixe", "un second véhicule"), plans or supposes ("envisage",
"devis pour la formule Confort"), nor between a temporary arrangement and a permanent one ("pendant
les travaux"); and never ``O`` when it tells an event ("le 3 mars, elle a transmis une offre").

A note of several parts ("…un CDI ; cariste, à Yutz ; 1 780 euros net", one turn of a call) is
compared part by part for the attribute rules: the values and markers of one part do not make
another part's attribute change. A file's status is read on the whole note.

Values are what a note distinguishes one state from another by: numbers (amounts, dates, street
numbers), codes, and capitalised names that do not start a sentence. A date says when, not what:
other dates alone are no other value, except for an attribute whose value is a date (the end of a
sick leave: ``Topic.dated``); for an attribute whose value is a name (a plan), only names count, and
a note that names none ("sa formule prend en charge…") is not about which one (``Topic.named``).
Values are compared as sets and never leave this module (a decision's reason names the topic, never
a value).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from carnet.domain.linking import references
from carnet.domain.reconcile.topic_rules import (
    ADDITIVE,
    CASE_KINDS,
    CASE_NOUNS,
    CASE_OPENING,
    CASE_PAID,
    CASE_STATUS,
    CHANGE,
    DONE,
    ELSEWHERE,
    EVENT,
    HELD,
    HELD_ANYWHERE,
    HYPOTHETICAL,
    NOT_A_HOLDER,
    PLAN,
    PRODUCT_LINES,
    TEMPORARY,
    THIRD_PARTIES,
    TOPICS,
    WITHDRAWAL,
    Topic,
)
from carnet.domain.text import fold

_BY_NAME = {t.name: t for t in TOPICS}
_NUMBER = re.compile(r"\d+(?:[ .,]\d+)*")
_NAME = re.compile(r"\b[A-ZÀ-ÖØ-Þ][\w'’-]+")
# What comes just before a capitalised word that is not a name: a sentence's start or a title.
_NOT_A_NAME_BEFORE = re.compile(r"(?:[.!?:;(]\s*|\b(?:M|Mme|Mlle|Dr|Me|Mr|Mrs|Ms)\.?\s+)$")
_CLAUSE = re.compile(r"[^,;:.!?()]+")
_TITLES = frozenset({"m", "mme", "mlle", "dr", "me", "mr", "mrs", "ms"})
_WORD = re.compile(r"[a-z]{5,}")
_YEAR = re.compile(r"(?:19|20)\d\d")
WILDCARD = "*"
_PLAN_SHARED = 2  # words a plan and the note of its outcome share
PARTS = re.compile(r"\s;\s")  # between the parts of one note (a call's turn)
_MONTHS = "janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre|january|february|" \
          "march|april|may|june|july|august|september|october|november|december"
_DATE = re.compile(rf"\b\d{{1,2}}(?:er|st|nd|rd|th)?\s+(?:{_MONTHS})(?:\s+\d{{4}})?\b|\b(?:{_MONTHS})\s+\d{{4}}\b"
                   r"|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b(?:19|20)\d\d\b")


@dataclass(frozen=True, slots=True)
class TopicReading:
    """A note read for this rule once: reused for every comparison of a reconcile call."""

    topics: frozenset[tuple[str, str]]  # (topic, qualifier or "*")
    values: frozenset[str]  # numbers, codes and names
    dates: frozenset[str]  # the numbers of ``values`` that belong to a date (day, year): when, not what
    names: frozenset[str]  # the names alone
    named: frozenset[str]  # the names a note gives right after a topic's ``name_after`` ("contrat Sérénité Duo")
    parties: frozenset[str]  # people other than the member whose values it may give
    refs: frozenset[str]  # file references
    case_refs: frozenset[str]  # the references of a note about a file (a claim, a complaint)
    case_kinds: frozenset[str]  # what the files it is about are about (``topic_rules.CASE_KINDS``)
    change: bool
    additive: bool
    temporary: bool
    event: bool
    withdrawal: bool
    ended: frozenset[str]  # names and numbers (not days nor years) in the clauses that say something ended
    ended_held: frozenset[str]  # holdings named with "l'", "son"… in those clauses ("j'annule l'option")
    held: frozenset[str]  # the holdings a note names (option, contrat, livret…)
    lines: frozenset[str]  # the product lines it names (auto, home…)
    case_state: bool
    case_opening: bool
    case_paid: bool
    plan: bool
    hypothetical: bool
    done: bool
    words: frozenset[str]  # the longer words, without a final s: what a plan and its outcome share
    parts: tuple[TopicReading, ...] = ()  # a note of several parts (" ; "): each read on its own


def read_topics(text: str) -> TopicReading:
    """``text`` read once; a note of several parts joined by " ; " (one turn of a call, a dictated
    note) also part by part, so that a part's topic is judged by that part's values and markers."""
    whole = _read(text)
    parts = [p for p in PARTS.split(text) if p.strip()]
    return replace(whole, parts=tuple(_read(p) for p in parts)) if len(parts) > 1 else whole


CASE_WORDS = "dossier file"


def keyword_text(pseudo_text: str) -> str:
    """What the keyword retriever indexes for a note: its text, then the names advisors give to what it
    is about, in French and English ("À compter du 1er juillet, <ADDRESS_1>." also reads "adresse
    domicile address home"), so a two-word question ("Adresse ?") finds a note that never names its
    attribute. Read on the pseudonymised text: the added words are the table's, never a value."""
    folded = fold(pseudo_text)  # the whole note: what its parts are about, it is about
    words = [" ".join(t.words) for t in sorted(TOPICS, key=lambda t: t.name)
             if _about(t, pseudo_text, folded) and _has_needs(t, pseudo_text, folded)]
    if CASE_NOUNS.search(folded) and references(pseudo_text):
        words.append(CASE_WORDS)
    return f"{pseudo_text} {' '.join(words)}" if words else pseudo_text


def _has_needs(topic: Topic, text: str, folded: str) -> bool:
    """What else a note about ``topic`` must hold: the pattern ``needs``, a name for a named one."""
    if topic.needs is not None and topic.needs.search(folded) is None:
        return False
    return not topic.named or bool(_values(text)[1])


def _read(text: str) -> TopicReading:
    folded = fold(text)
    numbers, names = _values(text)
    named = _named(text)
    topics: set[tuple[str, str]] = set()
    for topic in TOPICS:
        if not _about(topic, text, folded) or (topic.named and not names):
            continue
        if topic.needs is not None and topic.needs.search(folded) is None:
            continue
        topics.update((topic.name, q) for q in _qualifiers(topic, folded))
    refs = references(text)
    return TopicReading(
        topics=frozenset(topics),
        values=numbers | names,
        dates=_date_numbers(folded) & numbers,
        names=names,
        named=named,
        parties=frozenset(m.group(0) for m in THIRD_PARTIES.finditer(folded)
                          if NOT_A_HOLDER.search(folded, 0, m.start()) is None),
        refs=refs,
        case_refs=refs if CASE_NOUNS.search(folded) else frozenset(),
        case_kinds=case_kinds(folded),
        change=CHANGE.search(folded) is not None,
        additive=ADDITIVE.search(folded) is not None,
        temporary=TEMPORARY.search(folded) is not None,
        event=EVENT.search(folded) is not None,
        withdrawal=WITHDRAWAL.search(folded) is not None,
        ended=_ended(text),
        ended_held=_ended_held(text),
        held=frozenset(m.group(1) for m in HELD_ANYWHERE.finditer(folded)),
        lines=frozenset(name for name, pattern in PRODUCT_LINES if pattern.search(folded)),
        case_state=CASE_STATUS.search(folded) is not None,
        case_opening=CASE_OPENING.search(folded) is not None,
        case_paid=CASE_PAID.search(folded) is not None,
        plan=PLAN.search(folded) is not None,
        hypothetical=HYPOTHETICAL.search(folded) is not None,
        done=DONE.search(folded) is not None,
        words=frozenset(w.rstrip("s") for w in _WORD.findall(folded)),
    )


def _about(topic: Topic, text: str, folded: str) -> bool:
    if topic.cue.search(folded) is not None:
        return True
    if topic.name_after is not None and topic.name_after.search(text) is not None:
        return True
    return topic.shape is not None and topic.shape.search(text) is not None and ELSEWHERE.search(folded) is None


def _qualifiers(topic: Topic, folded: str) -> list[str]:
    found = [name for name, pattern in topic.qualifiers if pattern.search(folded)]
    return found or [WILDCARD]


def _values(text: str) -> tuple[frozenset[str], frozenset[str]]:
    numbers = frozenset(re.sub(r"[ .,]", "", m.group(0)) for m in _NUMBER.finditer(text))
    names = frozenset(fold(m.group(0)) for m in _NAME.finditer(text) if _is_name(text, m.start()))
    return numbers, names - _TITLES


def _named(text: str) -> frozenset[str]:
    """The names given right after a topic's ``name_after`` words, folded one word at a time."""
    return frozenset(fold(w) for topic in TOPICS if topic.name_after is not None
                     for m in topic.name_after.finditer(text) for w in m.group(1).split())


def _compared(topic: Topic, new: TopicReading, old: TopicReading) -> tuple[frozenset[str], frozenset[str]]:
    """The values of ``new`` and ``old`` that tell this attribute's states apart: for a named one, the
    names given as its value where a note gives them so ("contrat Sérénité Duo"), else all its names."""
    if topic.named:
        return new.named or new.names, old.named or old.names
    if topic.dated:
        return new.values, old.values
    return new.values - new.dates, old.values - old.dates


def _date_numbers(folded: str) -> frozenset[str]:
    """The numbers of the dates in a note ("le 1er mars 2025", "31/10/2025", "en 2019")."""
    return frozenset(n for m in _DATE.finditer(folded) for n in re.findall(r"\d+", m.group(0)))


def _is_name(text: str, start: int) -> bool:
    """Only the few characters before the word are read: a long note costs no more per word."""
    return start > 0 and _NOT_A_NAME_BEFORE.search(text[max(0, start - 8) : start]) is None


def _ended(text: str) -> frozenset[str]:
    out: set[str] = set()
    for clause in _CLAUSE.finditer(text):
        if WITHDRAWAL.search(fold(clause.group(0))):
            numbers, names = _values(clause.group(0))
            out.update(names)
            out.update(n for n in numbers if len(n) >= 3 and not _YEAR.fullmatch(n))
    return frozenset(out)


def _ended_held(text: str) -> frozenset[str]:
    """The holdings ended by name in the clauses that say something ended, with the product lines of
    those clauses: "le contrat auto est résilié" gives {"contrat", "line:auto"}."""
    out: set[str] = set()
    for clause in _CLAUSE.finditer(text):
        folded = fold(clause.group(0))
        if WITHDRAWAL.search(folded):
            found = {m.group(1) for m in HELD.finditer(folded)}
            if found:
                out.update(found)
                out.update(f"line:{name}" for name, pattern in PRODUCT_LINES if pattern.search(folded))
    return frozenset(out)


def may_close(new: TopicReading, old: TopicReading, *, per_person: bool) -> bool:
    """Guards every rule that closes a record (slots, topics, the contradiction band): for a value of
    one person (``per_person``) the two notes speak of the same people (not the guardian's phone
    against the member's), both or neither are temporary arrangements, a note about a file is only
    closed by a note about the same file (a claim's deductible is not the contract's), and an ending
    names what ended ("la Clio a été vendue" closes the Clio, not the home contract)."""
    if (per_person and new.parties != old.parties) or new.temporary != old.temporary:
        return False
    if (new.case_refs or old.case_refs) and not new.refs & old.refs:
        return False
    return not (new.ended and not new.ended & old.values)


def case_kinds(folded: str) -> frozenset[str]:
    """The kinds of file a note names (``CASE_KINDS``), for a note about a file (``CASE_NOUNS``)."""
    if CASE_NOUNS.search(folded) is None:
        return frozenset()
    return frozenset(name for name, pattern in CASE_KINDS if pattern.search(folded))


def file_kinds(text: str) -> frozenset[str]:
    """The kinds of file a note names when it names no reference ("le dossier grêle est clos"): what
    ``bridged`` needs the neighbours naming a file of that kind for."""
    return frozenset() if references(text) else case_kinds(fold(text))


def names_file_of(text: str, kinds: frozenset[str]) -> bool:
    """``text`` names a file by reference, and the file is of one of ``kinds``."""
    return bool(references(text)) and bool(case_kinds(fold(text)) & kinds)


def bridged(new: TopicReading, neighbours: Iterable[TopicReading]) -> TopicReading:
    """``new`` as a note about the file it names by kind only ("au sujet de votre dossier grêle … le
    dossier est clos"): with the reference of the neighbours naming a file of that kind, when they all
    name one same reference ("le sinistre SIN-2025-077310, grêle sur …"). Two files of that kind, or
    none: ``new`` as it is."""
    if not new.case_kinds or new.refs:
        return new
    named = [n.case_refs for n in neighbours if n.case_refs and n.case_kinds & new.case_kinds]
    if not named:
        return new
    common = frozenset.intersection(*named)
    if not common:
        return new
    return replace(new, refs=common, case_refs=common)


def same_case(new: TopicReading, old: TopicReading) -> bool:
    """The two notes are about one file: a shared reference, or (neither naming one) a shared kind."""
    if new.refs or old.refs:
        return bool(new.refs & old.refs)
    return bool(new.case_kinds & old.case_kinds)


def moves_case(new: TopicReading, old: TopicReading) -> bool:
    """``new`` states a file's status or a payment on it, and ``old`` (or one of its parts) states an
    earlier status of the same file without opening it: "il faudra l'acte de décès" in "le conseiller
    ouvre le dossier DEC-… ; il faudra l'acte de décès" (the opening part is kept: ``remainder``)."""
    if not (new.case_state or new.case_paid) or not same_case(new, old):
        return False
    return any(part.case_state and not part.case_opening for part in old.parts or (old,))


def supersedes(new: TopicReading, old: TopicReading) -> str | None:
    """The topic (or ``"case"``) by which ``new``, the newer note, makes ``old`` untrue; else None."""
    if moves_case(new, old):
        return "case"
    if not may_close(new, old, per_person=False):
        return None
    for new_part in new.parts or (new,):
        for old_part in old.parts or (old,):
            found = _by_attribute(new_part, old_part)
            if found is not None:
                return found
    return None


def _by_attribute(new: TopicReading, old: TopicReading) -> str | None:
    """The attribute rules between two notes, or two parts of notes (values and markers of each)."""
    if new.additive or new.plan or new.hypothetical or old.event or not may_close(new, old, per_person=False):
        return None
    for name, qualifier in sorted(new.topics):
        topic = _BY_NAME[name]
        if not _shares(old, name, qualifier, wildcard=topic.wildcard):
            continue
        if topic.per_person and new.parties != old.parties:
            continue
        ours, theirs = _compared(topic, new, old)
        if topic.named and not ours - theirs:
            continue  # names no other plan: "pour le contrat Sérénité Duo, la cotisation passe à …"
        if topic.exclusive and (new.change or (ours - theirs and theirs - ours)):
            return name
        if not topic.exclusive and new.change and new.values & old.values:
            return name
    if old.plan and not new.plan and new.done and len(new.words & old.words) >= _PLAN_SHARED:
        return "done"  # "projet de panneaux solaires" then "panneaux solaires posés le …"
    if new.ended & old.names or (old.topics and new.ended & (old.values - old.dates)):
        return "ended"  # "la Clio a été vendue", "vendu la 3008": whatever named it no longer holds
    if _ends_holding(new, old):
        return "ended"  # "j'annule l'option": the notes that the option was taken out no longer hold
    return None


def _ends_holding(new: TopicReading, old: TopicReading) -> bool:
    """``new`` ends a holding ``old`` names, with the same product lines: "le contrat auto est résilié"
    closes "le contrat auto de la Clio…", not "ses contrats, l'habitation et l'auto" nor "le contrat"."""
    things = {h for h in new.ended_held if not h.startswith("line:")}
    lines = {h.removeprefix("line:") for h in new.ended_held if h.startswith("line:")}
    return bool(things) and things <= old.held and lines == old.lines


def _shares(old: TopicReading, name: str, qualifier: str, *, wildcard: bool) -> bool:
    return any(n == name and (q == qualifier or (wildcard and WILDCARD in (q, qualifier))) for n, q in old.topics)
