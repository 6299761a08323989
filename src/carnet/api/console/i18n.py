"""The console's words, French first, English beside. A key missing in English falls back to French;
an error code without its own sentence gets the generic one (an error's own message, English and
technical, is never shown)."""

from __future__ import annotations

from collections.abc import Callable

LANGS = ("fr", "en")
DEFAULT = "fr"

FR: dict[str, str] = {
    "skip": "Aller au contenu", "console": "console", "nav": "Sections", "nav.member": "Membre",
    "nav.dpo": "DPO", "nav.audit": "Journal d'audit", "nav.admin": "Administration", "logout": "Se déconnecter",
    "who.tenant": "Organisation", "who.key": "clé",
    "footer": "Carnet — mémoire à long terme. Les actions de cette console sont inscrites au journal d'audit.",
    "login.title": "Connexion", "login.key": "Clé d'API",
    "login.help": "Votre clé n'est pas conservée : elle ouvre une session sur ce serveur, qui expire après "
                  "inactivité.",
    "login.submit": "Se connecter",
    "error.title": "Action impossible", "error.back": "Retour à l'accueil",
    "error.generic": "L'action n'a pas abouti. Réessayez ou contactez l'exploitant.",
    "error.csrf": "Le formulaire a expiré ou ne vient pas de cette console (jeton anti-CSRF absent ou faux). "
                  "Rechargez la page.",
    "error.unauthenticated": "Clé inconnue ou révoquée.",
    "error.forbidden": "Votre clé n'a pas le rôle nécessaire pour cette page.",
    "error.subject_not_found": "Aucun membre avec cet identifiant dans votre organisation.",
    "error.memory_not_found": "Cet enregistrement n'existe pas (ou plus).",
    "error.not_found": "Introuvable.",
    "error.invalid_input": "Saisie invalide : vérifiez les champs du formulaire.",
    "error.legal_hold": "Ce membre est sous gel juridique : l'effacement est refusé tant qu'il n'est pas levé.",
    "error.rate_limited": "Trop de requêtes : patientez un instant.",
    "error.overloaded": "Le serveur est surchargé : réessayez dans un instant.",
    "error.subject_busy": "Une autre opération est en cours sur ce membre : réessayez.",
    "error.audit_unavailable": "Le journal d'audit est indisponible : rien n'a été fait.",
    "error.kms_unavailable": "Le service de clés est indisponible : réessayez plus tard.",
    "error.memory_unreadable": "Cet enregistrement ne peut pas être déchiffré.",
    "find.label": "Identifiant du membre", "find.submit": "Ouvrir",
    "find.help": "Envoyé dans le corps du formulaire, jamais dans l'adresse de la page.",
    "member.title": "Vue membre", "member.subject": "Membre", "member.timeline": "Chronologie",
    "timeline": "Chronologie", "timeline.count": "%d enregistrement(s), dont %d remplacé(s).",
    "timeline.more": "Seuls les 500 premiers sont affichés.", "unreadable": "%d enregistrement(s) illisible(s) omis.",
    "kind.fact": "Faits", "kind.episode": "Épisodes", "kind.procedure": "Procédures", "none": "Aucun.",
    "procedures.later": "Procédures d'équipe (proposées, approuvées par un superviseur) : prochaine étape de "
                        "la console.",
    "status.active": "En vigueur", "status.superseded": "Remplacé", "status.expired": "Expiré",
    "status.deleted": "Supprimé", "special": "Catégorie particulière",
    "special.help": "Donnée sensible (RGPD art. 9), visible selon la politique de votre organisation.",
    "cat.health": "santé", "cat.disability": "handicap", "cat.religion": "religion", "cat.union": "syndicat",
    "cat.judicial": "judiciaire", "cat.sexual_orientation": "orientation sexuelle",
    "cat.political": "opinions politiques", "cat.ethnic_origin": "origine ethnique",
    "profile": "Profil", "valid.from": "Valide depuis le", "valid.to": "jusqu'au", "valid.open": "toujours valide",
    "recorded": "enregistré le", "importance": "importance", "confidence": "confiance", "expires": "expire le",
    "chain.replaced_by": "Remplacé par", "chain.replaced_by_unseen": "Remplacé par l'enregistrement",
    "chain.replaces": "Remplace", "record": "Enregistrement",
    "search.label": "Rechercher dans ses mémoires", "search.superseded": "Inclure les faits remplacés",
    "search.submit": "Rechercher", "search.results": "Résultats de recherche",
    "search.caption": "Mémoires trouvées, par score",
    "assemble.label": "Aperçu du contexte pour la question", "assemble.submit": "Assembler",
    "assemble.results": "Aperçu du contexte assemblé", "assemble.prompt": "Bloc de prompt complet",
    "tier.profile": "Profil (toujours inclus)", "tier.memories": "Mémoires", "tier.episodes": "Épisodes",
    "tier.procedures": "Procédures",
    "why.help": "Pourquoi c'est là : le score est la somme pondérée de la pertinence (sens et mots-clés), de "
                "l'importance, de la récence, de la fréquence et de la confiance ; la colonne « pourquoi » donne "
                "le terme qui apporte le plus au score.",
    "why.main": "surtout %s (%+.3f)",
    "col.memory": "Mémoire", "col.score": "Score", "col.why": "Pourquoi",
    "sig.cosine": "Cosinus", "sig.relevance": "Pertinence", "sig.keyword": "Mots-clés",
    "sig.importance": "Importance", "sig.recency": "Récence", "sig.frequency": "Fréquence",
    "sig.confidence": "Confiance",
    "dpo.title": "Espace DPO", "dpo.audit_link": "Journal d'audit et vérification de la chaîne",
    "retention.title": "Conservation", "retention.hold": "Gel juridique", "retention.end": "Fin de la relation",
    "retention.open": "relation en cours", "yes": "oui", "no": "non", "since": "depuis le",
    "export.title": "Export (art. 15 et 20)", "export.help": "Tout ce que Carnet détient sur ce membre, déchiffré, "
                                                             "en JSON.",
    "export.submit": "Télécharger l'export",
    "hold.title": "Gel juridique", "hold.reference": "Référence du dossier (facultative)",
    "hold.help": "Une référence de dossier, jamais une donnée personnelle.", "hold.submit": "Placer sous gel",
    "hold.release": "Lever le gel",
    "end.title": "Fin de la relation", "end.label": "Date de fin",
    "end.help": "Démarre les durées comptées depuis la fin de la relation ; vide : relation rouverte.",
    "end.submit": "Enregistrer",
    "erase.title": "Effacement (art. 17)",
    "erase.help": "Définitif : enregistrements, historique, table des pseudonymes puis clé du membre sont "
                  "détruits. Un reçu est produit.",
    "erase.confirm": "Retapez l'identifiant du membre pour confirmer", "erase.submit": "Effacer définitivement",
    "rectify.open": "Rectifier (art. 16)", "rectify.label": "Texte corrigé", "rectify.submit": "Rectifier",
    "done.hold": "Le membre est sous gel juridique.", "done.release": "Le gel juridique est levé.",
    "done.relationship": "La fin de la relation est enregistrée.", "done.rectified": "L'enregistrement est rectifié.",
    "done.revoked": "La clé est révoquée.",
    "receipt.title": "Reçu d'effacement", "receipt.complete": "Effacement complet et vérifié.",
    "receipt.incomplete": "Effacement incomplet : voir ce qui reste.",
    "receipt.subject_hash": "Membre (empreinte à clé)", "receipt.at": "Effacé le",
    "receipt.records": "Enregistrements supprimés", "receipt.rows": "Lignes du catalogue supprimées",
    "receipt.key": "Clé du membre détruite", "receipt.residue": "Reste",
    "verify.count_is_zero": "Plus aucun enregistrement", "verify.search_returns_nothing": "Recherche vide",
    "verify.data_key_gone": "Clé introuvable", "verified": "vérifié", "not_verified": "NON vérifié",
    "receipt.help": "Le reçu ne nomme le membre que par son empreinte à clé ; il est aussi au journal d'audit "
                    "(subject.erased).",
    "receipt.back": "Retour à l'espace DPO",
    "audit.title": "Journal d'audit", "audit.chain": "Vérification de la chaîne",
    "audit.ok": "Chaîne intacte : %d entrées vérifiées.", "audit.bad": "%d problème(s) sur %d entrées.",
    "audit.latest": "Les %d dernières entrées, les plus récentes d'abord", "audit.at": "Date",
    "audit.actor": "Acteur (clé)", "audit.action": "Action", "audit.subject": "Membre (empreinte)",
    "audit.outcome": "Résultat", "audit.detail": "Détail",
    "audit.help": "Le journal complet : GET /api/v1/audit (JSON lines) ou carnet audit.",
    "admin.title": "Administration", "keys.title": "Clés d'API", "keys.new": "Nouvelle clé",
    "keys.once": "Copiez-la maintenant : elle ne sera plus jamais affichée.", "keys.roles": "Rôles",
    "keys.name": "Nom", "keys.create": "Créer la clé", "keys.caption": "Les clés de votre organisation",
    "keys.id": "Identifiant", "keys.created": "Créée le", "keys.state": "État", "keys.action": "Action",
    "keys.revoked": "révoquée", "keys.active": "active", "keys.revoke": "Révoquer",
    "classes.title": "Classes de conservation en vigueur", "classes.caption": "Classes de votre organisation",
    "classes.name": "Classe", "classes.days": "Jours", "classes.after": "Comptés depuis",
    "classes.forever": "jusqu'à effacement", "after.valid_from": "la date de l'enregistrement",
    "after.relationship_end": "la fin de la relation",
    "later.title": "À venir",
    "later.help": "File d'ingestion (lettres mortes et relance), synthèse des métriques et procédures d'équipe : "
                  "prochaines parties de la console. En attendant : carnet intakes, GET /metrics.",
}

EN: dict[str, str] = {
    "skip": "Skip to content", "nav": "Sections", "nav.member": "Member", "nav.audit": "Audit trail",
    "logout": "Log out", "who.tenant": "Organisation", "who.key": "key",
    "footer": "Carnet — long-term memory. Every action of this console is in the audit trail.",
    "login.title": "Log in", "login.key": "API key",
    "login.help": "Your key is not kept: it opens a session on this server, which ends when idle.",
    "login.submit": "Log in",
    "error.title": "Not done", "error.back": "Back to the start",
    "error.generic": "The action failed. Try again or contact the operator.",
    "error.csrf": "This form has expired or does not come from this console (CSRF token missing or wrong). "
                  "Reload the page.",
    "error.unauthenticated": "Unknown or revoked key.",
    "error.forbidden": "Your key lacks the role this page needs.",
    "error.subject_not_found": "No member with this id in your organisation.",
    "error.memory_not_found": "This record does not exist (any more).",
    "error.not_found": "Not found.", "error.invalid_input": "Invalid input: check the form's fields.",
    "error.legal_hold": "This member is under legal hold: erasure is refused until it is lifted.",
    "error.rate_limited": "Too many requests: wait a moment.",
    "error.overloaded": "The server is overloaded: try again in a moment.",
    "error.subject_busy": "Another operation on this member is under way: try again.",
    "error.audit_unavailable": "The audit trail is unavailable: nothing was done.",
    "error.kms_unavailable": "The key service is unavailable: try again later.",
    "error.memory_unreadable": "This record cannot be decrypted.",
    "find.label": "Member id", "find.submit": "Open",
    "find.help": "Sent in the form's body, never in the page's address.",
    "member.title": "Member view", "member.subject": "Member", "member.timeline": "Timeline",
    "timeline": "Timeline", "timeline.count": "%d records, %d of them superseded.",
    "timeline.more": "Only the first 500 are shown.", "unreadable": "%d unreadable record(s) left out.",
    "kind.fact": "Facts", "kind.episode": "Episodes", "kind.procedure": "Procedures", "none": "None.",
    "procedures.later": "Team procedures (proposed, approved by a supervisor): the console's next step.",
    "status.active": "In force", "status.superseded": "Superseded", "status.expired": "Expired",
    "status.deleted": "Deleted", "special": "Special category",
    "special.help": "Sensitive data (GDPR art. 9), shown as your organisation's policy allows.",
    "cat.health": "health", "cat.disability": "disability", "cat.religion": "religion", "cat.union": "union",
    "cat.judicial": "judicial", "cat.sexual_orientation": "sexual orientation", "cat.political": "political opinions",
    "cat.ethnic_origin": "ethnic origin",
    "profile": "Profile", "valid.from": "Valid from", "valid.to": "to", "valid.open": "still valid",
    "recorded": "recorded", "importance": "importance", "confidence": "confidence", "expires": "expires",
    "chain.replaced_by": "Superseded by", "chain.replaced_by_unseen": "Superseded by record",
    "chain.replaces": "Supersedes", "record": "Record",
    "search.label": "Search their memories", "search.superseded": "Include superseded facts",
    "search.submit": "Search", "search.results": "Search results", "search.caption": "Memories found, by score",
    "assemble.label": "Context preview for the question", "assemble.submit": "Assemble",
    "assemble.results": "Assembled context preview", "assemble.prompt": "Full prompt block",
    "tier.profile": "Profile (always included)", "tier.memories": "Memories", "tier.episodes": "Episodes",
    "tier.procedures": "Procedures",
    "why.help": "Why is this here: the score is the weighted sum of relevance (meaning and keywords), "
                "importance, recency, frequency and confidence; the \"why\" column names the term that adds "
                "most to the score.",
    "why.main": "mostly %s (%+.3f)", "col.memory": "Memory", "col.why": "Why",
    "sig.cosine": "Cosine", "sig.relevance": "Relevance", "sig.keyword": "Keywords", "sig.recency": "Recency",
    "sig.frequency": "Frequency", "sig.confidence": "Confidence",
    "dpo.title": "DPO", "dpo.audit_link": "Audit trail and chain check",
    "retention.title": "Retention", "retention.hold": "Legal hold", "retention.end": "End of relationship",
    "retention.open": "relationship open", "yes": "yes", "no": "no", "since": "since",
    "export.title": "Export (art. 15 and 20)", "export.help": "Everything Carnet holds on this member, decrypted, "
                                                              "as JSON.",
    "export.submit": "Download the export",
    "hold.title": "Legal hold", "hold.reference": "Case reference (optional)",
    "hold.help": "A case reference, never personal data.", "hold.submit": "Place under hold",
    "hold.release": "Lift the hold", "end.title": "End of relationship", "end.label": "End date",
    "end.help": "Starts the periods counted from the end of the relationship; empty: reopened.",
    "end.submit": "Save", "erase.title": "Erasure (art. 17)",
    "erase.help": "Final: records, history, pseudonym map, then the member's key are destroyed. A receipt is "
                  "produced.",
    "erase.confirm": "Type the member id again to confirm", "erase.submit": "Erase for good",
    "rectify.open": "Rectify (art. 16)", "rectify.label": "Corrected text", "rectify.submit": "Rectify",
    "done.hold": "The member is under legal hold.", "done.release": "The legal hold is lifted.",
    "done.relationship": "The end of the relationship is saved.", "done.rectified": "The record is rectified.",
    "done.revoked": "The key is revoked.",
    "receipt.title": "Erasure receipt", "receipt.complete": "Erasure complete and verified.",
    "receipt.incomplete": "Erasure incomplete: see what remains.",
    "receipt.subject_hash": "Member (keyed hash)", "receipt.at": "Erased at",
    "receipt.records": "Records deleted", "receipt.rows": "Catalog rows deleted",
    "receipt.key": "Member's key destroyed", "receipt.residue": "Remaining",
    "verify.count_is_zero": "No record left", "verify.search_returns_nothing": "Search finds nothing",
    "verify.data_key_gone": "Key gone", "verified": "verified", "not_verified": "NOT verified",
    "receipt.help": "The receipt names the member by keyed hash only; it is also in the audit trail "
                    "(subject.erased).",
    "receipt.back": "Back to the DPO page",
    "audit.title": "Audit trail", "audit.chain": "Chain check",
    "audit.ok": "Chain intact: %d entries verified.", "audit.bad": "%d problem(s) in %d entries.",
    "audit.latest": "The latest %d entries, newest first", "audit.at": "Time", "audit.actor": "Actor (key)",
    "audit.subject": "Member (hash)", "audit.outcome": "Outcome", "audit.detail": "Detail",
    "audit.help": "The whole trail: GET /api/v1/audit (JSON lines) or carnet audit.",
    "keys.title": "API keys", "keys.new": "New key", "keys.once": "Copy it now: it will never be shown again.",
    "keys.roles": "Roles", "keys.name": "Name", "keys.create": "Create the key",
    "keys.caption": "Your organisation's keys", "keys.id": "Id", "keys.created": "Created", "keys.state": "State",
    "keys.revoked": "revoked", "keys.active": "active", "keys.revoke": "Revoke",
    "classes.title": "Retention classes in force", "classes.caption": "Your organisation's classes",
    "classes.name": "Class", "classes.days": "Days", "classes.after": "Counted from",
    "classes.forever": "until erased", "after.valid_from": "the record's date",
    "after.relationship_end": "the end of the relationship", "later.title": "Coming",
    "later.help": "The intake queue (dead letters and retry), a metrics summary and team procedures: the "
                  "console's next parts. Meanwhile: carnet intakes, GET /metrics.",
}

_WORDS = {"fr": FR, "en": EN}


def translator(lang: str) -> Callable[[str], str]:
    words = _WORDS.get(lang, FR)

    def t(key: str) -> str:
        found = words.get(key) or FR.get(key)
        if found is not None:
            return found
        return t("error.generic") if key.startswith("error.") else key

    return t
