"""Counts: another number before what the evidence counts."""

from truthguard.refchecker.counts import agreeing, recounts, totals

ROLES = (
    "She is best known as Chelsea Melini on the sitcom Two and a Half Men, and earlier, for "
    "three other female roles on the show."
)


def test_another_count_of_the_same_thing_is_found_and_the_right_one_agrees():
    claim = "She had played two other female characters on the show."
    (r,) = recounts(claim, ROLES)
    assert (r.text, r.evidence_text) == ("two", "three")  # not "Two" of the title
    assert claim[r.start : r.end] == "two" and ROLES[r.evidence_start : r.evidence_end] == "three"
    right = "She had played three other female characters on the show."
    assert recounts(right, ROLES) == [] and [a.text for a in agreeing(right, ROLES)] == ["three"]


def test_years_ordinals_measures_and_word_compounds_are_not_counts():
    ev = "In 1998 the club won its third title with 24 players and a 100-grain trophy."
    assert recounts("In 2001 the club won its fourth title.", ev) == []
    assert recounts("It was a 120-grain trophy.", ev) == []
    assert [r.text for r in recounts("The club won with 30 players.", ev)] == ["30"]


def test_a_count_the_evidence_states_without_its_counted_word_agrees():
    # the population is stated bare; another sentence counts the northern rhinos with another
    # number
    bare = "According to the 2018 census, the rhino population in the park is 2,413."
    north = "It comprises 1,641 rhinos in the north and 772 in the south."
    claim = "A census in March 2018 counted 2,413 rhinos in the park."
    assert [r.text for r in recounts(claim, north)] == ["2,413"]
    assert [a.text for a in agreeing(claim, bare)] == ["2,413"]
    # "41 each home and away" states 41; a title's capitalised number word states nothing
    assert [
        a.text
        for a in agreeing("41 games at home", "Each team plays 82 games, 41 each home and away.")
    ] == ["41"]
    assert agreeing("She played two roles.", ROLES) == []


def test_what_a_number_counts_is_the_noun_it_modifies_in_the_parse():
    evidence = (
        "The Free plan receives 2,000 build minutes per month; the Team plan includes 10,000 "
        "minutes and the Business plan includes 50,000."
    )
    # "10,000 minutes" (read as a measure) states the count "10,000 build minutes" gives
    assert recounts("The Team plan comes with 10,000 build minutes a month.", evidence) == []
    (r,) = recounts("The Team plan comes with 12,000 build minutes a month.", evidence)
    assert (r.text, r.evidence_text) == ("12,000", "2,000")


def test_a_rate_is_set_only_against_another_rate_of_the_same_noun():
    earning = "Gold members earn 10 points per £1 and Silver members 7 points per £1."
    # an amount of points is no other count than a rate of points per pound
    assert recounts("A Silver member earns 2,100 points on this fare.", earning) == []
    (r,) = recounts("Silver members earn 5 points per £1.", earning)
    assert r.text == "5" and r.evidence_text in ("10", "7")


def test_a_count_of_what_comes_beyond_is_no_other_count_of_the_whole():
    plan = "The Flex plan includes 10 desk days a month."
    assert recounts("You used 3 extra desk days this month.", plan) == []
    (r,) = recounts("The Flex plan includes 12 desk days a month.", plan)
    assert (r.text, r.evidence_text) == ("12", "10")


def test_a_count_that_rounds_or_bounds_the_evidences_count_is_no_other_count():
    ev = "The flood damaged 3,148 homes in the valley."
    assert recounts("The flood damaged more than 3,000 homes.", ev) == []
    assert recounts("The flood damaged about 3,100 homes.", ev) == []
    # a hedge that does not hold is another count
    assert [r.text for r in recounts("The flood damaged about 3,500 homes.", ev)] == ["3,500"]
    assert [r.text for r in recounts("The flood damaged 3,100 homes.", ev)] == ["3,100"]


def test_one_named_and_others_are_counted_in_all():
    ev = "Since 2019, she and three other volunteers have run the food bank on Fridays."
    assert [r.text for r in totals("Four volunteers run the food bank.", ev)] == ["Four"]
    assert totals("Three volunteers run the food bank.", ev) == []
    # "three other volunteers" are not all of them
    assert [r.text for r in recounts("Three volunteers run the food bank.", ev)] == ["Three"]
    assert recounts("Four volunteers run the food bank.", ev) == []
    assert agreeing("Three volunteers run the food bank.", ev) == []
    # the claim's own "three other" repeats the sentence
    assert [a.text for a in agreeing("She and three other volunteers run it.", ev)] == ["three"]
    # "other" without one named before it is a count of its own
    plain = "The centre has three other volunteers on Fridays."
    assert totals("Four volunteers run the food bank.", plain) == []
    # each named thing the list joins counts
    listed = "Ames, Bell and three other volunteers have run the food bank since 2019."
    assert [r.text for r in totals("Five volunteers run the food bank.", listed)] == ["Five"]
    assert totals("Four volunteers run the food bank.", listed) == []
    # what "or" joins after them is no more of them
    named = "She and three other volunteers, or helpers, have run the food bank since 2019."
    assert [r.text for r in totals("Four volunteers run the food bank.", named)] == ["Four"]


def test_a_count_of_a_kind_of_the_claim_s_noun_is_no_other_count_of_it():
    # "adult rhinos" and "tier points" are kinds of what the claim counts, named by a compound
    claim = "A census in March 2018 counted 2,413 rhinos in the park."
    assert recounts(claim, "It comprises 1,641 adult rhinos and 385 calves.") == []
    tiers = "A short-haul flight earns 20 tier points in Economy and 40 in Business."
    assert recounts("You will earn 4,410 points.", tiers) == []
    # the same kind is the same count
    assert [r.text for r in recounts("You will earn 4,410 tier points.", tiers)] == ["4,410"]
    assert [r.text for r in recounts("It earns 40 points.", "It earns 20 points.")] == ["40"]


def test_a_value_given_another_noun_is_no_agreement_where_the_noun_has_another_count():
    ev = "The charity runs 45 shelters with 900 volunteers."
    # the two counts exchanged: each value is stated, of the other noun
    claim = "The charity runs 900 shelters with 45 volunteers."
    assert agreeing(claim, ev) == []
    assert [(r.text, r.evidence_text) for r in recounts(claim, ev)] == [
        ("900", "45"),
        ("45", "900"),
    ]
    # a value the sentence states bare, counting nothing, still agrees
    assert [a.text for a in agreeing("It has 45 shelters.", "The number of shelters is 45.")] == [
        "45"
    ]
    # and the right counts agree
    assert [a.text for a in agreeing("It has 900 volunteers in 45 shelters.", ev)] == ["900", "45"]
