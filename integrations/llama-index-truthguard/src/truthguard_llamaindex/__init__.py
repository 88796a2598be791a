"""truthguard detectors as LlamaIndex evaluators."""

from truthguard_llamaindex.evaluator import TruthGuardEvaluator

__all__ = ["TruthGuardEvaluator"]
