"""Choosing a cascade's uncertainty band on labelled answers.

A :class:`~truthguard.cascade.CascadeChecker` escalates the answers whose local score lies in its
band ``[lo, hi]`` (and those a signal escalates whatever their score); the local check decides
the rest. A wider band escalates more and leaves the local check only its clearer cases: fewer
answers decided locally (*coverage*), more of them right. :func:`band_table` gives every band's
coverage and accuracy of the local decisions on labelled rows, :func:`choose_band` picks one for a
target coverage ("decide at least 70% locally": the most accurate band that does) or a target
accuracy ("what the local check decides alone must be >= 95% right": the band that decides most
while reaching it), and :func:`tradeoff_curve` the best accuracy at each coverage, which the HTML
report draws.

A cascade of more stages (:func:`fit_stages`) gets its bands one stage after another: the first
stage's on every answer, each next stage's on the answers the bands before it send on, each for
its own target (a share of the answers that reach it, or an accuracy).

Accuracy is the balanced accuracy of the local decisions by default (the mean of correct answers
passed and hallucinated ones rejected among the answers decided locally), so a band cannot look
good by leaving the local check only the easy factual answers; ``metric="accuracy"`` counts
every decided answer alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.result import DetectionResult

__all__ = [
    "BandTable",
    "Metric",
    "band_rows",
    "band_table",
    "choose_band",
    "fit_cascade",
    "fit_stages",
    "result_table",
    "tradeoff_curve",
]

Metric = Literal["balanced_accuracy", "accuracy"]

_MAX_GROUPS = 1200
"""Most distinct score values a band may start or end at; scores are rounded to fewer places
until they fit (every pair of them is weighed)."""

_CURVE_STEPS = 20
"""Points of the trade-off curve: the best band at coverage >= 5%, 10%, ..., 100%."""


def band_rows(rows: Sequence[Mapping[str, Any]]) -> tuple[list[DetectionResult], list[bool]]:
    """The local results and gold labels of ``truthguard evaluate`` result rows (rows without a
    gold label are left out).

    Rows of the local detector are read as they are. Rows of a cascade are read as their local
    stage's (``details["cascade"]["local"]``): its score and verdict, and its details where the
    local stage decided (an escalated row keeps only the second stage's, so the signals other
    than the band cannot be read from it).
    """
    results: list[DetectionResult] = []
    gold: list[bool] = []
    for row in rows:
        if row.get("gold") is None:
            continue
        gold.append(row["gold"] == "hallucinated")
        details = row.get("details") or {}
        cascade = details.get("cascade")
        if isinstance(cascade, Mapping) and isinstance(cascade.get("local"), Mapping):
            local = cascade["local"]
            decided = str(details.get("decided_by", ""))
            row = {
                "detector": local.get("detector"),
                "score": local.get("score"),
                "label": local.get("label"),
                "passing": local.get("passing"),
                "details": details if decided.startswith("local") else {},
            }
        results.append(
            DetectionResult(
                detector=str(row.get("detector") or "local"),
                score=row.get("score"),
                label=row.get("label") or "invalid",
                passing=row.get("passing"),
                details=row.get("details") or {},
            )
        )
    return results, gold


def result_table(
    results: Sequence[DetectionResult], hallucinated: Sequence[bool], escalate_on: Sequence[str]
) -> BandTable:
    """:func:`band_table` of local results, the answers the signals of ``escalate_on`` (other
    than ``band``) escalate forced; without ``band`` no score is escalated."""
    from truthguard.cascade import escalation_reasons

    signals = [x for x in escalate_on if x != "band"]
    scores = [r.score if "band" in escalate_on else None for r in results]
    passed = [bool(r.passing if r.passing is not None else r.label == "factual") for r in results]
    forced = [bool(escalation_reasons(r, band=None, escalate_on=signals)) for r in results]
    return band_table(scores, hallucinated, passed, forced=forced)


def fit_cascade(
    results: Sequence[DetectionResult],
    hallucinated: Sequence[bool],
    *,
    coverage: float | None = None,
    accuracy: float | None = None,
    metric: Metric = "balanced_accuracy",
    escalate_on: Sequence[str] | None = None,
    try_signals: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The band, and which optional signals to escalate on, for one target.

    Every combination of ``try_signals`` (default
    :data:`~truthguard.cascade.OPTIONAL_SIGNALS`) is added to ``escalate_on`` (default: the
    cascade's) in turn, the band chosen for each with :func:`choose_band`, and the best kept:
    for a coverage target the most accurate, for an accuracy target the one deciding most.

    Returns:
        :func:`choose_band`'s point with ``escalate_on`` (pass both to ``CascadeChecker``),
        ``curve`` (:func:`tradeoff_curve` with those signals) and ``n``.

    Raises:
        ConfigurationError: No combination reaches the target.
    """
    from itertools import combinations

    from truthguard.cascade import OPTIONAL_SIGNALS, CascadeChecker

    base = list(escalate_on or CascadeChecker.model_fields["escalate_on"].default)
    extra = [x for x in (OPTIONAL_SIGNALS if try_signals is None else try_signals) if x not in base]
    best: tuple[tuple[float, float], dict[str, Any], BandTable] | None = None
    first_error: ConfigurationError | None = None
    for k in range(len(extra) + 1):
        for added in combinations(extra, k):
            signals = [*base, *added]
            table = result_table(results, hallucinated, signals)
            try:
                chosen = choose_band(table, coverage=coverage, accuracy=accuracy, metric=metric)
            except ConfigurationError as e:
                first_error = first_error or e
                continue
            value = chosen[metric] if chosen[metric] is not None else -1.0
            rank = (
                (value, chosen["coverage"]) if coverage is not None else (chosen["coverage"], value)
            )
            if best is None or rank > best[0]:
                best = (rank, {**chosen, "escalate_on": signals}, table)
    if best is None:
        assert first_error is not None
        raise first_error
    _, chosen, table = best
    return {**chosen, "n": table.n, "curve": tradeoff_curve(table, metric=metric)}


def fit_stages(
    results: Callable[[int, list[int]], Sequence[DetectionResult]],
    hallucinated: Sequence[bool],
    stages: int,
    *,
    coverage: Sequence[float | None] | None = None,
    accuracy: Sequence[float | None] | None = None,
    escalate_on: Sequence[Sequence[str] | None] | None = None,
    try_signals: Sequence[str] | None = None,
    metric: Metric = "balanced_accuracy",
) -> list[dict[str, Any]]:
    """The band and signals of every stage of a cascade but the last, chosen in order.

    Stage ``k``'s band is chosen with :func:`fit_cascade` on the answers that the bands chosen
    before it send on (every answer for the first stage), for its own target: ``coverage[k]``
    (the share of the answers reaching it that it decides) or ``accuracy[k]``. ``results(k,
    indices)`` gives stage ``k``'s results of those answers (so a stage runs only on what
    reaches it). A stage whose target is out of reach ends the fitting: its entry holds
    ``error``, and the stages after it get none.

    Returns:
        One entry per stage but the last: :func:`fit_cascade`'s point (``band``,
        ``escalate_on``, ``coverage`` of the answers that reached it, ...) with ``reached``
        (how many answers reached it) and ``sent_on`` (how many it escalates), or ``error``.
    """
    fitted = stages - 1
    if fitted < 1:
        raise InvalidInputError("stages", "a cascade has at least two stages")
    targets = [
        (None if coverage is None else coverage[k], None if accuracy is None else accuracy[k])
        for k in range(fitted)
    ]
    from truthguard.cascade import escalation_reasons

    reach = list(range(len(hallucinated)))
    out: list[dict[str, Any]] = []
    for k, (cov, acc) in enumerate(targets):
        if not reach:
            break
        got = list(results(k, reach))
        gold = [hallucinated[i] for i in reach]
        try:
            chosen = fit_cascade(
                got,
                gold,
                coverage=cov,
                accuracy=acc,
                metric=metric,
                escalate_on=None if escalate_on is None else escalate_on[k],
                try_signals=try_signals,
            )
        except ConfigurationError as e:
            out.append({"error": str(e), "reached": len(reach)})
            break
        band = None if chosen["band"] is None else tuple(chosen["band"])
        reach = [
            i
            for i, r in zip(reach, got, strict=True)
            if escalation_reasons(r, band=band, escalate_on=chosen["escalate_on"])
        ]
        out.append({**chosen, "reached": len(gold), "sent_on": len(reach)})
    return out


def _check_lengths(n: int, **columns: Sequence[Any]) -> None:
    for name, column in columns.items():
        if len(column) != n:
            raise InvalidInputError(name, f"needs one value per score ({n}), got {len(column)}")


@dataclass(frozen=True)
class BandTable:
    """Every band's figures on labelled rows (:func:`band_table`), one entry per band; entry 0
    is the empty band (no score escalated). Figures are over the answers decided locally;
    NaN where there are none of a kind."""

    lo: np.ndarray
    """Lowest score in each band (NaN for the empty band)."""
    hi: np.ndarray
    """Highest score in each band (NaN for the empty band)."""
    decided: np.ndarray
    """Answers decided locally."""
    n: int
    """Labelled answers in all."""
    accuracy: np.ndarray
    """Share of the local decisions that are right."""
    correct_passed: np.ndarray
    """Share of the factual answers decided locally that pass."""
    hallucinated_rejected: np.ndarray
    """Share of the hallucinated answers decided locally that are rejected."""
    balanced_accuracy: np.ndarray
    """Mean of ``correct_passed`` and ``hallucinated_rejected``; NaN when a kind the rows hold
    is not decided locally at all (a band must not look right by leaving the local check one
    kind only), the one rate when the rows hold one kind only."""

    @property
    def coverage(self) -> np.ndarray:
        """Share of all answers decided locally."""
        return self.decided / self.n

    def point(self, i: int) -> dict[str, Any]:
        """Band ``i`` as plain values (None for NaN)."""

        def v(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        band = None if math.isnan(self.lo[i]) else [float(self.lo[i]), float(self.hi[i])]
        return {
            "band": band,
            "coverage": float(self.coverage[i]),
            "decided": int(self.decided[i]),
            "accuracy": v(self.accuracy[i]),
            "balanced_accuracy": v(self.balanced_accuracy[i]),
            "correct_passed": v(self.correct_passed[i]),
            "hallucinated_rejected": v(self.hallucinated_rejected[i]),
        }


def band_table(
    scores: Sequence[float | None],
    hallucinated: Sequence[bool],
    passed: Sequence[bool],
    *,
    forced: Sequence[bool] | None = None,
) -> BandTable:
    """Every band's figures on labelled rows.

    Args:
        scores: The local stage's score of each answer (None: never in a band).
        hallucinated: Gold label of each answer.
        passed: The local verdict (True: released as factual).
        forced: Answers escalated whatever their score (a signal fired).
    """
    n = len(scores)
    if n == 0:
        raise InvalidInputError("scores", "needs at least one labelled answer")
    forced = [False] * n if forced is None else list(forced)
    _check_lengths(n, hallucinated=hallucinated, passed=passed, forced=forced)
    y = np.asarray(hallucinated, dtype=bool)
    ok = np.asarray(passed, dtype=bool) != y  # the local verdict is right
    free = ~np.asarray(forced, dtype=bool)
    has_score = np.array([v is not None for v in scores]) & free
    s = np.array([0.0 if v is None else float(v) for v in scores])
    fixed = free & ~has_score  # always decided locally: free rows without a score
    base = np.array(
        [(fixed & ~y).sum(), (fixed & ~y & ok).sum(), (fixed & y).sum(), (fixed & y & ok).sum()],
        dtype=float,
    )
    idx = np.flatnonzero(has_score)
    values = s[idx]
    places = 6
    keys = np.round(values, places)
    while len(np.unique(keys)) > _MAX_GROUPS and places > 1:
        places -= 1
        keys = np.round(values, places)
    uniq, group = np.unique(keys, return_inverse=True)
    m = len(uniq)
    counts = np.zeros((m, 4))
    yy, kk = y[idx], ok[idx]
    np.add.at(counts[:, 0], group, ~yy)
    np.add.at(counts[:, 1], group, ~yy & kk)
    np.add.at(counts[:, 2], group, yy)
    np.add.at(counts[:, 3], group, yy & kk)
    lo_raw = np.full(m, np.inf)
    hi_raw = np.full(m, -np.inf)
    np.minimum.at(lo_raw, group, values)
    np.maximum.at(hi_raw, group, values)
    total = counts.sum(axis=0) + base
    prefix = np.vstack([np.zeros(4), np.cumsum(counts, axis=0)])
    a, b = np.triu_indices(m)  # the band covers groups a..b
    kept = np.vstack([total, total - (prefix[b + 1] - prefix[a])])
    factual, factual_ok, halluc, halluc_ok = kept.T
    decided = factual + halluc
    with np.errstate(invalid="ignore", divide="ignore"):
        passed = np.where(factual > 0, factual_ok / factual, np.nan)
        rejected = np.where(halluc > 0, halluc_ok / halluc, np.nan)
    if y.all() or not y.any():  # one kind in the rows: its rate is the measure
        balanced = rejected if y.all() else passed
    else:  # NaN where one kind is not decided locally
        balanced = (passed + rejected) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return BandTable(
            lo=np.concatenate([[np.nan], lo_raw[a]]),
            hi=np.concatenate([[np.nan], hi_raw[b]]),
            decided=decided,
            n=n,
            accuracy=np.where(decided > 0, (factual_ok + halluc_ok) / decided, np.nan),
            correct_passed=passed,
            hallucinated_rejected=rejected,
            balanced_accuracy=balanced,
        )


def _metric(table: BandTable, metric: Metric) -> np.ndarray:
    values = table.balanced_accuracy if metric == "balanced_accuracy" else table.accuracy
    return np.where(np.isnan(values), -1.0, values)


def choose_band(
    table: BandTable,
    *,
    coverage: float | None = None,
    accuracy: float | None = None,
    metric: Metric = "balanced_accuracy",
) -> dict[str, Any]:
    """The band of ``table`` meeting one target, as :meth:`BandTable.point` gives it.

    ``coverage``: the most accurate band deciding at least that share locally (ties: the one
    deciding more, then the narrower). ``accuracy``: the band deciding the most locally whose
    ``metric`` reaches it (ties: the more accurate, then the narrower).

    Raises:
        InvalidInputError: Not exactly one target, or one outside (0, 1].
        ConfigurationError: No band reaches the target (the message gives the best one).
    """
    if (coverage is None) == (accuracy is None):
        raise InvalidInputError("coverage", "give exactly one of coverage or accuracy")
    if metric not in ("balanced_accuracy", "accuracy"):
        raise InvalidInputError("metric", f"expected balanced_accuracy or accuracy, got {metric!r}")
    name = "coverage" if coverage is not None else "accuracy"
    target = coverage if coverage is not None else accuracy
    if target is None or not 0 < target <= 1:
        raise InvalidInputError(name, "must be in (0, 1]")
    values = _metric(table, metric)
    cover = table.coverage
    width = np.nan_to_num(table.hi - table.lo, nan=0.0)
    if coverage is not None:
        ok = cover >= coverage - 1e-12
        if not ok.any():
            raise ConfigurationError(
                f"no band decides {coverage:.0%} locally: the signals escalate the rest "
                f"(at most {cover.max():.1%} decided locally)"
            )
        order = np.lexsort((width, -cover, -values))  # best metric, then coverage, then narrow
    else:
        assert accuracy is not None
        ok = (values >= accuracy - 1e-12) & (table.decided > 0)
        if not ok.any():
            raise ConfigurationError(
                f"no band makes the local decisions reach {metric} >= {accuracy:.3f} "
                f"(best {values.max():.3f})"
            )
        order = np.lexsort((width, -values, -cover))  # most decided, then metric, then narrow
    best = int(next(i for i in order if ok[i]))
    return {**table.point(best), "metric": metric, "target": {name: target}}


def tradeoff_curve(
    table: BandTable, *, metric: Metric = "balanced_accuracy"
) -> list[dict[str, Any]]:
    """The best band at each coverage of 5%, 10%, ... 100% that some band reaches (and at the
    widest coverage the signals leave), in increasing coverage: the trade-off the report
    draws."""
    top = float(table.coverage.max())
    steps = [k / _CURVE_STEPS for k in range(1, _CURVE_STEPS + 1)]
    levels = sorted({*(x for x in steps if x <= top), top})
    keep = ("band", "coverage", "decided", "accuracy", "balanced_accuracy")
    curve: list[dict[str, Any]] = []
    for x in levels:
        point = {
            k: v for k, v in choose_band(table, coverage=x, metric=metric).items() if k in keep
        }
        if not curve or curve[-1] != point:  # one band can be the best at several levels
            curve.append(point)
    return curve
