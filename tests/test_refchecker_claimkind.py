"""Claim kinds: facts are checked; questions, greetings, opinions, hedges, framing and refusals
are talk around facts."""

from __future__ import annotations

import pytest

from truthguard.refchecker.claimkind import claim_kind, is_refusal, strip_frame


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("The observatory was founded in 1987.", "fact"),
        ("Paris is the capital of France.", "fact"),
        ("Have you read any of his other books?", "question"),
        ("Do you like this book because of its author Charlaine Harris?", "question"),
        ("Hope you enjoy!", "greeting"),
        ("Thanks so much.", "greeting"),
        ("I love Tom Hanks in Zodiac", "opinion"),
        ("I like crime fiction!", "opinion"),
        ("I think you'll like it!", "opinion"),
        ("It's one of my favorite movies!", "opinion"),
        ("I highly recommend both!", "opinion"),
        ("Perhaps it opened later.", "hedge"),
        ("I'm not sure about the exact year.", "refusal"),
        ("Here is a summary:", "framing"),
        ("I don't know.", "refusal"),
        ("I cannot tell from the passages.", "refusal"),
        ("Not mentioned in the context.", "refusal"),
        ("The context does not say when it was built.", "refusal"),
    ],
)
def test_each_kind_is_recognised(text, kind):
    assert claim_kind(text) == kind


def test_a_fact_with_a_negation_or_a_name_at_the_start_stays_a_fact():
    assert claim_kind("Nobody knows who built it.") == "fact"
    assert claim_kind("No vaccine was approved before 1990.") == "fact"
    assert claim_kind("Sure Start centres opened in 1999.") == "fact"
    assert claim_kind("No. 11 also reappears") == "fact"  # a character's number, not "No."
    assert claim_kind("No, it is not.") == "greeting"


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("Based on the passages, the observatory was founded in 1987.", "the observatory"),
        ("According to the context, it opened in May.", "it opened"),
        ("Yes, he was in The Dirty Dozen.", "he was"),
        ("No, Footloose was not a musical comedy.", "Footloose"),
        ("Well, based on the context, it is 5 m.", "it is 5 m."),
        ("Here is a brief summary: the plant closed in 2003.", "the plant"),
    ],
)
def test_framing_and_opening_particles_are_cut(text, rest):
    stripped, at = strip_frame(text)
    assert stripped.startswith(rest) and text[at:] == stripped


def test_nothing_is_cut_when_nothing_follows():
    assert strip_frame("No.") == ("No.", 0)
    assert strip_frame("Here is a summary:") == ("Here is a summary:", 0)
    assert strip_frame("The tower is 300 m tall.") == ("The tower is 300 m tall.", 0)


def test_refusal_is_a_property_of_the_whole_answer():
    assert is_refusal("I'm sorry, but I don't have information about that.")
    assert is_refusal("  The provided passages do not mention the founder. ")
    assert not is_refusal("Maria Okafor founded it in 1987.")
    assert not is_refusal("")
