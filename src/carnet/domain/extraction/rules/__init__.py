"""Rule-based extraction: facts worth keeping, and a short episode per session, without any LLM.

The embedded default when no LLM is configured (DESIGN.md, write path step 2). It reads the
pseudonymised messages of a call, keeps the member's facts and the advisor's decisions, rewrites
them in the third person ("Le membre a déménagé à Lyon."), files them under a small fixed set of
categories with an importance, dates them, and summarises the session in one sentence. Pure: no
I/O, no clock, no model. ``carnet.adapters.extractors.rules.RuleExtractor`` puts it behind the
``Extractor`` port.

Modules, in the order a sentence goes through them: ``elision`` (apostrophes a transcript left out),
``sentences`` (splitting, fillers), ``corrections`` (only the corrected value), ``answers`` (a short
answer read with the advisor's question), ``smalltalk`` (the "worth remembering" filter),
``requests`` (requests, imperatives), ``rewrite_fr`` (with ``walk``, ``verbs``,
``possessives``, ``french_words``) and ``rewrite_en`` (third person), ``fragments`` (a verbless
piece joins the fact before it), ``classify`` (category, importance), ``dates`` (valid_from),
``episode`` (the summary); ``pipeline`` runs them.
"""

from carnet.domain.extraction.rules.classify import CATEGORIES
from carnet.domain.extraction.rules.pipeline import extract

__all__ = ["CATEGORIES", "extract"]
