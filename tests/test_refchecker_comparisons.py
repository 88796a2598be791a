"""Reading which of two names came first against the years the sources give each."""

import pytest

from truthguard.refchecker.comparisons import counted_the_other_way, out_of_order

FERRIES = [
    "The Skylark (launched 1998) is a roll-on ferry of the Orkney line.",
    "The Petrel, a smaller ship built at Leith in 1974, served the same crossing until 2009.",
]
ASKED = "Which ferry was launched first, the Skylark or the Petrel?"


@pytest.mark.parametrize(
    ("claim", "question", "wrong"),
    [
        ("The Skylark was launched first.", ASKED, "first"),
        ("The Petrel was launched first.", ASKED, None),
        ("The Petrel is older than the Skylark.", "", None),
        ("The Skylark is older than the Petrel.", "", "older"),
        ("The Skylark came after the Petrel.", "", None),
        ("The Petrel came after the Skylark.", "", "after"),
        ("The Skylark is the younger of the two.", ASKED, None),
        # an order word that ranks a noun orders nothing between the two
        ("The Skylark was launched as the first ferry of the line.", ASKED, None),
        ("The Skylark was the first to be launched.", ASKED, "first"),
        # no second side, a negation or an ending: nothing to order
        ("The Skylark was launched first.", "When was the Skylark launched?", None),
        ("The Skylark was not launched first.", ASKED, None),
        # an order of anything but beginnings is not read from the years of first mention
        ("The Skylark was retired first.", ASKED, None),
        ("The Skylark came into service first.", ASKED, "first"),
        # a thing produced or recorded begins then, as one released does
        ("The Skylark was produced before the Petrel.", "", "before"),
        ("The Skylark was recorded earlier.", ASKED, "earlier"),
        ("The Skylark ended its service first.", ASKED, None),
    ],
)
def test_the_order_a_claim_gives_two_names_is_held_against_their_years(claim, question, wrong):
    found = out_of_order(claim, question, FERRIES)
    assert [a.text for a, _ in found] == ([wrong] if wrong else [])
    for against, n in found:
        assert claim[against.start : against.end] == against.text
        # the evidence span runs from the first side's name to its year, in its own sentence
        said = FERRIES[n][against.evidence_start : against.evidence_end]
        assert said == against.evidence_text and said.endswith(("1998", "1974"))


def test_a_side_named_without_a_year_or_found_nowhere_decides_nothing():
    undated = ["The Skylark is a roll-on ferry.", "The Petrel was built at Leith in 1974."]
    assert out_of_order("The Skylark was launched first.", ASKED, undated) == []
    assert out_of_order("The Osprey was launched first.", ASKED, FERRIES) == []
    # both sides in one sentence: each year is read before the other side is named
    one = ["The Petrel (1974) was replaced by the Skylark (1998)."]
    assert [a.text for a, _ in out_of_order("The Skylark came first.", ASKED, one)] == ["first"]
    assert out_of_order("The Petrel came first.", ASKED, one) == []


def test_an_option_of_several_words_joined_by_of_is_one_side():
    films = [
        "The Hunchback of Notre Dame is a 1996 American animated musical drama film.",
        "Saludos Amigos is a 1942 American live-action animated package film.",
    ]
    asked = "Which movie was released first, The Hunchback of Notre Dame or Saludos Amigos?"
    wrong = out_of_order("The Hunchback of Notre Dame was released first.", asked, films)
    assert [a.text for a, _ in wrong] == ["first"]
    assert out_of_order("Saludos Amigos was released first.", asked, films) == []


def test_an_option_opening_the_claim_is_a_side_though_not_read_as_a_name():
    sources = [
        "Harvest is a 1972 album by the folk duo Penrose.",
        "Tides, the duo's first album, was recorded in 1969.",
    ]
    asked = "Which album was recorded first, Harvest or Tides?"
    found = out_of_order("Harvest was recorded before Tides.", asked, sources)
    assert [a.text for a, _ in found] == ["before"]
    assert out_of_order("Tides was recorded before Harvest.", asked, sources) == []


GENERA = (
    "Which genus has more species, Velloria or Ostrandia?",
    [
        "Velloria is a genus of about 40 species of shrubs native to Chile.",
        "Ostrandia is a genus of four species of mosses, described in 1911.",
    ],
)
OPERAS = (
    "Which opera has more acts, Lumen or Castor?",
    [
        "Lumen is an opera in one act by Ada Pell, first staged in 1961.",
        "Castor is an opera in three acts by Ivo Marr.",
    ],
)


@pytest.mark.parametrize(
    ("case", "claim", "wrong"),
    [
        (GENERA, "Ostrandia has more species than Velloria.", "more"),
        (GENERA, "Velloria has fewer species.", "fewer"),
        (GENERA, "Velloria has more species than Ostrandia.", None),
        (GENERA, "Ostrandia has fewer species.", None),
        # "more than one" compares with a number, not with the other side
        (GENERA, "Ostrandia has more than one species.", None),
        # a count of another noun orders nothing
        (GENERA, "Ostrandia has more shrubs.", None),
        # "one" counts the noun right after it; a noun the lexicon knows only as a verb
        # ("acts") is read as a noun from the parse
        (OPERAS, "Lumen has more acts.", "more"),
        (OPERAS, "Castor has fewer acts.", "fewer"),
        (OPERAS, "Castor has more acts.", None),
        (OPERAS, "Lumen has fewer acts.", None),
    ],
)
def test_more_or_fewer_of_a_noun_is_held_against_the_counts_of_each_side(case, claim, wrong):
    asked, sources = case
    found = counted_the_other_way(claim, asked, sources)
    assert [a.text for a, _ in found] == ([wrong] if wrong else [])


def test_one_as_a_pronoun_counts_nothing():
    asked, sources = OPERAS
    pronoun = ["Lumen is one of two operas by Ada Pell.", sources[1]]
    assert counted_the_other_way("Lumen has more acts.", asked, pronoun) == []


@pytest.mark.parametrize(
    ("claim", "wrong"),
    [
        # several order words ordering the same way are one comparison
        ("The Skylark was launched first, before the Petrel.", "first"),
        ("The Petrel was launched first, before the Skylark.", None),
        # order words ordering each way say nothing clear
        ("The Skylark was launched first, after the Petrel.", None),
    ],
)
def test_order_words_that_agree_are_read_as_one(claim, wrong):
    found = out_of_order(claim, ASKED, FERRIES)
    assert [a.text for a, _ in found] == ([wrong] if wrong else [])


def test_an_event_that_happened_first_is_ordered_by_its_year():
    treaties = [
        "The Treaty of Orlen (1921) ended the border war between the two duchies.",
        "The Kessel Accord, signed in 1908, opened the river to trade.",
    ]
    asked = "Which happened first, the Treaty of Orlen or the Kessel Accord?"
    wrong = out_of_order("The Treaty of Orlen happened first.", asked, treaties)
    assert [a.text for a, _ in wrong] == ["first"]
    assert out_of_order("The Kessel Accord took place first.", asked, treaties) == []
    assert out_of_order("The Kessel Accord occurred earlier.", asked, treaties) == []


def test_a_side_is_found_by_the_words_it_does_not_share_with_the_other():
    colleges = [
        "Orrin University is the oldest university in the region, a university since 1918.",
        "Tavish State University, founded in 1868, has thirteen schools.",
    ]
    asked = "Which was founded first, Orrin University or Tavish State University?"
    # "university" of the first sentence is not where Tavish State University is named
    wrong = out_of_order("Orrin University was founded first.", asked, colleges)
    assert [a.text for a, _ in wrong] == ["first"]
    assert out_of_order("Tavish State University was founded first.", asked, colleges) == []
