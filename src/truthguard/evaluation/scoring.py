"""Scoring rows with detectors, shared by both engines (no engine of its own).

:func:`ascore_rows` scores one batch of rows; the local engine
(:mod:`truthguard.evaluation.engine`) runs it batch after batch, the Ray engine
(:mod:`truthguard.evaluation.ray_engine`) inside Ray Data actors, so both give the same result
rows. :class:`Job` is what one run still has to score, handed to either engine.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from truthguard.evaluation.config import EvaluateConfig
from truthguard.evaluation.io import ResultWriter
from truthguard.result import DetectionResult

__all__ = ["Job", "ascore_rows", "detector_fingerprint", "result_row"]


@dataclass
class Job:
    """The rows one run still has to score, and where their results go."""

    config: EvaluateConfig
    """The run's configuration (detectors, store, batch size, Ray set-up)."""
    base_dir: Path
    """Directory that relative paths in the configuration are resolved against."""
    rows: list[dict[str, Any]]
    """Rows with at least one detector left to score."""
    todo: dict[str, set[str]]
    """Detector names left to score, by row id."""
    fingerprints: dict[str, str]
    """Each detector's :func:`detector_fingerprint`, written into its result rows."""
    writer: ResultWriter
    """Appends result rows to ``results.jsonl``."""
    bar: Any
    """Progress bar, advanced by the number of result rows written."""


def detector_fingerprint(config: EvaluateConfig, name: str) -> str:
    """Hash of what makes a detector's scores (its spec minus threshold and calibration)."""
    spec = config.detectors[name].model_dump(mode="json", exclude={"threshold", "calibration"})
    return hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def result_row(
    name: str, fingerprint: str, row: dict[str, Any], result: DetectionResult | BaseException
) -> dict[str, Any]:
    """One output row: the input's id and text, the verdict, usage and the claim details."""
    if isinstance(result, BaseException):
        # An input the detector refuses, or an error it raised: an explicit invalid verdict.
        reason = f"{type(result).__name__}: {result}"
        result = DetectionResult.invalid(name, reason)
    out = {
        "id": row["id"],
        "index": row["index"],
        "detector": name,
        "detector_type": result.detector,
        "fingerprint": fingerprint,
        "question": row["question"],
        "answer": row["answer"],
        "contexts": row["contexts"],
        "gold": row["gold"],
        "score": result.score,
        "label": result.label.value,
        "passing": result.passing,
        "threshold": result.threshold,
        "explanation": result.explanation,
        "invalid_reason": result.invalid_reason,
        "raw_output": result.raw_output,
        "usage": result.usage.model_dump(),
        "details": result.details,
        "fields": row["fields"],
    }
    # Round-trip through JSON so both engines hand back exactly the same plain values.
    return json.loads(json.dumps(out, ensure_ascii=False, default=_jsonable))


def _detector_input(detector: Any, row: dict[str, Any]) -> dict[str, Any]:
    accepted = detector.input_model.model_fields
    inp: dict[str, Any] = {"question": row["question"], "answer": row["answer"]}
    if row["contexts"]:
        inp["contexts"] = row["contexts"]
    for key, value in row["fields"].items():
        if key in accepted and key not in inp and value is not None:
            inp[key] = value
    return inp


async def ascore_rows(
    detectors: dict[str, Any],
    fingerprints: dict[str, str],
    rows: list[dict[str, Any]],
    todo: dict[str, set[str]] | None = None,
) -> list[dict[str, Any]]:
    """Score ``rows`` with every detector (only the names in ``todo[row id]`` when given)."""

    async def one(name: str, detector: Any) -> list[dict[str, Any]]:
        batch = [r for r in rows if todo is None or name in todo.get(r["id"], ())]
        if not batch:
            return []
        results = await detector.abatch(
            [_detector_input(detector, r) for r in batch], return_exceptions=True
        )
        return [
            result_row(name, fingerprints[name], r, res)
            for r, res in zip(batch, results, strict=True)
        ]

    groups = await asyncio.gather(*(one(n, d) for n, d in detectors.items()))
    return [r for g in groups for r in g]
