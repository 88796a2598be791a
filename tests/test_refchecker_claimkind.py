"""Claim kinds: facts are checked; questions, greetings, opinions, hedges, framing and refusals
are talk around facts."""

from __future__ import annotations

import pytest

from truthguard.refchecker.claimkind import (
    claim_kind,
    claim_parts,
    is_refusal,
    refusal_turn,
    strip_frame,
)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("The observatory was founded in 1987.", "fact"),
        ("Paris is the capital of France.", "fact"),
        ("Have you read any of his other books?", "question"),
        ("Do you like this book because of its author Charlaine Harris?", "question"),
        ("Hope you enjoy!", "greeting"),
        ("Thanks so much.", "greeting"),
        ("I love Tom Hanks in Zodiac", "opinion"),
        ("I like crime fiction!", "opinion"),
        ("I think you'll like it!", "opinion"),
        ("It's one of my favorite movies!", "opinion"),
        ("I highly recommend both!", "opinion"),
        ("I don't think so.", "opinion"),
        ("I don't watch college football so no idea who's good.", "opinion"),
        ("We watch a lot of football at home.", "opinion"),
        ("I'm not a big fan of horror films.", "opinion"),
        ("You are welcome.", "greeting"),
        ("Perhaps it opened later.", "hedge"),
        ("I'm not sure about the exact year.", "refusal"),
        ("Here is a summary:", "framing"),
        ("I don't know.", "refusal"),
        ("I cannot tell from the passages.", "refusal"),
        ("Not mentioned in the context.", "refusal"),
        ("The context does not say when it was built.", "refusal"),
        # a yes or no with how far it holds is the reply's stance; its reasons are the claims
        ("Mostly, yes.", "greeting"),
        ("In short, no.", "greeting"),
        ("Mostly yes, but only in summer.", "fact"),
        ("Partly.", "fact"),
        ("Not fully.", "greeting"),
        ("Only in certain cases.", "greeting"),
        ("Yes, but only in some circumstances.", "greeting"),
        ("Only in certain cases can the fee be waived.", "fact"),
        ("Some, yes.", "greeting"),
        ("No, not entirely.", "greeting"),
        ("Not fully covered.", "fact"),
        # a lead-in announcing a list says nothing of its own
        ("A few things.", "framing"),
        ("Two things to keep in mind:", "framing"),
        ("A few things changed in 2020.", "fact"),
    ],
)
def test_each_kind_is_recognised(text, kind):
    assert claim_kind(text) == kind


def test_a_fact_with_a_negation_or_a_name_at_the_start_stays_a_fact():
    assert claim_kind("Nobody knows who built it.") == "fact"
    assert claim_kind("No vaccine was approved before 1990.") == "fact"
    assert claim_kind("Sure Start centres opened in 1999.") == "fact"
    assert claim_kind("No. 11 also reappears") == "fact"  # a character's number, not "No."
    assert claim_kind("No, it is not.") == "greeting"
    # a word that opens greetings opens a name before a capitalised word: a short answer
    assert claim_kind("Great Britain.") == "fact"
    assert claim_kind("Nice Airport.") == "fact"
    assert claim_kind("Great, thanks!") == "greeting"
    assert claim_kind("Good morning Anna.") == "greeting"
    # the speaker's own habits are talk; what others did is a fact
    assert claim_kind("They don't watch football.") == "fact"
    assert claim_kind("The fans never watch the away games.") == "fact"


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("Based on the passages, the observatory was founded in 1987.", "the observatory"),
        ("According to the context, it opened in May.", "it opened"),
        ("Yes, he was in The Dirty Dozen.", "he was"),
        ("No, Footloose was not a musical comedy.", "Footloose"),
        ("Well, based on the context, it is 5 m.", "it is 5 m."),
        ("Here is a brief summary: the plant closed in 2003.", "the plant"),
        # any kind of text named as where the answer comes from
        ("According to the leaflet, adults take one tablet.", "adults take"),
        ("Going by the council's notice, four items cost £43.", "four items"),
        ("Per the FAQ page, refunds take 5 days.", "refunds take"),
        ("According to the policy summary, floods are excluded.", "floods are"),
        # an elliptical reply before a colon or a dash is the reply's stance
        ("He didn't: Tolley opposed it.", "Tolley opposed"),
        ("No, it doesn't — the fee is fixed.", "the fee"),
    ],
)
def test_framing_and_opening_particles_are_cut(text, rest):
    stripped, at = strip_frame(text)
    assert stripped.startswith(rest) and text[at:] == stripped


@pytest.mark.parametrize(
    "text",
    [
        "no later theorist is named.",  # a determiner, not a reply's "No"
        "Well over half of the seats went to the party.",
        "Well-known examples are the Grand Trianon and Les Invalides.",
        "Right whales feed in these waters.",
        "No. 11 also reappears",
        # a text's name after "according to" is framing only when it names a text
        "According to the law of gravity, things fall.",
        # an elliptical reply goes on past a comma
        "It is, however, a small fee.",
    ],
)
def test_a_word_that_can_open_a_reply_is_kept_when_it_belongs_to_the_statement(text):
    assert strip_frame(text) == (text, 0)


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("No it wasn't released in 1990.", "it wasn't"),
        ("Well he did win it twice.", "he did"),
        ("Sure - it opened in 1990.", "it opened"),
        ("Nope. It opened in 1990.", "It opened"),
    ],
)
def test_a_reply_particle_before_a_pronoun_or_a_stop_is_cut(text, rest):
    assert strip_frame(text)[0].startswith(rest)


def test_no_or_right_opening_a_short_statement_is_no_greeting():
    assert claim_kind("No survivors were found.") == "fact"
    assert claim_kind("Right whales feed here.") == "fact"
    # a reply's mood, however short
    assert claim_kind("No it isn't.") == "greeting"
    assert claim_kind("No worries.") == "greeting"
    assert claim_kind("No no no") == "greeting"
    assert claim_kind("No way, man.") == "greeting"


def test_nothing_is_cut_when_nothing_follows():
    assert strip_frame("No.") == ("No.", 0)
    assert strip_frame("Here is a summary:") == ("Here is a summary:", 0)
    assert strip_frame("The tower is 300 m tall.") == ("The tower is 300 m tall.", 0)


def test_refusal_is_a_property_of_the_whole_answer():
    assert is_refusal("I'm sorry, but I don't have information about that.")
    assert is_refusal("  The provided passages do not mention the founder. ")
    assert not is_refusal("Maria Okafor founded it in 1987.")
    assert not is_refusal("")


@pytest.mark.parametrize(
    "text",
    [
        "Not sure when it was released",
        "Not that I can see",
        "No, I don't think I know anything else",
        "I’m not sure.",
    ],
)
def test_more_ways_of_declining_are_refusals(text):
    assert claim_kind(text) == "refusal"


@pytest.mark.parametrize(
    ("sentence", "parts"),
    [
        (
            "I don't have any additional information on Twisted just that it was written by "
            "Laurie.",
            [
                ("I don't have any additional information on Twisted", "refusal"),
                ("it was written by Laurie.", "fact"),
            ],
        ),
        (
            "Not sure when it was released, but it is a sci-fi produced by Adam Schroeder.",
            [
                ("Not sure when it was released", "refusal"),
                ("but it is a sci-fi produced by Adam Schroeder.", "fact"),
            ],
        ),
        (
            "Not that I can see but I can recommend Gone Girl and Fifty Shades of Grey, which "
            "were released in the same year.",
            [
                ("Not that I can see", "refusal"),
                ("I can recommend Gone Girl and Fifty Shades of Grey", "fact"),
                ("which were released in the same year.", "fact"),
            ],
        ),
        (
            "I don't know, but it is a film by Ridley Scott.",  # too short to be its own clause
            [("I don't know", "refusal"), ("it is a film by Ridley Scott.", "fact")],
        ),
        (
            "I am not sure if he played last weekend as he is working at Harvard now.",
            [
                ("I am not sure if he played last weekend", "refusal"),
                ("he is working at Harvard now.", "fact"),
            ],
        ),
        (
            "I don't know but I'm not sure but it opened in 1987 in Leeds.",
            [
                ("I don't know", "refusal"),
                ("I'm not sure", "refusal"),
                ("it opened in 1987 in Leeds.", "fact"),
            ],
        ),
    ],
)
def test_a_statement_after_an_opening_refusal_is_a_claim_of_its_own(sentence, parts):
    assert claim_parts(sentence) == parts


@pytest.mark.parametrize(
    "sentence",
    [
        "I don't know as much as you about Tom Hanks films.",  # "as" with no clause after it
        "I can't tell anything but the year.",  # too short to state anything
        "I can't say since I haven't seen it.",
        "Sorry, but I don't have information about that.",
    ],
)
def test_a_refusal_without_a_statement_after_it_stays_whole(sentence):
    assert claim_parts(sentence) == [(sentence, "refusal")]
    assert refusal_turn(sentence) is None


def test_the_turn_gives_where_the_refusal_ends_and_the_statement_starts():
    text = "I don't know when, but it was shot in Rome."
    end, start = refusal_turn(text)
    assert text[:end] == "I don't know when" and text[start:] == "it was shot in Rome."
    assert refusal_turn("It was shot in Rome, but I don't know when.") is None


@pytest.mark.parametrize(
    "answer",
    [
        "I don't know.",
        "I cannot tell from the passages.",
        "Not mentioned in the context.",
        "I'm not sure. Do you like sci-fi?",
        "No, I don't think I know anything else",
        "Great question! I don't know. I love that film, though.",
        "“I don’t know.”",
    ],
)
def test_a_refusal_with_only_talk_around_it_is_a_refusal(answer):
    assert is_refusal(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "I don't have any additional information on Twisted just that it was written by "
        "Laurie.  Wintergirls however is a romance novel.",
        "Not sure when it was released, but it is a sci-fi produced by Adam Schroeder. Do you "
        "enjoy watch Sci-Fi movies?",
        "Not that I can see but I can recommend Gone Girl and Fifty Shades of Grey, which were "
        "released in the same year.",
        "I am not sure. However, I know William H. Macy starred in Door to Door.",
        "I'm not sure. Do you like sci-fi? It was directed by Ridley Scott.",
        "Hope you enjoy!",  # nothing refuses
    ],
)
def test_an_answer_that_states_a_fact_or_refuses_nothing_is_no_refusal(answer):
    assert not is_refusal(answer)


def test_a_long_answer_is_never_read_as_a_refusal():
    assert not is_refusal("I don't know. " + "Do you like it? " * 300)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('The passage itself never mentions "equality of conditions," though', "hedge"),
        ("It never actually mentions the year 1907, though", "hedge"),
        ("It only refers to the character Mike, not to Matt Damon", "hedge"),
        ("It doesn't make clear whether that ownership covers every building.", "hedge"),
        # "can't" is "ca" + "n't": the source still cannot say it
        ("Those figures are dated, so the passage can't tell you the current rate.", "hedge"),
        ("It can't confirm whether the number changed by then.", "hedge"),
        ("The passage doesn't show him named anywhere in the New Testament.", "hedge"),
        ("It doesn't spell out that he wrote it alone.", "hedge"),
        ("The article won't reveal who paid for it.", "hedge"),
        # whatever the passage is said not to do, it is a remark about the passage
        ("The passage doesn't divide the bridges into two kinds.", "hedge"),
        ("The text does not rank the causes by how often they occur.", "hedge"),
        ("The text could not be clearer that the bridge opened in 1920.", "fact"),
        ("The engine does not start in cold weather.", "fact"),
        # the same remark in other word orders: "gives only", the passive, a second predicate
        ("The passage gives only the year, not the exact date.", "hedge"),
        ("It gives neither its founding year nor its location.", "hedge"),
        ("It doesn't use the terms 'producers' or 'primary producers'.", "hedge"),
        ("It doesn't use much power.", "fact"),
        ("That two-way split isn't stated in the passage itself.", "hedge"),
        ("The passage calls the sequel upcoming and doesn't say whether she returns.", "hedge"),
        ("which points to him as the writer.", "hedge"),
        ("The arrow points to the north.", "fact"),
        ("The bridge was built in 1920 and does not carry trains.", "fact"),
        # "never" or "cannot" about the world is a fact to check
        ("The canal cannot carry large ships.", "fact"),
        ("It can't be seen from Earth.", "fact"),
        ("The park never closed in 1990.", "fact"),
        ("They never mentioned it to the police.", "fact"),
        ("He never named his successor.", "fact"),
        # what the passage only names, or names without saying, and what is not mentioned
        ("The passage only names those three leads.", "hedge"),
        ("It lists the film's stars without saying who plays whom.", "hedge"),
        ("Rhodes isn't mentioned at all.", "hedge"),
        ("He left the house without saying goodbye.", "fact"),
        # what the passage gives only for one thing, and what no part of it names
        ("The passage gives a height only for that summit", "hedge"),
        ("The passage lists a date only for the first launch.", "hedge"),
        ("It gives a discount only for students.", "fact"),
        ("no later theorist is named.", "hedge"),
        ("No date is mentioned for the second launch.", "hedge"),
        ("No team was named champion that year.", "fact"),
        ("The band released the album without naming a producer.", "fact"),
    ],
)
def test_what_the_sources_never_or_cannot_say_is_a_remark_about_them(text, kind):
    assert claim_kind(text) == kind


@pytest.mark.parametrize(
    ("sentence", "parts"),
    [
        # what the remark leaves open goes on after "or, if she does,": no fact in it
        (
            "The passage doesn't say whether Lisa appears in the second film or, if she does, "
            "who plays her there.",
            ["refusal", "refusal"],
        ),
        # a relative clause after a plain remark, or a clause after a semicolon, states something
        ("The passage doesn't say when it closed, which was in 1990.", ["refusal", "fact"]),
        ("The passage does not say when it closed; it was built in 1920.", ["refusal", "fact"]),
        # "only that" turns to a statement before its subject; "only that figure" points
        (
            "The passage doesn't give an average over every justice, only that figure for the "
            "sitting Court.",
            ["refusal"],
        ),
        ("I can't say when, only that Sagan left the band in 2015.", ["refusal", "fact"]),
    ],
)
def test_a_clause_that_goes_on_with_a_remark_is_part_of_it(sentence, parts):
    assert [kind for _, kind in claim_parts(sentence)] == parts


def test_who_a_statement_is_attributed_to_is_read_at_the_start_or_the_end():
    from truthguard.refchecker.claimkind import attribution_names

    assert attribution_names("Salil Shetty: countries still execute people.") == {"Salil", "Shetty"}
    # two authors of one piece
    assert attribution_names("Ana Ruiz-Vela, Tom Hale: The city must rethink its buses.") == {
        *("Ana", "Ruiz-Vela", "Tom", "Hale"),
    }
    assert attribution_names("Countries still execute people, writes Salil Shetty.") == {
        "Salil",
        "Shetty",
    }
    assert attribution_names("According to Ovid, Salmacis fell in love.") == {"Ovid"}
    assert attribution_names("Salmacis fell in love, according to Ovid.") == {"Ovid"}
    assert attribution_names("Salmacis fell in love with Hermaphroditus.") == set()
    # "Per X" opening a clause, and a text named with its article
    assert attribution_names("Per Forbes, sales rose 8 percent.") == {"Forbes"}
    assert attribution_names("Per the SOP, tubes are spun within 60 minutes.") == {"SOP"}
    assert attribution_names("According to the SOP, tubes are spun at once.") == {"SOP"}
    assert attribution_names("Storage costs $0.05 per GB per month.") == set()
    # two authors, and a plural speaker: "say", "write" as well as "says", "writes"
    assert attribution_names("Sam Erman and Nathan Perl: the law is unfair.") >= {
        "Sam",
        "Erman",
        "Nathan",
        "Perl",
    }
    assert attribution_names("Her faith is back, say CNN's Carol Costello.") == {
        "CNN's",
        "Carol",
        "Costello",
    }


def test_what_people_could_not_report_or_suggest_is_a_fact_not_a_remark_on_the_sources():
    assert claim_kind("He realizes they could not report everything to the governors.") == "fact"
    assert claim_kind("Venable agrees and Mead suggests they kill everyone.") == "fact"
    # the text's own silence or suggestion stays a remark about it
    assert claim_kind("They don't mention the date.") == "hedge"
    assert claim_kind("The passage suggests it was built later.") == "hedge"
    assert claim_kind("It can't confirm whether the number changed.") == "hedge"
    assert claim_kind("That's only suggested by the title.") == "hedge"


@pytest.mark.parametrize(
    "text",
    [
        "The manual doesn't mention other materials such as nylon.",
        "The rules don't say whether you must stay a full-time student.",
        "It isn't stated whether the deposit is refundable.",
    ],
)
def test_a_remark_in_any_document_wording_is_no_fact(text):
    assert claim_kind(text) == "hedge"


def test_what_a_binding_text_does_not_cover_stays_a_fact():
    assert claim_kind("The policy doesn't cover flood damage.") == "fact"


def test_a_clause_with_a_subject_of_its_own_after_and_is_a_claim_of_its_own():
    parts = claim_parts("Phobos orbits Mars closer than any other moon and Phobos is inhabited.")
    assert [p for p, _ in parts] == [
        "Phobos orbits Mars closer than any other moon",
        "and Phobos is inhabited.",
    ]
    # a second verb sharing the subject, and nouns joined by "and", stay one claim
    assert len(claim_parts("The museum opened in 1902 and closed in 1990.")) == 1
    assert len(claim_parts("Phobos and Deimos orbit Mars.")) == 1
