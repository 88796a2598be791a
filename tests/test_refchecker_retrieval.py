"""Claim-to-reference matching: which sentences are encoded and ranked."""

from __future__ import annotations

import asyncio

from truthguard.refchecker.extractors import Claim
from truthguard.refchecker.retrieval import aretrieve, lexical_candidates
from truthguard.refchecker.segment import segment_references

FILLER = [f"Unrelated filler sentence number {w} talks about weather." for w in "abcdefghijklmn"]


def test_only_sentences_sharing_a_word_or_fact_with_a_claim_are_candidates():
    spans = [*FILLER, "Bi Sheng made movable type from baked clay.", "It happened in 1041."]
    keep = lexical_candidates(["Bi Sheng invented printing in 1041."], spans)
    assert keep == [False] * len(FILLER) + [True, True]
    # short references are encoded whole; so is one sharing nothing with the answer
    assert lexical_candidates(["Anything."], spans[:3]) == [True, True, True]
    assert all(lexical_candidates(["Zebras gallop."], spans))


def test_sentences_left_out_are_never_encoded_and_rank_last(embedder):
    reference = " ".join([*FILLER[:7], "Bi Sheng made movable type from baked clay.", *FILLER[7:]])
    segments = segment_references([reference], size=20)
    seen: list[str] = []
    original = embedder.aembed

    async def spy(texts):
        seen.extend(texts)
        return await original(texts)

    embedder.aembed = spy
    try:
        r = asyncio.run(
            aretrieve([Claim(text="Bi Sheng made type from clay.")], segments, embedder, top_k=1)
        )
    finally:
        del embedder.aembed
    assert "Bi Sheng made movable type from baked clay." in seen
    assert not any("filler" in t for t in seen)
    _, span, cosine = r.evidence[0]
    assert span.text == "Bi Sheng made movable type from baked clay." and cosine > 0.5


def test_evidence_is_the_best_sentence_of_the_best_segment(embedder):
    reference = (
        "The harbour is deep. Ships dock there daily. "
        "Bi Sheng made movable type from baked clay. He lived in the eleventh century. "
        "Paper came earlier. Ink was made of soot."
    )
    segments = segment_references([reference], size=8)
    texts = ["Bi Sheng made movable type from clay.", "Ink was made of soot."]
    claims = [Claim(text=t) for t in texts]
    r = asyncio.run(aretrieve(claims, segments, embedder, top_k=2))
    for i in range(len(claims)):
        j, span, cos = r.evidence[i]
        assert j == r.top_k[i][0] and span in segments[j].spans
        assert cos == r.support(i) == float(r.segment_sims[i, j]) == r.segment_sims[i].max()
    assert r.evidence[0][1].text == "Bi Sheng made movable type from baked clay."
    assert r.evidence[1][1].text == "Ink was made of soot."


def test_the_sentence_index_lists_where_each_stem_and_fact_occurs():
    from truthguard.refchecker._facts import stem
    from truthguard.refchecker.retrieval import _where

    where = _where(("Bi Sheng printed books.", "Printing spread in 1041.", "Rain fell."))
    assert where[stem("printed")] == [0, 1]
    assert where[("number", 1041.0)] == [1]
    assert where[("name", "sheng")] == [0]
    assert stem("zebra") not in where
    # one reference is indexed once for all the answers checked against it
    assert _where(("Bi Sheng printed books.", "Printing spread in 1041.", "Rain fell.")) is where
