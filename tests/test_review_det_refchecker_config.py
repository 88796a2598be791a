"""Review fixes: RefChecker's LLM stages reject a model they cannot call at construction."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from truthguard.refchecker import LLMChecker, LLMExtractor


@pytest.mark.parametrize("cls", [LLMChecker, LLMExtractor])
def test_refchecker_llm_stages_check_their_model_at_construction(cls):
    with pytest.raises(ValidationError, match="model"):
        cls(model="gpt-4o")
    cls(model=lambda prompt: "Entailment")  # callables are accepted
