"""Check digits of the identifiers call centers handle. A match that passes its checksum is almost
surely the identifier; one that fails is most likely another number."""

from __future__ import annotations

import re

_NON_ALNUM = re.compile(r"[^0-9A-Za-z]")


def compact(value: str) -> str:
    """Upper case, separators and spaces dropped."""
    return _NON_ALNUM.sub("", value).upper()


def iban_valid(value: str) -> bool:
    """ISO 13616: the first four characters moved to the end, letters as 10..35, mod 97 == 1."""
    s = compact(value)
    if not 15 <= len(s) <= 34 or not s[:2].isalpha() or not s[2:4].isdigit():
        return False
    if s.startswith("FR") and len(s) != 27:
        return False
    digits = "".join(str(int(c, 36)) for c in s[4:] + s[:4])
    return int(digits) % 97 == 1


def nir_valid(value: str) -> bool:
    """French social security number (NIR): 13 characters and a 2-digit key, key = 97 - (N mod 97).
    Corsica's departments 2A and 2B count as 19 and 18 in N."""
    s = compact(value)
    if len(s) != 15 or not s[13:].isdigit():
        return False
    body = s[:13]
    if body[5:7] == "2A":
        body = body[:5] + "19" + body[7:]
    elif body[5:7] == "2B":
        body = body[:5] + "18" + body[7:]
    if not body.isdigit() or body[0] not in "1234578":
        return False
    return 97 - int(body) % 97 == int(s[13:])


def luhn_valid(value: str) -> bool:
    """Payment cards (ISO/IEC 7812): 13 to 19 digits, Luhn check."""
    digits = [int(c) for c in value if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0
