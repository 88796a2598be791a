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
