"""The local extractor: what is left after a lead-in must still say something."""

from __future__ import annotations

from truthguard._text import has_content
from truthguard.refchecker import LocalExtractor


def test_a_lead_in_before_an_echoed_template_slot_leaves_no_claim():
    text = 'The answer states no facts.\nyes {"subject": "A", "predicate": "is", "object": ""}'
    claims = LocalExtractor().extract("What is it?", text)
    assert claims and all(has_content(c.text) for c in claims)
    assert not any("subject" in c.text for c in claims)


def test_a_lead_in_before_a_statement_keeps_the_statement():
    claims = LocalExtractor().extract("Is it red?", "Yes, the Marlow lighthouse is red.")
    assert [c.text for c in claims] == ["the Marlow lighthouse is red."]
