"""French verb forms moved to the third person singular ("j'habite" → "habite", "vous avez" → "a").

A member says "je", "nous" (the household) or, speaking of the company, "vous"; an advisor says
"je"/"nous" (the company) and "vous" (the member). Facts are stored in the third person, so the
conjugated verb that follows the pronoun must follow it there. Only the one verb right after the
subject is changed: compound tenses keep their participle, modals keep their infinitive, and the
present, imperfect, future and conditional cover what call-center speech uses.

Rules are spelling rules on the form, with a short table of irregular verbs; a rare verb they get
wrong still reads well enough in a prompt ("choisissa" never happens: ``-issez`` is a rule).
"""

from __future__ import annotations

import re

# Irregular forms, keyed by person: "1s" (je), "1p" (nous), "2p" (vous).
_IRREGULAR: dict[str, dict[str, str]] = {
    "1s": dict(
        suis="est", ai="a", vais="va", peux="peut", veux="veut", vaux="vaut", puis="peut", sais="sait",
        fais="fait", dois="doit", crois="croit", vois="voit", reçois="reçoit", recois="reçoit", bois="boit",
        connais="connaît", parais="paraît", nais="naît", vis="vit", dis="dit", mets="met", bats="bat",
        résous="résout", resous="résout", sors="sort", pars="part", dors="dort", sers="sert", cours="court",
        meurs="meurt", acquiers="acquiert",
    ),
    "1p": dict(
        avons="a", sommes="est", allons="va", faisons="fait", disons="dit", pouvons="peut", voulons="veut",
        devons="doit", savons="sait", recevons="reçoit", venons="vient", revenons="revient", devenons="devient",
        prenons="prend", reprenons="reprend", comprenons="comprend", tenons="tient", obtenons="obtient",
        mettons="met", voyons="voit", croyons="croit", vivons="vit", écrivons="écrit", ecrivons="écrit",
        connaissons="connaît", partons="part", sortons="sort", suivons="suit", lisons="lit", buvons="boit",
        envoyons="envoie", sentons="sent", ressentons="ressent", servons="sert", dormons="dort", mentons="ment",
    ),
    "2p": dict(
        avez="a", êtes="est", etes="est", faites="fait", dites="dit", allez="va", pouvez="peut", voulez="veut",
        devez="doit", savez="sait", recevez="reçoit", venez="vient", revenez="revient", devenez="devient",
        prenez="prend", reprenez="reprend", comprenez="comprend", tenez="tient", obtenez="obtient",
        mettez="met", voyez="voit", croyez="croit", vivez="vit", écrivez="écrit", ecrivez="écrit",
        connaissez="connaît", partez="part", sortez="sort", suivez="suit", lisez="lit", buvez="boit",
        envoyez="envoie", sentez="sent", ressentez="ressent", servez="sert", dormez="dort", mentez="ment",
    ),
}  # fmt: skip

# -dre verbs whose "-dez"/"-dons" form is not a -der verb's ("vendez" → "vend", "demandez" → "demande").
_DRE_STEMS = frozenset(
    "attend vend rend répond repond perd descend entend prétend pretend tend défend defend fond mord "
    "tord revend suspend dépend depend correspond".split()
)
# Auxiliaries and modals: the word after them (participle, infinitive) carries the meaning.
AUXILIARIES = frozenset(
    """
    ai a as avons avez ont avais avait avions aviez avaient aurai aura aurons aurez auront aurais aurait
    suis es est sommes êtes etes sont étais était etait étions etions étiez etiez étaient etaient serai sera
    serons serez seront serais serait vais va allons allez vont allais allait irai ira peux peut pouvons
    pouvez peuvent pourrai pourra pourrez pourrais pourrait dois doit devons devez doivent devrai devra
    devrez devrais devrait veux veut voulons voulez veulent voudrais voudrait viens vient venons venez
    """.split()
)

# "préférez" → "préfère", "achetez" → "achète", "célébrez" → "célèbre"; "fermez", "restez" keep their e.
_E_GRAVE = re.compile(r"([eé])([bcdfgjklmnpqrstvz]|[bcdfgptv][rl])$")
_NO_DOUBLING = frozenset({"achet", "rachet", "model", "gel", "pel", "cel", "congel", "harcel", "décel", "decel"})


def _er_third(stem: str) -> str:
    """Third person singular of a regular -er verb from its stem ("habit" → "habite")."""
    if stem.endswith("y"):  # envoyez → envoie, payez → paie
        return stem[:-1] + "ie"
    if stem.endswith("ge"):  # mangeons → mange
        return stem
    if stem.endswith("ç"):  # commençons → commence
        return stem[:-1] + "ce"
    if stem.endswith(("el", "et")) and stem not in _NO_DOUBLING:
        return stem + stem[-1] + "e"  # appelez → appelle, jetez → jette
    m = _E_GRAVE.search(stem)
    if m and len(stem) >= 3:  # préférez → préfère, achetez → achète, menez → mène
        return stem[: m.start()] + "è" + m.group(2) + "e"
    return stem + "e"


def third_singular(form: str, person: str) -> str:
    """``form`` of person ``person`` ("1s", "1p" or "2p") in the third person singular, same tense.

    Unknown shapes come back unchanged: the fact then reads a little wrong, never loses a word."""
    lower = form.lower()
    irregular = _IRREGULAR[person].get(lower)
    if irregular is not None:
        return irregular
    if person == "1s":
        return _first_singular(lower)
    ending = "ez" if person == "2p" else "ons"
    if not lower.endswith(ending):
        return form
    return _plural_stem_third(lower[: -len(ending)])


# Stems of -ier verbs ("vérifiez", "oubliez"): their "-iez" is a present, not an imperfect.
_IER_STEMS = ("fi", "bli", "rci", "éci", "eci", "oci", "udi", "édi", "edi", "opi", "ari", "nvi")
# Future stems ("serez", "recevrons", "passerez"); "-rez" after other stems is a present
# ("déclarez", "assurez", "préférez", "ouvrez").
_FUTURE_STEMS = ("er", "rr", "dr", "ttr", "recevr", "devr", "vivr", "suivr", "finir", "isir", "rtir", "frir",
                 "vrir", "dormir")
_FUTURE_IRREGULAR = frozenset({"ser", "aur", "fer", "ir", "saur"})


def _plural_stem_third(stem: str) -> str:
    if stem.endswith("i") and len(stem) > 2 and not stem.endswith(_IER_STEMS):
        return _soft(stem[:-1]) + "ait"  # imperfect, conditional: aviez, habitions, pourriez → -ait
    if stem in _FUTURE_IRREGULAR or (len(stem) > 3 and stem.endswith(_FUTURE_STEMS)):
        return stem + "a"  # future: serez → sera, enverrons → enverra
    if stem.endswith("iss"):  # choisissez → choisit
        return stem[:-2] + "t"
    if stem in _DRE_STEMS or stem.endswith(tuple(_DRE_STEMS)):
        return stem  # vendez → vend
    return _er_third(stem)


def _soft(stem: str) -> str:
    """French spelling before "a": a "g" keeps its sound with an "e" (chang-iez → changeait), a "c" with
    a cedilla (commenc-iez → commençait)."""
    if stem.endswith("g"):
        return stem + "e"
    if stem.endswith("c"):
        return stem[:-1] + "ç"
    return stem


def _first_singular(lower: str) -> str:
    if lower.endswith("ais"):  # imperfect, conditional: j'étais, je voudrais
        return lower[:-1] + "t"
    if lower.endswith("ai"):  # future: je serai → sera
        return lower[:-1]
    if lower.endswith(("is", "us", "rs", "ns")):  # finis, conclus, pars, viens → -t
        return lower[:-1] + "t"
    if lower.endswith(("ds", "ts", "cs")):  # prends, transmets, convaincs → drop the s
        return lower[:-1]
    if lower.endswith("x"):  # peux → peut
        return lower[:-1] + "t"
    return lower  # -e (present of -er verbs, subjunctive): same form


_PLURAL_3: dict[str, str] = dict(
    avons="ont", sommes="sont", allons="vont", faisons="font", pouvons="peuvent", voulons="veulent",
    devons="doivent", venons="viennent", prenons="prennent", avions="avaient", étions="étaient",
    etions="étaient", serons="seront", aurons="auront",
)  # fmt: skip


def third_plural_from_we(form: str) -> str:
    """"Ma femme et moi avons…" becomes "Le membre et sa femme ont…": nous → ils."""
    lower = form.lower()
    if lower in _PLURAL_3:
        return _PLURAL_3[lower]
    if lower.endswith("ions"):
        return lower[:-4] + "aient"
    if lower.endswith("rons"):
        return lower[:-3] + "ont"
    if lower.endswith("ons"):
        return lower[:-3] + "ent"
    return form


def looks_second_plural(word: str) -> bool:
    """A form that only "vous" takes: "avez", "habitez", "recevrez", "étiez"."""
    lower = word.lower()
    return lower in _IRREGULAR["2p"] or (lower.endswith("ez") and len(lower) > 3)


# The endings of French infinitives (-er, -ir, -re, -oir): what may follow a preposition and its object clitics.
INFINITIVE_ENDINGS = ("er", "ir", "re", "oir")


def looks_infinitive(word: str) -> bool:
    return word.lower().endswith(INFINITIVE_ENDINGS)


def looks_first_plural(word: str) -> bool:
    lower = word.lower()
    return lower in _IRREGULAR["1p"] or (lower.endswith("ons") and len(lower) > 4)


_ON_3P: dict[str, str] = dict(
    a="ont", est="sont", va="vont", fait="font", peut="peuvent", veut="veulent", doit="doivent",
    vient="viennent", prend="prennent", avait="avaient", était="étaient", etait="étaient", sera="seront",
    aura="auront",
)  # fmt: skip


def third_plural_from_on(form: str) -> str:
    """"Ma femme et moi, on a acheté…" becomes "Le membre et sa femme ont acheté…": on → ils."""
    lower = form.lower()
    if lower in _ON_3P:
        return _ON_3P[lower]
    if lower.endswith("ait"):  # imperfect, conditional: habitait → habitaient
        return lower[:-1] + "ent"
    if lower.endswith("e"):  # present of -er verbs: sépare → séparent
        return lower + "nt"
    return form
