"""truthguard for LlamaIndex: a guarded query engine, a background scorer, evaluators, few-shot."""

from truthguard_llamaindex.evaluator import (
    FEWLEvaluator,
    RefCheckerEvaluator,
    ReverseValidationEvaluator,
    TruthGuardBatchEvalRunner,
    TruthGuardEvaluationResult,
    TruthGuardEvaluator,
)
from truthguard_llamaindex.instrumentation import TruthGuardEventHandler
from truthguard_llamaindex.models import ChatModelLLM, MiniLMEmbedding
from truthguard_llamaindex.prompts import DEFAULT_EXAMPLE_TEMPLATE, FEWLFewShot
from truthguard_llamaindex.query_engine import METADATA_KEY, FallbackEngine, GuardedQueryEngine

__all__ = [
    "DEFAULT_EXAMPLE_TEMPLATE",
    "METADATA_KEY",
    "ChatModelLLM",
    "FEWLEvaluator",
    "FEWLFewShot",
    "FallbackEngine",
    "GuardedQueryEngine",
    "MiniLMEmbedding",
    "RefCheckerEvaluator",
    "ReverseValidationEvaluator",
    "TruthGuardBatchEvalRunner",
    "TruthGuardEvaluationResult",
    "TruthGuardEvaluator",
    "TruthGuardEventHandler",
]
