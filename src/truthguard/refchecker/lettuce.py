"""LettuceDetect (KRLabs, https://github.com/KRLabsOrg/LettuceDetect, MIT) as a claim checker.

LettuceDetect is a ModernBERT token classifier that labels the tokens of an answer which its
passages do not support. It is run through the authors' own package (``pip install
lettucedetect``): ``HallucinationDetector(method="transformer")`` writes its question-and-passages
prompt, splits passages that do not fit ``max_length`` into groups (each token's probability
the highest over the groups) and returns character spans with a confidence.

Its output is spans of an answer, not a label per claim. The checker gives it the claims joined
by spaces as the answer (with the local extractor, the answer's own sentences and clauses), the
references' segments as its passages and the question, then maps each span back onto the claims
it overlaps: a claim with a span is Neutral (LettuceDetect does not tell a contradiction from an
unsupported statement), its support ``1 -`` the highest confidence of its spans, and each span
is an issue of the claim with claim offsets (the detector moves them onto the answer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field

from truthguard.errors import ConfigurationError
from truthguard.refchecker.checkers import ClaimVerdict
from truthguard.refchecker.extractors import Claim
from truthguard.refchecker.nli import (
    WeightsChecker,
    needs,
    offline,
    once,
    one_folder_message,
    source_of,
)
from truthguard.refchecker.retrieval import Retrieval

__all__ = [
    "LETTUCE_MODELS",
    "LettuceDetectChecker",
    "join_claims",
    "lettuce_missing_message",
    "spans_to_verdicts",
]

LETTUCE_MODELS: dict[str, str] = {
    "lettucedetect": "KRLabsOrg/lettucedect-base-modernbert-en-v1",
    "lettucedetect-large": "KRLabsOrg/lettucedect-large-modernbert-en-v1",
}
"""The names :class:`LettuceDetectChecker` accepts, and their hub ids."""


def lettuce_missing_message(model: str) -> str:
    """The one error a machine without the weights gets, saying how to fetch them."""
    return one_folder_message("LettuceDetect", model, LETTUCE_MODELS, "LettuceDetectChecker")


def _load(model: str, device: str, max_length: int) -> Any:
    """The package's detector."""
    with needs("LettuceDetectChecker", "open-checkers", "the lettucedetect package"):
        from lettucedetect.models.inference import HallucinationDetector
    source, local = source_of(model, "LettuceDetect", LETTUCE_MODELS)
    try:
        return HallucinationDetector(
            method="transformer",
            model_path=source,
            max_length=max_length,
            device=device,
            local_files_only=local or offline(),
        )
    except Exception as e:  # OSError, ValueError, HTTP errors: all mean "not available here"
        if local:
            raise ConfigurationError(
                f"could not load the LettuceDetect model from the folder {source!r}: "
                f"{type(e).__name__}: {e}. The folder must hold a token-classification model "
                "and its tokenizer (what `huggingface-cli download --local-dir` writes)."
            ) from e
        raise ConfigurationError(lettuce_missing_message(model)) from e


def join_claims(claims: list[Claim]) -> tuple[str, list[tuple[int, int]]]:
    """The claims as one answer, joined by spaces, and each claim's (start, end) in it."""
    parts, bounds, at = [], [], 0
    for c in claims:
        bounds.append((at, at + len(c.text)))
        parts.append(c.text)
        at += len(c.text) + 1
    return " ".join(parts), bounds


class LettuceDetectChecker(WeightsChecker):
    """LettuceDetect labels the unsupported tokens; claims holding them are Neutral.

    Example:
        >>> checker = LettuceDetectChecker(model="./lettucedetect")  # loads on the first check
        >>> # RefChecker(checker="lettucedetect") builds the hub version
    """

    model: str | Path = "lettucedetect"
    """``"lettucedetect"`` (base) / ``"lettucedetect-large"``, a hub id or a local folder."""
    max_length: int = Field(default=4096, ge=16)
    """Token limit of prompt and answer; passages beyond it are checked in groups."""
    min_confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    """Spans under this confidence are dropped (the package's ``min_confidence``)."""

    def detector(self) -> Any:
        """The package's ``HallucinationDetector`` (loaded on first use, cached per process)."""
        return once(_load, str(self.model), self.device, self.max_length)

    def check(
        self, claims: list[Claim], retrieval: Retrieval, question: str = ""
    ) -> list[ClaimVerdict]:
        if not claims:
            return []
        answer, bounds = join_claims(claims)
        passages = [s.text for s in retrieval.segments]
        spans = self.detector().predict(
            context=passages,
            answer=answer,
            question=question or None,
            output_format="spans",
            min_confidence=self.min_confidence,
        )
        return spans_to_verdicts(spans, claims, bounds)


def spans_to_verdicts(
    spans: list[dict[str, Any]], claims: list[Claim], bounds: list[tuple[int, int]]
) -> list[ClaimVerdict]:
    """Each claim's verdict from the answer spans overlapping its ``bounds`` (the part of a span
    inside the claim is its issue, in claim offsets)."""
    out = []
    for (lo, hi), claim in zip(bounds, claims, strict=True):
        issues = []
        for sp in spans:
            start, end = max(lo, int(sp["start"])), min(hi, int(sp["end"]))
            if start >= end:
                continue
            issues.append(
                {
                    "kind": "content",
                    "relation": "ungrounded",
                    "start": start - lo,
                    "end": end - lo,
                    "text": claim.text[start - lo : end - lo],
                    "confidence": round(float(sp["confidence"]), 4),
                }
            )
        worst = max((i["confidence"] for i in issues), default=0.0)
        raw = {"spans": [[i["start"], i["end"], i["confidence"]] for i in issues]}
        out.append(
            ClaimVerdict(
                label="Neutral" if issues else "Entailment",
                support=1.0 - worst,
                raw=json.dumps(raw),
                mode="lettucedetect",
                issues=issues,
            )
        )
    return out
