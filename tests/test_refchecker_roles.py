"""Who did what: an action given to another name than its evidence sentence gives it."""

import pytest

from truthguard.refchecker.roles import role_swaps

LOCKS = "George Goethals designed the locks, and John Wallace was the first chief engineer."


@pytest.mark.parametrize(
    ("claim", "swapped"),
    [
        ("John Wallace designed the locks.", ("John Wallace", "George Goethals")),
        ("The locks were designed by John Wallace.", ("John Wallace", "George Goethals")),
        ("George Goethals designed the locks.", None),
        ("The locks were designed by George Goethals.", None),  # passive, same doer
        ("John Wallace was the first chief engineer.", None),
    ],
)
def test_a_swapped_doer_is_found_in_either_voice(claim, swapped):
    found = [(r.text, r.evidence_text) for r in role_swaps(claim, LOCKS)]
    assert found == ([swapped] if swapped else [])
    if swapped:
        (r,) = role_swaps(claim, LOCKS)
        assert claim[r.start : r.end] == r.text and LOCKS[r.evidence_start : r.evidence_end] == (
            r.evidence_text
        )


def test_only_names_the_evidence_sentence_holds_and_real_actions_count():
    # a name the sentence never mentions is left to the grounding
    assert role_swaps("Peter Hale designed the locks.", LOCKS) == []
    # a noun after a name is no action ("the Rings film")
    ev = "Hugo Weaving played Elrond in The Lord of the Rings film trilogy."
    assert role_swaps("Elrond was played by Hugo Weaving in the Rings film.", ev) == []
