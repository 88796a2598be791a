"""truthguard: hallucination detectors as LangChain / LlamaIndex middleware."""

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

__version__ = "0.1.0"

__all__ = [
    "BaseDetector",
    "ConfigurationError",
    "DatasetNotFoundError",
    "DetectionResult",
    "DetectorInput",
    "GuardRejected",
    "InvalidInputError",
    "InvalidLLMOutput",
    "LLMCallError",
    "LLMSession",
    "LLMSettings",
    "Label",
    "MissingRecordingError",
    "TruthGuardError",
    "Usage",
    "__version__",
]
