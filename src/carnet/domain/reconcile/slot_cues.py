"""Cues shared by the slot table and reconcile: clause boundaries, negation, change markers, holders.

Patterns run on ``text.fold`` output (casefolded, accents removed, one apostrophe), so they are
written without accents.
"""

from __future__ import annotations

from carnet.domain.reconcile.slot_rule import rx

# Words that frame a fact without adding one ("assurance voiture en formule tiers" restates
# "contrat auto au tiers"): a merge may drop them from the new note's wording.
FRAME_WORDS = frozenset(
    str.split(
        """
        assurance assurances contrat contrats formule police garantie auto automobile voiture vehicule
        habitation logement cotisation cotisations prime paiement reglement payment premium insurance
        policy client cliente numero number adresse address souhaite prefere preferes prefers likes wants
        veut voudrait aime actuellement currently toujours still
        """
    )
)

BOUNDARY = rx(r"[,;:.!?()]|\b(?:mais|but|puis|then|et|and|donc|so|car|because|whereas|alors que)\b")

NEGATION = rx(
    r"\bn(?:e\s|')|\b(?:pas|plus|jamais|aucune?|non|sans|no longer|not|never|without|refuse\w*|refus|"
    r"opposition|s'oppose\w*|objects? to|"
    r"indisponible|unavailable|doesn't|don't|isn't|won't|hasn't|haven't)\b|n't\b"
)

# The note says something changed: the contradiction band needs one, and so does a
# multi-valued slot (a second car is not a contradiction; "a remplacé sa Clio" is).
CHANGE_MARKERS = rx(
    r"\b(?:maintenant|desormais|dorenavant|a present|depuis peu|finalement|"
    r"n(?:e\s+|')(?:[\w']+\s+){0,2}plus|a change|change de|changement de|demenage|quitte|"
    r"remplace\w*|passee?s? (?:a|au|en|de|sur)|est passee?|devenue?s?|resilie\w*|resiliation|"
    r"reporte\w*|decale\w*|deplace\w*|annule\w*|mis a jour|modifie\w*|au lieu de|plutot que|vendu|"
    r"arrete de|now|no longer|not anymore|anymore|moved|relocated|changed|switched|replaced|"
    r"instead|rescheduled|postponed|cancell?ed|sold|quit|became|has become|updated)\b"
)

HOLDER = rx(
    r"^\W*(?:son|sa|ses|leur|leurs|le|la|les|l'|his|her|their|the)\s*(?:[\w']+\s+)?(?P<h>"
    r"epouse|mari|conjointe?|femme|compagne|compagnon|fiancee?|fils|filles?|peres?|meres?|freres?|soeurs?|"
    r"enfants?|parents?|grands?-parents|grand-mere|grand-pere|beaux?-parents|belle-mere|beau-pere|"
    r"oncle|tante|cousine?|neveu|niece|amie?|voisine?|collegue|"
    r"wife|husband|partner|spouse|fiance|sons?|daughters?|father|mother|brothers?|sisters?|children|kids?|"
    r"child|parents?|grandparents|grandmother|grandfather|uncle|aunt|cousin|nephew|niece|friend|"
    r"neighbou?r|colleague|in-laws)\b"
)
# Anyone but the member: the fact is theirs. Unlisted relatives keep their own word as holder.
HOLDERS = {
    **dict.fromkeys(
        ("epouse", "mari", "conjoint", "conjointe", "femme", "compagne", "compagnon", "wife", "husband",
         "partner", "spouse"), "spouse"),
    **dict.fromkeys(("fils", "son"), "son"),
    **dict.fromkeys(("fille", "daughter"), "daughter"),
    **dict.fromkeys(("pere", "father"), "father"),
    **dict.fromkeys(("mere", "mother"), "mother"),
    **dict.fromkeys(("frere", "brother"), "brother"),
    **dict.fromkeys(("soeur", "sister"), "sister"),
}  # fmt: skip
