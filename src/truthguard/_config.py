"""Small helpers on LangChain ``RunnableConfig``s shared by detectors and the guard."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config

__all__ = ["with_default_concurrency"]


def with_default_concurrency(
    config: RunnableConfig | list[RunnableConfig] | None, bound: int
) -> RunnableConfig | list[RunnableConfig]:
    """Give ``batch`` / ``abatch`` configs a ``max_concurrency`` of ``bound`` unless one is set."""
    if isinstance(config, list):
        return [c if c.get("max_concurrency") else {**c, "max_concurrency": bound} for c in config]
    config = ensure_config(config)
    if config.get("max_concurrency") is None:
        config = {**config, "max_concurrency": bound}
    return config
