"""The local checker's relation checks over a claim's passages."""

from __future__ import annotations

import pytest

from truthguard.refchecker import RefChecker
from truthguard.refchecker._facts import extract_facts
from truthguard.refchecker.checkers import _recounted


def test_a_count_is_set_against_another_only_in_a_sentence_about_the_same_thing():
    policy = [(0, 0, "Groups of 8 guests or more pay a deposit of £10 per person.")]
    claim = "You can still cut two guests without penalty."
    assert _recounted(claim, {"issues": []}, policy, policy) == []
    roles = [(0, 0, "Before that she played three other female roles on the same show.")]
    claim = "She played two other female roles on the show."
    (found,) = _recounted(claim, {"issues": []}, roles, roles)
    assert (found["text"], found["evidence"]["text"]) == ("two", "three")


def test_a_count_another_passage_states_is_not_set_against_the_near_one():
    claim = "You can cut up to two guests without penalty until 24 hours before the booking."
    near = [(1, 0, "Bookings of 15 or more guests are also charged £15 per head.")]
    (found,) = _recounted(claim, {"issues": []}, near, near)
    assert (found["text"], found["evidence"]["text"]) == ("two", "15")
    # the retriever ranked the passage that states the claim's count below the other
    every = [(0, 0, "You may reduce your party by up to 2 guests until 24 hours before."), *near]
    assert _recounted(claim, {"issues": []}, near, every) == []
    # another passage's number states the claim's count only where it counts the same noun
    claim = "She raised four children on the farm."
    near = [(0, 0, "She raised three children on the farm.")]
    every = [*near, (1, 0, "Her brother later bought four tractors.")]
    (found,) = _recounted(claim, {"issues": []}, near, every)
    assert (found["text"], found["evidence"]["text"]) == ("four", "three")


def test_a_count_the_asker_gives_of_their_own_case_is_not_set_against_the_sources():
    limits = [
        (
            0,
            0,
            "On Pro, a workspace may have up to 50 members; Starter workspaces are capped at "
            "5 members.",
        )
    ]
    claim = "Your 38 members fit within Pro's limit of 50 members."
    (found,) = _recounted(claim, {"issues": []}, limits, limits)
    assert found["text"] == "38"
    # "we have 38 members": the asker's own figure, not a count of the sources' members
    mine = extract_facts("We have 38 members. Can we use Pro?")
    assert _recounted(claim, {"issues": []}, limits, limits, case=mine) == []
    # another of the claim's counts is still set against the sources'
    claim = "Your 38 members fit within Pro's limit of 60 members."
    (found,) = _recounted(claim, {"issues": []}, limits, limits, case=mine)
    assert found["text"] == "60"


WALKER = (
    "Paul William Walker IV (September 12, 1973 - November 30, 2013) was an American actor, "
    "best known for his role as Brian O'Conner in The Fast and the Furious franchise."
)


def test_a_short_answer_of_another_kind_than_the_question_asks_is_not_supported():
    asked = "when did the fast and furious guy die"
    wrong = RefChecker().invoke({"question": asked, "answer": "Paul Walker.", "contexts": [WALKER]})
    assert not wrong.passing
    assert "the question asks when, and this gives a person" in wrong.explanation
    right = RefChecker().invoke(
        {"question": asked, "answer": "November 30, 2013.", "contexts": [WALKER]}
    )
    assert right.passing
    who = RefChecker().invoke(
        {
            "question": "who died on November 30, 2013",
            "answer": "Paul Walker.",
            "contexts": [WALKER],
        }
    )
    assert who.passing


_GRADING = [
    "Grading. A student's final mark is made up of the second-year average, weighted at 30%, "
    "and the third-year average, weighted at 70%. The class is then set by the final mark.",
    "Resits. A student who fails a module may resit it once, in August, and the resit mark is "
    "capped at 40.",
]
_MARKS = (
    "My second-year average was 60 and my third-year average was 70. What would my final mark be?"
)


def test_a_number_the_answer_works_out_from_the_values_it_shows_is_supported():
    # 30% of 60 plus 70% of 70: two shares no source states, then their sum
    checker = RefChecker()
    for answer, passing in [
        ("Your final mark would be 67: 30% of 60 plus 70% of 70.", True),
        ("Your final mark would be 67 (60 at 30% and 70 at 70%).", True),
        ("Your final mark would be 66: 30% of 60 plus 70% of 70.", False),
    ]:
        result = checker.invoke({"question": _MARKS, "answer": answer, "contexts": _GRADING})
        assert result.passing is passing, answer


_LATE_PICKUP = [
    "Late collection. If a child is collected after closing time, we charge £15 for the first "
    "15 minutes and £1 for each minute after that. The nursery closes at 6pm.",
    "Fees. A full day costs £62 and a half day £38.",
]


@pytest.mark.parametrize(
    ("answer", "passing"),
    [
        ("£25: £15 for the first 15 minutes and then £1 for each of the next 10 minutes.", True),
        # £55 is 15 + 4 x 10 and £4 is (55 - 15) / 10: two values no one states, each made
        # of the other, vouch for nothing
        ("£55: £15 for the first 15 minutes and then £4 for each of the next 10 minutes.", False),
    ],
)
def test_values_no_one_states_do_not_vouch_for_each_other(answer, passing):
    question = "I was 25 minutes late collecting my son. What will I be charged?"
    result = RefChecker().invoke({"question": question, "answer": answer, "contexts": _LATE_PICKUP})
    assert result.passing is passing, result.details["claims"]


@pytest.mark.parametrize(
    ("answer", "unstated"),
    [
        # a price a source states, if not in a sentence about the claim, may start the working
        ("You'll be charged half of the £62 price, so £31.", ["62"]),
        # one no source states may not: it cannot vouch for what is worked from it
        ("You'll be charged half of the £72 price, so £36.", ["72", "36"]),
    ],
)
def test_working_starts_only_from_values_a_source_or_a_step_gives(answer, unstated):
    contexts = [
        "Cancellations. If you cancel a booked session with less than a week's notice, we "
        "charge half its price.",
        "Prices. A full day costs £62 and a half day £38.",
    ]
    question = "I'm cancelling tomorrow's full day. What will it cost?"
    result = RefChecker().invoke({"question": question, "answer": answer, "contexts": contexts})
    issues = [i for c in result.details["claims"] for i in c["issues"] if i["kind"] == "number"]
    assert [i["text"] for i in issues] == unstated


_COURSE = [
    "Course fees. The course fee is £2,400 for members and £3,000 for others. Members pay in "
    "two instalments: 60% when they enrol and 40% before the second term. Paying the whole fee "
    "when you enrol earns a 5% discount."
]


@pytest.mark.parametrize(
    ("answer", "passing"),
    [
        ("The £2,400 fee is paid as £1,440 when you enrol and £960 before the second term.", True),
        # each share of a list is its own item's
        ("The £2,400 fee is paid as £960 when you enrol and £1,440 before the second term.", False),
        # one share may be taken off or added
        ("Paying the £2,400 fee in full when you enrol brings it down to £2,280.", True),
        ("Paying the £2,400 fee in full when you enrol brings it down to £2,160.", False),
    ],
)
def test_a_value_the_answer_shows_taken_at_its_evidence_sentences_share(answer, passing):
    result = RefChecker().invoke(
        {
            "question": "How do I pay the course fee as a member?",
            "answer": answer,
            "contexts": _COURSE,
        }
    )
    assert result.passing is passing, result.explanation


def test_a_count_is_not_set_against_a_multiplier_of_the_same_noun():
    # "3.84 times the weekly price" counts no weeks: the answer's "six charged weeks" stands
    contexts = [
        "Season tickets. A monthly season costs 3.84 times the weekly price, and an annual "
        "season costs 40 times the weekly price. If you give an annual season up early, we "
        "refund what you paid less the weekly price for each week started and a £10 fee."
    ]
    question = (
        "My weekly price is £50 and I bought an annual season. I've used it for 6 weeks. What "
        "do I get back?"
    )
    answer = (
        "Your season cost £2,000, forty times the £50 weekly price, so after six charged weeks "
        "(£300) and the £10 fee you'd get £1,690 back."
    )
    result = RefChecker().invoke({"question": question, "answer": answer, "contexts": contexts})
    assert result.passing, result.explanation


_DESKS = [
    "Membership. The Flex plan costs £180 a month and includes 10 desk days. Extra desk days "
    "cost £22 per day. Meeting rooms cost £25 an hour once your monthly credit is used.",
    "Notice. Flex runs month to month; give notice by the 1st and the plan ends at the end of "
    "that month.",
]


def test_a_rate_the_sources_give_per_day_times_the_answers_extra_days_is_supported():
    # £66 is the £22 per day for the 3 extra days the answer names, the rate left unsaid; the
    # 3 extra days are no other count than the plan's 10 desk days
    result = RefChecker().invoke(
        {
            "question": "I'm on Flex and used 13 desk days this month. What's my bill?",
            "answer": "£246 in all, with £66 for the 3 extra desk days on top of the £180 fee.",
            "contexts": _DESKS,
        }
    )
    assert result.passing, result.details["claims"]


def test_a_value_worked_from_another_sentence_takes_it_from_the_passage_the_claim_retells():
    asked = "How much do three nights at the Harbour Inn cost?"
    answer = "So three nights at the Harbour Inn cost £87 altogether."
    breakfast = "Stays of three nights or more get a free breakfast at the Harbour Inn."
    parking = "Guests can park for free."
    price = "A room at the {} costs £29 a night."
    rc = RefChecker()
    one = [f"{breakfast} {parking} {price.format('Harbour Inn')}"]
    assert rc.invoke({"question": asked, "answer": answer, "contexts": one}).passing
    # the same price in another passage, of another inn, makes no sum of the claim's
    two = [f"{breakfast} {parking}", price.format("Hillside Lodge")]
    result = rc.invoke({"question": asked, "answer": answer, "contexts": two})
    assert not result.passing
    issues = [i for c in result.details["claims"] for i in c["issues"]]
    assert any(i["kind"] == "number" and i["text"] == "87" for i in issues), issues


def test_a_measure_written_joined_to_its_number_is_the_askers_count():
    # "3GB" is three gigabytes, as "3 GB" is, not a format's name: the asker's 3GB at £5 per GB
    asked = "I'll be in Norway for a week and expect to use 3GB of data. What will it cost?"
    sources = [
        "Roaming in Zone 2, which covers Norway, Iceland and Switzerland: data costs £5 per GB"
        " and calls cost 40p a minute."
    ]
    result = RefChecker().invoke(
        {"question": asked, "answer": "In Norway the 3GB will cost £15.", "contexts": sources}
    )
    assert result.passing, result.details["claims"]


def test_an_amount_the_answer_gives_no_period_is_for_the_one_the_question_asks_about():
    sources = [
        "On the Fixed 12 tariff gas costs 6.1p per kWh and the standing charge is 30p a day."
    ]
    answer = "The standing charge adds £109.50 over 365 days."
    rc = RefChecker()
    yearly = "Roughly what would a year of gas cost us on Fixed 12?"
    assert rc.invoke({"question": yearly, "answer": answer, "contexts": sources}).passing
    # asked for no period, the sum and its 365 days are the answer's own
    asked = "What does Fixed 12 charge for gas?"
    assert not rc.invoke({"question": asked, "answer": answer, "contexts": sources}).passing


def test_the_askers_own_case_says_which_item_of_a_list_an_answer_naming_none_is_about():
    sources = ["Overtime is paid at £18 an hour on weekdays and £24 an hour on Sundays."]
    rc = RefChecker()
    mine = "I did four hours of overtime on weekdays. What am I owed for it?"
    wrong = "Four hours at £24 an hour come to £96."
    assert not rc.invoke({"question": mine, "answer": wrong, "contexts": sources}).passing
    right = "Four hours at £18 an hour come to £72."
    assert rc.invoke({"question": mine, "answer": right, "contexts": sources}).passing
    # the same answer is right for an asker who worked on Sundays
    sundays = "I did four hours of overtime on Sundays. What am I owed for it?"
    assert rc.invoke({"question": sundays, "answer": wrong, "contexts": sources}).passing


def test_a_value_the_answer_calls_a_total_is_a_sum_of_the_sources_values_not_one_of_them():
    asked = "We want permits for our two cars and one is electric. What will they cost a year?"
    sources = [
        "A resident's first permit costs £70 a year and a second one £110 a year. Permits for"
        " electric cars cost £30, and the household's other permit is then charged at the"
        " first-permit price."
    ]
    rc = RefChecker()
    total = "You'd pay £100 a year altogether."
    assert rc.invoke({"question": asked, "answer": total, "contexts": sources}).passing
    # a total that no two of the sources' values make is still set against the permit price
    wrong = rc.invoke(
        {"question": asked, "answer": "You'd pay £120 a year altogether.", "contexts": sources}
    )
    assert not wrong.passing
    # and a value not called a total still fills the first permit's slot
    price = "The first permit costs £100 a year."
    assert not rc.invoke({"question": asked, "answer": price, "contexts": sources}).passing


def test_a_bare_number_called_a_total_is_never_a_sum_of_the_sources_numbers():
    # 4 and 9, in another sentence of the passage, make 13 by chance: a count with no unit has
    # nothing that ties them to it
    sources = [
        "The choir has 4 soloists and 9 singers. It will give a total of 10 concerts in its"
        " second season."
    ]
    asked = "How many concerts will the choir give in its second season?"
    answer = "The choir will give a total of 13 concerts in its second season."
    result = RefChecker().invoke({"question": asked, "answer": answer, "contexts": sources})
    assert not result.passing


def test_a_whole_sentence_restating_the_question_must_add_mostly_what_the_sources_state():
    from truthguard.refchecker.checkers import _unanswered
    from truthguard.refchecker.grounding import ground_claim

    question = (
        "Mira Tesk is a businesswoman who co-founded a retail chain that specialises in which "
        "products?"
    )
    first = "Mira Tesk co-founded the Harlow chain of stores with her brother in 1981."
    second = "Harlow is a chain of superstores specialising in garden tools and outdoor furniture."
    sentences = [(0, 0, first), (0, len(first) + 1, second)]
    claim = "Mira Tesk co-founded a clothing store."
    g = ground_claim(claim, sentences)
    # "store" is the sources' word, "clothing" is not: half of what it adds
    assert [i["text"] for i in _unanswered(claim, question, g)] == ["clothing"]
    # a clause cut from a longer answer sentence may leave its answer to another clause
    assert _unanswered(claim, question, g, whole=False) == []
    answered = "Mira Tesk co-founded a chain of stores that specialises in garden tools."
    assert _unanswered(answered, question, ground_claim(answered, sentences)) == []


@pytest.mark.parametrize(
    ("answer", "passes"),
    [
        # a denial of what the sources state the opposite of answers the question
        ("Billing doesn't stop when the battery is full.", True),
        ("Billing doesn't continue once the battery is full.", False),
        ("Billing stops when the battery is full.", False),
    ],
)
def test_an_answer_denying_the_opposite_of_what_the_sources_state_answers_the_question(
    answer, passes
):
    source = (
        "Billing continues at 10p a minute once the battery is full, until the cable is removed."
    )
    asked = "What happens to billing when the battery is full?"
    result = RefChecker().invoke({"question": asked, "answer": answer, "contexts": [source]})
    assert result.passing is passes


@pytest.mark.parametrize(
    ("answer", "passes"),
    [
        ("Ostrandia has more species than Velloria.", False),
        ("Velloria has fewer species.", False),
        ("Velloria has more species than Ostrandia.", True),
    ],
)
def test_more_or_fewer_of_a_noun_is_held_against_each_sides_count_in_a_full_check(answer, passes):
    genera = [
        "Velloria is a genus of about 40 species of shrubs native to Chile.",
        "Ostrandia is a genus of four species of mosses, described in 1911.",
    ]
    asked = "Which genus has more species, Velloria or Ostrandia?"
    result = RefChecker().invoke({"question": asked, "answer": answer, "contexts": genera})
    assert result.passing is passes, result.explanation


_OLIVEIRA = (
    "Summarise the club's news.",
    [
        "Porto Ladies signed Marta Oliveira from Benfica in May. The board named Lisbon forward "
        "Oliveira as captain for the new season on Friday."
    ],
)
_LANTERN = (
    "The Lantern Year stars which actress of Irish heritage?",
    [
        "The Lantern Year is a 2019 drama film starring Niamh Kerr and Tomas Lind.",
        "Niamh Kerr (born 1984 in Cork) is an Irish actress.",
    ],
)
_HOLLIN = (
    "Are Hollin Vale and The Tide both operas?",
    [
        "Hollin Vale is an opera in three acts by Ida Marsh, first staged in 1931.",
        "Marsh also wrote songs and chamber music.",
    ],
)
_MARSH = (
    "Are Ida Marsh and Tom Reyes both composers?",
    [
        "Ida Marsh (1901-1980) was an English composer of operas.",
        "Tom Reyes (born 1950) is an American composer and pianist.",
    ],
)
_FERRY = ["The Harwick ferry carried 318,400 passengers in 2023, up 12% on the year before."]
_FERRY_TOLD = ("What happened to the Harwick ferry in 2023?", _FERRY)
_FERRY_COUNTED = ("How many passengers did the Harwick ferry carry in 2023?", _FERRY)
_ARCHWAY = (
    "Which Girls Night star had a regular role on The Archway?",
    [
        "Girls Night is a 2019 comedy film starring Ada Crane, Tessa Lind and Mae Holt.",
        "Tessa Lind (born 1988) is an English actress. She had a regular role on the radio "
        "drama The Archway.",
    ],
)


@pytest.mark.parametrize(
    ("case", "answer", "passes", "says"),
    [
        # a first name the passage states holds against a description before the surname
        (_OLIVEIRA, "The board has named Marta Oliveira captain for the new season.", True, ""),
        (_OLIVEIRA, "The board has named Paula Oliveira captain for the new season.", False, ""),
        # what the question asks about, given as no particular one, answers nothing
        (_LANTERN, "The Lantern Year stars a famous Irish actress.", False, "which actress"),
        (_LANTERN, "The Lantern Year stars Niamh Kerr, an Irish actress.", True, ""),
        (_LANTERN, "The Lantern Year stars an actress born in Cork.", True, ""),
        # an answer of one claim none of whose words besides its names the sources state
        (_HOLLIN, "Hollin Vale is a ballet.", False, "ballet"),
        (_HOLLIN, "Hollin Vale is an opera.", True, ""),
        # a date of its own that the sources state says something, in any words
        (_HOLLIN, "Hollin Vale premiered in 1931.", True, ""),
        # one word of it stated, the support model weighs the rest
        (_HOLLIN, "Hollin Vale is a grand opera.", True, ""),
        # what the sources say only of another subject, given to this one
        (_ARCHWAY, "Ada Crane had a regular role on The Archway.", False, "Tessa Lind"),
        (_ARCHWAY, "Tessa Lind had a regular role on The Archway.", True, ""),
        # a denial of what the question asks two names share, which the sources state
        (_MARSH, "No, only Ida Marsh is a composer.", False, "only"),
        (_MARSH, "Yes, Ida Marsh and Tom Reyes are both composers.", True, ""),
        # a number rounding or bounding the sources' as its hedge says is theirs
        (_FERRY_TOLD, "It carried over 300,000 passengers.", True, ""),
        (_FERRY_TOLD, "It carried about 320,000 people.", True, ""),
        (_FERRY_TOLD, "It carried over 400,000 passengers.", False, ""),
        # an answer that is the amount its question asks for gives it as the sources state it
        (_FERRY_COUNTED, "About 300,000.", False, ""),
        (_FERRY_COUNTED, "318,400.", True, ""),
        # an answer working through it may round on the way
        (
            _FERRY_COUNTED,
            "It carried over 300,000 passengers. That was up 12% on the year before.",
            True,
            "",
        ),
    ],
)
def test_who_and_what_an_answer_names_are_read_in_a_full_check(case, answer, passes, says):
    asked, contexts = case
    result = RefChecker().invoke({"question": asked, "answer": answer, "contexts": contexts})
    assert result.passing is passes, result.explanation
    assert says in result.explanation


def test_a_fuller_name_of_whom_the_question_asks_about_is_no_fact_of_the_answers_own():
    from truthguard.refchecker.checkers import _states_its_own_fact

    asked = {"what", "kind", "of", "athlete", "is", "claudia", "rivas"}
    # a name sharing a word with the question is what was asked about, all its words
    assert not _states_its_own_fact("Claudia Rivas Vega is a runner.", asked, [])
    # a name or a date of its own that no issue flags is the answer's
    assert _states_its_own_fact("Her coach is Ana Ruiz.", asked, [])
    assert _states_its_own_fact("She turned professional in 2012.", asked, [])
    flagged = [{"start": 28, "end": 32}]
    assert not _states_its_own_fact("She turned professional in 2012.", asked, flagged)


_CLUB_FEES = [
    "Membership fees 2027. The annual fee is £640 for adults and £1,250 for families. A locker"
    " costs £45 for all members. Members who pay the fee themselves do so in three instalments:"
    " 40% in March, 30% in June and 30% in September.",
    "Guests. Each member may bring two guests a month; guest passes are free.",
]


@pytest.mark.parametrize(
    ("answer", "passing"),
    [
        # each instalment is a share its sentence gives of an amount its passage states (in
        # brackets after the share, or with the share's month after it)
        ("You pay 40% (£500) in March and 30% (£375) in each of June and September.", True),
        ("You pay £500 in March and £375 in each of June and September.", True),
        # an amount no share of a stated one makes
        ("You pay 40% (£500) in March and 30% (£385) in each of June and September.", False),
        ("You pay £500 in March and £395 in each of June and September.", False),
    ],
)
def test_a_share_may_be_taken_of_an_amount_the_evidence_passage_states(answer, passing):
    asked = "When are the instalments due for a family, and how much is each one?"
    result = RefChecker().invoke({"question": asked, "answer": answer, "contexts": _CLUB_FEES})
    assert result.passing is passing, result.details["claims"]
