"""One spelling per identifier, so that a blind-index token is the same however it was written.

"06 12 34 56 78", "+33 6 12 34 56 78" and "0033612345678" are one phone number; "fr76 3000 6000…"
and "FR7630006000…" one IBAN. The token is computed on this canonical form.
"""

from __future__ import annotations

import re
import unicodedata

from carnet.domain.pii.normalise import normalise
from carnet.domain.pii.spans import EMAIL, PHONE

_DIGITS = re.compile(r"\D")
_NON_ALNUM = re.compile(r"[^0-9A-Za-z]")
# A spelled-out address ("jean point dupont arobase free point fr") and the written one are one address.
_SPELLED = ((re.compile(r"\s+(?:arobase|arrobase|at)\s+", re.IGNORECASE), "@"),
            (re.compile(r"\s+tiret\s+(?:du\s+)?bas\s+|\s+underscore\s+", re.IGNORECASE), "_"),
            (re.compile(r"\s+(?:tiret|dash|hyphen)\s+", re.IGNORECASE), "-"),
            (re.compile(r"\s+(?:point|dot)\s+", re.IGNORECASE), "."))


def canonical(kind: str, value: str) -> str:
    """Fullwidth digits, zero-width characters, "(at)" and spelled-out numbers are read as the
    detectors read them (``normalise``), so every spelling of one value has one token."""
    value = unicodedata.normalize("NFKC", normalise(value).text)
    if kind == EMAIL:
        value = value.strip()
        if "@" not in value:
            for pattern, char in _SPELLED:
                value = pattern.sub(char, value)
        return value.lower()
    if kind == PHONE:
        digits = _DIGITS.sub("", value)
        if value.strip().startswith("+"):
            digits = "00" + digits
        if digits.startswith("0033"):
            digits = "0" + digits[4:].lstrip("0")
        return digits
    return _NON_ALNUM.sub("", value).upper()


def phone_digits(value: str) -> str | None:
    """A French phone number however it was spelled ("zéro six, soixante et onze, …", "+33 6 71 …") as
    an advisor writes it, "06 71 42 18 93"; None for any other number (foreign, short, a service number
    from "08 00": left as written)."""
    digits = canonical(PHONE, value)
    if len(digits) != 10 or not digits.isdigit() or digits[0] != "0" or digits[1] in "08":
        return None
    return " ".join(digits[i : i + 2] for i in range(0, 10, 2))
