"""truthguard: hallucination detectors as LangChain / LlamaIndex middleware.

The detectors (``FEWL``, ``ReverseValidation``, ``RefChecker``) and the middleware
(``HallucinationGuard``, ``TruthGuardCallbackHandler``, ``FEWLExampleSelector``) are importable
from here; they load on first access so that ``import truthguard`` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import (
    ConfigurationError,
    DatasetNotFoundError,
    GuardRejected,
    InvalidInputError,
    InvalidLLMOutput,
    LLMCallError,
    MissingRecordingError,
    TruthGuardError,
)
from truthguard.llm import LLMSession, LLMSettings
from truthguard.result import DetectionResult, Label, Usage

if TYPE_CHECKING:
    from truthguard.callbacks import AsyncTruthGuardCallbackHandler, TruthGuardCallbackHandler
    from truthguard.cascade import CascadeChecker
    from truthguard.evaluation import evaluate
    from truthguard.fewl import FEWL
    from truthguard.guard import HallucinationGuard
    from truthguard.refchecker import RefChecker
    from truthguard.rv import ReverseValidation
    from truthguard.selectors import FEWLExampleSelector
    from truthguard.store import ArtifactStore

__version__ = "0.1.0"

_LAZY = {
    "FEWL": "truthguard.fewl",
    "ReverseValidation": "truthguard.rv",
    "RefChecker": "truthguard.refchecker",
    "CascadeChecker": "truthguard.cascade",
    "HallucinationGuard": "truthguard.guard",
    "TruthGuardCallbackHandler": "truthguard.callbacks",
    "AsyncTruthGuardCallbackHandler": "truthguard.callbacks",
    "FEWLExampleSelector": "truthguard.selectors",
    "ArtifactStore": "truthguard.store",
    "evaluate": "truthguard.evaluation",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'truthguard' has no attribute {name!r}")


__all__ = [
    "FEWL",
    "ArtifactStore",
    "AsyncTruthGuardCallbackHandler",
    "BaseDetector",
    "CascadeChecker",
    "ConfigurationError",
    "DatasetNotFoundError",
    "DetectionResult",
    "DetectorInput",
    "FEWLExampleSelector",
    "GuardRejected",
    "HallucinationGuard",
    "InvalidInputError",
    "InvalidLLMOutput",
    "LLMCallError",
    "LLMSession",
    "LLMSettings",
    "Label",
    "MissingRecordingError",
    "RefChecker",
    "ReverseValidation",
    "TruthGuardCallbackHandler",
    "TruthGuardError",
    "Usage",
    "__version__",
    "evaluate",
]
