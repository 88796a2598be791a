"""NLIChecker: a tiny cross-encoder built in the test (no download), fact check, offline error."""

from __future__ import annotations

import pytest

from doubles import tiny_nli
from truthguard.errors import ConfigurationError
from truthguard.refchecker import NLIChecker, RefChecker
from truthguard.result import Label

REF = "Bi Sheng made movable type from baked clay in the eleventh century."
Q = "Who made movable type?"


def test_nli_judges_the_relation_and_the_fact_check_guards_numbers(tmp_path, embedder):
    rc = RefChecker(checker=NLIChecker(model=tiny_nli(tmp_path, "entailment")))
    good = rc.invoke({"question": Q, "answer": REF, "references": [REF]})
    assert good.label == Label.FACTUAL
    claim = good.details["claims"][0]
    assert claim["mode"] == "nli" and claim["support"] > 0.9
    wrong = REF.replace("eleventh", "ninth")
    bad = rc.invoke({"question": Q, "answer": wrong, "references": [REF]})
    claim = bad.details["claims"][0]
    assert claim["label"] == "Contradiction"  # the model says entailment; the year says no
    assert wrong[claim["issues"][0]["start"] : claim["issues"][0]["end"]] == "ninth"
    unchecked = RefChecker(checker=NLIChecker(model=str(tmp_path), grounding=False))
    assert unchecked.invoke({"question": Q, "answer": wrong, "references": [REF]}).label == (
        Label.FACTUAL
    )


def test_nli_contradiction_label(tmp_path, embedder):
    rc = RefChecker(checker=NLIChecker(model=tiny_nli(tmp_path, "contradiction")))
    r = rc.invoke({"question": Q, "answer": REF, "references": [REF]})
    assert r.details["claims"][0]["label"] == "Contradiction" and r.label == Label.HALLUCINATED


def test_missing_model_error_names_it_and_says_how_to_get_it(monkeypatch, embedder):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    checker = NLIChecker(model="someone/not-downloaded-nli-model")  # nothing loads yet
    rc = RefChecker(checker=checker)
    with pytest.raises(ConfigurationError) as e:
        rc.invoke({"question": Q, "answer": REF, "references": [REF]})
    message = str(e.value)
    assert "someone/not-downloaded-nli-model" in message and "hf download" in message
    with pytest.raises(ValueError):
        NLIChecker(model=" ")


def test_a_local_path_is_named_as_a_folder_never_as_a_hub_id(tmp_path, embedder):
    missing = NLIChecker(model=str(tmp_path / "no-such-model"))
    with pytest.raises(ConfigurationError) as e:
        RefChecker(checker=missing).invoke({"question": Q, "answer": REF, "references": [REF]})
    assert "there is no folder at" in str(e.value) and "hub" not in str(e.value)
    empty = tmp_path / "empty-model"
    empty.mkdir()
    with pytest.raises(ConfigurationError) as e:
        RefChecker(checker=NLIChecker(model=str(empty))).invoke(
            {"question": Q, "answer": REF, "references": [REF]}
        )
    message = str(e.value)
    assert "local folder" in message and "config.json" in message
    assert "hub" not in message and "hf download" not in message.split("(what")[0]
