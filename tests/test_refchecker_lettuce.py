"""LettuceDetect through the lettucedetect package itself: a tiny random ModernBERT token
classifier, the prompt it receives, its spans mapped onto claims and the answer."""

from __future__ import annotations

import json

import pytest

from doubles import tiny_lettuce
from truthguard.errors import ConfigurationError
from truthguard.refchecker import LettuceDetectChecker, RefChecker
from truthguard.refchecker.extractors import Claim
from truthguard.refchecker.lettuce import join_claims, spans_to_verdicts

pytest.importorskip("lettucedetect")

REF = "Bi Sheng made movable type from baked clay. He worked in the eleventh century."
Q = "Who made movable type?"
ANSWER = "Bi Sheng made movable type. He worked in the ninth century."
CLAIMS = ["Bi Sheng made movable type.", "He worked in the ninth century."]


def ask() -> dict:
    return {"question": Q, "answer": ANSWER, "references": [REF]}


def test_spans_are_cut_at_claim_bounds_in_claim_offsets():
    claims = [Claim(text=t) for t in CLAIMS]
    answer, bounds = join_claims(claims)
    assert answer == ANSWER and bounds == [(0, 27), (28, 59)]
    across = {"start": answer.index("type"), "end": answer.index("worked"), "confidence": 0.9}
    ninth = {"start": answer.index("ninth"), "end": answer.index(" century"), "confidence": 0.7}
    first, second = spans_to_verdicts([across, ninth], claims, bounds)
    assert first.label == "Neutral" and first.support == pytest.approx(0.1)
    assert [(i["start"], i["end"], i["text"]) for i in first.issues] == [(22, 27, "type.")]
    assert [i["text"] for i in second.issues] == ["He ", "ninth"]
    assert second.support == pytest.approx(0.1)
    (clean,) = spans_to_verdicts([ninth], claims[:1], bounds[:1])
    assert clean.label == "Entailment" and clean.support == 1.0 and clean.issues == []


def test_the_package_gets_the_question_passages_and_the_claims_as_the_answer(tmp_path, embedder):
    folder = tiny_lettuce(tmp_path / "l", [REF, Q, ANSWER], favour=1)
    checker = LettuceDetectChecker(model=folder)
    detector = checker.detector()
    tokenizer, net = detector.detector.tokenizer, detector.detector.model
    seen = []
    net.register_forward_pre_hook(
        lambda m, a, kw: seen.append(tokenizer.decode(kw["input_ids"][0])), with_kwargs=True
    )
    r = RefChecker(checker=checker).invoke(ask())
    prompt = (
        f"Briefly answer the following question:\n{Q}\nBear in mind that your response should "
        "be strictly based on the following 1 passages:\n"
        f"passage 1: {REF}\nIn case the passages do not contain the necessary information to "
        'answer the question, please reply with: "Unable to answer based on given passages."\n'
        "output:"
    )
    assert seen == [tokenizer.decode(tokenizer(prompt, ANSWER)["input_ids"])]
    # every answer token leans to "unsupported": one span over the whole answer, cut per claim
    claims = r.details["claims"]
    assert [c["mode"] for c in claims] == ["lettucedetect", "lettucedetect"]
    assert [c["label"] for c in claims] == ["Neutral", "Neutral"]
    for c, text in zip(claims, CLAIMS, strict=True):
        (issue,) = c["issues"]
        assert issue["text"] == text
        assert ANSWER[issue["start"] : issue["end"]] == text  # moved onto the answer
        assert c["support"] == pytest.approx(1 - issue["confidence"], abs=1e-3)
    assert r.label == "hallucinated"


def test_no_span_entails_every_claim(tmp_path, embedder):
    folder = tiny_lettuce(tmp_path / "l0", [REF, Q, ANSWER], favour=0)
    r = RefChecker(checker=LettuceDetectChecker(model=folder)).invoke(ask())
    claims = r.details["claims"]
    assert [c["label"] for c in claims] == ["Entailment", "Entailment"]
    assert all(json.loads(c["checker_output"]) == {"spans": []} for c in claims)


def test_a_name_builds_it_and_an_offline_machine_says_how_to_fetch_it(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rc = RefChecker(checker="lettucedetect")
    assert isinstance(rc.checker, LettuceDetectChecker)
    with pytest.raises(ConfigurationError) as e:
        rc.checker.detector()
    assert str(e.value) == (
        "the LettuceDetect model 'lettucedetect' is not on this machine and could not be "
        "downloaded. Where the Hugging Face hub is reachable, run `huggingface-cli download "
        "KRLabsOrg/lettucedect-base-modernbert-en-v1 --local-dir ./lettucedetect`, copy the "
        "folder here and pass LettuceDetectChecker(model='./lettucedetect')."
    )
