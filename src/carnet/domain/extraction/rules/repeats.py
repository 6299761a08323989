"""A call says things twice: keep the fuller saying.

The member repeats what the advisor read out ("REC-2025-1148." after "Le numéro est REC-2025-1148."),
the advisor sums up what the member said, an answer is given again in a longer sentence. A fact whose
content words are all in another fact of the same call, with the same polarity, adds nothing to it:
it is dropped, whichever came first. Two facts with the same words in another order are both kept
(neither is fuller). Reconcile does the same across calls (``reconcile``, rule ``subsumed``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from carnet.domain.extraction.model import ExtractedFact
from carnet.domain.reconcile.evidence import negated as is_negated
from carnet.domain.text import content_terms, fold

# The advisor reading back what was just said, or noting it ("Je relis : …", "Je note : …", "Noté : …", as the
# rewriting gives them): the frame says nothing of the member, so a read-back whose values and words are all in
# another fact of the call adds nothing (issue 48 names read-backs among what is not a fact; relire, noter,
# répéter, confirmer are the trade's verbs for it).
_READ_BACK = re.compile(r"^\s*(?:le conseiller (?:relit|note|répète|repete|confirme)|c'est noté|noté|note)\s*:",
                        re.IGNORECASE)


def kept(facts: Sequence[ExtractedFact]) -> list[int]:
    """Indexes of the ``facts``, in order, that no other fact of the list holds entirely."""
    read = [(Counter(content_terms(f.text)), is_negated(fold(f.text))) for f in facts]
    said = [Counter(content_terms(_READ_BACK.sub("", f.text))) for f in facts]
    return [
        i
        for i, ((_, polarity), own) in enumerate(zip(read, said, strict=True))
        if not any(j != i and own and _within(own, words) and polarity == negated
                   for j, (words, negated) in enumerate(read))
    ]



def _within(part: Counter[str], whole: Counter[str]) -> bool:
    """Every word of ``part`` in ``whole``, as many times at least, and ``whole`` has more."""
    return part <= whole and part.keys() < whole.keys()
