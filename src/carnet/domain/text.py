"""Text normalisation, tokens and overlap for French and English call-center notes. Pure, no I/O.

Three consumers share these functions, and each needs the *same* answer for the same text:

- reconcile (near-duplicate test, ``jaccard``) compares a new fact with stored ones;
- the sparse encoder turns content tokens into keyed hashes (so a word and its stem must
  always give the same token, or recall silently misses);
- context assembly budgets prompts with ``estimate_tokens``.

The pipeline is ``normalize`` (NFKC, casefold, one apostrophe, one dash) → ``tokenize``
(elisions split off, hyphenated words kept whole, numbers and units canonical) → drop
stopwords → Snowball stem (French or English, chosen per text) → accent fold. Accents are
folded *after* stemming because the French Snowball rules read them.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections.abc import Iterable, Set
from functools import lru_cache
from typing import Literal

import snowballstemmer

Lang = Literal["fr", "en"]

# One kind of apostrophe, one kind of dash.
_ONE_KIND = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "´": "'",
                           "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "−": "-"})
_OTHER_KIND = re.compile("[" + "".join(map(chr, _ONE_KIND)) + "]")
_LIGATURES = str.maketrans({"œ": "oe", "æ": "ae", "ø": "o", "ł": "l", "đ": "d"})
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def normalize(text: str) -> str:
    """NFKC, casefold, one kind of apostrophe/dash, single spaces. Accents are kept."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if _OTHER_KIND.search(text):  # a scan is cheaper than a translation, and most notes have none
        text = text.translate(_ONE_KIND)
    return " ".join(text.split())  # whitespace as str.isspace reads it (NBSP too), single, no ends


def fold_accents(text: str) -> str:
    """Drop combining marks (é→e, ç→c) and split ligatures (œ→oe): the matching form. Character by
    character (``_folded``): a canonical decomposition is one character's, and the marks it drops are the
    only characters canonical ordering moves, so the whole text folds as its characters do."""
    return text if text.isascii() else _NON_ASCII.sub(_folded, text)


@lru_cache(maxsize=4096)
def _folded_char(ch: str) -> str:
    decomposed = unicodedata.normalize("NFD", ch.translate(_LIGATURES))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _folded(match: re.Match[str]) -> str:
    return _folded_char(match.group())


def fold(text: str) -> str:
    """``normalize`` then ``fold_accents``: what regex rules and exact comparisons read."""
    return fold_accents(normalize(text))


# --- tokenizer -------------------------------------------------------------------------

_CURRENCY = {
    "€": "eur", "eur": "eur", "euro": "eur", "euros": "eur",
    "$": "usd", "usd": "usd", "dollar": "usd", "dollars": "usd",
    "£": "gbp", "gbp": "gbp",
    "%": "pct", "km": "km", "m2": "m2", "m²": "m2",
}  # fmt: skip
_ORDINAL = r"(?:er|re|ère|ere|e|è|ème|eme|ième|ieme|nd|nde|st|rd|th)"
_UNIT = r"(?:€|eur|euros?|\$|usd|dollars?|£|gbp|%|km|m2|m²)"

_MONTHS = {
    "janvier": 1, "fevrier": 2, "février": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7,
    "aout": 8, "août": 8, "septembre": 9, "octobre": 10, "novembre": 11, "decembre": 12, "décembre": 12,
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12,
}  # fmt: skip
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
# Small number words become digits so "deux enfants" and "2 enfants" meet. "un"/"une"/"one" stay
# words: they are articles and pronouns far more often than counts.
_NUMBER_WORDS = {
    "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8, "neuf": 9, "dix": 10,
    "two": 2, "three": 3, "four": 4, "five": 5, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "deuxième": 2, "troisième": 3, "quatrième": 4, "cinquième": 5, "second": 2, "third": 3,
}  # fmt: skip

# Order matters: the first alternative that matches at a position wins.
_TOKEN = re.compile(
    rf"""
    (?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
  | (?P<iban>\b[a-z]{{2}}\d{{2}}(?:\ ?[a-z0-9]{{4}}){{2,7}}(?:\ ?[a-z0-9]{{1,3}})?\b)
  | (?P<phone>(?:\+33\ ?|0033\ ?|\b0)[1-9](?:[\ .-]?\d{{2}}){{4}})(?!\d)
  | \b(?P<dd>\d{{1,2}})(?:/(?P<dm>\d{{1,2}})(?:/(?P<dy>\d{{2,4}}))?|[.-](?P<dm2>\d{{1,2}})[.-](?P<dy2>\d{{4}}))\b
  | \b(?P<mday>\d{{1,2}})(?:er|st|nd|rd|th)?\ (?:of\ )?(?P<mname>{_MONTH})\b(?:\ (?P<myear>\d{{4}}))?
  | (?P<time>\b\d{{1,2}}h\d{{0,2}})\b
  | (?P<num>[1-9]\d{{0,2}}(?:\ \d{{3}})+(?![\d.,])|[1-9]\d{{0,2}}(?:\.\d{{3}})+(?![\d,])|\d+(?:[.,]\d+)?)
      (?:\ ?(?P<kilo>k)(?=\ ?{_UNIT}|\b))?
      (?:(?P<ord>{_ORDINAL})\b|\ ?(?P<unit>{_UNIT})(?!\w))?
  | (?P<cur>[€$£%])
  | (?P<elision>\b(?:l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu)')
  | (?P<word>\w+(?:-\w+)*)
    """,
    re.VERBOSE,
)

# Inverted subject pronouns are split off a hyphenated word: "habite-t-il" -> "habite", "t", "il";
# object pronouns are not ("rendez-vous" must stay whole).
_CLITIC_TAIL = re.compile(r"(?:-t)?-(?:il|elle|on|ils|elles|je|tu)$")


def _number(raw: str, kilo: bool) -> str:
    """'1 200' / '1.200' -> '1200'; '1,5' -> '1.5'; '2k' -> '2000'. Canonical, so amounts compare."""
    compact = re.sub(r"[ \u00a0\u202f]", "", raw)
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+", compact):
        compact = compact.replace(".", "")
    value = float(compact.replace(",", "."))
    if kilo:
        value *= 1000
    return str(int(value)) if value.is_integer() else f"{value:g}"


def _number_tokens(m: re.Match[str]) -> list[str]:
    num = _number(m.group("num"), bool(m.group("kilo")))
    if m.group("ord"):
        return [f"{num}e"]  # 7e, 7ème, 7th -> 7e: one ordinal form for both languages
    unit = m.group("unit")
    return [num, _CURRENCY[unit]] if unit else [num]


def _date_tokens(day: str, month: int, year: str | None) -> list[str]:
    """'3 mars 2024', '03/03/2024' -> '03-03', '2024': one form, year apart (often omitted)."""
    d = int(day)
    if not (1 <= d <= 31 and 1 <= month <= 12):
        return [day, str(month)] + ([year] if year else [])
    tokens = [f"{month:02d}-{d:02d}"]
    if year:
        tokens.append(year if len(year) == 4 else f"20{year}")
    return tokens


def _word_tokens(word: str) -> list[str]:
    if word in _NUMBER_WORDS:
        value = _NUMBER_WORDS[word]
        return [f"{value}e" if word.endswith(("ième", "ieme", "ond", "ird")) else str(value)]
    tail = _CLITIC_TAIL.search(word)
    if tail and tail.start() > 0:
        return [word[: tail.start()], *[p for p in tail.group(0).split("-") if p]]
    return [word]


def _match_tokens(m: re.Match[str]) -> list[str]:
    kind = m.lastgroup
    if kind == "phone":
        digits = re.sub(r"\D", "", m.group("phone"))
        return ["0" + digits[-9:]]  # +33 6.. / 0033 6.. / 06.. -> 06..
    if kind == "iban":
        return [m.group("iban").replace(" ", "")]
    if m.group("dd") is not None:
        month = m.group("dm") or m.group("dm2")
        return _date_tokens(m.group("dd"), int(month), m.group("dy") or m.group("dy2"))
    if m.group("mday") is not None:
        return _date_tokens(m.group("mday"), _MONTHS[m.group("mname")], m.group("myear"))
    if kind in ("email", "time", "elision"):
        return [m.group(kind)]
    if kind == "cur":
        return [_CURRENCY[m.group("cur")]]
    if m.group("num") is not None:
        return _number_tokens(m)
    return _word_tokens(m.group("word"))


def tokenize(text: str) -> list[str]:
    """Surface tokens of ``normalize(text)``, accents kept.

    Elisions become their own token (``l'assurance`` → ``l'``, ``assurance``) so stopword
    removal drops them; hyphenated words stay whole (``après-midi``, ``bonus-malus``);
    numbers are canonical (``1 200``→``1200``, ``2k€``→``2000 eur``, ``750euros``→``750 eur``,
    ``7ème``→``7e``); French phone numbers collapse to ten digits; emails and dates stay whole.
    """
    tokens: list[str] = []
    for m in _TOKEN.finditer(normalize(text)):
        tokens.extend(_match_tokens(m))
    return tokens


# --- stopwords ---------------------------------------------------------------------------


def _words(block: str) -> list[str]:
    """Word lists are kept as readable text blocks."""
    return block.split()


FRENCH_STOPWORDS: frozenset[str] = frozenset(
    _words(
        """
        l' d' j' m' n' s' t' c' qu' jusqu' lorsqu' puisqu' le la les un une des du de au aux et ou à a en
        dans par pour sur sous avec sans chez vers entre ce cet cette ces ça cela ceci il elle ils elles on
        je tu nous vous me te se moi toi lui leur leurs eux son sa ses mon ma mes ton ta tes notre nos votre
        vos y qui que quoi dont où ne pas plus est sont été être étant sera seront était étaient suis es
        sommes êtes soit ai as avons avez ont avait avaient aura auront eu ayant fait faire très aussi mais
        donc or ni car si comme tout tous toute toutes même bien encore déjà alors quand puis ici là cas
        chaque t m. mme mlle monsieur madame client cliente adhérent adhérente sociétaire
        """
    )
)

ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    _words(
        """
        the a an and or of to in on at by for with from as into over about up out off than then is are was
        were be been being am has have had having do does did done will would shall should can could may
        might must he she they it we you i me him her them us his hers their its our your my this that these
        those there here which who whom whose what when where why how not no nor but so if also very just
        too all any each both some such own same other more most doesn don didn isn aren wasn weren won t s
        ll ve re mr mrs ms miss customer client member
        """
    )
)

# Function words in one language that are content words in the other ("car" is "because" in
# French and a vehicle in English; "son" is "his" and a son). They neither vote for a language
# nor get dropped from a text of the other language.
_AMBIGUOUS = frozenset({"car", "son", "an", "pain", "can", "ten", "sous", "pour", "sale", "chat", "but"})
_FRENCH_ONLY = FRENCH_STOPWORDS - ENGLISH_STOPWORDS - _AMBIGUOUS
_ENGLISH_ONLY = ENGLISH_STOPWORDS - FRENCH_STOPWORDS - _AMBIGUOUS
_STOPWORDS: dict[Lang, frozenset[str]] = {
    # French notes quote English words and the reverse: each list adds the other's
    # unambiguous function words.
    "fr": FRENCH_STOPWORDS | _ENGLISH_ONLY,
    "en": ENGLISH_STOPWORDS | _FRENCH_ONLY,
}


def is_stopword(token: str, lang: Lang) -> bool:
    """Function words of the text's language, plus the other language's unambiguous ones."""
    return token in _STOPWORDS[lang]


def detect_language(tokens: Iterable[str]) -> Lang:
    """French unless English stopwords or English-only letters clearly outnumber French cues.

    Ties (short notes such as "budget max 600 euros") go to French: the service's callers are
    French call centers, and one fixed answer keeps stems stable for the same words.
    """
    fr = en = 0
    for token in tokens:
        if token in _FRENCH_ONLY or any(ch in token for ch in "éèêàçùûôîœ"):
            fr += 1
        elif token in _ENGLISH_ONLY:
            en += 1
    return "en" if en > fr else "fr"


# --- stemming ----------------------------------------------------------------------------

_STEMMERS = {"fr": snowballstemmer.stemmer("french"), "en": snowballstemmer.stemmer("english")}
_STEM_LOCK = threading.Lock()  # Snowball stemmer objects keep a cursor: not thread-safe


def stem(token: str, lang: Lang) -> str:
    """Snowball stem of one token, accent-folded. Numbers, codes, dates are returned folded as is."""
    if not _STEMMABLE.fullmatch(token):
        return fold_accents(token)
    with _STEM_LOCK:
        stemmed = [_STEMMERS[lang].stemWord(part) for part in token.split("-")]
    return fold_accents("".join(stemmed))


_STEMMABLE = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
# Call-center vocabulary is small and this runs on every write and query, so stems are cached.
# Only pseudonymized text goes through the cache (names, emails, IBANs are placeholders there):
# a process-wide cache must not become a store of personal data. Clear text uses ``cache=False``.
_cached_stem = lru_cache(maxsize=65536)(stem)


def content_terms(text: str, *, cache: bool = True) -> list[str]:
    """Stemmed, folded content tokens in order, repeats kept (term frequencies for BM25).

    ``cache=False`` for clear (decrypted) text, see ``_cached_stem``.
    """
    tokens = tokenize(text)
    lang = detect_language(tokens)
    stemmer = _cached_stem if cache else stem
    return [stemmer(t, lang) for t in tokens if not is_stopword(t, lang)]


def content_tokens(text: str, *, cache: bool = True) -> frozenset[str]:
    """The set of ``content_terms``: what Jaccard compares."""
    return frozenset(content_terms(text, cache=cache))


def jaccard(a: str | Set[str], b: str | Set[str]) -> float:
    """|A ∩ B| / |A ∪ B| over content tokens; accepts texts or precomputed token sets.

    Two texts with no content token at all are not evidence of sameness: 0.0.
    """
    sa = content_tokens(a) if isinstance(a, str) else a
    sb = content_tokens(b) if isinstance(b, str) else b
    union = len(sa | sb)
    return len(sa & sb) / union if union else 0.0


def same_text(a: str, b: str) -> bool:
    """Exact duplicate up to case, accents, spacing and final punctuation."""
    return exact_key(a) == exact_key(b)


def exact_key(text: str) -> str:
    """What two texts share when they are the same note (see ``same_text``)."""
    return fold(text).rstrip(" .!;…")


# --- LLM token estimate --------------------------------------------------------------------

_WORDS = re.compile(r"\w+|[^\w\s]")


def estimate_tokens(text: str) -> int:
    """Upper-leaning estimate of LLM tokens: ``max(chars / 3.5, 1.3 × words-and-symbols)``.

    Mistral's and e5's tokenizers spend ~1 token per 3.5–4 characters of French prose, more on
    numbers, codes and rare names (which the word term catches). Budgets are hard limits, so
    the estimate errs high rather than overflow a context window; exact counts would need
    the serving model's tokenizer on the hot path.
    """
    if not text:
        return 0
    units = len(_WORDS.findall(text))
    return max(1, math.ceil(max(len(text) / 3.5, 1.3 * units)))
