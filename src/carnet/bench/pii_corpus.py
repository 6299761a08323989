"""A French PII corpus written for the project: call-center notes with labelled personal data.

Sentences are built from templates a call-center advisor would write, filled with values in the
formats seen on the phone and in forms: spaced and compact IBANs (French and foreign), NIRs with their
key (spaced, compact, Corsican departments), "06 12 34 56 78", "+33 6…", "0033…", foreign numbers,
cards with dashes or spaces, plates, addresses, dates of birth, and names with particles, hyphens,
apostrophes, in lower case, with and without a title; many names are deliberately outside the
detector's given-name list. Decoys (amounts, ordinary dates, postcodes, references, phone-like
counts) are left unlabelled: they measure precision.

Every value is generated with a fixed seed, so the corpus is the same on every machine; check digits
are computed, never copied. ``corpus()`` returns the examples; ``carnet bench pii`` scores detectors.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from carnet.domain.pii.spans import ADDRESS, BIRTHDATE, CARD, EMAIL, IBAN, NIR, PERSON, PHONE, PLATE

SEED = 20261129


@dataclass(frozen=True, slots=True)
class Gold:
    start: int
    end: int
    kind: str


@dataclass(frozen=True, slots=True)
class Example:
    text: str
    gold: tuple[Gold, ...]


GIVEN = ["Jean", "Marie", "Sophie", "Nicolas", "Camille", "Aurore", "Gwendoline", "Youssef", "Fatoumata", "Kévin",
         "Soizic", "Jean-Baptiste", "Marie-Claire", "Anne-Sophie", "Hervé", "Ludivine", "Maëlys", "Tiphaine", "Karim",
         "Ophélie", "Loïc", "Mathis", "Capucine", "Nadège", "Bertrand", "Ghislaine", "Rémy", "Clothilde", "Wassim",
         "Inès", "Yasmine", "Aymeric", "Perrine", "Gaspard", "Salomé", "Enguerrand", "Awa", "Thuy", "Mamadou", "Élodie",
         # Names the detector's given-name list does not have (checked by a test): they measure the NER and
         # the capitalisation rules alone, as a held-out set would.
         "Bénédicte", "Clovis", "Eulalie", "Honorine", "Ysaline", "Ferdinand", "Léandre", "Sidonie", "Anselme",
         "Philomène", "Gwladys", "Baudouin", "Wilfried", "Bintou", "Ousmane", "Kenji", "Thiago", "Yuna"]
SURNAMES = ["Martin", "Dupont", "Lefèvre", "Lefèvre-Dubois", "de La Fontaine", "N'Diaye", "Le Goff", "d'Alembert",
            "Benali", "Nguyen", "Moreau", "Girard", "Rousseau", "Fontaine", "Chevalier", "Kerjean", "Dos Santos",
            "Da Silva", "Bouchard", "Morel", "Garnier", "Faure", "Mercier", "Blanc", "Guérin", "Boyer", "Lambert",
            "Roux", "Vasseur", "Le Bihan", "Diallo", "Traoré", "Haddad", "Perrin", "Marchand", "Dufour", "Colin"]
TITLES = ["M.", "Mme", "Madame", "Monsieur", "Mlle", "Me", "Dr"]
STREETS = ["rue des Lilas", "avenue Jean Jaurès", "boulevard de la République", "impasse du Moulin",
           "chemin des Vignes", "place du Marché", "allée des Tilleuls", "rue Victor Hugo", "quai de la Loire",
           "route de Paris", "rue du Général Leclerc", "cours Lafayette"]
CITIES = [("69007", "Lyon"), ("75019", "Paris"), ("13001", "Marseille"), ("31000", "Toulouse"), ("44000", "Nantes"),
          ("59800", "Lille"), ("67000", "Strasbourg"), ("33000", "Bordeaux"), ("35000", "Rennes"),
          ("06000", "Nice"), ("21000", "Dijon"), ("29200", "Brest")]
DOMAINS = ["orange.fr", "free.fr", "gmail.com", "laposte.net", "sfr.fr", "hotmail.fr", "wanadoo.fr", "yahoo.fr",
           "entreprise-dupont.fr", "mairie-lyon.fr"]
MONTHS = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
          "novembre", "décembre"]


# -- values ----------------------------------------------------------------------------------------


def _iban_check(country: str, bban: str) -> str:
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{98 - int(digits) % 97:02d}"


def iban(rng: random.Random) -> str:
    country = rng.choice(["FR", "FR", "FR", "DE", "BE", "ES", "IT"])
    if country == "FR":
        bban = "".join(rng.choices(string.digits, k=10)) + "".join(rng.choices(string.digits + "ABCDEF", k=11))
        bban += f"{rng.randrange(100):02d}"
    elif country == "DE":
        bban = "".join(rng.choices(string.digits, k=18))
    elif country == "BE":
        bban = "".join(rng.choices(string.digits, k=12))
    elif country == "ES":
        bban = "".join(rng.choices(string.digits, k=20))
    else:
        bban = rng.choice(string.ascii_uppercase) + "".join(rng.choices(string.digits, k=22))
    value = country + _iban_check(country, bban) + bban
    style = rng.random()
    if style < 0.5:
        return " ".join(value[i : i + 4] for i in range(0, len(value), 4))
    if style < 0.9:
        return value
    return " ".join(value[i : i + 4] for i in range(0, len(value), 4)).lower()


def nir(rng: random.Random) -> str:
    sex = rng.choice("12")
    yy, mm = f"{rng.randrange(100):02d}", f"{rng.randrange(1, 13):02d}"
    dept = rng.choice([f"{rng.randrange(1, 96):02d}", "2A", "2B", f"{rng.randrange(1, 96):02d}"])
    commune, order = f"{rng.randrange(1, 1000):03d}", f"{rng.randrange(1, 1000):03d}"
    body = sex + yy + mm + dept + commune + order
    numeric = body.replace("2A", "19") if dept == "2A" else body.replace("2B", "18") if dept == "2B" else body
    key = f"{97 - int(numeric) % 97:02d}"
    if rng.random() < 0.6:
        return f"{sex} {yy} {mm} {dept} {commune} {order} {key}"
    return body + key


# The ways a French number is written: what stands before its first digit after 0, and between its pairs.
_PHONE_STYLES = (("0{} ", " "), ("0{}", ""), ("0{}.", "."), ("+33 {} ", " "), ("+33{}", ""), ("0033 {} ", " "),
                 ("+33 (0){} ", " "))


def phone(rng: random.Random) -> str:
    first = rng.choice("1234567996")
    pairs = [f"{rng.randrange(100):02d}" for _ in range(4)]
    style = rng.randrange(len(_PHONE_STYLES) + 1)
    if style < len(_PHONE_STYLES):  # the French forms; the last style is a foreign number
        head, joiner = _PHONE_STYLES[style]
        return head.format(first) + joiner.join(pairs)
    return rng.choice(["+44 20 7946 ", "+32 470 12 ", "+41 22 345 ", "+1 415 555 "]) + f"{rng.randrange(10000):04d}"


def email(rng: random.Random, given: str, surname: str) -> str:
    base = _ascii(given).lower().replace(" ", "")
    last = _ascii(surname).lower().replace(" ", "").replace("'", "")
    local = rng.choice([f"{base}.{last}", f"{base[0]}{last}", f"{last}{rng.randrange(1, 99)}", f"{base}_{last}"])
    return f"{local}@{rng.choice(DOMAINS)}"


def _luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    body = prefix + "".join(rng.choices(string.digits, k=length - len(prefix) - 1))
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return body + str((10 - total % 10) % 10)


def card(rng: random.Random) -> str:
    kind = rng.choice(["visa", "visa", "mc", "amex"])
    if kind == "amex":
        number = _luhn_complete(rng.choice(["34", "37"]), 15, rng)
        return f"{number[:4]} {number[4:10]} {number[10:]}" if rng.random() < 0.6 else number
    number = _luhn_complete("4" if kind == "visa" else rng.choice(["51", "52", "55"]), 16, rng)
    sep = rng.choice([" ", " ", "-", ""])
    return sep.join(number[i : i + 4] for i in range(0, 16, 4))


def plate(rng: random.Random) -> str:
    letters = "ABCDEFGHJKLMNPQRSTVWXYZ"
    a, b = "".join(rng.choices(letters, k=2)), "".join(rng.choices(letters, k=2))
    sep = rng.choice(["-", "-", " ", ""])
    return f"{a}{sep}{rng.randrange(1, 1000):03d}{sep}{b}"


def address(rng: random.Random) -> str:
    number = f"{rng.randrange(1, 200)}" + rng.choice(["", "", "", " bis", " ter"])
    cp, city = rng.choice(CITIES)
    street = rng.choice(STREETS)
    return rng.choice([f"{number} {street}, {cp} {city}", f"{number} {street} {cp} {city}", f"{number} {street}"])


def birthdate(rng: random.Random) -> str:
    day, month, year = rng.randrange(1, 29), rng.randrange(1, 13), rng.randrange(1935, 2006)
    if rng.random() < 0.5:
        return f"{day:02d}/{month:02d}/{year}"
    return f"{day} {MONTHS[month - 1]} {year}"


def person(rng: random.Random) -> tuple[str, str, str, str]:
    """(a title before the name or "", the name as written, given name, surname). The title is not
    personal data: it stays in the pseudonymised text ("Mme <PERSON_1>") and is not labelled."""
    given, surname = rng.choice(GIVEN), rng.choice(SURNAMES)
    style = rng.randrange(6)
    if style == 0:
        return "", f"{given} {surname}", given, surname
    if style == 1:
        return rng.choice(TITLES) + " ", surname, given, surname
    if style == 2:
        return rng.choice(TITLES) + " ", f"{given} {surname}", given, surname
    if style == 3:
        return "", f"{given} {surname}".lower(), given, surname
    if style == 4:
        return "", given, given, surname
    return "", f"{surname.upper()} {given}", given, surname


def _ascii(value: str) -> str:
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", value) if not unicodedata.combining(c))


# -- sentences -------------------------------------------------------------------------------------

Slot = tuple[str, Callable[[random.Random], str]]

TEMPLATES: list[str] = [
    "Le membre {PERSON} a communiqué son nouvel IBAN {IBAN} pour les remboursements.",
    "Nouveau RIB reçu : {IBAN}, à utiliser dès le prochain prélèvement.",
    "{PERSON} souhaite être rappelé au {PHONE} après 18h.",
    "Joignable au {PHONE} ou par mail à {EMAIL}.",
    "Numéro de sécurité sociale de l'assurée : {NIR}.",
    "L'adhérent, né le {BIRTHDATE}, demande la mise à jour de sa carte vitale ({NIR}).",
    "Paiement refusé sur la carte {CARD}, le client va rappeler la banque.",
    "{PERSON} a déclaré un sinistre pour le véhicule immatriculé {PLATE}.",
    "Changement d'adresse : {ADDRESS}.",
    "La cliente habite désormais au {ADDRESS} avec sa fille {PERSON}.",
    "Courrier retourné, {PERSON} n'habite plus au {ADDRESS}.",
    "Appel de {PERSON} ({PHONE}) au sujet du remboursement de 1 250 euros du 12/03/2024.",
    "Date de naissance : {BIRTHDATE}. Contrat habitation formule confort, franchise 150 euros.",
    "Son conjoint {PERSON} est cotitulaire du compte {IBAN}.",
    "Le dossier a été transmis à {PERSON}, expert, joignable au {PHONE}.",
    "Envoyer l'attestation à {EMAIL} avant le 15 juin.",
    "{PERSON} conteste le prélèvement sur la carte {CARD} du 3 mai.",
    "Le véhicule {PLATE} est assuré tous risques depuis 2019, 3 sinistres déclarés.",
    "Mme a donné un autre numéro : {PHONE}. Elle préfère les appels le matin.",
    "Né le {BIRTHDATE} à Lyon, {PERSON} souhaite résilier son contrat auto.",
    "Le membre a appelé pour signaler que {PERSON} est décédé ; dossier succession ouvert.",
    "RIB du bénéficiaire : {IBAN} ({PERSON}).",
    "Adresse de facturation {ADDRESS}, téléphone {PHONE}.",
    "La carte vitale porte le numéro {NIR} ; mutuelle à jour.",
    "Rendez-vous avec {PERSON} le 14 octobre à 10h pour l'expertise.",
]

DECOYS: list[str] = [
    "Remboursement de 1 250,00 euros effectué le 12/03/2024 sur le compte habituel.",
    "Le client a 3 contrats et 2 sinistres en cours depuis 2021.",
    "Franchise de 300 euros, plafond 15 000 euros, code postal de l'agence 69003.",
    "Rappeler entre 9h et 12h, le 06/11 de préférence.",
    "Le sinistre du 14 juillet 2023 est clos, indemnité versée le 2 août.",
    "Contrat auto formule Tiers, bonus de 0,50 depuis 2018.",
    "La cotisation mensuelle passe de 45,90 à 48,20 euros au 1er janvier.",
    "Le membre préfère être contacté par courrier plutôt que par téléphone.",
    "Devis numéro 2024-118 envoyé, validité 30 jours.",
    "Le client souhaite un échéancier en 10 fois sans frais.",
    "Appel de 12 minutes, le conseiller a proposé une visite en agence.",
    "Le véhicule de location est à rendre avant le 28 février.",
]

_VALUES: dict[str, Callable[[random.Random], str]] = {
    IBAN: iban, NIR: nir, PHONE: phone, CARD: card, PLATE: plate, ADDRESS: address, BIRTHDATE: birthdate,
}


def _fill(template: str, rng: random.Random) -> Example:
    text = ""
    gold: list[Gold] = []
    rest = template
    given, surname = rng.choice(GIVEN), rng.choice(SURNAMES)
    while "{" in rest:
        before, _, after = rest.partition("{")
        kind, _, rest = after.partition("}")
        text += before
        if kind == PERSON:
            title, value, given, surname = person(rng)
            text += title
        elif kind == EMAIL:
            value = email(rng, given, surname)
        else:
            value = _VALUES[kind](rng)
        gold.append(Gold(len(text), len(text) + len(value), kind))
        text += value
    return Example(text + rest, tuple(gold))


def corpus(size: int = 400) -> list[Example]:
    """``size`` filled templates plus every decoy, shuffled with the fixed seed."""
    rng = random.Random(SEED)
    examples = [_fill(TEMPLATES[i % len(TEMPLATES)], rng) for i in range(size)]
    examples += [Example(d, ()) for d in DECOYS]
    rng.shuffle(examples)
    return examples
