"""Declarative table: the slots, French and English patterns that read (slot, value) out of a member fact.

Declarative on purpose: a reviewer reads one entry per slot, and adding a slot is adding a
row. Patterns run on ``text.fold`` output (casefolded, accents removed, one apostrophe), so
they are written without accents. Each pattern has a group ``v``: the value. The value's
canonical form is computed by ``carnet.domain.reconcile.slots`` according to ``ValueKind``.

Slots cover what call-center notes of insurers and banks keep restating: where the member
lives, budgets and amounts, contact preferences, family, employer, vehicles, contracts and
their options, claims, payment means, bank details, appointments.

What a row is: ``slot_rule``; the fragments it is written with: ``slot_fragments``,
``slot_vehicles``; the qualifiers: ``slot_qualifiers``; the cues shared with reconcile: ``slot_cues``.
"""

from __future__ import annotations

from carnet.domain.reconcile.slot_fragments import (
    ADV,
    AMOUNT,
    AVAILABLE,
    CHANNEL,
    CONTACTING,
    END_NAME,
    END_PLACE,
    MONTHS,
    NAME,
    NUM,
    PAYING,
    PLACE,
)
from carnet.domain.reconcile.slot_qualifiers import (
    account,
    claim_type,
    email_use,
    phone_line,
    product,
    purpose,
    with_whom,
)
from carnet.domain.reconcile.slot_rule import RAW, SlotRule, ValueKind, enums, rx
from carnet.domain.reconcile.slot_vehicles import DISPOSING, OWNING, VEHICLE, VEHICLE_BOUNDARY, vehicle_name

_EMPLOYER_LEFT = rx(
    rf"\b(?:a quitte|quitte|left|quit|has left)\s+(?:son (?:poste|emploi|travail) (?:chez|a)\s+|"
    rf"(?:his|her|their) job at\s+|chez\s+)?{NAME}{END_NAME}"
)

RULES: tuple[SlotRule, ...] = (
    SlotRule(
        "residence",
        (
            rx(rf"\b(?:habite|habitent|vit|vivent|reside|resident|demeure|domiciliee?|lives?|living|resides?|"
               rf"residing|based){ADV}\s+(?:a|au|aux|en|dans|sur|in|at|near|pres de)\s+{PLACE}{END_PLACE}"),
            rx(rf"\b(?:habite|habitent){ADV}\s+(?!a\b|au\b|aux\b|en\b|dans\b|sur\b|chez\b|avec\b|seule?\b|"
               rf"ensemble\b|depuis\b|pres\b|un\b|une\b|le\b|la\b|les\b){PLACE}{END_PLACE}"),
            rx(rf"\b(?:demenage|installee?|emmenage|moved|relocated)\b(?:\s+(?:de|du|from)\s+[^,;:.()!?]+?)?"
               rf"{ADV}\s+(?:a|au|aux|en|dans|sur|to|in|into)\s+{PLACE}{END_PLACE}"),
            rx(r"\b(?:adresse(?:\s+postale)?|address)(?:\s*:\s*|\s+(?:est|is)\s+)"
               r"(?P<v>[^;()!?]+?)(?=\s*[;()!?]|\.(?:\s|$)|\s*$)"),
        ),
        ValueKind.NAME, polar=True, max_words=10,
    ),
    SlotRule(
        "employer",
        (
            rx(rf"\b(?:travaille|travaillent|bosse|employee?|salariee?|embauchee?|works?|working|employed|"
               rf"hired){ADV}\s+(?:chez|pour|par|at|for|by)\s+{NAME}{END_NAME}"),
            rx(rf"\b(?:employeur|employer)(?:\s*:\s*|\s+(?:est|is)\s+){NAME}{END_NAME}"),
            # "travaille à la SNCF / au Crédit Agricole": an article makes it an organisation, while
            # "travaille à Lyon" is a place of work, not an employer.
            rx(rf"\b(?:travaille|travaillent|salariee?|employee?|agent){ADV}\s+(?:a la|a l'|au|aux|de la|de l'|du)\s*"
               rf"{NAME}{END_NAME}"),
            _EMPLOYER_LEFT,
            rx(rf"\b(?:rejoindre|rejoint|joined|join|joining|recrutee? (?:par|chez))\s+{NAME}{END_NAME}"),
        ),
        ValueKind.NAME, polar=True, negative_patterns=(_EMPLOYER_LEFT,), max_words=5,
    ),
    SlotRule(
        "profession",
        (rx(rf"\b(?:travaille comme|travaille en tant que|en tant que|works as(?: an?)?|working as(?: an?)?|"
            rf"profession\s*:?|metier\s*:?|job\s*:|occupation\s*:?|de profession)\s+{NAME}{END_NAME}"),),
        ValueKind.NAME, polar=True, max_words=3,
    ),
    SlotRule(
        "occupation_status",
        (rx(r"(?P<v>\betudiante?s?\b|\b(?:fait|font|poursuit) (?:ses|des|leurs) etudes\b|\bstudent\b|"
            r"\bstudying\b|\bretraitee\b|\b(?:est|sont|is|now)\s+(?:a la\s+)?retraitee?s?\b|"
            r"\b(?:pris|prend|partie?|depart) (?:sa|a la|en) retraite\b|\bretired\b|\bau chomage\b|"
            r"\bdemandeu(?:r|se) d'emploi\b|\bunemployed\b|\bsans emploi\b|\bjobless\b)"),),
        ValueKind.ENUM, polar=True,
        enum=enums((r"etud|student|studying", "student"), (r"retrait|retired", "retired"),
                   (r"chomage|emploi|unemployed|jobless", "unemployed")),
    ),
    SlotRule(
        "marital_status",
        (rx(r"(?:^\W*|\b(?:est|sont|suis|is|are|got|get|getting|s'est|se sont|etre|been|devenue?|vit|vivent|"
            r"lives?|living|now)\s+(?:[\w']+\s+){0,2}?)(?P<v>mariee?s?|married|pacsee?s?|divorcee?s?|"
            r"divorced|celibataire|single|veu(?:f|ve)s?|widow(?:ed|er)?|separee?s?|separated|en couple|"
            r"remariee?s?|remarried|concubinage|in a relationship)\b"),),
        ValueKind.ENUM, polar=True,
        enum=enums((r"^mari|^married|^remari", "married"), (r"^pacs", "pacs"), (r"^divorc", "divorced"),
                   (r"celibat|single", "single"), (r"veu|widow", "widowed"), (r"separ", "separated"),
                   (r"couple|concubinage|relationship", "couple")),
    ),
    SlotRule(
        "children",
        (
            rx(r"\b(?:a|ont|avec|de|has|have|with|of)\s+(?P<v>\d+|un|une|deux|trois|quatre|cinq|six|sept|huit|"
               r"neuf|dix|one|two|three|four|five|seven|eight|nine|ten|no|aucun)\s+(?:[\w']+\s+)?"
               r"(?:enfants?|kids?|children|child)\b"),
            rx(r"(?P<v>\bsans enfants?\b|\bpas d'enfants?\b|\baucun enfant\b|\bno (?:kids|children)\b|"
               r"\bchildless\b)"),
        ),
        ValueKind.NUMBER,
    ),
    SlotRule(
        "budget",
        (
            rx(rf"\bbudget\b[^.;]{{0,60}}?{AMOUNT}"),
            rx(rf"{AMOUNT}\s+(?:de|of)\s+budget\b"),
            rx(rf"\b(?:depasser|exceed|spend (?:more than|over)|pay more than|mettre plus de|"
               rf"depenser plus de)\s+{AMOUNT}"),
            rx(rf"\b(?:mettre|depenser|spend|pay|payer)\s+(?:au maximum |au plus |jusqu'a |up to |at most |max )"
               rf"{AMOUNT}"),
            rx(rf"\b(?:mettre|depenser|spend|pay|payer)\s+{AMOUNT}\s+"
               rf"(?:maximum|max|au maximum|au plus|at most|tops)\b"),
        ),
        ValueKind.NUMBER, qualify=product,
    ),
    SlotRule(
        "income",
        (rx(rf"\b(?:salaire|revenus?|remuneration|salary|income|earns?|earning|gagne|gagnent|touche)\b"
            rf"[^.;]{{0,40}}?{AMOUNT}"),),
        ValueKind.NUMBER,
    ),
    SlotRule(
        "premium",
        (rx(rf"\b(?:cotisations?|primes?|premiums?|mensualites?)\b[^.;]{{0,40}}?{AMOUNT}"),),
        ValueKind.NUMBER, wildcard=False, qualify=product, per_person=False,
    ),
    SlotRule(
        "deductible",
        (
            rx(rf"\b(?:franchise|deductible|excess)\b[^.;]{{0,40}}?{AMOUNT}"),
            rx(rf"{AMOUNT}\s+(?:de\s+)?(?:franchise|deductible|excess)\b"),
        ),
        ValueKind.NUMBER, wildcard=False, qualify=product, per_person=False,
    ),
    SlotRule(
        "annual_mileage",
        (
            rx(rf"(?P<v>{NUM})\s?km\b(?=[^.;]{{0,25}}(?:\bpar an\b|/an\b|\bannuels?\b|\bper year\b|"
               rf"\ba year\b|\byearly\b|\bannually\b))"),
            rx(rf"\bkilometrage annuel\b[^.;]{{0,30}}?(?P<v>{NUM})\s?km\b"),
        ),
        ValueKind.NUMBER, per_person=False,
    ),
    SlotRule(
        "bonus_malus",
        (rx(r"\b(?:bonus-malus|bonus malus|bonus|malus|crm|coefficient|reduction-majoration|"
            r"no[- ]claims?(?: bonus| discount)?)\b[^.;]{0,40}?(?P<v>\d+[.,]\d+)"),),
        ValueKind.NUMBER,
    ),
    SlotRule(
        "phone",
        (rx(r"(?P<v>(?:\+33 ?|0033 ?|\b0)[1-9](?:[ .-]?\d{2}){4})(?!\d)"),),
        ValueKind.CODE, polar=True, qualify=phone_line,
    ),
    SlotRule(
        "email",
        (rx(r"(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"),),
        ValueKind.CODE, polar=True, qualify=email_use,
    ),
    SlotRule(
        "iban",
        (rx(r"(?P<v>\b[a-z]{2}\d{2}(?: ?[a-z0-9]{4}){2,7}(?: ?[a-z0-9]{1,3})?)\b"),),
        ValueKind.CODE,
    ),
    SlotRule(
        "bank",
        (rx(r"(?P<v>\b(?:la banque postale|banque postale|credit agricole|societe generale|bnp(?: paribas)?|"
            r"lcl|credit lyonnais|caisse d'epargne|credit mutuel|cic|boursorama|boursobank|ing|hello ?bank|"
            r"fortuneo|banque populaire|credit du nord|hsbc|barclays|lloyds|natwest|monzo|revolut|n26|"
            r"qonto|monabanq|bforbank)\b)"),),
        ValueKind.ENUM, polar=True, qualify=account,
        negative_words=rx(r"\b(?:cloture\w*|ferme\w*|closed|a quitte|quitte|left)\b"),
        context=rx(r"\b(?:comptes?|livrets?|accounts?|client(?:e)? (?:de|chez|a|au)|banks? with|"
                   r"carte bancaire|rib|domiciliation)\b"),
        enum=enums((r"postale", "banque postale"), (r"agricole", "credit agricole"),
                   (r"generale", "societe generale"), (r"bnp", "bnp paribas"), (r"lcl|lyonnais", "lcl"),
                   (r"epargne", "caisse d'epargne"), (r"mutuel", "credit mutuel"), (r"bourso", "boursobank"),
                   (r"hello", "hello bank"), (r"populaire", "banque populaire"), (r".+", RAW)),
    ),
    SlotRule(
        "vehicle",
        (rx(VEHICLE),),
        ValueKind.NAME, exclusive=False, polar=True, negative_words=DISPOSING,
        prefix_requires=OWNING, boundary=VEHICLE_BOUNDARY, canonical=vehicle_name, max_words=3,
    ),
    SlotRule(
        "contact_time",
        (rx(r"(?P<v>\bapres-midi\b|\bapres midi\b|\bafternoons?\b|\bavant midi\b|\bbefore noon\b|\bmatinee\b|"
            r"\bmatins?\b|\bmornings?\b|\bsoiree\b|\bsoirs?\b|\bevenings?\b|\bfin de (?:journee|soiree)\b|"
            r"\bend of the day\b|\blate afternoon\b|\bafter [5-9] ?pm\b|"
            r"\bapres 1[7-9] ?h\b|\bentre midi et deux\b|\bmidi\b|\blunch ?time\b|\bheure du dejeuner\b|"
            r"\bnoon\b)"),),
        ValueKind.ENUM, polar=True, per_person=False, context=CONTACTING,
        enum=enums((r"apres.midi|afternoon", "afternoon"), (r"avant|before|matin|morning", "morning"),
                   (r"soir|evening|pm|apres|fin de|end of|late", "evening"), (r"midi|lunch|dejeuner|noon", "noon")),
    ),
    SlotRule(
        "contact_day",
        (rx(r"(?P<v>\b(?:lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|week-?end|en semaine|monday|"
            r"tuesday|wednesday|thursday|friday|saturday|sunday|weekdays?)s?\b)"),),
        ValueKind.ENUM, exclusive=False, polar=True, per_person=False, context=AVAILABLE,
        enum=enums((r"lundi|monday", "mon"), (r"mardi|tuesday", "tue"), (r"mercredi|wednesday", "wed"),
                   (r"jeudi|thursday", "thu"), (r"vendredi|friday", "fri"), (r"samedi|saturday", "sat"),
                   (r"dimanche|sunday", "sun"), (r"week-?end", "weekend"), (r"semaine|weekday", "weekdays")),
    ),
    SlotRule(
        "contact_channel",
        (
            rx(rf"\b(?:prefer\w*|souhait\w*|veu[tx]|voudrai\w*|wants?|likes?|rather|aime\w*|contact\w*|joindre|"
               rf"joignable|recevoir|receive|refuse\w*|accepte\w*|uniquement|only|seulement)\b[^.;]{{0,60}}?"
               rf"\b(?:par|by|via|en|au|on|sur)\s+(?:le |la |l'|les |un |une )?(?P<v>{CHANNEL})\b"),
            rx(rf"\bprefer\w*\s+(?:le |la |l'|les |the )?(?P<v>{CHANNEL})\b"),
        ),
        ValueKind.ENUM, polar=True, per_person=False, qualify=purpose,
        enum=enums((r"tel|phone", "phone"), (r"mail|courriel|messagerie", "email"), (r"sms|texto|text", "sms"),
                   (r"courrier|papier|post|letter", "post"), (r"agence|branch", "branch"),
                   (r"whatsapp", "whatsapp"), (r"visio|video", "video"), (r"espace", "portal")),
    ),
    SlotRule(
        "payment_method",
        (rx(r"(?P<v>\bprelevements?\b|\bdirect debit\b|\bcheques?\b|\bchecks?\b|\bcarte (?:bancaire|bleue)\b|"
            r"\bpar carte\b|\bby card\b|\bcard\b|\bcb\b|\bvirements?\b|\bbank transfer\b|\btransfer\b|"
            r"\bespeces\b|\bcash\b)"),),
        ValueKind.ENUM, wildcard=False, polar=True, per_person=False, qualify=product, context=PAYING,
        enum=enums((r"prelevement|debit", "direct_debit"), (r"cheque|check", "cheque"),
                   (r"carte|card|cb", "card"), (r"virement|transfer", "transfer"), (r"especes|cash", "cash")),
    ),
    SlotRule(
        "payment_frequency",
        (rx(r"(?P<v>\bmensuel\w*|\bchaque mois\b|\bpar mois\b|\btous les mois\b|\bmonthly\b|\bper month\b|"
            r"\ba month\b|\beach month\b|\bevery month\b|\btrimestriel\w*|\b(?:par|chaque) trimestre\b|"
            r"\btous les trimestres\b|\bquarterly\b|\bevery quarter\b|\bsemestriel\w*|"
            r"\bannuel\w*|\b(?:une )?(?:seule )?fois par an\b|\bpar an\b|\bchaque annee\b|\bannually\b|"
            r"\byearly\b|\bper year\b|\ba year\b|\bonce a year\b|\bevery year\b|\bannual\b)"),),
        ValueKind.ENUM, wildcard=False, per_person=False, qualify=product, context=PAYING,
        enum=enums((r"mensuel|mois|month", "monthly"), (r"trimest|quarter", "quarterly"),
                   (r"semest", "half_yearly"), (r"an|year|annee|annual", "yearly")),
    ),
    SlotRule(
        "cover_level",
        (
            rx(r"\bformule\s+(?:[\w']+\s+)?(?P<v>tous risques|tout risque|tiers (?:plus|etendu|maxi)|tiers|"
               r"intermediaire|essentielle?|confort|premium|basique|eco|integrale|optimale?|serenite)\b"),
            rx(r"(?P<v>\btous risques\b|\btout risque\b|\ball risks?\b|\bcomprehensive\b|\bau tiers\b|"
               r"\btiers (?:plus|etendu)\b|\bthird[- ]party(?: fire and theft)?\b)"),
        ),
        ValueKind.ENUM, wildcard=False, per_person=False, qualify=product,
        enum=enums((r"tous|tout|all risk|comprehensive", "all_risks"), (r"plus|etendu|maxi|fire", "third_plus"),
                   (r"tiers|third", "third_party"), (r"intermediaire", "intermediate"),
                   (r"essentiel", "essential"), (r"confort", "comfort"), (r"premium", "premium"),
                   (r"basique|eco", "basic"), (r"integral", "integral"), (r"optimal", "optimal"),
                   (r"serenite", "serenity")),
    ),
    SlotRule(
        "housing_tenure",
        (rx(r"(?P<v>\bproprietaires?\b(?! (?:du|de la|d'une?) (?:vehicule|voiture|moto))|\blocataires?\b|"
            r"\bhomeowners?\b|\btenants?\b|\brenters?\b|\brenting\b|\bhebergee?s? (?:chez|par)\b|"
            r"\bowns (?:a|the|his|her|their) (?:flat|house|home|apartment)\b|"
            r"\brents (?:a|the|his|her|their) (?:flat|house|home|apartment)\b)"),),
        ValueKind.ENUM, polar=True,
        enum=enums((r"propriet|homeowner|owns", "owner"), (r"locat|tenant|rent", "tenant"), (r"heberg", "hosted")),
    ),
    SlotRule(
        "claim_status",
        (rx(r"(?P<v>\ben cours\b(?: d'(?:expertise|instruction|indemnisation))?|\bouverte?\b|\bopen\b|\bpending\b|"
            r"\ben attente\b|\bexpertise\b|\bclos\b|\bclose\b|\bcloture\b|\bfermee?\b|\bclosed\b|\bsettled\b|"
            r"\bindemnisee?\b|\bremboursee?\b|\bpaid out\b|\brefusee?\b|\brejetee?\b|\brejected\b|"
            r"\bdeclined\b|\bclasse sans suite\b)"),),
        ValueKind.ENUM, per_person=False, qualify=claim_type,
        context=rx(r"\b(?:sinistres?|claims?|degats?|dommages?)\b"),
        enum=enums((r"refus|rejet|reject|declin|sans suite", "refused"),
                   (r"clos|close|clotur|ferme|settled|indemnis|rembours|paid", "closed"),
                   (r"cours|ouvert|open|pending|attente|expertise", "open")),
    ),
    SlotRule(
        "appointment",
        (rx(rf"(?P<v>\b\d{{1,2}}(?:er)? (?:{MONTHS})\b|\b\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?\b)"),),
        ValueKind.DATE, exclusive=False, polar=True, per_person=False, qualify=with_whom,
        negative_words=rx(r"\b(?:annule\w*|annulation|cancel\w*|called off)\b"), negative_in_text=True,
        context=rx(r"\b(?:rendez-vous|rdv|appointment|meeting|visite|passera|passage|viendra|"
                   r"will (?:come|visit)|rencontre)\b"),
    ),
    SlotRule(
        "smoker",
        (rx(r"(?P<v>\bnon[- ]fumeu(?:r|se)\b|\bfumeu(?:r|se)s?\b|\bfume\b|\bnon[- ]smoker\b|\bsmokers?\b|"
            r"\bsmokes\b|\barrete de fumer\b|\bquit smoking\b|\bstopped smoking\b)"),),
        ValueKind.ENUM, polar=True, negative_words=rx(r"\bnon[- ]|arrete|quit|stopped"),
        enum=enums((r".", "smoker"),),
    ),
    SlotRule(
        "parking",
        (rx(r"(?P<v>\bgarage(?: ferme| prive| box)?\b|\bbox (?:ferme|prive)\b|\bparking (?:prive|ferme|securise)\b|"
            r"\bparking (?:souterrain|couvert|collectif)\b|\bdans la rue\b|\bsur la voie publique\b|"
            r"\b(?:in|on) the street\b|\bdriveway\b|\bdans (?:la|une) cour\b)"),),
        ValueKind.ENUM, polar=True, per_person=False,
        context=rx(r"\b(?:garee?s?|gare|stationne\w*|parked|parks|park|dort|nuit|night|stationnement|overnight)\b"),
        enum=enums((r"garage|box|prive|ferme|securise", "garage"), (r"souterrain|couvert|collectif", "car_park"),
                   (r"rue|voie|street", "street"), (r"driveway|cour", "driveway")),
    ),
    SlotRule(
        "age",
        (rx(r"\b(?:a|has|agee?(?: de)?|aged|is)\s+(?P<v>\d{2})\s+(?:ans|years old)\b"),),
        ValueKind.NUMBER,
    ),
    SlotRule(
        "birth_year",
        (rx(r"\bnee?\s+(?:le [^.;]{0,20}?)?en (?P<v>\d{4})\b"), rx(r"\bborn in (?P<v>\d{4})\b")),
        ValueKind.NUMBER,
    ),
    SlotRule(
        "contract",
        (rx(r"\b(?:a souscrit|souscrit|a resilie|resilie|resiliation d[eu']?|a|possede|detient|beneficie d[eu']?|"
            r"couverte? par|has|holds|took out|cancell?ed|terminated|n'a plus(?: d[eu'])?)\s+(?:[\w']+\s+){0,2}?"
            r"(?P<v>assurance|contrat|police|insurance|policy|mutuelle|complementaire)\b"),),
        ValueKind.ENUM, wildcard=False, polar=True, qualify=product,
        negative_words=rx(r"\b(?:a resilie|resilie|resiliation|cancell?ed|terminated)\b"),
        enum=enums((r".", "held"),),
    ),
)
