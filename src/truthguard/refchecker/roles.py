"""Who did what: a claim that gives an action to another person than its evidence does.

Finding every name of a claim in the sources is not enough: "John Wallace designed the locks"
names two people the sources name, but the sentence it comes from says George Goethals designed
them, and John Wallace did something else. The check reads who does each action word the claim
and its evidence sentence share: the name just before it, or the name after "by" in the passive
("the locks were designed by Goethals"). Where the claim's doer is named in the evidence sentence
but the sentence gives that action to a name the claim never mentions, the claim has swapped who
did what. A passive paraphrase keeps the doer, so it passes; a name the sentence does not hold is
left to the grounding (a name found nowhere) and the support model.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from truthguard.refchecker._analysis import Against, Analysed, analyse
from truthguard.refchecker._facts import FUNCTION_WORDS
from truthguard.refchecker._lemmas import lemmas

__all__ = ["RoleSwap", "role_swaps"]

NEAR = 0
"""Most tokens between an action word and the name it is said of: none ("Goethals designed"),
or "by" alone in the passive ("designed by Goethals"), which :func:`_roles` reads itself."""


@dataclass(frozen=True)
class RoleSwap(Against):
    """A name of the claim (``text``) put where its evidence sentence has another name
    (``evidence_text``)."""

    action: str
    """The action word both share."""


_PASSIVE = frozenset(["is", "are", "was", "were", "be", "been", "being", "get", "got"])
_SKIP = frozenset(["a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "by", "for"])


def _name_like(a: Analysed, k: int) -> bool:
    t = a.tokens[k]
    return t.text[:1].isupper() and t.norm not in FUNCTION_WORDS and t.norm not in _SKIP


def _runs(a: Analysed) -> list[tuple[int, int]]:
    """Token index spans (first, last) of the runs of adjacent capitalised words (the names of
    the text, its opening word included: "Schmidt gets a lead" names Schmidt)."""
    runs: list[tuple[int, int]] = []
    for k in range(len(a.tokens)):
        if not _name_like(a, k):
            continue
        if runs and k == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], k)
        else:
            runs.append((k, k))
    return runs


def _beside(runs: list[tuple[int, int]], k: int, side: int) -> tuple[int, int] | None:
    """The name run within :data:`NEAR` tokens of token ``k`` on ``side`` (-1 before, +1
    after), the nearest one; None when there is none."""
    best = None
    for lo, hi in runs:
        gap = k - hi - 1 if side < 0 else lo - k - 1
        if 0 <= gap <= NEAR and (best is None or gap < best[0]):
            best = (gap, (lo, hi))
    return None if best is None else best[1]


def _roles(a: Analysed, runs: list[tuple[int, int]], k: int) -> dict[str, tuple[int, int]]:
    """The doer and the patient of the action word at ``k``: the names before and after it,
    read the other way round in the passive ("was designed by Goethals")."""
    by = k + 1 < len(a.tokens) and a.tokens[k + 1].norm == "by"
    before, after = _beside(runs, k, -1), _beside(runs, k + 1 if by else k, 1)
    passive = by or (k > 0 and a.tokens[k - 1].norm in _PASSIVE)
    out = {}
    if passive:
        if after is not None and by:
            out["doer"] = after
        if before is not None:
            out["patient"] = before
    else:
        if before is not None:
            out["doer"] = before
        if after is not None:
            out["patient"] = after
    return out


def _words(a: Analysed, run: tuple[int, int]) -> set[str]:
    return {a.tokens[k].norm.removesuffix("'s") for k in range(run[0], run[1] + 1)}


@functools.lru_cache(maxsize=8192)
def _finite_verb(word: str) -> bool:
    """Whether ``word`` is an inflected form of a verb ("designed", "wrote", "gets"): what a doer
    does. A noun after a name ("Rings film", "Canada's immigration") is not an action."""
    verbs = lemmas(word).get("VERB", ())
    return bool(verbs) and word not in verbs


def _actions(a: Analysed, names: set[int]) -> dict[str, list[int]]:
    """Each word that can name an action (not a name, not a function word), by stem."""
    out: dict[str, list[int]] = {}
    for k, t in enumerate(a.tokens):
        if k in names or t.norm in FUNCTION_WORDS or t.norm in _SKIP:
            continue
        if not (t.text.isalpha() and t.text.islower() and _finite_verb(t.norm)):
            continue
        out.setdefault(t.norm, []).append(k)  # the same form: "designed" for "designed"
    return out


def role_swaps(claim_text: str, evidence_text: str) -> list[RoleSwap]:
    """The claim's names put where the evidence sentence has another name (see the module)."""
    claim, evidence = analyse(claim_text), analyse(evidence_text)
    claim_runs, evidence_runs = _runs(claim), _runs(evidence)
    if not claim_runs or not evidence_runs:
        return []
    claim_named = {k for lo, hi in claim_runs for k in range(lo, hi + 1)}
    evidence_named = {k for lo, hi in evidence_runs for k in range(lo, hi + 1)}
    claim_names = set().union(*(_words(claim, r) for r in claim_runs))
    evidence_actions = _actions(evidence, evidence_named)
    evidence_words = set().union(*(_words(evidence, r) for r in evidence_runs))
    out: dict[tuple[int, int], RoleSwap] = {}
    for key, places in _actions(claim, claim_named).items():
        theirs_at = evidence_actions.get(key)
        if not theirs_at:
            continue
        for k in places:
            mine = _roles(claim, claim_runs, k)
            for role, run in mine.items():
                if role != "doer" or not _words(claim, run) <= evidence_words:
                    continue  # the doer, named in the evidence sentence too (in another role)
                swapped = None
                for j in theirs_at:
                    theirs = _roles(evidence, evidence_runs, j).get(role)
                    words = _words(evidence, theirs) if theirs else set()
                    if theirs is None or words & claim_names:
                        swapped = None  # one place where the evidence agrees (or is silent)
                        break
                    swapped = theirs
                if swapped is None or (run[0], run[1]) in out:
                    continue
                c0, c1 = claim.tokens[run[0]], claim.tokens[run[1]]
                e0, e1 = evidence.tokens[swapped[0]], evidence.tokens[swapped[1]]
                out[run] = RoleSwap(
                    c0.start,
                    c1.end,
                    claim_text[c0.start : c1.end],
                    e0.start,
                    e1.end,
                    evidence_text[e0.start : e1.end],
                    claim.tokens[k].text,
                )
    return list(out.values())
