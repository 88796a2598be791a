"""Pull the question, answer, contexts and chat history out of a chain's input and output (no I/O).

Shared by the guards, the callback handlers, the evaluators, the agents middleware and the
LlamaIndex integration.
``clean_text`` is re-exported from :mod:`truthguard._clean` (the one implementation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from truthguard._clean import clean_text
from truthguard.detector import context_text
from truthguard.errors import InvalidInputError
from truthguard.llm import message_text

__all__ = [
    "ANSWER_KEYS",
    "CONTEXT_KEYS",
    "HISTORY_KEYS",
    "QUESTION_KEYS",
    "answer_of",
    "check_input",
    "clean_text",
    "contexts_of",
    "history_of",
    "question_of",
]

QUESTION_KEYS = ("question", "input", "query", "messages")
"""Input keys searched for the question, in order, when no key is configured (``messages``: a
chat model's input, whose last human message is the question)."""
ANSWER_KEYS = ("answer", "output", "result", "text", "content")
"""Output keys searched for the answer, in order, when no key is configured."""
CONTEXT_KEYS = ("context", "contexts", "source_documents", "documents", "docs")
"""Output keys searched for the context documents, in order."""
HISTORY_KEYS = ("chat_history", "history", "messages")
"""Input keys searched for the chat history, in order, when no key is configured: LangChain's
``create_history_aware_retriever`` reads ``chat_history``, ``RunnableWithMessageHistory`` examples
use ``history``, LangGraph's ``MessagesState`` and chat-model inputs ``messages``."""


def question_of(input: Any, key: str | None = None) -> str:
    """The question carried by a chain input: a string, a dict entry, or a conversation's last
    human message (a chat model's input: a list of messages, or a dict's ``messages``).

    Raises:
        InvalidInputError: No question could be found, or it is blank.
    """
    if isinstance(input, str):
        text = input
    elif isinstance(input, Mapping):
        keys = (key,) if key else QUESTION_KEYS
        found = next((k for k in keys if k in input), None)
        if found is None:
            raise InvalidInputError(
                key or "question", f"the chain input has none of the keys {list(keys)}"
            )
        text = input[found]
        if text is None:  # str(None) would be checked as the question "None"
            raise InvalidInputError(found, "must not be None")
        if _is_conversation(text):
            text = _asked(text, found)
        elif not isinstance(text, str):
            if not _is_message(text):  # 5, NaN, ["a"], {} are not questions
                raise InvalidInputError(
                    found,
                    f"must be a string, a message or a list of messages, got {type(text).__name__}",
                )
            text = message_text(text)
    elif _is_conversation(input):
        text = _asked(input, "input")
    else:
        raise InvalidInputError(
            "input",
            f"expected a string or a dict carrying the question, got {type(input).__name__}",
        )
    if not text.strip():
        raise InvalidInputError(key or "question", "must not be blank")
    return text


def answer_of(output: Any, key: str | None = None) -> str:
    """The answer text of a chain output: a string, a message, or a dict entry.

    Raises:
        InvalidInputError: The output carries no answer under any known key.
    """
    if isinstance(output, Mapping):
        keys = (key,) if key else ANSWER_KEYS
        found = next((k for k in keys if k in output), None)
        if found is None:
            raise InvalidInputError(
                key or "answer", f"the chain output has none of the keys {list(keys)}"
            )
        if output[found] is None:  # str(None) would be checked as the answer "None"
            raise InvalidInputError(found, "the chain output's answer is None")
        return message_text(output[found])
    if isinstance(output, str) or hasattr(output, "content"):
        return message_text(output)
    answer = getattr(output, "answer", None)  # a GuardResult, or any result object
    if isinstance(answer, str):
        return answer
    raise InvalidInputError(
        "output", f"expected a string, a message or a dict, got {type(output).__name__}"
    )


def contexts_of(output: Any, key: str | None = None) -> list[str]:
    """Context passages in a dict output (strings or Documents); empty when there are none."""
    if not isinstance(output, Mapping):
        return []
    keys = (key,) if key else CONTEXT_KEYS
    found = next((k for k in keys if k in output), None)
    if found is None:
        return []
    value = output[found]
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Sequence):
        raise InvalidInputError(found, "expected a list of strings or Documents")
    return [context_text(v, field=f"{found}[{i}]") for i, v in enumerate(value)]


def history_of(input: Any, key: str | None = None, *, question: str | None = None) -> list[Any]:
    """The chat turns before the question in a chain input; empty when it carries none.

    The history is the value under ``key``, else under the first of :data:`HISTORY_KEYS` the input
    has; an input that is itself a list of messages is a conversation too. ``key=""`` turns it off.
    A turn is a string, a LangChain message or a ``(role, text)`` pair (a ``{"role", "content"}``
    dict or a LlamaIndex ``ChatMessage`` becomes a pair), kept in order for
    :class:`~truthguard.detector.DetectorInput` to read.
    Only what the user and the assistant said is kept: a system prompt is an instruction and a
    tool result is evidence of its own, so neither is a turn, and blank turns are dropped.

    The question is not history. When the last human turn with text is ``question`` itself (a
    chat model's ``messages``, where it is the question; a history the app appended the question
    to), it and whatever follows it are left out.

    Raises:
        InvalidInputError: ``key`` is not in the input (or the input is not a dict), the value is
            not a string or a list of turns (naming the key), or a turn is neither (``key[i]``).
    """
    if key == "":
        return []
    if isinstance(input, Mapping):
        keys = (key,) if key else HISTORY_KEYS
        found = next((k for k in keys if k in input), None)
        if found is None:
            if key:
                raise InvalidInputError(key, "the chain input has no such key (history_key)")
            return []
        value = input[found]
    elif key:
        raise InvalidInputError(key, f"needs a dict chain input, got {type(input).__name__}")
    elif _is_conversation(input):
        found, value = "input", input
    else:
        return []
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if _is_message(value):
        value = [value]
    if isinstance(value, Mapping | bytes) or not isinstance(value, Sequence):
        raise InvalidInputError(
            found,
            "expected a string or a list of messages, strings or (role, text) pairs, "
            f"got {type(value).__name__}",
        )
    turns = [(*_turn(item, f"{found}[{i}]"), item) for i, item in enumerate(value)]
    asked = _last_asked([(role, text) for role, text, _ in turns])
    if asked is not None and question is not None and _same(turns[asked][1], question):
        turns = turns[:asked]
    return [
        item if isinstance(item, str) or _is_message(item) else (role, text) if role else text
        for role, text, item in turns
        if role not in _NOT_SAID and text.strip()
    ]


# Message types and OpenAI / LlamaIndex roles, as the roles of a conversation.
_ROLES = {
    "user": "human",
    "assistant": "ai",
    "chatbot": "ai",
    "model": "ai",
    "developer": "system",
    "function": "tool",
    "HumanMessageChunk": "human",
    "AIMessageChunk": "ai",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
    "FunctionMessageChunk": "tool",
}
_NOT_SAID = frozenset({"system", "tool"})  # instructions and tool results: not chat turns


def _turn(item: Any, field: str) -> tuple[str | None, str]:
    """The role (None when unknown: a bare string) and the text of one chat turn."""
    if isinstance(item, str):
        return None, item
    role: Any = None
    if _is_message(item):
        role = getattr(item, "role", None) if item.type == "chat" else item.type
        text = message_text(item)
    elif (
        isinstance(item, list | tuple)
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], str)
    ):
        role, text = item
    elif isinstance(item, Mapping) and isinstance(item.get("content"), str | list):
        role = item.get("role") or item.get("type")
        text = message_text(item)
    elif hasattr(item, "role") and isinstance(getattr(item, "content", None), str | None):
        role, text = item.role, item.content or ""  # a LlamaIndex ChatMessage
    else:
        raise InvalidInputError(
            field,
            "expected a string, a message, a (role, text) pair or a {'role', 'content'} dict, "
            f"got {type(item).__name__}",
        )
    role = getattr(role, "value", role)  # a role enum (LlamaIndex's MessageRole)
    return (_ROLES.get(role, role) if isinstance(role, str) else None), text


def _is_conversation(value: Any) -> bool:
    """A non-empty list of messages, ``(role, text)`` pairs or role dicts (bare strings are not:
    a list of strings carries no roles, so no question can be told apart in it)."""
    if not isinstance(value, list | tuple) or not value:
        return False
    for item in value:
        if isinstance(item, str):
            return False
        try:
            _turn(item, "")
        except InvalidInputError:
            return False
    return True


def _last_asked(
    turns: Sequence[tuple[str | None, str]], roles: tuple[str | None, ...] = ("human", None)
) -> int | None:
    """Index of the last turn with text in one of ``roles``: the one that may be the question
    (a human turn, or by default one whose role is unknown)."""
    for i in range(len(turns) - 1, -1, -1):
        role, text = turns[i]
        if role in roles and text.strip():
            return i
    return None


def _asked(conversation: Sequence[Any], field: str) -> str:
    """The last human message with text: the question a conversation asks."""
    turns = [_turn(item, f"{field}[{i}]") for i, item in enumerate(conversation)]
    at = _last_asked(turns, roles=("human",))
    if at is None:
        raise InvalidInputError(field, "has no human message with text to take as the question")
    return turns[at][1]


def _same(a: str, b: str) -> bool:
    return " ".join(clean_text(a).split()) == " ".join(clean_text(b).split())


def _is_message(value: Any) -> bool:
    from langchain_core.messages import BaseMessage

    return isinstance(value, BaseMessage)


def check_input(
    question: str, answer: str, contexts: list[str], history: Sequence[Any] = ()
) -> dict[str, Any]:
    """A detector input: the question, the answer and its contexts, and the chat history when
    there is one (an input without it is what detectors that ignore history expect)."""
    out: dict[str, Any] = {"question": question, "answer": answer, "contexts": contexts}
    if history:
        out["history"] = list(history)
    return out
