"""How a pseudonymised text reads to the embedding model.

``<PERSON_1>`` is the stored form: typed, numbered, unambiguous. To the embedding model it is six
sub-word tokens of noise in every record that names someone, and questions about people lose their
topic under it. What is embedded therefore reads placeholders as plain words: each person of the
subject as a fixed stand-in first name (the same person is the same stand-in in every record and
every question of the subject, as the placeholder is), other types by their kind ("IBAN 1",
"téléphone 2"). Only the placeholder's type and number are used: no personal data is involved.
"""

from __future__ import annotations

import re

from carnet.domain.pii.pseudonyms import PLACEHOLDER
from carnet.domain.pii.spans import ADDRESS, BIRTHDATE, CARD, EMAIL, IBAN, NIR, PERSON, PHONE, PLATE

# Stand-ins, chosen to be given names in French and English alike and unlikely among the subjects.
STAND_INS = ("Alex", "Sam", "Charlie", "Robin", "Morgan", "Dominique", "Camille", "Sacha", "Claude", "Eden",
             "Noa", "Lou", "Andrea", "Jules", "Ariel", "Louison")
_WORDS = {
    "fr": {IBAN: "IBAN", NIR: "numéro de sécurité sociale", PHONE: "téléphone", EMAIL: "adresse email",
           CARD: "carte bancaire", PLATE: "immatriculation", ADDRESS: "adresse", BIRTHDATE: "date de naissance"},
    "en": {IBAN: "IBAN", NIR: "social security number", PHONE: "phone", EMAIL: "email address",
           CARD: "payment card", PLATE: "licence plate", ADDRESS: "address", BIRTHDATE: "date of birth"},
}


def for_embedding(pseudo_text: str, locale: str = "fr") -> str:
    words = _WORDS.get(locale, _WORDS["en"])

    def read(m: re.Match[str]) -> str:
        kind, n = m.group(1), int(m.group(2))
        if kind == PERSON:
            name = STAND_INS[(n - 1) % len(STAND_INS)]
            return name if n <= len(STAND_INS) else f"{name} {n}"
        return f"{words.get(kind, kind.lower().replace('_', ' '))} {n}"

    return PLACEHOLDER.sub(read, pseudo_text)
