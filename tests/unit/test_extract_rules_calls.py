"""The rule extractor on spoken calls: apostrophes left out, corrections mid-call, the advisor's
read-backs, small talk about the line, verbless continuations, categories of contact details.

Sentences are written for these tests (general call-center French), not taken from a benchmark."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.domain.extraction.model import ExtractedFact, Extraction
from carnet.domain.extraction.rules import corrections, extract, fragments, repeats, turns
from carnet.domain.extraction.rules.classify import category
from carnet.domain.extraction.rules.elision import restore_apostrophes
from carnet.domain.extraction.rules.rewrite_fr import ADVISOR, MEMBER, rewrite_fr
from carnet.domain.extraction.rules.smalltalk import is_ritual
from carnet.domain.intake import Message

AT = datetime(2025, 5, 6, 14, 0, tzinfo=UTC)
PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>")


def _call(*turns: tuple[str, str]) -> Extraction:
    messages = [Message(role, text, AT + timedelta(seconds=20 * n)) for n, (role, text) in enumerate(turns)]
    return extract(messages, session_id="call-1", locale="fr")


def _texts(*turns: tuple[str, str]) -> list[str]:
    return [f.text for f in _call(*turns).facts]


# --- apostrophes a transcript left out ---------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "restored"),
    [
        ("j ai un contrat", "j'ai un contrat"),
        ("J habite à Nantes", "J'habite à Nantes"),
        ("c est le 5", "c'est le 5"),
        ("qu il me rappelle", "qu'il me rappelle"),
        ("il m a dit", "il m'a dit"),
        ("il n y a rien", "il n'y a rien"),
        ("à l heure", "à l'heure"),
        ("j’attends", "j'attends"),
    ],
)
def test_elided_words_get_their_apostrophe(said: str, restored: str) -> None:
    assert restore_apostrophes(said) == restored


@pytest.mark.parametrize("said", ["S I N 2025", "plan A a", "vitamine c ou d", "de a à z", "M. Roux"])
def test_spellings_and_letters_stay_as_they_are(said: str) -> None:
    assert restore_apostrophes(said) == said


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("jmtlcqu aeiohyéà'’ ,.JCLS<>_1")), max_size=40))
def test_restoring_only_ever_adds_apostrophes(text: str) -> None:
    restored = restore_apostrophes(text)
    assert restored.replace("'", "").replace(" ", "") == text.replace("’", "").replace("'", "").replace(" ", "")


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("j ai déménagé à Brest", "Le membre a déménagé à Brest."),
        ("j habite au <ADDRESS_1> depuis mars", "Le membre habite au <ADDRESS_1> depuis mars."),
        ("moi, je préfère qu on m appelle le soir", "Le membre préfère qu'on appelle le membre le soir."),
    ],
)
def test_first_person_without_apostrophes(said: str, fact: str) -> None:
    assert _texts(("user", said)) == [fact]


# --- pronouns between a noun and its verb ------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "speaker", "fact"),
    [
        ("Ma sœur m'a prêté sa voiture.", MEMBER, "La sœur du membre a prêté au membre sa voiture."),
        ("Mon fils vous l'apportera lundi.", MEMBER, "Le fils du membre l'apportera lundi."),
        ("Il me l'a expliqué hier.", MEMBER, "Il l'a expliqué au membre hier."),
        ("Il vous reste 300 euros à payer.", ADVISOR, "Il reste au membre 300 euros à payer."),
        ("Vous êtes chez nous depuis 2012.", ADVISOR, "Le membre est chez nous depuis 2012."),
    ],
)
def test_object_pronouns_land_on_the_right_word(said: str, speaker: str, fact: str) -> None:
    assert rewrite_fr(said, speaker) == fact


_WORDS = st.sampled_from(
    "je j'ai j ai mon ma mes moi on nous vous votre vos me m'a m'envoie l'a l'ai le la lui a ai avez suis est "
    "envoie habite rappelle , . : <PHONE_1> <ADDRESS_2> <EMAIL_1> 12 mars euros contrat fils "
    "et mari se s'est sépare séparons en y ne n'a père".split()
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=14), st.sampled_from([MEMBER, ADVISOR]), st.booleans(), st.booleans())
def test_rewriting_never_raises_and_keeps_exactly_the_placeholders(words: list[str], speaker: str, proxy: bool,
                                                                   relay: bool) -> None:
    sentence = restore_apostrophes(" ".join(words))
    out = rewrite_fr(sentence, speaker, proxy=proxy, relay=relay)
    assert sorted(PLACEHOLDER.findall(out)) == sorted(PLACEHOLDER.findall(sentence))


@pytest.mark.parametrize(
    "said",
    [
        "Mon fils me l'a envoyé.",
        "Ma mère vous l'a dit.",
        "Il m'en a parlé.",
        "Le notaire me l'enverra.",
        "Mon conseiller m'a rappelé hier.",
    ],
)
@pytest.mark.parametrize("speaker", [MEMBER, ADVISOR])
def test_the_member_is_never_glued_to_an_elided_pronoun(said: str, speaker: str) -> None:
    assert not re.search(r"'(?:du|le|au) membre", rewrite_fr(said, speaker))


# --- corrections mid-call ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("Mon rendez-vous est le 4 juin, non pardon, le 6 juin.", "Mon rendez-vous est le 6 juin."),
        ("Je paie 38 euros, enfin non, 48 euros par mois.", "Je paie 48 euros par mois."),
        ("C'est le <PHONE_1>... non, <PHONE_2>.", "C'est le <PHONE_2>."),
        ("J'habite au 3 rue Haute, je me suis trompée, au 5 rue Haute.", "J'habite au 5 rue Haute."),
        ("J'ai un enfant, pardon, j'ai deux enfants.", "j'ai deux enfants."),
    ],
)
def test_a_correction_inside_a_sentence_keeps_the_new_value(said: str, kept: str) -> None:
    assert corrections.within(said) == kept


@pytest.mark.parametrize(
    "said",
    [
        "Pardon de vous déranger, j'ai une question.",
        "C'était long... non, rien.",
        "Je vous dis non, pas de démarchage.",
    ],
)
def test_no_correction_leaves_the_sentence_alone(said: str) -> None:
    assert corrections.within(said) == said


def test_a_correction_in_the_next_sentence_replaces_the_last_fact() -> None:
    facts = _texts(
        ("advisor", "Quelle est votre date de naissance ?"),
        ("user", "Le 8 février 1971."),
        ("user", "Ah non pardon, le 9 février 1971."),
    )
    assert len(facts) == 1 and "9 février 1971" in facts[0] and "8 février" not in facts[0]


def test_a_correction_after_the_advisor_spoke_still_finds_the_members_fact() -> None:
    facts = _texts(
        ("user", "Le passage de l'expert est prévu le 14 octobre."),
        ("advisor", "Très bien."),
        ("user", "Enfin non, c'est le 16 octobre."),
    )
    assert facts == ["Le passage de l'expert est prévu le 16 octobre 2025."]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from("le 12 , non pardon enfin non euros au rue ... je me suis trompé <PHONE_1> c'est mars".split()),
        max_size=16,
    )
)
def test_corrections_never_raise_nor_invent_placeholders(words: list[str]) -> None:
    sentence = " ".join(words)
    out = corrections.within(sentence)
    assert set(PLACEHOLDER.findall(out)) <= set(PLACEHOLDER.findall(sentence))


# --- read-backs, small talk --------------------------------------------------------------------


def test_a_yes_confirms_the_advisors_read_back() -> None:
    facts = _call(("advisor", "Toujours au <ADDRESS_1> ?"), ("user", "Oui, toujours.")).facts
    assert [f.text for f in facts] == ["Le membre confirme : toujours au <ADDRESS_1>."]
    assert facts[0].category == "adresse"


def test_a_no_confirms_nothing() -> None:
    assert _texts(("advisor", "Toujours au <ADDRESS_1> ?"), ("user", "Non.")) == []


@pytest.mark.parametrize(
    "clause",
    [
        "Je vous entends mal",
        "je vous entends un peu loin",
        "Vous m'entendez ?",
        "la ligne coupe",
        "Attendez, je prends un stylo",
        "je cherche mes papiers",
        "ça va mieux comme ça",
    ],
)
def test_the_line_and_the_pen_are_small_talk(clause: str) -> None:
    assert is_ritual(clause)


@pytest.mark.parametrize("said", ["J'entends mal au téléphone.", "Je mets ma maison en location."])
def test_what_sounds_like_small_talk_but_is_a_fact_stays(said: str) -> None:
    assert not is_ritual(said)
    assert _texts(("user", said))


# --- verbless continuations --------------------------------------------------------------------


def test_a_verbless_piece_continues_the_fact_before_it() -> None:
    facts = _texts(("user", "J'ai trouvé un emploi. Aide-soignante, à la clinique du parc. 1 900 euros net."))
    assert facts == ["Le membre a trouvé un emploi ; aide-soignante, à la clinique du parc ; 1 900 euros net."]


@pytest.mark.parametrize(
    ("sentence", "fragment"),
    [
        ("Surtout pas le matin.", True),
        ("1 200 euros.", True),
        ("Je préfère le soir.", False),
        ("C'est urgent.", False),
        ("Mon fils a 17 ans.", False),
    ],
)
def test_what_is_a_fragment(sentence: str, fragment: bool) -> None:
    assert fragments.is_fragment(sentence) is fragment


def test_a_fragment_of_another_message_stands_alone() -> None:
    facts = _texts(("user", "J'ai trouvé un emploi."), ("advisor", "Quel salaire ?"), ("user", "1 900 euros net."))
    assert len(facts) == 2


# --- categories --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("L'adresse e-mail du membre est <EMAIL_1>.", "contact"),
        ("L'adresse du membre est <ADDRESS_1>.", "adresse"),
        ("Le numéro fixe du membre est <PHONE_1>.", "contact"),
        ("Le membre a signé un CDI de magasinier.", "famille"),
    ],
)
def test_contact_details_and_situation(text: str, expected: str) -> None:
    assert category(text, advisor=False) == expected


# --- what a call says twice, and what only names the case ---------------------------------------


def test_a_repeated_part_of_a_fact_is_dropped_whichever_comes_first() -> None:
    facts = _texts(
        ("user", "SIN-2025-071228."),
        ("advisor", "Je déclare le sinistre incendie, numéro SIN-2025-071228."),
        ("user", "Ils m'ont fait un prix, 3 760 euros au lieu de 3 900."),
        ("advisor", "D'accord, 3 760 euros."),
    )
    assert facts == [
        "Le conseiller déclare le sinistre incendie, numéro SIN-2025-071228.",
        "Ils ont fait au membre un prix, 3 760 euros au lieu de 3 900.",
    ]


def test_a_read_back_of_what_another_fact_holds_is_dropped_and_a_lone_one_kept() -> None:
    """"Je relis : …" is the advisor's procedure: the address is the member's fact, said once."""
    facts = _texts(
        ("user", "J'ai déménagé, je suis au 5 allée des Mésanges à Échirolles."),
        ("advisor", "Je relis : 5 allée des Mésanges, Échirolles."),
        ("user", "Oui c'est ça."),
    )
    assert facts == ["Le membre a déménagé, il est au 5 allée des Mésanges à Échirolles."]
    assert _texts(("advisor", "Je relis : 5 allée des Mésanges, Échirolles.")) == [
        "Le conseiller relit : 5 allée des Mésanges, Échirolles."]  # nothing else holds it


def test_a_repeat_with_another_polarity_is_kept() -> None:
    facts = _texts(
        ("user", "Je veux les documents par courrier."), ("user", "Enfin, je ne veux pas de courrier papier.")
    )
    assert len(facts) == 2


def test_a_vocative_and_a_bare_case_reference_are_no_facts() -> None:
    facts = _texts(
        ("advisor", "Alpiane Assurances, bonjour."),
        ("user", "Bonjour, dossier SIN-2025-071228. L'expert est passé hier."),
        ("advisor", "Madame <PERSON_1>, le dossier SIN-2025-071228 est en cours d'expertise."),
    )
    assert not any(f.startswith(("Dossier", "Madame")) for f in facts)
    assert "Le dossier SIN-2025-071228 est en cours d'expertise." in facts


def test_the_number_of_what_was_just_said_is_read_with_it() -> None:
    facts = _texts(("advisor", "J'enregistre une réclamation pour le calcul. Le numéro est REC-2025-1148."))
    assert facts == ["Le conseiller enregistre une réclamation pour le calcul ; le numéro est REC-2025-1148."]


# --- one record per turn ---------------------------------------------------------------------------


def test_what_a_member_says_in_one_message_is_one_record() -> None:
    facts = _texts(
        ("advisor", "Vous avez vos appareils ?"),
        ("user", "Oui, j'ai mes appareils maintenant. J'ai pris les classe 2. Il m'a fait un prix, 3 760 euros."),
        ("user", "Et je voulais vous dire que j'ai changé de banque."),
    )
    assert len(facts) == 2
    assert "classe 2" in facts[0] and "3 760 euros" in facts[0] and "banque" in facts[1]


def test_a_greeting_with_a_name_is_no_record() -> None:
    facts = _texts(("user", "Bonjour, <PERSON_1>. J'ai une question sur mon contrat auto."))
    assert facts == ["Le membre a une question sur son contrat auto."]


def test_a_turn_record_takes_its_most_important_part_and_earliest_date() -> None:
    fact = ExtractedFact("Le membre a pris un café.", "autre", 0.3, datetime(2025, 5, 2, tzinfo=UTC))
    decision = ExtractedFact("Le conseiller ouvre le dossier SIN-2025-1.", "decision", 0.8,
                             datetime(2025, 5, 1, tzinfo=UTC))  # fmt: skip
    (one,) = turns.by_turn([fact, decision], [3, 3])
    assert (one.category, one.importance, one.valid_from) == ("decision", 0.8, datetime(2025, 5, 1, tzinfo=UTC))
    assert one.text == "Le membre a pris un café ; le conseiller ouvre le dossier SIN-2025-1."


def test_a_turn_record_stops_growing_at_its_limit() -> None:
    parts = [ExtractedFact(f"Le membre a noté le point numéro {n} de la liste des pièces.") for n in range(20)]
    out = turns.by_turn(parts, [1] * len(parts))
    assert len(out) > 1 and all(len(f.text) <= turns.MAX_CHARS for f in out)
    assert sum(f.text.count("point numéro") for f in out) == 20  # nothing lost


@given(st.lists(st.tuples(st.sampled_from(["Le membre a un chat.", "Il habite à Lyon.", "Le 3 mai.",
                                           "Le membre n'a pas de chat.", "Contrat CTR-1 ouvert."]),
                          st.integers(min_value=-1, max_value=3)), max_size=8))
def test_turns_keep_every_fact_that_is_not_a_repeat(said: list[tuple[str, int]]) -> None:
    facts = [ExtractedFact(text) for text, _ in said]
    out = " ".join(f.text for f in turns.by_turn(facts, [t for _, t in said]))
    for i in repeats.kept(facts):
        assert facts[i].text.rstrip(".")[1:] in out


def test_what_the_advisor_dictates_to_the_file_is_a_fact() -> None:
    facts = _texts(
        ("advisor", "Je le note, madame : on vous parlera lentement, en articulant."),
        ("advisor", "C'est noté : à compter du 1er juillet 2025, <ADDRESS_1>."),
        ("advisor", "Je note : merci."),  # nothing to note
    )
    assert len(facts) == 2
    assert "lentement, en articulant" in facts[0] and not facts[0].lower().startswith(("je", "c'est"))
    assert facts[1] == "À compter du 1er juillet 2025, <ADDRESS_1>."


def test_what_the_advisor_notes_that_is_a_fact() -> None:
    facts = _texts(
        ("advisor", "Je note que vous êtes logée chez votre fils à Vannes pendant les travaux."),
        ("advisor", "Je note que oui."),  # nothing to note
    )
    assert facts == ["Le membre est logée chez son fils à Vannes pendant les travaux."]


_EXCHANGE = [
    ("advisor", "Vous avez un numéro de dossier ?"), ("advisor", "Quelle est votre adresse ?"),
    ("advisor", "212,40 euros par mois exactement."), ("advisor", "Pour vous deux, 131,80 euros."),
    ("advisor", "J'annule l'option depuis l'origine."), ("user", "Oui, attendez... 057-2025-00841."),
    ("user", "On paie combien, déjà ?"), ("user", "Un instant, je regarde."), ("user", "Non."),
    ("user", "Quand j'ai les mains prises, je ne décroche pas."), ("user", "4 rue des Lilas, 67000 Strasbourg."),
]


@given(st.lists(st.sampled_from(_EXCHANGE), max_size=10))
def test_any_order_of_questions_waits_and_answers_reads_once(exchange: list[tuple[str, str]]) -> None:
    """Questions asked by either side, answers, requests to wait, in any order: every fact has text,
    quotes at most one question, and nothing is kept twice."""
    facts = _texts(*exchange)
    assert all(f.strip() for f in facts)
    assert all(f.count("(en réponse à") <= 1 for f in facts)
    assert len(facts) == len(set(facts))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["Mon mari", "Ma femme", "Mes parents", "Notre fils", "mon frère"]),
       st.sampled_from([" et moi", " et moi,", " et moi, on", " et moi on", " et moi, nous", " et moi nous"]),
       st.lists(st.sampled_from(["ne", "se", "s'", "n'", "nous", "y", "en"]), max_size=3),
       st.sampled_from(["sépare", "avons", "a", "est", "habitait", "allons", "occupons", "<PHONE_1>", "..."]),
       st.sampled_from(["", " à Lyon.", " le <PHONE_1>.", ", pas de souci."]))
def test_a_pair_with_me_always_reads_as_the_member_and_the_other(subject: str, joint: str, clitics: list[str],
                                                                  verb: str, rest: str) -> None:
    sentence = f"{subject}{joint} {' '.join(clitics)} {verb}{rest}".replace("' ", "'")
    out = rewrite_fr(sentence, MEMBER)
    assert sorted(PLACEHOLDER.findall(out)) == sorted(PLACEHOLDER.findall(sentence))
    if out.startswith("Le membre et "):
        assert " moi" not in out and " on " not in f" {out} " and "foyer" not in out  # the pair, once
