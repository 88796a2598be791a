"""Combine detector results into one verdict (pure functions, no I/O).

Every guard decides with this rule: the core guards and the LlamaIndex ``GuardedQueryEngine``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from truthguard.errors import InvalidInputError
from truthguard.guard._models import GuardVerdict
from truthguard.result import NEVER_OPEN, DetectionResult, Label

__all__ = [
    "NEVER_OPEN",
    "OVER_CAPACITY",
    "check_detector_options",
    "check_threshold",
    "decide",
    "never_open",
    "normalise",
    "nothing_to_check",
    "refused_for_capacity",
    "unique_keys",
]


def never_open(result: DetectionResult) -> bool:
    """True for a no-verdict result that fail-open must not turn into a pass.

    Fail-open covers the checker being unavailable (a model outage, a time-out, an unparseable
    reply). A detector that raised on the input (a bad or hostile text, a bug) gives no such
    excuse: letting the answer through would make the error a pass.
    """
    return bool(result.details.get(NEVER_OPEN)) if result.details else False


OVER_CAPACITY = "over_capacity"
"""``details["error"]`` of a result whose check the guard's admission refused before any work
(:func:`truthguard.guard.check.over_capacity`)."""


def refused_for_capacity(result: DetectionResult) -> bool:
    """True for the ``invalid`` result of a check refused over capacity: no detector ran, so it
    says nothing about the answer."""
    return bool(result.details) and result.details.get("error") == OVER_CAPACITY


Combine = Literal["all", "any", "mean"]
OnError = Literal["open", "closed"]


def unique_keys(names: Iterable[str]) -> list[str]:
    """One key per detector, from their names: a repeated name gets ``#2``, ``#3``... appended.

    Example:
        >>> unique_keys(["refchecker", "fewl", "refchecker"])
        ['refchecker', 'fewl', 'refchecker#2']
    """
    seen: dict[str, int] = {}
    keys = []
    for name in names:
        n = seen.get(name, 0) + 1
        seen[name] = n
        keys.append(name if n == 1 else f"{name}#{n}")
    return keys


def check_detector_options(
    keys: Sequence[str],
    *,
    thresholds: Mapping[str, float],
    score_ranges: Mapping[str, tuple[float, float]],
    bounds: Mapping[str, tuple[float, float] | None] | None = None,
) -> None:
    """Refuse per-detector options that :func:`decide` could not use.

    Args:
        keys: The detector keys.
        thresholds: Native-scale threshold per key.
        score_ranges: Native score range per key.
        bounds: The range each key's detector scores lie in (``BaseDetector.score_bounds``);
            a threshold outside it would pass or fail every answer. Not applied to a key
            given its own ``score_ranges``.

    Raises:
        InvalidInputError: A threshold or score range names no detector key (the field is
            ``thresholds`` / ``score_ranges``), a threshold is not finite or lies outside its
            detector's bounds (``thresholds.<key>``), or a score range is not finite or not
            ``high > low`` (``score_ranges.<key>``).
    """
    known = set(keys)
    for name, mapping in (("thresholds", thresholds), ("score_ranges", score_ranges)):
        unknown = sorted(set(mapping) - known)
        if unknown:
            raise InvalidInputError(
                name, f"unknown detector keys {unknown}; known: {sorted(known)}"
            )
    for key, (lo, hi) in score_ranges.items():
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise InvalidInputError(f"score_ranges.{key}", "must be finite")
        if hi <= lo:
            raise InvalidInputError(f"score_ranges.{key}", "needs high > low")
    for key, t in thresholds.items():
        check_threshold(
            f"thresholds.{key}", t, None if key in score_ranges else (bounds or {}).get(key)
        )


def check_threshold(field: str, value: float, bounds: tuple[float, float] | None) -> None:
    """Refuse a threshold that is not finite or lies outside the detector's score ``bounds``.

    Raises:
        InvalidInputError: Naming ``field``.
    """
    if not math.isfinite(value):
        raise InvalidInputError(field, f"must be finite, got {value}")
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise InvalidInputError(
            field,
            f"must lie in [{bounds[0]:g}, {bounds[1]:g}], the range of the detector's scores, "
            f"got {value:g} (outside it every answer would pass or every one fail)",
        )


def normalise(score: float, lo: float, hi: float) -> float:
    """Map a native score onto [0, 1] with the range ``(lo, hi)``, clipped."""
    if hi <= lo:
        raise ValueError(f"score range must have hi > lo, got ({lo}, {hi})")
    return min(1.0, max(0.0, (score - lo) / (hi - lo)))


def nothing_to_check(result: DetectionResult) -> bool:
    """The detector found nothing in the answer that could be wrong: a refusal ("I don't know",
    "the context does not say") or only talk around facts. Such a result is unverifiable and
    passing."""
    return result.label == Label.UNVERIFIABLE and result.passing is True


def _passes(result: DetectionResult, threshold: float | None) -> bool | None:
    if nothing_to_check(result):
        return True
    if result.label in (Label.INVALID, Label.UNVERIFIABLE) or result.score is None:
        return None
    if threshold is not None:
        return result.score >= threshold
    if result.passing is not None:
        return result.passing
    return result.label == Label.FACTUAL


def decide(
    keys: Sequence[str],
    results: Sequence[DetectionResult],
    *,
    combine: Combine,
    thresholds: Mapping[str, float],
    ranges: Mapping[str, tuple[float, float]],
    mean_threshold: float,
    on_error: OnError,
    refusals: Literal["release", "retry"] = "release",
) -> GuardVerdict:
    """Decide whether an answer passes, given one result per detector key.

    A detector "gives no verdict" when its result is invalid (error, time-out, unparseable model
    output) or unverifiable. ``on_error="open"`` counts such a detector as passing (and, for
    ``mean``, leaves it out); ``"closed"`` counts it as failing (score 0 for ``mean``). A result
    flagged :data:`NEVER_OPEN` (the detector raised) fails in both modes. A check refused over
    capacity (:func:`refused_for_capacity`: no detector ran) counts as no verdict too, and the
    verdict says so (``over_capacity``, and a reason starting with the refusal's).

    An answer with nothing to check (:func:`nothing_to_check`: a refusal, or only greetings,
    questions and opinions) passes with ``refusals="release"``; ``"retry"`` counts it as a
    failure, so the policies try for an answer (say, after retrieving more passages).
    """
    scores: dict[str, float | None] = {}
    passes: dict[str, bool | None] = {}
    errors: dict[str, str] = {}
    hard: set[str] = set()
    for key, r in zip(keys, results, strict=True):
        ok = _passes(r, thresholds.get(key))
        if ok and refusals == "retry" and nothing_to_check(r):
            ok = False
        passes[key] = ok
        if ok is None:
            scores[key] = None
            errors[key] = r.invalid_reason or r.explanation or r.label.value
            if never_open(r):
                hard.add(key)
        elif r.score is None:  # nothing to check: no score to average
            scores[key] = 1.0 if ok else 0.0
        else:
            lo, hi = ranges.get(key, (0.0, 1.0))
            scores[key] = normalise(float(r.score), lo, hi)
    open_ = on_error == "open"
    effective = [(open_ and k not in hard) if p is None else p for k, p in passes.items()]
    given = [s for s in scores.values() if s is not None]
    mean = sum(given) / len(given) if given else None
    if combine == "all":
        passed = all(effective)
    elif combine == "any":
        passed = any(effective)
    else:
        pool = [
            0.0 if s is None else s
            for k, s in scores.items()
            if s is not None or not open_ or k in hard  # a raised error scores 0 even open
        ]
        passed = (sum(pool) / len(pool) >= mean_threshold) if pool else open_
    failed_open = bool(set(errors) - hard) and open_ and passed
    # refused before any work: no verdict on the answer, so no policy that redoes work applies
    over_capacity = bool(results) and all(refused_for_capacity(r) for r in results)
    reason = _reason(passed, combine, passes, errors, hard, mean, mean_threshold, on_error)
    if over_capacity:
        counted = "a pass (the guard fails open)" if open_ else "a failure (the guard fails closed)"
        refusal = results[0].invalid_reason or OVER_CAPACITY
        reason = (
            f"{'passed' if passed else 'rejected'}: {refusal}; no detector ran, counted as "
            f"{counted}"
        )
    return GuardVerdict(
        passing=passed,
        combine=combine,
        score=mean,
        scores=scores,
        passes=passes,
        errors=errors,
        failed_open=failed_open,
        over_capacity=over_capacity,
        decided_by={
            k: d
            for k, r in zip(keys, results, strict=True)
            if isinstance(d := r.details.get("decided_by"), str)
        },
        reason=reason,
    )


def _reason(
    passed: bool,
    combine: Combine,
    passes: Mapping[str, bool | None],
    errors: Mapping[str, str],
    hard: set[str],
    mean: float | None,
    mean_threshold: float,
    on_error: OnError,
) -> str:
    failing = [k for k, p in passes.items() if p is False]
    parts = []
    if combine == "mean":
        shown = "n/a" if mean is None else f"{mean:.3f}"
        parts.append(f"mean normalised score {shown} against {mean_threshold:.3f}")
    elif failing:
        parts.append(f"failed: {', '.join(failing)}")
    elif combine == "any" and passed:
        parts.append("a detector passed")
    elif not errors:
        parts.append("no detector failed")
    elif combine == "all" and len(errors) < len(passes):
        parts.append("the other detectors passed")
    unavailable = [k for k in errors if k not in hard]
    if unavailable:
        who = f"{', '.join(unavailable)} {'was' if len(unavailable) == 1 else 'were'}"
        counted = (
            "a pass (the guard fails open)"
            if on_error == "open"
            else "a failure (the guard fails closed)"
        )
        parts.append(f"{who} unavailable or gave no verdict, counted as {counted}")
    if hard:
        parts.append(f"{', '.join(sorted(hard))} raised on the input (never a pass)")
    return ("passed: " if passed else "rejected: ") + "; ".join(parts)
