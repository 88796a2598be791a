"""Reverse Validation: passage-level hallucination detection by asking the model to find the
entity back from the passage's own claims (Yang et al., 2023).

Example:
    >>> from truthguard.rv import ReverseValidation
    >>> # rv = ReverseValidation(model=ChatOpenAI(model="gpt-4o-mini"), variant="qg")
    >>> # rv.invoke({"answer": passage, "entity": "Ailanthus"}).label
"""

from truthguard.rv._match import EntityMatcher, MatchOutcome, PaperMatcher, RobustMatcher
from truthguard.rv._prompts import PROMPT_VERSION
from truthguard.rv.detector import ReverseValidation, ReverseValidationInput
from truthguard.rv.replay import RVReplayChatModel, replay_key, replay_model

__all__ = [
    "PROMPT_VERSION",
    "EntityMatcher",
    "MatchOutcome",
    "PaperMatcher",
    "RVReplayChatModel",
    "ReverseValidation",
    "ReverseValidationInput",
    "RobustMatcher",
    "replay_key",
    "replay_model",
]
