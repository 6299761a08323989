"""French statements moved to the third person: "J'ai déménagé à Lyon" → "Le membre a déménagé à Lyon."

Why: facts are read back inside a prompt, about one member, by an assistant that was not on the
call; "je" and "vous" there would be read as the assistant and the user. The existing scenarios and
the demo phrase facts as "Le membre …", and reconcile's slot rules read that phrasing.

Who is who depends on the speaker. In the member's mouth "je" is the member, "nous"/"on" the
household, "vous" the company (the advisor); in the advisor's, "je"/"nous"/"on" are the advisor and
"vous" is the member. The walk goes token by token: a subject pronoun becomes a noun phrase ("le
membre", "le conseiller", then "il" while the same one keeps speaking), the object pronouns before
the verb are dropped or turned reflexive, the one conjugated verb after it changes person
(``verbs``), and an object pronoun that meant the member is put back after the verb group as "le
membre" or "au membre" ("je vous envoie un devis" → "le conseiller envoie au membre un devis").
Possessives follow ("mon contrat" → "son contrat"; "Votre adresse est…" → "L'adresse du membre est…").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from carnet.domain.extraction_rules.french_words import capitalize_first, definite, elide, elides, possessive
from carnet.domain.extraction_rules.verbs import (
    AUXILIARIES,
    looks_first_plural,
    looks_second_plural,
    third_plural_from_we,
    third_singular,
)

MEMBER, ADVISOR = "member", "advisor"
_NOUN = {"member": "le membre", "advisor": "le conseiller", "household": "le foyer du membre"}

_TOKEN = re.compile(
    r"<[A-Z][A-Z0-9_]*_\d+>|(?:qu|jusqu|lorsqu|puisqu|[jmtslndc])['’](?=[\w<])|\w+(?:-\w+)*|\s+|.",
    re.IGNORECASE,
)
_CLITICS = frozenset("ne n' me m' te t' se s' le la les l' lui leur en y vous nous".split())
_PREPOSITIONS = frozenset(
    "à a chez pour avec sans par de d' contre envers vers selon entre auprès aupres sur sous que qu' et ou".split()
)
_ADVERBS = frozenset("pas plus jamais bien déjà deja encore aussi tout rien personnellement immédiatement "
                     "immediatement directement bientôt bientot toujours vite".split())
# Verbs whose object is indirect ("envoyer quelque chose au membre"); the others take it directly
# ("rappeler le membre").
_INDIRECT = ("envo", "transm", "adress", "dis", "dit", "dire", "propos", "confirm", "écri", "ecri", "accord",
             "offr", "vers", "expliqu", "conseill", "recommand", "demand", "signal", "précis", "precis", "indiqu",
             "communiqu", "garanti", "fourni", "remet", "remis", "renv", "octroi", "donn", "montr", "fai", "fer",
             "promi", "promet", "répond", "repond", "rembours")
# "je vous appelle parce que j'ai…": the reason is the fact.
_CALLING_BECAUSE = re.compile(
    r"^(?:je vous (?:appelle|contacte|téléphone|telephone)|j'appelle|je me permets de vous (?:appeler|contacter))"
    r"\s+(?:parce que|parce qu'|car|puisque|puisqu'|pour (?:vous )?(?:signaler|dire|informer|indiquer|prévenir|"
    r"prevenir)[^:]{0,40}:)\s*",
    re.IGNORECASE,
)
# The advisor reading the file aloud: what follows is the fact.
_ADVISOR_FRAME = re.compile(
    r"^(?:je (?:vois|constate|lis|note) (?:bien )?(?:que|qu')|je prends (?:bonne )?note (?:que|qu')|"
    r"(?:je vous |je )confirme (?:que|qu')|si je comprends bien,?|d'après (?:votre dossier|nos informations|"
    r"mon écran|le dossier),?|c'est noté,?|donc si je résume,?)\s*",
    re.IGNORECASE,
)
# "Ma femme et moi avons acheté…" → "Le membre et sa femme ont acheté…"
_AND_ME = re.compile(r"^(mon|ma|mes|notre|nos)\s+([\w-]+)\s+et moi(?:,\s*nous)?\s+(\S+)", re.IGNORECASE)
# What may follow a sentence-initial "Mon X" / "Votre X": the verb that ends the noun phrase.
_NP_END = frozenset(
    """
    est sont a ont va vont vient viennent doit doivent peut peuvent veut veulent était etait étaient etaient
    avait avaient sera seront aura auront serait aurait reste restent habite habitent travaille travaillent vit
    vivent commence commencent expire expirent arrive arrivent passe passent coûte coute coûtent s'élève
    s'eleve change changent date part ne n' se s' y lui c' qui , : ; ( - a-t-il
    """.split()
)

_FUTURE = re.compile(r"\w{2,}(?:ra|ront|rait|raient)$")


@dataclass(slots=True)
class _Walk:
    tokens: list[str]
    speaker: str
    named: set[str] = field(default_factory=set)
    last_subject: str | None = None

    def words(self, start: int) -> list[int]:
        return [i for i in range(start, len(self.tokens)) if self.tokens[i] and not self.tokens[i].isspace()]

    def low(self, i: int) -> str:
        return self.tokens[i].lower().replace("’", "'")


def rewrite_fr(sentence: str, speaker: str) -> str:
    """``sentence`` said by ``speaker`` (``MEMBER`` or ``ADVISOR``), as a third-person fact."""
    text = _CALLING_BECAUSE.sub("", sentence.strip()) if speaker == MEMBER else _ADVISOR_FRAME.sub("", sentence)
    text = _and_me(text.strip()) if speaker == MEMBER else text.strip()
    walk = _Walk(_TOKEN.findall(text), speaker)
    _possessive_subject(walk)
    i = 0
    while i < len(walk.tokens):
        i = _step(walk, i) + 1
    return _finish("".join(walk.tokens))


def _and_me(text: str) -> str:
    m = _AND_ME.match(text)
    if m is None:
        return text
    det, noun, verb = m.group(1).lower(), m.group(2), m.group(3)
    poss = {"mon": "son", "ma": "sa", "mes": "ses", "notre": possessive(noun), "nos": "ses"}[det]
    return f"le membre et {poss} {noun} {third_plural_from_we(verb)}{text[m.end():]}"


def _possessive_subject(walk: _Walk) -> None:
    """"Mon numéro de contrat est…" → "Le numéro de contrat du membre est…"."""
    words = walk.words(0)
    if len(words) < 3:
        return
    det = walk.low(words[0])
    owner = {MEMBER: ("mon", "ma", "mes", "notre", "nos"), ADVISOR: ("votre", "vos")}[walk.speaker]
    if det not in owner:
        return
    for n, k in enumerate(words[1:7], start=1):
        if walk.low(k) in _NP_END or _FUTURE.search(walk.low(k)) or (n > 1 and walk.tokens[k] in ",:;("):
            if n == 1:
                return
            noun = walk.tokens[words[1]]
            plural = det in ("mes", "vos", "nos")
            article = "la " if det == "ma" else definite(noun, plural=plural)
            if det == "ma" and elides(noun):
                article = "l'"
            walk.tokens[words[0]] = article.rstrip()
            if article.endswith("'"):
                walk.tokens[words[0] + 1] = ""
            end = words[n - 1]
            walk.tokens[end] += " du membre"
            walk.named.add("member")
            return


def _step(walk: _Walk, i: int) -> int:
    tok = walk.low(i)
    if tok.isspace() or not tok:
        return i
    if tok in ("je", "j'"):
        return _subject(walk, i, "1s", "member" if walk.speaker == MEMBER else "advisor")
    if tok in ("nous", "on") and _is_subject(walk, i, tok):
        person = "1p" if tok == "nous" else "3s"
        return _subject(walk, i, person, "household" if walk.speaker == MEMBER else "advisor")
    if tok in ("nous", "vous") and _company_after_chez(walk, i, tok):
        return i
    if tok == "vous":
        return _vous(walk, i)
    if tok in ("mon", "ma", "mes"):
        walk.tokens[i] = _case(walk.tokens[i], {"mon": "son", "ma": "sa", "mes": "ses"}[tok])
    elif tok in ("notre", "nos", "votre", "vos"):
        _other_possessive(walk, i, tok)
    elif tok == "moi":
        walk.tokens[i] = "lui"
    elif tok in ("me", "m'"):
        _object(walk, i, "member" if walk.speaker == MEMBER else "advisor")
    elif tok == "nous" and _after_preposition(walk, i):
        walk.tokens[i] = "le foyer" if walk.speaker == MEMBER else "l'établissement"
    return i


def _company_after_chez(walk: _Walk, i: int, tok: str) -> bool:
    """"chez nous" (advisor) and "chez vous" (member) name the company: the fact does not need it."""
    company = "nous" if walk.speaker == ADVISOR else "vous"
    before = [k for k in walk.words(0) if k < i]
    if tok != company or not before or walk.low(before[-1]) != "chez":
        return False
    walk.tokens[before[-1]] = ""
    walk.tokens[i] = ""
    return True


def _after_preposition(walk: _Walk, i: int) -> bool:
    before = [k for k in walk.words(0) if k < i]
    return bool(before) and walk.low(before[-1]) in _PREPOSITIONS


def _is_subject(walk: _Walk, i: int, tok: str) -> bool:
    after = _after_clitics(walk, i)
    if after is None:
        return False
    if tok == "on":
        return True
    prev = walk.words(0)
    before = [k for k in prev if k < i]
    if before and walk.low(before[-1]) in _PREPOSITIONS - {"que", "qu'", "et", "ou"}:
        return False
    return looks_first_plural(walk.tokens[after])


def _after_clitics(walk: _Walk, i: int) -> int | None:
    for k in walk.words(i + 1):
        if walk.low(k) not in _CLITICS:
            return k
    return None


def _vous(walk: _Walk, i: int) -> int:
    after = _after_clitics(walk, i)
    if after is not None and looks_second_plural(walk.tokens[after]):
        return _subject(walk, i, "2p", "advisor" if walk.speaker == MEMBER else "member")
    if _after_preposition(walk, i):
        walk.tokens[i] = "l'établissement" if walk.speaker == MEMBER else "le membre"
        return i
    _object(walk, i, "advisor" if walk.speaker == MEMBER else "member")
    return i


def _object(walk: _Walk, i: int, who: str) -> None:
    """An object pronoun before a verb: gone; the member comes back after the verb group."""
    walk.tokens[i] = ""
    if i + 1 < len(walk.tokens) and walk.tokens[i + 1].isspace():
        walk.tokens[i + 1] = ""
    if who == "member":
        _put_after_verb(walk, i, "member")


def _subject(walk: _Walk, i: int, person: str, who: str) -> int:
    noun = "il" if who == walk.last_subject and who in walk.named else _NOUN[who]
    walk.named.add(who)
    walk.last_subject = who
    walk.tokens[i] = noun
    if i + 1 < len(walk.tokens) and not walk.tokens[i + 1].isspace():
        walk.tokens[i] += " "  # "j'ai" was one word: "le membre a" is two
    pending: str | None = None
    last = i
    for k in walk.words(i + 1):
        low = walk.low(k)
        if low in _CLITICS:
            pending = _subject_clitic(walk, k, low, person, who) or pending
            last = k
            continue
        verb = third_singular(walk.tokens[k], person) if person != "3s" else walk.tokens[k]
        walk.tokens[k] = _case(walk.tokens[k], verb)
        _reelide(walk, k)
        if pending:
            _put_after_verb(walk, k - 1, pending)
        return k
    return last


def _subject_clitic(walk: _Walk, k: int, low: str, person: str, who: str) -> str | None:
    """A pronoun between the subject and its verb; returns who it meant, if it must come back."""
    reflexive = {"1s": ("me", "m'"), "1p": ("nous",), "2p": ("vous",)}.get(person, ())
    if low in reflexive:
        walk.tokens[k] = "se" if low != "m'" else "s'"
        return None
    if low in ("me", "m'", "vous", "nous"):
        target = "member" if _means_member(walk.speaker, low) else None
        walk.tokens[k] = ""
        if k + 1 < len(walk.tokens) and walk.tokens[k + 1].isspace():
            walk.tokens[k + 1] = ""
        return target
    return None


def _means_member(speaker: str, pronoun: str) -> bool:
    if speaker == MEMBER:
        return pronoun in ("me", "m'")
    return pronoun == "vous"


def _put_after_verb(walk: _Walk, start: int, who: str) -> None:
    """Insert the member after the verb group that follows ``start``: "envoie au membre", "a rappelé le membre"."""
    words = walk.words(start + 1)
    if not words:
        return
    k = 0
    if walk.low(words[0]) in AUXILIARIES or walk.low(words[0]) in ("a", "va", "est"):
        while k + 1 < len(words) and walk.low(words[k + 1]) in _ADVERBS:
            k += 1
        if k + 1 < len(words) and walk.tokens[words[k + 1]][:1].isalpha():
            k += 1
    verb = walk.low(words[k])
    nxt = walk.low(words[k + 1]) if k + 1 < len(words) else ""
    indirect = verb.startswith(_INDIRECT) or (verb.startswith("rappel") and nxt in ("que", "qu'"))
    if nxt in ("parvenir", "suivre"):  # "fait parvenir au membre"
        k += 1
    walk.tokens[words[k]] += " au membre" if indirect else " le membre"
    del who


def _other_possessive(walk: _Walk, i: int, tok: str) -> None:
    nxt = _next_word(walk, i)
    plural = tok in ("nos", "vos")
    ours = (tok in ("notre", "nos")) == (walk.speaker == MEMBER)  # the member's or household's thing
    if ours:
        if walk.speaker == ADVISOR and walk.last_subject == "advisor" and _of_member(walk, i):
            return  # "le conseiller met à jour l'adresse du membre", not "son adresse"
        walk.tokens[i] = _case(walk.tokens[i], possessive(nxt, plural=plural))
        return
    article = definite(nxt, plural=plural)
    walk.tokens[i] = _case(walk.tokens[i], article.rstrip())
    if article.endswith("'") and i + 1 < len(walk.tokens) and walk.tokens[i + 1].isspace():
        walk.tokens[i + 1] = ""


def _of_member(walk: _Walk, i: int) -> bool:
    """"votre adresse" → "l'adresse du membre" when the noun stands alone (not "votre numéro de
    contrat", not "votre nouvelle adresse"); False leaves the possessive to the caller."""
    words = walk.words(i + 1)
    if not words or not walk.tokens[words[0]].isalpha():
        return False
    following = walk.low(words[1]) if len(words) > 1 else ""
    if following in ("de", "d'", "des", "du") or (following.isalpha() and following.endswith(("é", "ée"))):
        return False
    noun = walk.tokens[words[0]]
    if noun.lower() in _ADJECTIVES:
        return False
    plural = walk.low(i) == "vos"
    article = definite(noun, plural=plural)
    walk.tokens[i] = article.rstrip()
    if article.endswith("'") and walk.tokens[i + 1].isspace():
        walk.tokens[i + 1] = ""
    walk.tokens[words[0]] += " du membre"
    return True


_ADJECTIVES = frozenset("nouvelle nouveau nouvel ancienne ancien premier première premiere dernier dernière "
                        "derniere prochain prochaine actuel actuelle même meme propre".split())


def _next_word(walk: _Walk, i: int) -> str:
    words = walk.words(i + 1)
    return walk.tokens[words[0]] if words else ""


def _reelide(walk: _Walk, k: int) -> None:
    """After a verb changed ("me suis" → "se est"), the clitic before it may need (un)eliding."""
    before = [j for j in range(k) if walk.tokens[j] and not walk.tokens[j].isspace()]
    if not before:
        return
    j = before[-1]
    walk.tokens[j] = elide(walk.tokens[j], walk.tokens[k])
    if walk.tokens[j].endswith("'"):
        for s in range(j + 1, k):
            walk.tokens[s] = ""


def _case(original: str, new: str) -> str:
    return new[:1].upper() + new[1:] if original[:1].isupper() else new


_SPACES = re.compile(r"\s{2,}")
_CONTRACTED = (
    (re.compile(r"\b([dD])e le (membre|conseiller|foyer)\b"), r"\1u \2"),
    (re.compile(r"\b([àÀ]|[aA]) le (membre|conseiller|foyer)\b"), r"au \2"),
)
_SPACE_BEFORE = re.compile(r"\s+([,.])")
_ELIDED_SPACE = re.compile(r"(?<![\w])([nNsSlLmMtTdDjJ]|[qQ]u)' +")
_UNELIDED = re.compile(r"\b(ne|se|le|la|de|que) (?=[aeiouyéèêàâîôûh])", re.IGNORECASE)


def _finish(text: str) -> str:
    text = _SPACES.sub(" ", text).strip()
    for pattern, repl in _CONTRACTED:
        text = pattern.sub(repl, text)
    text = _ELIDED_SPACE.sub(r"\1'", text)
    text = _UNELIDED.sub(lambda m: _elided_or_not(m), text)
    text = _SPACE_BEFORE.sub(r"\1", text)
    text = text.rstrip(" ,;:-!")
    if not text.endswith((".", "?", "…")):
        text += "."
    return capitalize_first(text)


def _elided_or_not(m: re.Match[str]) -> str:
    rest = m.string[m.end():]
    word = re.match(r"[\w-]+", rest)
    if word is None or not elides(word.group(0)):
        return m.group(0)
    return m.group(1)[:-1] + ("'" if m.group(1).lower() != "que" else "'")
