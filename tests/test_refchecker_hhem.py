"""HHEM-2.1-Open without its remote code: a tiny random Flan-T5 in the published layout goes
through the real loading and inference; the prompt it receives, the class it is read from."""

from __future__ import annotations

import json

import pytest

from doubles import tiny_hhem
from truthguard.errors import ConfigurationError
from truthguard.refchecker import RefChecker
from truthguard.refchecker.hhem import HHEMChecker, HHEMModel

torch = pytest.importorskip("torch")

REF = "Bi Sheng made movable type from baked clay."
OTHER = "Paper money came later."
CLAIMS = ["Bi Sheng made movable type.", "Bi Sheng made paper money."]


def test_the_published_prompt_reaches_the_network_and_class_one_is_read(tmp_path):
    model, foundation = tiny_hhem(tmp_path, [REF, OTHER, *CLAIMS])
    hhem = HHEMModel(model, foundation=foundation)  # the foundation named explicitly
    assert HHEMModel(model).loaded()[1] is not None  # ... or read from the model's config.json
    tokenizer, net = hhem.loaded()
    pairs = [(REF, CLAIMS[0]), (f"{REF}\n{OTHER}", CLAIMS[1])]
    assert hhem.texts(pairs)[0] == (
        "<pad> Determine if the hypothesis is true given the premise?\n\n"
        f"Premise: {REF}\n\nHypothesis: {CLAIMS[0]}"
    )
    seen = []

    def hook(module, args, kwargs):
        for ids, mask in zip(kwargs["input_ids"], kwargs["attention_mask"], strict=True):
            seen.append(tokenizer.decode(ids[mask.bool()]))

    net.register_forward_pre_hook(hook, with_kwargs=True)
    scores = hhem.scores(pairs)
    assert seen == [
        "<pad> Determine if the hypothesis is true given the premise ? Premise : Bi Sheng made "
        "movable type from baked clay . Hypothesis : Bi Sheng made movable type . </s>",
        "<pad> Determine if the hypothesis is true given the premise ? Premise : Bi Sheng made "
        "movable type from baked clay . Paper money came later . Hypothesis : Bi Sheng made "
        "paper money . </s>",
    ]
    for text, score in zip(hhem.texts(pairs), scores, strict=True):
        with torch.no_grad():
            first = net(**tokenizer([text], return_tensors="pt")).logits[0, 0]
        assert score == pytest.approx(float(torch.softmax(first, -1)[1]), abs=1e-5)
    assert scores[0] != scores[1]


def test_claims_are_labelled_through_refchecker(tmp_path, embedder):
    model, foundation = tiny_hhem(tmp_path, [REF, OTHER, *CLAIMS])
    answer = " ".join(CLAIMS)
    ask = {"question": "Who made movable type?", "answer": answer, "references": [REF, OTHER]}
    probe = RefChecker(checker=HHEMChecker(model=model, foundation=foundation)).invoke(ask)
    claims = probe.details["claims"]
    assert [c["mode"] for c in claims] == ["hhem", "hhem"]
    p = [json.loads(c["checker_output"])["consistent"] for c in claims]
    cut = sum(p) / 2
    rc = RefChecker(checker=HHEMChecker(model=model, foundation=foundation, threshold=cut))
    labels = [c["label"] for c in rc.invoke(ask).details["claims"]]
    assert abs(p[0] - p[1]) > 1e-3  # apart by more than the rounding of checker_output
    best = p.index(max(p))
    assert labels[best] == "Entailment" and labels[1 - best] == "Neutral"


def test_a_name_builds_it_and_an_offline_machine_says_how_to_fetch_both_folders(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-cache"))
    rc = RefChecker(checker="hhem-2.1-open")
    assert isinstance(rc.checker, HHEMChecker)
    with pytest.raises(ConfigurationError) as e:
        rc.checker.hhem().loaded()
    assert str(e.value) == (
        "the HHEM model 'hhem-2.1-open' is not on this machine and could not be downloaded. "
        "Where the Hugging Face hub is reachable, run `huggingface-cli download "
        "vectara/hallucination_evaluation_model --local-dir ./hhem-2.1-open` and "
        "`huggingface-cli download google/flan-t5-base --local-dir ./flan-t5-base`, copy both "
        "folders here and pass HHEMChecker(model='./hhem-2.1-open', foundation='./flan-t5-base')."
    )
    with pytest.raises(ConfigurationError, match="no folder at"):
        HHEMModel("./no-such-hhem").loaded()
