"""Aligning a claim with its evidence: the name index and name look-ups against it."""

from __future__ import annotations

import pytest

from truthguard.refchecker._alignment import (
    Names,
    country_forms,
    country_in,
    fact_in,
    hedge_met,
    misplaced,
)
from truthguard.refchecker._analysis import analyse
from truthguard.refchecker._facts import Fact


def _names(*values: str) -> list[Fact]:
    return [Fact("name", v, 0, len(v), v) for v in values]


EVIDENCE = [
    *_names("joanne", "rowling", "apple", "fiorentina", "argentine"),
    Fact("number", 1998.0, 0, 4, "1998"),
    *_names("united", "nations", "robert"),
]


def test_the_index_holds_bare_names_initials_in_order_and_long_names_by_first_letter():
    names = Names.of(EVIDENCE)
    assert names.bare == {"joanne", "rowling", "apple", "fiorentina", "argentine", "united"} | {
        "nations",
        "robert",
    }
    assert names.initials == "jrafaunr"
    assert names.long_by_first == {
        "j": ("joanne",),
        "r": ("rowling", "robert"),
        "f": ("fiorentina",),
        "a": ("argentine",),
        "u": ("united",),
        "n": ("nations",),
    }
    assert Names.of([]) == Names(frozenset(), "", {})


def test_joined_indexes_equal_the_index_of_the_joined_facts():
    a, b = EVIDENCE[:4], EVIDENCE[4:]
    assert Names.of(a) + Names.of(b) == Names.of(a + b)
    assert Names.of(b) + Names.of(a) == Names.of(b + a)
    assert Names.of(a) + Names.of([]) == Names.of(a)


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("apple's", True),  # a possessive
        ("j", True),  # an initial
        ("q", False),
        ("un", True),  # an acronym of consecutive names
        ("uns", True),
        ("jra", True),
        ("ar", False),
        ("firoentina", True),  # two letters swapped
        ("fiorentna", True),  # one dropped
        ("argentinian", True),  # another ending
        ("roberta", False),  # a name that opens another is someone else
        ("robart", True),  # one letter changed
        ("robertson", False),
        ("nation", False),  # too short to be misspelt
        ("xavier", False),
    ],
)
def test_a_name_is_found_by_the_index_as_by_the_facts(name, found):
    fact = Fact("name", name, 0, len(name), name)
    assert fact_in(fact, EVIDENCE, frozenset(), frozenset()) is found
    assert fact_in(fact, EVIDENCE, frozenset(), frozenset(), Names.of(EVIDENCE)) is found
    # the index of a pool stands for its facts
    assert fact_in(fact, [], frozenset(), frozenset(), Names.of(EVIDENCE)) is found


@pytest.mark.parametrize(
    ("text", "is_year"),
    [
        ("in 1987", True),
        ("the 1970s", True),
        ("$1,050", False),  # an amount
        ("1,500 staff", False),  # a thousands separator makes a count
        ("2000 km", False),  # a measure
        ("1200 kg", False),
    ],
)
def test_a_year_is_a_bare_whole_number(text, is_year):
    from truthguard.refchecker._alignment import year
    from truthguard.refchecker._analysis import analyse

    (f,) = [f for f in analyse(text).facts if f.kind == "number"]
    assert year(f) is is_year


@pytest.mark.parametrize(
    ("claim", "sentence", "met"),
    [
        # a rounded value: within half its last digit's place (one significant digit) or
        # within that place (two or more)
        ("The flood damaged about 3,100 homes.", "The flood damaged 3,148 homes.", "3,148"),
        ("The flood damaged about 3,000 homes.", "The flood damaged 3,148 homes.", "3,148"),
        ("The flood damaged about 3,500 homes.", "The flood damaged 3,148 homes.", None),
        ("A ticket costs about £40.", "A ticket costs £41.75.", "41.75"),
        ("Turnout was about 40%.", "Turnout was 47%.", None),
        # "nearly" / "almost": at most that place below
        ("Nearly 12 million people voted.", "Officials said 11.8 million people voted.", "11.8"),
        ("Nearly 12 million people voted.", "Officials said 12.3 million people voted.", None),
        # a bound: the value rounded down (or up) at its first digit, not a looser one
        ("More than 3,000 homes were damaged.", "3,148 homes were damaged.", "3,148"),
        ("More than 100 homes were damaged.", "3,148 homes were damaged.", None),
        ("More than 4,000 homes were damaged.", "3,148 homes were damaged.", None),
        ("Fewer than 4,000 homes were damaged.", "3,148 homes were damaged.", "3,148"),
        # a bound of money, time or a small number sets a threshold of its own
        ("Claims over £100 need a receipt.", "Claims of £150 need a receipt.", None),
        ("Refunds take over 10 days.", "Refunds take 14 days.", None),
        ("Members over 60 travel free.", "Members aged 65 travel free.", None),
        # an estimate of the sources' is a value; a bound of theirs is no value to round
        ("About 3,100 homes were damaged.", "An estimated 3,148 homes were damaged.", "3,148"),
        ("About 3,100 homes were damaged.", "More than 3,148 homes were damaged.", None),
        ("Refunds take over 14 days.", "Refunds take up to 30 days.", None),
        # another measure, a year, a number without a hedge
        ("A ticket costs about £40.", "A ticket weighs 41.75 kg.", None),
        ("The bridge was built about 1990.", "The bridge was built in 1987.", None),
        ("The flood damaged 3,100 homes.", "The flood damaged 3,148 homes.", None),
    ],
)
def test_a_hedged_number_stands_for_the_value_its_hedge_holds_for(claim, sentence, met):
    a, b = analyse(claim), analyse(sentence)
    number = next(f for f in a.facts if f.kind == "number")
    found = hedge_met(a, number, b)
    assert (found.text.split()[0] if found else None) == met


def test_a_country_has_its_name_its_peoples_adjective_and_its_codes_as_forms():
    assert {"denmark", "danish", "dk"} <= country_forms("danish")
    assert {"united kingdom", "british", "uk"} <= country_forms("uk")
    assert country_forms("danish") == country_forms("denmark")
    assert country_forms("copenhagen") == frozenset()


@pytest.mark.parametrize(
    ("name", "sentence", "found"),
    [
        ("Denmark", "Residents of the Danish capital can move in next year.", True),
        ("Swiss", "Switzerland's best rider won the final in Geneva.", True),
        ("British", "The firm moved its head office to the UK in 2019.", True),
        ("American", "The firm moved its head office to the US in 2019.", True),
        ("American", "Sales in the U.S. rose by a fifth.", True),
        ("British", "Sales in the United Kingdom rose by a fifth.", True),
        # another country, and a code counts only in capitals ("us" is a pronoun)
        ("Swedish", "Residents of the Danish capital can move in next year.", False),
        ("American", "The firm told us it would move in 2019.", False),
    ],
)
def test_a_country_is_found_in_a_sentence_naming_it_in_another_form(name, sentence, found):
    fact = Fact("name", name.casefold(), 0, len(name), name)
    assert country_in(fact, analyse(sentence)) is found


@pytest.mark.parametrize(
    ("claim", "sentence", "found"),
    [
        # a count spelled in words states no share
        ("a 3% discount", "The fee is paid in three instalments.", False),
        ("two percent of the fee", "Members get two guest passes.", False),
        # a share in words, or a bare number in digits, still may
        ("a third of the fee", "A third of the fee is due in May.", True),
        ("a 3% rise", "Prices rise by 3 this year.", True),
        ("three instalments", "The fee is paid in three instalments.", True),
    ],
)
def test_a_count_spelled_in_words_states_no_share(claim, sentence, found):
    mine = next(f for f in analyse(claim).facts if f.kind == "number")
    theirs = analyse(sentence)
    assert fact_in(mine, theirs.facts, frozenset(), frozenset()) is found


@pytest.mark.parametrize(
    ("claim", "sentence", "found"),
    [
        # a number naming one of a series is no share and no amount
        ("a 2% discount", "Fees for term 2 are due in January.", False),
        ("a £3 fare", "Trams stop at platform 3 after midnight.", False),
        ("a 4% surcharge", "Tier 4 members book a week ahead.", False),
        # it still names its place in the series, and a bare number in a list still counts
        ("the second term", "Fees for term 2 are due in January.", True),
        ("a 2% discount", "Members get 2 or 3% off.", True),
        ("a £3 fare", "Single fares are 3 pounds on weekdays.", True),
    ],
)
def test_a_number_naming_one_of_a_series_states_no_share_or_amount(claim, sentence, found):
    mine = next(f for f in analyse(claim).facts if f.kind == "number")
    theirs = analyse(sentence)
    assert fact_in(mine, theirs.facts, frozenset(), frozenset()) is found


def test_a_value_stated_where_a_sentence_points_back_keeps_the_words_it_points_to():
    # "Each one is half of the yearly fee" says half of what the sentence before it names:
    # its own words are not all of the value's neighbours, so the claim's "half" is not taken
    # from there into the slot of the evidence sentence's 75%
    claim = analyse("Members pay two instalments on account of £60 each, half of £120.")
    half = next(f for f in claim.facts if f.text == "half")
    evid = [
        analyse(
            "Members need not pay instalments on account if more than 75% of their fee is "
            "met by a grant."
        )
    ]
    for home in ("Each one is half of the yearly fee.", "Each of them is half of the yearly fee."):
        assert misplaced(half, claim, evid, 0, [analyse(home)]) is None, home
    moved = misplaced(half, claim, evid, 0, [analyse("The deposit is half of the yearly fee.")])
    assert moved is not None and moved[1].text == "75"
    # stated in no sentence the claim was retrieved against: nothing to weigh
    assert misplaced(half, claim, evid, 0) is None
