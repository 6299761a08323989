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

from carnet.domain.extraction.rules.french_words import elide, finish
from carnet.domain.extraction.rules.negation import spoken_ne
from carnet.domain.extraction.rules.possessives import and_me, possessive_subject, swap
from carnet.domain.extraction.rules.requests import imperative
from carnet.domain.extraction.rules.verbs import (
    AUXILIARIES,
    INFINITIVE_ENDINGS,
    looks_first_plural,
    looks_infinitive,
    looks_second_plural,
    third_singular,
)
from carnet.domain.extraction.rules.walk import ADVISOR, CALLER, MEMBER, TO, Walk, case

__all__ = ["ADVISOR", "MEMBER", "rewrite_fr"]

_NOUN = {"member": "le membre", "advisor": "le conseiller", "household": "le foyer du membre", "caller": "l'appelant",
         "company": "l'établissement"}
_CLITICS = frozenset("ne n' me m' te t' se s' le la les l' lui leur en y vous nous".split())
_PREPOSITIONS = frozenset(
    "à a chez pour avec sans par de d' contre envers vers selon entre auprès aupres sur sous que qu' et ou".split()
)
_ADVERBS = frozenset("pas plus jamais bien déjà deja encore aussi tout rien personnellement immédiatement "
                     "immediatement directement bientôt bientot toujours vite".split())
# Verbs whose object is indirect ("envoyer quelque chose au membre"); the others take it directly
# ("rappeler le membre").
_INDIRECT = ("envo", "transm", "adress", "dis", "dit", "dire", "dira", "propos", "confirm", "écri", "ecri", "accord",
             "offr", "vers", "expliqu", "conseill", "recommand", "demand", "signal", "précis", "precis", "indiqu",
             "communiqu", "garanti", "fourni", "remet", "remis", "renv", "octroi", "donn", "montr", "fai", "fer",
             "promi", "promet", "répond", "repond", "rembours", "réserv", "reserv", "accord", "attribu", "dict",
             "offert", "enverr", "prêt", "apport", "vend", "parl", "téléphon", "telephon", "ouvr", "ouvre",
             "souhait", "annonc", "épel", "epel", "répét", "repet", "obten", "obtien", "pose", "posé", "poste", "posté",
             "réexpliqu", "reexpliqu", "vir", "retourn", "rend", "permet", "permett", "ajout",
             # impersonal verbs whose object is the beneficiary: "il vous reste 200 euros", "il vous faut"
             "rest", "faut", "faudr", "manqu", "convien", "conviendr", "coût", "cout", "appartien", "sembl")
_NEGATION = frozenset("pas plus jamais rien guère guere".split())  # the second part, after a simple verb
_BEING = frozenset("suis es est sommes êtes etes sont étais était etait étiez etiez étaient etaient".split())
# Other object pronouns that may stand between the member's pronoun and the verb ("il me l'a dit").
_OBJECT_CLITICS = frozenset("le la les l' en y".split())
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
    r"mon écran|le dossier),?|c'est noté\s*[,:]?|donc si je résume,?|"
    r"je (?:le |l')?(?:note|mets|inscris|indique)(?: (?:dans|sur) (?:votre|le) dossier)?(?:,? (?:madame|monsieur)"
    r"(?: <PERSON_\d+>)?)?\s*:)\s*",
    re.IGNORECASE,
)


# The emphatic "à moi" / "à vous" / "à nous" after a possessive's noun (French grammar: a disjunctive pronoun
# that only stresses the owner, "votre numéro à vous", "mon numéro à moi"): dropped, the possessive says it.
# Not before an infinitive, whose object the pronoun is ("votre dossier à nous renvoyer").
_EMPHATIC = re.compile(r"\b((?:votre|vos|mon|ma|mes|notre|nos)\s+[\w'-]+(?:\s+[\w'-]+)?)\s+à\s+(?:vous|moi|nous)\b"
                       rf"(?!\s+(?:[\w-]+(?:{'|'.join(INFINITIVE_ENDINGS)})\b|l'|les?\b|la\b|en\b|y\b))", re.IGNORECASE)


def rewrite_fr(sentence: str, speaker: str, *, proxy: bool = False, relay: bool = False) -> str:
    """``sentence`` said by ``speaker`` (``MEMBER`` or ``ADVISOR``), as a third-person fact. ``proxy``:
    the member's side of the call is someone calling for the member, and their "je" is "l'appelant",
    as the advisor's "vous" is, unless ``relay``: an operator passes on the member's words."""
    if speaker == MEMBER:
        text = and_me(_CALLING_BECAUSE.sub("", sentence.strip()).strip())
    else:
        text = _ADVISOR_FRAME.sub("", sentence.strip()).strip()
    text = _EMPHATIC.sub(r"\1", text)
    text = imperative(text, advisor=speaker == ADVISOR) or text
    # On a call for the member, the member's side is the caller: its "je", and the advisor's "vous"
    # unless an operator relays the member's words.
    caller = CALLER if proxy else MEMBER
    walk = Walk.of(spoken_ne(text), speaker, caller if speaker == MEMBER else MEMBER,
                   addressee=MEMBER if relay else caller)
    possessive_subject(walk)
    i = 0
    while i < len(walk.tokens):
        i = _step(walk, i) + 1
    return finish(walk.text())


# The possessive pronouns of the first person, in the third (French grammar).
_MINE = {"mien": "sien", "mienne": "sienne", "miens": "siens", "miennes": "siennes"}


def _step(walk: Walk, i: int) -> int:
    """Rewrite what starts at token ``i``; returns the last token it handled."""
    tok = walk.low(i)
    if not tok or tok.isspace():
        return i
    if tok in ("je", "j'"):
        return _subject(walk, i, "1s", walk.me if walk.speaker == MEMBER else "advisor")
    if tok == "on" and walk.speaker == MEMBER and _impersonal(walk, i):
        return i  # "qu'on me rappelle": someone, not the household (the advisor's "on" is the company)
    if tok in ("nous", "on") and _is_subject(walk, i, tok):
        k = _subject(walk, i, "1p" if tok == "nous" else "3s", "household" if walk.speaker == MEMBER else "advisor")
        if tok == "on":
            _singular_participle(walk, k)
        return k
    if tok in ("nous", "vous") and _company_after_chez(walk, i, tok):
        return i
    if tok == "vous":
        return _vous(walk, i)
    if tok in ("mon", "ma", "mes", "notre", "nos", "votre", "vos"):
        swap(walk, i, tok)
    elif tok in _MINE and walk.speaker == MEMBER:  # "écrire sur la mienne" → "sur la sienne"
        walk.tokens[i] = case(walk.tokens[i], _MINE[tok])
    elif tok in ("vôtre", "vôtres") and walk.speaker == ADVISOR and (j := walk.before(i)) is not None:
        # "la vôtre" → "la sienne": the article gives the gender
        walk.tokens[i] = case(walk.tokens[i], {"le": "sien", "la": "sienne", "les": "siens"}.get(walk.low(j), "sien"))
    elif tok == "moi" and _before_subject(walk, i) and not _after_preposition(walk, i):
        walk.drop(i)  # "moi, je préfère le matin": the stress pronoun doubles the subject ("chez moi, je": not)
        if i + 1 < len(walk.tokens) and walk.tokens[i + 1] == ",":
            walk.drop(i + 1)
    elif tok == "moi":
        walk.tokens[i] = "l'appelant" if walk.me == CALLER else "lui"
    elif tok in ("me", "m'") and _reflexive_before_infinitive(walk, i):
        walk.tokens[i] = "s'" if tok == "m'" else "se"  # "je voulais pas me retrouver…" → "se retrouver"
    elif tok in ("me", "m'"):
        _object(walk, i, walk.me if walk.speaker == MEMBER else "advisor")
    elif tok == "nous" and _after_preposition(walk, i) and _before_infinitive(walk, i):
        walk.drop(i)  # "il suffit de nous envoyer…" → "il suffit d'envoyer à l'établissement…"
        _member_after_verb(walk, i, "household" if walk.speaker == MEMBER else "company")
    elif tok == "nous" and _after_preposition(walk, i):
        walk.tokens[i] = "le foyer" if walk.speaker == MEMBER else "l'établissement"
    return i


def _before_subject(walk: Walk, i: int) -> bool:
    words = [k for k in walk.words(i + 1) if walk.tokens[k] != ","]
    return bool(words) and walk.low(words[0]) in ("je", "j'")


def _impersonal(walk: Walk, i: int) -> bool:
    words = walk.words(i + 1)
    return bool(words) and walk.low(words[0]) in ("me", "m'", "nous", "vous", "lui", "leur", "te", "t'")


def _company_after_chez(walk: Walk, i: int, tok: str) -> bool:
    """"chez nous" (advisor) and "chez vous" (member) name the company: the fact does not need it."""
    company = "nous" if walk.speaker == ADVISOR else "vous"
    j = walk.before(i)
    if tok != company or j is None or walk.low(j) != "chez":
        return False
    verb = walk.before(j)
    if verb is not None and walk.low(verb) in _BEING:
        return True  # "vous êtes chez nous depuis 2009": being a customer, kept as said
    walk.tokens[j] = ""
    walk.tokens[i] = ""
    return True


def _after_preposition(walk: Walk, i: int, exclude: frozenset[str] = frozenset()) -> bool:
    j = walk.before(i)
    return j is not None and walk.low(j) in _PREPOSITIONS - exclude


def _is_subject(walk: Walk, i: int, tok: str) -> bool:
    after = _after_clitics(walk, i)
    if after is None:
        return False
    if tok == "on":
        return True
    if _after_preposition(walk, i, exclude=frozenset({"que", "qu'", "et", "ou"})):
        return False
    return looks_first_plural(walk.tokens[after])


def _after_clitics(walk: Walk, i: int) -> int | None:
    for k in walk.words(i + 1):
        if walk.low(k) not in _CLITICS:
            return k
    return None


_COUNTED = frozenset("deux trois quatre cinq".split())  # "vous deux", "pour vous trois": the household


def _vous(walk: Walk, i: int) -> int:
    following = next(iter(walk.words(i + 1)), None)
    if following is not None and walk.low(following) in _COUNTED:
        walk.tokens[i] = "les"  # "vous deux co-assurés" → "les deux co-assurés", not "deux le membre"
        return i
    after = _after_clitics(walk, i)
    if after is not None and looks_second_plural(walk.tokens[after]):
        return _subject(walk, i, "2p", "advisor" if walk.speaker == MEMBER else walk.addressee)
    if _after_preposition(walk, i) and not _before_infinitive(walk, i):
        walk.tokens[i] = "l'établissement" if walk.speaker == MEMBER else _NOUN[walk.addressee]
        return i
    _object(walk, i, "advisor" if walk.speaker == MEMBER else walk.addressee)
    return i


def _before_infinitive(walk: Walk, i: int) -> bool:
    """The pronoun at ``i`` is the object of an infinitive (French grammar: after a preposition, only object
    clitics stand between it and the infinitive, "de vous le demander", "pour vous rappeler")."""
    words = [k for k in walk.words(i + 1) if walk.low(k) not in _OBJECT_CLITICS]
    return bool(words) and looks_infinitive(walk.tokens[words[0]])


_BEFORE_INFINITIVE = _ADVERBS | {"rien"}  # "ne voulait pas me …", "ne veut rien me …": between the verb and "me"


def _reflexive_before_infinitive(walk: Walk, i: int) -> bool:
    """"me" between the speaker's own verb and an infinitive ("je ne voulais pas me retrouver sans rien",
    "je vais m'en occuper"): reflexive (French grammar: the infinitive's subject is the speaker), so "se" as
    the speaker becomes the third person. Not after a preposition ("il m'a demandé de me rappeler"), nor
    after another subject's verb ("il voulait me prévenir")."""
    if not _before_infinitive(walk, i):
        return False
    j = walk.before(i)
    while j is not None and walk.low(j) in _BEFORE_INFINITIVE:
        j = walk.before(j)
    subject = walk.before(j) if j is not None else None
    while subject is not None and walk.low(subject) in ("ne", "n'"):
        subject = walk.before(subject)
    speaker = walk.me if walk.speaker == MEMBER else "advisor"
    return subject is not None and walk.tokens[subject].strip().lower() == _NOUN[speaker]


def _object(walk: Walk, i: int, who: str) -> None:
    """An object pronoun before a verb: gone; the member (or, on a call for the member, the caller)
    comes back after the verb group."""
    walk.drop(i)
    if who in (MEMBER, CALLER):
        _member_after_verb(walk, i, who)


def _subject(walk: Walk, i: int, person: str, who: str) -> int:
    """A subject pronoun at ``i``: its noun (or "il"), then the clitics, then the verb in person."""
    walk.tokens[i] = "il" if who == walk.last_subject and who in walk.named else _NOUN[who]
    walk.named.add(who)
    walk.last_subject = who
    if i + 1 < len(walk.tokens) and not walk.tokens[i + 1].isspace():
        walk.tokens[i] += " "  # "j'ai" was one word: "le membre a" is two
    member_object = False
    last = i
    for k in walk.words(i + 1):
        low = walk.low(k)
        if low in _CLITICS:
            member_object |= _subject_clitic(walk, k, low, person)
            last = k
            continue
        if person != "3s" and walk.tokens[k][:1].isalpha():  # never a placeholder or a number
            walk.tokens[k] = case(walk.tokens[k], third_singular(walk.tokens[k], person))
        _reelide(walk, k)
        if member_object:
            _member_after_verb(walk, k - 1, walk.addressee if walk.speaker == ADVISOR else walk.me)
        return k
    return last


_BE = _BEING | {"sera", "serait"}  # the forms "on" takes


def _singular_participle(walk: Walk, k: int) -> None:
    """"on est rentrés" → "le foyer du membre est rentré" (French grammar: the participle after "on" for "nous"
    agrees in the plural; with a singular noun as the subject, in the singular)."""
    if walk.low(k) not in _BE:
        return
    words = walk.words(k + 1)
    if words and walk.low(words[0]).endswith(("és", "ées")) and len(walk.tokens[words[0]]) > 4:
        walk.tokens[words[0]] = walk.tokens[words[0]][:-1]


def _subject_clitic(walk: Walk, k: int, low: str, person: str) -> bool:
    """A pronoun between the subject and its verb; True if it meant the member (it comes back)."""
    reflexive = {"1s": ("me", "m'"), "1p": ("nous",), "2p": ("vous",)}.get(person, ())
    if low in reflexive:
        walk.tokens[k] = "s'" if low == "m'" else "se"
        return False
    if low in ("me", "m'", "vous", "nous"):
        walk.drop(k)
        return low in ("me", "m'") if walk.speaker == MEMBER else low == "vous"
    return False


def _member_after_verb(walk: Walk, start: int, who: str) -> None:
    """Insert the member (``who``: or the caller) after the verb group that follows ``start``: "envoie
    au membre", "a rappelé le membre", "va envoyer au membre", "fait parvenir à l'appelant"."""
    words = [k for k in walk.words(start + 1) if walk.low(k) not in _OBJECT_CLITICS] or walk.words(start + 1)
    if not words:
        return
    k = 0
    if walk.low(words[0]) in AUXILIARIES:
        while k + 1 < len(words) and walk.low(words[k + 1]) in _ADVERBS:
            k += 1
        if k + 1 < len(words) and walk.tokens[words[k + 1]][:1].isalpha():
            k += 1
        if walk.low(words[k]) in ("été", "ete") and k + 1 < len(words) and walk.tokens[words[k + 1]][:1].isalpha():
            k += 1  # the passive "a été accordé": after its participle
    verb = walk.low(words[k])
    nxt = walk.low(words[k + 1]) if k + 1 < len(words) else ""
    indirect = verb.startswith(_INDIRECT) or (verb.startswith("rappel") and nxt in ("que", "qu'"))
    if nxt in ("parvenir", "suivre"):
        k += 1
    while k + 1 < len(words) and walk.low(words[k + 1]) in _NEGATION:  # "ne concerne pas le membre"
        k += 1
    walk.tokens[words[k]] += f" {TO[who]}" if indirect else f" {_NOUN[who]}"


def _reelide(walk: Walk, k: int) -> None:
    """After a verb changed ("me suis" → "se est"), the clitic before it may need (un)eliding."""
    j = walk.before(k)
    if j is None:
        return
    walk.tokens[j] = elide(walk.tokens[j], walk.tokens[k])
    if walk.tokens[j].endswith("'"):
        for s in range(j + 1, k):
            walk.tokens[s] = ""
