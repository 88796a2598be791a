"""fewl_formula against hand-computed values (Algorithm 1, eq. 4; appendix D.11)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from truthguard.errors import InvalidInputError
from truthguard.fewl import FEWLBreakdown, fewl_formula

# N = 2 references, R = 2 pairs, K = 2 neighbours.
TRUTH = [0.8, 0.4]
CO = [[0.9, 0.5], [0.3, 0.6]]  # max: 0.9, 0.6
IW = [[0.2, 0.4], [0.7, 0.1]]  # max: 0.4, 0.7  ->  r = [0.5, -0.1]
NB = [[0.1, 0.3], [0.5, 0.5]]  # means: 0.2, 0.5
LAMBDA = [0.6456563062, 0.3543436938]  # softmax([0.5, -0.1])


def test_expertise_weights_are_softmax_of_r():
    b = fewl_formula(TRUTH, CO, IW, NB)
    assert b.expertise == pytest.approx([0.5, -0.1])
    assert b.weights == pytest.approx(LAMBDA)
    assert b.weights.sum() == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("divergence", "full", "no_penalty", "uniform"),
    [
        # TV: g*(v) = tanh(v)/2, f*(u) = u
        ("tv", -0.010920749017, 0.153952370354, -0.020542048751),
        # JS: g*(v) = log(2/(1+e^-v)), f*(u) = -log(2-e^u)
        ("js", -0.046142407054, 0.146818339167, -0.055390626552),
        # KL: g*(v) = v, f*(u) = e^(u-1)
        ("kl", -0.198798550670, 0.329131261245, -0.227929811915),
    ],
)
def test_hand_computed_scores(divergence, full, no_penalty, uniform):
    assert fewl_formula(TRUTH, CO, IW, NB, divergence=divergence).score == pytest.approx(full)
    off = fewl_formula(TRUTH, CO, IW, NB, divergence=divergence, penalty=False)
    assert off.score == pytest.approx(no_penalty)
    assert off.laziness is None and off.neighbor_mean is None
    uni = fewl_formula(TRUTH, None, None, NB, divergence=divergence, expertise="uniform")
    assert uni.score == pytest.approx(uniform)
    assert uni.weights == pytest.approx([0.5, 0.5])
    assert uni.expertise is None


def test_tv_terms_by_hand():
    b = fewl_formula(TRUTH, CO, IW, NB)
    assert b.truthfulness == pytest.approx(
        [np.tanh(LAMBDA[0] * 0.8) / 2, np.tanh(LAMBDA[1] * 0.4) / 2]
    )
    assert b.laziness == pytest.approx([np.tanh(0.2) / 2, np.tanh(0.5) / 2])
    assert b.neighbor_mean == pytest.approx([0.2, 0.5])
    assert b.score == pytest.approx(np.mean(b.truthfulness - b.laziness))


@pytest.mark.parametrize(
    ("divergence", "expected"),
    [("tv", 0.179724557357), ("js", 0.157168892356), ("kl", 0.227633447259)],
)
def test_single_reference(divergence, expected):
    # N = 1: lambda = 1 whatever r is; score = g*(0.7) - f*(g*(mean(0.2, 0.3)))
    b = fewl_formula([0.7], [[0.1, 0.9]], [[0.5, 0.2]], [[0.2, 0.3]], divergence=divergence)
    assert b.weights == pytest.approx([1.0])
    assert b.score == pytest.approx(expected)
    assert b.n_references == 1


def test_equal_r_gives_uniform_weights():
    co = [[0.9, 0.1], [0.2, 0.9], [0.9, 0.9]]
    iw = [[0.3, 0.0], [0.3, 0.1], [0.1, 0.3]]  # r = 0.6 for every reference
    b = fewl_formula([0.5, 0.6, 0.7], co, iw, [[0.1], [0.2], [0.3]])
    assert b.weights == pytest.approx([1 / 3] * 3)
    uni = fewl_formula([0.5, 0.6, 0.7], None, None, [[0.1], [0.2], [0.3]], expertise="uniform")
    assert b.score == pytest.approx(uni.score)


def test_given_weights_are_normalised():
    b = fewl_formula(TRUTH, None, None, NB, expertise="given", weights=[3.0, 1.0])
    assert b.weights == pytest.approx([0.75, 0.25])
    expected = np.mean(
        [np.tanh(0.75 * 0.8) / 2 - np.tanh(0.2) / 2, np.tanh(0.25 * 0.4) / 2 - np.tanh(0.5) / 2]
    )
    assert b.score == pytest.approx(expected)


def test_softmax_is_stable_for_large_r():
    b = fewl_formula([0.5, 0.5], [[800.0], [0.0]], [[0.0], [0.0]], None, penalty=False)
    assert b.weights == pytest.approx([1.0, 0.0])


def test_js_stays_finite_for_large_similarities():
    b = fewl_formula([50.0], None, None, [[50.0]], divergence="js", expertise="uniform")
    assert np.isfinite(b.score)


def test_to_dict_is_json_ready():
    import json

    d = fewl_formula(TRUTH, CO, IW, NB).to_dict()
    assert json.loads(json.dumps(d))["weights"] == pytest.approx(LAMBDA)
    assert set(d) >= {"score", "weights", "expertise", "truthfulness", "laziness"}
    assert isinstance(fewl_formula(TRUTH, CO, IW, NB), FEWLBreakdown)


@pytest.mark.parametrize(
    ("args", "kwargs", "field"),
    [
        (([[0.1]], CO, IW, NB), {}, "truth_sim"),
        (([], None, None, None), {"expertise": "uniform", "penalty": False}, "truth_sim"),
        ((TRUTH, [0.9, 0.6], IW, NB), {}, "co_sim"),
        ((TRUTH, CO, [[0.1, 0.2]], NB), {}, "iw_sim"),
        ((TRUTH, None, IW, NB), {}, "co_sim"),
        ((TRUTH, [[], []], [[], []], NB), {}, "co_sim"),
        ((TRUTH, CO, IW, [[0.1, 0.2]]), {}, "neighbor_sim"),
        ((TRUTH, CO, IW, [[], []]), {}, "neighbor_sim"),
        ((TRUTH, CO, IW, None), {}, "neighbor_sim"),
        (([0.1, float("nan")], CO, IW, NB), {}, "truth_sim"),
        ((TRUTH, CO, IW, NB), {"divergence": "hellinger"}, "divergence"),
        ((TRUTH, CO, IW, NB), {"expertise": "oracle"}, "expertise"),
        ((TRUTH, CO, IW, NB), {"expertise": "given"}, "weights"),
        ((TRUTH, CO, IW, NB), {"expertise": "given", "weights": [1.0]}, "weights"),
        ((TRUTH, CO, IW, NB), {"expertise": "given", "weights": [1.0, -1.0]}, "weights"),
        ((["a", "b"], CO, IW, NB), {}, "truth_sim"),
        ((["0.8", "0.4"], CO, IW, NB), {}, "truth_sim"),
        ((TRUTH, CO, IW, NB), {"penalty": "no"}, "penalty"),
        ((TRUTH, CO, IW, NB), {"penalty": 0}, "penalty"),
        ((TRUTH, CO, IW, NB), {"divergence": ["tv"]}, "divergence"),
        ((TRUTH, CO, IW, NB), {"expertise": {"uniform": 1}}, "expertise"),
    ],
)
def test_invalid_inputs_name_the_field(args, kwargs, field):
    with pytest.raises(InvalidInputError) as e:
        fewl_formula(*args, **kwargs)
    assert e.value.field == field


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        # r = 1e308 - (-1e308) overflows; softmax of an infinite r was NaN
        (([0.5, 0.5], [[1.7e308], [-1.7e308]], [[-1.7e308], [1.7e308]], [[0.1], [0.2]]), {}),
        # KL laziness e^(u-1) overflowed to inf, so the score was -inf
        (([0.5], None, None, [[1e5]]), {"divergence": "kl", "expertise": "uniform"}),
        # the mean of huge neighbour similarities overflowed
        (([0.5], None, None, [[1.7e308, 1.7e308]]), {"divergence": "kl", "expertise": "uniform"}),
        # given weights whose sum overflows became 0 / inf
        (([0.5, 0.5], None, None, [[0.1], [0.1]]), {"expertise": "given", "weights": [1e308] * 2}),
    ],
)
def test_finite_input_never_gives_nan_or_inf(args, kwargs):
    b = fewl_formula(*args, **kwargs)
    assert np.isfinite(b.score)
    assert np.all(np.isfinite(b.weights)) and b.weights.sum() == pytest.approx(1.0)


_FINITE = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    n=st.integers(1, 4),
    k=st.integers(1, 3),
    data=st.data(),
    divergence=st.sampled_from(["tv", "js", "kl"]),
    penalty=st.booleans(),
)
def test_any_finite_input_gives_a_finite_score(n, k, data, divergence, penalty):
    def arr(shape: tuple[int, ...]) -> np.ndarray:
        return data.draw(hnp.arrays(np.float64, shape, elements=_FINITE))

    b = fewl_formula(
        arr((n,)), arr((n, k)), arr((n, k)), arr((n, k)), divergence=divergence, penalty=penalty
    )
    assert np.isfinite(b.score)
    assert np.all(np.isfinite(b.weights))


def test_public_exports_are_locked():
    import truthguard.fewl as fewl

    assert sorted(fewl.__all__) == [
        "DIVERGENCES",
        "EXPERTISE_MODES",
        "FEWL",
        "FEWLBreakdown",
        "IWCOPairs",
        "PROMPT_VERSION",
        "fewl_formula",
        "parse_iwco_pairs",
    ]
    assert all(hasattr(fewl, name) for name in fewl.__all__)
