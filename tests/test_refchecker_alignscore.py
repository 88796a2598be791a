"""AlignScore from its published code: a tiny random RoBERTa checkpoint in the authors' layout
through the real loading and inference; chunks, the pairs the model receives, max-mean."""

from __future__ import annotations

import json
import re

import pytest

from truthguard.errors import ConfigurationError
from truthguard.refchecker import AlignScoreChecker, RefChecker
from truthguard.refchecker.alignscore import AlignScoreModel, alignscore_chunks

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

S = [f"Sentence {n} says " + " ".join(["clay"] * 98) + "." for n in range(4)]  # 100 words each
REF = "Bi Sheng made movable type from baked clay. He worked in the eleventh century."
CLAIM = "Bi Sheng made movable type. He worked in the ninth century."


def tiny_alignscore(path, texts) -> tuple[str, str]:
    """A RoBERTa base folder (config, word-level tokenizer) and a checkpoint whose state_dict
    holds base_model.* and the three heads, as AlignScore's Lightning checkpoints do."""
    import re

    from doubles import _tokenizer  # the word-level tokenizer families of the other checkers

    words = sorted({w for t in texts for w in re.findall(r"\w+|[^\w\s]+", t)})
    tokenizer, n = _tokenizer("roberta", words)
    tokenizer.model_max_length = 64  # the authors pad every pair to it
    config = transformers.RobertaConfig(
        vocab_size=n, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=16, max_position_embeddings=66, pad_token_id=1, initializer_range=1.0,
    )  # fmt: skip
    base = path / "roberta"
    config.save_pretrained(base)
    tokenizer.save_pretrained(base)
    torch.manual_seed(3)
    encoder = transformers.RobertaModel(config)
    state = {f"base_model.{k}": v for k, v in encoder.state_dict().items()}
    for name, size in (("tri_layer", 3), ("bin_layer", 2), ("reg_layer", 1)):
        layer = torch.nn.Linear(8, size)
        state |= {f"{name}.{k}": v for k, v in layer.state_dict().items()}
    ckpt = path / "AlignScore-tiny.ckpt"
    torch.save({"state_dict": state}, ckpt)
    return str(ckpt), str(base)


def test_chunks_hold_sentences_in_runs_of_about_350_words():
    split = lambda t: [s.strip() for s in re.findall(r"[^.]+\.", t)]  # noqa: E731
    text = " ".join(S)  # 400 words, 4 sentences: 2 chunks of 2 sentences
    assert alignscore_chunks(text, split) == [f"{S[0]} {S[1]}", f"{S[2]} {S[3]}"]
    assert alignscore_chunks(" ".join(S[:3]), split) == [" ".join(S[:3])]  # 300 words: one
    assert alignscore_chunks("", split) == [""]


def test_every_chunk_meets_every_claim_sentence_and_the_score_is_max_mean(tmp_path):
    ckpt, base = tiny_alignscore(tmp_path, [REF, CLAIM, *S])
    model = AlignScoreModel(ckpt, base=base)
    tokenizer, encoder, head = model.loaded()
    seen = []
    encoder.register_forward_pre_hook(
        lambda m, a, kw: seen.extend(
            tokenizer.decode(ids[mask.bool()])
            for ids, mask in zip(kw["input_ids"], kw["attention_mask"], strict=True)
        ),
        with_kwargs=True,
    )
    [scored] = model.score([(REF, CLAIM)])
    assert scored.chunks == [REF]
    assert scored.sentences == ["Bi Sheng made movable type.", "He worked in the ninth century."]
    ref = "Bi Sheng made movable type from baked clay . He worked in the eleventh century ."
    assert seen == [
        f"<s> {ref} </s> </s> Bi Sheng made movable type . </s>",
        f"<s> {ref} </s> </s> He worked in the ninth century . </s>",
    ]
    (row,) = scored.matrix
    for sentence, p in zip(scored.sentences, row, strict=True):
        enc = tokenizer([REF], [sentence], padding="max_length", max_length=64, return_tensors="pt")
        with torch.no_grad():
            pooled = encoder(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])
            expected = torch.softmax(head(pooled.pooler_output), -1)[0, 0]
        assert p == pytest.approx(float(expected), abs=1e-5)
    assert scored.score == pytest.approx(sum(row) / 2)
    # two chunks: each claim sentence takes its best chunk, then the mean
    long = " ".join(S)
    before = len(seen)
    [two] = AlignScoreModel(ckpt, base=base).score([(long, CLAIM)])
    assert len(two.chunks) == 2 and len(two.matrix) == 2
    # a chunk over the tokenizer's 64 tokens is cut (only_first): the claim sentence stays whole
    cut = seen[before:]
    sentences = ["Bi Sheng made movable type .", "He worked in the ninth century ."]
    assert [t.split(" </s> </s> ")[1] for t in cut] == [f"{x} </s>" for x in sentences] * 2
    assert [t.split(" </s> </s> ")[0].split()[:3] for t in cut] == [
        ["<s>", "Sentence", n] for n in ("0", "0", "2", "2")
    ]
    assert not any("Sentence 1" in t or "Sentence 3" in t for t in cut)
    assert all(len(t.split()) == 64 for t in cut)  # one word a token: padded to, cut at 64
    best = [max(two.matrix[0][j], two.matrix[1][j]) for j in range(2)]
    assert two.score == pytest.approx(sum(best) / 2)


def test_claims_are_labelled_through_refchecker(tmp_path, embedder):
    ckpt, base = tiny_alignscore(tmp_path, [REF, CLAIM])
    rc = RefChecker(checker=AlignScoreChecker(model=ckpt, base=base, threshold=0.0))
    r = rc.invoke({"question": "Who made movable type?", "answer": CLAIM, "references": [REF]})
    claims = r.details["claims"]
    assert [c["mode"] for c in claims] == ["alignscore", "alignscore"]
    assert [c["label"] for c in claims] == ["Entailment", "Entailment"]
    assert all(json.loads(c["checker_output"])["chunks"] == 1 for c in claims)
    strict = RefChecker(checker=AlignScoreChecker(model=ckpt, base=base, threshold=1.0))
    r = strict.invoke({"question": "Who made movable type?", "answer": CLAIM, "references": [REF]})
    assert [c["label"] for c in r.details["claims"]] == ["Neutral", "Neutral"]


def test_a_name_builds_it_and_an_offline_machine_says_how_to_fetch_it(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rc = RefChecker(checker="alignscore-large")
    with pytest.raises(ConfigurationError) as e:
        rc.checker.alignscore().loaded()
    assert str(e.value) == (
        "the AlignScore model 'alignscore-large' is not on this machine and could not be "
        "downloaded. Where the Hugging Face hub is reachable, run `huggingface-cli download "
        "yzha/AlignScore AlignScore-large.ckpt --local-dir ./alignscore` and `huggingface-cli "
        "download FacebookAI/roberta-large --local-dir ./roberta-large`, copy both here and pass "
        "AlignScoreChecker(model='./alignscore/AlignScore-large.ckpt', base='./roberta-large')."
    )
    ckpt, _ = tiny_alignscore(tmp_path, [REF])
    with pytest.raises(ConfigurationError, match="needs base="):
        AlignScoreModel(ckpt).loaded()
    with pytest.raises(ConfigurationError, match="no checkpoint file at"):
        AlignScoreModel("./no-such.ckpt", base="./roberta").loaded()
