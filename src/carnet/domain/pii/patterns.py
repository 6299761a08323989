"""Pattern recognizers: regular expressions, check digits and nearby context words, no model.

They run on both paths: at write time beside the NER model (the Presidio adapter wraps them as its
own recognizers), and alone on the read path, where a query must be pseudonymised in well under a
millisecond. Scores follow Presidio's convention: a bare pattern is weak evidence, a valid check
digit or a context word ("IBAN", "né le", "tél") makes it strong.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from carnet.domain.pii import checksums
from carnet.domain.pii.spans import ADDRESS, BIRTHDATE, CARD, EMAIL, IBAN, NIR, PERSON, PHONE, PLATE, Span

CONTEXT_WINDOW = 40  # characters before a match searched for a context word
CONTEXT_BOOST = 0.35


@dataclass(frozen=True, slots=True)
class Recognizer:
    kind: str
    pattern: re.Pattern[str]
    score: float  # of a bare match
    validate: Callable[[str], bool] | None = None  # a check digit: valid → ``valid_score``, invalid → dropped
    valid_score: float = 0.95
    context: tuple[str, ...] = ()
    group: int = 0  # the regex group that is the personal data (0: the whole match)
    # What a value that fails its check digits must still look like to be kept for its context word
    # (a mistyped identifier), so a sentence near "compte" is not read as one.
    plausible: Callable[[str], bool] | None = None

    def find(self, text: str) -> Iterable[Span]:
        """A match that passes its check digits scores ``valid_score``. One that fails is dropped,
        unless a context word says what it is ("sécurité sociale …"): then it is a mistyped
        identifier, still personal data, and scores as a bare match with context. A dropped match is
        searched again from its next character: the loose grouping of a number may start on the words
        before a value ("le 28 vers son compte BE47 0634…") and must not hide it."""
        lowered: str | None = None  # only for a match that needs its context word
        at = 0
        while (m := self.pattern.search(text, at)) is not None:
            if lowered is None and self.context:
                lowered = text.lower()
            span = self._kept(m, text, lowered or "")
            if span is None:
                at = m.start() + 1
                continue
            yield span
            at = max(m.end(), m.start() + 1)

    def _kept(self, m: re.Match[str], text: str, lowered: str) -> Span | None:
        start, end = m.span(self.group)
        score = self.score
        valid = False
        if self.validate is not None:
            valid_end = _valid_end(text, start, end, self.validate)
            if valid_end is not None:
                end, score, valid = valid_end, self.valid_score, True
        if self.context and not valid:
            before = lowered[max(0, m.start() - CONTEXT_WINDOW) : m.start()]
            if any(word in before for word in self.context) and (
                    self.plausible is None or self.plausible(text[start:end])):
                score = min(1.0, score + CONTEXT_BOOST)
            elif self.validate is not None:
                return None
        elif self.validate is not None and not valid:
            return None
        return Span(start, end, self.kind, score)


def _valid_end(text: str, start: int, end: int, validate: Callable[[str], bool]) -> int | None:
    """Where a value that passes its check digits ends: the whole match, or the longest part of it
    that ends before a separator (a pattern that tolerates any grouping may take in the next word or
    number: "FR76… ok", "4970 1012 3456 7893 12 €")."""
    for cut in range(end, start, -1):
        if (cut == end or not text[cut].isalnum()) and text[cut - 1].isalnum() and validate(text[start:cut]):
            return cut
    return None


def phone_layout(value: str) -> bool:
    """Digits grouped with one kind of separator ("06.12.34.56.78", "061 234 5678"), the way a phone
    number is written; mixed separators are a date and a time, or a list ("01/02/2023 12")."""
    body = re.sub(r"^\(?(?:\+|00) ?33\)?[ ./\-_]*(?:\(0\) ?)?", "", value)
    digits = re.sub(r"\D", "", body)
    if len(digits) != (10 if digits.startswith("0") else 9):
        return False
    seps = {re.sub(r" ", "", s) or " " for s in re.findall(r"\D+", body)}
    return len(seps) <= 1


# Between two characters of a number: nothing, a space, or one of . / - _ with a space either side.
_S = r"(?:[ ]?[./\-_][ ]?|[ ])?"
_I = re.IGNORECASE

# Particles and titles for names: "M. Jean-Baptiste de La Fontaine", "Mme Lefèvre-Dubois".
_NAME = r"[A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ]+(?:[-'’][A-ZÀ-ÖØ-Þ]?[a-zà-öø-ÿ]+)*"
_PARTICLE = r"(?:d['’]|de\s+la\s+|de\s+|du\s+|des\s+|le\s+|la\s+|van\s+|von\s+|ben\s+)"
_FULL_NAME = rf"{_NAME}(?:\s+{_PARTICLE}?{_NAME}){{0,3}}"
_TITLE = r"(?:M\.|Mme|Mlle|Mr|Mrs|Ms|Monsieur|Madame|Mademoiselle|Maître|Me|Dr|Docteur|Pr)"

_MONTHS = ("janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|"
           "décembre|decembre|january|february|march|april|may|june|july|august|september|october|november|"
           "december|janv|févr|fevr|avr|juil|sept|oct|nov|déc|dec|jan|feb|mar|apr|jun|jul|aug|sep")
_YEAR = r"(?:19|20)\d{2}"
# 12/03/1985, 12.03.85, 12 / 03 / 1985, 12 03 1985, 12031985, 1985-03-12 (ISO), 12 mars 1985, 1er mars 85,
# March 12, 1985.
_DATE = (rf"(?:\d{{1,2}} ?[/.\-] ?\d{{1,2}} ?[/.\-] ?(?:{_YEAR}|\d{{2}})(?!\d)"
         rf"|{_YEAR} ?[/.\-] ?\d{{1,2}} ?[/.\-] ?\d{{1,2}}(?!\d)"
         rf"|\d{{1,2}} \d{{1,2}} {_YEAR}(?!\d)|(?:0[1-9]|[12]\d|3[01])(?:0[1-9]|1[0-2]){_YEAR}(?!\d)"
         rf"|(?:1er|premier|\d{{1,2}})(?:er|st|nd|rd|th)? (?:{_MONTHS})\.?,? (?:{_YEAR}|\d{{2}}(?!\d))"
         rf"|(?:{_MONTHS})\.? \d{{1,2}}(?:st|nd|rd|th)?,? {_YEAR})")
_STREET = (r"rue|avenue|av\.|boulevard|bd|place|allée|allee|impasse|chemin|route|quai|cours|square|"
           r"résidence|residence|lotissement|voie|sentier|passage|faubourg|cité|cite|hameau|lieu-dit|lieu dit|"
           r"street|st\.|road|rd\.|lane|drive")

# Words that end a street name ("12 rue des Lilas à Lyon": the street stops before "à").
_STOP = (r"(?:à|et|depuis|pour|avec|au|aux|en|dans|chez|mais|où|ou|qui|que|il|elle|ils|elles|on|est|sont|a|"
         r"ont|since|and|in|at|for|with|tél|tel)")

# An e-mail address spelled out on the phone, as a transcript writes it: "julien point schaller arobase
# example point org", "j tiret martin at orange dot fr". "at" alone is an English word: the address must
# end with a spelled dot and a domain ending.
_SPELLED_SEP = r"(?:point|tiret(?:\s+(?:du\s+)?bas)?|underscore|dot|dash|hyphen)"
_SPELLED_EMAIL = (rf"\b[\w\-]+(?:\s+{_SPELLED_SEP}\s+[\w\-]+)*\s+(?:arobase|arrobase|at)\s+[\w\-]+"
                  rf"(?:\s+{_SPELLED_SEP}\s+[\w\-]+)*?\s+(?:point|dot)\s+[a-z]{{2,6}}\b")

# Capitalised words that are not surnames (acronyms of the trade), before a capitalised word.
_CAPS_WORDS = r"(?:IBAN|RIB|BIC|SMS|CB|EDF|GDF|CAF|CPAM|MDPH|RSA|TVA|SIRET|SIREN|URSSAF|SNCF|RATP|PEA|PEL|CEL|LEP|" \
              r"ATTENTION|URGENT|NB|PS|OK|RDV|TEL|TÉL|FAX|RAS|CDI|CDD|MAJ)"

# Who speaks in a transcript without being a person's name.
_ROLES = (r"(?:Conseiller|Conseillère|Client|Cliente|Agent|Agente|Membre|Adhérent|Adhérente|Assuré|Assurée|"
          r"Opérateur|Opératrice|Assistant|Assistante|Utilisateur|Utilisatrice|Système|Advisor|Customer|User|"
          r"System|Bot|Note|Objet|Motif|Date|Rappel|Remarque|Important|Attention|Résumé|Tél|Email|Adresse|"
          r"Nouvelle|Nouveau|Numéro|Contrat|Dossier|Sinistre|Question|Réponse|Answer|Summary|"
          # Form labels: "Contact : …" is a field, not a speaker.
          r"Contact|Téléphone|Portable|Mobile|Mail|Courriel|Phone|Address|Nom|Prénom|Name|Sujet|Subject)")

# Number, street type, up to six words of street name, then maybe the postcode and a capitalised city.
POSTAL_ADDRESS = re.compile(rf"\b\d{{1,4}}(?:\s?(?i:bis|ter))?,?\s+(?i:{_STREET})\s+[\w'’\-]+"
                            rf"(?:\s+(?!(?i:{_STOP})\b)[\w'’\-]+){{0,5}}"
                            rf"(?:,?\s+\d{{5}}\s+{_NAME}(?:[\s\-]{_NAME})*)?")
# The street first and its number after ("rue des Lilas, 12", "avenue Foch n° 8 bis"), or a lieu-dit,
# which has no number ("lieu-dit Les Granges", "au lieu dit la Borde, 24560 Issigeac").
_STREET_WORD = rf"(?!(?i:{_STOP})\b)[\w'’\-]+"
_STREET_FIRST = re.compile(rf"\b(?i:{_STREET})\s+{_STREET_WORD}(?:\s+{_STREET_WORD}){{0,5}}?,?\s+"
                           rf"(?i:n°\s?|no\s|numéro\s)?\d{{1,4}}(?:\s?(?i:bis|ter))?\b"
                           rf"(?:,?\s+\d{{5}}\s+{_NAME}(?:[\s\-]{_NAME})*)?")
_LIEU_DIT = re.compile(rf"\b(?i:lieu[\s-]dit)\s+(?:(?i:les|le|la|l['’])\s*)?[\w'’\-]+"
                       rf"(?:\s+(?:(?i:des|du|de|la|les)\s+)?[A-ZÀ-ÖØ-Þ][\w'’\-]+)*(?:,?\s+\d{{5}}\s+{_NAME}(?:[\s\-]{_NAME})*)?")

# An e-mail address however its "@" and dots are written: "x@y.fr", "x @ y . fr", "x at y.fr",
# "x arobase y point fr", "j point roy at mail dot com" ("(at)", "[dot]", "＠" are "@" and "." in the
# normalised view). "at" alone is an English word: a spelled "at" needs a domain with a dot after it.
_DOT = r"(?:\s?\.\s?|\s+(?:point|dot)\s+)"
_LOCAL_SEP = rf"(?:\.|\s+{_SPELLED_SEP}\s+)"
_EMAIL_WRITTEN = re.compile(rf"(?<![\w.+\-])[\w+\-]+(?:{_LOCAL_SEP}[\w+\-]+)*\s?@\s?[\w\-]+(?:{_DOT}[\w\-]+)*"
                            rf"{_DOT}[a-z]{{2,24}}\b", _I)
_EMAIL_SAID = re.compile(rf"(?<![\w.+\-])[\w+\-]+(?:{_LOCAL_SEP}[\w+\-]+)*\s+(?:arobase|arrobase|at)\s+"
                         rf"[\w\-]+(?:{_DOT}[\w\-]+)*{_DOT}[a-z]{{2,6}}\b", _I)

# Numbers, in any grouping (``_S`` between any two characters), validated by their check digits.
_IBAN = re.compile(rf"(?<![\w])[A-Z]{_S}[A-Z]{_S}\d{_S}\d(?:{_S}[A-Z0-9]){{11,30}}", _I)
# Every country's IBAN is mostly digits (ISO 13616: the check digits and a BBAN of at least 11 characters,
# most of them digits; the Dutch, with four letters, still has 12 digits). A run of words such as "du
# 10/10/2025. Budget serré" fits the loose grouping of ``_IBAN`` and fails the check digits; with fewer
# than ten digits it is not kept as a mistyped IBAN either.
_IBAN_MIN_DIGITS = 10
_RIB = re.compile(rf"(?<![\w])\d(?:{_S}\d){{9}}(?:{_S}[A-Z0-9]){{11}}{_S}\d{_S}\d(?![\w])", _I)
_NIR = re.compile(rf"(?<![\w])[1-478](?:{_S}\d){{4}}{_S}(?:\d{_S}\d|2{_S}[AB])(?:{_S}\d){{8}}(?!\d)", _I)
_CARD = re.compile(rf"(?<![\w])[2-6](?:{_S}\d){{12,18}}(?!\d)")
# French numbers (0X XX XX XX XX in any grouping, +33 X…, (+33) X…, 0033…, +33 (0)X…), then other
# international ones.
# Not a piece of a longer number: no digit one separator before or after ("2 80 05 69 123 456 23").
_CC33 = r"(?:\((?:\+|00) ?33\)|(?:\+|00)" + _S + "33)"
_PHONE_FR = re.compile(rf"(?<![\w+])(?<!\d[ ./\-])(?:{_CC33}{_S}(?:\(0\){_S}|0{_S})?|0{_S})[1-9](?:{_S}\d){{8}}"
                       rf"(?![ ./\-]?\d)")
_PHONE_INTL = re.compile(r"(?<![\w+])\+(?!33)[1-9]\d{0,2}(?:[ .\-/]?\(?\d{1,4}\)?){2,5}\d(?!\d)")
_PHONE_CONTEXT = ("tél", "tel", "téléphone", "telephone", "portable", "mobile", "joindre", "appeler", "phone",
                  "numéro", "numero", "call", "rappeler", "fixe", "whatsapp", "sms")
# Plates: SIV (AB-123-CD) in capitals with a space or dash, in any case with a dash or nothing, in lower
# case with spaces near a context word; FNI, before 2009 (1234 AB 75, 12 ABC 2A).
_LETTER = "[A-HJ-NP-TV-Z]"
_PLATE_CONTEXT = ("immatricul", "plaque", "véhicule", "vehicule", "voiture", "plate", "car ", "moto", "scooter")

RECOGNIZERS: tuple[Recognizer, ...] = (
    Recognizer(EMAIL, _EMAIL_WRITTEN, 0.9),
    Recognizer(EMAIL, _EMAIL_SAID, 0.85),
    Recognizer(IBAN, _IBAN, 0.3, validate=checksums.iban_valid, context=("iban", "rib", "compte"),
               plausible=lambda v: sum(c.isdigit() for c in v) >= _IBAN_MIN_DIGITS),
    Recognizer(IBAN, _RIB, 0.3, validate=checksums.rib_valid, context=("iban", "rib", "compte")),
    Recognizer(NIR, _NIR, 0.3, validate=checksums.nir_valid,
               context=("sécurité sociale", "securite sociale", "sécu", "secu", "nir", "insee", "social security")),
    Recognizer(CARD, _CARD, 0.3, validate=checksums.card_valid,
               context=("carte", "cb", "card", "visa", "mastercard", "amex", "american express")),
    Recognizer(PHONE, _PHONE_FR, 0.75, validate=phone_layout, valid_score=0.8, context=_PHONE_CONTEXT),
    Recognizer(PHONE, _PHONE_INTL, 0.6, context=_PHONE_CONTEXT),
    Recognizer(PLATE, re.compile(rf"\b{_LETTER}{{2}}[ \-.]?\d{{3}}[ \-.]?{_LETTER}{{2}}\b"), 0.6,
               context=_PLATE_CONTEXT),
    Recognizer(PLATE, re.compile(rf"\b{_LETTER}{{2}}[-.]?\d{{3}}[-.]?{_LETTER}{{2}}\b", _I), 0.55,
               context=_PLATE_CONTEXT),
    Recognizer(PLATE, re.compile(rf"\b{_LETTER}{{2}} \d{{3}} {_LETTER}{{2}}\b", _I), 0.3, context=_PLATE_CONTEXT),
    Recognizer(PLATE, re.compile(r"\b\d{1,4}[ \-]?[A-Z]{1,3}[ \-]?(?:\d{2}|2[AB]|97\d)\b"), 0.55,
               context=_PLATE_CONTEXT),
    Recognizer(PLATE, re.compile(r"\b\d{1,4}[ \-]?[A-Z]{1,3}[ \-]?(?:\d{2}|2[AB]|97\d)\b", _I), 0.2,
               context=_PLATE_CONTEXT),
    Recognizer(ADDRESS, POSTAL_ADDRESS, 0.9),
    Recognizer(ADDRESS, _STREET_FIRST, 0.85),
    Recognizer(ADDRESS, _LIEU_DIT, 0.85),
    Recognizer(BIRTHDATE, re.compile(rf"\b(?:né|née|nés|nées|né\(e\)|naissance|born|birth|dob|d\.o\.b\.?|birthday|"
                                     rf"anniversaire|ddn)(?![\w])[^\d\n]{{0,16}}({_DATE})", _I), 0.85, group=1),
    Recognizer(PERSON, re.compile(rf"\b{_TITLE}\s+({_FULL_NAME})"), 0.8, group=1),
    # The speaker of a transcript line: "Gina: I lost my job", "Jean Dupont : d'accord" (roles are not names).
    Recognizer(PERSON, re.compile(rf"(?m)^[ \t]*((?!{_ROLES}\b){_NAME}(?:[ \t]+{_NAME})?)[ \t]*:(?!//)"), 0.7, group=1),
    # A word spelled letter by letter, as a name or an address is spelled on the phone: "B-A-R-R-È-R-E",
    # "A, U, B, R, Y", "J-P-B-O-N-N-A-R-D-5-0" (four characters or more, capitals or digits, one apart).
    Recognizer(PERSON, re.compile(r"(?<![\w-])[A-ZÀ-ÖØ-Þ](?:(?:-|,? )[A-ZÀ-ÖØ-Þ0-9]){3,}(?![\w-])"), 0.7),
    # Surname in capitals then given name, as forms write it: "VASSEUR Aymeric", "LE BIHAN Thuy".
    Recognizer(PERSON, re.compile(rf"\b((?!{_CAPS_WORDS}\b)[A-ZÀ-ÖØ-Þ]{{2,}}(?:[ \-'’][A-ZÀ-ÖØ-Þ]{{2,}})*\s+{_NAME})"),
               0.75, group=1),
)


# A date of birth asked in one turn of a call and answered alone in the next ("22/09/2003.", "Quatorze mars
# soixante-douze."): the question carries the context word the answer lacks (``detector.answered_birthdates``).
BIRTH_QUESTION = re.compile(r"\b(?:naissance|née?s?|born|birth|dob|birthday|ddn)\b", _I)
ANSWERED_BIRTHDATE = Recognizer(BIRTHDATE, re.compile(rf"(?<![\d/.\-])({_DATE})", _I), 0.85, group=1)


def tenant_recognizer(kind: str, regex: str, score: float = 0.9) -> Recognizer:
    """A tenant's identifier format, e.g. ``("CONTRACT", r"\\bCTR-\\d{6}\\b")``."""
    if not re.fullmatch(r"[A-Z][A-Z0-9_]{1,30}", kind):
        raise ValueError("a pattern's type is 2-31 upper-case letters, digits or _")
    return Recognizer(kind, re.compile(regex), score)
