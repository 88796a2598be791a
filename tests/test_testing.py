"""The test doubles behave like real chat models."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from truthguard.errors import MissingRecordingError
from truthguard.testing import ReplayChatModel, ScriptedChatModel


def test_scripted_mapping_list_and_callable():
    m = ScriptedChatModel(script={"France": "Paris", "Peru": "Lima"}, default="?")
    assert m.invoke("capital of Peru").content == "Lima"
    assert m.invoke("capital of Chad").content == "?"
    listed = ScriptedChatModel(script=["one", "two"])
    assert [listed.invoke("x").content for _ in range(2)] == ["one", "two"]
    with pytest.raises(ValueError, match="no answer"):
        listed.invoke("x")
    assert ScriptedChatModel(script=str.upper).invoke("abc").content == "ABC"


def test_scripted_sees_all_messages_and_logs_calls():
    m = ScriptedChatModel(script=lambda p: p)
    out = m.invoke([SystemMessage(content="sys"), HumanMessage(content="user")])
    assert out.content == "sys\nuser"
    assert m.calls == ["sys\nuser"] and m.call_count == 1
    m.reset()
    assert m.call_count == 0


def test_failures_on_demand():
    m = ScriptedChatModel(
        script=lambda p: "ok", fail_when=lambda p: "boom" in p, error=TimeoutError
    )
    assert m.invoke("fine").content == "ok"
    with pytest.raises(TimeoutError):
        m.invoke("boom")


async def test_streams_like_a_real_model():
    m = ScriptedChatModel(script=lambda p: "three little words")
    # langchain-core may close a stream with an empty chunk; count the words only.
    chunks = [c.content for c in m.stream("x") if c.content]
    assert "".join(chunks) == "three little words" and len(chunks) == 3
    achunks = [c.content async for c in m.astream("x") if c.content]
    assert achunks == chunks


def test_usage_metadata_reported_or_not():
    assert (
        ScriptedChatModel(script=lambda p: "a b").invoke("x y z").usage_metadata["output_tokens"]
        == 2
    )
    assert (
        not ScriptedChatModel(script=lambda p: "a", report_usage=False).invoke("x").usage_metadata
    )


def test_replay_by_prompt_and_missing_key():
    m = ReplayChatModel(recordings={"hello": "world"}, model_name="rec")
    assert m.invoke("hello").content == "world"
    with pytest.raises(MissingRecordingError, match="rec: no recorded output for key 'bye'"):
        m.invoke("bye")


def test_replay_keyed_on_run_metadata():
    m = ReplayChatModel(recordings={"k1": "v1"})
    assert m.invoke("any prompt", config={"metadata": {"replay_key": "k1"}}).content == "v1"
