"""Names and name-like words: terms that neither the lexicon nor the encoder's vocabulary knows."""

import pytest

from truthguard.refchecker._analysis import analyse
from truthguard.refchecker._names import common_words, negations, unknown_term
from truthguard.refchecker._tokens import tokenize


@pytest.mark.parametrize(
    "word", ["ritonavir", "saquinavir", "ependymal", "rostral", "equipartition", "cisternae"]
)
def test_a_word_no_lexicon_or_vocabulary_knows_is_a_term(word):
    assert common_words()  # the packaged vocabulary is installed in the test environment
    assert unknown_term(word)


@pytest.mark.parametrize(
    "word",
    [
        "period",  # a word of the vocabulary
        "proliferate",  # a word of the lexicon
        "blockers",  # a known word and a suffix
        "freer",  # a comparative of a word ending in e
        "jihadist",
        "retitled",  # a prefix and a known word
        "redesignation",
        "storyline",  # two known words
        "catalysed",  # a British spelling
        "tolerability",  # a noun made of a known adjective
        "Ritonavir",  # capitalised: a name, read as names are
        "x-ray",  # not one run of letters
        "lysis",  # too short to judge
    ],
)
def test_known_words_and_their_forms_are_no_terms(word):
    assert not unknown_term(word)


@pytest.mark.parametrize(
    ("sentence", "names"),
    [
        # common words joined, capitalised only by the sentence's start, name nothing
        ("Well-known examples are the Grand Trianon.", ["Grand", "Trianon"]),
        ("Long-term effects are rare.", []),
        # a name capitalises each of its parts
        ("Rolls-Royce built the engine.", ["Rolls-Royce"]),
        ("Coca-Cola was first sold in 1886.", ["Coca-Cola"]),
    ],
)
def test_a_sentence_opening_with_joined_common_words_names_nothing_there(sentence, names):
    assert [f.text for f in analyse(sentence).facts if f.kind == "name"] == names


@pytest.mark.parametrize(
    ("sentence", "names"),
    [
        # a word the lexicon knows, or a noun made of one, opening a sentence names nothing
        ("Centrifuge EDTA tubes within 60 minutes.", ["EDTA"]),
        ("Tolerability was reasonable.", []),
        # nor does a common word before an acronym; a first name before an initial stays one
        ("Spin EDTA tubes within 60 minutes.", ["EDTA"]),
        ("Contact HR within 5 days.", ["HR"]),
        ("James A. Bland wrote the song.", ["James", "A.", "Bland"]),
    ],
)
def test_a_sentence_opening_with_a_word_of_the_lexicon_names_nothing_there(sentence, names):
    assert [f.text for f in analyse(sentence).facts if f.kind == "name"] == names


@pytest.mark.parametrize(
    ("text", "cues"),
    [
        ("It costs no more than €6 a ride.", []),
        ("It is not later than 30 days.", []),
        ("A ride never lasts more than a day.", ["never"]),
        ("It is capped, never more than €6 a ride.", []),
        ("Bikes are not returned.", ["not"]),
    ],
)
def test_a_negation_opening_a_bound_negates_nothing(text, cues):
    tokens = tokenize(text)
    assert [tokens[i].norm for i in negations(tokens, text)] == cues
