"""FEWL: factualness evaluation by weighting reference LLMs, without gold-standard answers.

* :func:`fewl_formula`: the score of Algorithm 1 as a pure function of similarity arrays.
* :class:`FEWL`: the detector (reference answers, IW/CO pairs, neighbours, caching, ranking).
* :func:`parse_iwco_pairs`: the tolerant parser of the generator's wrong/corrected pairs.
"""

from truthguard.fewl._formula import DIVERGENCES, EXPERTISE_MODES, FEWLBreakdown, fewl_formula
from truthguard.fewl._parse import IWCOPairs, parse_iwco_pairs
from truthguard.fewl._prompts import PROMPT_VERSION
from truthguard.fewl.detector import FEWL

__all__ = [
    "DIVERGENCES",
    "EXPERTISE_MODES",
    "FEWL",
    "PROMPT_VERSION",
    "FEWLBreakdown",
    "IWCOPairs",
    "fewl_formula",
    "parse_iwco_pairs",
]
