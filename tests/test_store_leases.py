"""Leases: a second store (as if another process) waits for the first."""

from __future__ import annotations

from store_doubles import _CountingEmbedder
from truthguard.store import ArtifactStore, cached_call
from truthguard.testing import ScriptedChatModel


async def test_leases_make_a_second_store_wait_for_the_first(tmp_path):
    import asyncio

    from truthguard.llm import LLMSession

    emb = _CountingEmbedder()
    a = ArtifactStore(tmp_path / "s", embedder=emb, lease_seconds=10)
    b = ArtifactStore(tmp_path / "s", embedder=emb, lease_seconds=10)  # like another process
    model = ScriptedChatModel(model_name="m", script=lambda p: "Paris", latency=0.5)
    kwargs = dict(question="Capital?", kind="ref", prompt_version="v", stage="t")
    sa, sb = LLMSession(), LLMSession()

    async def late():
        await asyncio.sleep(0.2)  # the peer has claimed the artifact by now
        return await cached_call(sb, model, "p", store=b, **kwargs)

    outs = await asyncio.gather(cached_call(sa, model, "p", store=a, **kwargs), late())
    assert outs == ["Paris", "Paris"] and model.call_count == 1
    assert sb.usage().cached_calls == 1 and sb.usage().llm_calls == 0
    assert a.count_leases() == 0  # released once the artifact was stored


def test_a_fresh_peer_lease_refuses_a_claim_and_an_expired_one_does_not(tmp_path):
    import time

    emb = _CountingEmbedder()
    a = ArtifactStore(tmp_path / "s", embedder=emb, lease_seconds=0.3)
    b = ArtifactStore(tmp_path / "s", embedder=emb, lease_seconds=0.3)  # like another process
    aid = a.artifact_id("Q?", "k", "m", "v")
    assert a.claim(aid) and a.claim(aid)  # its own lease does not stop it
    assert not b.claim(aid)
    time.sleep(0.4)  # the lease runs out: a crashed peer only delays
    assert b.claim(aid) and not a.claim(aid)
    b.release(aid)
    assert a.count_leases() == 0 and a.claim(aid)


def test_without_lease_seconds_every_claim_wins_and_nothing_is_written(tmp_path):
    a = ArtifactStore(tmp_path / "s", embedder=_CountingEmbedder())
    aid = a.artifact_id("Q?", "k", "m", "v")
    assert a.claim(aid) and a.claim(aid)
    a.release(aid)
    assert a.count_leases() == 0
