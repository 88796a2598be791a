"""RefChecker: claim-level hallucination checking against reference passages.

Public names: the detector :class:`RefChecker`, its extractors (:class:`LLMExtractor`,
:class:`LocalExtractor`), checkers (:class:`LLMChecker`, :class:`LocalChecker`,
:class:`NLIChecker`, :class:`MiniCheckChecker`, :class:`HHEMChecker`,
:class:`LettuceDetectChecker`, :class:`AlignScoreChecker`; a published open
checker by name with :func:`named_checker`) and the aggregators (:func:`strict_agg`,
:func:`soft_agg`, :func:`major_agg`). The checkers that run downloaded weights load on first
access, so that the local check does not import them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from truthguard.refchecker.aggregate import (
    ABSTAIN,
    aggregate,
    major_agg,
    response_score,
    soft_agg,
    strict_agg,
)
from truthguard.refchecker.checkers import ClaimChecker, ClaimVerdict, LLMChecker, LocalChecker
from truthguard.refchecker.detector import RefChecker, RefCheckerInput
from truthguard.refchecker.extractors import (
    Claim,
    ClaimExtractor,
    Extraction,
    LLMExtractor,
    LocalExtractor,
)
from truthguard.refchecker.segment import Segment, segment_references

if TYPE_CHECKING:
    from truthguard.refchecker.alignscore import AlignScoreChecker
    from truthguard.refchecker.hhem import HHEMChecker
    from truthguard.refchecker.lettuce import LettuceDetectChecker
    from truthguard.refchecker.minicheck import MiniCheckChecker
    from truthguard.refchecker.named import CHECKER_NAMES, named_checker
    from truthguard.refchecker.nli import NLIChecker

_LAZY = {
    "AlignScoreChecker": "alignscore",
    "HHEMChecker": "hhem",
    "LettuceDetectChecker": "lettuce",
    "MiniCheckChecker": "minicheck",
    "CHECKER_NAMES": "named",
    "named_checker": "named",
    "NLIChecker": "nli",
}

__all__ = [
    "ABSTAIN",
    "CHECKER_NAMES",
    "AlignScoreChecker",
    "Claim",
    "ClaimChecker",
    "ClaimExtractor",
    "ClaimVerdict",
    "Extraction",
    "HHEMChecker",
    "LLMChecker",
    "LLMExtractor",
    "LettuceDetectChecker",
    "LocalChecker",
    "LocalExtractor",
    "MiniCheckChecker",
    "NLIChecker",
    "RefChecker",
    "RefCheckerInput",
    "Segment",
    "aggregate",
    "major_agg",
    "named_checker",
    "response_score",
    "segment_references",
    "soft_agg",
    "strict_agg",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"truthguard.refchecker.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'truthguard.refchecker' has no attribute {name!r}")
