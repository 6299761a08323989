"""A call's summary restating a decision that is no longer true is closed with it. Pure.

An intake writes its call's facts and a summary of the call (an episode: "Appel du 20 février 2026 :
cotisation ; le conseiller met à jour : arrêt prolongé jusqu'au 31 mars 2026 ; …"), which repeats the
advisor's decisions word for word. An episode is an event and no rule judges it on its own. But when
a newer note makes one of those decisions untrue, the summary still says it, and comes up for "elle
reprend quand ?" with the old date: the summary is then closed by the same note (``superseded_by``),
and stays in the record's history. Its other decisions are facts of their own, still active.

Only a summary that holds the decision's text whole counts (a decision the summary cut short with
"…", or an LLM's summary in its own words, is left as it is).
"""

from __future__ import annotations

import re

from carnet.domain.text import fold

_SPACE = re.compile(r"\s+")
# A status note of a file the call named, as earlier versions labelled it ("… (dossier SIN-2025-0042)."):
# the summary quotes the decision without that label.
_FILE_LABEL = re.compile(r" \(dossier [^()]+\)")
_MIN_CHARS = 20  # "Oui." or "C'est fait." in a summary restates nothing


def restates(summary: str, decision: str) -> bool:
    said = _plain(_FILE_LABEL.sub("", decision))
    return len(said) >= _MIN_CHARS and said in _plain(summary)


def _plain(text: str) -> str:
    return _SPACE.sub(" ", fold(text)).strip(" .…")
