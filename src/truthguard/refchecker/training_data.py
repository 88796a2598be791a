"""Labelled (evidence, claim) pairs for fine-tuning an NLI checker: the file format and HaluEval.

The file ``truthguard train-checker`` reads is JSON Lines, one pair per line::

    {"claim": "The bridge reopens in May.", "evidence": "The bridge will reopen in May.",
     "label": "entailment"}

``label`` is ``entailment`` (the evidence supports the claim), ``neutral`` (it says nothing
either way) or ``contradiction`` (it says otherwise). ``evidence`` is the premise, as
``NLIChecker`` pairs them: a passage of the references (about 80 words), not a whole document.

:func:`halueval_pairs` builds such pairs from HaluEval's development half. Each output is split
into claims as ``RefChecker``'s local extractor splits answers, and each claim gets the reference
passage sharing most of its words: every claim of a correct output is ``entailment``; of a
hallucinated output only the claim the reference supports least is kept, as ``contradiction``
(which of its sentences carries the error is not annotated); and one claim of each correct output
paired with a passage of another row is ``neutral``. The first ``skip`` rows of each task (the
ones ``truthguard bench halueval`` reports on) are never used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from truthguard.errors import InvalidInputError

__all__ = [
    "LABELS",
    "TrainingPair",
    "halueval_pairs",
    "read_pairs",
    "write_pairs",
]

LABELS: tuple[str, ...] = ("contradiction", "entailment", "neutral")
"""The classes of a trained checker, in the order of its outputs (``id2label``)."""

NLILabel = Literal["contradiction", "entailment", "neutral"]

_WORD = re.compile(r"\w+")


class TrainingPair(BaseModel):
    """One labelled (evidence, claim) pair.

    Example:
        >>> TrainingPair(claim="It rains.", evidence="Rain falls all day.", label="entailment")
        TrainingPair(claim='It rains.', evidence='Rain falls all day.', label='entailment')
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    claim: str
    """The hypothesis: one claim of an answer."""
    evidence: str
    """The premise: the reference passage the claim is judged against."""
    label: NLILabel
    """``entailment``, ``neutral`` or ``contradiction``."""

    @field_validator("claim", "evidence")
    @classmethod
    def _has_text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    @field_validator("label", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.strip().lower() if isinstance(v, str) else v


def read_pairs(path: str | Path) -> list[TrainingPair]:
    """The pairs of a JSONL file (blank lines skipped).

    Raises:
        InvalidInputError: A line is not a JSON object of ``claim``, ``evidence`` and ``label``;
            the field names the line (``DATA line 3: label``) and what is wrong.
    """
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError("data", f"no file at {path}")
    pairs = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = f"{path.name} line {n}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise InvalidInputError(where, f"not JSON: {e}") from e
            if not isinstance(row, dict):
                raise InvalidInputError(where, "expected an object with claim, evidence, label")
            try:
                pairs.append(TrainingPair.model_validate(row))
            except ValidationError as e:
                err = e.errors()[0]
                field = ".".join(str(p) for p in err.get("loc", ())) or "row"
                msg = "is not an accepted field" if err["type"] == "extra_forbidden" else err["msg"]
                raise InvalidInputError(f"{where}: {field}", msg) from e
    if not pairs:
        raise InvalidInputError("data", f"{path} holds no pairs")
    return pairs


def write_pairs(pairs: Iterable[TrainingPair], path: str | Path) -> int:
    """Write pairs as JSONL; returns how many."""
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        for p in pairs:
            f.write(json.dumps(p.model_dump(), ensure_ascii=False) + "\n")
            n += 1
    return n


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 or w.isdigit()}


def _best_passage(claim: str, passages: Sequence[str]) -> tuple[str, float]:
    """The passage sharing the largest share of the claim's words, and that share."""
    words = _words(claim)
    best, share = passages[0], -1.0
    for p in passages:
        s = len(words & _words(p)) / max(len(words), 1)
        if s > share:
            best, share = p, s
    return best, share


def _claims(question: str, answer: str) -> list[str]:
    from truthguard.refchecker.extractors import LocalExtractor

    claims = LocalExtractor().extract(question, answer)
    facts = [c.text for c in claims if c.kind == "fact"]
    return facts or [c.text for c in claims]


def halueval_pairs(
    data_dir: str | Path | None = None,
    *,
    tasks: Sequence[str] | None = None,
    skip: int = 200,
    rows: int | None = None,
    segment_size: int = 80,
) -> list[TrainingPair]:
    """Pairs from HaluEval rows ``skip`` onwards of each task (see the module docstring).

    Args:
        data_dir: Where the ``halueval`` folder is (default: ``$TRUTHGUARD_DATA_DIR``, else
            HaluEval's public files are downloaded).
        tasks: Which of ``qa``, ``dialogue``, ``summarization`` (default: all three).
        skip: Rows per task left out (``bench halueval`` evaluates the first 200).
        rows: Rows per task used after ``skip`` (default: all).
        segment_size: Most words per evidence passage (``RefChecker.segment_size``).
    """
    from truthguard.bench.halueval import item_inputs
    from truthguard.datasets import HALUEVAL_TASKS, load_halueval
    from truthguard.refchecker.segment import segment_references

    if skip < 0:
        raise InvalidInputError("skip", "must be >= 0")
    if rows is not None and rows < 1:
        raise InvalidInputError("rows", "must be at least 1")
    chosen = list(tasks or HALUEVAL_TASKS)
    for task in chosen:
        if task not in HALUEVAL_TASKS:
            raise InvalidInputError("tasks", f"unknown task {task!r}; use {list(HALUEVAL_TASKS)}")
    pairs: list[TrainingPair] = []
    for task in chosen:
        items = load_halueval(task, data_dir, limit=None if rows is None else skip + rows)[skip:]
        passages = [
            [s.text for s in segment_references([it.reference], size=segment_size)] or [""]
            for it in items
        ]
        for k, item in enumerate(items):
            mine = passages[k]
            if not any(p.strip() for p in mine):
                continue
            for kind, inp in item_inputs(item):
                claims = [c for c in _claims(inp["question"], inp["answer"]) if c.strip()]
                if not claims:
                    continue
                placed = [(c, *_best_passage(c, mine)) for c in claims]
                if kind == "right":
                    pairs += [
                        TrainingPair(claim=c, evidence=p, label="entailment") for c, p, _ in placed
                    ]
                    other = passages[(k + 1) % len(items)]
                    if len(items) > 1 and any(x.strip() for x in other):
                        evidence, _ = _best_passage(claims[0], other)
                        pairs.append(
                            TrainingPair(claim=claims[0], evidence=evidence, label="neutral")
                        )
                else:
                    c, p, _ = min(placed, key=lambda x: x[2])
                    pairs.append(TrainingPair(claim=c, evidence=p, label="contradiction"))
    return pairs
