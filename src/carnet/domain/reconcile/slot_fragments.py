"""Pattern fragments the slot table is written with: values (amounts, places, names, months), where a
value ends, and the cues of contacting, availability, channels and paying."""

from __future__ import annotations

from carnet.domain.reconcile.slot_rule import rx

# --- value fragments -------------------------------------------------------------------------

ADV = (
    r"(?:\s+(?:maintenant|desormais|dorenavant|actuellement|toujours|aujourd'hui|a present|depuis peu|"
    r"finalement|plutot|bien|plus|pas|jamais|encore|now|currently|still|recently|actually|also|aussi|"
    r"no longer|not|never|only|uniquement))*"
)
NUM = r"(?:[1-9]\d{0,2}(?: \d{3})+(?![\d.,])|[1-9]\d{0,2}(?:\.\d{3})+(?![\d,])|\d+(?:[.,]\d+)?)"
AMOUNT = rf"(?P<v>[€$£] ?{NUM}(?: ?k)?|{NUM}(?: ?k)?(?: ?(?:€|eur|euros?|\$|usd|dollars?|£|gbp)(?![a-z]))?)"
_END = r"(?=\s*[,;:.()!?]|\s*$|\s+(?:depuis|avec|ensemble|together|pour|et|mais|car|parce|since|with|for|and|but"
END_PLACE = _END + r"|because|last|this|next|il|elle|he|she|ou|where|when|quand)\b)"
END_NAME = _END + r"|because|a|au|aux|en|dans|sur|in|at|on|as|comme|il|elle|he|she|last|this|next|ou|where)\b)"
PLACE = r"(?P<v>(?!couple\b|union\b|concubinage\b)[^,;:.()!?]+?)"
NAME = r"(?P<v>[^,;:.()!?]+?)"
MONTHS = (
    r"janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre|"
    r"january|february|march|april|may|june|july|august|september|october|november|december"
)

# --- contact and payment cues ------------------------------------------------------------------

CONTACTING = rx(r"\b(?:appel\w*|rappel\w*|contact\w*|joindre|joignable|call\w*|reach\w*|ring)\b")
AVAILABLE = rx(
    r"\b(?:appel\w*|rappel\w*|contact\w*|joindre|joignable|call\w*|reach\w*|disponible|indisponible|"
    r"available|unavailable|absent)\b"
)
CHANNEL = (
    r"telephone|tel|phone|e-?mails?|mails?|courriels?|sms|textos?|text(?: messages?)?|courriers?|papier|"
    r"post|letters?|whatsapp|visio|video|agence|branch|messagerie|espace client"
)
PAYING = rx(
    r"\b(?:paie\w*|paye\w*|paient|regle\w*|reglement|paiement|payment|pays|paying|paid|pay|cotisations?|"
    r"primes?|premiums?|prelevements?|debit|mensualites?)\b"
)
