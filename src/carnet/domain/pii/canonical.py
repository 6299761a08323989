"""One spelling per identifier, so that a blind-index token is the same however it was written.

"06 12 34 56 78", "+33 6 12 34 56 78" and "0033612345678" are one phone number; "fr76 3000 6000…"
and "FR7630006000…" one IBAN. The token is computed on this canonical form.
"""

from __future__ import annotations

import re

from carnet.domain.pii.spans import EMAIL, PHONE

_DIGITS = re.compile(r"\D")
_NON_ALNUM = re.compile(r"[^0-9A-Za-z]")


def canonical(kind: str, value: str) -> str:
    if kind == EMAIL:
        return value.strip().lower()
    if kind == PHONE:
        digits = _DIGITS.sub("", value)
        if value.strip().startswith("+"):
            digits = "00" + digits
        if digits.startswith("0033"):
            digits = "0" + digits[4:].lstrip("0")
        return digits
    return _NON_ALNUM.sub("", value).upper()
