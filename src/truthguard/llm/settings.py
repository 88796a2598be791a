"""How a detector calls its models: :class:`LLMSettings`, and how many retries that means."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["DEFAULT_RETRIES", "LLMSettings"]


class LLMSettings(BaseModel):
    """How a detector calls its models.

    Retries happen in ONE layer by default. Clients such as ``ChatOpenAI`` retry rate limits,
    server errors and time-outs themselves (``max_retries=2``, honouring ``Retry-After``); with
    ``max_retries=None`` the session then makes a single attempt, and otherwise it retries twice.
    Either way a call that keeps failing makes 3 requests. Setting both multiplies them:
    ``(LLMSettings.max_retries + 1) * (ChatOpenAI.max_retries + 1)`` requests.
    """

    model_config = ConfigDict(extra="forbid")

    def __init__(self, **kwargs: Any) -> None:
        try:
            super().__init__(**kwargs)
        except ValidationError as e:  # the library's error, naming the field
            from truthguard.errors import InvalidInputError

            err = e.errors()[0]
            field = ".".join(str(p) for p in err.get("loc", ())) or "llm_settings"
            msg = "is not an accepted field" if err.get("type") == "extra_forbidden" else err["msg"]
            raise InvalidInputError(field, msg) from e

    max_concurrency: int = Field(default=256, ge=1)
    """Most model calls of one check in flight at once."""
    timeout: float | None = Field(default=120.0, gt=0)
    """Seconds one attempt of one call may take (the client's own retries included); None for
    no limit."""
    total_timeout: float | None = Field(default=None, gt=0)
    """Seconds all the model calls of one check may take together, waiting for a slot, retries
    and back-off included; past it the check returns an ``invalid`` result. None for no limit."""
    max_retries: int | None = Field(default=None, ge=0)
    """Extra attempts after a failed call (errors, time-outs, replies cut short). None: 0 when
    the model retries by itself (a ``max_retries`` above 0, as ``ChatOpenAI`` has), else 2."""
    backoff_initial: float = Field(default=0.5, ge=0)
    """First back-off delay in seconds; doubles per retry, with jitter."""
    backoff_max: float = Field(default=10.0, ge=0)
    """Longest back-off delay in seconds."""
    raise_on_error: bool = False
    """Raise :class:`LLMCallError` instead of returning an ``invalid`` result."""

    def retries_for(self, model: Any) -> int:
        """Extra attempts the session makes for ``model`` (see ``max_retries``)."""
        if self.max_retries is not None:
            return self.max_retries
        return 0 if _own_retries(model) > 0 else DEFAULT_RETRIES


DEFAULT_RETRIES = 2


def _own_retries(model: Any) -> int:
    """Retries a model client makes by itself (``ChatOpenAI.max_retries``, ``with_retry``)."""
    for _ in range(4):  # unwrap model.bind(...) / with_config(...) bindings
        n = getattr(model, "max_retries", None)
        if n is None and hasattr(model, "max_retries"):  # ChatOpenAI: None = the SDK's default
            n = getattr(getattr(model, "root_client", None), "max_retries", None)
        if isinstance(n, int) and not isinstance(n, bool):
            return n
        attempts = getattr(model, "max_attempt_number", None)  # Runnable.with_retry()
        if isinstance(attempts, int) and not isinstance(attempts, bool):
            return attempts - 1
        model = getattr(model, "bound", None)
        if model is None:
            break
    return 0
