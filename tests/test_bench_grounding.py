"""``truthguard bench grounding``: the perturbation set, AUROC, an end-to-end run."""

from __future__ import annotations

import json
import random

import pytest

from truthguard.bench.grounding import TYPES, auroc, build_perturbations, reword
from truthguard.cli import main

REFS = [
    "The band was formed in Liverpool in 1960 . On 4 October 1962 , John Lennon released "
    "twelve songs with Parlophone Records . They did not tour in 1966 .",
    "The bridge opened in 1937 in San Francisco . It is 2,737 metres long and cost $35 million . "
    "Joseph Strauss was the chief engineer of the Golden Gate Bridge District .",
    "In 1999 , Mary Shelley Museum opened in Bath with seven rooms . The house was built by "
    "George Wood in 1790 near the river .",
]


def test_perturbations_are_deterministic_and_change_one_span():
    first = build_perturbations(REFS, per_type=5, seed=3)
    assert first == build_perturbations(REFS, per_type=5, seed=3)
    kinds = {p["kind"] for p in first}
    assert {"unchanged", "reworded", "year", "number", "negation_removed"} <= kinds
    assert kinds <= {*TYPES, "unchanged", "reworded"}
    for p in first:
        if p["kind"] == "unchanged":
            assert p["answer"] in p["reference"]
        elif p["kind"] in TYPES:
            assert p["answer"] not in p["reference"]
            if p["replacement"]:
                assert p["replacement"] in p["answer"]


def test_reword_keeps_facts_and_moves_a_fronted_phrase():
    out = reword("In 1999 , the museum opened in Bath .", random.Random(0))
    assert out == "The museum opened in Bath in 1999."


def test_auroc_counts_ties_half():
    assert auroc([1.0, 1.0], [0.0, 1.0]) == pytest.approx(0.75)
    assert auroc([], [1.0]) is None


def test_bench_runs_end_to_end(data_dir, embedder, capsys):
    args = ["bench", "grounding", "--data", str(data_dir / "chale"), "--per-type", "1"]
    assert main([*args, "--limit", "2", "--json", "--no-progress"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["chale"]["n"] == 2 and set(result["chale"]["pass_rate"]) >= {"non_halu"}
    assert [c["passed"] for c in result["fixed_cases"]] == [True, False, False, False]
    rates = result["perturbations"]["rates"]
    assert "unchanged" in rates and all(v["all"]["n"] >= 1 for v in rates.values())
    assert result["cpu_ms_per_claim"] > 0 and result["chale"]["cpu_ms_per_claim"] > 0
    assert main([*args, "--skip-chale", "--no-progress"]) == 0
    assert "CPU" in capsys.readouterr().out.split("speed:", 1)[1].splitlines()[0]
