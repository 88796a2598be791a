"""``truthguard bench grounding``: AUROC, an end-to-end run."""

from __future__ import annotations

import json

import pytest

from truthguard.bench.grounding import auroc
from truthguard.cli import main


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
