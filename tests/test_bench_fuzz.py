"""``truthguard bench fuzz`` and hypothesis fuzzing of every detector with scripted garbage."""

from __future__ import annotations

import argparse
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from truthguard.bench import BENCHMARKS, fuzz
from truthguard.cli import main


def _args(**kw) -> argparse.Namespace:
    base = dict(
        cases=2,
        parser_cases=4,
        seed=0,
        max_length=2_000,
        hang_seconds=5.0,
        only=None,
        no_progress=True,
    )
    return argparse.Namespace(**{**base, **kw})


def test_garbage_is_seeded_and_bounded():
    a = [fuzz.garbage(random.Random(7), 3_000) for _ in range(50)]
    b = [fuzz.garbage(random.Random(7), 3_000) for _ in range(50)]
    assert a == b
    rng = random.Random(1)
    texts = [fuzz.garbage(rng, 3_000, plausible="1. Entailment") for _ in range(300)]
    assert max(len(t) for t in texts) <= 3_000 + 200 + len("1. Entailment")
    assert "" in texts and any(len(t) >= 1_000 for t in texts)


def test_the_fuzz_counts_crashes_and_contentless_results():
    crash = fuzz._Target(lambda t: {}[t], lambda r: False)
    empty = fuzz._Target(lambda t: "  ", lambda r: not r.strip())
    assert fuzz.fuzz_parser(crash, "x")[0] == "crash"
    assert fuzz.fuzz_parser(empty, "x")[0] == "contentless"


def test_run_covers_every_parser_and_detector_with_no_failure():
    result = fuzz.run(_args())
    names = [r["target"] for r in result["targets"]]
    assert names == [*fuzz.PARSERS, *fuzz.DETECTORS]
    assert result["totals"]["cases"] == 4 * len(fuzz.PARSERS) + 2 * len(fuzz.DETECTORS)
    assert result["totals"]["crashes"] == 0
    assert result["totals"]["contentless_accepted"] == 0
    assert result["totals"]["hangs"] == 0
    table = fuzz.format_table(result)
    assert "refchecker.parse_label" in table and "total:" in table


def test_cli_runs_the_fuzz_benchmark_as_json(capsys):
    assert BENCHMARKS["fuzz"] == "truthguard.bench.fuzz"
    argv = ["bench", "fuzz", "--cases", "2", "--parser-cases", "3", "--max-length", "500"]
    code = main([*argv, "--only", "rv", "rv.parse_query", "--json", "--no-progress"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["target"] for r in out["targets"]] == ["rv.parse_query", "rv"]
    assert out["totals"]["crashes"] == 0


FUZZ = dict(deadline=None, database=None, derandomize=True)


def _check(family: str, seed: int, cache: dict) -> None:
    outcome, seconds, error = fuzz.fuzz_detector(
        family, seed % 8, random.Random(seed), 2_000, cache
    )
    assert outcome in ("valid", "invalid"), error or outcome
    assert seconds < 10.0


@settings(max_examples=40, **FUZZ)
@given(st.integers(min_value=0, max_value=2**32))
def test_fuzz_reverse_validation(seed):
    _check("rv", seed, {})


@settings(max_examples=25, **FUZZ)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_fuzz_refchecker(seed):
    _check("refchecker", seed, _CACHE)


@settings(max_examples=12, **FUZZ)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_fuzz_fewl(seed):
    _check("fewl", seed, _CACHE)


_CACHE: dict = {}  # one hashing embedder and one in-memory store for the module's examples
