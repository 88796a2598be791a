"""refchecker.structure: remarks about the sources and what numbers count, read from a parse."""

from __future__ import annotations

import pytest

from doubles import fresh_interpreter
from truthguard.refchecker.structure import (
    counted,
    denies_otherwise,
    doers,
    frames,
    kind_named,
    listed_totals,
    makers,
    moves,
    negated_word,
    off_question,
    only_doers,
    options,
    placed,
    relation_words,
    remark,
    shared_subjects,
    states_plainly,
    subject_name,
    unnamed_answer,
    value_contexts,
    verbless,
)

REMARKS = [
    "The handbook is unclear on whether overtime counts.",
    "The wording doesn't say whether the insurer pays first.",
    "The booklet doesn't say what happens on a takeover.",
    "The documentation doesn't say whether you can change the TTL of every record at once.",
    "There's nothing in the documentation about how many rooms can run at the same time.",
    "The manual doesn't mention other materials such as nylon or polycarbonate.",
    "The SLA doesn't say how that notice is given.",
    "The runbook doesn't say how to reach the DPO outside office hours.",
    "The price list doesn't say whether the out-of-hours service is at the practice.",
    "so I can't say whether the M2 supports them.",
    "The policy doesn't explain how an extension should be requested.",
    "The rules don't say whether you have to remain a full-time student.",
    "It isn't stated whether the fee is refundable.",
    "The excerpt doesn't give a figure for Asia.",
    "The release doesn't break out regional sales.",
    "No figure is given for the dividend.",
    "The transcript gives no guidance for next year.",
    "The manual only gives times for these two batteries.",
    "The call did not cover the outlook.",
    "The filing is silent on the dividend.",
    "Nothing is said about refunds.",
    "The excerpt makes no mention of electric trucks.",
    "The document has no details on the rail contracts.",
    "The table shows no figure for 2023.",
    # a binding text silent on a question, or leaving a measure unset
    "The rules don't cover whether you still pay the match fee for a forfeited game.",
    "The rulebook doesn't give a deadline for paying fines.",
    "The agreement doesn't give the size of the parking space.",
    "The terms do not give the length of the notice period.",
    # a text by a name it has in some uses only, with a verb of saying
    "The biography doesn't say what the prize was worth or who awards it.",
    "The review doesn't say how many of Price's goals were penalties.",
    # a question left open as the subject, and nothing in a text saying
    "Whether that includes public holidays isn't stated.",
    "How the fee is worked out is not explained.",
    "Nothing in the handbook says whether leave can be split.",
    "Nothing in the report covers the dividend.",
]

FACTS = [
    "Requests that are rejected with a 429 do not count against your limit.",
    "The policy doesn't cover flood damage.",
    "No refund is given for cancellations made after 24 hours.",
    "The warranty does not include batteries.",
    "It does not include VAT.",
    "They did not tell the board.",
    "The CEO did not mention a dividend.",
    "The company gives no guidance for 2025.",
    "The plan only includes 10 seats.",
    "There is no fee for the first two bags.",
    "The price doesn't include delivery.",
    "Nothing is charged for returns.",
    "The app doesn't list hidden files.",
    "The report was published in 2021.",
    "The policy doesn't give you a longer grace period.",
    "The Basic plan doesn't give extra storage capacity.",
    "The licence doesn't give the speed the Pro tier has.",
    "There is no deadline for appeals.",
    "The landlord doesn't pay for repairs.",
    "Price does not say how he scored.",
    "The club's history doesn't include a league title.",
    "The policy makes no exception for late arrivals.",
    "The contract has no termination clause.",
    "The company made no profit in 2023.",
    "Nothing in the policy covers flood damage.",
    "Whether staff are paid is decided by the board.",
    "Nothing in the box was damaged.",
    "The clause doesn't cover subcontractors.",
]


@pytest.mark.parametrize("text", REMARKS)
def test_a_text_or_speaker_that_does_not_say_makes_a_remark(text):
    assert remark(text)


@pytest.mark.parametrize("text", FACTS)
def test_what_a_thing_or_a_binding_text_does_not_do_is_a_fact(text):
    assert not remark(text)


def test_a_number_counts_the_noun_it_modifies_and_belongs_to_its_clause_subject():
    text = "The Free plan receives 2,000 build minutes; the Team plan includes 10,000 minutes."
    found = {text[c.start : c.end]: c for c in counted(text)}
    assert found["2,000"].noun == found["10,000"].noun == "minute"
    assert {"free", "plan"} <= found["2,000"].owners
    assert {"team", "plan"} <= found["10,000"].owners
    # a multiplier counts nothing: "40 times the weekly price" is no count of prices
    text = "An annual season costs 40 times the weekly price and covers 52 weeks."
    assert [text[c.start : c.end] for c in counted(text)] == ["52"]


def test_a_negation_scopes_over_the_verb_it_hangs_from():
    from truthguard.refchecker.structure import negated_verb_at, negated_verbs, negation_at

    def negated_at(text: str, offset: int) -> bool:
        return negation_at(text, offset) is not None

    text = "Do not fold the treadmill within 10 minutes of use."
    assert negation_at(text, text.index("10")) == text.index("not")
    # "no" before the verb's subject or object negates the verb
    text = "No refunds are given after 14 days."
    assert negation_at(text, text.index("14")) == 0
    text = "Refunds are given after 14 days."
    assert not negated_at(text, text.index("14"))
    text = "An SDK that can't reach the server at startup waits up to 5 seconds."
    assert not negated_at(text, text.index("5"))
    # a bound in the verb's subject is a condition of the denial, in its scope
    text = "Bags over 10 kg are not allowed in the cabin."
    assert negation_at(text, text.index("10")) == text.index("not")
    # and so is one in a participle's clause that modifies the subject
    text = "Scheduled maintenance announced at least 5 days in advance is not counted as downtime."
    assert negation_at(text, text.index("5")) == text.index("not")
    assert negated_at("It doesn't stop for up to 4 weeks.", 24)
    text = "You cannot park for more than 2 hours."
    assert negated_at(text, text.index("2"))
    assert negated_verbs(text) == {"park"}
    # "no" or "neither" before the subject or object negates the verb
    assert negated_verbs("No pets are allowed in the rooms.") == {"allow"}
    assert negated_verbs("Neither the Free nor the Basic plan includes it.") == {"include"}
    assert negated_verbs("It has no effect.") == set()
    assert negated_verbs("Do not fold the treadmill; lift the deck.") == {"fold"}
    text = "and don't fold it within 10 minutes"
    assert negated_verb_at(text, text.index("don't"), text.index("don't") + 5) == "fold"
    assert negated_verb_at(text, 0, 3) is None


def test_a_verb_that_denies_in_itself_negates_only_where_asked():
    from truthguard.refchecker.structure import negation_at

    text = "Claims over 90 days old are refused."
    assert negation_at(text, text.index("90")) is None
    assert negation_at(text, text.index("90"), lexical=True) == text.index("refused")
    text = "Scheduled maintenance announced at least 5 days in advance is excluded from uptime."
    assert negation_at(text, text.index("5"), lexical=True) == text.index("excluded")
    text = "Bags over 10 kg are banned from the cabin."
    assert negation_at(text, text.index("10"), lexical=True) == text.index("banned")
    # a fall is no denial, nor is a verb that merely stands beside one
    text = "Sales declined for more than 3 years."
    assert negation_at(text, text.index("3"), lexical=True) is None
    text = "Parcels of up to 15 kg are accepted; heavier ones are refused."
    assert negation_at(text, text.index("15"), lexical=True) is None


def test_a_subject_denying_its_verb_scopes_over_the_verb_s_conditions():
    from truthguard.refchecker.structure import negated_verbs, negation_at

    # "nothing" / "none" as the subject deny the verb
    assert negated_verbs("Nothing is charged for returns.") == {"charge"}
    assert negated_verbs("None of the deposit is refunded.") == {"refund"}
    # a clause that sets a condition of a denied verb is in the denial's scope
    text = "Nothing is deducted in any week in which you earn £120 or less."
    assert negation_at(text, text.index("120")) == 0
    text = "If the parcel weighs under 2 kg, no handling fee is added."
    assert negation_at(text, text.index("2")) == text.index("no")
    # a clause of the verb's subject sets a condition of the denial too; not of a verb
    # nothing denies
    text = "Guests who stay over 3 hours do not need a day pass."
    assert negation_at(text, text.index("3")) == text.index("not")
    text = "Tickets that cannot be used are refunded if the show is cut by 30 minutes."
    assert negation_at(text, text.index("30")) is None


def test_a_negated_by_phrase_denies_the_verb_of_its_party():
    from truthguard.refchecker.structure import denied_agents

    def denied(text: str) -> list[tuple[str, str]]:
        return [(verb, text[who.start : who.end]) for verb, who in denied_agents(text)]

    text = "Additional refunds can be approved by a branch manager but not by call-centre staff."
    assert denied(text) == [("approve", "not by call-centre staff")]
    assert denied_agents("Refunds are approved by managers.") == []
    # the subject of a negation whose predicate is left out
    text = "Managers can approve refunds; call-centre staff cannot."
    assert denied(text) == [("approve", "call-centre staff cannot")]
    assert denied("Admins can invite users, but members cannot.") == [("invite", "members cannot")]
    assert denied_agents("If it is not, we charge a fee.") == []
    # a party excepted from the subject
    text = "All plans except Free include single sign-on."
    assert denied(text) == [("include", "except Free")]
    # a negated verb is the negation's own reading, not a party's
    assert denied_agents("Refunds are not approved by staff.") == []


def test_an_auxiliary_with_its_predicate_left_out_is_elliptic():
    from truthguard.refchecker.structure import ellipses, elliptic

    def at(text: str, word: str) -> str | None:
        i = text.index(word)
        return elliptic(text, i, i + len(word))

    assert at("If it is not, we charge £2.10 per litre.", "not") == "be"
    assert at("If you do, the booking lapses.", "do") == "do"
    assert at("He fears that he never will.", "never") == "will"
    assert at("The missing fuel is charged at £2.10 a litre.", "is") is None
    assert at("The fee is not refundable.", "not") is None
    assert at("It is not in the box.", "not") is None
    assert at("Members who have not paid are suspended.", "not") is None
    # a phrase of exception leaves the predicate out still
    assert at("but seats can't, except by contacting support.", "n't") == "can"
    assert ellipses("He fears that he will.") == {"will"}
    assert ellipses("The missing fuel is charged at £2.10 a litre.") == set()


def test_the_numbers_that_measure_a_denied_verb():
    from truthguard.refchecker.structure import negated_numbers

    text = "Employees may not work more than 48 hours a week."
    i = text.index("not")
    assert [text[a:b] for a, b in negated_numbers(text, i, i + 3)] == ["48"]
    text = "Employees may not work on Sundays; shifts last 8 hours."
    i = text.index("not")
    assert negated_numbers(text, i, i + 3) == []
    # a number of another noun measures that noun
    text = "The fee is not charged for stays under 3 nights."
    i = text.index("not")
    assert negated_numbers(text, i, i + 3) == []


def test_a_comparison_reads_its_two_sides_and_how_they_compare():
    from truthguard.refchecker.structure import comparisons

    (c,) = comparisons("The Pro plan costs more than the Basic plan.")
    assert (c.how, c.first, c.second) == ("cost more", {"pro", "plan"}, {"basic", "plan"})
    (c,) = comparisons("The Basic plan is cheaper than the Pro plan.")
    assert (c.how, c.first, c.second) == ("cheap", {"basic", "plan"}, {"pro", "plan"})
    (c,) = comparisons("The Pro plan is more expensive than the Basic plan.")
    assert c.how == "more expensive"
    # a bound is no comparison of two things
    assert comparisons("Refunds take more than 3 days.") == []


def test_a_comparison_reads_a_side_named_by_its_owner_or_alone():
    from truthguard.refchecker.structure import comparisons

    # "that of Y" is Y; "A's margins ... than B's" compares A with B by their margins
    (c,) = comparisons("Its basin is older than that of Tavish.")
    assert (c.how, c.first, c.second) == ("old", {"basin"}, {"tavish"})
    (c,) = comparisons("Corven's margins were higher than Ilmar's.")
    assert (c.first, c.second) == ({"corven"}, {"ilmar"})
    # one side alone, said with "be", is read only when asked for
    assert comparisons("Harlow is the deeper reservoir.") == []
    (c,) = comparisons("Harlow is the deeper reservoir.", alone=True)
    assert (c.how, c.first, c.second) == ("deep", {"harlow"}, set())
    (c,) = comparisons("The Brackley dam is older.", alone=True)
    assert (c.how, c.first) == ("old", {"brackley", "dam"})
    # an attribute of a subject that is not compared with anything is no comparison
    assert comparisons("The older lake flooded in May.", alone=True) == []
    assert comparisons("Refunds take more than 3 days.", alone=True) == []


def test_the_parties_of_an_action_by_their_parts():
    from truthguard.refchecker.structure import roles

    def parts(text: str) -> list[tuple[str, dict[str, set[str]]]]:
        return [(r.verb, {k: set(p.words) for k, p in r.parties.items()}) for r in roles(text)]

    assert parts("The client sends a heartbeat to the server.") == [
        ("send", {"agent": {"client"}, "patient": {"heartbeat"}, "recipient": {"server"}})
    ]
    assert parts("The client sends the server a heartbeat.") == [
        ("send", {"agent": {"client"}, "patient": {"heartbeat"}, "recipient": {"server"}})
    ]
    assert parts("Travel costs are paid by the employer.") == [
        ("pay", {"patient": {"travel", "cost"}, "agent": {"employer"}})
    ]
    # a pronoun names no party
    assert roles("It sends a heartbeat.") == []
    # the subject of "agreed to", "plans to" does what the verb after it says; where the verb
    # above has an object, that object may do it instead, so no one is read as the doer
    assert parts("The city agreed to buy the old depot.") == [
        ("buy", {"agent": {"city"}, "patient": {"old", "depot"}})
    ]
    assert [r.verb for r in roles("The council asked the bank to fund the bridge.")] == ["ask"]
    # a verb joined to another shares its subject: the one done to, where it is passive
    assert parts("The old manager will retire in May and be replaced by the deputy.") == [
        ("replace", {"agent": {"deputy"}, "patient": {"old", "manager"}})
    ]


def test_a_choice_made_instead_of_another():
    from truthguard.refchecker.structure import instead

    (c,) = instead("Refunds are issued as store credit instead of cash.")
    assert (c.verb, c.chosen, c.passed_over) == ("issue", {"store", "credit"}, {"cash"})
    (c,) = instead("Refunds are issued as store credit rather than cash.")
    assert c.passed_over == {"cash"}
    assert instead("Instead of waiting, call us.") == []


def test_what_lifts_a_negation_and_what_a_verb_is_granted_on():
    from truthguard.refchecker.structure import granted_on, lifted_by

    def lifts(text: str) -> list[set[str]]:
        i = text.index("not")
        found = lifted_by(text, i, i + 3)
        assert all(after for after, _ in found)
        return [keys for _, keys in found]

    assert lifts("Funds cannot be withdrawn until the holding period ends.") == [{"end", "period"}]
    assert lifts("Orders are not shipped before payment clears.") == [{"clear"}]
    assert lifts("Orders cannot be cancelled without a manager's approval.") == [{"approval"}]
    assert lifts("Pets are not allowed unless they are registered.") == [{"register"}]
    assert lifts("She cannot be extradited to face charges until she completes the treatment.") == [
        {"complete", "treatment"}
    ]
    (after,) = lifts("Data is not deleted until 30 days after the account is closed.")
    assert "account" in after
    assert lifts("Funds cannot be withdrawn by phone.") == []
    # a negation that holds from something on: the thing may happen until then
    text = "Invoices cannot be edited after they are sent."
    i = text.index("not")
    assert lifted_by(text, i, i + 3) == [(False, {"send"})]
    (until,) = granted_on("Invoices can be edited until they are sent.", "edit", after=False)
    assert "send" in until
    assert granted_on("Invoices can be edited until they are sent.", "edit") == []
    assert {"period", "end"} <= granted_on(
        "Funds can be withdrawn once the period ends.", "withdraw"
    )[0]
    assert {"good"} <= granted_on("Refunds are issued as soon as the goods are returned.", "issue")[
        0
    ]
    assert {"register"} <= granted_on("Pets are allowed only if they are registered.", "allow")[0]
    assert {"approval"} <= granted_on("Orders can be cancelled with approval.", "cancel")[0]
    # a clause that comes before another waits for it
    (then,) = granted_on("You must pay the deposit before the key is issued.", "issue")
    assert {"deposit", "pay"} <= then
    # an exception names what lifts a negation; "only ... by" the one means a verb is allowed
    assert lifts("Usernames cannot be changed except by contacting support.") == [
        {"contact", "support"}
    ]
    only_by = "Usernames are set at sign-up and can only be changed by contacting support."
    assert {"contact", "support"} <= granted_on(only_by, "change")[0]
    assert granted_on("Usernames are changed by support staff.", "change") == []
    # of the same subject, where the denier names one
    assert granted_on(only_by, "change", subject={"username"})
    assert granted_on(only_by, "change", subject={"display", "name"}) == []
    assert granted_on("The key is issued before the deposit is paid.", "issue") == []
    assert granted_on("Orders can be cancelled without approval.", "cancel") == []


@pytest.mark.parametrize(
    ("text", "value", "way"),
    [
        ("Revenue was NOK 1.2 billion, up 8 percent from a year earlier.", "8", "up"),
        ("Revenue fell 8 percent in the fourth quarter.", "8", "down"),
        ("Sales increased by 8% to 3 million.", "8", "up"),
        ("Costs were cut by 20 percent.", "20", "down"),
        ("an 8% rise in revenue", "8", "up"),
        ("a decline of 8 percent", "8", "down"),
        ("It costs 8 dollars.", "8", None),
        ("Revenue did not fall 8 percent.", "8", None),
    ],
)
def test_the_word_a_value_hangs_from_says_which_way_it_moved(text, value, way):
    from truthguard.refchecker.structure import direction_at

    at = text.index(value)
    found = direction_at(text, at, at + len(value))
    assert (found and found[0]) == way


_ON_CALL = (
    "Time spent on pages is paid at 1.5 times the hourly rate, rounded up to the next 15 "
    "minutes, with a minimum of 30 minutes per page."
)


def _contexts(text: str, *values: str) -> list[frozenset[str]]:
    spans = [(text.index(v), text.index(v) + len(v)) for v in values]
    return value_contexts(text, spans)


def test_the_words_said_of_each_of_several_values_come_from_the_parse():
    fifteen, thirty = _contexts(_ON_CALL, "15 minutes", "30 minutes")
    assert "round" in fifteen and "round" not in thirty
    assert {"minimum", "page"} <= thirty and "minimum" not in fifteen


def test_a_semicolon_ends_what_is_said_of_a_value():
    text = (
        "Server-side SDKs poll for flag changes every 30 seconds by default; the interval can "
        "be lowered to no less than 10 seconds."
    )
    thirty, ten = _contexts(text, "30 seconds", "10 seconds")
    assert {"poll", "default"} <= thirty and not {"poll", "default"} & ten
    assert {"interval", "lower"} <= ten and not {"interval", "lower"} & thirty


def test_a_subject_is_said_of_the_values_of_its_own_clause():
    text = "Members pay 4% of their salary and the employer pays 8%."
    four, eight = _contexts(text, "4%", "8%")
    assert "member" in four and "member" not in eight
    assert "employer" in eight and "employer" not in four
    # a clause with no verb of its own shares the subject before it
    text = "Hot-tier restores start within 5 minutes, and warm-tier ones within 1 hour."
    five, one = _contexts(text, "5 minutes", "1 hour")
    assert "start" in five and "start" in one
    # a clause that leaves its verb out has a subject of its own: the noun the parse joins to
    # the verb
    text = "Exports made up 38% of revenue last year, and services 12%."
    both, other = _contexts(text, "38%", "12%")
    assert "export" in both and "export" not in other and "service" in other


def test_a_verb_phrase_joined_to_a_value_s_own_says_nothing_of_it():
    text = "The library opened in 1902 with a gift from a mill owner and is now managed by a trust."
    (year,) = _contexts(text, "1902")
    assert {"open", "gift", "library"} <= year and not {"manage", "trust"} & year
    # the joined act's own value takes its words
    text = "The library opened in 1902 and was rebuilt in 1961 after a fire."
    first, second = _contexts(text, "1902", "1961")
    assert "open" in first and not {"rebuild", "fire"} & first
    assert {"rebuild", "fire"} <= second


def test_two_values_joined_as_a_range_share_their_words():
    text = "On the Intensive Care Unit, visiting is from 14:00 to 19:00 every day."
    start, end = _contexts(text, "14:00", "19:00")
    assert start == end and {"visit", "unit"} <= start


def test_a_verb_of_moving_says_which_way_it_moves_its_object_or_subject():
    read = [
        (m.side, sorted(m.what))
        for m in moves("Eco mode lowers the heating set point and raises the cooling set point.")
    ]
    assert ("up", ["cool", "point", "set"]) in read and read[0][0] == "down"
    assert [(m.side, sorted(m.what)) for m in moves("Revenue fell sharply.")] == [
        ("down", ["revenue"])
    ]
    assert [(m.side, sorted(m.what)) for m in moves("The set point is raised.")] == [
        ("up", ["point", "set"])
    ]
    assert moves("The fee does not rise.") == []
    assert moves("The fee is paid monthly.") == []


def test_an_action_is_read_with_who_does_it_and_what_it_is_done_to():
    (design,) = frames("The locks were designed by John Wallace.")
    assert design.verb == "design" and design.agent.words == {"john", "wallace"}
    assert design.patient.words == {"locks"} and not design.patient.name
    (induct,) = frames("In 2007, he was inducted into the Rock and Roll Hall of Fame.")
    assert induct.agent is None and induct.patient.pronoun and "hall" in induct.rest
    # a participle that modifies a noun has no subject of its own
    assert [f.verb for f in frames("The track featuring Bruno Mars was released in 2011.")] == [
        "release"
    ]
    # a passive one with a "by" phrase is done by it to that noun
    (write,) = frames('"Louie Louie" is a blues song written by Richard Berry in 1955.')
    assert write.verb == "write" and write.agent.words == {"richard", "berry"}
    assert write.patient.words == {"song"}
    # a noun's maker in a "by" phrase, a name only
    (score,) = makers("It is a 2004 film with a score by Tom Reyes.")
    assert (score.verb, score.agent.words, score.patient.words) == ("", {"tom", "reyes"}, {"score"})
    assert makers("The journey takes two hours by train.") == []
    assert subject_name("David Lee Roth (born 1954) is an American singer.").words == {
        "david",
        "lee",
        "roth",
    }


def test_a_verb_joined_to_another_shares_its_subject():
    # passive: the shared subject is what the action is done to
    _, narrate = frames("The first season drew more viewers and was narrated by Nadia Brook.")
    assert narrate.verb == "narrate" and narrate.patient.words == {"season"}
    assert narrate.agent.words == {"nadia", "brook"}
    # a pronoun subject of the joined clause stands for the first clause's subject
    _, narrate = frames("The first season drew more viewers, and it was narrated by Nadia Brook.")
    assert narrate.patient.words == {"season"} and not narrate.patient.pronoun
    # active: the shared subject does the action
    _, run = frames("Ada Price founded the studio in 1998 and ran it until 2010.")
    assert run.verb == "run" and run.agent.words == {"ada", "price"}
    # a subject of its own stays its own, and a pronoun with nothing named before stays one
    _, run = frames("Ada Price founded the studio and Tom Hale ran it.")
    assert run.agent.words == {"tom", "hale"}
    _, run = frames("She founded the studio and he ran it.")
    assert run.agent.pronoun


@pytest.mark.parametrize(
    ("text", "cue", "denied"),
    [
        ("A batch that isn't full is flushed.", "n't", "full"),
        ("The agent applies no new limits.", "no", "limit"),
        ("Client SDKs poll without streaming support.", "without", "support"),
        ("The prompt never appears at launch.", "never", "appear"),
    ],
)
def test_a_negation_denies_the_word_the_parse_ties_it_to(text, cue, denied):
    assert negated_word(text, text.index(cue)) == denied


def test_a_word_is_stated_plainly_only_where_nothing_denies_or_restricts_it():
    assert states_plainly("The batch is full.", "full")
    assert states_plainly("A partially filled batch is flushed.", "full") is None  # not there
    assert states_plainly("It does not use power and is included here.", "include")
    assert denies_otherwise("A partially filled batch is flushed.")
    assert not denies_otherwise("The batch is flushed after 5 seconds.")
    assert not states_plainly("It stops reading new lines from files.", "read")
    # a verb of stopping denies what it governs, not itself
    assert states_plainly("The pump stops running when the tank is empty.", "stop")
    assert not states_plainly("The pump fails to stop when the tank is empty.", "stop")
    assert not states_plainly("The count can only be changed by reindexing.", "change")
    assert not states_plainly("The count is not changed.", "change")
    # a noun that says the thing is missing denies it ("loss of heating": no heating)
    assert not states_plainly("Repairs (loss of heating or hot water) come first.", "heating")
    assert not states_plainly("A lack of sleep slows reactions.", "sleep")
    assert states_plainly("The heating is repaired first.", "heating")
    # a word describing a noun under "no" is denied with it
    assert not states_plainly("The coating had no measurable effect on wear.", "measurable")
    assert states_plainly("The coating had a measurable effect on wear.", "measurable")
    assert denies_otherwise("Urgent repairs include the loss of hot water.")
    # a verb said only on a condition is no plain statement of it
    assert not states_plainly("An illness is covered only if it starts after 14 days.", "cover")
    assert not states_plainly("Refunds are given only when the item is unused.", "give")
    assert states_plainly("Refunds are given when the item is unused.", "give")
    # of a subject, the statements of that subject count where there are any
    text = "An illness is covered only if it starts after 14 days; accidents are covered."
    assert not states_plainly(text, "cover", {"illness"})
    assert states_plainly(text, "cover", {"accident"})
    assert states_plainly(text, "cover", {"dog"})  # said of no other: any statement counts


def test_where_a_verb_is_said_plainly_of_a_subject():
    from truthguard.refchecker.structure import said_plainly_of

    text = "The number of seats can be raised from the admin page."
    at = said_plainly_of(text, "raise", {"seat"})
    assert at is not None and text[at[0] : at[1]] == "raised"
    assert said_plainly_of(text, "raise", {"storage", "limit"}) is None
    assert said_plainly_of("Seats can only be raised by support.", "raise", {"seat"}) is None
    assert said_plainly_of("Seats cannot be raised.", "raise", {"seat"}) is None


def test_the_doers_of_a_verb_and_doers_given_it_alone():
    assert doers("Visitors cannot park in the east lot.", "park") == [frozenset({"visitor"})]
    # a verb joined by "and" shares the subject of the one it is joined to
    assert doers("Free users can join a budget and create a list.", "create") == [
        frozenset({"free", "user"})
    ]
    assert doers("It rained.", "park") == []
    assert only_doers("Only staff can park in the east lot.", "park")
    assert only_doers("but only Plus subscribers can create one.", "create")
    assert not only_doers("Staff can park only in the east lot.", "park")
    assert not only_doers("Only on Sundays, and staff can park there.", "park")


def test_the_first_parses_of_concurrent_checks_make_one_parser_and_read_their_words():
    # A batch's checks start together, so their first parses race to make the parser: two
    # parsers would open two memory zones on one pipeline, and a Doc of one would lose its words
    # ("Can't retrieve string for hash") while the other is open. The parser is made slowly
    # here so that both threads reach it before either has made it.
    code = (
        "import json, threading, time\n"
        "from truthguard.refchecker import _spacy, structure\n"
        "made = []\n"
        "init = _spacy.ZonedParser.__init__\n"
        "def slow(self, *a, **k):\n"
        "    made.append(1)\n"
        "    time.sleep(0.3)\n"
        "    init(self, *a, **k)\n"
        "_spacy.ZonedParser.__init__ = slow\n"
        "texts = ['A ride may last at most 24 hours at Loopa.',"
        " 'Bikes go back to a Quillmark station by midnight.']\n"
        "words = {}\n"
        "def go(t):\n"
        "    doc = structure.parse(t)\n"
        "    time.sleep(0.3)\n"
        "    words[t] = [tok.text for tok in doc]\n"
        "threads = [threading.Thread(target=go, args=(t,)) for t in texts]\n"
        "for t in threads: t.start()\n"
        "for t in threads: t.join()\n"
        "print(json.dumps([len(made), [words.get(t) for t in texts]]))\n"
    )
    made, words = fresh_interpreter(code)
    assert made == 1
    assert words[0][:3] == ["A", "ride", "may"] and words[1][-2:] == ["midnight", "."]


def _shared(text: str) -> list[tuple[list[str], list[str]]]:
    return [
        ([text[n.start : n.end] for n in s.names], [text[a:b] for a, b in s.said])
        for s in shared_subjects(text)
    ]


def test_names_joined_as_one_subject_share_the_names_adjectives_and_numbers_said_of_them():
    assert _shared("Both The New Pornographers and Kings of Leon are American rock bands.") == [
        (["New Pornographers", "Kings"], ["American"])
    ]
    assert _shared("Eatza Pizza and Your Pie were both founded in Arizona in 1997.") == [
        (["Eatza Pizza", "Pie"], ["Arizona", "1997"])
    ]
    # a clause with a subject of its own says nothing of the joined names
    assert _shared("Ray and Kazan were American, but Kazan was born in Istanbul.") == [
        (["Ray", "Kazan"], ["American"])
    ]


def test_a_negated_clause_or_one_name_says_nothing_of_each_joined_name():
    assert _shared("Neither Kniphofia nor Baptisia is a Canadian plant.") == []
    assert _shared("Kniphofia and Baptisia are not Canadian plants.") == []
    assert _shared("Kniphofia is a Canadian plant.") == []
    assert _shared("Kniphofia and Baptisia are in the same family.") == []


def test_a_name_an_action_is_placed_at_is_read_with_its_verb_and_preposition():
    text = "Set in Chicago, the series is filmed in Los Angeles by Showtime."
    assert [(p.verb, p.prep, sorted(p.name.words)) for p in placed(text)] == [
        ("set", "in", ["chicago"]),
        ("film", "in", ["angeles", "los"]),
    ]
    # a light verb places nothing, nor does a preposition that does not place
    assert placed("The office is in Oslo.") == []
    # a day, a month or a feast is a time ("on" takes one as often as a place or a medium)
    assert placed("It aired in March, at Easter and on CBS.") == []
    assert placed("The song was written by Richard Berry.") == []
    # a common noun relates to a name with "of", unless it names the thing itself or a share
    (mother,) = placed("Saleha Abedin, the mother of Huma Abedin, runs the Institute.")
    assert (mother.verb, mother.prep, sorted(mother.name.words)) == (
        "mother",
        "of",
        ["abedin", "huma"],
    )
    assert placed("She was born in the city of Chicago, one of the Great Lakes ports.") == [
        p
        for p in placed("She was born in the city of Chicago, one of the Great Lakes ports.")
        if p.verb == "bear"
    ]


def test_the_options_of_an_or_are_whole_phrases():
    asked = "Which movie was released first, The Hunchback of Notre Dame or Saludos Amigos?"
    assert options(asked) == ["The Hunchback of Notre Dame", "Saludos Amigos"]
    assert options("Which is older, the Bank of England or the Bank of Scotland?") == [
        "the Bank of England",
        "the Bank of Scotland",
    ]
    assert options("Is Tom older than Ann?") == []


@pytest.mark.parametrize(
    ("asked", "offered"),
    [
        # set off by a comma, an option runs to the "or" and from it to the clause's end,
        # whatever the parse makes of a name opening with a number or a verb's form
        (
            "Which band formed first, Walking Giants or 21 Pilots Club?",
            ["Walking Giants", "21 Pilots Club"],
        ),
        (
            "Which opened first, Harrow Lane Market or 12 Quay Street?",
            ["Harrow Lane Market", "12 Quay Street"],
        ),
        (
            "Which was founded earlier, Rolling Hills Press or The Ledger?",
            ["Rolling Hills Press", "The Ledger"],
        ),
        (
            "Which came first, the bridge or the tunnel, and who built it?",
            ["the bridge", "the tunnel"],
        ),
    ],
)
def test_options_set_off_by_a_comma_are_whole_names(asked, offered):
    assert options(asked) == offered


def test_a_fragment_has_no_verb():
    assert verbless("Photographer and writer.")
    assert not verbless("She was a photographer.")


@pytest.mark.parametrize(
    ("question", "answer", "off"),
    [
        ("when did the fast and furious actor die", "Paul Walker.", ("when", "a person")),
        ("In what year was the bridge opened?", "Joseph Strauss.", ("when", "a person")),
        ("who wrote the song if i can only imagine", "1999.", ("who", "a date or number")),
        ("who is the lead singer for fall out boy", "formed in 2001.", ("who", "a date or number")),
        ("when did the fast and furious actor die", "November 30, 2013.", None),
        ("when was the pyramid built", "during the reign of Khufu.", None),
        ("when does the episode air", "\u201cSparks Fly\u201d.", None),
        ("when did the war end", "World War II.", None),
        ("who won the triple crown before american pharoah", "Affirmed, in 1978.", None),
        ("who wrote the song", "Bart Millard wrote it in 1999.", None),
        ("where is the talking donkey in the bible", "Numbers 22 -- 24.", None),
        # a longer one without a subject is a sentence misparsed ("battle" read as a noun)
        ("when does the new season come out", "The androids battle Rozie and Ribrianne.", None),
    ],
)
def test_a_short_answer_is_read_against_what_its_question_asks(question, answer, off):
    assert off_question(question, answer) == off


@pytest.mark.parametrize(
    ("question", "answer", "phrase"),
    [
        (
            "The film stars which actress of Irish heritage?",
            "It stars a famous Irish actress.",
            "a famous Irish actress",
        ),
        (
            "Which ports does the ferry call at?",
            "The ferry calls at several ports.",
            "several ports",
        ),
        ("In what year did the mill close?", "The mill closed many years ago.", "many years"),
        # a fragment, its noun the root
        ("Which actress stars in the film?", "A famous Irish actress.", "A famous Irish actress"),
        # a phrase that may say which one is an answer
        ("The film stars which actress?", "It stars an actress from Cork.", None),
        ("The film stars which actress?", "It stars the actress Niamh Kerr.", None),
        ("Which ports does the ferry call at?", "It calls at three ports.", None),
        ("Which ports does the ferry call at?", "It calls at the ports of Oban and Mull.", None),
        # denied, it gives none at all; another noun than the one asked about is no answer
        ("Which deposit do we pay?", "Children don't need a deposit.", None),
        ("Which actress does it star?", "It stars a famous singer.", None),
        # a question that asks about no noun
        ("Who stars in the film?", "A famous actress stars in it.", None),
    ],
)
def test_an_answer_giving_the_asked_noun_as_no_particular_one_is_read(question, answer, phrase):
    found = unnamed_answer(question, answer)
    assert (answer[found[1] : found[2]] if found else None) == phrase


def test_texts_parsed_together_are_memoised_as_parsed_alone(monkeypatch):
    from truthguard.refchecker import structure

    texts = [
        "Hard-bounced addresses are suppressed at once by the relay.",
        "Soft bounces are retried for up to 72 hours.",
    ]
    structure.parse.cache_clear()
    alone = [[(t.lemma_, t.pos_, t.dep_, t.head.i) for t in structure.parse(x)] for x in texts]
    structure.parse.cache_clear()
    structure.parse_all(texts + texts[:1])
    parser = structure._parser()
    monkeypatch.setattr(type(parser), "pipe", lambda *_: pytest.fail("parsed again"))
    read = [[(t.lemma_, t.pos_, t.dep_, t.head.i) for t in structure.parse(x)] for x in texts]
    assert read == alone


@pytest.mark.parametrize("reader", ["parse", "parse_all"])
def test_texts_a_concurrent_check_parsed_while_one_waited_are_not_parsed_again(monkeypatch, reader):
    from truthguard.refchecker import structure

    texts = ["The relay retries soft bounces for 72 hours.", "Hard bounces are suppressed."]
    parser = structure._parser()
    lock = structure._LOCK

    class Contended:
        """The pipeline's lock, taken first by another check that parses the same texts."""

        def __enter__(self) -> None:
            monkeypatch.setattr(structure, "_LOCK", lock)
            structure.parse_all(texts)
            lock.acquire()

        def __exit__(self, *exc: object) -> None:
            lock.release()

    structure.parse.cache_clear()
    batches: list[list[str]] = []
    pipe = type(parser).pipe
    monkeypatch.setattr(type(parser), "pipe", lambda p, t: batches.append(list(t)) or pipe(p, t))
    monkeypatch.setattr(structure, "_LOCK", Contended())
    if reader == "parse":
        doc = structure.parse(texts[0])
        assert doc.text == texts[0]
    else:
        structure.parse_all(texts)
    assert batches == [texts]  # the other check's batch alone
    structure.parse.cache_clear()


def test_the_sides_of_every_join_are_parsed_in_one_batch(monkeypatch):
    from truthguard.refchecker import structure

    text = "The fee rises in May and members pay it monthly but guests pay it at the door."
    structure.parse.cache_clear()
    cuts = structure.clause_cuts(text)
    assert [text[c:].split()[0] for c in cuts] == ["and", "but"]
    structure.parse.cache_clear()
    parser = structure._parser()
    monkeypatch.setattr(type(parser), "__call__", lambda *_: pytest.fail("parsed alone"))
    assert structure.clause_cuts(text) == cuts


def test_a_batch_is_no_larger_than_the_memo_of_parses_can_keep(monkeypatch):
    from truthguard.memory import memory_budget, set_memory_budget
    from truthguard.refchecker import structure

    parser = structure._parser()
    batches: list[int] = []
    pipe = type(parser).pipe
    monkeypatch.setattr(type(parser), "pipe", lambda p, t: batches.append(len(t)) or pipe(p, t))
    texts = [f"Batch {i} of the relay is retried after {i} hours." for i in range(8)]
    before = memory_budget()
    try:
        set_memory_budget(0)  # no memo: nothing is parsed ahead of its reading
        structure.parse_all(texts)
        assert batches == []
        set_memory_budget(0.1)  # room for about two short sentences in half the share
        structure.parse_all(texts)
        assert batches and 1 <= batches[0] < len(texts)
    finally:
        set_memory_budget(before)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The current head coach, Lena Brandt, took over in 2021.", [("coach", "Brandt")]),
        ("Lena Brandt, the head coach, took over in 2021.", [("coach", "Brandt")]),
        ("The head coach is Lena Brandt.", [("coach", "Brandt")]),
        ("Lena Brandt is the club's coach.", [("coach", "Brandt")]),
        # one of several holders, or no name
        ("Lena Brandt is a coach.", []),
        ("The head coach is a former player.", []),
    ],
)
def test_a_post_is_given_to_a_name_by_an_apposition_or_a_copula(text, expected):
    from truthguard.refchecker.structure import titles

    found = [(post, text[at:].split()[0].strip(",.")) for post, at, _, _ in titles(text)]
    assert found == expected


def test_the_relation_a_clause_gives_its_subject_is_its_verb_or_what_a_linking_verb_links_to():
    assert relation_words("Mischa Berg won the 2007 National Book Award.") == ("win",)
    assert relation_words("Queen Ada was a regular on the network.") == ("regular",)
    assert relation_words("Queen Ada was in Barney Miller.") == ("miller",)
    assert relation_words("Tessa Lind became famous.") == ("famous",)
    assert relation_words("A famous Irish actress.") == ()


@pytest.mark.parametrize(
    ("question", "by_noun", "lists"),
    [
        ("We need to move a piano, a wardrobe and three beds.", {}, [5]),
        ("I bought 3 shirts, 2 pairs of jeans and a hat.", {}, [6]),
        (
            "This week I took two bus trips of 20 minutes and one tram trip.",
            {"trip": 3},
            [],
        ),
        ("I have a dog.", {}, []),
    ],
)
def test_the_things_an_asker_lists_are_counted(question, by_noun, lists):
    assert listed_totals(question) == (by_noun, lists)


@pytest.mark.parametrize(
    ("text", "name", "kind"),
    [
        ("Refunds go through the Leeds office.", "Leeds", "office"),
        ("Refunds go through the Aberdeen and Leeds offices.", "Aberdeen", "office"),
        ("Refunds go through the Aberdeen and Leeds offices.", "Leeds", "office"),
        ("The Red line stops here.", "Red", "line"),
        # a name standing alone, or before another name, names no kind
        ("Refunds go through Leeds.", "Leeds", None),
        ("The office is in Leeds Bradford Airport.", "Leeds", None),
    ],
)
def test_a_name_before_a_common_noun_names_one_of_that_kind(text, name, kind):
    at = text.index(name)
    assert kind_named(text, at, at + len(name)) == kind
