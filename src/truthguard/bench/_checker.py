"""``--checker`` of the benchmarks that measure a RefChecker: which checker labels the claims."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["CHECKER_HELP", "add_checker_argument", "refchecker_with"]

CHECKER_HELP = (
    "claim checker: local (the default grounding); a name: hhem-2.1-open, "
    "minicheck-roberta-large, minicheck-deberta-v3-large, minicheck-flan-t5-large, "
    "lettucedetect, lettucedetect-large, alignscore-base, alignscore-large; a folder of "
    "downloaded weights (HHEM, MiniCheck, LettuceDetect or an NLI model, told apart by its "
    "config.json); or KIND:MODEL with KIND nli, minicheck, hhem or lettucedetect and MODEL a hub "
    "id or a folder, or alignscore:CHECKPOINT,BASE"
)


def add_checker_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--checker", default="local", metavar="NAME-OR-PATH", help=CHECKER_HELP)


def refchecker_with(checker: str, **kwargs: Any) -> Any:
    """``RefChecker(**kwargs)`` whose claims the checker ``checker`` names labels."""
    from truthguard.errors import ConfigurationError
    from truthguard.refchecker import RefChecker
    from truthguard.refchecker.named import checker_from_spec

    try:
        claim_checker = checker_from_spec(checker)
    except ConfigurationError as e:
        raise SystemExit(f"--checker: {e}") from e
    if claim_checker is not None:
        kwargs["checker"] = claim_checker
    return RefChecker(**kwargs)
