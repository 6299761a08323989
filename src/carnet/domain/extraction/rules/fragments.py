"""Elliptic continuations: a verbless sentence that completes the one before it.

Spoken answers come in pieces: "J'ai signé un CDI. Cariste, dans une entreprise de transport. 1 780
euros net." Read alone, "1 780 euros net." is a number without a subject, a record that no question
can use; read with the statement it continues, it is the salary of the new job. A sentence of the
same speaker and the same message that has no subject and no verb of its own, and is short, is
joined to the previous fact ("…un CDI ; cariste, … ; 1 780 euros net."). Anything with a subject
pronoun, a "c'est" or a common finite verb stands on its own, except the sentence that only gives
the number of what was just said ("J'enregistre une réclamation. Le numéro est REC-2025-1148."):
read alone it is a code without its case.
"""

from __future__ import annotations

import re

from carnet.domain.extraction.rules.verbs import AUXILIARIES
from carnet.domain.text import fold_accents

_MAX_WORDS = 10
_WORD = re.compile(r"[\w']+")
_STANDS_ALONE = (
    frozenset(
        """
    je j' tu il elle on nous vous ils elles c' ce ça ca cela ceci qui i we you he she they it
    faut reste restent fait font dit mets met prends prend paie paye paient payé coûte coute coûtent
    demande veux voudrais souhaite préfère prefere habite habitons vis vit travaille
    """.split()
    )
    | AUXILIARIES
)
_PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>")
_NUMBER_OF_IT = re.compile(
    r"(?:le|son|votre|its|the)\s+(?:numero|reference|number|reference number)(?:\s+(?:de|du|of)\s+\w+)?"
    r"\s+(?:est|c'est|is|:)\s*:?\s*(?:le\s+)?[A-Z]{2,5}[-/]?\d[\w-]*",
    re.IGNORECASE,
)


def is_fragment(sentence: str) -> bool:
    """No subject, no verb of its own, at most a few words."""
    words = [w.lower() for w in _WORD.findall(_PLACEHOLDER.sub(" X ", sentence))]
    if not words or len(words) > _MAX_WORDS:
        return False
    elided = {w.split("'")[0] + "'" for w in words if "'" in w}
    return not (set(words) | elided) & _STANDS_ALONE and not any(w.endswith(("ons", "ez")) for w in words[:1])


def names_reference(sentence: str) -> bool:
    """"Le numéro est REC-2025-1148.": the reference of the fact before it."""
    return _NUMBER_OF_IT.fullmatch(fold_accents(sentence).strip(" .!…")) is not None


def joined(previous: str, fragment: str) -> str:
    """``previous`` continued by ``fragment``: "Le membre a signé un CDI ; cariste, à Yutz."."""
    tail = fragment.strip().rstrip(".!…")
    if tail[:1].isupper() and not tail[1:2].isupper():  # "À Annecy" → "à Annecy"; "SIN-…", "<PHONE_1>" stay
        tail = tail[0].lower() + tail[1:]
    return f"{previous.rstrip().rstrip('.!…')} ; {tail}."
