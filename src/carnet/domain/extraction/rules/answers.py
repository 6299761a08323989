"""Short answers to the advisor's questions, read together with the question.

"Quel est votre numéro de contrat ?" — "C'est le CTR-123456." Alone, the answer says nothing;
with its question it is the fact "Le numéro de contrat du membre est CTR-123456." The question is
turned into a statement in the advisor's words ("votre numéro de contrat est …", "vous habitez
où" → "vous habitez à Villeurbanne"), the answer fills its gap, and the statement is rewritten as
any advisor sentence would be. A "oui" confirms a yes/no question ("Vous êtes toujours à Lyon ?"
— "Oui." → "Le membre est toujours à Lyon."); a "non" never turns the question into a fact: what
is true instead is usually said next and read on its own (a short answer keeps its question,
quoted: see ``pipeline``).
"""

from __future__ import annotations

import re

from carnet.domain.extraction.rules.sentences import strip_fillers
from carnet.domain.extraction.rules.smalltalk import without_ritual

_YES = re.compile(
    r"^(?:oui|ouais|tout à fait|tout a fait|exactement|c'est ça|c'est ca|c'est exact|c'est bien ça|absolument|"
    r"effectivement|bien sûr|bien sur|voilà|voila|yes|yeah|yep|correct|that's right|exactly)\b[\s,.!]*",
    re.IGNORECASE,
)
_NO = re.compile(r"^(?:non|pas du tout|no|nope|pas vraiment)\b", re.IGNORECASE)
_VALUE_FRAME = re.compile(
    r"^(?:alors\s+|euh\s+|bah\s+|ben\s+)*(?:c'est\s+(?:le\s+|la\s+|l'|les\s+)?|il s'agit d[eu]\s+|ce sera\s+|"
    r"ça sera\s+|ca sera\s+|it's\s+|it is\s+)?",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^(?:est-ce que|est-ce qu'|pouvez-vous|pourriez-vous|vous pouvez|vous pourriez|puis-je|pourrais-je|je peux|"
    r"je vais avoir besoin de|j'ai besoin de|j'aurais besoin de|can you|could you)\s*(?:me\s+|m')?"
    r"(?:(?:donner|dire|rappeler|confirmer|indiquer|communiquer|préciser|preciser|épeler|epeler|avoir|give me|"
    r"tell me|confirm)\s+)?",
    re.IGNORECASE,
)
_WH = r"où|ou|quand|comment|combien|quel jour|à quelle heure|a quelle heure|quelle heure|quoi"
_WH_INVERTED = re.compile(rf"^(?P<wh>{_WH}|depuis quand)\s+(?P<verb>[\w']+)-vous\b\s*(?P<rest>.*)$", re.IGNORECASE)
_INVERTED = re.compile(r"^(?P<verb>[\w']+)-vous\b\s*(?P<rest>.*)$", re.IGNORECASE)
_WHICH_IS = re.compile(
    r"^(?:quel(?:le)?s?\s+(?:est|sont)|c'est quoi|what(?:'s| is))\s+(?P<np>(?:votre|vos|your)\b.+)$", re.IGNORECASE
)
_NP_WHICH = re.compile(r"^(?P<np>(?:votre|vos)\b[^,]+?),?\s+c'est (?:quoi|lequel|laquelle|quel(?:le)?)$",
                       re.IGNORECASE)
_WH_LAST = re.compile(rf"\b(?P<wh>{_WH})$", re.IGNORECASE)
_PLACE = re.compile(r"^(?:à|a|au|aux|en|chez|dans|sur|près de|pres de|in|at|to)\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:je|j'|j’|i|i'm|i've)\b", re.IGNORECASE)
_ABOUT_MEMBER = re.compile(r"\b(?:vous|votre|vos|you|your)\b", re.IGNORECASE)
_MAX_VALUE_WORDS = 8
# A verb of its own makes the answer a sentence, read on its own ("Vous êtes arrêtée jusqu'à quand ?" —
# "L'arrêt va jusqu'au 28 février."), not a value to put in the question's gap.
_CLAUSE_VERB = re.compile(r"\b(?:va|vont|est|sont|sera|seront|était|etait|étaient|etaient|a été|a ete|ont été|"
                          r"ont ete|finit|termine|commence|dure|is|are|was|were|will be|ends|starts|lasts)\b",
                          re.IGNORECASE)
_ELLIPTIC_WORDS = 4
# A yes/no question a "oui" can confirm as a statement: "vous êtes toujours à Lyon", "votre
# contrat est actif" (not "pouvez-vous patienter", which a request frame leaves behind).
_DECLARATIVE = re.compile(r"^(?:vous|votre|vos|you|your)\b(?!\s+(?:pouvez|pourriez|voulez|can|could))", re.IGNORECASE)


def answered(question: str, answer: str) -> tuple[str | None, str]:
    """(the statement the question and answer make together, in the advisor's words, or None;
    what is left of the answer to read on its own)."""
    reply = answer.strip()
    if _NO.match(reply):
        return None, reply
    yes = _YES.match(reply)
    rest = reply[yes.end():].strip() if yes else reply
    shape, statement = _statement(question)
    if statement is None and yes and (read := _read_back(question)) is not None:
        return f"le membre confirme : {read[:1].lower()}{read[1:]}", rest
    if statement is None or not _ABOUT_MEMBER.search(statement):
        return None, reply
    if shape == "yes/no":
        return (statement, rest) if yes else (None, reply)
    value, after = _value(rest), ""
    if value is None:  # "Par email, je ne réponds jamais avant 14h.": the value, then a statement
        first, _, after = rest.partition(", ")
        value = _value(first)
    if value is None:
        return None, reply
    if shape == "np":
        verb = "is" if statement.lower().startswith("your") else "est"
        return f"{statement} {verb} {value}", after
    wh = _WH_LAST.search(statement)
    if wh is None:
        return None, reply
    if wh.group("wh").lower() in ("où", "ou") and not _PLACE.match(value):
        value = "à " + value
    return statement[: wh.start()] + value, after


_LOWER_OPENING = re.compile(
    r"^(?:Par|À|A|Au|Aux|En|Le|La|Les|L'|Un|Une|Des|Du|De|D'|Chez|Dans|Sur|Plutôt|Plutot|Avant|Après|Apres|Vers|"
    r"Entre|Tous|Toutes|Tout|Chaque|Demain|Jamais|Uniquement|Seulement|Surtout|By|On|In|At|Every|Only)\b"
)


def _value(rest: str) -> str | None:
    text = _VALUE_FRAME.sub("", strip_fillers(rest)).strip().rstrip(".!")
    if not text or _FIRST_PERSON.search(text) or len(text.split()) > _MAX_VALUE_WORDS or _CLAUSE_VERB.search(text):
        return None
    if _LOWER_OPENING.match(text):  # "Par email" inside a sentence: "être contacté par email"
        text = text[0].lower() + text[1:]
    return text


def _read_back(question: str) -> str | None:
    """An advisor's elliptic read-back ("Toujours au <ADDRESS_1> ?", "Le 06 12…, c'est bien ça ?"):
    a value and no question word. A "oui" makes it a fact in the advisor's words."""
    asked = strip_fillers(without_ritual(question.strip().rstrip("?").strip()).rstrip(".")).strip()
    asked = _CHECK_TAIL.sub("", asked).strip()
    if not _READ_VALUE.search(asked) or _WH_ANYWHERE.search(asked) or _REQUEST.match(asked) is not None:
        return None
    return asked


_CHECK_TAIL = re.compile(r",?\s*(?:c'est (?:bien )?(?:ça|ca|exact|correct|toujours (?:bon|valable|ça|ca))|"
                         r"est-ce (?:bien )?(?:ça|ca|exact)|n'est-ce pas|toujours)$", re.IGNORECASE)
_READ_VALUE = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>|\d")
_WH_ANYWHERE = re.compile(rf"\b(?:{_WH}|quel(?:le)?s?|qui|pourquoi|lequel|laquelle)\b", re.IGNORECASE)


def _statement(question: str) -> tuple[str, str | None]:
    """("yes/no" | "wh" | "np", the question as a statement) — None when it cannot be turned."""
    asked = strip_fillers(without_ritual(question.strip().rstrip("?").strip()).rstrip(".")).strip()
    q = _REQUEST.sub("", asked, count=1).strip()
    framed = q != asked  # "pouvez-vous me donner votre numéro…": what follows is what is asked for
    if m := _WHICH_IS.match(q) or _NP_WHICH.match(q):
        return "np", m.group("np")
    if m := _WH_INVERTED.match(q):
        return "wh", f"vous {m.group('verb')} {m.group('rest')} {m.group('wh')}".replace("  ", " ")
    if m := _INVERTED.match(q):
        return "yes/no", f"vous {m.group('verb')} {m.group('rest')}".strip()
    if re.match(r"^(?:votre|vos|your)\s", q, re.IGNORECASE) and (framed or len(q.split()) <= _ELLIPTIC_WORDS):
        return "np", q  # "votre numéro de contrat ?": no verb, the answer is its value
    if _WH_LAST.search(q):
        return "wh", q
    if re.match(rf"^(?:{_WH}|quel|quelle|quels|quelles|qui|pourquoi|what|when|where|which|who|why|how)\b",
                q, re.IGNORECASE):
        return "wh", None
    return "yes/no", q if _DECLARATIVE.match(q) else None
