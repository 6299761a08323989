"""Who said a record, when it is a line of dialogue. Pure, no I/O.

Conversations are often remembered turn by turn, each record the speaker's name then what they said
("Melanie: We went camping in the mountains last week."). A question that names a person ("Where has
Melanie camped?") is most often answered by what that person said, not by what others said to them;
search lifts those records a little (``services.memories.recall.lift_speakers``). A record that does
not start with a name and a colon (a call's note, "Le membre …") is nobody's line and is never lifted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from carnet.domain.text import fold

# A name is letters (and spaces, dots, hyphens, apostrophes): "Appel du 12 mars :" is no one's line.
_SPEAKER = re.compile(r"^\s*([^\W\d_](?:[^\W\d_]|['’ .\-]){0,40}?)\s?:\s")


def speaker(text: str) -> str | None:
    """The name a line of dialogue starts with ("Melanie: …", "Jean Dupont : …"), folded; else None."""
    m = _SPEAKER.match(text)
    return fold(m.group(1)).strip() if m else None


def spoken_by(text: str, names: Iterable[str]) -> bool:
    """``text`` is a line said by one of ``names`` (a full name or its first word: "Melanie" for
    "Melanie: …", and for "Melanie Smith: …")."""
    said_by = speaker(text)
    if said_by is None:
        return False
    for name in names:
        folded = fold(name).strip()
        if folded and (said_by == folded or said_by.split(" ")[0] == folded or folded.split(" ")[0] == said_by):
            return True
    return False
