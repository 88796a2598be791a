"""What every model loader shares: one load at a time, and no progress bars."""

from __future__ import annotations

import threading
from typing import Any

from truthguard.errors import ConfigurationError

__all__ = ["load_lock", "quiet_transformers", "sentence_transformers_class"]

load_lock = threading.RLock()
"""Held while a model loads, so two threads asking for the same model load it once."""


def quiet_transformers() -> None:
    """Turn off transformers' weight-loading progress bars (noise in a library and in --json)."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover
        pass


def sentence_transformers_class(name: str, purpose: str) -> Any:
    """``sentence_transformers.<name>``, progress bars off; the error names ``purpose`` and the
    extra to install when the package is missing."""
    try:
        import sentence_transformers
    except ImportError as e:
        raise ConfigurationError(
            f"{purpose} needs sentence-transformers: pip install 'truthguard[local]'"
        ) from e
    quiet_transformers()
    return getattr(sentence_transformers, name)
