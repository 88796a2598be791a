"""The perturbation set of ``bench grounding``: deterministic, one fact changed per answer."""

from __future__ import annotations

import random

from truthguard.bench._perturbations import TYPES, build_perturbations, reword

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


def test_long_passages_take_up_to_two_neighbours_each_side_and_four_sentences():
    long_ref = (
        "The mill was built in 1820 by Ann Hale . It burned down in 1871 . A school opened on "
        "the site in 1899 . The school closed in 1962 after a flood . The building is now a "
        "library with 40,000 books ."
    )
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
