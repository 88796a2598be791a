"""Question and artifact ids, and the checks on the strings of a key."""

from __future__ import annotations

import pytest

from truthguard.errors import InvalidInputError
from truthguard.store import question_id
from truthguard.store.keys import artifact_id


def test_whitespace_does_not_make_a_new_key():
    assert question_id("Who wrote  Hamlet?\n") == question_id(" Who wrote Hamlet?")
    assert artifact_id("Q ?", "k", "m", "v") == artifact_id("  Q ?", "k", "m", "v")
    assert question_id("Q?") != question_id("Q ?")


def test_every_part_of_an_artifact_key_counts():
    base = artifact_id("Q?", "k", "m", "v", "")
    others = [
        artifact_id("R?", "k", "m", "v", ""),
        artifact_id("Q?", "k2", "m", "v", ""),
        artifact_id("Q?", "k", "m2", "v", ""),
        artifact_id("Q?", "k", "m", "v2", ""),
        artifact_id("Q?", "k", "m", "v", "x"),
    ]
    assert len({base, *others}) == 6
    assert artifact_id("Q?", "k", "m", "") != artifact_id("Q?", "k", "m", "v")  # blank allowed


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("", "k", "m", "v"), "question"),
        (("Q?", " ", "m", "v"), "kind"),
        (("Q?", "k", 3, "v"), "model"),
        (("Q?", "k", "m", None), "prompt_version"),
        (("Q?", "k", "m", "v", 1), "extra"),
    ],
)
def test_a_bad_key_part_is_named(args, field):
    with pytest.raises(InvalidInputError) as info:
        artifact_id(*args)
    assert info.value.field == field
