"""The rule-based ``Extractor``: the embedded default when no LLM is configured.

A thin adapter over ``carnet.domain.extraction.rules`` (pure regular expressions, French and
English): it never fails for backend reasons, so it never raises ``ExtractionFailed``, and it
spends no tokens. Contradictions between facts are left to reconcile's slot rules, which already
judge them without an LLM: ``obsolete`` returns nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from carnet.domain.extraction.model import Extraction
from carnet.domain.extraction.rules import extract
from carnet.domain.extraction.turn_model import TurnModel
from carnet.domain.intake import Message


class RuleExtractor:
    """``Extractor`` port: ``RuleExtractor()`` reads every turn; ``RuleExtractor(turn_model)`` only the
    turns the learned filter keeps (``domain.extraction.turn_model``, shipped as
    ``calibration/turn-filter.json``)."""

    turn_model: TurnModel | None = None  # class defaults: a subclass that keeps its own __init__ reads every turn
    join_runs: bool = False
    weigh: bool = False

    def __init__(self, turn_model: TurnModel | None = None, *, join_runs: bool = False, weigh: bool = False) -> None:
        self.turn_model = turn_model
        self.join_runs = join_runs  # consecutive kept turns make one record (``pipeline.extract``)
        self.weigh = weigh  # a fact's importance also from its turn's probability (``pipeline.extract``)

    @property
    def name(self) -> str:
        return "rules"

    @property
    def judges_contradictions(self) -> bool:
        return False  # reconcile's slot rules already judge what rules can

    def extract(self, messages: Sequence[Message], *, session_id: str | None, locale: str,
                context: Sequence[Message] = ()) -> Extraction:
        """The filter weighs each turn within the whole session so far (``context`` then ``messages``:
        a turn's place, what is new in it, the question it answers); only ``messages`` are read for facts."""
        everything = [*context, *messages]
        found = (self.turn_model.probabilities(everything, ongoing=bool(context)) if self.turn_model is not None
                 else None)
        keep = None if found is None or self.turn_model is None else [p >= self.turn_model.keep_at for p in found]
        if context:
            keep = [False] * len(context) + ([True] * len(messages) if keep is None else keep[len(context):])
        return extract(everything, session_id=session_id, locale=locale, keep=keep, join_runs=self.join_runs,
                       weights=found if self.weigh else None)

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]:
        return []
