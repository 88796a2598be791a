"""Parsing of Reverse Validation stage outputs: pure functions, messy inputs."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truthguard._text import MAX_SCAN, has_content
from truthguard.errors import InvalidLLMOutput
from truthguard.rv._parse import (
    acronym,
    find_percentages,
    first_percentage,
    heuristic_entity,
    is_abstention,
    leaks_entity,
    name_words,
    normalize,
    parse_answer,
    parse_entity,
    parse_judge,
    parse_query,
    parse_requirements,
    strip_parenthetical,
    tokenize,
    unmet_requirements,
)


def test_strip_parenthetical_only_drops_the_trailing_disambiguation():
    assert strip_parenthetical("Carme (moon)") == "Carme"
    assert strip_parenthetical("Rhea (bird) ") == "Rhea"
    assert strip_parenthetical("ESPRIT (programme) of the EU") == "ESPRIT (programme) of the EU"


def test_normalize_folds_case_accents_punctuation_and_articles():
    assert normalize("The Émperor Ōjin's (legend)!") == "emperor ojin"


def test_tokenize_keeps_hyphenated_words_and_offsets():
    toks = tokenize('Is "inter-character interval" right?')
    words = [t.word for t in toks if t.is_word]
    assert words == ["is", "intercharacter", "interval", "right"]
    assert toks[2].text == "inter-character" and toks[2].start == 4


def test_name_words_drop_parenthetical_and_leading_article():
    assert name_words("The Beatles (band)") == ["beatles"]
    assert name_words("Dekker's algorithm") == ["dekker", "algorithm"]


def test_acronym_of_multiword_names_only():
    assert acronym("National Hockey League") == "NHL"
    assert acronym("Ailanthus") is None


@pytest.mark.parametrize(
    ("query", "entity", "leaks"),
    [
        ("What moon of Jupiter is named after Carme's myth?", "Carme (moon)", True),
        ("Which GENUS is called the tree of heaven? Ailanthus?", "Ailanthus", True),
        ("What organisms use cnidocytes to sting?", "Cnidocyte", True),
        ("Which island lies in Orkney near Hoyland?", "Hoy", False),
        ("What is the largest island of Orkney?", "Hoy", False),
        # A sentence-case title is named in lower case; a proper name only as a name.
        ("What does a high condition number indicate?", "Condition number", True),
        ("Who falls in love while a successful wedding planner?", "The Wedding Planner", False),
        ("Which film is The Wedding Planner's sequel?", "The Wedding Planner", True),
        ("Which rebellion of 1837 shook Lower Canada?", "Lower Canada", True),
        ("Which colony lay lower than Canada?", "Lower Canada", False),
        ("What does the Bank of England set?", "Bank of England", True),
        ("Two species: Greater Rhea and Lesser Rhea", "Rhea (bird)", True),
    ],
)
def test_leak_check_matches_whole_words(query, entity, leaks):
    assert leaks_entity(query, entity) is leaks


# -- entity extraction -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "Ailanthus",
        '"Ailanthus".',
        "Entity: Ailanthus",
        "  **Ailanthus**\n",
        "The entity is 'Ailanthus'",
    ],
)
def test_parse_entity_cleans_labels_quotes_and_periods(raw):
    assert parse_entity(raw) == "Ailanthus"


@pytest.mark.parametrize(
    "raw",
    ["", "   \n", "The passage is about trees.\nIt describes a genus.\nIt grows fast.", "x " * 20],
)
def test_parse_entity_rejects_prose_and_empty_replies(raw):
    with pytest.raises(InvalidLLMOutput) as e:
        parse_entity(raw)
    assert e.value.raw == raw and e.value.stage == "rv.entity"


def test_heuristic_entity_takes_the_first_sentence_subject():
    assert heuristic_entity("Ailanthus is a genus of trees. It grows.") == "Ailanthus"
    assert heuristic_entity("The Warsaw Ghetto was the largest ghetto.") == "Warsaw Ghetto"
    assert heuristic_entity("Jean-Michel Basquiat (1960-1988) was an artist.") == (
        "Jean-Michel Basquiat"
    )
    assert heuristic_entity("Trees grow everywhere in many countries and climates.") is None


# -- stage 1 -------------------------------------------------------------------------------------


def test_parse_query_drops_label_and_quotes():
    assert parse_query('Question: "What tree is called the tree of heaven?"') == (
        "What tree is called the tree of heaven?"
    )
    with pytest.raises(InvalidLLMOutput):
        parse_query("  ")


def test_parse_requirements_reads_numbered_and_bulleted_lists():
    raw = "Features:\n1. Genus of trees\n2) Native to Asia\n- Fast growing\n\nThat's all."
    assert parse_requirements(raw) == ["Genus of trees", "Native to Asia", "Fast growing"]


def test_parse_requirements_rejects_text_without_a_list():
    with pytest.raises(InvalidLLMOutput) as e:
        parse_requirements("I cannot list features of this entity.")
    assert e.value.stage == "rv.query"


# -- stage 2 -------------------------------------------------------------------------------------


def test_no_percentage():
    assert first_percentage("The entity is Ailanthus.") is None
    assert find_percentages("The entity is Ailanthus.") == []


def test_several_percentages_in_every_form():
    text = "Ailanthus meets 100% of them; Toona meets 60 percent, Melia 7 out of 10 requirements."
    assert first_percentage(text) == 100.0
    assert [p.value for p in find_percentages(text)] == [100.0, 60.0, 70.0]


def test_percentages_are_kept_as_stated_with_their_sign_and_what_they_refer_to():
    found = find_percentages("It grew 300% in 2010 and meets 85 % of the criteria.")
    assert [(p.value, p.of_requirements, p.in_range) for p in found] == [
        (300.0, False, False),
        (85.0, True, True),
    ]
    assert [p.value for p in find_percentages("It meets -20% of them, or 70-80%.")] == [-20.0, 80.0]
    assert first_percentage("Score: \u221290%") == -90.0
    assert first_percentage("between 70-80%") == 80.0  # a range, not a negative number
    ratio = find_percentages("It meets 11 out of 10 requirements.")[0]
    assert ratio.value == 110.0 and ratio.of_requirements


def test_first_percentage_reads_the_same_number_as_the_published_rule():
    assert first_percentage("v2.5.1: 12.5 %, then 90%") == 12.5
    assert first_percentage("1234% growth") == 1234.0


@pytest.mark.parametrize(
    ("text", "hedged"),
    [
        ("I'm not sure, but it might be Ailanthus.", True),
        ("I\u2019m not certain.", True),
        ("I cannot identify any such entity.", True),
        ("There is no known entity matching all of these.", True),
        ("Ailanthus.", False),
        ("Sure: Ailanthus, 100%.", False),
    ],
)
def test_abstention(text, hedged):
    assert is_abstention(text) is hedged


def test_unmet_requirements_are_the_sentences_that_say_so():
    text = (
        "The entity is Toona, meeting 80% of the requirements. It does not grow in North "
        "America. Requirement 7 is not met. It is a tree."
    )
    assert unmet_requirements(text) == [
        "It does not grow in North America.",
        "Requirement 7 is not met.",
    ]
    assert unmet_requirements("Ailanthus meets 100% of the requirements.") == []


@pytest.mark.parametrize(
    ("raw", "verdict"), [("Yes.", True), ("no", False), ("YES, it does", True)]
)
def test_parse_judge(raw, verdict):
    assert parse_judge(raw) is verdict


def test_parse_judge_rejects_anything_else():
    with pytest.raises(InvalidLLMOutput) as e:
        parse_judge("Probably.")
    assert e.value.raw == "Probably."


# -- content and hostile output -------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw", ["", "   ", "Question:", "**Question:** ?", "\u201c...\u201d", "N/A"]
)
def test_contentless_question_is_invalid(raw):
    with pytest.raises(InvalidLLMOutput) as e:
        parse_query(raw)
    assert e.value.raw == raw and e.value.stage == "rv.query"


def test_runaway_question_is_invalid_and_says_it_was_capped():
    with pytest.raises(InvalidLLMOutput, match=f"only the first {MAX_SCAN} characters"):
        parse_query("Which " * 20_000)


def test_requirement_items_without_content_are_dropped():
    assert parse_requirements("1. Tree genus\n2. ...\n3. \n- Grown in China") == [
        "Tree genus",
        "Grown in China",
    ]
    with pytest.raises(InvalidLLMOutput, match="features without content"):
        parse_requirements("1. ...\n2. -\n3. <feature>")


@pytest.mark.parametrize("raw", ["  \n ", "Entity: ...", "\u201c\u201d", "Entity: " + "A" * 1000])
def test_blank_punctuation_or_huge_entity_is_invalid(raw):
    with pytest.raises(InvalidLLMOutput):
        parse_entity(raw)


def test_stage_two_answer_needs_content():
    assert parse_answer("Ailanthus.") == "Ailanthus."
    for raw in ("", " ", "...", "null"):
        with pytest.raises(InvalidLLMOutput, match="stage-2 answer"):
            parse_answer(raw)


def test_heuristic_entity_never_returns_punctuation():
    assert heuristic_entity("... is a thing.") is None


# Shapes that made backtracking patterns hang: long runs of one unit around the cue words.
RUNS = [
    " ",
    "x",
    "1",
    "1.",
    "(",
    "a(",
    "(is ",
    "9%",
    "* ",
    "\t",
    "Entity ",
    "question ",
    "a-",
    "1. x\n",
    "- ",
    "\u2014",
    "'s ",
    "Ailanthus ",
]
N = 100_000


@pytest.mark.parametrize("unit", RUNS)
def test_every_parser_is_linear_on_100k_adversarial_input(unit):
    text = (unit * (N // len(unit) + 1))[:N]
    calls = [
        lambda: strip_parenthetical(text),
        lambda: normalize(text),
        lambda: acronym(text),
        lambda: heuristic_entity(text),
        lambda: leaks_entity(text, "Ailanthus altissima"),
        lambda: first_percentage(text),
        lambda: find_percentages(text),
        lambda: is_abstention(text),
        lambda: unmet_requirements(text),
    ]
    for parse in (parse_entity, parse_query, parse_requirements, parse_judge, parse_answer):
        calls.append(lambda parse=parse: _swallow(parse, text))
    for i, call in enumerate(calls):
        started = time.perf_counter()
        call()
        assert time.perf_counter() - started < 2.0, i  # backtracking took minutes here


def _swallow(parse, text):
    try:
        return parse(text)
    except InvalidLLMOutput:
        return None


FRAGMENTS = [
    "Question:",
    "**",
    "Entity:",
    "1.",
    "2)",
    "-",
    "\u2022",
    "%",
    "-5",
    "120",
    "85",
    "out of",
    "10 requirements",
    "yes",
    "no",
    "Ailanthus",
    "(moon)",
    "\n",
    " ",
    "...",
    "N/A",
    "<feature>",
    "The passage is about",
    "I'm not sure",
    "except",
]
replies = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=12), max_size=40).map("".join)
FUZZ = settings(max_examples=150, deadline=None, database=None, derandomize=True)


@FUZZ
@given(replies)
def test_fuzz_parsers_raise_only_invalid_output_and_never_return_nothing(text):
    started = time.perf_counter()
    for parse in (parse_entity, parse_query, parse_answer):
        out = _swallow(parse, text)
        assert out is None or has_content(out)
    items = _swallow(parse_requirements, text)
    assert items is None or all(has_content(i) for i in items)
    assert _swallow(parse_judge, text) in (None, True, False)
    entity = heuristic_entity(text)
    assert entity is None or has_content(entity)
    find_percentages(text), first_percentage(text), leaks_entity(text, "Ailanthus")
    assert time.perf_counter() - started < 2.0
