"""``truthguard bench refchecker``: swap answers, ranking metrics, an end-to-end run."""

from __future__ import annotations

import json

import pytest

from truthguard.bench.refchecker import build_answers, rank_metrics, swap_answer
from truthguard.cli import main
from truthguard.datasets._loaders import ChaleItem


def _item(**kw) -> ChaleItem:
    base = dict(
        index=0,
        question="what is the name of the sea surrounding dubai",
        short_answer="Persian Gulf",
        long_answer_html="<P>It is located on the coast of the Persian Gulf .</P>",
        non_halu="Persian Gulf. <P> It is located on the coast of the Persian Gulf .",
        mid_halu="Western Asia. It is a peninsula .",
        halu="Gulf of Mexico. Much of the economy is driven by tourism .",
    )
    return ChaleItem(**{**base, **kw})


def test_swap_answer_takes_halu_short_answer_and_non_halu_rest():
    assert (
        swap_answer(_item())
        == "Gulf of Mexico. <P> It is located on the coast of the Persian Gulf ."
    )
    assert swap_answer(_item(halu="Persian Gulf. Something else .")) is None


def test_swap_answer_reads_the_halu_short_answer_as_a_whole_sentence():
    # an initial or a title is no sentence end: the swap names the whole wrong person
    item = _item(short_answer="Edward Calahan", non_halu="Edward Calahan. He built it .")
    assert swap_answer(item.model_copy(update={"halu": "Dr. J.J. Thomson. He did not ."})) == (
        "Dr. J.J. Thomson. He built it ."
    )
    # a short answer that states the right one whole is no swap; a part of it still is one
    assert swap_answer(item.model_copy(update={"halu": "Edward A. Calahan. Other ."})) is None
    assert swap_answer(item.model_copy(update={"halu": "Calahan. Other ."})) == (
        "Calahan. He built it ."
    )
    answers = build_answers([_item()])
    assert answers["swap"] == ["Gulf of Mexico. It is located on the coast of the Persian Gulf ."]
    assert answers["non_halu"] == ["Persian Gulf. It is located on the coast of the Persian Gulf ."]


def test_rank_metrics_are_strict_and_treat_missing_scores_as_lowest():
    scores = {
        "non_halu": [0.9, 0.5, None, 0.7],
        "mid_halu": [0.1, 0.5, 0.2, None],
        "halu": [0.2, 0.1, None, 0.8],
        "swap": [0.3, 0.9, 0.1, 0.0],
    }
    m = rank_metrics(scores, has_swap=[True, True, True, False])
    assert m["nh_gt_hh"] == pytest.approx(50.0)  # tie and missing non-halu do not count
    assert m["nh_gt_h"] == pytest.approx(50.0)
    assert m["nh_gt_swap"] == pytest.approx(100 / 3)  # question 4 has no swap answer


def test_bench_runs_end_to_end_on_a_few_questions(data_dir, embedder, capsys):
    assert (
        main(
            [
                "bench",
                "refchecker",
                "--data",
                str(data_dir / "chale"),
                "--limit",
                "4",
                "--json",
                "--no-progress",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 4
    names = set(out["methods"])
    assert "cosine (whole answer)" in names and "refchecker-local (min_support)" in names
    for m in out["methods"].values():
        assert set(m) == {"nh_gt_hh", "nh_gt_h", "nh_gt_swap", "seconds_per_answer"}
        assert 0.0 <= m["nh_gt_swap"] <= 100.0 and m["seconds_per_answer"] > 0
