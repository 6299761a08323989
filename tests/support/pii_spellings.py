"""Personal data in the spellings people use to slip it past a detector, generated: each type's values
(check digits computed, never copied) × each way of writing them (separators and grouping, fullwidth
and zero-width characters, lower case, "(at)" and "[dot]", numbers spelled out in French), in French
and English sentences. Used by the Hypothesis tests (``tests/unit/test_pii_spellings.py``) and to
write a corpus for ``carnet bench pii --data`` (``python -m tests.support.pii_spellings FILE``).
"""

from __future__ import annotations

import json
import random
import string
import sys
from collections.abc import Callable
from pathlib import Path

UNITS = ["zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze",
         "treize", "quatorze", "quinze", "seize"]
TENS = {2: "vingt", 3: "trente", 4: "quarante", 5: "cinquante", 6: "soixante", 8: "quatre-vingt"}
MONTHS_FR = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
             "novembre", "décembre"]
MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
             "November", "December"]
FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in string.ascii_letters + string.digits + "@.-"}


def french(n: int) -> str:
    """``n`` (0-9999) in French words, hyphenated (1990 spelling)."""
    if n < 17:
        return UNITS[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        if tens == 1:
            return f"dix-{UNITS[unit]}"
        if tens in (7, 9):
            return f"{TENS[tens - 1]}-{french(10 + unit)}"
        joiner = "-et-" if unit == 1 and tens != 8 else "-"
        return TENS[tens] + (f"{joiner}{UNITS[unit]}" if unit else ("s" if tens == 8 else ""))
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        head = "cent" if hundreds == 1 else f"{UNITS[hundreds]} cent"
        return head + (f" {french(rest)}" if rest else "")
    thousands, rest = divmod(n, 1000)
    head = "mille" if thousands == 1 else f"{french(thousands)} mille"
    return head + (f" {french(rest)}" if rest else "")


# -- values ------------------------------------------------------------------------------------------


def iban(rng: random.Random) -> str:
    country, length = rng.choice([("FR", 27), ("FR", 27), ("DE", 22), ("BE", 16), ("ES", 24), ("IT", 27)])
    bban = "".join(rng.choices(string.digits, k=length - 4))
    if country == "IT":
        bban = rng.choice(string.ascii_uppercase) + bban[1:]
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(digits) % 97:02d}{bban}"


def nir(rng: random.Random) -> str:
    dept = rng.choice([f"{rng.randint(1, 95):02d}", "2A", "2B"])
    body = f"{rng.choice('12')}{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{dept}" \
           f"{rng.randint(1, 999):03d}{rng.randint(1, 999):03d}"
    key = 97 - int(body.replace("2A", "19").replace("2B", "18")) % 97
    return f"{body}{key:02d}"


def phone(rng: random.Random) -> str:
    return f"0{rng.choice('1234567')}" + "".join(rng.choices(string.digits, k=8))


def _luhn_complete(body: str) -> str:
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return body + str((10 - total % 10) % 10)


def card(rng: random.Random) -> str:
    prefix, length = rng.choice([("4", 16), (str(rng.randint(51, 55)), 16), (str(rng.randint(2221, 2720)), 16),
                                 (rng.choice(["34", "37"]), 15)])
    return _luhn_complete(prefix + "".join(rng.choices(string.digits, k=length - len(prefix) - 1)))


def email(rng: random.Random) -> str:
    local = "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 8)))
    if rng.random() < 0.5:
        local += "." + "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 8)))
    return f"{local}@{rng.choice(['gmail.com', 'orange.fr', 'free.fr', 'laposte.net', 'yahoo.co.uk'])}"


def plate(rng: random.Random) -> str:
    letters = "ABCDEFGHJKLMNPQRSTVWXYZ"
    if rng.random() < 0.6:
        return f"{''.join(rng.choices(letters, k=2))}-{rng.randint(100, 999)}-{''.join(rng.choices(letters, k=2))}"
    return f"{rng.randint(1, 9999)} {''.join(rng.choices(letters, k=rng.randint(2, 3)))} {rng.randint(1, 95):02d}"


def birthdate(rng: random.Random) -> tuple[int, int, int]:
    return rng.randint(1, 28), rng.randint(1, 12), rng.randint(1935, 2008)


# -- spellings ---------------------------------------------------------------------------------------


def grouped(value: str, rng: random.Random) -> str:
    """``value`` cut in groups (of 4, of 2, 3-3-4, or random) joined by one separator."""
    sep = rng.choice([" ", "  ", ".", "-", "/", " - ", "\u00a0", "\u202f", "\u200b", "", " . "])
    size = rng.choice([4, 2, 3, 0])
    if size == 0:
        cuts, i = [], 0
        while i < len(value):
            step = rng.randint(1, 5)
            cuts.append(value[i : i + step])
            i += step
    else:
        cuts = [value[i : i + size] for i in range(0, len(value), size)]
    return sep.join(cuts)


def disguised(text: str, rng: random.Random) -> str:
    """Fullwidth characters, zero-width spaces, lower case or Arabic-Indic digits, or none."""
    how = rng.choice(["plain", "plain", "fullwidth", "zero-width", "lower", "arabic-indic"])
    if how == "fullwidth":
        return "".join(FULLWIDTH.get(c, c) for c in text)
    if how == "arabic-indic":
        return "".join(chr(0x0660 + int(c)) if c.isdigit() else c for c in text)
    if how == "zero-width":
        return "\u200b".join(text)
    return text.lower() if how == "lower" else text


def spell_phone(value: str, rng: random.Random) -> str:
    how = rng.choice(["grouped", "grouped", "intl", "spelled"])
    if how == "intl":
        return rng.choice(["+33 ", "0033 ", "+33 (0)", "+33"]) + grouped(value[1:], rng)
    if how == "spelled":
        pairs = [value[i : i + 2] for i in range(0, 10, 2)]
        return " ".join(f"zéro {french(int(p[1]))}" if p[0] == "0" else french(int(p)) for p in pairs)
    return disguised(grouped(value, rng), rng)


def spell_email(value: str, rng: random.Random) -> str:
    local, domain = value.split("@")
    at = rng.choice(["@", " @ ", "(at)", "[at]", " at ", "＠", " arobase ", " (at) ", "{at}"])
    dot = rng.choice([".", "[dot]", "(dot)", " point ", " dot ", "."])
    if dot.strip() in ("point", "dot") and at.strip() not in ("at", "arobase"):
        at = " arobase "
    spelled = local.replace(".", rng.choice([".", " point "]) if dot.strip() == "point" else ".") + at
    spelled += domain.replace(".", dot)
    return disguised(spelled, rng) if at == "@" and dot == "." else spelled


def spell_plate(value: str, rng: random.Random) -> str:
    sep = rng.choice(["-", " ", ""]) if "-" in value else rng.choice([" ", ""])
    out = value.replace("-", sep) if "-" in value else value.replace(" ", sep)
    return out.lower() if rng.random() < 0.5 else out


def spell_date(d: tuple[int, int, int], rng: random.Random) -> str:
    day, month, year = d
    how = rng.choice(["slash", "dot", "dash", "iso", "words", "spelled", "english"])
    if how in ("slash", "dot", "dash"):
        sep = {"slash": "/", "dot": ".", "dash": "-"}[how]
        return f"{day:02d}{sep}{month:02d}{sep}{year}"
    if how == "iso":
        return f"{year}-{month:02d}-{day:02d}"
    if how == "words":
        return f"{'1er' if day == 1 else day} {MONTHS_FR[month - 1]} {year}"
    if how == "spelled":
        return f"{french(day)} {MONTHS_FR[month - 1]} {french(year)}"
    return f"{MONTHS_EN[month - 1]} {day}, {year}"


# -- sentences -------------------------------------------------------------------------------------

SENTENCES: dict[str, list[str]] = {
    "IBAN": ["Nouveau RIB : {v}, à utiliser dès ce mois.", "Le membre donne {v} pour les remboursements.",
             "Please use {v} for the refund.", "{v} est le compte joint du couple."],
    "NIR": ["Son numéro de sécu est le {v}.", "Le dossier porte le {v} et reste ouvert.",
            "Social security number {v} confirmed.", "{v} : numéro transmis par la CPAM."],
    "PHONE": ["Rappeler au {v} après 18h.", "Le membre est joignable au {v}, 2 fois par jour.",
              "Call her back on {v} tomorrow.", "{v} est son nouveau portable."],
    "CARD": ["Carte {v} refusée hier.", "Paiement avec la {v} en trois fois.", "Card {v} was declined.",
             "Le membre a fait opposition sur {v} ce matin."],
    "EMAIL": ["Écrire à {v} pour la suite.", "Son adresse est {v} désormais.", "Send the quote to {v} please.",
              "Contact : {v}."],
    "PLATE": ["Véhicule immatriculé {v} au garage.", "La plaque {v} a été relevée.", "The car's plate is {v}.",
              "Sinistre sur la voiture {v} hier."],
    "BIRTHDATE": ["Née le {v} à Lyon.", "Date de naissance : {v}.", "Born on {v} in Lille.",
                  "Le membre, né le {v}, demande sa retraite."],
}

KINDS: dict[str, tuple[Callable[[random.Random], str], Callable[[str, random.Random], str]]] = {
    "IBAN": (iban, lambda v, r: disguised(grouped(v, r) if r.random() < 0.8 else v[:2] + " " + grouped(v[2:], r),
                                          r)),
    "NIR": (nir, lambda v, r: disguised(grouped(v, r), r)),
    "PHONE": (phone, spell_phone),
    "CARD": (card, lambda v, r: disguised(grouped(v, r), r)),
    "EMAIL": (email, spell_email),
    "PLATE": (plate, spell_plate),
}


def example(kind: str, rng: random.Random) -> dict[str, object]:
    """One sentence holding one value of ``kind`` in a generated spelling: {"text", "values", "type"}."""
    if kind == "BIRTHDATE":
        written = spell_date(birthdate(rng), rng)
    else:
        make, spell = KINDS[kind]
        written = spell(make(rng), rng)
    return {"text": rng.choice(SENTENCES[kind]).format(v=written), "values": [written], "type": kind}


def corpus(per_kind: int, seed: int = 46) -> list[dict[str, object]]:
    rng = random.Random(seed)
    return [example(kind, rng) for kind in SENTENCES for _ in range(per_kind)]


def project_corpus(size: int = 400) -> list[dict[str, object]]:
    """``carnet bench pii``'s own corpus (``carnet.bench.pii_corpus``) in the ``--data`` format."""
    from carnet.bench.pii_corpus import corpus as labelled

    examples = labelled(size)
    cases: list[dict[str, object]] = [{"text": e.text, "values": [e.text[g.start : g.end]], "type": g.kind}
                                      for e in examples for g in e.gold]
    return cases + [{"text": e.text, "values": [], "type": "decoy"} for e in examples if not e.gold]


if __name__ == "__main__":  # FILE [N | project]
    which = sys.argv[2] if len(sys.argv) > 2 else "100"
    cases = project_corpus() if which == "project" else corpus(int(which))
    Path(sys.argv[1]).write_text(json.dumps(cases, ensure_ascii=False, indent=0), encoding="utf-8")
