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

    def find(self, text: str) -> Iterable[Span]:
        """A match that passes its check digits scores ``valid_score``. One that fails is dropped,
        unless a context word says what it is ("sécurité sociale …"): then it is a mistyped
        identifier, still personal data, and scores as a bare match with context."""
        lowered: str | None = None
        for m in self.pattern.finditer(text):
            start, end = m.span(self.group)
            score = self.score
            valid = False
            if self.validate is not None:
                valid_end = _valid_end(text, start, end, self.validate)
                if valid_end is not None:
                    end, score, valid = valid_end, self.valid_score, True
            if self.context and not valid:
                lowered = lowered if lowered is not None else text.lower()
                before = lowered[max(0, m.start() - CONTEXT_WINDOW) : m.start()]
                if any(word in before for word in self.context):
                    score = min(1.0, score + CONTEXT_BOOST)
                elif self.validate is not None:
                    continue
            elif self.validate is not None and not valid:
                continue
            yield Span(start, end, self.kind, score)


def _valid_end(text: str, start: int, end: int, validate: Callable[[str], bool]) -> int | None:
    """Where a value that passes its check digits ends: the whole match, or the match without its
    last one or two space-separated groups (a pattern greedy enough for spaced formats may take in
    the next word: "FR76… ok")."""
    for _ in range(3):
        if validate(text[start:end]):
            return end
        cut = text.rfind(" ", start, end)
        if cut <= start:
            return None
        end = cut
    return None


_SEP = r"[ \u00a0.\-]?"
_I = re.IGNORECASE

# Particles and titles for names: "M. Jean-Baptiste de La Fontaine", "Mme Lefèvre-Dubois".
_NAME = r"[A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ]+(?:[-'’][A-ZÀ-ÖØ-Þ]?[a-zà-öø-ÿ]+)*"
_PARTICLE = r"(?:d['’]|de\s+la\s+|de\s+|du\s+|des\s+|le\s+|la\s+|van\s+|von\s+|ben\s+)"
_FULL_NAME = rf"{_NAME}(?:\s+{_PARTICLE}?{_NAME}){{0,3}}"
_TITLE = r"(?:M\.|Mme|Mlle|Mr|Mrs|Ms|Monsieur|Madame|Mademoiselle|Maître|Me|Dr|Docteur|Pr)"

_MONTHS = ("janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|"
           "décembre|decembre")
_DATE = rf"(?:\d{{1,2}}[/.\-]\d{{1,2}}[/.\-](?:19|20)\d{{2}}|(?:1er|\d{{1,2}})\s+(?:{_MONTHS})\s+(?:19|20)\d{{2}})"
_STREET = (r"rue|avenue|av\.|boulevard|bd|place|allée|allee|impasse|chemin|route|quai|cours|square|"
           r"résidence|residence|lotissement|voie|sentier|passage|faubourg|cité|cite|hameau|lieu-dit")

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
          r"Nouvelle|Nouveau|Numéro|Contrat|Dossier|Sinistre|Question|Réponse|Answer|Summary)")

# Number, street type, up to six words of street name, then maybe the postcode and a capitalised city.
POSTAL_ADDRESS = re.compile(rf"\b\d{{1,4}}(?:\s?(?i:bis|ter))?,?\s+(?i:{_STREET})\s+[\w'’\-]+"
                            rf"(?:\s+(?!(?i:{_STOP})\b)[\w'’\-]+){{0,5}}"
                            rf"(?:,?\s+\d{{5}}\s+{_NAME}(?:[\s\-]{_NAME})*)?")

RECOGNIZERS: tuple[Recognizer, ...] = (
    Recognizer(EMAIL, re.compile(r"\b[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)*\.[a-z]{2,24}\b", _I), 0.9),
    Recognizer(EMAIL, re.compile(_SPELLED_EMAIL, _I), 0.85),
    Recognizer(IBAN, re.compile(r"\b[A-Z]{2}\d{2}(?:[ \u00a0]?[A-Z0-9]{4}){2,7}(?:[ \u00a0]?[A-Z0-9]{1,3})?\b", _I),
               0.3, validate=checksums.iban_valid, context=("iban", "rib", "compte")),
    Recognizer(NIR, re.compile(r"\b[1-478][ \u00a0]?\d{2}[ \u00a0]?(?:0[1-9]|1[0-2]|[2-9]\d)[ \u00a0]?(?:\d{2}|2[AB])"
                               r"[ \u00a0]?\d{3}[ \u00a0]?\d{3}[ \u00a0]?\d{2}\b", _I),
               0.3, validate=checksums.nir_valid, context=("sécurité sociale", "securite sociale", "nir", "insee")),
    Recognizer(CARD, re.compile(r"\b(?:[3-6]\d{3})(?:[ \-]?\d{4}){2}[ \-]?\d{1,7}\b"),
               0.3, validate=checksums.luhn_valid, context=("carte", "cb", "card", "visa", "mastercard")),
    Recognizer(CARD, re.compile(r"\b3[47]\d{2}[ \-]?\d{6}[ \-]?\d{5}\b"), 0.3, validate=checksums.luhn_valid),
    # French numbers (0X XX XX XX XX, +33 X XX…, 0033…) then other international ones (+CC …).
    Recognizer(PHONE, re.compile(r"(?<![\w+])(?:(?:\+|00)33[ \u00a0.\-]?\(?0?\)?[ \u00a0.\-]?|0)[1-9]"
                                 rf"(?:{_SEP}\d{{2}}){{4}}\b"), 0.75,
               context=("tél", "tel", "téléphone", "telephone", "portable", "mobile", "joindre", "appeler")),
    Recognizer(PHONE, re.compile(r"(?<![\w+])\+(?!33)[1-9]\d{0,2}(?:[ \u00a0.\-]?\(?\d{1,4}\)?){2,5}\d\b"), 0.6,
               context=("tél", "tel", "téléphone", "telephone", "portable", "mobile", "phone")),
    Recognizer(PLATE, re.compile(r"\b[A-HJ-NP-TV-Z]{2}[ \-]?\d{3}[ \-]?[A-HJ-NP-TV-Z]{2}\b"), 0.6,
               context=("immatricul", "plaque", "véhicule", "vehicule", "voiture")),
    Recognizer(ADDRESS, POSTAL_ADDRESS, 0.9),
    Recognizer(BIRTHDATE, re.compile(rf"\b(?:né|née|nés|date de naissance|naissance|born)\b[^\d\n]{{0,12}}({_DATE})",
                                     _I), 0.85, group=1),
    Recognizer(PERSON, re.compile(rf"\b{_TITLE}\s+({_FULL_NAME})"), 0.8, group=1),
    # The speaker of a transcript line: "Gina: I lost my job", "Jean Dupont : d'accord" (roles are not names).
    Recognizer(PERSON, re.compile(rf"(?m)^[ \t]*((?!{_ROLES}\b){_NAME}(?:[ \t]+{_NAME})?)[ \t]*:(?!//)"), 0.7, group=1),
    # Surname in capitals then given name, as forms write it: "VASSEUR Aymeric", "LE BIHAN Thuy".
    Recognizer(PERSON, re.compile(rf"\b((?!{_CAPS_WORDS}\b)[A-ZÀ-ÖØ-Þ]{{2,}}(?:[ \-'’][A-ZÀ-ÖØ-Þ]{{2,}})*\s+{_NAME})"),
               0.75, group=1),
)


def tenant_recognizer(kind: str, regex: str, score: float = 0.9) -> Recognizer:
    """A tenant's identifier format, e.g. ``("CONTRACT", r"\\bCTR-\\d{6}\\b")``."""
    if not re.fullmatch(r"[A-Z][A-Z0-9_]{1,30}", kind):
        raise ValueError("a pattern's type is 2-31 upper-case letters, digits or _")
    return Recognizer(kind, re.compile(regex), score)
