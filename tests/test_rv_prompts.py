"""rv prompt templates: untrusted text stays fenced data, the wording is versioned."""

from __future__ import annotations

import pytest

from injection_corpus import (
    check_corpus,
    check_module_covered,
    check_version,
)
from truthguard.rv import _prompts as P

TEMPLATES = {
    name: getattr(P, name)
    for name in [
        "ENTITY_EXTRACTION",
        "QG_QUERY",
        "QG_QUERY_REBUILD",
        "QG_ANSWER",
        "EM_QUERY",
        "EM_QUERY_REBUILD",
        "EM_ANSWER",
        "JUDGE",
    ]
}
EXTRA = {}
# Fingerprint of the wording for each PROMPT_VERSION: a changed template needs a new version
# (it goes into cache keys), and then a new line here.
DIGESTS = {P.PROMPT_VERSION: "fcb3b5d940593d32"}


def test_every_template_of_the_module_is_covered():
    check_module_covered(P, TEMPLATES)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_injection_corpus_keeps_the_structure(name):
    check_corpus(TEMPLATES[name], EXTRA)


def test_wording_is_locked_to_the_prompt_version():
    check_version(P, TEMPLATES, DIGESTS)
