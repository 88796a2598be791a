"""Lexical similarity: token F1 and ROUGE-L, no model."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from truthguard.errors import InvalidInputError
from truthguard.similarity.base import SimilarityBackend

__all__ = ["LexicalSimilarity", "rouge_l", "token_f1"]

_TOKEN = re.compile(r"\w+", re.UNICODE)


def _tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    return _TOKEN.findall(text)


def _f_measure(a: str, b: str, overlap: Callable[[list[str], list[str]], int]) -> float:
    """F1 of precision and recall of the ``overlap`` of two texts' tokens."""
    ta, tb = _tokens(a), _tokens(b)
    if not ta and not tb:
        return 1.0
    if not ta or not tb:
        return 0.0
    common = overlap(ta, tb)
    if common == 0:
        return 0.0
    p, r = common / len(ta), common / len(tb)
    return 2 * p * r / (p + r)


def _shared(a: list[str], b: list[str]) -> int:
    return sum((Counter(a) & Counter(b)).values())


def token_f1(a: str, b: str) -> float:
    """SQuAD-style token F1 between two texts (1.0 for two empty texts)."""
    return _f_measure(a, b, _shared)


def _lcs(a: list[str], b: list[str]) -> int:
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_l(a: str, b: str) -> float:
    """ROUGE-L F-measure over lower-cased word tokens."""
    return _f_measure(a, b, _lcs)


class LexicalSimilarity(SimilarityBackend):
    """Token F1 (``metric="f1"``) or ROUGE-L (``metric="rouge_l"``); no model needed."""

    def __init__(self, metric: str = "f1") -> None:
        funcs = {"f1": token_f1, "rouge_l": rouge_l}
        if metric not in funcs:
            raise InvalidInputError("metric", f"expected one of {sorted(funcs)}, got {metric!r}")
        self.metric = metric
        self.name = f"lexical-{metric}"
        self._func = funcs[metric]

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(a), len(b)), dtype=np.float32)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                out[i, j] = self._func(x, y)
        return out

    def pairwise(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise InvalidInputError("b", f"expected {len(a)} texts to pair with a, got {len(b)}")
        return np.array([self._func(x, y) for x, y in zip(a, b, strict=True)], dtype=np.float32)
