"""The keyword query's expansion: French call-center synonyms, sentences written for these tests."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from carnet.domain.query_lexicon import expansion, parse
from carnet.domain.text import content_terms


def _stems(text: str) -> set[str]:
    return set(content_terms(text))


def test_a_one_word_address_question_meets_the_verbs_notes_use() -> None:
    added = _stems(expansion("Domicile ?"))
    assert _stems("habite") <= added
    assert _stems("réside") <= added
    assert _stems("adresse") <= added


def test_a_question_about_letters_meets_mail_and_post() -> None:
    added = _stems(expansion("Par où partent ses lettres ?"))
    assert _stems("courrier e-mail poste") <= added


def test_a_marketing_question_meets_the_words_of_an_opposition() -> None:
    added = _stems(expansion("Je peux lui vendre une complémentaire obsèques ?"))
    assert _stems("démarchage prospection") <= added


def test_a_return_to_work_question_meets_the_sick_leave_notes() -> None:
    assert _stems("arrêt prolongation") <= _stems(expansion("Quand reprendra-t-il son activité ?"))
    assert not _stems("arrêt") & _stems(expansion("Il reprend son ancien contrat ?"))  # a phrase, not a word


def test_a_disability_question_meets_the_names_of_its_recognition() -> None:
    assert _stems("mdph aeeh") <= _stems(expansion("Sa fille est-elle reconnue en situation de handicap ?"))


def test_what_is_left_to_pay_on_a_loan_meets_the_outstanding_capital() -> None:
    assert _stems("capital dû") <= _stems(expansion("Combien lui reste-t-il à rembourser sur son prêt ?"))
    assert not _stems("capital") & _stems(expansion("Lui reste-t-il des questions ?"))  # a phrase, not a word


def test_a_question_about_hardship_meets_the_measures_taken() -> None:
    assert _stems("échéancier report") <= _stems(expansion("Comment l'aide-t-on financièrement ?"))


def test_savings_driving_insuring_and_procedures_meet_the_words_notes_use() -> None:
    assert _stems("livret plafond") <= _stems(expansion("Peut-il encore mettre de côté sur son épargne ?"))
    assert _stems("conducteur permis") <= _stems(expansion("Sa fille peut-elle conduire la voiture ?"))
    assert _stems("contrat formule") <= _stems(expansion("Combien pour assurer son studio ?"))
    assert _stems("adopté recevable") & _stems(expansion("Où en est la procédure ?"))
    assert _stems("cotisation") <= _stems(expansion("Quel est le prix de sa complémentaire ?"))


def test_a_directed_rule_does_not_run_backwards() -> None:
    """'sinistre' brings the kinds of claims; a theft alone does not bring the word 'sinistre'."""
    assert _stems("cambriolage") <= _stems(expansion("Quel sinistre a-t-il déclaré ?"))
    assert not _stems("sinistre") & _stems(expansion("Un vol de vélo ?"))


def test_a_phrase_fires_only_when_all_its_words_are_there() -> None:
    rules = parse("mesure de protection => curatelle")
    assert expansion("Quelle mesure de protection ?", rules) == "curatelle"
    assert expansion("Quelle mesure ?", rules) == ""


def test_words_already_asked_are_not_added_again() -> None:
    added = _stems(expansion("Son adresse et son domicile ?"))
    assert not added & _stems("adresse domicile")


def test_an_english_question_is_left_as_asked() -> None:
    assert expansion("Where does she live now and what is her address?") == ""


def test_a_question_outside_the_lexicon_gets_nothing() -> None:
    assert expansion("Quelle est la couleur préférée du chat ?") == ""


# An addition is a phrase ("assurance de prêt"), added when it holds a term the question lacks: one of
# its words may be a function word ("de") or a word the question has ("assurance emprunteur").
@example("EMPRUNTEUR")
@example("assurance emprunteur")
@given(st.text(max_size=80))
def test_expansion_never_repeats_the_question_and_is_deterministic(question: str) -> None:
    first = expansion(question)
    assert first == expansion(question)
    asked = _stems(question)
    assert not first or _stems(first) - asked


def test_a_phrase_is_added_for_the_term_the_question_lacks() -> None:
    added = expansion("Son assurance emprunteur ?")
    assert "prêt" in added.split()
    assert _stems("assurance emprunteur") < _stems("assurance emprunteur " + added)
