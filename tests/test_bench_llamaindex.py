"""``truthguard bench llamaindex``: keys and the shape of the measurement (small, fast run)."""

from __future__ import annotations

import json
from argparse import Namespace

import pytest

from truthguard.cli import main

pytest.importorskip("truthguard_llamaindex")


def test_bench_llamaindex_json(capsys):
    argv = ["bench", "llamaindex", "--json", "--no-progress", "--latency", "0.02"]
    assert main([*argv, "--n", "3", "--repeats", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    ratios = ("guard_pass_ratio", "guard_regenerate_ratio", "instrumented_ratio")
    for key in (*ratios, "guard_pass_async_ratio"):
        assert out[key] > 0
    # one regeneration means two LLM calls instead of one (their time is the benchmark's to
    # report: under load it is no measure of the calls)
    assert out["guard_regenerate_model_calls"] == 2
    assert out["handler_records"] == 4 and out["handler_failed"] == 0  # warm-up + 3 queries


def test_bench_llamaindex_table():
    from truthguard.bench import llamaindex

    result = llamaindex.run(
        Namespace(latency=0.01, n=2, repeats=1, detector_latency=0.0, no_progress=True)
    )
    table = llamaindex.format_table(result)
    assert "guarded, one regeneration" in table and "guarded, aquery, passes" in table
