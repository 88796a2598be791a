"""One event-loop story: sync entry points leave nothing bound to a loop in the user's models."""

from __future__ import annotations

import asyncio
import threading

import pytest

from truthguard._sync import on_private_loop
from truthguard.rv import ReverseValidation
from truthguard.testing import OpenAIServer, ScriptedChatModel

PASSAGE = "Ailanthus is a genus of trees in the Simaroubaceae family."
SCRIPT = {
    "numbered list": "1. Genus of trees\n2. Simaroubaceae family",
    "Which entity fits": "The entity is Ailanthus, which meets 100% of the requirements.",
}


def _user_model(server):
    # Built the way a user would: langchain-openai then shares one async HTTP client per URL.
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(base_url=server.base_url, api_key="test", model="m", max_retries=0)


def test_asyncio_run_works_after_a_sync_check():
    pytest.importorskip("langchain_openai")
    with OpenAIServer(reply=SCRIPT, default="Hello.") as server:
        model = _user_model(server)
        r = ReverseValidation(model=model, variant="em").invoke(
            {"answer": PASSAGE, "entity": "Ailanthus"}
        )
        assert r.label == "factual"
        assert asyncio.run(model.ainvoke("hi")).content == "Hello."


def test_a_new_client_works_after_a_handler_closed():
    pytest.importorskip("langchain_openai")
    from truthguard.callbacks import TruthGuardCallbackHandler

    with OpenAIServer(reply=SCRIPT, default="Ailanthus is a tree.") as server:
        records = []
        det = ReverseValidation(model=_user_model(server), variant="em")
        handler = TruthGuardCallbackHandler(det, sinks=records.append, timeout=10)
        _user_model(server).invoke("Tell me about Ailanthus.", config={"callbacks": [handler]})
        assert handler.close(timeout=10)
        assert [rec.status for rec in records] == ["scored"]
        assert asyncio.run(_user_model(server).ainvoke("hi")).content == "Ailanthus is a tree."


async def test_sync_entry_points_work_inside_a_running_loop():
    # A notebook cell: the loop is running, the user calls the sync API.
    model = ScriptedChatModel(script=SCRIPT)
    r = ReverseValidation(model=model, variant="em").invoke(
        {"answer": PASSAGE, "entity": "Ailanthus"}
    )
    assert r.label == "factual"
    assert not on_private_loop()


def test_model_calls_on_truthguard_loops_use_the_sync_api():
    seen = []

    class Spy(ScriptedChatModel):
        def _generate(self, *a, **kw):
            seen.append(("sync", threading.current_thread().name))
            return super()._generate(*a, **kw)

        async def _agenerate(self, *a, **kw):
            seen.append(("async", threading.current_thread().name))
            return await super()._agenerate(*a, **kw)

    model = Spy(script=SCRIPT)
    ReverseValidation(model=model, variant="em").invoke({"answer": PASSAGE, "entity": "Ailanthus"})
    assert [kind for kind, _ in seen] == ["sync", "sync"]
    assert all(name.startswith("truthguard-call") for _, name in seen)
    seen.clear()
    asyncio.run(
        ReverseValidation(model=model, variant="em").ainvoke(
            {"answer": PASSAGE, "entity": "Ailanthus"}
        )
    )
    assert [kind for kind, _ in seen] == ["async", "async"]  # the caller's loop: async API


def test_the_call_pool_grows_to_the_size_asked_for():
    from truthguard._sync import MIN_CALL_THREADS, call_executor

    small = call_executor()
    assert call_executor(MIN_CALL_THREADS // 2) is small  # never below the minimum
    n = MIN_CALL_THREADS + 16
    pool = call_executor(n)
    barrier = threading.Barrier(n, timeout=10)
    # Every task waits for all the others: a pool of fewer than n threads breaks the barrier.
    arrivals = [f.result() for f in [pool.submit(barrier.wait) for _ in range(n)]]
    assert sorted(arrivals) == list(range(n))
    assert call_executor(n) is pool and call_executor() is pool
