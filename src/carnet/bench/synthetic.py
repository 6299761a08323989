"""Synthetic French call-center memories and never-seen-before questions for the latency benchmark."""

from __future__ import annotations

import random

_SUBJECTS = ["Le membre", "L'adhérent", "La cliente", "Le client", "L'assurée", "Le sociétaire"]
_FACTS = [
    "a déclaré un sinistre {sinistre} le {jour} {mois}, dossier {dossier}",
    "souhaite être rappelé {moment} au sujet de son contrat {contrat}",
    "a un contrat {contrat} formule {formule} depuis {annee}",
    "a demandé un devis {contrat} avec un budget de {montant} euros par an",
    "a changé de banque pour le prélèvement de sa cotisation {contrat}",
    "conteste le remboursement de {montant} euros pour {soin}",
    "a reçu l'expert pour le sinistre {sinistre}, dossier {dossier}",
    "prévoit de déménager à {ville} en {mois}",
    "a ajouté {personne} comme bénéficiaire de son contrat {contrat}",
    "a signalé un changement de véhicule : {vehicule} acheté en {mois}",
    "est mécontent du délai de traitement du dossier {dossier}",
    "préfère les échanges par {canal} pour les questions {contrat}",
]
_FILL = {
    "sinistre": ["dégât des eaux", "bris de glace", "incendie", "vol", "tempête", "grêle", "accident de la route"],
    "jour": [str(d) for d in range(1, 29)],
    "mois": ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre"],
    "moment": ["le matin", "en fin de journée", "le samedi", "à l'heure du déjeuner", "le mercredi soir"],
    "contrat": ["habitation", "auto", "santé", "prévoyance", "emprunteur", "moto", "assurance vie"],
    "formule": ["Essentielle", "Confort", "Sérénité", "Premium", "Tiers", "Tous risques"],
    "annee": [str(y) for y in range(2008, 2026)],
    "montant": [str(m) for m in range(80, 2400, 35)],
    "soin": ["une consultation d'orthodontie", "des lunettes", "une hospitalisation", "des séances de kiné"],
    "ville": ["Lille", "Roubaix", "Lyon", "Villeurbanne", "Nantes", "Rennes", "Bordeaux", "Toulouse", "Metz"],
    "personne": ["son épouse", "son fils", "sa fille", "son compagnon", "sa mère"],
    "vehicule": ["une Clio", "une 308", "un Kangoo", "une Zoé", "un scooter", "une Tesla Model 3"],
    "canal": ["courriel", "téléphone", "courrier", "l'espace adhérent"],
}
_QUESTIONS = [
    "Où en est le dossier {dossier} ?",
    "Quel est le budget pour le contrat {contrat} ?",
    "Quand rappeler au sujet de {contrat} ?",
    "Quel sinistre {sinistre} a été déclaré en {mois} ?",
    "Le remboursement de {soin} est-il contesté ?",
    "Quelle formule {formule} pour le contrat {contrat} ?",
    "Le membre a-t-il un projet de déménagement à {ville} ?",
    "Quel canal préférer pour parler de {contrat} ?",
]


def _fill(rng: random.Random, template: str) -> str:
    values = {k: rng.choice(v) for k, v in _FILL.items()}
    values["dossier"] = f"{rng.choice(['SIN', 'RC', 'TMP', 'DOS'])}-{rng.randint(10000, 99999)}"
    return template.format(**values)


def fact(rng: random.Random) -> str:
    return f"{rng.choice(_SUBJECTS)} {_fill(rng, rng.choice(_FACTS))}."


def question(rng: random.Random, serial: int) -> str:
    """A question never asked before: a serial number makes each one unique (no cache hit possible)."""
    return f"{_fill(rng, rng.choice(_QUESTIONS))} (appel {serial})"
