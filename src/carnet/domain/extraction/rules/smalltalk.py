"""The "worth remembering" filter: what in a call is not a fact about the member.

Most of a call-center transcript is ritual: greetings, thanks, "je vous mets en attente", "je
regarde votre dossier", "c'est noté", acknowledgements. Stored, those would crowd the member's
real facts out of every top-k. The filter works on clauses (commas split a turn such as "Je suis
désolée pour ce désagrément, je transmets votre réclamation"), drops the clauses that are only
ritual, then keeps what remains if it carries information:

- a placeholder, a number, a code or a date;
- a keyword of a fact category (``classify``), or a decision;
- a file's status said of the file ("Le dossier est clos.", "Votre dossier est recevable."): the
  state a case is in, which a later status replaces (``reconcile.topic_rules``);
- for the member only, a statement with at least two content words (the advisor's other sentences
  are procedure: they need one of the signals above).

A placeholder alone is not information ("Le <BIRTHDATE_1>." is an answer whose question was not
understood), and a one-word note needs a category keyword ("Injoignable." yes, "Parfait." no).
"""

from __future__ import annotations

import re

from carnet.domain.extraction.rules.classify import is_decision, keyword_scores
from carnet.domain.reconcile.topic_rules import CASE_NOUNS, CASE_STATUS
from carnet.domain.text import content_tokens, fold

_RITUAL = [
    # greetings, thanks, leave-taking
    r"(?:bonjour|bonsoir|salut|allo|hello|hi|good (?:morning|afternoon|evening))"
    r"(?: (?:madame|monsieur|mademoiselle|m\.|mme|<person_\d+>|a vous|a tous|tout le monde))*",
    r"(?:au revoir|bonne (?:journee|soiree|fin de journee|continuation|semaine|fin de semaine|week-end)|a bientot|"
    r"goodbye|bye|have a (?:nice|good|great) (?:day|evening|weekend)).*",
    r"(?:merci|je vous remercie|thanks?|thank you)(?: (?:beaucoup|bien|infiniment|a vous|pour (?:votre|ton|cet|"
    r"l')\s?\S+|for \S+(?: \S+)?|very much|so much))*(?: (?:madame|monsieur|<person_\d+>))*",
    # a vocative alone: "Madame <PERSON_1>, dossier …" (spoken; "M. <PERSON_1>, artisan, a…" is a subject)
    r"(?:madame|monsieur|mademoiselle)(?: <person_\d+>)*",
    r"(?:je vous en prie|avec plaisir|de rien|(?:pas de|aucun) (?:souci|probleme)|you're welcome|no problem)",
    r"(?:c'est (?:note|parfait|gentil|clair|compris|bon|entendu|super|genial|tout|fait|regle)|ca marche|ca me va|"
    r"voila qui est fait|c'est chose faite|"
    r"(?:tres )?bien(?: compris| note)?|entendu|super|genial|tant mieux|tant pis|c'est (?:ca|exact|bien ca)|"
    r"je (?:vois|comprends|note)(?: bien| tout a fait| parfaitement)?|ok(?:ay)?|d'accord|parfait|"
    r"got it|i see|i understand|great|perfect|sure|alright|fine|ce sera tout|c'est tout(?: pour moi)?|"
    r"rien d'autre|non rien|that's all|nothing else)",
    # holding, searching, procedure
    r".*\b(?:mets?|mettre) en attente\b.*",
    r"(?:ne quittez pas|patientez|(?:merci de|je vous remercie de) (?:patienter|votre patience)|"
    r"(?:un|une) (?:petit |petite )?(?:instant|moment|seconde|minute)|hold on|one moment|bear with me).*",
    r"(?:je (?:vais )?|laissez-moi |let me |i'm |i am |i'll )(?:regarder?|verifier?|consulter?|chercher?|"
    r"rechercher?|voir|check(?:ing)?|look(?:ing)?(?: into)?)(?: (?:ca|cela|cela pour vous|votre (?:dossier|fiche|"
    r"contrat|compte|situation)|tout de suite|de suite|dans (?:le|votre|notre) (?:systeme|dossier|fichier)|"
    r"that|it|your (?:file|account|policy)))*",
    r"je reviens (?:vers vous|a vous)(?: tout de suite| dans un (?:instant|moment))?",
    r"(?:je suis (?:toujours )?(?:la|en ligne)|vous (?:etes toujours la|m'entendez)|je vous entends (?:mal|bien)|"
    r"vous pouvez repeter|pouvez-vous repeter|can you hear me)",
    r"(?:que|en quoi) (?:puis-je|est-ce que je peux|je peux) .*|je vous ecoute|how can i help.*",
    r".*\ba l'appareil\b.*|vous etes (?:bien )?chez (?!nous\b)[^\d]*|bienvenue (?:chez|a|au) .*",
    r"(?:cet|votre) appel (?:est|peut etre) enregistre.*|pour des raisons de (?:securite|confidentialite).*",
    r"(?:je suis|nous sommes) (?:vraiment |sincerement )?(?:desolee?s?|navree?s?)(?: (?:pour |de |du |d'))?"
    r"(?:(?:ce|cet|cette|ca|cela|le|la|l'|apprendre|votre)(?:\s?\S+){0,2})?|je m'excuse(?: pour \S+(?: \S+)?)?|"
    r"i'm (?:so |very )?sorry(?: (?:about|for|to hear) \S+(?: \S+)?)?",
    r"je comprends(?: (?:tout a fait|bien|parfaitement|votre (?:situation|inquietude|frustration|colere|"
    r"mecontentement|probleme)))*",
    r"je vous (?:passe|transfere) .*|je recapitule.*|(?:y a-t-il|avez-vous|est-ce qu'il y a) .*autre chose.*|"
    r"autre chose|anything else.*",
    r"je ne (?:sais|comprends) pas(?: trop| bien| du tout| vraiment)?|attendez|"
    r"je (?:cherche|regarde)(?: (?:ca|cela|un instant|deux secondes))?|"
    r"s'il vous plait|si vous plait|please|"
    r"j'ai (?:mon|le|votre) (?:dossier|contrat|courrier|papier)s? (?:sous les yeux|devant moi)",
    r"(?:je vous appelle|je vous rappelle|comment (?:ca va|allez-vous)|ca va(?: bien)?(?: et vous)?)",
    # the line, and what the caller does while the advisor waits
    r"(?:je ne |je n'|je )?vous (?:entends|capte|comprends) (?:mal|bien|mieux|un peu|tres|pas|plus|loin|de loin|"
    r"a peine)(?: \S+){0,3}|(?:vous )?m'entendez(?: \S+){0,2}|(?:ca|la ligne|le reseau) (?:coupe|grésille|gresille|"
    r"est mauvaise?|passe mal)(?: \S+){0,2}|(?:la|c'est) mieux(?: comme ca)?|ca va mieux(?: comme ca)?",
    r"(?:attendez,? |deux secondes,? |un instant,? )?je (?:mets|prends|cherche|attrape|recupere|sors|trouve) "
    r"(?:mes lunettes|un stylo|un crayon|de quoi (?:noter|ecrire)|mon (?:carnet|agenda|telephone|sac|portefeuille)|"
    r"mes (?:papiers|documents|notes)|ma (?:carte|pochette)|le (?:courrier|papier|document))(?: \S+){0,2}",
]
_RITUAL_RE = re.compile("|".join(f"(?:{p})" for p in _RITUAL))
_CLAUSE = re.compile(r"\s*[,;]\s+|\s+[-–]\s+")
_HARD_INFO = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>|\d|\b[A-Z]{2,}[-/]?\w*\d")
_GREETING = re.compile(r"\s*(?:bonjour|bonsoir|hello|hi|good (?:morning|afternoon|evening))\b")
_NAME_WORDS = 3
_PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>")
_DIGIT = re.compile(r"\d")
_FIRST_PERSON = re.compile(r"\b(?:je|j'|j’|nous|on|i|i'm|i've|we|my|mon|ma|mes|notre|nos)\b", re.IGNORECASE)


def is_ritual(clause: str) -> bool:
    """The whole clause is politeness, holding or procedure."""
    folded = fold(clause).strip(" .!?…-")
    return not folded or _RITUAL_RE.fullmatch(folded) is not None


def without_ritual(sentence: str) -> str:
    """The sentence with its ritual clauses removed ("" when nothing else is left). Next to a
    greeting, a short clause with no number is the caller's or the company's name ("Mutuelle
    Horizon, bonjour"): it goes too."""
    clauses = _CLAUSE.split(sentence.strip())
    kept = [c for c in clauses if c.strip() and not is_ritual(c)]
    if len(kept) == len(clauses):
        return sentence.strip()
    if any(_GREETING.match(fold(c)) for c in clauses):
        kept = [c for c in kept if len(c.split()) > _NAME_WORDS or _HARD_INFO.search(_PLACEHOLDER.sub("", c))]
    return ", ".join(c.strip().rstrip(".") for c in kept) + ("." if kept else "")


# "Dossier PRV-2026-0042.", "Le sinistre SIN-2025-071228.", "Ma réclamation, la REC-2025-1148." said to
# open a call: the reference names what the call is about (the facts that follow say what of it).
_BARE_REFERENCE = re.compile(
    r"(?:(?:le|la|l'|mon|ma|mes|votre|son|sa|pour|pour le|pour la|au sujet du|au sujet de la|c'est|"
    r"c'est pour|c'est le|c'est la)\s+)*(?:dossier|sinistre|reclamation|contrat|numero|reference|ref|n°|no)"
    r"(?:\s+(?:n°|no|numero|de (?:sinistre|dossier)))?\s*:?\s*[a-z]{2,5}[-/]?\d[\w-]*"
)


def bare_reference(sentence: str) -> bool:
    """Only a case reference, with the word that says what it is: no fact of its own."""
    return _BARE_REFERENCE.fullmatch(fold(sentence).strip(" .!?…")) is not None


# The advisor saying what goes in the file: "Je le note, madame : on vous parlera lentement…", "C'est
# noté : à compter du 1er juillet…". What follows the colon (or "que") is a note, whatever its words.
_NOTED = re.compile(
    r"(?:je (?:le |l')?(?:note|mets|inscris|indique)(?: (?:dans|sur) (?:votre|le) dossier)?|c'est note)"
    r"(?:,? (?:madame|monsieur)(?: <person_\d+>)?)?\s*:\s*\S"
)
_NOTED_WORDS = 2  # content words after the colon


# "Je note que vous êtes hébergée chez votre sœur pendant les travaux": what follows "que" is the note.
_NOTED_THAT = re.compile(r"(?:(?:bien|tres bien|d'accord|entendu),? )?(?:je note|j'ai note|je prends (?:bonne )?note)"
                         r"(?: bien)? (?:que |qu')")


def is_noted(sentence: str) -> bool:
    """The advisor dictating a note to the file ("Je le note : …", "Je note que …")."""
    folded = fold(sentence).strip()
    m = _NOTED.match(folded)
    if m is not None:
        return len(content_tokens(folded[m.end() - 1 :])) >= _NOTED_WORDS
    m = _NOTED_THAT.match(folded)
    return m is not None and len(content_tokens(folded[m.end() :])) >= _NOTED_WORDS


def _case_status(folded: str) -> bool:
    return CASE_NOUNS.search(folded) is not None and CASE_STATUS.search(folded) is not None


def carries_information(sentence: str, *, advisor: bool) -> bool:
    if bare_reference(sentence):
        return False
    if advisor and is_noted(sentence):
        return True
    words = content_tokens(_PLACEHOLDER.sub(" ", sentence))
    if not words:
        return False  # "Le <BIRTHDATE_1>.": a value whose question was not understood
    folded = fold(sentence)
    keyworded = bool(keyword_scores(folded)) or is_decision(sentence, advisor=advisor) or _case_status(folded)
    if len(words) == 1:  # "Injoignable." is a note, "Le 12 mars." an answer; "Parfait." is neither
        return keyworded or _DIGIT.search(_PLACEHOLDER.sub(" ", sentence)) is not None
    if keyworded or _HARD_INFO.search(sentence):
        return True
    if advisor:
        return False
    return len(words) >= (2 if _FIRST_PERSON.search(sentence) else 3)
