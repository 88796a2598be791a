"""Score answers from LangChain callbacks, in the background, into JSONL / logging / SQLite."""

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
    "JSONLSink",
    "LoggingSink",
    "RecordSink",
    "SQLiteSink",
    "ScoreRecord",
    "TruthGuardCallbackHandler",
]
