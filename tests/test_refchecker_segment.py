"""Sentence / clause splitting and long-reference segmentation."""

from __future__ import annotations

import pytest

from truthguard.refchecker import segment_references
from truthguard.refchecker.segment import split_clauses, split_sentences


def test_sentences_keep_offsets_and_skip_abbreviations():
    text = "Dr. Smith lives in Ulm . He was born in 1900! Did he? Yes\nNew line here."
    spans = split_sentences(text)
    assert [s.text for s in spans] == [
        "Dr. Smith lives in Ulm .",
        "He was born in 1900!",
        "Did he?",
        "Yes",
        "New line here.",
    ]
    assert all(text[s.start : s.end] == s.text for s in spans)


@pytest.mark.parametrize(
    "text",
    [
        "Ohio Gov. John Kasich signed the bill.",
        "Sen. Warren and Lt. Gen. Adams spoke on Jan. 5 in Washington.",
        "It was built by Acme Corp. in Ft. Worth.",
        "The president is Rt. Hon. Brig. Julius Bio, and Maj. Gen. Ray Adm. Lee is his aide.",
    ],
)
def test_titles_and_abbreviated_months_do_not_end_a_sentence(text):
    assert [s.text for s in split_sentences(text)] == [text]


def test_an_initial_goes_on_the_sentence_and_a_scale_of_degrees_ends_one():
    text = "Charging stops above 45 °C. Below 0 °F. the pack sleeps. J. K. Rowling wrote it."
    assert [s.text for s in split_sentences(text)] == [
        "Charging stops above 45 °C.",
        "Below 0 °F. the pack sleeps.",
        "J. K. Rowling wrote it.",
    ]


def test_clauses_split_at_connectives_and_glue_short_pieces():
    text = "The city was founded in 1833; it grew into a port, which made it the largest one"
    assert split_clauses(text) == [
        "The city was founded in 1833",
        "it grew into a port",
        "which made it the largest one",
    ]
    assert split_clauses("He sings; she plays the violin") == ["He sings, she plays the violin"]
    assert split_clauses("red, green and blue") == ["red, green and blue"]
    # ", and" before the last item of a series joins items, not clauses
    series = "it lists three: living donors, brain-dead donors, and donors after circulatory death"
    assert split_clauses(series) == [series]
    assert split_clauses("He was born in Paris, and he moved to Rome in 1920") == [
        "He was born in Paris",
        "and he moved to Rome in 1920",
    ]


def test_a_clause_boundary_inside_brackets_or_a_quotation_is_no_boundary():
    aside = (
        "The passage doesn't say where in the heart the node sits "
        "(for example, which chamber it's in)."
    )
    assert split_clauses(aside) == [aside]
    quoted = 'He wrote "Go home, and stay there quietly tonight" in 1950, and she left in 1952.'
    assert split_clauses(quoted) == [
        'He wrote "Go home, and stay there quietly tonight" in 1950',
        "and she left in 1952.",
    ]
    # once the bracket is closed, the sentence splits as before
    closed = "It has a node (the SA node) in the wall, which sets the pace of the heart."
    assert split_clauses(closed) == [
        "It has a node (the SA node) in the wall",
        "which sets the pace of the heart.",
    ]


def test_long_reference_is_cut_into_bounded_segments_with_offsets():
    sentences = [f"Sentence number {i} talks about topic {i} in some detail." for i in range(50)]
    long_sentence = " ".join(f"w{i}" for i in range(250)) + "."
    ref = " ".join(sentences[:25]) + " " + long_sentence + " " + " ".join(sentences[25:])
    segments = segment_references(["Short one.", ref], size=40)
    assert segments[0].reference == 0 and segments[0].text == "Short one."
    rest = [s for s in segments if s.reference == 1]
    assert len(rest) > 10
    for seg in rest:
        assert len(seg.text.split()) <= 40
        assert ref[seg.start : seg.end] == seg.text
        for span in seg.spans:
            assert ref[span.start : span.end] == span.text
    # every word of the reference lands in exactly one segment, in order
    assert " ".join(s.text for s in rest).split() == ref.split()


def test_segment_size_validated():
    with pytest.raises(ValueError):
        segment_references(["x"], size=0)
    assert segment_references(["   ", ""], size=10) == []


@pytest.mark.parametrize("unit", [" ", "\t", " \n", "Dr. ", ". ", "! ", "a.\n "])
def test_sentence_splitting_is_linear_on_100k_adversarial_text(unit):
    import time

    def timed(n: int) -> float:
        """The least of three times to split ``n`` characters (the others may have waited for
        the machine)."""
        text = (unit * n)[:n] + "x"
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            spans = split_sentences(text)
            best = min(best, time.perf_counter() - started)
        assert spans[-1].text.endswith("x")
        return best

    timed(1_000)  # what the first call loads is no part of the splitting
    # five times the text takes about five times as long; a run that backtracks over the
    # whole text grows with its square (a white-space run used to cost minutes)
    assert timed(100_000) < 10 * timed(20_000) + 0.5


def test_local_extractor_drops_clauses_without_content():
    from truthguard.refchecker import LocalExtractor

    answer = "Paris is a big city; - - - -; and more words here too."
    claims = LocalExtractor().extract("Q?", answer)
    assert [c.text for c in claims] == ["Paris is a big city", "and more words here too."]
    # a clause keeps the sentence it was cut from; a whole sentence needs none
    assert {c.sentence for c in claims} == {answer}
    [whole] = LocalExtractor().extract("Q?", "Paris is a big city.")
    assert whole.sentence is None


def test_passages_pasted_without_a_space_split_but_abbreviations_stay():
    from truthguard.refchecker._tokens import tokenize

    text = (
        "He sang in the band Whale.David Lee Roth sang in Van Halen. Dr. Smith met the U.S. team."
    )
    assert [s.text for s in split_sentences(text)] == [
        "He sang in the band Whale.",
        "David Lee Roth sang in Van Halen.",
        "Dr. Smith met the U.S. team.",
    ]
    pasted = 'It was founded in Arizona in 1997.Your Pie is a pizza chain (in "Athens").It grew.'
    assert [s.text for s in split_sentences(pasted)] == [
        "It was founded in Arizona in 1997.",
        'Your Pie is a pizza chain (in "Athens").',
        "It grew.",
    ]
    assert [s.text for s in split_sentences("Pi is 3.14 and v2.0.1 is out.")] == [
        "Pi is 3.14 and v2.0.1 is out."
    ]
    words = [t.text for t in tokenize("band Whale.David, the U.S. Army and J.K. Rowling")]
    assert words == ["band", "Whale", "David", "the", "U.S.", "Army", "and", "J.K.", "Rowling"]


def test_sentences_are_not_cut_inside_a_time_an_abbreviation_or_a_quotation():
    text = (
        'It went off at 10:31 p.m. BST on 22 May. The U.S. Army came. He said "Stop. Now." and '
        "left. We met at 9 p.m. Then we left."
    )
    assert [s.text for s in split_sentences(text)] == [
        "It went off at 10:31 p.m. BST on 22 May.",
        "The U.S. Army came.",
        'He said "Stop. Now." and left.',
        "We met at 9 p.m.",
        "Then we left.",
    ]
    assert [s.text for s in split_sentences("Hens weigh 2.5 pounds (1.1 kg). Next.")] == [
        "Hens weigh 2.5 pounds (1.1 kg).",
        "Next.",
    ]


def test_a_case_name_abbreviation_does_not_end_the_sentence():
    text = "The ruling was Brown v. Board of Education of Topeka (1954). It came in May."
    assert [s.text for s in split_sentences(text)] == [
        "The ruling was Brown v. Board of Education of Topeka (1954).",
        "It came in May.",
    ]


def test_list_items_lose_their_markers_and_keep_their_offsets():
    text = (
        "Key points:\n- Well-known examples are the Grand Trianon.\n"
        "* It spanned 1610 to 1774.\n• Done."
    )
    spans = split_sentences(text)
    assert [s.text for s in spans] == [
        "Key points:",
        "Well-known examples are the Grand Trianon.",
        "It spanned 1610 to 1774.",
        "Done.",
    ]
    assert all(text[s.start : s.end] == s.text for s in spans)
    # a lone marker stays what it is (no content: the extractor drops it)
    assert [s.text for s in split_sentences("A fact.\n-")] == ["A fact.", "-"]


def test_a_lower_case_word_goes_on_the_sentence_and_circa_ends_none():
    text = (
        "Warner Bros. bought the studio c. 1929. It is 5 ft. tall and cost approx. 5 dollars. "
        'He said "Go." and left.\nnext item'
    )
    assert [s.text for s in split_sentences(text)] == [
        "Warner Bros. bought the studio c. 1929.",
        "It is 5 ft. tall and cost approx. 5 dollars.",
        'He said "Go." and left.',
        "next item",
    ]
    # a capital opens a sentence after an ordinary word ("America." is no "ca.")
    assert len(split_sentences("He moved to America. Then he left.")) == 2
