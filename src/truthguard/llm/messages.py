"""Prompts and replies as text: what a model was asked, what it said, and whether it finished.

A reply is untrusted text like any input: :func:`output_text` cleans it the same way, and
rejects a reply that is not text at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from truthguard._clean import clean_text
from truthguard.errors import InvalidLLMOutput

__all__ = [
    "IncompleteReply",
    "Prompt",
    "cut_short",
    "message_text",
    "output_text",
    "prompt_text",
]

Prompt = str | Sequence[BaseMessage]


def message_text(output: Any) -> str:
    """The text of a model output: a string, an ``AIMessage`` or a generation-like object."""
    if isinstance(output, str):
        return output
    content = getattr(output, "content", None)
    if content is None:
        if isinstance(output, Mapping) and "content" in output:
            content = output["content"]
        else:
            return str(output)
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:  # multimodal / structured content blocks
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def prompt_text(prompt: Prompt) -> str:
    """The text of a prompt (its messages' texts, one a line)."""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(message_text(m) for m in prompt)


def output_text(output: Any, stage: str) -> str:
    """The text of a model's reply; anything that is not text is an invalid output.

    A reply is untrusted text like any input, cleaned the same way (no lone surrogate reaches
    MiniLM, a sink or a store).
    """
    if isinstance(output, str):
        return clean_text(output)
    if isinstance(output, BaseMessage) or (isinstance(output, Mapping) and "content" in output):
        return clean_text(message_text(output))
    content = getattr(output, "content", None)
    if isinstance(content, str | list):
        return clean_text(message_text(output))
    text = getattr(output, "text", None)  # a ChatGeneration-like object
    if isinstance(text, str):
        return clean_text(text)
    raise InvalidLLMOutput(
        f"the model returned a {type(output).__name__}, not text (return a string or a "
        "message, e.g. resp.choices[0].message.content)",
        raw=repr(output)[:2000],
        stage=stage,
    )


# Where providers put the reason a reply ended; a provider reply without one was cut short.
_FINISH_KEYS = ("finish_reason", "stop_reason", "done_reason", "stopReason")


def cut_short(output: Any) -> bool:
    """A provider's reply that carries no finish reason: a stream that ended early."""
    meta = getattr(output, "response_metadata", None)
    if not isinstance(meta, Mapping) or "model_provider" not in meta:
        return False
    return not any(meta.get(k) for k in _FINISH_KEYS)


class IncompleteReply(Exception):
    """A reply that ended without a finish reason (retryable; its tokens still count)."""
