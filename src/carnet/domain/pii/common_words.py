"""Words that are not people's names, whatever a model says. Pure.

spaCy's small French model takes some capitalised words for names ("Votre Visa Premier", "Oui",
"Alpiane Assurances", "Clientèle fragile"), and a name once in a subject's map is known by its parts
(``pseudonyms``): "votre", "premier", "oui" or "assurances" were then replaced by a person's
placeholder in every later text of that subject, before extraction and embedding ("<PERSON_4> livret A
est à …"). These words never make a name, nor a part of one: function words, answers, ordinals, and
the nouns of insurance and banking that name companies, products and services. Folded (no accents,
lower case). A real name is never in the list (a surname equal to one of these words is rare, and it
is still found whole with its given name or title).
"""

from __future__ import annotations

NOT_A_NAME = frozenset("""
votre vos notre nos mon ma mes ton ta tes leur leurs son sa ses ce cet cette ces
oui non merci bonjour bonsoir bien voila alors donc
premier premiere deuxieme second seconde troisieme dernier derniere nouveau nouvelle ancien ancienne
assurance assurances assureur assistance mutuelle mutuelles banque caisse credit epargne prevoyance
sante vie habitation auto expertise expertises expert experts garage carrosserie cabinet centre societe
agence services service clientele client cliente fragile conseil conseiller conseillere contrat formule
carte visa mastercard gold platinum infinite premium essentielle confort famille
livret compte
""".split())


def all_common(words: list[str]) -> bool:
    """Every word (folded) is one that never makes a name: the span is not a person."""
    return bool(words) and all(w in NOT_A_NAME for w in words)
