"""``truthguard bench guard``: keys and the shape of the measurement (small, fast run)."""

from __future__ import annotations

import json

from truthguard.cli import main


def test_bench_guard_json(capsys):
    assert (
        main(
            [
                "bench",
                "guard",
                "--json",
                "--no-progress",
                "--latency",
                "0.02",
                "--n",
                "3",
                "--repeats",
                "1",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    for key in ("guard_pass_ratio", "guard_regenerate_ratio", "callback_overhead_ratio"):
        assert out[key] > 0
    # one regeneration means two model calls of 20 ms instead of one
    assert out["guard_regenerate_ratio"] > 1.5
    assert out["callback_records"] == 4 and out["callback_failed"] == 0  # warm-up + 3 calls


def test_bench_guard_table():
    from argparse import Namespace

    from truthguard.bench import guard

    result = guard.run(
        Namespace(latency=0.01, n=2, repeats=1, detector_latency=0.0, no_progress=True)
    )
    table = guard.format_table(result)
    assert "guard, one regeneration" in table and "target < 5%" in table
