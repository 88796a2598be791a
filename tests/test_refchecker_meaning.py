import json

import numpy as np
import pytest

from truthguard.refchecker import RefChecker
from truthguard.refchecker.checkers import LocalChecker
from truthguard.refchecker.meaning import CLOSEST, MeaningModel, _candidates, pair_features


def _unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=float)
    return v / np.linalg.norm(v)


def test_a_claim_is_held_against_its_closest_sentence_and_each_two_of_the_closest():
    claim = _unit(1, 1, 0, 0)
    sentences = np.array([_unit(1, 0, 0, 0), _unit(0, 1, 0, 0), _unit(0, 0, 1, 0)])
    read = _candidates(sentences, np.argsort(-(sentences @ claim), kind="stable")[:CLOSEST])
    # the closest sentence, then the three pairs of the three closest
    assert len(read) == 1 + 3
    assert np.allclose(read[0], sentences[0])
    joined = read[1]  # the first two sentences read together say what the claim says
    assert np.allclose(joined, claim)
    assert np.allclose(np.linalg.norm(read, axis=1), 1.0)
    assert _candidates(np.zeros((0, 4)), np.array([], dtype=int)).shape == (0, 4)


def test_pair_features_read_each_candidate_and_the_best_cosines():
    claim = _unit(1, 0, 0)
    sentences = np.array([_unit(0, 1, 0), _unit(1, 1, 0)])
    f = pair_features(claim, sentences)
    assert f.shape == (2, 2 * 3 + 1 + CLOSEST)  # the closest sentence, and the two together
    best = sentences[1]
    assert np.allclose(f[0, :3], claim * best) and np.allclose(f[0, 3:6], np.abs(claim - best))
    assert np.isclose(f[0, 6], best @ claim)
    # two sentences: the third cosine is 0, on every row
    assert np.allclose(f[:, 7:], [best @ claim, 0.0, 0.0])
    assert np.allclose(pair_features(claim, np.zeros((0, 3))), 0.0)


def test_fit_weighs_what_separates_supported_claims_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    rows, ys = [], []
    for k in range(60):
        claim = _unit(*rng.normal(size=4))
        if k % 2:  # supported: a sentence close to the claim
            sentence = _unit(*(claim + 0.1 * rng.normal(size=4)))
        else:
            sentence = _unit(*rng.normal(size=4))
        rows.append(pair_features(claim, sentence[None, :]))
        ys.append(bool(k % 2))
    model = MeaningModel.fit_read(rows, ys, l2=1.0, fitted_on="toy")
    z = np.array([model.best(f) for f in rows])
    assert z[np.array(ys)].mean() > z[~np.array(ys)].mean() + 1.0
    assert model.dimension == 4
    model.save(tmp_path / "m.json")
    assert MeaningModel.load(tmp_path / "m.json") == model
    with pytest.raises(ValueError, match="both"):
        MeaningModel.fit(np.array([f[0] for f in rows]), [True] * len(rows))


def test_vectors_of_another_width_are_not_read():
    model = MeaningModel(weights=[0.0] * (2 * 4 + 1 + CLOSEST), intercept=1.0)
    assert model.log_odds(np.ones(4) / 2, np.ones((1, 4)) / 2) == pytest.approx(1.0)
    assert model.log_odds(np.ones(3), np.ones((1, 3))) is None


def test_the_packaged_model_reads_the_packaged_minilm():
    model = MeaningModel.default()
    assert model.dimension == 384
    assert "claims_train" in model.fitted_on


REFS = [
    "The Selwyn Tower is 312 metres tall and has 78 floors. It was completed in 1998 after "
    "four years of work, and its observation deck on the 75th floor opened to the public in "
    "1999."
]


def _meanings(result) -> dict[str, float | None]:
    out = {}
    for c in result.details["claims"]:
        raw = json.loads(c["checker_output"]) if c.get("checker_output") else {}
        out[c["claim"]] = raw.get("meaning")
    return out


def test_the_checker_reads_the_meaning_of_each_fact_claim_against_its_evidence(embedder):
    ask = {"question": "Tell me about the Selwyn Tower.", "references": REFS}
    said = "With 78 storeys, the Selwyn Tower reaches a height of 312 m."
    added = "The Selwyn Tower was designed by a Danish firm that also built the city's airport."
    meant = _meanings(RefChecker().invoke({**ask, "answer": f"{said} {added}"}))
    assert meant[said] > 0 > meant[added]
    # a claim too short to mean much alone is left to its facts
    short = _meanings(RefChecker().invoke({**ask, "answer": "It has 78 floors."}))
    assert short == {"It has 78 floors.": None}
    # off: nothing is read
    off = RefChecker(checker=LocalChecker(meaning=False)).invoke({**ask, "answer": said})
    assert _meanings(off) == {said: None}
