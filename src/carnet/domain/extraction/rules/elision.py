"""Apostrophes put back where a transcript left them out ("j ai", "c est", "qu il", "l adresse").

Speech-to-text engines and hurried typists drop the apostrophe of French elision, and the rules
downstream (pronouns, verbs, possessives, fillers) read "j'ai". A lone ``j``, ``m``, ``t``, ``l``,
``s``, ``d``, ``n``, ``c`` or ``qu``, followed by a space and a lowercase word that starts with a
vowel or a mute h, can only be an elided word in French: it is joined back with an apostrophe.
Typographic apostrophes (’) become plain ones, the form the rules match. A spelled-out code
("S I N 2025") is left alone: only "J", "C", "L" may be capitals, and the next word must be a
lowercase word ("ou" and "et" never follow an elision).
"""

from __future__ import annotations

import re

_VOWEL = "aeiouyhàâäéèêëîïôöûüœ"
_ELIDED = re.compile(
    rf"(?<![\w'-])(?P<c>qu|Qu|[jmtlsdncJCL])\s+(?!(?:ou|et)\b)(?=[{_VOWEL}][a-zàâäéèêëîïôöûüœç]|[ay]\b)"
)


def restore_apostrophes(text: str) -> str:
    """``text`` with "j ai" → "j'ai", "qu il" → "qu'il", "’" → "'"; anything else unchanged."""
    return _ELIDED.sub(lambda m: m.group("c") + "'", text.replace("’", "'"))
