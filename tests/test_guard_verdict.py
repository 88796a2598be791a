"""The verdict rule's helpers: detector keys and the per-detector options checked against them."""

from __future__ import annotations

import pytest

from truthguard.errors import InvalidInputError
from truthguard.guard.verdict import check_detector_options, decide, unique_keys
from truthguard.result import DetectionResult


def test_a_repeated_detector_name_gets_a_numbered_key():
    assert unique_keys(["rv", "fewl", "rv", "rv"]) == ["rv", "fewl", "rv#2", "rv#3"]
    assert unique_keys([]) == []


def test_options_for_known_keys_with_a_proper_range_pass():
    check_detector_options(
        ["rv", "rv#2"], thresholds={"rv#2": 0.5}, score_ranges={"rv": (-1.0, 1.0)}
    )


@pytest.mark.parametrize(
    ("thresholds", "score_ranges", "field", "words"),
    [
        ({"fewl": 0.5}, {}, "thresholds", "unknown detector keys ['fewl']; known: ['rv']"),
        ({}, {"rv#2": (0.0, 1.0)}, "score_ranges", "unknown detector keys ['rv#2']"),
        ({}, {"rv": (1.0, 1.0)}, "score_ranges.rv", "needs high > low"),
        ({}, {"rv": (0.0, float("inf"))}, "score_ranges.rv", "must be finite"),
        ({"rv": float("nan")}, {}, "thresholds.rv", "must be finite"),
        ({"rv": 2.0}, {}, "thresholds.rv", "must lie in [0, 1]"),
        ({"rv": -1.0}, {}, "thresholds.rv", "must lie in [0, 1]"),
    ],
)
def test_bad_options_name_the_field(thresholds, score_ranges, field, words):
    with pytest.raises(InvalidInputError) as raised:
        check_detector_options(
            ["rv"], thresholds=thresholds, score_ranges=score_ranges, bounds={"rv": (0.0, 1.0)}
        )
    assert raised.value.field == field and words in str(raised.value)


def test_a_threshold_on_a_rescaled_detector_is_not_held_to_its_bounds():
    check_detector_options(
        ["rv"], thresholds={"rv": 40.0}, score_ranges={"rv": (0.0, 100.0)},
        bounds={"rv": (0.0, 1.0)},
    )  # fmt: skip


def _invalid(reason: str) -> DetectionResult:
    return DetectionResult.invalid("refchecker", reason)


@pytest.mark.parametrize(
    ("on_error", "words"),
    [
        ("closed", "rejected: refchecker was unavailable or gave no verdict, counted as a "
         "failure (the guard fails closed)"),
        ("open", "passed: refchecker was unavailable or gave no verdict, counted as a pass "
         "(the guard fails open)"),
    ],
)  # fmt: skip
def test_the_reason_says_the_checker_was_unavailable(on_error, words):
    v = decide(
        ["refchecker"], [_invalid("model down")], combine="all", thresholds={}, ranges={},
        mean_threshold=0.5, on_error=on_error,
    )  # fmt: skip
    assert v.reason == words
    assert "no detector failed" not in v.reason
