"""The perturbation set of ``bench grounding``: deterministic, one fact changed per answer."""

from __future__ import annotations

import random
import re

import pytest

from truthguard.bench import _perturbations
from truthguard.bench._perturbations import INVENTED, TYPES, build_perturbations, reorder, reword

REFS = [
    "The band was formed in Liverpool in 1960 . On 4 October 1962 , John Lennon released "
    "twelve songs with Parlophone Records . They did not tour in 1966 .",
    "The bridge opened in 1937 in San Francisco . It is 2,737 metres long and cost $35 million . "
    "Joseph Strauss was the chief engineer of the Golden Gate Bridge District .",
    "In 1999 , Mary Shelley Museum opened in Bath with seven rooms . The house was built by "
    "George Wood in 1790 near the river .",
]


def test_perturbations_are_deterministic_and_change_one_span():
    first = build_perturbations(REFS, per_type=5, seed=3)
    assert first == build_perturbations(REFS, per_type=5, seed=3)
    kinds = {p["kind"] for p in first}
    assert {"unchanged", "reworded", "year", "number", "negation_removed"} <= kinds
    assert kinds <= {*TYPES, "unchanged", "reworded"}
    for p in first:
        if p["kind"] == "unchanged":
            assert p["answer"] in p["reference"]
        elif p["kind"] in TYPES:
            assert p["answer"] not in p["reference"]
            if p["replacement"]:
                assert p["replacement"] in p["answer"]


def test_reword_keeps_facts_and_moves_a_fronted_phrase():
    out = reword("In 1999 , the museum opened in Bath .", random.Random(0))
    assert out == "The museum opened in Bath in 1999."


def _sentences(text: str) -> list[str]:
    from truthguard.refchecker.segment import split_sentences

    return [s.text for s in split_sentences(text)]


def _between_neighbours(passage: str, answer: str, reference: str) -> bool:
    """``passage`` is ``answer`` with one or two whole sentences of ``reference`` around it."""
    if answer not in passage:
        return False
    before, after = passage.split(answer, 1)
    neighbours = [t.strip() for t in (before, after) if t.strip()]
    ref_sentences = _sentences(reference)
    return 1 <= len(neighbours) <= 2 and all(n in ref_sentences for n in neighbours)


def test_passages_set_the_copied_answer_between_its_verbatim_neighbours():
    out = build_perturbations(REFS, per_type=5, seed=3)
    copied = [p for p in out if p["variant"] == "copied"]
    passages = [p for p in out if p["variant"] == "passage"]
    assert passages and {"unchanged", "year", "negation_removed"} <= {p["kind"] for p in passages}
    for p in passages:
        # built from a copied answer of the same kind and reference, found in it verbatim
        # between unchanged neighbouring sentences of the reference
        assert any(
            (c["kind"], c["ref_id"], c["replacement"]) == (p["kind"], p["ref_id"], p["replacement"])
            and _between_neighbours(p["answer"], c["answer"], p["reference"])
            for c in copied
        ), p
        if p["kind"] == "unchanged":
            assert p["answer"] in p["reference"]
        else:
            assert p["answer"] not in p["reference"]
            assert len(_sentences(p["answer"])) >= 2
    # the first sentence of a reference has only a next neighbour, the last only a previous one,
    # one in the middle both; the reference's spacing is kept
    first, middle, last = _sentences(REFS[0])
    controls = {p["answer"] for p in passages if p["kind"] == "unchanged" and p["ref_id"] == 0}
    assert controls == {f"{first} {middle}", REFS[0].strip(), f"{middle} {last}"}


def test_passages_leave_copied_and_reworded_answers_as_they_were():
    import hashlib
    import json

    with_passages = build_perturbations(REFS, per_type=5, seed=3)
    without = build_perturbations(REFS, per_type=5, seed=3, passages=False)
    assert all(p["variant"] != "passage" for p in without)
    # the passages come last; everything before them is the set built without passages
    n = len(without)
    assert with_passages[:n] == without
    assert {p["variant"] for p in with_passages[n:]} == {"passage"}  # no reference has four
    # ... and that set is the one built before passages existed (digest taken from that code)
    digest = hashlib.sha256(json.dumps(without, sort_keys=True).encode()).hexdigest()
    assert digest == "104e691c66b0f1b12f41a4b38a249385f31e0f178b4674241891f52e346bf5c0"


def test_passages_are_counted_per_type_and_need_a_neighbour():
    out = build_perturbations(REFS, per_type=1, seed=3)
    counts: dict[tuple[str, str], int] = {}
    for p in out:
        counts[(p["kind"], p["variant"])] = counts.get((p["kind"], p["variant"]), 0) + 1
    assert max(counts.values()) == 1
    assert counts[("unchanged", "passage")] == 1
    # a reference of one sentence gives copied answers but no passage
    alone = build_perturbations(["The house was built by George Wood in 1790 near the river ."])
    assert {p["variant"] for p in alone} == {"copied", "reworded"}


LONG_REF = (
    "The mill was built in 1820 by Ann Hale . It burned down in 1871 . A school opened on "
    "the site in 1899 . The school closed in 1962 after a flood . The building is now a "
    "library with 40,000 books ."
)


def test_long_passages_take_up_to_two_neighbours_each_side_and_four_sentences():
    long_ref = LONG_REF
    out = build_perturbations([*REFS, long_ref], per_type=20, seed=3)
    long_ = [p for p in out if p["variant"] == "long_passage"]
    assert long_ and all(p["ref_id"] == len(REFS) for p in long_)  # the others have < 4
    for p in long_:
        copied = next(
            c["answer"]
            for c in out
            if c["variant"] == "copied"
            and c["kind"] == p["kind"]
            and c["ref_id"] == p["ref_id"]
            and c["answer"] in p["answer"]
        )
        before, after = p["answer"].split(copied, 1)
        # whole, unchanged sentences of the reference around it: four or five in all
        assert before.strip() in long_ref and after.strip() in long_ref
        assert 4 <= len(_sentences(p["answer"])) <= 5
    control = next(p for p in long_ if p["kind"] == "unchanged")
    assert control["answer"] in long_ref and len(_sentences(control["answer"])) >= 4
    # the reworded sentences too, among the same unchanged neighbours
    reworded = [p for p in out if p["variant"] == "long_reworded"]
    assert reworded and {p["kind"] for p in reworded} >= {"reworded", "year"}
    for p in reworded:
        said = next(
            c["answer"]
            for c in out
            if c["variant"] == "reworded" and c["kind"] == p["kind"] and c["answer"] in p["answer"]
        )
        before, after = p["answer"].split(said, 1)
        assert before.strip() in long_ref and after.strip() in long_ref


@pytest.mark.parametrize(
    ("sentence", "reordered"),
    [
        # passive made active, then the year fronted (the brief's "founded by Dr. ... in 1987")
        (
            "The clinic was founded by Dr. Maria Okafor in 1987 .",
            "In 1987, Dr. Maria Okafor founded the clinic.",
        ),
        (
            "The mill was built in 1820 by Ann Hale .",
            "The mill was constructed by Ann Hale in 1820.",
        ),
        ("The school closed in 1962 after a flood .", "After a flood, the school closed in 1962."),
        ("When the war ended , the band split .", "The band split when the war ended."),
        ("It burned down in 1871 .", "In 1871, it burned down."),
    ],
)
def test_reorder_moves_clauses_and_keeps_every_fact(sentence, reordered):
    out = reorder(sentence, random.Random(0))
    assert out == reordered
    # heavier than reword: words in another order, every name and number kept
    assert _reordered(out, reword(sentence, random.Random(0)))
    assert _facts(out) == _facts(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The building is now a library with 40,000 books .",  # nothing to reorder
        "Lennon and McCartney wrote the song .",  # two names swapped alone is not enough
        "It is named after General Edward Lawrence Logan .",  # "named after" stays together
        # the "when" clause says what 1878 was
        "The paper dates back to 1878 , when the Herald was first published .",
        "As Kale watches , she is consumed by envy .",  # "she" would come before "Kale"
        "The band formed and split in 1990 .",  # fronting the year would change its scope
    ],
)
def test_reorder_leaves_sentences_it_cannot_reorder_safely(sentence):
    assert reorder(sentence, random.Random(0)) is None


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _order(text: str, other: str) -> list[str]:
    """The words of ``text`` that ``other`` has too, in ``text``'s order."""
    common = set(_words(other))
    return [w for w in _words(text) if w in common]


def _reordered(text: str, original: str) -> bool:
    return _order(text, original) != _order(original, text)


def _facts(text: str) -> list[str]:
    """The sentence's numbers and capitalised words but the first, sorted."""
    words = re.findall(r"[\w.]+", text)[1:]
    return sorted({w.strip(".") for w in words if w[0].isupper() or w[0].isdigit()})


def _replaced(answer: str, reference: str) -> tuple[str, str]:
    """(the one sentence of ``answer`` that ``reference`` does not have, the sentence of
    ``reference`` in its place)."""
    ref, got = _sentences(reference), _sentences(answer)
    (k,) = [k for k, s in enumerate(got) if s not in ref]
    return got[k], ref[ref.index(got[k - 1]) + 1 if k else ref.index(got[k + 1]) - 1]


def test_long_reordered_sets_a_reordered_sentence_among_unchanged_neighbours():
    refs = [*REFS, LONG_REF]
    out = build_perturbations(refs, per_type=20, seed=3)
    assert out == build_perturbations(refs, per_type=20, seed=3)
    reordered = [p for p in out if p["variant"] == "long_reordered"]
    # the long reference's second, third and fourth sentences (the others have no window of four
    # sentences) can be reordered; the other references have fewer than four sentences
    assert {p["kind"] for p in reordered} >= {"reworded", "year", "content_noun"}
    assert all(p["ref_id"] == len(REFS) for p in reordered)
    controls = {}
    for p in [p for p in reordered if p["kind"] == "reworded"]:
        said, original = _replaced(p["answer"], LONG_REF)
        assert 4 <= len(_sentences(p["answer"])) <= 5
        assert _reordered(said, original) and _facts(said) == _facts(original)
        controls[original] = said
    assert len(controls) == 3
    for p in [p for p in reordered if p["kind"] in TYPES]:
        said, original = _replaced(p["answer"], LONG_REF)
        # the control's sentence with one fact changed: reordered, holding the new fact
        assert _reordered(said, original)
        assert p["replacement"] in said and p["replacement"] not in original
        assert len(set(_words(said)) ^ set(_words(controls[original]))) <= 4


OBSERVATORY = (
    "The observatory opened on the mountain in 1990 . Its first director , Maria Okafor , came "
    "from Lagos . The main telescope was built by the Carnegie Institute . A second dome followed "
    "in 1998 . Visitors may tour it on Sundays ."
)


# another item's reference from the same document (a sentence in common): its sentences are not
# taken, though the one about the mountain would be the closest to the topic
SAME_DOCUMENT = (
    "Its first director , Maria Okafor , came from Lagos . A bus line reached the mountain in "
    "2004 ."
)


def test_long_invented_puts_another_documents_sentence_holding_a_fact_of_this_one_in_a_passage():
    refs = [*REFS, OBSERVATORY, SAME_DOCUMENT]
    out = build_perturbations(refs, per_type=20, seed=3)
    assert out == build_perturbations(refs, per_type=20, seed=3)
    invented = [p for p in out if p["variant"] == "long_invented"]
    assert {p["kind"] for p in invented} == set(INVENTED)
    long_controls = {
        p["answer"] for p in out if p["variant"] == "long_passage" and p["kind"] == "unchanged"
    }
    sources = []
    for p in invented:
        said = next(s for s in _sentences(p["answer"]) if s not in _sentences(OBSERVATORY))
        # an unchanged long passage of this reference with that one sentence put in
        assert p["answer"].replace(f" {said}", "", 1) in long_controls
        # a sentence of another reference, with a name or year of this one in place of its own
        assert p["ref_id"] == len(REFS) and p["donor_id"] < len(REFS)
        before, after = said.split(p["replacement"], 1)
        source = next(
            s
            for s in _sentences(refs[p["donor_id"]])
            if s.startswith(before) and s.endswith(after) and s != said
        )
        assert p["replacement"] in OBSERVATORY and p["replacement"] not in source
        sources.append(source)
    assert len(set(sources)) == len(sources)  # no sentence taken twice


def test_the_new_passages_leave_every_other_answer_as_it_was(monkeypatch):
    refs = [*REFS, LONG_REF, OBSERVATORY]
    full = build_perturbations(refs, per_type=20, seed=3)
    monkeypatch.setattr(_perturbations, "_reordered", lambda *a, **k: [])
    monkeypatch.setattr(_perturbations, "_invented", lambda *a, **k: [])
    rest = build_perturbations(refs, per_type=20, seed=3)
    n = len(rest)
    assert full[:n] == rest
    variants = [p["variant"] for p in full[n:]]
    assert variants == sorted(variants, reverse=True)  # long_reordered, then long_invented
    assert set(variants) == {"long_reordered", "long_invented"}
