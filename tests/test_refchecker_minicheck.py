"""MiniCheck by name: tiny random models of each architecture through the real loading and
inference code; the text each receives, its chunks, truncation and aggregation."""

from __future__ import annotations

import json

import pytest

from doubles import tiny_minicheck
from truthguard.errors import ConfigurationError
from truthguard.refchecker import RefChecker
from truthguard.refchecker.minicheck import (
    MiniCheckChecker,
    MiniCheckModel,
    missing_weights_message,
    pack_chunks,
    sentences_with_newlines,
)
from truthguard.refchecker.named import named_checker

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

S1 = "Bi Sheng made movable type from baked clay."
S2 = "He worked in the eleventh century."
S3 = "Paper money came later in the same empire."
DOC = f"{S1} {S2}\n{S3}"
CLAIM = "Bi Sheng made movable type."
TEXTS = (DOC, CLAIM, "the ninth century")


def _seen(model: MiniCheckModel) -> list[str]:
    """Record the decoded inputs of every forward pass of ``model``'s network."""
    tokenizer, net, _ = model.loaded()
    seen: list[str] = []

    def hook(module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        mask = kwargs["attention_mask"]
        for row, m in zip(ids, mask, strict=True):
            seen.append(tokenizer.decode(row[m.bool()]))

    net.register_forward_pre_hook(hook, with_kwargs=True)
    return seen


def test_sentences_keep_line_breaks_and_chunks_hold_whole_sentences():
    sents = sentences_with_newlines("A b. C d\nE f", split=lambda b: b.split(". "))
    assert sents == ["A b", "C d", "\n", "E f"]
    words = lambda s: len(s.split())  # noqa: E731
    # 2 + 2 words fit in 4; the line break counts 0; "E f" overflows and opens the next chunk
    assert pack_chunks(["A b", "C d", "\n", "E f"], 4, words) == ["A b C d", "E f"]
    assert pack_chunks(["A b", "\n", "C d"], 9, words) == ["A b\nC d"]
    # a sentence longer than the chunk stands alone; empty chunks are dropped
    assert pack_chunks(["one two three", "four"], 2, words) == ["one two three", "four"]
    assert pack_chunks([""], 5, words) == []


@pytest.mark.parametrize(
    ("family", "prefix", "sep", "end", "start"),
    [
        ("roberta", "", "</s>", "</s>", "<s> "),
        ("deberta", "", "[SEP]", "[SEP]", "[CLS] "),
        ("t5", "predict: ", "</s>", "</s>", ""),
    ],
)
def test_each_variant_sees_the_authors_text_and_takes_the_best_chunk(
    tmp_path, family, prefix, sep, end, start
):
    folder = tiny_minicheck(tmp_path / family, family, TEXTS)
    # chunks of 11: S1 (9 tokens, 8 words) + S2 (7 tokens, 6 words) overflow either way
    model = MiniCheckModel(folder, chunk_size=11)
    tokenizer, _, kind = model.loaded()
    assert kind == ("flan-t5" if family == "t5" else family)
    assert model.chunks(DOC) == [S1, S2, S3]
    assert MiniCheckModel(folder, chunk_size=16).chunks(DOC) == [f"{S1} {S2}", S3]
    texts = model.texts([S1, S2], CLAIM)
    assert texts == [f"{prefix}{S1}{sep}{CLAIM}", f"{prefix}{S2}{sep}{CLAIM}"]

    seen = _seen(model)
    [scored] = model.score([(DOC, CLAIM)])
    pre = "predict : " if prefix else ""
    claim = "Bi Sheng made movable type ."
    assert seen == [
        f"{start}{pre}{tokenizer.decode(tokenizer(s, add_special_tokens=False)['input_ids'])} "
        f"{sep} {claim} {end}"
        for s in (S1, S2, S3)
    ]
    assert scored.chunks == [S1, S2, S3]
    # each chunk's probability is the network's own, read as the authors read it
    _, net, _ = model.loaded()
    for text, p in zip(model.texts(scored.chunks, CLAIM), scored.per_chunk, strict=True):
        enc = tokenizer([text], return_tensors="pt")
        with torch.no_grad():
            if family == "t5":
                logits = net(**enc, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long))
                two = logits.logits[0, 0, [3, 209]]
            else:
                two = net(**enc).logits[0]
        assert p == pytest.approx(float(torch.softmax(two, -1)[1]), abs=1e-5)
    assert scored.support == max(scored.per_chunk)
    assert len(set(scored.per_chunk)) == 3  # random weights: the chunks differ


def test_truncation_cuts_the_end_of_the_joined_text(tmp_path):
    folder = tiny_minicheck(tmp_path / "r", "roberta", TEXTS)
    model = MiniCheckModel(folder, max_length=14)
    seen = _seen(model)
    model.score([(S1, CLAIM)])
    # <s> + 9 tokens of S1 + </s> + "Bi Sheng" + </s> = 14: the claim is cut, its end lost
    assert seen == ["<s> Bi Sheng made movable type from baked clay . </s> Bi Sheng </s>"]


def test_claims_aggregate_through_refchecker(tmp_path, embedder):
    folder = tiny_minicheck(tmp_path / "d", "deberta", TEXTS)
    checker = MiniCheckChecker(model=folder, chunk_size=11)
    refs = [DOC]
    answer = f"{CLAIM} He worked in the ninth century."
    probe = RefChecker(checker=checker).invoke(
        {"question": "Who made movable type?", "answer": answer, "references": refs}
    )
    claims = probe.details["claims"]
    assert [c["mode"] for c in claims] == ["minicheck", "minicheck"]
    supports = [c["support"] for c in claims]
    for c in claims:
        raw = json.loads(c["checker_output"])
        assert raw["chunks"] == 3 and c["support"] == pytest.approx(max(raw["per_chunk"]), 1e-3)
    # the threshold between the two claims' supports: one Entailment, one Neutral
    cut = sum(supports) / 2
    rc = RefChecker(checker=MiniCheckChecker(model=folder, chunk_size=11, threshold=cut))
    r = rc.invoke({"question": "Who made movable type?", "answer": answer, "references": refs})
    labels = [c["label"] for c in r.details["claims"]]
    best = supports.index(max(supports))
    assert labels[best] == "Entailment" and labels[1 - best] == "Neutral"
    assert r.label == "hallucinated"


def test_a_name_builds_the_checker_and_an_offline_machine_says_how_to_fetch_it(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rc = RefChecker(checker="minicheck-roberta-large")
    assert isinstance(rc.checker, MiniCheckChecker)
    assert rc.checker.model == "minicheck-roberta-large"
    with pytest.raises(ConfigurationError) as e:
        rc.checker.minicheck().loaded()
    assert str(e.value) == (
        "the MiniCheck model 'minicheck-roberta-large' is not on this machine and could not be "
        "downloaded. Where the Hugging Face hub is reachable, run `huggingface-cli download "
        "lytang/MiniCheck-RoBERTa-Large --local-dir ./minicheck-roberta-large`, copy the folder "
        "here and pass MiniCheckChecker(model='./minicheck-roberta-large')."
    )
    assert missing_weights_message("minicheck-flan-t5-large").count("Flan-T5-Large") == 1
    with pytest.raises(ConfigurationError, match="unknown checker name"):
        named_checker("minicheck-tiny")
    with pytest.raises(ConfigurationError, match="no folder at"):
        MiniCheckModel("./no-such-minicheck").loaded()
