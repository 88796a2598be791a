"""Loaders for the benchmark data: PHD (Reverse Validation), CHALE, RefChecker
annotations and HaluEval.

Each loader reads, in order: the directory you pass; ``$TRUTHGUARD_DATA_DIR``; a cache
directory (``$TRUTHGUARD_HOME/data`` or ``~/.cache/truthguard/data``) into which the upstream
files are downloaded on first use. A directory may be the data root (holding ``phd/``,
``chale/``, ``refchecker/``) or the dataset's own folder.
"""

from truthguard.datasets._loaders import (
    HALUEVAL_TASKS,
    REFCHECKER_MODELS,
    ChaleItem,
    HaluEvalItem,
    PHDPassage,
    RefCheckerClaim,
    RefCheckerResponse,
    RVRecord,
    dataset_dir,
    load_chale,
    load_halueval,
    load_phd,
    load_refchecker,
    load_rv_records,
    load_wikibio_records,
    strip_html,
)

__all__ = [
    "HALUEVAL_TASKS",
    "REFCHECKER_MODELS",
    "ChaleItem",
    "HaluEvalItem",
    "PHDPassage",
    "RVRecord",
    "RefCheckerClaim",
    "RefCheckerResponse",
    "dataset_dir",
    "load_chale",
    "load_halueval",
    "load_phd",
    "load_refchecker",
    "load_rv_records",
    "load_wikibio_records",
    "strip_html",
]
