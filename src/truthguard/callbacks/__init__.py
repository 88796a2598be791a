"""Score answers from LangChain callbacks, in the background, into JSONL / logging / SQLite."""

from truthguard.callbacks._tracker import Capture
from truthguard.callbacks._worker import Scorer
from truthguard.callbacks.handler import AsyncTruthGuardCallbackHandler, TruthGuardCallbackHandler
from truthguard.callbacks.records import (
    CallableSink,
    JSONLSink,
    LoggingSink,
    RecordSink,
    ScoreRecord,
    SQLiteSink,
)

__all__ = [
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
]
