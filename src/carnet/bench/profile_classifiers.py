"""``carnet bench profile --compare``: the lexicon (``carnet.domain.profile``) against embedding
similarity to short generic descriptions of each profile kind, on a labelled set written for this
purpose (not taken from any scenario file), then on a scenario file's facts: how many of the facts
that answer its ``vulnerability`` and ``consent`` questions each flags, and how many facts in all
(each one flagged costs profile-tier space in every context).

The prototype classifier flags a fact whose cosine to any description is at least a threshold, the
threshold that gives the best F1 on the labelled set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from carnet.domain.profile import is_profile
from carnet.ports import Embedder

PROTOTYPES = (
    "La personne préfère être contactée par un certain moyen ou à certaines heures : téléphone, courrier, "
    "e-mail, SMS, le matin ou le soir.",
    "La personne a des difficultés pour entendre, voir, lire ou comprendre le français, ou elle est "
    "représentée par un tuteur, un curateur ou un proche autorisé à agir pour elle.",
    "La personne traverse une période difficile : deuil, maladie grave, handicap, difficultés financières, "
    "surendettement, perte d'emploi.",
    "La personne accepte ou refuse de recevoir des offres commerciales, du démarchage ou de la publicité.",
)

# (text, is a profile fact): written for this comparison, in the register of call-center notes.
LABELLED: tuple[tuple[str, bool], ...] = (
    ("Préfère un courrier papier plutôt qu'un appel.", True),
    ("Ne répond jamais avant midi, rappeler l'après-midi.", True),
    ("Souhaite être contacté uniquement par SMS.", True),
    ("Disponible seulement le samedi matin.", True),
    ("Il porte un appareil auditif, bien articuler.", True),
    ("Elle ne lit pas le français, lui expliquer de vive voix.", True),
    ("Sous tutelle depuis 2021, la tutrice signe pour lui.", True),
    ("Son frère a procuration sur le compte joint.", True),
    ("Malvoyant : envoyer les documents en gros caractères.", True),
    ("Parle surtout espagnol, prévoir un conseiller hispanophone.", True),
    ("Veuve depuis janvier, elle est encore très affectée.", True),
    ("Il suit une chimiothérapie, éviter de le solliciter.", True),
    ("Au chômage depuis trois mois, les mensualités sont difficiles.", True),
    ("Dossier de surendettement déposé l'an dernier.", True),
    ("Sa fille est décédée en mai.", True),
    ("Refuse de recevoir la newsletter.", True),
    ("A accepté d'être contactée pour des offres de partenaires.", True),
    ("Ne veut plus aucun démarchage téléphonique.", True),
    ("S'est inscrit sur Bloctel.", True),
    ("A retiré son consentement à la prospection par e-mail.", True),
    ("Habite au 3 allée des Peupliers à Tours.", False),
    ("Contrat auto souscrit en 2019, bonus de 0,50.", False),
    ("Numéro de portable : 06 98 76 54 32.", False),
    ("Adresse e-mail : jean.dupont@example.org.", False),
    ("Sinistre dégât des eaux déclaré le 4 mars.", False),
    ("L'expert passe jeudi pour évaluer les dommages.", False),
    ("Cotisation habitation de 32 euros par mois.", False),
    ("Il a changé de voiture : une Clio de 2022.", False),
    ("Prêt immobilier de 180 000 euros sur 20 ans.", False),
    ("Elle a deux enfants, de 8 et 11 ans.", False),
    ("Garantie décès de 50 000 euros sur le contrat prévoyance.", False),
    ("Carte bancaire mise en opposition après un vol.", False),
    ("Rendez-vous en agence fixé au 12 juin.", False),
    ("Le virement de 400 euros a été reçu.", False),
    ("Il travaille comme infirmier à l'hôpital de Nantes.", False),
    ("Franchise de 150 euros en cas de bris de glace.", False),
    ("Le dossier a été transmis au service contentieux.", False),
    ("Elle a déménagé à Bordeaux en septembre.", False),
    ("Souhaite augmenter son plafond de retrait.", False),
    ("Option assistance 0 km ajoutée au contrat.", False),
)


def _scores(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    protos = np.stack([embedder.embed_query(p) for p in PROTOTYPES])
    passages = embedder.embed_passages(list(texts))
    best: np.ndarray = np.asarray(passages @ protos.T).max(axis=1)
    return best


def _f1(flags: Sequence[bool], truth: Sequence[bool]) -> tuple[float, float, float]:
    tp = sum(f and t for f, t in zip(flags, truth, strict=True))
    fp = sum(f and not t for f, t in zip(flags, truth, strict=True))
    fn = sum(t and not f for f, t in zip(flags, truth, strict=True))
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return round(p, 3), round(r, 3), round(2 * p * r / (p + r), 3) if p + r else 0.0


def compare(embedder: Embedder, spec: dict[str, Any]) -> dict[str, Any]:
    texts = [t for t, _ in LABELLED]
    truth = [label for _, label in LABELLED]
    scores = _scores(embedder, texts)
    best = max((_f1([s >= th for s in scores], truth), float(th)) for th in np.unique(scores))
    threshold = best[1]
    facts = [f["text"] for tdata in spec["tenants"].values() for s in tdata["subjects"].values() for f in s["facts"]]
    answers = [
        f["text"]
        for tdata in spec["tenants"].values()
        for s in tdata["subjects"].values()
        for q in s.get("queries", [])
        if q.get("kind") in ("vulnerability", "consent")
        for f in s["facts"]
        if any(e.lower() in f["text"].lower() for e in q["expect_any"])
    ]
    fact_scores = _scores(embedder, facts) if facts else np.zeros(0)
    answer_scores = _scores(embedder, answers) if answers else np.zeros(0)
    return {
        "labelled": len(LABELLED),
        "lexicon": {
            "precision_recall_f1": _f1([is_profile(t) for t in texts], truth),
            "answers_flagged": f"{sum(is_profile(t) for t in answers)}/{len(answers)}",
            "facts_flagged": f"{sum(is_profile(t) for t in facts)}/{len(facts)}",
        },
        "prototypes": {
            "threshold": round(threshold, 4),
            "precision_recall_f1": best[0],
            "answers_flagged": f"{int((answer_scores >= threshold).sum())}/{len(answers)}",
            "facts_flagged": f"{int((fact_scores >= threshold).sum())}/{len(facts)}",
        },
    }
