"""The local checker's relation checks over a claim's passages."""

from __future__ import annotations

from truthguard.refchecker.checkers import _recounted


def test_a_count_is_set_against_another_only_in_a_sentence_about_the_same_thing():
    policy = [(0, 0, "Groups of 8 guests or more pay a deposit of £10 per person.")]
    claim = "You can still cut two guests without penalty."
    assert _recounted(claim, {"issues": []}, policy) == []
    roles = [(0, 0, "Before that she played three other female roles on the same show.")]
    (found,) = _recounted("She played two other female roles on the show.", {"issues": []}, roles)
    assert (found["text"], found["evidence"]["text"]) == ("two", "three")
