"""``bench scenarios --llm labels``: the LLM path, as ``carnet serve`` runs it with Mistral configured,
against a stand-in that answers from the labels. From facts, only the judgment of writes is asked (each
write's uncertain band, ``bootstrap.wiring.attach_judge``); from calls, the extraction too:

Each fold's extractor is the one ``bootstrap.models.build_extractor`` builds for ``CARNET_EXTRACTOR=mistral``:
``GatedExtractor`` (the learned turn filter decides which calls need the LLM) around the real
``MistralExtractor``, which talks over HTTP, through the ``mistralai`` SDK, to ``llm_standin`` serving
``llm_labels.Labels`` (an LLM that is always right: the facts of the file said in each call). With
``--leave-one-out`` the turn filter is fitted without the file measured (``turns_fit.fold_extractors``)
and the stand-in answers only from that file's labels; else the shipped filter and every file's labels.
The judge's uncertain band goes to the same stand-in (``obsolete``), answered by the labels too.

Per file it adds to the report: ``llm_share`` (the calls sent to the LLM, of those the workers
extracted), ``llm_sent`` / ``llm_skipped``, and what the stand-in was asked (``llm_labels``, with
``facts_not_sent``: the labelled facts said in the calls the filter did not send, lost to the gate).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from carnet.adapters.extractors.gated import GatedExtractor, needs_llm
from carnet.adapters.extractors.mistral import MistralExtractor
from carnet.bench.llm_labels import Labels, Tally
from carnet.bench.llm_standin import MODEL, serving
from carnet.bench.scenarios_loo import ExtractorFor
from carnet.domain.extraction.model import Extraction
from carnet.domain.extraction.turn_model import TurnModel
from carnet.domain.intake import Message
from carnet.ports.llm import Extractor

EXTRACTION = "Mistral adapter behind the turn filter, answered by the labels over HTTP (a bound)"
JUDGMENT = "notes as written; the judge's uncertain band asked of the Mistral adapter, answered by the labels (a bound)"


class LabelledFold(GatedExtractor):
    """One fold's extractor; ``figures`` is what ``scenarios_loo`` adds to the file's row."""

    def __init__(self, llm: MistralExtractor, turns: TurnModel, labels: Labels) -> None:
        super().__init__(llm, turns, stats=llm.stats)
        self._labels = labels
        labels.tally = Tally()

    def extract(self, messages: Sequence[Message], *, session_id: str | None, locale: str,
                context: Sequence[Message] = ()) -> Extraction:
        if not needs_llm(self._turns, messages, context):
            self._labels.not_sent("\n".join(m.content for m in messages))
        return super().extract(messages, session_id=session_id, locale=locale, context=context)

    def figures(self) -> dict[str, Any]:
        sent, skipped = self.stats.extractions_sent, self.stats.extractions_skipped
        return {"llm_share": round(sent / (sent + skipped), 4) if sent + skipped else None, "llm_sent": sent,
                "llm_skipped": skipped, "llm_failures": self.stats.failures, "llm_labels": asdict(self._labels.tally)}


@contextmanager
def labelled_folds(files: Sequence[Path], *, leave_one_out: bool, error: float = 0.0) -> Iterator[ExtractorFor]:
    """The stand-in served for the whole run; for each fold, the gated Mistral extractor pointed at it."""
    from carnet.adapters.local.turn_file import TURN_FILE, load_turn_filter
    from carnet.bench.turns_fit import fold_extractors
    from carnet.bootstrap.wiring import CALIBRATION_DIR

    labels = Labels.load(files)
    labels.error = error  # the share of the contradiction answers turned wrong
    fitted = fold_extractors(files) if leave_one_out else None
    shipped = load_turn_filter(CALIBRATION_DIR / TURN_FILE)

    made: list[LabelledFold] = []
    with serving(labels) as base:
        def fold(others: Sequence[Path]) -> Extractor | None:
            held = [p for p in files if p not in others]
            labels.focus(held[0].stem if leave_one_out and len(held) == 1 else None)
            rules = fitted(others) if fitted is not None else None
            turns = getattr(rules, "turn_model", None) or shipped
            made.append(LabelledFold(MistralExtractor(base, None, MODEL, timeout=120.0), turns, labels))
            return made[-1]

        try:
            yield fold
        finally:
            for extractor in made:
                extractor.close()
