"""Check digits of the identifiers call centers handle. A match that passes its checksum is almost
surely the identifier; one that fails is most likely another number."""

from __future__ import annotations

import re

_NON_ALNUM = re.compile(r"[^0-9A-Za-z]")


def compact(value: str) -> str:
    """Upper case, separators and spaces dropped."""
    return _NON_ALNUM.sub("", value).upper()


# IBAN length by country (ISO 13616 registry, public): two letters that are no IBAN country ("au
# 0033…") or a number of the wrong length for its country is not an IBAN, whatever mod 97 says.
IBAN_LENGTHS = {
    "AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "EE": 20, "ES": 24,
    "FI": 18, "FR": 27, "GB": 22, "GI": 23, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IS": 26, "IT": 27, "LI": 21,
    "LT": 20, "LU": 20, "LV": 21, "MA": 28, "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "RO": 24,
    "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TN": 24, "TR": 26, "DZ": 26, "AE": 23, "AZ": 28, "BA": 20, "BH": 22,
    "BR": 29, "BY": 28, "CR": 22, "DO": 28, "EG": 29, "FO": 18, "GE": 22, "GL": 18, "GT": 28, "IL": 23, "IQ": 23,
    "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MU": 30, "PK": 24,
    "PS": 29, "QA": 29, "RS": 22, "SA": 24, "SC": 31, "SV": 28, "TL": 23, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}


def iban_valid(value: str) -> bool:
    """ISO 13616: the first four characters moved to the end, letters as 10..35, mod 97 == 1."""
    s = compact(value)
    if not 15 <= len(s) <= 34 or not s[:2].isalpha() or not s[2:4].isdigit():
        return False
    if len(s) != IBAN_LENGTHS.get(s[:2]):
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


def card_valid(value: str) -> bool:
    """A payment card number: Luhn, and the length and first digits of a scheme that issues cards in
    Europe (ISO/IEC 7812 issuer ranges, public): Visa 4; Mastercard 51-55 and 2221-2720; Amex 34, 37;
    Diners 30, 36, 38, 39; JCB 35; Discover 6011, 644-649, 65; UnionPay 62; Maestro 50, 56-58, 6."""
    digits = "".join(c for c in value if c.isdigit())
    if not luhn_valid(digits):
        return False
    n, head = len(digits), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)
    if 5100 <= head <= 5599 or 2221 <= head <= 2720:
        return n == 16
    if digits[:2] in ("34", "37"):
        return n == 15
    if digits[:2] in ("30", "36", "38", "39", "35", "62", "65") or digits[0] == "6" or digits[:2] in ("50", "56",
                                                                                                      "57", "58"):
        return 14 <= n <= 19
    return False


def rib_valid(value: str) -> bool:
    """A French RIB (bank 5, branch 5, account 11 characters, key 2): key = 97 - (89 bank + 15 branch +
    3 account) mod 97, the account's letters read as digits (A-I 1-9, J-R 1-9, S-Z 2-9)."""
    s = compact(value)
    if len(s) != 23 or not (s[:10] + s[21:]).isdigit():
        return False
    account = "".join(_RIB_LETTERS.get(c, c) for c in s[10:21])
    if not account.isdigit():
        return False
    return 97 - (89 * int(s[:5]) + 15 * int(s[5:10]) + 3 * int(account)) % 97 == int(s[21:])


_RIB_LETTERS = {c: str(d) for letters, first in (("ABCDEFGHI", 1), ("JKLMNOPQR", 1), ("STUVWXYZ", 2))
                for d, c in enumerate(letters, start=first)}
