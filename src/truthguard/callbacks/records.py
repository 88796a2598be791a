"""One record per captured answer, and the sinks that store records."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from truthguard._clean import clean_text
from truthguard.errors import InvalidInputError

__all__ = [
    "CallableSink",
    "Failure",
    "JSONLSink",
    "LoggingSink",
    "RecordSink",
    "SQLiteSink",
    "ScoreRecord",
    "as_sink",
    "json_safe",
]


Failure = Literal["timeout", "outage", "error", "queue_full", "closed", "over_capacity"]
"""Why a record is ``failed``: the check ran out of time, its model calls failed, it raised, the
queue was full, the handler was closed before (or when) the capture could be scored, or a
guard refused the check over capacity (``max_concurrent_checks``) before any detector ran."""


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    return value


class ScoreRecord(BaseModel):
    """The score of one answer captured from a run (or why it could not be scored)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    """Id of the captured run, to join with traces (LangSmith, Langfuse, ...)."""
    parent_run_id: str | None = None
    """Parent of the captured run, when it was nested in a run the handler did not see."""
    status: Literal["scored", "failed"]
    """``scored``, or ``failed`` with ``failure`` and ``error`` saying why."""
    failure: Failure | None = None
    """Kind of failure of a ``failed`` record (``timeout``, ``outage``, ``error``,
    ``queue_full``, ``closed``, ``over_capacity``); None when scored."""
    question: str
    """The question found in the run's input (or the last human message)."""
    answer: str
    """The answer found in the run's output."""
    contexts: list[str] = Field(default_factory=list)
    """Documents returned by retrievers inside the run, or found in its output."""
    detector: str
    """Name of the detector that scored the answer."""
    score: float | None = None
    """The detector's native score (None when failed, invalid or unverifiable)."""
    passing: bool | None = None
    """Score against the detector's threshold (None without a threshold or a score)."""
    label: str | None = None
    """factual / hallucinated / unverifiable / invalid."""
    explanation: str = ""
    """The detector's explanation."""
    decided_by: str | None = None
    """Which stage of a cascade detector decided (``local``, ``llm``, ...); None otherwise."""
    error: str | None = None
    """Why the answer was not scored (status ``failed``)."""
    raw_output: str | None = None
    """The checker's reply kept verbatim when it gave no verdict (empty or unparseable)."""
    usage: dict[str, Any] = Field(default_factory=dict)
    """The detector's own LLM usage for this answer."""
    tags: list[str] = Field(default_factory=list)
    """Tags of the captured run."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Run metadata (values that are not JSON scalars are stored as strings)."""
    captured_at: float
    """Unix time the run ended."""
    scored_at: float | None = None
    """Unix time the record was written."""
    score_seconds: float | None = None
    """Seconds the detector took."""

    @model_validator(mode="before")
    @classmethod
    def _clean_strings(cls, data: Any) -> Any:
        # A lone surrogate cannot be encoded as UTF-8: file sinks would refuse the record.
        return _clean(data) if isinstance(data, dict) else data


@runtime_checkable
class RecordSink(Protocol):
    """Where records go. ``write`` is called from the handler's worker thread."""

    def write(self, record: ScoreRecord) -> None: ...

    def close(self) -> None: ...


def _cut_torn_tail(path: Path) -> None:
    """Cut a last line left unfinished by a killed writer, so appends start on a fresh line."""
    try:
        f = open(path, "r+b")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return
    with f:
        end = f.seek(0, os.SEEK_END)
        if end == 0:
            return
        f.seek(end - 1)
        if f.read(1) == b"\n":
            return
        pos = end
        while pos > 0:  # read backwards, a block at a time, to the last complete line
            start = max(0, pos - 65536)
            f.seek(start)
            block = f.read(pos - start)
            at = block.rfind(b"\n")
            if at >= 0:
                pos = start + at + 1
                break
            pos = start
        logging.getLogger("truthguard.callbacks").warning(
            "truthguard: %s ended in an unfinished record (%d bytes); cut", path, end - pos
        )
        f.truncate(pos)


class JSONLSink:
    """Append one JSON line per record to a file (flushed after each record).

    A last line left unfinished by a killed process is cut when the sink opens the file, so
    every line stays one valid record.

    A record written after :meth:`close` is still appended (the file is opened for that one
    write), so a capture that reaches a closed handler leaves its ``failed`` record on disk.

    Example:
        >>> sink = JSONLSink("scores.jsonl")  # doctest: +SKIP
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        _cut_torn_tail(self.path)
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def write(self, record: ScoreRecord) -> None:
        line = record.model_dump_json() + "\n"
        with self._lock:
            if self._file.closed:  # late record: append it, never drop it
                with open(self.path, "a", encoding="utf-8") as f:
                    f.write(line)
                return
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()


class LoggingSink:
    """Log each record as JSON through :mod:`logging`."""

    def __init__(self, logger: logging.Logger | str = "truthguard.scores", level: int = 20) -> None:
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.level = level

    def write(self, record: ScoreRecord) -> None:
        self.logger.log(self.level, "truthguard %s", record.model_dump_json())

    def close(self) -> None:
        return None


_COLUMNS = (
    "run_id TEXT PRIMARY KEY, status TEXT, detector TEXT, score REAL, passing INTEGER, "
    "label TEXT, question TEXT, answer TEXT, error TEXT, captured_at REAL, record TEXT"
)


class SQLiteSink:
    """Store records in a SQLite table (one row per run id; the full record as JSON).

    Each record is committed before ``write`` returns. A record written after :meth:`close`
    is still stored (through a connection opened for that one write).
    """

    def __init__(self, path: str | Path, *, table: str = "truthguard_scores") -> None:
        if not table.isidentifier():
            raise InvalidInputError("table", f"not a valid SQL identifier: {table!r}")
        self.path = Path(path)
        self.table = table
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False)
        self._closed = False
        with self._lock, self._conn:
            self._conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({_COLUMNS})")

    def write(self, record: ScoreRecord) -> None:
        row = (
            record.run_id,
            record.status,
            record.detector,
            record.score,
            None if record.passing is None else int(record.passing),
            record.label,
            record.question,
            record.answer,
            record.error,
            record.captured_at,
            record.model_dump_json(),
        )
        sql = f"INSERT OR REPLACE INTO {self.table} VALUES (?,?,?,?,?,?,?,?,?,?,?)"
        with self._lock:
            if self._closed:  # late record: store it, never drop it
                conn = sqlite3.connect(str(self.path))
                try:
                    with conn:
                        conn.execute(sql, row)
                finally:
                    conn.close()
                return
            with self._conn:
                self._conn.execute(sql, row)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()


class CallableSink:
    """Hand each record to a function of yours."""

    def __init__(self, fn: Callable[[ScoreRecord], Any]) -> None:
        self.fn = fn

    def write(self, record: ScoreRecord) -> None:
        self.fn(record)

    def close(self) -> None:
        return None


def as_sink(sink: Any) -> RecordSink:
    """Accept a sink, a path ending in ``.jsonl`` / ``.db`` / ``.sqlite``, or a callable."""
    if isinstance(sink, RecordSink):
        return sink
    if isinstance(sink, str | Path):
        suffix = Path(sink).suffix
        if suffix == ".jsonl":
            return JSONLSink(sink)
        if suffix in (".db", ".sqlite", ".sqlite3"):
            return SQLiteSink(sink)
        raise InvalidInputError("sinks", f"cannot tell the sink type from {str(sink)!r}")
    if callable(sink):
        return CallableSink(sink)
    raise InvalidInputError(
        "sinks", f"expected a sink, a path or a callable, got {type(sink).__name__}"
    )


def json_safe(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """Metadata with non-scalar values turned into strings."""
    out: dict[str, Any] = {}
    for k, v in (metadata or {}).items():
        out[str(k)] = v if isinstance(v, str | int | float | bool) or v is None else str(v)
    return out
