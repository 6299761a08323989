"""The prompt block: a stable preamble first (byte-identical across subjects and calls, so vLLM's
prefix cache keeps it), then the volatile part (this subject's records) last.

Nothing in the preamble may depend on the clock, the subject, the tenant or a record id.
"""

from __future__ import annotations

from collections.abc import Sequence

from carnet.domain.embedding_text import human_date
from carnet.domain.records import Memory

_PREAMBLE = {
    "fr": (
        "### Mémoire Carnet\n"
        "Les éléments ci-dessous viennent d'échanges précédents avec la personne en ligne. "
        "Ils peuvent être incomplets ou dépassés : en cas de doute, faites-les confirmer. "
        "Ne les lisez pas tels quels à l'interlocuteur et ne révélez jamais d'identifiant. "
        "Chaque ligne est datée du moment où le fait est devenu vrai.\n"
    ),
    "en": (
        "### Carnet memory\n"
        "The items below come from earlier exchanges with the person on the line. "
        "They may be incomplete or out of date: when in doubt, ask to confirm. "
        "Do not read them out verbatim and never disclose identifiers. "
        "Each line is dated from when the fact became true.\n"
    ),
}

_HEADINGS = {
    "fr": {"facts": "Faits", "episodes": "Échanges précédents", "procedures": "Procédures", "none": "—"},
    "en": {"facts": "Facts", "episodes": "Previous exchanges", "procedures": "Procedures", "none": "—"},
}


def preamble(locale: str) -> str:
    return _PREAMBLE.get(locale, _PREAMBLE["en"])


def _lines(records: Sequence[Memory], locale: str) -> list[str]:
    return [f"- [{human_date(m.valid_from, locale)}] {m.text}" for m in records]


def render(*, facts: Sequence[Memory], episodes: Sequence[Memory], procedures: Sequence[Memory],
           locale: str) -> str:
    h = _HEADINGS.get(locale, _HEADINGS["en"])
    out = [preamble(locale)]
    for key, records in (("procedures", procedures), ("episodes", episodes), ("facts", facts)):
        out.append(f"\n#### {h[key]}\n")
        out.append("\n".join(_lines(records, locale)) if records else h["none"])
        out.append("\n")
    return "".join(out)
