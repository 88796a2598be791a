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
    "AttemptRecord",
    "CallableSink",
    "ClaimIssue",
    "FailingClaim",
    "Failure",
    "JSONLSink",
    "LoggingSink",
    "RecordSink",
    "SQLiteSink",
    "ScoreRecord",
    "as_sink",
    "failing_claims",
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


class ClaimIssue(BaseModel):
    """One thing the checker found wrong in a claim: a span of the answer, and what the
    evidence says there."""

    model_config = ConfigDict(extra="forbid")

    relation: str | None = None
    """How the span fails (``conflict``, ``ungrounded``, ``opposite``, ``swapped``, ...)."""
    text: str | None = None
    """The span's text."""
    start: int | None = None
    """Start of the span in the record's answer (None when the checker gave no position)."""
    end: int | None = None
    """End of the span in the record's answer."""
    evidence: str | None = None
    """What the evidence says in its place (``Asaph`` against ``Galileo``), when it says."""
    evidence_start: int | None = None
    """Start of ``evidence`` inside the claim's evidence sentence, when it lies there."""
    evidence_end: int | None = None
    """End of ``evidence`` inside the claim's evidence sentence."""


class FailingClaim(BaseModel):
    """A claim of the answer that was not supported, and the evidence it was held against."""

    model_config = ConfigDict(extra="forbid")

    detector: str
    """The detector that judged the claim."""
    claim: str
    """The claim's text."""
    label: str | None = None
    """The claim's label (``Neutral``, ``Contradiction``, ...)."""
    start: int | None = None
    """Start of the claim's span in the record's answer (None when unknown)."""
    end: int | None = None
    """End of the claim's span in the record's answer."""
    evidence: str | None = None
    """The evidence sentence the claim was held against (None when none was found)."""
    source: str | None = None
    """Where that sentence comes from: ``reference`` or ``history``."""
    issues: list[ClaimIssue] = Field(default_factory=list)
    """The spans that decided it, each with what the evidence says there."""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _shift(value: Any, offset: int) -> int | None:
    v = _int(value)
    return None if v is None else v + offset


def failing_claims(result: Any, answer: str | None = None) -> list[FailingClaim]:
    """The claims of a detector result that did not pass, read from ``details["claims"]``.

    Read generically: any detector whose details list claims (``claim`` or ``text``, ``label``,
    ``start`` / ``end``, ``evidence`` and ``issues``) gives them; one that does not gives none.
    Spans are moved into ``answer`` when the result was on a part of it (a streamed sentence).
    """
    details = getattr(result, "details", None) or {}
    claims = details.get("claims") if isinstance(details, dict) else None
    if not isinstance(claims, list):
        return []
    checked = getattr(result, "answer", None)
    offset = 0
    if answer and checked and checked != answer:
        offset = max(answer.find(checked), 0)
    out: list[FailingClaim] = []
    for c in claims:
        if not isinstance(c, dict) or c.get("label") in (None, "Entailment"):
            continue
        if c.get("kind") not in (None, "fact") and not c.get("issues"):
            continue  # talk around facts (greetings, framing) decides nothing
        text = c.get("claim") or c.get("text")
        if not isinstance(text, str):
            continue
        ev = c.get("evidence")
        sentence = ev.get("text") if isinstance(ev, dict) else ev if isinstance(ev, str) else None
        issues = []
        for i in c.get("issues") or []:
            if not isinstance(i, dict):
                continue
            iev = i.get("evidence")
            ev_start = ev_end = None
            if isinstance(iev, dict) and isinstance(ev, dict):
                same = iev.get("reference") == ev.get("reference")
                base, s, e = _int(ev.get("start")), _int(iev.get("start")), _int(iev.get("end"))
                if same and base is not None and s is not None and e is not None:
                    ev_start, ev_end = s - base, e - base
            issues.append(
                ClaimIssue(
                    relation=i.get("relation"),
                    text=i.get("text"),
                    start=_shift(i.get("start"), offset),
                    end=_shift(i.get("end"), offset),
                    evidence=iev.get("text") if isinstance(iev, dict) else iev,
                    evidence_start=ev_start,
                    evidence_end=ev_end,
                )
            )
        out.append(
            FailingClaim(
                detector=str(getattr(result, "detector", "") or ""),
                claim=text,
                label=c.get("label"),
                start=_shift(c.get("start"), offset),
                end=_shift(c.get("end"), offset),
                evidence=sentence if isinstance(sentence, str) else None,
                source=ev.get("source") if isinstance(ev, dict) else None,
                issues=issues,
            )
        )
    return out


class AttemptRecord(BaseModel):
    """One attempt of a guarded run: the answer, its verdict, and what the guard did next."""

    model_config = ConfigDict(extra="forbid")

    number: int
    """1 for the chain's own answer, then 2, 3, ..."""
    policy: str | None = None
    """The policy that produced this answer (None for the chain's own)."""
    followed_by: str | None = None
    """What the guard did after this answer: the next attempt's policy, or how it ended
    (``fallback``, ``filter``, ``rejected``); None when this answer was released."""
    answer: str | None = None
    """The answer (None when the chain raised)."""
    passing: bool | None = None
    """Whether the answer passed its check (None when it was not checked)."""
    reason: str = ""
    """Why: the verdict's reason and the failing detectors' explanations, or the chain's
    error."""
    claims: list[FailingClaim] = Field(default_factory=list)
    """The claims that failed, with their spans and evidence sentences."""


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
    reason: str = ""
    """Why the record has its verdict, never empty: the error of a failed record, else the
    verdict's reason and the failing claims as the detector explains them."""
    claims: list[FailingClaim] = Field(default_factory=list)
    """The claims of ``answer`` that failed, with their spans and evidence sentences."""
    attempts: list[AttemptRecord] = Field(default_factory=list)
    """For a guarded run, every attempt in order (the model's first answer included); empty
    for an answer the handler checked itself."""

    @model_validator(mode="before")
    @classmethod
    def _clean_strings(cls, data: Any) -> Any:
        # A lone surrogate cannot be encoded as UTF-8: file sinks would refuse the record.
        return _clean(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _a_reason(self) -> ScoreRecord:
        if not self.reason.strip():
            self.reason = (
                self.error
                or self.explanation
                or (f"{self.status}: {self.label}" if self.label else self.status)
            )
        return self


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
