"""How a detector calls its models: :class:`LLMSettings`, and how many retries that means."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from truthguard.llm.retries import DEFAULT_RETRIES, call_plan

__all__ = ["DEFAULT_RETRIES", "LLMSettings"]


class LLMSettings(BaseModel):
    """How a detector calls its models.

    Retries happen in ONE layer: the session's. Clients such as ``ChatOpenAI`` retry rate
    limits, server errors and time-outs themselves (``max_retries=2``); for the calls truthguard
    makes, the session turns that off (it calls a copy of the model sharing its connections, see
    :mod:`truthguard.llm.retries`) and retries as often as the client would have, honouring
    ``Retry-After``, so a cancelled check stops retrying at once, on the sync path too. A call
    that keeps failing makes 3 requests either way. The user's model itself is never changed.
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
    """Seconds one attempt of one call may take; None for no limit. A model client with a
    longer time-out or none (``ChatOpenAI``'s default) gets this one for truthguard's calls, so
    a request abandoned on a worker thread ends with its attempt."""
    total_timeout: float | None = Field(default=None, gt=0)
    """Seconds all the model calls of one check may take together, waiting for a slot, retries
    and back-off included; past it the check returns an ``invalid`` result. None for no limit."""
    max_retries: int | None = Field(default=None, ge=0)
    """Extra attempts after a failed call (errors, time-outs, replies cut short). None: as many
    as the model would make by itself (``ChatOpenAI``'s ``max_retries``, a ``with_retry()``),
    else 2."""
    backoff_initial: float = Field(default=0.5, ge=0)
    """First back-off delay in seconds; doubles per retry, with jitter."""
    backoff_max: float = Field(default=10.0, ge=0)
    """Longest back-off delay in seconds."""
    raise_on_error: bool = False
    """Raise :class:`LLMCallError` instead of returning an ``invalid`` result."""

    def retries_for(self, model: Any) -> int:
        """Extra attempts the session makes for ``model`` (see ``max_retries``)."""
        return call_plan(model, self.max_retries).retries
