"""Lexical similarity: token F1 and ROUGE-L."""

from __future__ import annotations

import numpy as np
import pytest

from truthguard.errors import InvalidInputError
from truthguard.similarity import (
    LexicalSimilarity,
    rouge_l,
    token_f1,
)


def test_token_f1_hand_computed():
    # common tokens: "the", "cat" -> p = 2/3, r = 2/4, f1 = 2pr/(p+r) = 4/7
    assert token_f1("the cat sat", "The cat, the dog") == pytest.approx(
        2 * (2 / 3) * 0.5 / (2 / 3 + 0.5)
    )
    assert token_f1("", "") == 1.0
    assert token_f1("a", "") == 0.0


def test_rouge_l_hand_computed():
    # LCS("a b c d", "a c d e") = 3 -> p = r = 3/4
    assert rouge_l("a b c d", "a c d e") == pytest.approx(0.75)
    assert rouge_l("x y", "z") == 0.0


def test_lexical_backend_matrix_and_pairwise():
    sim = LexicalSimilarity("rouge_l")
    m = sim.matrix(["a b", "c"], ["a b", "c", "d"])
    assert m.shape == (2, 3)
    assert m[0, 0] == 1.0 and m[1, 1] == 1.0 and m[1, 2] == 0.0
    np.testing.assert_allclose(sim.pairwise(["a b", "c"], ["a b", "d"]), [1.0, 0.0])
    with pytest.raises(InvalidInputError, match="metric"):
        LexicalSimilarity("bleu")
    with pytest.raises(InvalidInputError, match="b"):
        sim.pairwise(["a"], [])
