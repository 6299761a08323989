"""Sentences of a message, and the fillers that open spoken ones ("Oui alors euh, j'ai…").

Call transcripts are spoken language: several sentences per turn, abbreviations ("M.", "Mme"),
amounts ("1.200 €"), claim numbers with dots or dashes, placeholders (``<PERSON_1>``), and no
punctuation at all when a speech-to-text engine wrote them. Splitting happens on end punctuation
followed by a space and an uppercase letter, a digit, a placeholder or a quote, and on line breaks;
never after a known abbreviation.
"""

from __future__ import annotations

import re

# Words ending with a dot that do not end a sentence (folded, without the dot).
_ABBREVIATIONS = frozenset(
    "m mm mme mmes mlle mlles dr pr me st ste av bd bld fg pl no n° tel tél p ex cf etc env mr mrs ms "
    "jr sr vs approx réf ref art al".split()
)
_BREAK = re.compile(r"(?<=[.!?…])[\"»”)\]]*\s+(?=[\"«“(]?[A-ZÀ-ÖØ-Þ0-9<])|\n+|(?<=[!?…])\s+(?=\S)")
_LAST_WORD = re.compile(r"([\wéèêàçùûôîœ°]+)\.$")

# Discourse markers that open a spoken sentence without adding to it; they may run straight into
# the next word ("alors j'ai…"). "Finalement", "maintenant", "désormais" are not here: they mark a
# change, which reconcile reads. "Si" is not either ("si vous déménagez…").
_LOOSE = (
    r"oui|ouais|non|bon|ben|bah|beh|eh bien|et bien|euh+|heu+|hum+|hm+|ah|oh|eh|alors|donc|et|mais|"
    r"voil[aà]|bref|enfin|du coup|en fait|au fait|sinon|écoutez|ecoutez|par contre|en revanche|d'ailleurs|"
    r"yes|yeah|yep|no|nope|well|so|and|but|oh|um+|uh+|er|actually|by the way|also|anyway"
)
# Politeness and acknowledgements: only when punctuation (or a title) follows, since "merci de me
# rappeler" and "parfait pour moi" say something.
_STRICT = (
    r"d'accord|ok|okay|très bien|tres bien|parfait|entendu|effectivement|exactement|absolument|tout à fait|"
    r"tout a fait|c'est ça|c'est ca|c'est exact|bien sûr|bien sur|merci(?: beaucoup| bien)?|bonjour|bonsoir|"
    r"pardon|excusez-moi|désolée?|desolee?|madame|monsieur|mademoiselle|autre chose|"
    r"right|sure|alright|all right|hi|hello|thanks|thank you|great|perfect|fine|sorry"
)
_FILLER = re.compile(
    rf"^(?:(?:{_LOOSE})(?=[\s,;:.!?…]|$)|(?:{_STRICT})(?=\s*(?:[,;:.!?…]|$|madame|monsieur)))"
    r"[\s,;:.!?…-]*",
    re.IGNORECASE,
)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``, stripped, in order; a break after an abbreviation is undone."""
    parts = [p.strip() for p in _BREAK.split(text) if p and p.strip()]
    out: list[str] = []
    for part in parts:
        if out and _ends_with_abbreviation(out[-1]):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def _ends_with_abbreviation(sentence: str) -> bool:
    m = _LAST_WORD.search(sentence)
    return m is not None and (m.group(1).lower() in _ABBREVIATIONS or len(m.group(1)) == 1)


def strip_fillers(sentence: str) -> str:
    """The sentence without its opening fillers ("Oui alors, euh, j'ai…" → "j'ai…")."""
    text = sentence.strip()
    for _ in range(8):  # "Oui, alors, euh, bon, …": a few rounds, never a loop
        m = _FILLER.match(text)
        if m is None or m.end() == 0:
            break
        text = text[m.end():]
    return text.strip()


def is_question(sentence: str) -> bool:
    """Ends with a question mark, or opens like a question (transcripts often drop the mark)."""
    s = sentence.strip()
    return s.endswith("?") or _QUESTION_OPENING.match(s) is not None


_QUESTION_OPENING = re.compile(
    r"^(?:est-ce\ qu|qu'est-ce|pouvez-vous|pourriez-vous|auriez-vous|avez-vous|êtes-vous|etes-vous|savez-vous|"
    r"voulez-vous|souhaitez-vous|puis-je|dois-je|comment|pourquoi|combien|quel(?:le)?s?\b|quand\b|où\b|"
    r"can\ you|could\ you|would\ you|do\ you|did\ you|are\ you|is\ there|what|when|where|why|how|which)",
    re.IGNORECASE | re.VERBOSE,
)
