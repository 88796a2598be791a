"""Exceptions raised by truthguard.

Every exception derives from :class:`TruthGuardError`::

    TruthGuardError
    ├── InvalidInputError        bad user input; names the offending field
    ├── ConfigurationError       an optional backend is missing or mis-configured
    ├── LLMCallError             a model call failed after its retries (carries the stage)
    ├── InvalidLLMOutput         a model answered, but the text could not be parsed (carries raw)
    ├── MissingRecordingError    a replay model has no recording for a request
    ├── DatasetNotFoundError     a dataset folder is missing and could not be downloaded
    └── GuardRejected            a guard ran out of attempts (carries every attempt)
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConfigurationError",
    "DatasetNotFoundError",
    "GuardRejected",
    "InvalidInputError",
    "InvalidLLMOutput",
    "LLMCallError",
    "MissingRecordingError",
    "TruthGuardError",
]


class TruthGuardError(Exception):
    """Root of every exception raised by truthguard."""


class InvalidInputError(TruthGuardError, ValueError):
    """The input to a detector, guard or loader is malformed.

    Attributes:
        field: Dotted name of the offending field (``"contexts[2]"``).
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


class ConfigurationError(TruthGuardError):
    """An option is inconsistent or an optional dependency is not installed."""


class LLMCallError(TruthGuardError):
    """A model call failed after all its retries.

    Attributes:
        stage: The detector stage that made the call (``"fewl.reference"``).
        attempts: How many attempts were made.
    """

    def __init__(self, stage: str, message: str, *, attempts: int = 1) -> None:
        self.stage = stage
        self.attempts = attempts
        super().__init__(f"[{stage}] {message} (after {attempts} attempt(s))")


class InvalidLLMOutput(TruthGuardError):
    """A model answered with text that a parser could not use.

    Attributes:
        raw: The model's text, kept verbatim.
        stage: The detector stage whose output failed to parse.
    """

    def __init__(self, message: str, *, raw: str, stage: str) -> None:
        self.raw = raw
        self.stage = stage
        super().__init__(f"[{stage}] {message}")


class MissingRecordingError(TruthGuardError, KeyError):
    """A replay model was asked for an output that was never recorded.

    Attributes:
        key: The lookup key that had no recording.
    """

    def __init__(self, key: Any, message: str | None = None) -> None:
        self.key = key
        super().__init__(message or f"no recorded output for key {key!r}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class DatasetNotFoundError(TruthGuardError, FileNotFoundError):
    """A dataset could be neither found locally nor downloaded."""


class GuardRejected(TruthGuardError):
    """A guard exhausted its policies without a passing answer.

    Attributes:
        attempts: Every attempt made, in order (answer, results, policy applied).
        result: The verdict of the last attempt.
        usage: Total usage of every attempt (chain and detectors), when known.
    """

    def __init__(
        self, message: str, *, attempts: list[Any], result: Any = None, usage: Any = None
    ) -> None:
        self.attempts = attempts
        self.result = result
        self.usage = usage
        super().__init__(message)

    @property
    def n_attempts(self) -> int:
        return len(self.attempts)
