"""``bench scenarios`` over several files: per-file figures, their mean and their worst file."""

from __future__ import annotations

from carnet.bench.scenarios_loo import aggregate, file_figures


def _out(**kw: object) -> dict[str, object]:
    base: dict[str, object] = {"superseded_hidden_count": 3, "superseded_total": 4, "facts_per_call": 6.0,
                               "file_facts_per_call": 3.0}
    return base | kw


def test_the_ratio_and_hidden_of_all_come_from_the_summary() -> None:
    row = file_figures("a", _out(recall_at_3_said=0.5))
    assert (row["records_ratio"], row["superseded_hidden_of_all"], row["recall_at_3_said"]) == (2.0, 0.75, 0.5)
    assert file_figures("b", _out(superseded_total=0, facts_per_call=None))["records_ratio"] is None


def test_the_worst_file_is_the_lowest_recall_and_the_highest_noise() -> None:
    rows = [file_figures("a", _out(recall_at_3_said=0.9, noise=0.1)),
            file_figures("b", _out(recall_at_3_said=0.5, noise=0.4)),
            file_figures("c", _out(recall_at_3_said=None, noise=None))]
    out = aggregate(rows)
    assert out["recall_at_3_said"] == {"mean": 0.7, "worst": 0.5}
    assert out["noise"] == {"mean": 0.25, "worst": 0.4}  # a file without the figure is left out
