"""Vehicles for the slot table: brands and models, one name per model, and the verbs of owning and disposing."""

from __future__ import annotations

import re

rx = re.compile

_BRANDS = (
    r"peugeot|renault|citroen|dacia|tesla|toyota|volkswagen|vw|ford|kia|hyundai|bmw|mercedes(?:-benz)?|"
    r"audi|fiat|opel|nissan|skoda|volvo|mazda|honda|suzuki|yamaha|kawasaki|ducati|triumph|vespa|"
    r"piaggio|porsche|jeep|byd|cupra|lexus|land rover|alfa romeo"
)
_MODEL_BRAND = {
    **dict.fromkeys(("clio", "megane", "captur", "twingo", "zoe", "scenic", "kangoo", "austral"), "renault"),
    **dict.fromkeys(("sandero", "duster", "spring"), "dacia"),
    **dict.fromkeys(("yaris", "corolla", "rav4", "c-hr"), "toyota"),
    **dict.fromkeys(("golf", "polo", "tiguan", "passat"), "volkswagen"),
    **dict.fromkeys(("focus", "fiesta", "puma", "kuga"), "ford"),
    **dict.fromkeys(("niro", "sportage", "picanto"), "kia"),
    **dict.fromkeys(("qashqai", "juke", "micra"), "nissan"),
    **dict.fromkeys(("octavia", "fabia"), "skoda"),
    **dict.fromkeys(("c3", "c4", "berlingo"), "citroen"),
}  # fmt: skip
_NOT_MODEL = (
    r"de|du|des|d'\w*|from|of|en|et|and|a|au|par|by|pour|for|avec|with|hybride|hybrid|electrique|electric|"
    r"diesel|essence|petrol|neuve?|new|occasion|used|modele|model(?! \w)|scooter|moto|voiture|car|depuis|"
    r"since|qui|that|immatricule\w*|\d{4}"
)
# A make or a model named alone ("une Skoda Enyaq", "la Clio"): what a note about a vehicle names it by.
MAKES = rf"(?:{_BRANDS}|{'|'.join(_MODEL_BRAND)})"
VEHICLE = rf"(?P<v>\b(?:{_BRANDS})(?:\s+(?!(?:{_NOT_MODEL})\b)[\w-]+){{0,2}}|\b(?:{'|'.join(_MODEL_BRAND)})\b)"


def vehicle_name(words: tuple[str, ...]) -> tuple[str, ...]:
    """'clio' -> ('renault', 'clio'); 'vw golf' -> ('volkswagen', 'golf'): one name per model."""
    if not words:
        return words
    if words[0] == "vw":
        words = ("volkswagen", *words[1:])
    if words[0] in _MODEL_BRAND:
        words = (_MODEL_BRAND[words[0]], *words)
    return words[:3]


OWNING = rx(
    r"\b(?:possede\w*|a|ai|ont|avons|roule(?:nt)?|conduit|conduisent|owns?|owned|drives?|driving|drove|"
    r"has|have|had|bought|achete\w*|acquis|rides?|riding|vendu|vend|sold|sell\w*|remplace\w*|replaced|"
    r"par une?|by an?|with an?|contre une?|detient|proprietaire)\b"
)
DISPOSING = rx(r"\b(?:vendu|vend|sold|sell\w*|remplace\w*|replaced|got rid|a rendu|returned|epave)\b")
VEHICLE_BOUNDARY = rx(r"[,;:.!?()]|\b(?:mais|but|puis|then|et|and|pour|for)\b|(?=\b(?:par|by|contre)\b)")
