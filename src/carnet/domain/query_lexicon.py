"""Query expansion for the keyword retriever: a small French call-center lexicon. Pure, no I/O.

Advisors ask in two words ("Adresse ?", "Envoi des courriers ?") what the notes say in others
("elle vit désormais au…", "les documents partent par e-mail"). The dense retriever bridges some of
that gap, the keyword retriever none: this lexicon adds the usual other words of the same thing to
the keyword query only (the dense query is left as asked, so a wrong expansion costs little).

Each rule is ``triggers => additions``, or a plain list when the words are interchangeable (each
triggers all the others); an indented line carries on the rule above it. A trigger is a word or a
phrase; a phrase fires when all its words are in the query (function words do not count: a trigger
made of them alone never fires). Words are compared as ``content_terms`` (stemmed, accent-folded),
so ``habite``, ``habitait`` and ``habiter`` are one trigger. The lexicon is general insurance and
banking vocabulary (addresses, channels, premiums, payments, claims, employment, legal protection,
marketing consent), written from what advisors ask, not from any benchmark's sentences (see
docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from carnet.domain.text import content_terms, detect_language, tokenize

# fmt: off
FRENCH_RULES = """
adresse | habite | habiter | vit | vivre | réside | résider | résidence | domicile | domicilié | demeure
    | déménage | déménagement
relogé | relogement | hébergé | hébergement | logé
courrier | courriers | lettre | lettres | documents | envoi | envois | postal | poste | e-mail | courriel
    | papier
joindre | joignable | injoignable | téléphone | portable | mobile | fixe | numéro | appeler | rappeler
proposer | présenter | vendre | démarchage | démarcher | sollicitation | solliciter | prospection | promotion
    | promotions | promotionnel | publicité | mailing | mailings | newsletter | offre commerciale => démarchage
    | sollicitation | prospection | commercial | commerciaux | promotionnel | publicité
payer | paie | paye | coûte | coût | prix | cotisation | prime | tarif | mensualité | prélève | prélèvement
gagne | gagner | salaire | revenu | revenus | rémunération | rémunéré
rembourser | remboursé | remboursement | versement | versé | verser | indemnisation | indemnisé | indemnité
    | indemnités | paiement | payé | réglé | touche | toucher | perçoit | percevoir
rendre | rend | restituer | restitution => rembourser | remboursement | remboursé
reste à rembourser | restant dû | capital restant => capital | restant | dû | prêt | crédit
dépenser | dépense | retirer | retrait => plafond
par an | annuel | annuelle | annuellement
par mois | mensuel | mensuelle | mensuellement | mensualité
sinistre => accident | accrochage | cambriolage | vol | incendie | dégât | dommage | bris | inondation
    | tempête | grêle
orage | orages | intempérie | intempéries | tempête | grêle | grêlon | foudre
statut | avance | abouti | terminé | procédure => clos | clôturé | ouvert | attente | expertise | accepté
    | refusé | adopté
régime de protection | mesure de protection | curatelle | tutelle | sauvegarde de justice | curateur
    | curatrice | tuteur | tutrice | habilitation familiale
emploi | travail | travaille | métier | profession | employeur | salarié | embauché | cdi | cdd | intérim
    | chômage
voiture | véhicule | auto | automobile
volant | conduire | conduit | conducteur | conductrice | permis
maison | habitation | logement | appartement
assurance de prêt | assurance prêt | assurance emprunteur | emprunteur
hôpital | hospitalisation | hospitalisé | clinique
arrêt de travail | arrêt maladie | reprise du travail | reprend le travail | reprendre le travail
    | reprend son activité | reprendre son activité | reprise d'activité | indemnités journalières => arrêt
    | prolongation | reprise | indemnités journalières
communiquer | langue | comprend | comprendre => langue | parle | comprend | traduit | traduction | interprète
sourd | sourde | malentendant | malentendante | audition | auditif | audioprothèse | audioprothèses
    | appareil auditif | appareils auditifs | prothèse auditive
handicap | handicapé | handicapée | invalidité => handicap | mdph | aeeh | aah | rqth | invalidité
banque de france | surendettement | surendetté | surendettée => surendettement | commission | plan
    | recevable
financièrement | difficultés financières | difficulté de paiement => échéancier | étalement | report | délai
    | surendettement
couvre | couvrir | couvert | couverte | couverture | assurer => contrat | assuré | garantie | formule
    | tous risques
épargne | livret | livrets | ldds | lep => livret | épargne | ldds | lep | plafond
malvoyant | malvoyante | aveugle | vue
"""
# fmt: on


@dataclass(frozen=True, slots=True)
class Rule:
    triggers: tuple[frozenset[str], ...]  # each a phrase's content terms
    additions: tuple[str, ...]  # surface words, embedded by the sparse encoder's own pipeline
    addition_terms: tuple[frozenset[str], ...] = ()  # each addition's content terms, read once at parse time

    def fires(self, terms: frozenset[str]) -> bool:
        return any(t and t <= terms for t in self.triggers)


def _joined(rules: str) -> list[str]:
    lines: list[str] = []
    for line in rules.strip("\n").splitlines():
        if line[:1].isspace() and lines:
            lines[-1] += " " + line.strip()
        elif line.strip():
            lines.append(line.strip())
    return lines


def parse(rules: str) -> tuple[Rule, ...]:
    out = []
    for line in _joined(rules):
        left, sep, right = line.partition("=>")
        triggers = [w.strip() for w in left.split("|") if w.strip()]
        additions = [w.strip() for w in right.split("|") if w.strip()] if sep else triggers
        out.append(Rule(tuple(frozenset(content_terms(t)) for t in triggers), tuple(additions),
                        tuple(frozenset(content_terms(w)) for w in additions)))
    return tuple(out)


@lru_cache(maxsize=1)
def french_rules() -> tuple[Rule, ...]:
    return parse(FRENCH_RULES)


def _terms(words: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(content_terms(w)) for w in words)


def expansion(query: str, rules: tuple[Rule, ...] | None = None) -> str:
    """The words to add to ``query``'s keyword search (space-separated), none that it already has.
    Only a French query is expanded: the lexicon's stems are French ones."""
    if detect_language(tokenize(query)) != "fr":
        return ""
    terms = frozenset(content_terms(query))
    if not terms:
        return ""
    seen = set(terms)
    added: list[str] = []
    for rule in french_rules() if rules is None else rules:
        if not rule.fires(terms):
            continue
        for word, stems in zip(rule.additions, rule.addition_terms or _terms(rule.additions), strict=True):
            if stems and not stems <= seen:
                seen.update(stems)
                added.append(word)
    return " ".join(added)
