"""Turn pydantic construction errors into :class:`InvalidInputError` naming the field.

For any pydantic component built from user options (guards, policies, a selector, an
integration's engine): a wrong option fails at construction with the field in the message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import ValidationError

from truthguard.errors import InvalidInputError

__all__ = ["input_errors"]


@contextmanager
def input_errors() -> Iterator[None]:
    """Re-raise a ``ValidationError`` as ``InvalidInputError`` (field = dotted location)."""
    try:
        yield
    except ValidationError as e:
        err = e.errors()[0]
        inner = (err.get("ctx") or {}).get("error")
        if isinstance(inner, InvalidInputError):
            raise inner from e
        field = ".".join(str(p) for p in err.get("loc", ())) or "config"
        raise InvalidInputError(field, err.get("msg", "invalid value")) from e
