"""``bench/judge_run.LabelledLLM``, the always-right LLM of ``carnet bench judge --llm labels``: it names
what the labels say the note being written retires, names a late note when the newer record it is shown
retires it, counts writes (not questions), and with ``error`` turns that share of its answers wrong,
the same on every run."""

from __future__ import annotations

from carnet.bench.judge_run import LabelledLLM, Subject, SubjectRun

FACTS = tuple((f"note {k}", None) for k in range(6))


def _asker(error: float = 0.0) -> tuple[LabelledLLM, SubjectRun]:
    run = SubjectRun(Subject("t", "M-1", FACTS, frozenset({(0, 3), (1, 5)})))
    asker = LabelledLLM(run, {"id0": 0, "id1": 1, "id2": 2}, error)
    asker.pseudo.update({"p0": 0, "p1": 1, "p2": 2, "p5": 5})
    return asker, run


def test_it_names_what_the_labels_retire_and_counts_writes() -> None:
    asker, run = _asker()
    run.writing = 3
    assert asker.obsolete("p3", [("id0", "p0"), ("id1", "p1"), ("id2", "p2")], locale="fr") == ["id0"]
    assert asker.obsolete("p3", [("id2", "p2")], locale="fr") == []
    assert run.llm_calls == 1  # two questions, one write


def test_a_late_note_is_named_when_the_newer_record_retires_it() -> None:
    asker, run = _asker()
    run.writing = 1  # fact 1 written late; fact 5 (stored) retires it
    assert asker.obsolete("p5", [("late", "p1")], locale="fr") == ["late"]
    assert asker.obsolete("p2", [("late", "p1")], locale="fr") == []


def test_a_fallible_llm_flips_that_share_of_answers_the_same_way_each_run() -> None:
    flips = []
    for error in (0.0, 0.5, 1.0):
        asker, run = _asker(error)
        answers = []
        for writing in range(3, 6):
            run.writing = writing
            answers.append(asker.obsolete("px", [("id0", "p0"), ("id1", "p1"), ("id2", "p2")], locale="fr"))
        flips.append(answers)
    assert flips[0] == [["id0"], ["id0"], ["id0", "id1"]]  # a later note retires what the labelled one did
    assert flips[2] == [["id1", "id2"], ["id1", "id2"], ["id2"]]  # every answer turned
    again, run = _asker(0.5)
    run.writing = 3
    assert again.obsolete("px", [("id0", "p0"), ("id1", "p1"), ("id2", "p2")], locale="fr") == flips[1][0]
