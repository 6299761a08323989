from carnet.domain.linking import bring_linked_up, linking_references, references


def test_references_found_and_ordinary_words_ignored() -> None:
    text = "Le dossier RC-2026-1184 est accepté, lié au sinistre TMP-55120 ; code postal 59100, Covid-19."
    assert references(text) == {"RC-2026-1184", "TMP-55120"}
    assert references("placeholder <CONTRACT_3> kept") == {"<CONTRACT_3>"}
    assert references("Elle habite à Lyon 7e depuis 2019.") == frozenset()


def test_linked_records_come_right_behind_the_best_match() -> None:
    ranked = ["conteste RC-2026-1184", "aime la voile", "préfère le courriel", "RC-2026-1184 accepté"]
    assert bring_linked_up(ranked, references) == ["conteste RC-2026-1184", "RC-2026-1184 accepté", "aime la voile",
                                            "préfère le courriel"]


def test_no_reference_or_limit_reached_keeps_order() -> None:
    assert bring_linked_up(["a", "b", "c"], references) == ["a", "b", "c"]
    ranked = ["X AB-1", "y", "AB-1 z", "AB-1 w", "AB-1 v"]
    assert bring_linked_up(ranked, references, limit=2) == ["X AB-1", "AB-1 z", "AB-1 w", "y", "AB-1 v"]


def test_the_subject_s_own_number_links_none_of_its_records() -> None:
    text = "Martin, CLI-880021 ; il appelle pour le sinistre SIN-2031-0042."
    assert linking_references(text, "CLI-880021") == {"SIN-2031-0042"}
    assert linking_references(text, "another-subject") == {"CLI-880021", "SIN-2031-0042"}
