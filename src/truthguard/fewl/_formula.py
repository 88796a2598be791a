"""The FEWL score as a pure function of similarity arrays (no I/O, no models).

Implements Algorithm 1 of the FEWL paper (sections 2.1 to 2.3) with the aggregating functions of
the variational form of three f-divergences (total variation, section 2.3; Jensen-Shannon and KL,
appendix D.11 of the second version).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from truthguard.errors import InvalidInputError

__all__ = ["DIVERGENCES", "EXPERTISE_MODES", "FEWLBreakdown", "fewl_formula"]

Divergence = Literal["tv", "js", "kl"]
Expertise = Literal["estimated", "uniform", "given"]

Conjugate = Callable[[np.ndarray], np.ndarray]

_FMAX = float(np.finfo(np.float64).max)
_EXP_MAX = float(np.log(_FMAX))


def _finite(a: np.ndarray) -> np.ndarray:
    """``a`` with overflowed values clipped to the largest float (inputs are finite: no NaN)."""
    return np.clip(a, -_FMAX, _FMAX)


def _tv_g(v: np.ndarray) -> np.ndarray:
    return np.tanh(v) / 2.0


def _tv_f(u: np.ndarray) -> np.ndarray:
    return u


def _js_g(v: np.ndarray) -> np.ndarray:
    # log(2 / (1 + e^-v)) written with logaddexp so large |v| cannot overflow.
    return np.log(2.0) - np.logaddexp(0.0, -v)


def _js_f(u: np.ndarray) -> np.ndarray:
    return -np.log(2.0 - np.exp(u))


def _js_fg(v: np.ndarray) -> np.ndarray:
    # f*(g*(v)) simplifies to v + log(1 + e^-v) - log 2: finite where the literal form rounds
    # 2 - e^u to zero.
    return v + np.logaddexp(0.0, -v) - np.log(2.0)


def _kl_g(v: np.ndarray) -> np.ndarray:
    return v


def _kl_f(u: np.ndarray) -> np.ndarray:
    # Capped below exp's overflow point, so a huge finite similarity stays finite.
    return np.exp(np.minimum(u - 1.0, _EXP_MAX))


#: ``divergence -> (g*, f*)``: the activation and the conjugate of each f-divergence.
DIVERGENCES: dict[str, tuple[Conjugate, Conjugate]] = {
    "tv": (_tv_g, _tv_f),
    "js": (_js_g, _js_f),
    "kl": (_kl_g, _kl_f),
}
# f*(g*(v)) in closed form where composing the two numerically loses precision.
_COMPOSED: dict[str, Conjugate] = {"js": _js_fg}
#: How the expertise weights lambda are obtained.
EXPERTISE_MODES = ("estimated", "uniform", "given")


@dataclass(frozen=True)
class FEWLBreakdown:
    """Every intermediate quantity of one FEWL score.

    Attributes:
        score: The FEWL score, ``mean_i(truthfulness[i] - laziness[i])``; higher is better.
        weights: Expertise weights lambda_i, shape ``(N,)``, summing to 1.
        expertise: ``r_i = max_k co_sim[i] - max_k iw_sim[i]``, shape ``(N,)``; None unless
            ``expertise="estimated"``.
        truthfulness: Per-reference ``g*(lambda_i * truth_sim[i])``, shape ``(N,)``.
        laziness: Per-reference ``f*(g*(mean_k neighbor_sim[i]))``, shape ``(N,)``; None when the
            penalty is off.
        truth_sim: The input similarities of the answer to each reference answer.
        neighbor_mean: ``mean_k neighbor_sim[i]``, shape ``(N,)``; None when the penalty is off.
        divergence: ``"tv"``, ``"js"`` or ``"kl"``.
        expertise_mode: ``"estimated"``, ``"uniform"`` or ``"given"``.
        penalty: Whether the laziness penalty was applied.
    """

    score: float
    weights: np.ndarray
    expertise: np.ndarray | None
    truthfulness: np.ndarray
    laziness: np.ndarray | None
    truth_sim: np.ndarray
    neighbor_mean: np.ndarray | None
    divergence: str
    expertise_mode: str
    penalty: bool

    @property
    def n_references(self) -> int:
        return int(self.weights.shape[0])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view (lists of floats), for ``DetectionResult.details``."""

        def _list(a: np.ndarray | None) -> list[float] | None:
            return None if a is None else [float(x) for x in a]

        return {
            "score": float(self.score),
            "weights": _list(self.weights),
            "expertise": _list(self.expertise),
            "truthfulness": _list(self.truthfulness),
            "laziness": _list(self.laziness),
            "truth_sim": _list(self.truth_sim),
            "neighbor_mean": _list(self.neighbor_mean),
            "divergence": self.divergence,
            "expertise_mode": self.expertise_mode,
            "penalty": self.penalty,
        }


def _array(value: Any, field: str, ndim: int) -> np.ndarray:
    try:
        raw = np.asarray(value)
        if raw.dtype.kind not in "iuf":  # strings, booleans, objects are not similarities
            raise TypeError(raw.dtype)
        arr = raw.astype(np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidInputError(field, f"expected numbers, got {type(value).__name__}") from e
    if arr.ndim != ndim:
        shape = "(N,)" if ndim == 1 else "(N, R)" if field != "neighbor_sim" else "(N, K)"
        raise InvalidInputError(field, f"expected shape {shape}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(field, "contains NaN or infinite values")
    return arr


def _softmax(r: np.ndarray) -> np.ndarray:
    e = np.exp(r - r.max())
    return e / e.sum()


def _weights(
    expertise: str,
    n: int,
    co_sim: Any,
    iw_sim: Any,
    weights: Sequence[float] | np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray | None]:
    if expertise == "uniform":
        return np.full(n, 1.0 / n), None
    if expertise == "given":
        if weights is None:
            raise InvalidInputError("weights", "required when expertise='given'")
        w = _array(weights, "weights", 1)
        if w.shape[0] != n:
            raise InvalidInputError("weights", f"expected {n} weights (one per reference)")
        if np.any(w < 0) or w.max() <= 0:
            raise InvalidInputError("weights", "must be non-negative with a positive sum")
        w = w / w.max()  # scaled first so the sum cannot overflow
        return w / w.sum(), None
    if co_sim is None or iw_sim is None:
        raise InvalidInputError(
            "co_sim" if co_sim is None else "iw_sim", "required when expertise='estimated'"
        )
    co = _array(co_sim, "co_sim", 2)
    iw = _array(iw_sim, "iw_sim", 2)
    for name, arr in (("co_sim", co), ("iw_sim", iw)):
        if arr.shape[0] != n:
            raise InvalidInputError(name, f"expected {n} rows (one per reference), got {arr.shape}")
        if arr.shape[1] < 1:
            raise InvalidInputError(name, "needs at least one corrected / wrong answer (R >= 1)")
    r = _finite(co.max(axis=1) - iw.max(axis=1))
    return _softmax(r), r


def fewl_formula(
    truth_sim: Any,
    co_sim: Any,
    iw_sim: Any,
    neighbor_sim: Any,
    *,
    divergence: Divergence = "tv",
    expertise: Expertise = "estimated",
    penalty: bool = True,
    weights: Sequence[float] | np.ndarray | None = None,
) -> FEWLBreakdown:
    """The FEWL score of one answer from its similarity arrays (Algorithm 1, eq. 4).

    ``score = (1/N) * sum_i [ g*(lambda_i * truth_sim[i]) - f*(g*(mean_k neighbor_sim[i])) ]``,
    the second term dropped when ``penalty=False``.

    Args:
        truth_sim: Shape ``(N,)``: Similarity(y, h_i(x)) of the answer with each reference answer.
        co_sim: Shape ``(N, R)``: Similarity(h_i(x), CO_k); only read when
            ``expertise="estimated"`` (None is accepted otherwise).
        iw_sim: Shape ``(N, R)``: Similarity(h_i(x), IW_k); same rule as ``co_sim``.
        neighbor_sim: Shape ``(N, K)``: Similarity(y, h_i(x_knn_k)); only read when ``penalty``.
        divergence: ``"tv"`` (g*(v) = tanh(v)/2, f*(u) = u), ``"js"``
            (g*(v) = log(2/(1+e^-v)), f*(u) = -log(2-e^u)) or ``"kl"`` (g*(v) = v, f*(u) = e^(u-1)).
        expertise: ``"estimated"``: lambda = softmax(r) with
            r_i = max_k co_sim[i] - max_k iw_sim[i]; ``"uniform"``: lambda_i = 1/N; ``"given"``:
            ``weights`` normalised to sum to 1.
        penalty: Subtract the laziness penalty.
        weights: Expertise weights for ``expertise="given"``, shape ``(N,)``.

    Returns:
        The :class:`FEWLBreakdown`.

    Raises:
        InvalidInputError: An array has the wrong shape, is empty, holds NaN / inf or
            non-numbers, or an option is unknown or of the wrong type. Finite input always gives
            a finite score (terms that overflow are clipped to the largest float).

    Example:
        >>> b = fewl_formula([0.9], None, None, [[0.2, 0.4]], expertise="uniform")
        >>> round(b.score, 4)
        0.2125
    """
    if not isinstance(divergence, str) or divergence not in DIVERGENCES:
        raise InvalidInputError("divergence", f"expected one of {sorted(DIVERGENCES)}")
    if not isinstance(expertise, str) or expertise not in EXPERTISE_MODES:
        raise InvalidInputError("expertise", f"expected one of {list(EXPERTISE_MODES)}")
    if not isinstance(penalty, bool | np.bool_):  # "no" is truthy: never guess
        raise InvalidInputError("penalty", f"expected True or False, got {penalty!r}")
    penalty = bool(penalty)
    with np.errstate(over="ignore"):  # overflow is clipped to finite values below
        return _formula(
            truth_sim, co_sim, iw_sim, neighbor_sim, divergence, expertise, penalty, weights
        )


def _formula(
    truth_sim: Any,
    co_sim: Any,
    iw_sim: Any,
    neighbor_sim: Any,
    divergence: str,
    expertise: str,
    penalty: bool,
    weights: Sequence[float] | np.ndarray | None,
) -> FEWLBreakdown:
    truth = _array(truth_sim, "truth_sim", 1)
    n = truth.shape[0]
    if n < 1:
        raise InvalidInputError("truth_sim", "needs at least one reference answer (N >= 1)")
    g, f = DIVERGENCES[divergence]
    lam, r = _weights(expertise, n, co_sim, iw_sim, weights)
    truthfulness = _finite(g(lam * truth))
    laziness: np.ndarray | None = None
    neighbor_mean: np.ndarray | None = None
    if penalty:
        if neighbor_sim is None:
            raise InvalidInputError("neighbor_sim", "required when penalty=True")
        nb = _array(neighbor_sim, "neighbor_sim", 2)
        if nb.shape[0] != n:
            raise InvalidInputError(
                "neighbor_sim", f"expected {n} rows (one per reference), got {nb.shape}"
            )
        if nb.shape[1] < 1:
            raise InvalidInputError("neighbor_sim", "needs at least one neighbour (K >= 1)")
        neighbor_mean = (nb / nb.shape[1]).sum(axis=1)  # divided first: the sum cannot overflow
        composed = _COMPOSED.get(divergence)
        laziness = _finite(composed(neighbor_mean) if composed else f(g(neighbor_mean)))
    per_ref = _finite(truthfulness - laziness) if laziness is not None else truthfulness
    return FEWLBreakdown(
        score=float((per_ref / n).sum()),
        weights=lam,
        expertise=r,
        truthfulness=truthfulness,
        laziness=laziness,
        truth_sim=truth,
        neighbor_mean=neighbor_mean,
        divergence=divergence,
        expertise_mode=expertise,
        penalty=penalty,
    )
