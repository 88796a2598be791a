"""Guard LangChain 1.x agents (``create_agent``): :class:`GroundingMiddleware` and its policies.

Needs LangChain 1.x: ``pip install 'truthguard[agents]'``.
"""

try:
    import langchain.agents.middleware  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError(
        "truthguard.agents needs LangChain 1.x (langchain.agents.middleware): "
        "pip install 'truthguard[agents]'"
    ) from e

from truthguard.agents._evidence import evidence_of, last_question
from truthguard.agents.middleware import (
    DEFAULT_FALLBACK,
    STATE_KEY,
    GroundingMiddleware,
    GroundingSettings,
    GroundingState,
)
from truthguard.agents.policies import EndRun, HumanReview

__all__ = [
    "DEFAULT_FALLBACK",
    "STATE_KEY",
    "EndRun",
    "GroundingMiddleware",
    "GroundingSettings",
    "GroundingState",
    "HumanReview",
    "evidence_of",
    "last_question",
]
