"""Cross-encoder similarity."""

from __future__ import annotations

import pytest

from truthguard.errors import InvalidInputError
from truthguard.similarity import (
    CrossEncoderSimilarity,
)


def test_cross_encoder_requires_a_local_path(tmp_path):
    with pytest.raises(InvalidInputError, match="model_path"):
        CrossEncoderSimilarity(tmp_path / "missing")
