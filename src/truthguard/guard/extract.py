"""Pull the question, answer and contexts out of a chain's input and output (no I/O).

Shared by the guards, the callback handlers, the evaluators and the LlamaIndex integration.
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
    "QUESTION_KEYS",
    "answer_of",
    "clean_text",
    "contexts_of",
    "question_of",
]

QUESTION_KEYS = ("question", "input", "query")
"""Input keys searched for the question, in order, when no key is configured."""
ANSWER_KEYS = ("answer", "output", "result", "text", "content")
"""Output keys searched for the answer, in order, when no key is configured."""
CONTEXT_KEYS = ("context", "contexts", "source_documents", "documents", "docs")
"""Output keys searched for the context documents, in order."""


def question_of(input: Any, key: str | None = None) -> str:
    """The question carried by a chain input: a string, or a dict entry.

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
        if not isinstance(text, str):
            if not _is_message(text):  # 5, NaN, ["a"], {} are not questions
                raise InvalidInputError(
                    found, f"must be a string or a message, got {type(text).__name__}"
                )
            text = message_text(text)
    else:
        raise InvalidInputError(
            "input",
            f"expected a string or a dict carrying the question, got {type(input).__name__}",
        )
    if not text.strip():
        raise InvalidInputError(key or "question", "must not be blank")
    return text


def _is_message(value: Any) -> bool:
    from langchain_core.messages import BaseMessage

    return isinstance(value, BaseMessage)


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
