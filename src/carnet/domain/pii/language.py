"""Is a text in the language of the NER model? A French model run on English text takes "Wow",
"Thanks" or "camping next month" for people, and pseudonymising those words destroys the meaning
of the text for retrieval. Function words tell French from English in a sentence or two; a text too
short to tell is taken to be in the expected language."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-zà-ÿ']+")
_FUNCTION = {
    "fr": frozenset("le la les un une des du de et est sont pour que qui dans avec sur au aux il elle nous vous "
                    "ils elles ne pas ce cette son sa ses leur mais ou donc".split()),
    "en": frozenset("the a an and is are was were to of in on for that this with you i my it we they he she "
                    "have has had be been do did not but or so what how".split()),
}


def is_language(text: str, language: str) -> bool:
    """``True`` unless another known language clearly has more function words in ``text``."""
    own = _FUNCTION.get(language)
    if own is None:
        return True
    words = _WORD.findall(text.lower())
    mine = sum(w in own for w in words)
    other = max((sum(w in fw for w in words) for lang, fw in _FUNCTION.items() if lang != language), default=0)
    return not (other >= 2 and other > 2 * mine)
