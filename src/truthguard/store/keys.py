"""How the store names questions and artifacts, and the checks on the strings of a key."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from truthguard.errors import InvalidInputError

__all__ = ["artifact_id", "norm_question", "question_id", "require_questions", "require_text"]


def norm_question(question: str) -> str:
    """``question`` with its whitespace collapsed (two spellings, one key)."""
    return " ".join(question.split()).strip()


def require_text(value: Any, field: str, *, blank: bool = False) -> str:
    """``value`` if it is a string (non-blank unless ``blank``), else InvalidInputError."""
    if not isinstance(value, str):
        raise InvalidInputError(field, f"expected a string, got {type(value).__name__}")
    if not blank and not value.strip():
        raise InvalidInputError(field, "must not be blank")
    return value


def require_questions(questions: Any, field: str = "questions") -> list[str]:
    """``questions`` as a list of non-blank strings, else InvalidInputError naming the item."""
    # A bare string is iterable: refuse it rather than store its characters.
    if isinstance(questions, str | bytes | Mapping) or not isinstance(questions, Iterable):
        raise InvalidInputError(
            field, f"expected a list of strings, got {type(questions).__name__}"
        )
    return [require_text(q, f"{field}[{i}]") for i, q in enumerate(questions)]


def question_id(question: str) -> str:
    """Stable id of a question (whitespace-normalised text, SHA-1)."""
    text = norm_question(require_text(question, "question"))
    return "q-" + hashlib.sha1(text.encode("utf-8")).hexdigest()


def artifact_id(question: str, kind: str, model: str, prompt_version: str, extra: str = "") -> str:
    """Id of an artifact; raises InvalidInputError naming a field that is not a string."""
    key = json.dumps(
        [
            norm_question(require_text(question, "question")),
            require_text(kind, "kind"),
            require_text(model, "model"),
            require_text(prompt_version, "prompt_version", blank=True),
            require_text(extra, "extra", blank=True),
        ]
    )
    return "a-" + hashlib.sha1(key.encode("utf-8")).hexdigest()
