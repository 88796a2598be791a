"""The hallucination guard: check a chain's answers, and re-try, fall back or raise on failure."""

from truthguard.guard._models import Attempt, GuardResult, GuardVerdict
from truthguard.guard.guard import VERDICT_EVENT, HallucinationGuard
from truthguard.guard.policies import (
    Fallback,
    Filter,
    GuardPolicy,
    PolicyContext,
    Raise,
    Regenerate,
    Release,
    ReRetrieve,
    Rerun,
)
from truthguard.guard.streaming import GuardChunk, StreamingGuard

__all__ = [
    "VERDICT_EVENT",
    "Attempt",
    "Fallback",
    "Filter",
    "GuardChunk",
    "GuardPolicy",
    "GuardResult",
    "GuardVerdict",
    "HallucinationGuard",
    "PolicyContext",
    "Raise",
    "ReRetrieve",
    "Regenerate",
    "Release",
    "Rerun",
    "StreamingGuard",
]
