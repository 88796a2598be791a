"""Who did what: an action given to another name than its evidence sentence gives it."""

import pytest

from truthguard.refchecker.roles import role_swaps, traded_names

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


VOYAGE = [
    "The expedition of 1908 was commanded by Halvard Lunde, a naval officer from Bergen.",
    "Archibald Murray, a geologist from Leith, served as its chief scientist and mapped the coast.",
    "The ship returned to Norway in 1910.",
]


@pytest.mark.parametrize(
    ("claim", "traded"),
    [
        (
            "Archibald Murray commanded the expedition, and Halvard Lunde served as its "
            "chief scientist.",
            ["Archibald Murray", "Halvard Lunde"],
        ),
        # each name with what the sources say of it, in other words and order
        ("Lunde, a naval officer, led the 1908 expedition; Murray was its chief scientist.", []),
        ("Murray mapped the coast as chief scientist, while Lunde commanded the expedition.", []),
        # one clause of each name: nothing to trade
        ("Halvard Lunde commanded the expedition.", []),
    ],
)
def test_two_names_that_trade_what_the_sources_say_of_them(claim, traded):
    found = traded_names(claim, VOYAGE)
    assert [s.text for s, _ in found] == traded
    for swap, n in found:
        assert claim[swap.start : swap.end] == swap.text
        assert VOYAGE[n][swap.evidence_start : swap.evidence_end] == swap.evidence_text
        # the clause it was taken from names the other man, not this one
        assert swap.text.split()[-1] not in swap.evidence_text


def test_a_clause_naming_both_or_a_name_the_sources_lack_decides_nothing():
    both = ["Lunde and Murray shared the command of the expedition and mapped the coast."]
    claim = "Murray commanded the expedition, and Lunde mapped the coast."
    assert traded_names(claim, both) == []
    assert traded_names("Ole Berg commanded the expedition, and Murray mapped it.", VOYAGE) == []


def test_the_doer_after_a_peoples_adjective_and_a_noun_is_the_name_it_describes():
    evidence = (
        "It was written by composer Alan Menken and lyricist David Zippel, and originally "
        "recorded by American actor Roger Bart in his film role as the voice of Hercules."
    )
    assert role_swaps("The song was first recorded by Roger Bart for the film.", evidence) == []
    swaps = role_swaps("The song was first recorded by Alan Menken for the film.", evidence)
    assert [(s.text, s.evidence_text) for s in swaps] == [("Alan Menken", "Roger Bart")]


def test_a_name_set_off_by_a_comma_before_the_action_is_no_doer():
    said = "Between 10:05 and 10:15, Stephen Paddock of Mesquite, Nevada, fired from his suite."
    assert role_swaps("Paddock fired from his suite.", said) == []
    # the doer without the aside is still read, and a swap of it found
    plain = "Stephen Paddock fired from his suite, and Mesquite police arrived."
    assert [r.text for r in role_swaps("Mesquite fired from his suite.", plain)] == ["Mesquite"]
