"""What a person's name looks like in running text, whatever its origin. Pure.

A name is a run of capitalised words, with the particles of French, Dutch, Iberian, Italian and
Arabic names between them ("Tiago Ferreira da Costa", "Nour El Houda Bouazizi", "Siobhán Ní
Bhriain"). Three rules on that shape, from the grammar of names, not from any corpus:

- ``runs``: an entity a NER model found, cut to its runs of capitalised words (a small model's span
  often takes in the words around a name it does not know: "Please call back Nour El Houda Bouazizi
  tomorrow"), without a leading title or word that never makes a name.
- ``grow``: a name found in part is grown to the capitalised words beside it, so no surname or given
  name is left in clear beside a placeholder ("Anahit <PERSON_1>").
- ``after_cue``: a name typed in lower case after the words that introduce a caller ("appel de",
  "de la part de", "call from", "spoke with"), when its words are no word of the language
  (``is_word``: a lexicon the caller gives) nor function words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from carnet.domain.pii.spans import PERSON, Span

# Particles of family names (general knowledge of French, Dutch, German, Iberian, Italian, Irish,
# Arabic naming); inside a run they may be in lower case.
PARTICLES = frozenset("""de du des d' d’ le la les van von der den da das do dos di del della ben bin ibn
el al ter ten y ní ní mac mc""".split())
TITLES = frozenset("m. m mme mlle mr mr. mrs mrs. ms ms. monsieur madame mademoiselle maître me dr dr. docteur pr "
                   "miss sir".split())
# Words that introduce the person a note is about, in French and English (grammar of call notes).
_CUE = re.compile(r"(?i)\b(?:(?:r?appels?|messages?|mails?|courriels?|courriers?|sms|visite|part|nom|attention)"
                  r"\s+(?:de|d['’])|(?:calls?|messages?|e-?mails?|texts?|letters?|visit)\s+from|"
                  r"(?:spoke|spoken|talked|talking|speaking|met)\s+(?:with|to)|on\s+behalf\s+of|"
                  r"(?:m\.|mme|mlle|mr\.?|mrs\.?|ms\.?|monsieur|madame|mademoiselle))\s+")
# French and English function words, which end a name typed in lower case. The French closed classes
# (determiners, pronouns, prepositions, conjunctions: grammar) are listed whole, because the lexicon
# (the lemmatizer's tables of open-class words) lacks some of them ("chaque", "plusieurs", "lui-même").
FUNCTION_WORDS = frozenset("""a à au aux avec ce ces cette chez dans de des du elle en est et il ils je la le les
leur lui mais me mon ne ni nous on ou où par pas pour qu que qui sa se ses si son sur ta te tes ton tu un une vous
y ce cet hier demain ce matin soir aujourd the a an and is are was were to of in on for that this with you i my it
we they he she her his him have has had be been do did not but or so what how about at by from as today tomorrow
yesterday who which
chaque plusieurs quelques quelque aucun aucune nul nulle certain certaine certains certaines tout toute tous
toutes autre autres même mêmes tel telle tels telles maint mainte quel quelle quels quelles lequel laquelle
lesquels lesquelles auquel auxquels auxquelles duquel desquels desquelles dont quoi celui celle ceux celles
ceci cela ça moi toi soi eux mien tien sien nôtre vôtre leurs nos vos notre votre mes ma
moi-même toi-même lui-même elle-même soi-même nous-mêmes vous-mêmes eux-mêmes elles-mêmes
sans sous vers entre depuis pendant selon malgré avant après contre parmi dès durant envers hors outre
sauf via jusque jusqu lorsque puisque quoique quand comme car or donc puis ensuite aussi ainsi""".split())
# Elided forms: "n'était", "l'étude", "jusqu'au", "lorsqu'il" are the word after the apostrophe (grammar).
ELISION = re.compile(r"^(?:[cdjlmnst]|qu|jusqu|lorsqu|puisqu|quoiqu|presqu)['’]", re.IGNORECASE)
_WORD = re.compile(r"[^\s,;:!?()\[\]{}«»\"]+")
_END = frozenset(",;:!?)]}»\"")
_OPEN = frozenset("([{«")
_MAX_WORDS = 6

Stop = Callable[[str], bool]  # a word (folded) that never makes a name


def runs(text: str, start: int, end: int, stop: Stop) -> list[tuple[int, int, int]]:
    """The runs of capitalised words in ``text[start:end]``: (start, end, number of capitalised words),
    leading titles and stop words removed."""
    out: list[tuple[int, int, int]] = []
    current: list[tuple[int, int, bool]] = []  # (start, end, capitalised)
    for m in _WORD.finditer(text, start, end):
        word = m.group().rstrip(".")
        a, b = m.start(), m.start() + len(word)
        if current and any(c in _OPEN for c in text[current[-1][1] : a]):  # "Dénia (Espagne)": two runs
            out.extend(_close(text, current, stop))
            current = []
        if _capitalised(word):
            current.append((a, b, True))
        elif current and word.lower() in PARTICLES:
            current.append((a, b, False))
        else:
            out.extend(_close(text, current, stop))
            current = []
        if b < len(text) and (text[b] in _END or (text[b] == "." and b + 1 < end and text[b + 1] == " ")):
            out.extend(_close(text, current, stop))
            current = []
    out.extend(_close(text, current, stop))
    return out


def _close(text: str, words: list[tuple[int, int, bool]], stop: Stop) -> list[tuple[int, int, int]]:
    while words and (not words[0][2] or _word(text, words[0]).lower() in TITLES or stop(_word(text, words[0]))):
        words = words[1:]
    while words and (not words[-1][2] or stop(_word(text, words[-1]))):
        words = words[:-1]
    if not words:
        return []
    return [(words[0][0], words[-1][1], sum(1 for w in words if w[2]))]


def _word(text: str, w: tuple[int, int, bool]) -> str:
    return text[w[0] : w[1]]


def _capitalised(word: str) -> bool:
    """"Nguyen", "Diallo-Keita", "d'Alembert", "N'Diaye", "McLeod"; not "IBAN" (acronyms), not "J."
    (initials), not "C'est" or "Qu'il" (an elided word opening a sentence)."""
    word = ELISION.sub("", word)
    return len(word) > 1 and word[0].isupper() and any(c.islower() for c in word[1:])


def grow(text: str, spans: Iterable[Span], stop: Stop) -> list[Span]:
    """Each PERSON span widened to the capitalised words (and particles between them) right beside it."""
    return [_grown(text, s, stop) if s.kind == PERSON else s for s in spans]


def _grown(text: str, span: Span, stop: Stop) -> Span:
    start, end = span.start, span.end
    for _ in range(_MAX_WORDS):
        m = _RIGHT.match(text, end)
        if m is None or not _joins(m.group(2).rstrip("."), stop):
            break
        end = m.start(2) + len(m.group(2).rstrip("."))
        if m.group(2).endswith("."):
            break
    for _ in range(_MAX_WORDS):
        m = _LEFT.search(text[max(0, start - 80) : start])
        if m is None or m.group(1).endswith(".") or not _joins(m.group(1), stop):
            break
        start -= len(m.group())
    return Span(start, end, span.kind, span.score)


_PARTICLE = "|".join(re.escape(p) for p in sorted(PARTICLES, key=len, reverse=True))
_RIGHT = re.compile(rf" ((?:(?i:{_PARTICLE}) ){{0,2}})([^\s,;:!?()\[\]{{}}«»\"]+)")
_LEFT = re.compile(rf"([^\s,;:!?()\[\]{{}}«»\"]+)((?: (?i:{_PARTICLE})){{0,2}}) $")


def _joins(word: str, stop: Stop) -> bool:
    """A word beside a name is part of it: capitalised, no stop word nor title."""
    return _capitalised(word) and word.lower() not in TITLES and not stop(word)


def after_cue(text: str, is_word: Callable[[str], bool], score: float = 0.75) -> list[Span]:
    """Names in lower case after the words that introduce a person: the words up to the first that is a
    function word, a word of the language, or not lower case."""
    spans = []
    for cue in _CUE.finditer(text):
        words: list[tuple[int, int]] = []
        for m in _WORD.finditer(text, cue.end()):
            if m.start() != (words[-1][1] + 1 if words else cue.end()) or len(words) == _MAX_WORDS:
                break
            word = m.group().rstrip(".")
            folded = word.lower()
            if not word.isalpha() and not re.fullmatch(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*", word):
                break
            particle = folded in PARTICLES and bool(words)
            if word != folded or (not particle and is_language_word(folded, is_word)):
                break
            words.append((m.start(), m.start() + len(word)))
            if len(word) < len(m.group()):
                break
        while words and text[words[-1][0] : words[-1][1]].lower() in PARTICLES:
            words.pop()
        if words:
            spans.append(Span(words[0][0], words[-1][1], PERSON, score))
    return spans


def is_language_word(word: str, is_word: Callable[[str], bool]) -> bool:
    """``word`` (lower case) is a function word or a word of the language, elided ("n'était") or
    hyphenated ("peut-être", "lui-même") forms included."""
    if word in FUNCTION_WORDS or is_word(word):
        return True
    bare = ELISION.sub("", word)
    if bare != word and (bare in FUNCTION_WORDS or is_word(bare)):
        return True
    parts = [p for p in re.split(r"[-'’]", bare) if p]
    return len(parts) > 1 and all(p in FUNCTION_WORDS or is_word(p) for p in parts)
