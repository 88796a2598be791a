"""The FEWL benchmark: metrics, ablation plumbing, and one run on the recorded data."""

from __future__ import annotations

import json
import re

import pytest

from truthguard.bench import fewl as bench
from truthguard.datasets import RefCheckerClaim, RefCheckerResponse
from truthguard.errors import InvalidInputError
from truthguard.testing import ScriptedChatModel

KEYS = {"pairwise_accuracy", "spearman_entailment", "spearman_contradiction"}

TOPICS = {
    "q1": "The Eiffel Tower is in Paris and was finished in 1889.",
    "q2": "Mount Everest is the highest mountain on Earth, on the Nepal-China border.",
    "q3": "Photosynthesis lets plants turn sunlight, water and carbon dioxide into sugar.",
    "q4": "The Pacific is the largest and deepest ocean on the planet.",
}
NONSENSE = "Bananas are a kind of berry that grows on tall trees in cold climates."


def _claims(contradictions: int, entailments: int) -> tuple[RefCheckerClaim, ...]:
    return tuple(
        [RefCheckerClaim(triplet=("a", "b", "c"), label="Contradiction")] * contradictions
        + [RefCheckerClaim(triplet=("a", "b", "c"), label="Entailment")] * entailments
    )


def _rows() -> list[RefCheckerResponse]:
    """Five models; 'good*' repeat the topic fact, 'bad' always says the same nonsense."""
    rows = []
    for m, (prefix, c, e) in {
        "good1": ("", 0, 3),
        "good2": ("In short: ", 0, 2),
        "good3": ("Answer: ", 1, 3),
        "meh": ("I think ", 1, 1),
        "bad": (None, 3, 0),
    }.items():
        for q, fact in TOPICS.items():
            text = NONSENSE if prefix is None else prefix + fact
            rows.append(
                RefCheckerResponse(
                    setting="zero_context", model=m, id=q, response=text, claims=_claims(c, e)
                )
            )
    return rows


def test_pairwise_accuracy_by_hand():
    # group 1: (0.9, 0.0) beats (0.1, 0.5): hit; (0.5, 0.0) vs (0.9, 0.0) skipped (equal rates);
    # (0.5, 0.0) vs (0.1, 0.5): hit. group 2: a tie counts one half, a reversed pair zero.
    groups = [[(0.9, 0.0), (0.1, 0.5), (0.5, 0.0)], [(0.3, 0.1), (0.3, 0.2), (0.9, 0.4)]]
    acc, n = bench.pairwise_accuracy(groups)
    assert n == 5
    assert acc == pytest.approx((1 + 1 + 0.5 + 0 + 0) / 5)
    assert bench.pairwise_accuracy([[(1.0, 0.2), (2.0, 0.2)]]) == (None, 0)


def test_spearman():
    assert bench.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert bench.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert bench.spearman([1, 2, 3], [5, 5, 5]) is None


def test_evaluate_on_synthetic_panel(embedder):
    result = bench.evaluate(_rows(), embedder=embedder, setting="zero_context", k=2, cutoff=None)
    assert set(result) == {"setting", "n_questions", "proxy", "ablations"}
    assert result["n_questions"] == 4
    assert result["proxy"].startswith("panel_mean:")
    assert list(result["ablations"]) == list(bench.ABLATIONS)
    for name, metrics in result["ablations"].items():
        assert set(metrics) >= KEYS, name
    skipped = result["ablations"]["panel_estimated_penalty"]
    assert "generator" in skipped["skipped"] and skipped["pairwise_accuracy"] is None
    # the nonsense answer shares nothing with the panel: without a penalty it always loses
    plain = result["ablations"]["panel_uniform_no_penalty"]
    assert plain["pairwise_accuracy"] > 0.5
    assert plain["spearman_contradiction"] > 0


def test_evaluate_with_a_generator_runs_the_estimated_ablation(embedder):
    pairs = "\n".join(
        f"{i}. Wrong: wrong statement number {i}\n{i}. Corrected: a corrected fact {i}"
        for i in range(1, 6)
    )
    generator = ScriptedChatModel(model_name="gen", default=pairs)
    result = bench.evaluate(
        _rows(), embedder=embedder, k=2, cutoff=None, generator=generator, n_pairs=5
    )
    estimated = result["ablations"]["panel_estimated_penalty"]
    assert "skipped" not in estimated
    assert estimated["pairwise_accuracy"] is not None
    assert estimated["iwco_failed_questions"] == 0
    assert generator.call_count == 4  # one call per question


def test_generator_garbage_is_counted_not_scored(embedder):
    generator = ScriptedChatModel(model_name="gen", default="no pairs here")
    result = bench.evaluate(_rows(), embedder=embedder, k=2, generator=generator)
    estimated = result["ablations"]["panel_estimated_penalty"]
    assert estimated["iwco_failed_questions"] == 4
    assert estimated["pairwise_accuracy"] is None and estimated["n_pairs"] == 0


def test_bad_arguments(embedder):
    with pytest.raises(InvalidInputError, match="proxy"):
        bench.evaluate(_rows(), embedder=embedder, proxy="question_text")
    with pytest.raises(InvalidInputError, match="generator"):
        bench._load_generator("no_colon")


def test_cli_on_recorded_data(data_dir, capsys):
    from truthguard.cli import main
    from truthguard.datasets import load_refchecker

    assert main(["bench", "fewl", "--data", str(data_dir), "--json", "--no-progress"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"setting", "n_questions", "proxy", "ablations"}
    assert result["setting"] == "zero_context"
    assert result["n_questions"] == len({r.id for r in load_refchecker("zero_context", data_dir)})
    for name in ("single_no_penalty", "panel_uniform_penalty"):
        m = result["ablations"][name]
        assert 0.0 <= m["pairwise_accuracy"] <= 1.0
        assert -1.0 <= m["spearman_entailment"] <= 1.0
    table = bench.format_table(result)
    assert re.search(r"panel_uniform_penalty\s+\d+\.\d", table)
    assert "skipped" in table
