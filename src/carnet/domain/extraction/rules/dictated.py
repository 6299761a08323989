"""Phone numbers dictated on the phone, written as an advisor types them: "le zéro six, soixante et
onze, quarante-deux, dix-huit, quatre-vingt-treize" → "le 06 71 42 18 93".

Why: a memory is read by an advisor or an LLM who wants the number to dial, and the advisor's
read-back ("Je relis : 06 71 42 18 93") is then the same record, not a second one. Which runs are
numbers is French number grammar (``domain.pii.numbers_fr``, from general knowledge of the language);
only the national format of a French phone number is rewritten (ten digits from "zéro": 0, a digit
other than 0, four pairs), said in groups with or without pauses. Anything else (an amount, a count,
a day of the month, an IBAN spelled letter by letter) stays as said: the pseudonymiser reads spelled
identifiers either way, and what the member said in words stays findable in those words.
"""

from __future__ import annotations

from carnet.domain.pii.numbers_fr import spelled_numbers


def in_digits(text: str) -> str:
    """``text`` with the French phone numbers it spells out in digits."""
    out, last = [], 0
    for numbers, start, end in spelled_numbers(text, pauses=True):
        phone = _phone(numbers)
        if phone is not None:
            out += [text[last:start], phone]
            last = end
    return "".join([*out, text[last:]]) if out else text


def _phone(numbers: str) -> str | None:
    """"0 6 71 42 18 93" → "06 71 42 18 93"; None unless the digits are a French phone number."""
    digits = "".join(numbers.split())
    if len(digits) != 10 or not digits.isdigit() or digits[0] != "0" or digits[1] == "0":
        return None
    return " ".join([digits[:2], digits[2:4], digits[4:6], digits[6:8], digits[8:]])
