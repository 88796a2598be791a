"""The logistic regression the fitted models use: the answer-level
:class:`~truthguard.refchecker.decision.GroundingDecision`, the claim-level
:class:`~truthguard.refchecker.support.SupportModel`, and the two readings of a sentence
embedding (:class:`~truthguard.refchecker.remarks.RemarkModel`,
:class:`~truthguard.refchecker.meaning.MeaningModel`); and :class:`SavedModel`, how a fitted
model is packaged, loaded and saved."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np
from pydantic import BaseModel, ConfigDict, field_validator

__all__ = [
    "FeatureModel",
    "SavedModel",
    "balanced_weights",
    "fit_folded",
    "fit_logistic",
    "fit_named",
]


def fit_logistic(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """An L2-penalised logistic regression by Newton's method on standardised columns.

    Returns ``(coefficients, means, scales, intercept)``; the intercept is not penalised.
    """
    means = x.mean(axis=0)
    scales = x.std(axis=0)
    scales[scales < 1e-9] = 1.0
    xs = np.hstack([np.ones((len(x), 1)), (x - means) / scales])
    beta = np.zeros(xs.shape[1])
    penalty = np.full(xs.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(xs @ beta, -30, 30)))
        grad = xs.T @ (w * (p - y)) + penalty * beta
        hess = (xs * (w * p * (1 - p))[:, None]).T @ xs + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta[1:], means, scales, float(beta[0])


def fit_folded(
    x: Any, y: Sequence[bool], l2: float, *, rows: str, classes: str
) -> tuple[list[float], float]:
    """:func:`fit_logistic` on raw columns, each class weighted to half the total, with the
    standardisation folded into the weights: ``x @ weights + intercept`` is the log-odds.

    ``rows`` and ``classes`` name the data in errors ("vectors must be one row per label",
    "need both remarks and facts to fit")."""
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    if xs.ndim != 2 or len(xs) != len(ys):
        raise ValueError(f"{rows} must be one row per label")
    if ys.min() == ys.max():
        raise ValueError(f"need both {classes} to fit")
    beta, means, scales, intercept = fit_logistic(xs, ys, balanced_weights(ys), l2)
    weights = beta / scales
    return (
        [round(float(w), 6) for w in weights],
        round(float(intercept - (weights * means).sum()), 6),
    )


class SavedModel(BaseModel):
    """A fitted model saved as JSON: the packaged one (:attr:`packaged`, a file of
    ``truthguard.refchecker``, read once per process), :meth:`load` and :meth:`save`."""

    packaged: ClassVar[str]
    """The packaged model's file name in ``truthguard.refchecker``."""
    indent: ClassVar[int | None] = None
    """JSON indentation of a saved file."""
    _defaults: ClassVar[dict[type, Any]] = {}

    @classmethod
    def default(cls) -> Self:
        """The packaged model."""
        if cls not in SavedModel._defaults:
            text = files("truthguard.refchecker").joinpath(cls.packaged).read_text("utf-8")
            SavedModel._defaults[cls] = cls.model_validate(json.loads(text))
        return SavedModel._defaults[cls]

    @classmethod
    def load(cls, path: str | Path) -> Self:
        return cls.model_validate(json.loads(Path(path).read_text("utf-8")))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.model_dump(), indent=self.indent) + "\n", "utf-8")


def balanced_weights(y: np.ndarray) -> np.ndarray:
    """Per-row weights giving each class half the total weight."""
    pos = y.sum()
    return np.where(y > 0, 0.5 / pos, 0.5 / (len(y) - pos)) * len(y)


class FeatureModel(BaseModel):
    """A logistic model over named features, each read on its standardised scale (the fields
    :func:`fit_named` returns)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    feature_names: ClassVar[tuple[str, ...]]
    """The features the model reads, in order."""

    coefficients: dict[str, float]
    """One weight per feature (on standardised features)."""
    means: dict[str, float]
    """Feature means used to standardise."""
    scales: dict[str, float]
    """Feature standard deviations used to standardise."""
    intercept: float
    """The model's intercept."""

    @field_validator("coefficients", "means", "scales")
    @classmethod
    def _all_features(cls, v: dict[str, float]) -> dict[str, float]:
        missing = [f for f in cls.feature_names if f not in v]
        if missing:
            raise ValueError(f"missing features {missing}")
        if not all(math.isfinite(x) for x in v.values()):
            raise ValueError("must be finite numbers")
        return v

    def logit(self, features: Mapping[str, float]) -> float:
        """The log-odds of one row of ``features``."""
        z = self.intercept
        for name in self.feature_names:
            x = (float(features[name]) - self.means[name]) / (self.scales[name] or 1.0)
            z += self.coefficients[name] * x
        return z


def fit_named(
    features: Sequence[Mapping[str, float]],
    positive: Sequence[bool],
    names: Sequence[str],
    *,
    weights: Sequence[float] | None = None,
    l2: float = 1.0,
    what: tuple[str, str, str] = ("labels", "positive", "negative"),
) -> dict[str, Any]:
    """Fit :func:`fit_logistic` on feature mappings; the fitted model's fields by name
    (``coefficients``, ``means``, ``scales``, ``intercept``). ``what`` names the labels and
    both classes in the errors (empty or misaligned rows, one class only)."""
    labels, pos, neg = what
    if len(features) != len(positive) or not features:
        raise ValueError(f"features and {labels} must be non-empty and align")
    y = np.asarray(positive, dtype=float)
    if y.min() == y.max():
        raise ValueError(f"need both {pos} and {neg} to fit")
    x = np.array([[float(f[n]) for n in names] for f in features])
    w = balanced_weights(y) if weights is None else np.asarray(weights, dtype=float)
    beta, means, scales, intercept = fit_logistic(x, y, w, l2)
    return {
        "coefficients": dict(zip(names, map(float, beta), strict=True)),
        "means": dict(zip(names, map(float, means), strict=True)),
        "scales": dict(zip(names, map(float, scales), strict=True)),
        "intercept": intercept,
    }
