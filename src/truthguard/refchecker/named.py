"""The published open checkers by name: ``RefChecker(checker="minicheck-flan-t5-large")``.

:func:`named_checker` turns a name into the checker that runs that model its authors' way
(:mod:`~truthguard.refchecker.minicheck`, :mod:`~truthguard.refchecker.hhem`); the model
loads on the first check.
"""

from __future__ import annotations

import json
from pathlib import Path

from truthguard.errors import ConfigurationError
from truthguard.refchecker.alignscore import ALIGNSCORE_MODELS, AlignScoreChecker
from truthguard.refchecker.checkers import ClaimChecker
from truthguard.refchecker.hhem import HHEMChecker
from truthguard.refchecker.lettuce import LETTUCE_MODELS, LettuceDetectChecker
from truthguard.refchecker.minicheck import MINICHECK_MODELS, MiniCheckChecker
from truthguard.refchecker.nli import NLIChecker

__all__ = ["CHECKER_NAMES", "checker_from_spec", "named_checker"]

CHECKER_NAMES: tuple[str, ...] = (
    "hhem-2.1-open",
    *MINICHECK_MODELS,
    *LETTUCE_MODELS,
    *ALIGNSCORE_MODELS,
)
"""The names ``RefChecker(checker=...)`` accepts."""


def named_checker(name: str) -> ClaimChecker:
    """The checker of a published open model, by name.

    Example:
        >>> named_checker("minicheck-roberta-large").model
        'minicheck-roberta-large'
    """
    key = name.strip().lower()
    if key in MINICHECK_MODELS:
        return MiniCheckChecker(model=key)
    if key == "hhem-2.1-open":
        return HHEMChecker(model=key)
    if key in LETTUCE_MODELS:
        return LettuceDetectChecker(model=key)
    if key in ALIGNSCORE_MODELS:
        return AlignScoreChecker(model=key)
    raise ConfigurationError(
        f"unknown checker name {name!r}; the named checkers are {', '.join(CHECKER_NAMES)} "
        "(or pass a checker object, e.g. MiniCheckChecker(model='./folder'))"
    )


_KINDS: dict[str, type[ClaimChecker]] = {
    "nli": NLIChecker,
    "minicheck": MiniCheckChecker,
    "hhem": HHEMChecker,
    "lettucedetect": LettuceDetectChecker,
}
_NLI_LABELS = ("entail", "contradict", "neutral")


def _by_folder(path: Path) -> ClaimChecker:
    """The checker a folder of weights is for, read from its ``config.json``."""
    try:
        config = json.loads((path / "config.json").read_text())
    except (OSError, ValueError) as e:
        raise ConfigurationError(
            f"the folder {str(path)!r} holds no readable config.json, so which checker it is "
            "for is unknown; name it as KIND:FOLDER (nli, minicheck, hhem or lettucedetect)"
        ) from e
    kind = str(config.get("model_type", "")).lower()
    labels = [str(v).lower() for v in (config.get("id2label") or {}).values()]
    if kind == "hhemv2" or "foundation" in config:
        return HHEMChecker(model=str(path))
    if any(str(a).endswith("ForTokenClassification") for a in config.get("architectures") or []):
        return LettuceDetectChecker(model=str(path))  # it labels tokens, not pairs
    if kind == "t5" or (labels and not any(v.startswith(_NLI_LABELS) for v in labels)):
        return MiniCheckChecker(model=str(path))  # MiniCheck's two classes carry no names
    return NLIChecker(model=str(path))


def checker_from_spec(spec: str) -> ClaimChecker | None:
    """The checker a command line names; None for ``local``.

    ``local``; a name of :data:`CHECKER_NAMES`; ``KIND:MODEL`` with KIND ``nli``,
    ``minicheck``, ``hhem`` or ``lettucedetect`` and MODEL a hub id or folder
    (``alignscore:CHECKPOINT,BASE`` for an AlignScore checkpoint and its RoBERTa); or a folder of
    weights, its kind read from its ``config.json`` (HHEM names a foundation; a token
    classifier is LettuceDetect; a T5, or a classifier whose labels are not entailment /
    neutral / contradiction, is MiniCheck; else an NLI model).

    Example:
        >>> type(checker_from_spec("minicheck:./weights")).__name__
        'MiniCheckChecker'
    """
    text = spec.strip()
    if text in ("", "local"):
        return None
    if text.lower() in CHECKER_NAMES:
        return named_checker(text)
    kind, sep, model = text.partition(":")
    if sep and (kind.lower() in _KINDS or kind.lower() == "alignscore"):
        if not model.strip():
            raise ConfigurationError(f"{text!r}: give the model after {kind}:")
        if kind.lower() == "alignscore":  # alignscore:CHECKPOINT,BASE
            ckpt, _, base = model.strip().partition(",")
            return AlignScoreChecker(model=ckpt, base=base or None)
        return _KINDS[kind.lower()](model=model.strip())
    path = Path(text).expanduser()
    if path.is_dir():
        return _by_folder(path)
    raise ConfigurationError(
        f"unknown checker {spec!r}: not local, a name ({', '.join(CHECKER_NAMES)}), "
        "KIND:MODEL (nli, minicheck, hhem, lettucedetect, alignscore) or a folder"
    )
