"""What an agent saw and said: the question, the evidence, the answer (pure functions, no I/O)."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from truthguard._clean import clean_text
from truthguard.detector import context_text
from truthguard.errors import InvalidInputError
from truthguard.llm import message_text

__all__ = ["answer_text", "evidence_of", "last_question"]


def last_question(messages: Sequence[BaseMessage]) -> str:
    """The text of the last human message: the question the agent is answering.

    Raises:
        InvalidInputError: No human message carries any text (field ``messages``).
    """
    for m in reversed(messages):
        if isinstance(m, HumanMessage):
            text = clean_text(message_text(m))
            if text.strip():
                return text
    raise InvalidInputError("messages", "no human message with text to check the answer against")


def _fields(value: Any, prefix: str = "") -> list[str]:
    """``key: value`` lines of a JSON value, nested keys dotted (``address.city: Paris``)."""
    if isinstance(value, Mapping):
        return [line for k, v in value.items() for line in _fields(v, f"{prefix}{k}.")]
    if isinstance(value, list):
        return [line for item in value for line in _fields(item, prefix)]
    name = prefix[:-1]
    text = "null" if value is None else str(value)
    return [f"{name}: {text}" if name else text]


def json_passages(text: str) -> list[str] | None:
    """A JSON tool result as readable passages, or None when ``text`` is not a JSON object or
    array: an object is one passage of ``key: value`` lines; an array of objects (rows from
    SQL or an API) is one passage per row, its fields joined by ``; ``."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return ["; ".join(_fields(row)) for row in value if row]
    if isinstance(value, Mapping | list):
        lines = _fields(value)
        return ["\n".join(lines)] if lines else []
    return None


def _tool_texts(message: ToolMessage) -> list[str]:
    # A retriever tool built with response_format="content_and_artifact" keeps the documents in
    # the artifact: one passage each is closer to the sources than their joined text.
    artifact = message.artifact
    if isinstance(artifact, Sequence) and not isinstance(artifact, str | bytes) and artifact:
        texts = []
        for i, item in enumerate(artifact):
            try:
                texts.append(context_text(item, field=f"artifact[{i}]"))
            except InvalidInputError:
                break
        else:
            return texts
    text = clean_text(message_text(message))
    passages = json_passages(text)
    if passages is not None:  # JSON output (an API, a SQL tool) read as the text it says
        return [p for p in passages if p.strip()]
    return [text] if text.strip() else []


def evidence_of(
    messages: Sequence[BaseMessage],
    state: Mapping[str, Any] | None = None,
    *,
    tools: Collection[str] | None = None,
    state_keys: Sequence[str] = (),
) -> list[str]:
    """The passages an agent saw: its tool results and the documents in its state.

    Args:
        messages: The messages the model was given (tool results among them).
        state: The agent state, for documents kept outside the messages.
        tools: Only results of these tools count (None: every tool). Failed tool calls
            (``status="error"``) never count.
        state_keys: State keys holding documents or strings.

    Returns:
        Each passage once, in the order the agent saw them.
    """
    seen: dict[str, None] = {}
    for m in messages:
        if not isinstance(m, ToolMessage) or m.status == "error":
            continue
        if tools is not None and m.name not in tools:
            continue
        for text in _tool_texts(m):
            seen.setdefault(text, None)
    for key in state_keys:
        value = (state or {}).get(key)
        if value is None:
            continue
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, Sequence):
            raise InvalidInputError(key, "expected a string or a list of strings or Documents")
        for i, item in enumerate(items):
            text = context_text(item, field=f"{key}[{i}]")
            if text.strip():
                seen.setdefault(text, None)
    return list(seen)


def answer_text(message: BaseMessage) -> str:
    """The answer text of a model message (content blocks joined), cleaned."""
    return clean_text(message_text(message))


def final_message(result: Sequence[BaseMessage]) -> AIMessage | None:
    """The AI message of a model response (a structured-output ToolMessage may follow it)."""
    for m in result:
        if isinstance(m, AIMessage):
            return m
    return None
