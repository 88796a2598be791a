"""The verdict rule's helpers: detector keys and the per-detector options checked against them."""

from __future__ import annotations

import pytest

from truthguard.errors import InvalidInputError
from truthguard.guard.verdict import check_detector_options, unique_keys


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
    ],
)
def test_bad_options_name_the_field(thresholds, score_ranges, field, words):
    with pytest.raises(InvalidInputError) as raised:
        check_detector_options(["rv"], thresholds=thresholds, score_ranges=score_ranges)
    assert raised.value.field == field and words in str(raised.value)
