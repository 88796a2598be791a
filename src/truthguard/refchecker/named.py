"""The published open checkers by name: ``RefChecker(checker="minicheck-flan-t5-large")``.

:func:`named_checker` turns a name into the checker that runs that model its authors' way
(:mod:`~truthguard.refchecker.minicheck`, :mod:`~truthguard.refchecker.hhem`); the model
loads on the first check.
"""

from __future__ import annotations

from truthguard.errors import ConfigurationError
from truthguard.refchecker.checkers import ClaimChecker
from truthguard.refchecker.hhem import HHEMChecker
from truthguard.refchecker.minicheck import MINICHECK_MODELS, MiniCheckChecker

__all__ = ["CHECKER_NAMES", "named_checker"]

CHECKER_NAMES: tuple[str, ...] = ("hhem-2.1-open", *MINICHECK_MODELS)
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
    raise ConfigurationError(
        f"unknown checker name {name!r}; the named checkers are {', '.join(CHECKER_NAMES)} "
        "(or pass a checker object, e.g. MiniCheckChecker(model='./folder'))"
    )
