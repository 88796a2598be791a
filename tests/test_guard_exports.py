"""Lock the public names of the middleware modules."""

from __future__ import annotations

import importlib

import pytest

EXPORTS = {
    "truthguard.guard": {
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
    },
    "truthguard.guard.admission": {
        "DEFAULT_MAX_CONCURRENT_CHECKS",
        "CheckGate",
        "Refusal",
        "behind_inline_checks",
        "inline_check",
        "inline_checks",
        "lag_margin",
        "loop_lag",
        "running_chain",
    },
    "truthguard.guard.attempts": {
        "Action",
        "AskPolicy",
        "AttemptLoop",
        "Finish",
        "ReleaseAnswer",
        "RunAttempt",
        "Status",
    },
    "truthguard.guard.check": {
        "CheckLoop",
        "Deadline",
        "OUTAGES",
        "POLICY_GRACE",
        "RunTimedOut",
        "attempt_loop",
        "base_detector",
        "before",
        "call_before",
        "deprecated_check_loop",
        "over_capacity",
        "run_checks",
        "run_detector",
        "score_bounds",
        "thresholds_for",
        "verdict_for",
        "we_are_cancelled",
        "within",
    },
    "truthguard.guard.extract": {
        "ANSWER_KEYS",
        "CONTEXT_KEYS",
        "HISTORY_KEYS",
        "QUESTION_KEYS",
        "answer_of",
        "check_input",
        "clean_text",
        "contexts_of",
        "history_of",
        "question_of",
    },
    "truthguard.guard.usage": {"UsageCollector"},
    "truthguard.guard.validation": {"input_errors"},
    "truthguard.guard.verdict": {
        "NEVER_OPEN",
        "OVER_CAPACITY",
        "check_detector_options",
        "check_threshold",
        "decide",
        "never_open",
        "nothing_to_check",
        "normalise",
        "refused_for_capacity",
        "unique_keys",
    },
    "truthguard.sync": {"adrive", "drive", "run_sync"},
    "truthguard.evaluators": {"DetectorEvaluator"},
    "truthguard.serde": {"LANGGRAPH_ALLOWLIST", "checkpoint_serializer"},
    "truthguard.callbacks": {
        "AsyncTruthGuardCallbackHandler",
        "CallableSink",
        "Capture",
        "JSONLSink",
        "LoggingSink",
        "RecordSink",
        "SQLiteSink",
        "ScoreRecord",
        "Scorer",
        "TruthGuardCallbackHandler",
    },
    "truthguard.selectors": {"ICL_SYSTEM_PROMPT", "FEWLExampleSelector", "ScoreFn", "icl_prompt"},
    "truthguard.rag": {
        "RAG_PROMPT",
        "build_rag_chain",
        "chroma_retriever",
        "corpus_documents",
        "format_documents",
        "split_markdown",
    },
    "truthguard.embeddings": {"SimilarityEmbeddings"},
    "truthguard.vectorstore": {"ChromaVectorStore"},
}


@pytest.mark.parametrize("module", sorted(EXPORTS))
def test_public_names_are_locked(module):
    mod = importlib.import_module(module)
    assert set(mod.__all__) == EXPORTS[module]
    for name in mod.__all__:
        assert hasattr(mod, name), name
