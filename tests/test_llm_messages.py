"""The text of replies: message_text, cleaning, and replies that are not text."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from truthguard.llm import LLMSession, LLMSettings, message_text
from truthguard.testing import ScriptedChatModel

FAST = LLMSettings(backoff_initial=0.0, backoff_max=0.0)


def test_message_text():
    assert message_text(AIMessage(content=[{"type": "text", "text": "a"}, "b"])) == "ab"
    assert message_text(HumanMessage(content="hi")) == "hi"


async def test_a_reply_that_is_not_text_is_invalid_output_not_its_repr():
    from truthguard.errors import InvalidLLMOutput

    class ChatCompletion:  # what an OpenAI client returns before you take the text out
        choices = ()

    session = LLMSession(FAST)
    with pytest.raises(InvalidLLMOutput, match="ChatCompletion, not text") as info:
        await session.acall(lambda p: ChatCompletion(), "x", stage="t")
    assert info.value.stage == "t"
    with pytest.raises(InvalidLLMOutput):
        await session.acall(lambda p: None, "x", stage="t")
    assert len(session.records) == 2 and session.records[0].attempts == 1


async def test_model_replies_are_cleaned_like_inputs():
    # A JSON "\ud800" escape in an API reply decodes to a lone surrogate; MiniLM, sinks and
    # stores cannot encode it, so the session hands detectors the same cleaned text as inputs.
    session = LLMSession()
    text = await session.acall(lambda p: "(Dubai \ud800, is in\x00, the UAE)", "x", stage="s")
    assert text == "(Dubai \ufffd, is in, the UAE)"


def test_refchecker_survives_a_surrogate_in_the_extractor_reply():
    from truthguard.refchecker import LLMExtractor, RefChecker

    model = ScriptedChatModel(script=lambda p: "(Dubai \ud800, is in, the UAE)")
    det = RefChecker(extractor=LLMExtractor(model=model))
    r = det.invoke(
        {"question": "Q?", "answer": "Dubai is in the UAE.", "references": ["Dubai is in the UAE."]}
    )
    assert r.label.value != "invalid", r.invalid_reason
