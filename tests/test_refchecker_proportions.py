"""Shares a claim works out from counts, fractions and percentages of its evidence."""

from __future__ import annotations

import pytest

from truthguard.refchecker.proportions import agrees, read_shares, shares


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("More than half of the crew survived.", [(0.5, ">", "More than half")]),
        ("About a third of the votes went to him.", [(1 / 3, "~", "About a third")]),
        ("Two-thirds of the cost was paid.", [(2 / 3, "=", "Two-thirds")]),
        ("Roughly one in four came from abroad.", [(0.25, "~", "Roughly one in four")]),
        ("Only 39 of the 80 passengers survived.", [(39 / 80, "=", "39 of the 80")]),
        ("It won 2 out of 3 games.", [(2 / 3, "=", "2 out of 3")]),
        ("Turnout was just under 38 per cent.", [(0.38, "<", "just under 38 per cent")]),
        ("Most of the money was lost.", [(0.5, ">", "Most of")]),
        # any fraction in words, not only the common ones
        ("It holds roughly nine-tenths of the ice.", [(0.9, "~", "roughly nine-tenths")]),
        ("Three quarters of voters backed it.", [(0.75, "=", "Three quarters")]),
        ("Seven-eighths of it lies under water.", [(0.875, "=", "Seven-eighths")]),
        # a part, an amount or a year is no share
        ("It was built in the second half of the century.", []),
        ("The flight took half an hour.", []),
        ("He scored 3 in 2009.", []),
        ("Half the team left.", []),
    ],
)
def test_the_shares_a_text_states(text, expected):
    got = [(s.value, s.bound, s.text) for s in shares(text)]
    assert [(round(v, 4), b, t) for v, b, t in got] == [(round(v, 4), b, t) for v, b, t in expected]


@pytest.mark.parametrize(
    ("claim", "evidence", "meets"),
    [
        ("fewer than half", "39 of the 80", True),
        ("more than half", "39 of the 80", False),
        ("about a third", "31 per cent", True),
        ("about a third", "two in three", False),
        ("one in four", "25%", True),
        ("one in four", "three in five", False),
        ("more than a third", "more than half", True),
        ("about half", "more than half", False),
    ],
)
def test_a_claim_share_is_met_by_an_evidence_share_within_its_bound(claim, evidence, meets):
    assert agrees(shares(claim)[0], shares(evidence)[0]) is meets


def test_a_share_no_evidence_share_meets_is_set_against_its_sentences():
    evidence = ["The steamer sank in 1911.", "Only 39 of the 80 passengers survived."]
    assert read_shares("Fewer than half of those aboard lived.", evidence, 1) == ([(0, 15)], None)
    met, against = read_shares("More than half of those aboard lived.", evidence, 1)
    assert met == [] and against is not None
    assert (against[0].text, against[1].text) == ("More than half", "39 of the 80")
    # the evidence sentence states no share: nothing to set the claim's against
    assert read_shares("More than half of those aboard lived.", evidence, 0) == ([], None)


def test_a_fraction_in_words_meets_the_percentage_its_sentence_states():
    assert agrees(shares("roughly nine-tenths of")[0], shares("around 90% of")[0])
    assert not agrees(shares("roughly two-thirds of")[0], shares("around 90% of")[0])
