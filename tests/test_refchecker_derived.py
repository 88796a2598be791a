"""Numbers an answer works out itself: counts of what it lists, spans between its dates."""

from __future__ import annotations

import pytest

from truthguard.refchecker._facts import extract_facts
from truthguard.refchecker.derived import (
    counts_of,
    date_after,
    day_condition,
    derived,
    from_case,
    measure_of,
    named_days,
    per_period_value,
    per_what,
    restates,
    share_shown,
    shown_working,
    timed,
    weekday_after,
    workable,
)


def _fact_in(text: str, word: str):
    """The fact of ``text`` written ``word``, with every fact of ``text``."""
    facts = extract_facts(text)
    return next(f for f in facts if f.text == word), facts


def _derived(text: str, word: str, evidence: str = "") -> bool:
    facts = extract_facts(text)
    fact = next(f for f in facts if f.text == word)
    return derived(fact, text, facts, extract_facts(evidence), said=evidence)


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("It is in two places: both the Fifth and the Fourteenth Amendment have one.", "two"),
        ("Two of its members, Baleka Mbete and Thandi Modise, were elected.", "Two"),
        ("It lists three kinds: living donors, brain-dead donors, or donors after death.", "three"),
        ("The band had 4 members, Ann, Bo, Cy and Di.", "4"),
        # what an item says in brackets, commas and all, is part of that item
        (
            "You can leave in two cases: in the first week (with a refund, if unused) and when "
            "the gym closes (pro rata).",
            "two",
        ),
    ],
)
def test_a_count_of_the_items_the_claim_lists_is_its_own(text, word):
    assert _derived(text, word)


@pytest.mark.parametrize(
    ("text", "word"),
    [
        # one item too many or too few: the count is wrong, not derived
        ("It is in three places: both the Fifth and the Fourteenth Amendment have one.", "three"),
        ("Two of its members, Ann, Bo and Cy, were elected.", "Two"),
        (
            "You can leave in three cases: in the first week (with a refund, if unused) and when "
            "the gym closes.",
            "three",
        ),
        # no list after it at all
        ("He won two titles in his career.", "two"),
        # an ordinal counts nothing
        ("It came second: behind Ann and Bo.", "second"),
    ],
)
def test_a_count_that_disagrees_with_its_list_is_not_derived(text, word):
    assert not _derived(text, word)


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("Vanellope and Ralph argue, and the two then agree to build a kart.", False),
        ("After the wedding the two make up.", False),
        ("It places firmware between the two but gives no examples.", False),
        ("The three of them left the town together.", False),
        ("These two were friends at school.", False),
        # a count of the noun after it, which the sources must state
        ("The two sisters met in Paris.", True),
        ("The four founding leaders signed it.", True),
        ("The two main reasons are cost and weight.", True),
        ("He won two titles in his career.", True),
    ],
)
def test_the_two_standing_for_what_the_answer_named_counts_nothing(text, counts):
    word = next(w for w in ("two", "three", "four") if w in text.lower().split())
    word = next(f.text for f in extract_facts(text) if f.text.lower() == word)
    assert _derived(text, word) is not counts


def test_a_clause_counts_the_items_its_sentence_lists():
    sentence = (
        "Linden gave the boats two advantages: they could hold more cargo, and they were "
        "easier to carry than most others."
    )
    clause = "Linden gave the boats two advantages: they could hold more cargo"
    for word, counted in (("two", True), ("three", False)):
        text = clause.replace("two", word)
        facts = extract_facts(text)
        fact = next(f for f in facts if f.text == word)
        context = sentence.replace("two", word)
        assert derived(fact, text, facts, context=context) is counted
        # read alone, the clause lists one item
        assert not derived(fact, text, facts)


def test_a_span_between_two_dates_the_claim_states_is_its_own():
    text = "Hiroshima was bombed on 6 August 1945 and Nagasaki three days later, on 9 August."
    assert _derived(text, "three")
    text = "The well was sealed on September 19, 2010, about five months after April 20, 2010."
    assert _derived(text, "five")
    assert _derived("It lasted 12 years, from 1990 to 2002.", "12")


def test_a_span_between_two_days_of_months_with_no_year_counts_their_days():
    assert _derived("From 4 June to 30 June is 26 days.", "26")
    assert not _derived("From 4 June to 30 June is 28 days.", "28")
    # a year stated anywhere in the claim dates both days as before
    assert not _derived("From 4 June to 30 June 2027 is 30 days.", "30")


def _after(question: str, claim: str, evidence: str) -> bool:
    facts = extract_facts(claim)
    month = next(f for f in facts if f.kind == "month")
    said = [(t, extract_facts(t)) for t in (question, claim, evidence)]
    return date_after(month.start, claim, facts, said)


_INVOICE = (
    "I paid the invoice on 16 June. When must I send the claim?",
    "Claims must reach us within 30 days of payment.",
)
_EVENT = (
    "Our event is on 3 May 2028. When is the balance due?",
    "The balance is due 3 months before the event.",
)
_COVER = (
    "Our policy started on 3 May. When is an illness covered from?",
    "An illness is covered if it first shows more than 14 days after the policy starts.",
)


@pytest.mark.parametrize(
    ("said", "claim", "worked"),
    [
        (_INVOICE, "Send it by 16 July.", True),  # 16 June and 30 days
        (_INVOICE, "Send it by 14 July.", False),
        (_INVOICE, "Send it by 16 August.", False),
        (_EVENT, "The balance is due by 3 February 2028.", True),  # 3 May 2028 less 3 months
        # (either side of it: the reading does not tell before from after, as for days)
        (_EVENT, "The balance is due by 3 August 2028.", True),
        (_EVENT, "The balance is due by 3 March 2028.", False),
        # a strict bound is first met the day after the stretch ends
        (_COVER, "It is covered if it first shows from 18 May.", True),
        (_COVER, "It is covered if it first shows from 17 May.", False),
    ],
)
def test_a_date_a_stated_stretch_after_or_before_the_askers_date_is_worked_out(said, claim, worked):
    question, evidence = said
    assert _after(question, claim, evidence) == worked
    # no date of the asker's to start from
    assert not _after(question.split(". ", 1)[1], claim, evidence)


@pytest.mark.parametrize(("day", "worked"), [("24", True), ("22", False)])
def test_a_date_worked_out_first_is_where_the_claims_next_stretch_runs_from(day, worked):
    question = "My fee was due on 3 June and is still unpaid. What will I owe?"
    evidence = "A £15 charge is added 7 days after the due date and £30 more 14 days after that."
    claim = f"A £15 charge from 10 June and £30 more from {day} June."
    facts = extract_facts(claim)
    second = [f for f in facts if f.kind == "month"][1]
    said = [(t, extract_facts(t)) for t in (question, claim, evidence)]
    assert date_after(second.start, claim, facts, said) == worked
    # the first date must itself be worked out: from 11 June no stretch reaches 25 June
    claim = "A £15 charge from 11 June and £30 more from 25 June."
    facts = extract_facts(claim)
    second = [f for f in facts if f.kind == "month"][1]
    said = [(t, extract_facts(t)) for t in (question, claim, evidence)]
    assert not date_after(second.start, claim, facts, said)


def test_a_span_that_the_dates_do_not_give_is_not_derived():
    text = "Hiroshima was bombed on 6 August 1945 and Nagasaki four days later, on 9 August."
    assert not _derived(text, "four")
    assert not _derived("It lasted 10 years, from 1990 to 2002.", "10")
    # "about" allows rounding, not another figure
    text = "The well was sealed on September 19, 2010, about eight months after April 20, 2010."
    assert not _derived(text, "eight")


def test_the_second_date_may_come_from_the_evidence_sentence():
    evidence = "Hiroshima was bombed on 6 August 1945 and Nagasaki on 9 August 1945."
    assert _derived("Nagasaki was bombed three days after 6 August 1945.", "three", evidence)


def _spans(text: str, word: str, sources: str) -> bool:
    facts = extract_facts(text)
    fact = next(f for f in facts if f.text == word)
    return derived(fact, text, facts, (), extract_facts(sources))


def test_a_span_from_a_date_the_claim_states_to_one_anywhere_in_the_sources():
    sources = "The Great Fire of London broke out in 1666. Wren's column rose beside it later."
    text = "The Monument was finished in 1677, eleven years after the fire."
    assert _spans(text, "eleven", sources)
    assert not _spans(text.replace("eleven", "twelve"), "twelve", sources)


def test_a_day_of_a_month_the_claim_gives_no_year_is_read_in_the_other_dates_year():
    sources = "The fixed price holds until 31 August 2028."
    text = "On 12 July you'd be 50 days from the end of the fixed price."
    assert _spans(text, "50", sources)
    assert not _spans(text.replace("50", "47"), "47", sources)
    # "after" puts the claim's date second: the end is not 50 days after 12 July's year
    assert not _spans("On 12 July you'd be 50 days after the end.", "50", sources)


def test_two_dates_of_the_sources_alone_make_no_span_across_sentences():
    # a passage's years are apart by most small numbers: the claim must state one of the two
    sources = "The mill opened in 1990. It was sold in 1999. It closed in 2004."
    assert not _spans("The mill was sold nine years after it opened.", "nine", sources)
    # within the evidence sentence two dates still give a span
    text = "The mill was sold nine years after it opened."
    facts = extract_facts(text)
    nine = next(f for f in facts if f.text == "nine")
    assert derived(nine, text, facts, extract_facts("It opened in 1990 and was sold in 1999."))


def test_after_and_later_say_which_of_the_claims_date_and_the_other_comes_first():
    sources = "The extract was first injected into a patient in January 1922."
    before = "The experiments began in May 1921, roughly eight months before the first injection."
    assert _spans(before, "eight", sources)
    assert not _spans(before.replace("before", "after"), "eight", sources)
    # the date the word governs is the earlier one: "N years after its 1954 premiere"
    revival = "The opera was revived in 1979."
    assert _spans(
        "Twenty-five years after its 1954 premiere, it was revived.", "Twenty-five", revival
    )
    assert not _spans(
        "Twenty-five years before its 1954 premiere, it was revived.", "Twenty-five", revival
    )
    # "later" puts the claim's date first
    fix = "The astronauts fixed its optics in 1993."
    assert _spans(
        "The telescope went up in 1990, and its optics were fixed three years later.", "three", fix
    )


@pytest.mark.parametrize(
    ("text", "word", "evidence", "counted"),
    [
        ("He fired in the ten minutes between 10:05 and 10:15 p.m.", "ten", "", True),
        ("He fired in the twenty minutes between 10:05 and 10:15 p.m.", "twenty", "", False),
        ("It was a roughly ten-minute attack.", "ten-minute", "From 10:05 to 10:15 p.m.", True),
        ("It was a roughly thirty-minute attack.", "thirty-minute", "From 10:05 to 10:15", False),
        # the shorter way round the dial
        ("The show ran two hours, from 11 pm to 1 am.", "two", "", True),
    ],
)
def test_minutes_or_hours_between_two_times_of_day_are_counted(text, word, evidence, counted):
    assert _derived(text, word, evidence) is counted


@pytest.mark.parametrize(
    ("text", "word", "evidence"),
    [
        ("Meals are covered up to €50 a day for five days, so €250 at most.", "250", ""),
        ("Of 148 enrolled, 17 withdrew, leaving 131 who completed both.", "131", ""),
        ("17 withdrew (9 in the first period and 8 in the second).", "17", ""),
        ("E-bikes cost €0.10 a minute, so a 45-minute ride comes to €4.50.", "4.50", ""),
        ("The fee is 15% of the remaining €2,880, i.e. €432.", "432", ""),
        # a share of a whole the evidence sentence states, and what is left of it
        ("That leaves €2,880 to invoice.", "2,880", "70% of the €9,600 fee is invoiced."),
        ("The £8,000 above that is charged at 3%, which is £240.", "240", ""),
        # in brackets after what it works out
        ("You can repay 10% of the £220,000 balance (£22,000) free.", "22,000", ""),
        # a rate times two counts
        ("At £1.50 a day for 4 books 10 days late, so you owe £60.", "60", ""),
        # pence joined to their number are hundredths of a pound
        ("You'll owe £7.50 (25p a day for 10 days on each of the three books).", "7.50", ""),
        # a total said after its value, and an amount added on
        ("£65 for one and £25 for the other: £90 a year altogether.", "90", ""),
        ("The surcharge is £12 a day for 5 days, another £60.", "60", ""),
        # the result of an equation, and an amount broken down as a rate after it (an amount
        # of four digits is no year)
        ("98.7% earns a quarter back: 25% of $4,200 is $1,050.", "1,050", ""),
        ("The deposit is £100, £10 for each of the ten adults.", "100", ""),
        # or as what it is, after it, with its working
        ("It runs for 90 minutes, that is its 110 minutes less the 20 mopping takes.", "90", ""),
        ("It gives you about 90 minutes a charge (110 minus 20).", "90", ""),
        # a time of day a stretch after another
        ("Down at 10am, it must be restored within 4 hours, so by 2pm.", "2pm", ""),
        # half or twice a value named so
        ("You'd get £270 back, half of the £540 fee.", "270", ""),
        # what is left of a whole once a part is taken ("the other")
        ("Of the 40 seats, the first 25 go to members and the other 15 to guests.", "15", ""),
        # or said so by the evidence sentence
        (
            "Leave in the second year and you pay back £1,500.",
            "1,500",
            "The £3,000 bonus is repaid in full within 12 months of joining, and half within 24.",
        ),
    ],
)
def test_a_number_the_claim_works_out_in_one_step_is_its_own(text, word, evidence):
    assert _derived(text, word, evidence)


@pytest.mark.parametrize(
    ("text", "word", "evidence"),
    [
        # a wrong result
        ("Meals are covered up to €50 a day for five days, so €300 at most.", "300", ""),
        # no sign of working: a number that happens to be a sum is stated, not worked out
        ("Seventeen withdrew and 131 completed the trial.", "131", "148 were enrolled."),
        ("Of 148 enrolled, 17 withdrew, and 131 completed both.", "131", ""),
        ("At £1.50 a day for 4 books 10 days late, so you owe £50.", "50", ""),
        ("You'll owe £750 (25p a day for 10 days on each of the three books).", "750", ""),
        # a year is a date, never worked out
        ("Founded in 1990, it moved 30 years on, which is 2020.", "2020", ""),
        # a count is no rate: three counts multiplied make no charge
        ("With 4 books 10 days late and 3 renewals, that's 120 items.", "120", ""),
        # an equation's wrong result, and a list that is no breakdown
        ("98.7% earns a quarter back: 25% of $4,200 is $1,200.", "1,200", ""),
        ("Fees are £100, £200 and £300.", "100", ""),
        ("It runs for 80 minutes, that is its 110 minutes less the 20 mopping takes.", "80", ""),
        ("It gives you about 90 minutes a charge (110 minus 30).", "90", ""),
        ("Down at 10am, it must be restored within 4 hours, so by 3pm.", "3pm", ""),
        ("You'd get £250 back, half of the £540 fee.", "250", ""),
        ("Of the 40 seats, the first 25 go to members and the other 12 to guests.", "12", ""),
        (
            "Leave in the second year and you pay back £2,000.",
            "2,000",
            "The £3,000 bonus is repaid in full within 12 months of joining, and half within 24.",
        ),
    ],
)
def test_a_number_not_worked_out_from_the_claims_values_is_not(text, word, evidence):
    assert not _derived(text, word, evidence)


@pytest.mark.parametrize(
    ("claim", "said", "worked"),
    [
        ("It can close from Tuesday.", ["fixed at 9am on Monday", "stable for 24 hours"], True),
        ("It can close from Wednesday.", ["fixed at 9am on Monday", "stable for 24 hours"], False),
        ("It can close from Tuesday after 24 stable hours.", ["fixed on Monday"], True),
        ("You'll hear by Wednesday.", ["filed on Monday", "within two working days"], True),
        ("You'll hear by Tuesday.", ["filed on Friday", "within two working days"], True),
        ("You'll hear by Sunday.", ["filed on Friday", "within two working days"], False),
        ("You leave on Saturday.", ["arriving on Wednesday", "for three nights"], True),
        ("The review is due the following Tuesday.", ["closed on Tuesday", "5 working days"], True),
        ("It closes on Friday.", ["opened on Monday", "for a while"], False),
        ("It closes on Friday.", ["opened on Monday", "4 a day", "£4 per day"], False),
    ],
)
def test_a_weekday_a_whole_number_of_days_after_another(claim, said, worked):
    texts = [(t, extract_facts(t)) for t in [*said, claim]]
    day = next(w for w in ("Tuesday", "Wednesday", "Sunday", "Saturday", "Friday") if w in claim)
    assert weekday_after(claim.index(day), claim, texts) is worked


def test_a_time_of_day_a_stretch_after_another():
    facts = extract_facts("noticed at 10:30pm, posted within 30 minutes, by 11pm or 1am")
    late, within, by, other = facts[0], facts[1], facts[2], facts[3]
    assert timed(by, [late], [within]) and not timed(other, [late], [within])
    assert not timed(within, [late], [within])  # a stretch is no time of day


_DOGS = "Dogs are welcome at £12 per dog per night."
_CHILDREN = "Children stay at £8 extra per child per night."


@pytest.mark.parametrize(
    ("sentence", "claim", "worked_out"),
    [
        # the rate is charged per dog, and the claim counts the dogs
        (_DOGS, "Your two dogs will be £24 a night.", True),
        (_DOGS, "Your two dogs will be £30 a night.", False),
        # a count of another noun, or one thing, makes no total of the rate
        (_DOGS, "Your two cats will be £24 a night.", False),
        (_DOGS, "Your dog will be £24 a night.", False),
        # the counted noun read as its singular ("children" of "per child"), with a word of the
        # rate's between the amount and "per"
        (_CHILDREN, "Your three children will be £24 a night.", True),
        (_CHILDREN, "Your three children will be £32 a night.", False),
    ],
)
def test_a_rate_times_the_claims_count_of_what_it_is_charged_per(sentence, claim, worked_out):
    from truthguard.refchecker._analysis import analyse
    from truthguard.refchecker.derived import per_count

    c, e = analyse(claim), analyse(sentence)
    (amount,) = [f for f in c.facts if f.unit == "£"]
    assert per_count(amount, claim, c.facts, [(claim, c.facts), (sentence, e.facts)]) is worked_out


@pytest.mark.parametrize(
    ("claim", "said", "worked_out"),
    [
        # a rate counted over another period: twelve months to a year, 52 weeks, 7 days
        ("That comes to £360 a year.", "Membership is £30 a month.", True),
        ("That comes to £300 a year.", "Membership is £30 a month.", False),
        ("That comes to £520 over a year.", "Parking is £10 per week.", True),
        ("That's £56 a week.", "Parking is £8 daily.", True),
        # the other way: a yearly charge spread over the months
        ("That's £25 a month.", "The licence is £300 annually.", True),
        # the same period, no period, or periods no whole number of one makes of the other
        ("That comes to £60 a month.", "Membership is £30 a month.", False),
        ("That comes to £360.", "Membership is £30 a month.", False),
        ("That's £210 a month.", "Parking is £7 a day.", False),
    ],
)
def test_an_amount_for_a_period_is_a_rate_for_another_counted_over_it(claim, said, worked_out):
    from truthguard.refchecker._analysis import analyse
    from truthguard.refchecker.derived import per_period

    c, e = analyse(claim), analyse(said)
    (amount,) = [f for f in c.facts if f.unit == "£"]
    assert per_period(amount, claim, [(claim, c.facts), (said, e.facts)]) is worked_out


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("That comes to £360 a year.", "year"),
        ("That comes to £520 over a year.", "year"),
        ("That's £56 per week.", "week"),
        ("The licence is £300 annually.", "annually"),
        ("That comes to £360 in total.", None),
    ],
)
def test_the_word_naming_an_amounts_period_is_found_after_it(text, word):
    from truthguard.refchecker._analysis import analyse
    from truthguard.refchecker.derived import period_span

    (amount,) = [f for f in analyse(text).facts if f.unit == "£"]
    at = period_span(text, amount.end)
    assert (text[at[0] : at[1]] if at else None) == word


@pytest.mark.parametrize(
    ("text", "word", "worked_out"),
    [
        # the claim states every number it works from: no word need say it works it out
        ("Six tickets at £40, with 25% off, cost £180.", "180", True),
        ("Tea at £3 a day and cake at £4 a day cost £35 over five days.", "35", True),
        ("Six tickets at £40, with 25% off, cost £200.", "200", False),
        # amounts alone are a list, not working
        ("Rooms are £80, £120 or £200.", "200", False),
    ],
)
def test_an_amount_worked_out_from_the_claims_own_numbers(text, word, worked_out):
    assert _derived(text, word) is worked_out


def test_a_working_word_counts_anywhere_in_the_values_clause():
    claim = "so the whole family of four people staying that week would pay £160 between them"
    assert _derived(claim, "160", "Entry is £40 per person.")
    assert not _derived(
        "the family of four people staying that week would pay £160",
        "160",
        "Entry is £40 per person.",
    )


def _from_case(question: str, claim: str, word: str, evidence: str = "") -> bool:
    facts = extract_facts(claim)
    fact = next(f for f in facts if f.text == word)
    return from_case(fact, extract_facts(question), facts, [extract_facts(evidence)])


_SALARY = "I earn £48,000 a year and have worked here for 4 years."
_RATE = "Staff contribute 5% of salary; the employer adds 8%."


@pytest.mark.parametrize(
    ("claim", "word"),
    [
        # the asker's figure converted: a year's amount a month, weeks in days
        ("That's £4,000 a month.", "4,000"),
        # a share of it the sources give, and then a sum of the claim's own results
        ("On £4,000 a month your 5% is £200.", "200"),
        ("On £4,000 a month you pay £200 and the employer £320, so £520 goes in.", "520"),
        # a step from a result the claim has worked out before (£4,000), no word of working
        ("On £4,000 a month the employer's 8% is £320.", "320"),
    ],
)
def test_a_number_worked_out_from_the_askers_own_figures_is_the_answers(claim, word):
    question = _SALARY if "£" in claim else "I'm away for five weeks."
    assert _from_case(question, claim, word, _RATE)


@pytest.mark.parametrize(
    ("claim", "word", "theirs"),
    [
        # the asker's stretch of time in another unit is theirs, whatever the unit
        ("That puts you 270 seconds out.", "270", True),
        ("That is 0.075 hours.", "0.075", True),
        ("That puts you 300 seconds out.", "300", False),
    ],
)
def test_the_askers_stretch_of_time_in_another_unit_is_theirs(claim, word, theirs):
    assert _from_case("Our clock is 4.5 minutes behind.", claim, word) == theirs


def test_one_stretch_of_time_in_two_units_restates_it():
    six, secs, wrong, mins = extract_facts(
        "6 minutes is 360 seconds, not 300 seconds or 6 minutes again"
    )[:4]
    assert restates(six, secs) and restates(secs, six)
    assert not restates(six, wrong)
    assert not restates(six, mins)  # the same unit restates nothing: it is the same value
    pay, pence = extract_facts("£6 is 600p")[:2]
    assert not restates(pay, pence)  # money is no stretch of time


_LEASE = "My lease is 3 years at 8,000 miles a year and I'll return the car with 26,000 miles."
_EXCESS = "Each mile over the allowance for the whole term costs 12p."


@pytest.mark.parametrize(
    ("claim", "word", "worked"),
    [
        # miles times years, miles less miles, and a price per mile times miles
        ("Your allowance is 24,000 miles.", "24,000", True),
        ("Your allowance is 24,000 miles, so you're 2,000 miles over.", "2,000", True),
        ("That's 2,000 miles over your 24,000-mile allowance, so £240.", "240", True),
        # a total before the values it adds up
        ("You'd pay £240: 2,000 miles over your 24,000-mile allowance at 12p each.", "240", True),
        ("That's 2,000 miles over your 24,000-mile allowance, so £250.", "250", False),
    ],
)
def test_a_number_of_any_unit_is_worked_out_from_the_askers_figures(claim, word, worked):
    assert _from_case(_LEASE, claim, word, _EXCESS) == worked


def test_two_values_no_source_states_do_not_vouch_for_each_other():
    question = extract_facts("I pay £200 a month.")
    claim = "It comes to £2,550: £2,400 for the year plus £150 in fees."
    facts = extract_facts(claim)
    total, fees = (next(f for f in facts if f.text == t) for t in ("2,550", "150"))
    # £2,400 is 12 times £200, and £2,550 less it is £150: each holds only by the other
    assert from_case(fees, question, facts, [[], []])
    unstated = {(total.start, total.end), (fees.start, fees.end)}
    assert not from_case(fees, question, facts, [[], []], unstated)
    assert not from_case(total, question, facts, [[], []], unstated)


def test_a_whole_count_an_amount_buys_and_a_result_of_another_claim_are_worked_out():
    question = extract_facts("I save £150 a month for 2 years and the option price is £2.40.")
    # £3,700 buys 1,541 whole shares at £2.40 (1,541.67), not 1,550 nor 1,600
    for count, worked in (("1,541", True), ("1,550", False), ("1,600", False)):
        facts = extract_facts(f"£3,700 buys {count} shares.")
        fact = next(f for f in facts if f.text == count)
        assert from_case(fact, question, facts, [[], []]) == worked
    # a result another claim of the answer worked out starts a step (£3,600 = 24 x £150)
    earlier = extract_facts("Twenty-four payments of £150 make £3,600")
    claim = "which buys 1,500 shares."
    facts = extract_facts(claim)
    fact = next(f for f in facts if f.text == "1,500")
    price = extract_facts("The option price is £2.40 a share.")
    assert from_case(fact, question, facts, [price, earlier])
    assert not from_case(fact, question, facts, [price, []])


@pytest.mark.parametrize(
    ("question", "claim", "word"),
    [
        ("I'm going away for five weeks.", "Five weeks is 35 days.", "35"),
        ("I'm going away for five weeks.", "That's 25 working days.", "25"),
    ],
)
def test_a_stretch_of_the_askers_converted_is_the_answers(question, claim, word):
    assert _from_case(question, claim, word)


@pytest.mark.parametrize(
    ("question", "claim", "word"),
    [
        # a wrong result, and a result of measures that make no such value: four years and
        # the 5% are no amount, the day of a date no figure to work from
        (_SALARY, "On £4,000 a month your 5% is £250.", "250"),
        # two steps where the claim states no first result
        (_SALARY, "Your 5% is £200 a month.", "200"),
        (_SALARY, "You can pause payments for 3 months.", "3"),
        ("I start on 12 May and earn £2,000 a month.", "You'd pay £10 each month.", "10"),
        # a percentage is the sources' to state, never worked out
        (_SALARY, "The employer adds 12%.", "12"),
        # no figure of the asker's to start from
        ("How much do staff pay in?", "They pay £200 a month.", "200"),
    ],
)
def test_a_number_not_worked_from_the_askers_figures_is_not(question, claim, word):
    assert not _from_case(question, claim, word, _RATE)


_PARTY = "We're booking lunch for 6 adults and 4 children, and I'm a member."
_MENU = (
    "The set menu is £48 a head and children eat at half price. Members get 20% off drinks, "
    "and a 10% service charge is added to every bill."
)


@pytest.mark.parametrize(
    ("claim", "word", "worked"),
    [
        # the asker's count times the sources' price, then taken at a share the sources give
        ("The children's meals come to £96.", "96", True),
        # the same result with the sources' percentage added on top
        ("The adults' meals are £316.80 with service.", "316.80", True),
        # a result no share of any one-step value makes
        ("The children's meals come to £86.", "86", False),
        ("The adults' meals are £326.80 with service.", "326.80", False),
    ],
)
def test_a_step_from_the_askers_figures_may_be_taken_at_a_share(claim, word, worked):
    assert _from_case(_PARTY, claim, word, _MENU) == worked


def _shown(known: str, claim: str, words: list[str]) -> set[str]:
    """The ``words`` of ``claim`` worked out from the values ``known`` states and the claim's
    values not among ``words``."""
    given = [f for f in extract_facts(known) if workable(f, extract_facts(known), known)]
    facts = extract_facts(claim)
    rates = {id(f) for f in given if per_period_value(f, known)}
    rates |= {id(f) for f in facts if per_period_value(f, claim)}
    targets = [f for f in facts if f.text in words]
    shown = [f for f in facts if f.text not in words]
    done = shown_working(targets, [*given, *shown], rates)
    return {f.text for f in targets if id(f) in done}


@pytest.mark.parametrize(
    ("claim", "word", "worked"),
    [
        # 300GB is three times 100GB, a count, and three times 4 minutes is 12
        ("Your 300GB will take 12 minutes.", "12", True),
        ("Your 300GB will take 15 minutes.", "15", False),
    ],
)
def test_two_amounts_of_one_unit_make_a_count(claim, word, worked):
    known = "A full backup copies 100GB in 4 minutes."
    assert _shown(known, claim, [word]) == ({word} if worked else set())


@pytest.mark.parametrize(
    ("known", "claim", "words", "worked"),
    [
        # two shares of two marks added: three steps, the two shares never stated
        (
            "My year 2 average was 58 and my year 3 average was 68.",
            "Your final mark is 65.5: a quarter of 58 plus three quarters of 68.",
            ["65.5"],
            {"65.5"},
        ),
        (
            "My year 2 average was 58 and my year 3 average was 68.",
            "Your final mark is 66.5: a quarter of 58 plus three quarters of 68.",
            ["66.5"],
            set(),
        ),
        # one result built on another: each part, then their total
        (
            "I keep £4,000 in the account.",
            "3.5% on the first £2,500 is £87.50 and 1.5% on the other £1,500 is £22.50, £110 "
            "in all.",
            ["87.50", "22.50", "110"],
            {"87.50", "22.50", "110"},
        ),
        # a rate over a period times the stretch makes an amount; an amount less a rate is no
        # amount, so the excess over a year's allowance is not worked out from the term's miles
        (
            "My lease is for 3 years at 10,000 miles a year; I'll return it with 34,500 miles.",
            "That's 4,500 miles over your 30,000 total, so at 9p a mile £405.",
            ["4,500", "30,000", "405"],
            {"4,500", "30,000", "405"},
        ),
        (
            "My lease is for 3 years at 10,000 miles a year; I'll return it with 34,500 miles.",
            "At 9p for each of your 24,500 miles over the allowance you'd pay £2,205.",
            ["24,500", "2,205"],
            set(),
        ),
    ],
)
def test_a_number_the_answer_works_out_from_the_values_it_shows(known, claim, words, worked):
    assert _shown(known, claim, words) == worked


def test_values_no_source_states_do_not_vouch_for_each_other_in_the_answer():
    # £710.50 and £186.15 would add up to £896.65, but neither is worked out from a known value
    claim = "Roughly £896.65: £710.50 for the units and £186.15 in standing charges."
    assert _shown("We used 2,900 kWh last year.", claim, ["896.65", "710.50", "186.15"]) == set()


@pytest.mark.parametrize(
    ("text", "word", "rate"),
    [
        ("3 years at 10,000 miles a year", "10,000", True),
        ("over your 10,000-mile annual allowance", "10,000", True),
        ("above the £2,200 monthly threshold", "2,200", True),
        ("£290 per month for 36 months", "290", True),
        ("£75 for each fuel", "75", False),
        ("£1 a minute after that", "1", False),
    ],
)
def test_a_value_given_for_a_period_is_a_rate(text, word, rate):
    fact = next(f for f in extract_facts(text) if f.text == word)
    assert per_period_value(fact, text) is rate


@pytest.mark.parametrize(
    ("text", "word", "ok"),
    [
        ("My year 2 average was 58.", "2", False),
        ("Tier 1 systems are restored first.", "1", False),
        ("The engineer missed the visit on day 4.", "4", False),
        ("My year 2 average was 58.", "58", True),
        ("It took 2 years.", "2", True),
        ("We met in 2019.", "2019", False),
    ],
)
def test_a_number_naming_one_of_a_series_is_not_worked_with(text, word, ok):
    fact, facts = _fact_in(text, word)
    assert workable(fact, facts, text) is ok


@pytest.mark.parametrize(
    ("text", "word", "per"),
    [
        ("Standard members earn 4 points per £1 spent.", "4", [({"£"}, 1.0, False)]),
        (
            "Insurance is £0.90 a week for each £500 of cover.",
            "0.90",
            [({"week"}, 1.0, False), ({"£"}, 500.0, False)],
        ),
        (
            "Visitors pay £2.50 per foot per night.",
            "2.50",
            [({"foot"}, 1.0, False), ({"night"}, 1.0, False)],
        ),
        ("Late returns cost £8 per extra day.", "8", [({"day"}, 1.0, True)]),
        ("We charge 12p for each kilometre over.", "12p", [({"kilometr"}, 1.0, True)]),
        ("Lessons cost £30 an hour.", "30", [({"hour"}, 1.0, False)]),
        ("The fee is £40 in total.", "40", []),
        ("Plus goes from €3.99 to €4.49 a month.", "3.99", [({"month"}, 1.0, False)]),
        ("Shares were sold at £9.95-£10.25 per share.", "9.95", [({"shar"}, 1.0, False)]),
        ("Prices rose 5% a year.", "5", []),
    ],
)
def test_what_a_value_is_given_per(text, word, per):
    fact = next(f for f in extract_facts(text) if f.text == word)
    assert [(set(w), d, x) for w, d, x in per_what(fact, text)] == per


@pytest.mark.parametrize(
    ("text", "word", "counted"),
    [
        ("You hired it for 4 extra days.", "4", {"extra", "day"}),
        ("That covers 30 pages.", "30", {"page"}),
        ("Six tickets were sold.", "Six", {"ticket"}),
        ("It cost £250.", "250", {"£"}),
    ],
)
def test_what_a_number_counts(text, word, counted):
    fact = next(f for f in extract_facts(text) if f.text == word)
    assert counts_of(fact, text) == counted


def _shown_per(sources: str, known: str, claim: str, words: list[str]) -> set[str]:
    """:func:`_shown` with the rates ``sources`` give per something."""
    given = [f for f in extract_facts(known) if workable(f, extract_facts(known), known)]
    facts = extract_facts(claim)
    per = [
        (float(f.value), measure_of(f), keys)
        for f in extract_facts(sources)
        if f.kind == "number" and (keys := per_what(f, sources))
    ]
    counted = {id(f): (counts_of(f, known), False) for f in given}
    counted |= {id(f): (counts_of(f, claim), True) for f in facts}
    targets = [f for f in facts if f.text in words]
    shown = [f for f in facts if f.text not in words]
    done = shown_working(targets, [*given, *shown], (), per, counted)
    return {f.text for f in targets if id(f) in done}


_HIRE = (
    "Bikes cost £14 for the first day and £8 per extra day. Helmets are £2 per helmet per day. "
    "Members earn 3 points per £1."
)


@pytest.mark.parametrize(
    ("known", "claim", "words", "worked"),
    [
        # a rate the answer leaves out, times its count of what the rate is given per
        (
            "I want a bike for 5 days.",
            "£46: £14 and then 4 extra days at £32.",
            ["46", "32"],
            {"46", "32"},
        ),
        (
            "I want a bike for 5 days.",
            "£50: £14 and then 4 extra days at £36.",
            ["50", "36"],
            set(),
        ),
        # a rate given per two things: per helmet first, then per day
        (
            "Two of us want helmets for 3 days.",
            "The 2 helmets come to £12 over the 3 days.",
            ["12"],
            {"12"},
        ),
        # a rate per pound times an amount of money
        ("I spent £65.", "You'd earn 195 points.", ["195"], {"195"}),
        ("I spent £65.", "You'd earn 260 points.", ["260"], set()),
        # a rate per the wrong noun makes nothing ("4 helmets" is no count of days)
        ("I want a bike.", "4 helmets, £32 of extra days.", ["32"], set()),
        # a rate only beyond an allowance never counts the asker's whole figure
        ("I want a bike for 5 days.", "That's £40.", ["40"], set()),
    ],
)
def test_a_rate_the_sources_give_per_something_times_a_count_of_it(known, claim, words, worked):
    assert _shown_per(_HIRE, known, claim, words) == worked


@pytest.mark.parametrize(
    ("asked", "sentence", "claim", "set_after"),
    [
        # the Nth of the month after a month of the asker's
        (
            "I'm renting my flat out for two weeks in September.",
            "Rent is paid to owners by the 15th of the month after the stay.",
            "Your money arrives by 15 October.",
            True,
        ),
        (
            "I'm renting my flat out for two weeks in September.",
            "Rent is paid to owners by the 15th of the month after the stay.",
            "Your money arrives by 16 October.",
            False,
        ),
        (
            "I'm renting my flat out for two weeks in December.",
            "Rent is paid to owners by the 15th of the month after the stay.",
            "Your money arrives by 15 January 2027.",
            True,
        ),
        # a named month after the asker's, in the next year where it comes round again
        (
            "My contract ends in November 2026.",
            "Refunds are made in the March after the contract ends.",
            "You'll be refunded in March 2027.",
            True,
        ),
        (
            "My contract ends in November 2026.",
            "Refunds are made in the March after the contract ends.",
            "You'll be refunded in March 2026.",
            False,
        ),
        (
            "My contract ends in November 2026.",
            "Refunds are made in the March after the contract ends.",
            "You'll be refunded in April 2027.",
            False,
        ),
        # the claim's own words set nothing: the sources must
        (
            "My contract ends in November 2026.",
            "Refunds are made after the contract ends.",
            "You'll be refunded in March 2027, the March after it ends.",
            False,
        ),
    ],
)
def test_a_month_the_sources_set_after_the_askers(asked, sentence, claim, set_after):
    from truthguard.refchecker._analysis import analyse
    from truthguard.refchecker.derived import month_after

    said = [(t, analyse(t).facts) for t in (asked, claim, sentence)]
    facts = said[1][1]
    (month, *_) = [f for f in facts if f.kind == "month"]
    assert month_after(month.start, claim, facts, said) is set_after


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("Roughly what would a year of gas cost us?", "year"),
        ("How much is it per month?", "month"),
        ("What is our annual bill?", "year"),
        # none, or several: no one period the amounts are for
        ("What will the repair cost?", None),
        ("What is the monthly fee and the annual total?", None),
    ],
)
def test_the_period_a_question_asks_an_amount_for(question, period):
    from truthguard.refchecker.derived import asked_period

    assert asked_period(question) == period


def test_an_amount_with_no_period_is_for_the_one_the_question_asks_about():
    from truthguard.refchecker._analysis import analyse
    from truthguard.refchecker.derived import per_period, spans_period

    claim, said = "The standing charge adds £109.50 over 365 days.", "It is 30p a day."
    c, e = analyse(claim), analyse(said)
    (amount,) = [f for f in c.facts if f.unit == "£"]
    (days,) = [f for f in c.facts if f.unit == "day"]
    rates = [(claim, c.facts), (said, e.facts)]
    assert per_period(amount, claim, rates, "year") and spans_period(days, "year")
    assert not per_period(amount, claim, rates) and not spans_period(days, None)
    assert not per_period(amount, claim, rates, "month") and not spans_period(days, "month")


_DEPOSIT = (
    "Our holiday costs £600. What do we lose if we cancel 10 weeks before we go?",
    "A non-refundable deposit of 15% of the total price is due on booking. Cancellations more "
    "than 8 weeks before departure lose only the deposit.",
)
_EMPTY_HOME = (
    "We're going travelling for ten weeks. Are we still covered if the house is empty?",
    "Theft or damage is not covered once the home has been unoccupied for more than 60 "
    "consecutive days.",
)


@pytest.mark.parametrize(
    ("case", "answer", "passes"),
    [
        # the sources give the deposit as a percentage of the price the user states: the
        # deposit's amount is worked out from the asker's figure; an amount named otherwise
        # is no share the sources give
        (_DEPOSIT, "You'd lose the £90 deposit you paid.", True),
        (_DEPOSIT, "You'd lose the £120 deposit you paid.", False),
        (_DEPOSIT, "You'd lose the £90 cleaning charge.", False),
        # the asker's count at the sources' price, taken at the sources' share
        ((_PARTY, _MENU), "The four children's meals come to £96.", True),
        ((_PARTY, _MENU), "The four children's meals come to £86.", False),
        # the asker's stretch in another unit
        (_EMPTY_HOME, "No: ten weeks is 70 days, over the 60-day limit.", True),
        (_EMPTY_HOME, "No: ten weeks is 84 days, over the 60-day limit.", False),
    ],
)
def test_a_value_worked_from_the_askers_figures_holds_in_a_full_check(case, answer, passes):
    from truthguard.refchecker import RefChecker

    asked, said = case
    result = RefChecker().invoke({"question": asked, "answer": answer, "contexts": [said]})
    assert result.passing is passes, result.explanation


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("Open on Saturdays only.", {5}),
        ("Courts cost £12 an hour from Monday to Thursday.", {0, 1, 2, 3}),
        ("Deliveries run Friday to Monday.", {4, 5, 6, 0}),  # a run across the weekend
        ("Classes are held on Mondays and Wednesdays.", {0, 2}),
        ("Staffed on weekdays; unstaffed at weekends.", {0, 1, 2, 3, 4, 5, 6}),
        ("The rate is higher at weekends.", {5, 6}),
        ("A week of days out costs £90.", set()),  # "a week" names no day
        ("The desk is open Mon-Fri, 9am to 5pm.", {0, 1, 2, 3, 4}),  # short forms in a run
        ("We sat down on the sun deck.", set()),  # alone, a short form is a word
    ],
)
def test_named_days_reads_days_runs_weekdays_and_weekends(text, days):
    assert named_days(text) == days


@pytest.mark.parametrize(
    ("text", "days"),
    [
        # days a statement holds on
        ("Hire costs £4,200 on a Saturday and £3,400 on a Friday or Sunday.", {4, 5, 6}),
        ("The gym is staffed every Monday.", {0}),
        ("At weekends the charge is £2.50 an hour.", {5, 6}),
        ("Courts cost £12 an hour from Monday to Friday.", {0, 1, 2, 3, 4}),
        # a day an event happened on holds nothing
        ("The storm reaches the coast on Sunday.", set()),
        ("The results were announced on Friday and the shares fell on Monday.", set()),
    ],
)
def test_day_condition_reads_days_a_statement_holds_on_not_dates(text, days):
    assert day_condition(text) == days


@pytest.mark.parametrize(
    ("claim", "word", "shown"),
    [
        ("Of £17.6m spent, £14.1m, about 80%, went on programmes.", "80", True),
        ("Of £17.6m spent, £14.1m, about four-fifths, went on programmes.", "four-fifths", True),
        ("Each instalment is $60, a quarter of $240.", "a quarter", True),
        # a share the two values do not make, or one given more exactly than they make it
        ("Of £17.6m spent, £14.1m, about 75%, went on programmes.", "75", False),
        ("Of £17.6m spent, £14.1m, about 80.4%, went on programmes.", "80.4", False),
        # values of two units make no share of each other
        ("Of 17.6 hours, £14.1, about 80%, went on it.", "80", False),
    ],
)
def test_a_share_the_claims_part_and_whole_make_is_shown(claim, word, shown):
    fact, facts = _fact_in(claim, word)
    assert share_shown(fact, facts) == shown
