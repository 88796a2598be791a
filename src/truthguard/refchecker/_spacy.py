"""Import spaCy without torch: the small English pipeline runs on numpy alone.

thinc, spaCy's machine-learning layer, imports torch at its own import whenever torch is
installed (for its optional torch-backed models), which adds about 180 MiB to the process
although the pipeline never calls it. Unless torch is loaded already, thinc is imported while
``import torch`` fails, so it records torch as absent; torch stays importable afterwards for
anything else. A process whose own spaCy pipelines need torch (spacy-transformers) imports
torch, or spaCy, before truthguard's first parse.
"""

from __future__ import annotations

import importlib
import sys
import threading
from types import ModuleType

__all__ = ["without_torch"]

_LOCK = threading.Lock()


def without_torch(name: str) -> ModuleType:
    """Import module ``name`` (spaCy) with thinc seeing no torch, unless either is loaded."""
    with _LOCK:
        if "torch" in sys.modules or "thinc" in sys.modules:
            return importlib.import_module(name)
        sys.modules["torch"] = None  # type: ignore[assignment]  # "import torch" fails here
        try:
            return importlib.import_module(name)
        finally:
            if sys.modules.get("torch", ...) is None:
                del sys.modules["torch"]
