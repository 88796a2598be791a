"""Aligning a claim with its evidence: the name index and name look-ups against it."""

from __future__ import annotations

import pytest

from truthguard.refchecker._alignment import Names, fact_in
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
