"""Token accounting: reported usage first, tiktoken otherwise."""

from __future__ import annotations

from truthguard.llm import LLMSession, count_tokens
from truthguard.testing import ScriptedChatModel


async def test_tokens_from_usage_metadata():
    model = ScriptedChatModel(script=lambda p: "one two three")
    session = LLMSession()
    await session.acall(model, "a b c d", stage="t")
    usage = session.usage()
    assert (usage.prompt_tokens, usage.completion_tokens) == (4, 3)
    assert not usage.estimated_tokens


async def test_tokens_counted_with_tiktoken_when_model_reports_none():
    model = ScriptedChatModel(script=lambda p: "Hello there, world!", report_usage=False)
    session = LLMSession()
    await session.acall(model, "What is the capital of France?", stage="t")
    usage = session.usage()
    assert usage.estimated_tokens
    assert usage.prompt_tokens == count_tokens("What is the capital of France?")
    assert usage.completion_tokens == count_tokens("Hello there, world!")


def test_tiktoken_encoding_is_available_offline():
    # cl100k_base: "hello world" is two tokens; the fallback word counter would also say 2,
    # so use a string where they differ.
    assert count_tokens("tokenization") == 2
