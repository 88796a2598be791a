"""refchecker prompt templates: untrusted text stays fenced data, the wording is versioned."""

from __future__ import annotations

import pytest

from injection_corpus import check_structure, digest, renders
from truthguard._text import FencedTemplate
from truthguard.refchecker import _prompts as P

TEMPLATES = {
    name: getattr(P, name)
    for name in [
        "TRIPLET_EXTRACTION_PROMPT",
        "SUBSENTENCE_EXTRACTION_PROMPT",
        "CHECK_PROMPT",
        "JOINT_CHECK_PROMPT",
    ]
}
EXTRA = {"n": 3}
# Fingerprint of the wording for each PROMPT_VERSION: a changed template needs a new version
# (it goes into cache keys), and then a new line here.
DIGESTS = {P.PROMPT_VERSION: "8518d1ac7c5b40c4"}


def test_every_template_of_the_module_is_covered():
    found = {k for k, v in vars(P).items() if isinstance(v, FencedTemplate)}
    assert found == set(TEMPLATES)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_injection_corpus_keeps_the_structure(name):
    template = TEMPLATES[name]
    extra = {k: v for k, v in EXTRA.items() if k in template.fields}
    for values in renders(template, extra):
        check_structure(template, values)


def test_wording_is_locked_to_the_prompt_version():
    assert DIGESTS.get(P.PROMPT_VERSION) == digest(list(TEMPLATES.values())), (
        "a template changed: bump PROMPT_VERSION and record the new digest here"
    )
