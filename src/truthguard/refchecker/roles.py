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
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise, permutations

from truthguard.refchecker._analysis import Against, Analysed, analyse
from truthguard.refchecker._facts import FUNCTION_WORDS, stem
from truthguard.refchecker._lemmas import lemmas

__all__ = ["RoleSwap", "name_spans", "role_swaps", "traded_names"]

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
    if before is not None and _set_off(a, a.tokens[before[1]].end, a.tokens[k].start):
        before = None  # "Paddock of Mesquite, Nevada, fired": an aside, not who fired
    if after is not None:
        after = _named_after_descriptor(a, runs, after)
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


def _set_off(a: Analysed, start: int, end: int) -> bool:
    """Whether punctuation stands between ``start`` and ``end`` of ``a``'s text: a comma, a
    bracket or a dash sets a name off from the verb after it (an aside, or the end of one), and
    a subject is never cut from its verb so."""
    return any(ch in ",;:()[]\u2013\u2014" for ch in a.text[start:end])


_DEMONYM = re.compile(r"^[A-Z][a-z]+(?:an|ian|ish|ese|ic|i)$")
"""A people's or a country's adjective ("American", "British", "Danish")."""


def _named_after_descriptor(
    a: Analysed, runs: list[tuple[int, int]], run: tuple[int, int]
) -> tuple[int, int]:
    """The name a people's adjective describes, when ``run`` is that adjective and the name
    follows it after a lower-case noun or two ("by American actor Roger Bart" is done by
    Roger Bart), else ``run``."""
    if run[0] != run[1] or not _DEMONYM.match(a.tokens[run[0]].text):
        return run
    for lo, hi in runs:
        between = a.tokens[run[1] + 1 : lo]
        lower = all(t.text.isalpha() and t.text.islower() for t in between)
        if lo > run[1] and 1 <= len(between) <= 2 and lower:
            return (lo, hi)
    return run


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
                e0, e1 = evidence.tokens[swapped[0]], evidence.tokens[swapped[1]]
                out[run] = _swap(claim, run, evidence_text, e0.start, e1.end, claim.tokens[k].text)
    return list(out.values())


def _swap(
    claim: Analysed, span: tuple[int, int], evidence: str, start: int, end: int, action: str
) -> RoleSwap:
    """The claim's name over tokens ``span`` set against ``evidence[start:end]``."""
    c0, c1 = claim.tokens[span[0]], claim.tokens[span[1]]
    return RoleSwap(
        c0.start, c1.end, claim.text[c0.start : c1.end], start, end, evidence[start:end], action
    )


_CLAUSE_WORDS = frozenset(["and", "while", "whereas", "but", "who", "whom", "which", "whose"])
"""Words that open a clause of their own (besides the punctuation before a word)."""
_LEAD_SKIP = FUNCTION_WORDS | _CLAUSE_WORDS


def _pieces(a: Analysed, named: set[int]) -> list[range]:
    """Token ranges of a text's clauses: a clause ends at a comma, semicolon, colon or dash,
    and before a word of :data:`_CLAUSE_WORDS` ("and" between two names joins them)."""
    starts = [0]
    for k in range(1, len(a.tokens)):
        t = a.tokens[k]
        between_names = t.norm == "and" and k - 1 in named and k + 1 in named
        gap = a.text[a.tokens[k - 1].end : t.start]
        score = gap in ("\u2013", "-") and a.tokens[k - 1].norm.isdigit()  # "won 4\u20132"
        if (t.norm in _CLAUSE_WORDS and not between_names) or (
            any(ch in ",;:\u2013\u2014" for ch in gap) and not score
        ):
            starts.append(k)
    return [range(lo, hi) for lo, hi in pairwise([*starts, len(a.tokens)])]


def name_spans(a: Analysed) -> list[tuple[int, int]]:
    """Token spans (first, last) of the text's names (name facts side by side are one name)."""
    spans: list[tuple[int, int]] = []
    for f in a.facts:
        if f.kind != "name":
            continue
        at = [k for k, t in enumerate(a.tokens) if f.start <= t.start and t.end <= f.end]
        if not at:
            continue
        if spans and not a.text[a.tokens[spans[-1][1]].end : a.tokens[at[0]].start].strip():
            spans[-1] = (spans[-1][0], at[-1])
        else:
            spans.append((at[0], at[-1]))
    return spans


@dataclass(frozen=True)
class _Clause:
    """A clause of a text: where it stands, the words it holds, what it says (content stems,
    names left out)."""

    sentence: int
    start: int
    end: int
    words: frozenset[str]
    says: frozenset[str]
    named_first: bool
    """Whether a name opens the clause (it is about that name)."""
    names: frozenset[str]
    """The words of the names it holds."""


def _clauses(a: Analysed, sentence: int = 0) -> list[_Clause]:
    named = {k for lo, hi in name_spans(a) for k in range(lo, hi + 1)}
    content = set(a.content)
    out = []
    for piece in _pieces(a, named):
        lead = [k for k in piece if a.tokens[k].norm not in _LEAD_SKIP]
        if not lead:
            continue
        out.append(
            _Clause(
                sentence,
                a.tokens[piece[0]].start,
                a.tokens[piece[-1]].end,
                frozenset(a.tokens[k].norm.removesuffix("'s") for k in piece),
                frozenset(stem(a.tokens[k].norm) for k in piece if k in content and k not in named),
                lead[0] in named,
                frozenset(a.tokens[k].norm.removesuffix("'s") for k in piece if k in named),
            )
        )
    return out


def _about(
    clauses: Sequence[_Clause], x: frozenset[str], y: frozenset[str]
) -> list[tuple[str, _Clause, frozenset[str]]]:
    """Runs of clauses about ``x`` or ``y`` (names' own words): a clause naming one of them
    and not the other is about it, and so are the clauses after it in its sentence that name
    neither and do not open with another name ("Murray, a geologist from Leith, served as its
    chief scientist"). Each run as
    ("x" or "y", its first clause, what the run says)."""
    runs: list[tuple[str, _Clause, frozenset[str]]] = []
    current: str | None = None
    last = -1
    for c in clauses:
        if c.sentence != last:
            current, last = None, c.sentence
        has_x, has_y = bool(c.words & x), bool(c.words & y)
        if has_x != has_y:
            current = "x" if has_x else "y"
            runs.append((current, c, c.says))
        elif has_x or c.named_first:
            current = None  # a clause naming both tells neither apart; one about another name
        elif current is not None:
            who, first, says = runs[-1]
            runs[-1] = (who, first, says | c.says)
    return runs


def traded_names(claim_text: str, sentences: Sequence[str]) -> list[tuple[RoleSwap, int]]:
    """Two names of the claim, each said in a clause of its own, that trade what the sources
    say of them: the words the claim says of one are said, in the sources, in a clause about
    the other, and the other way round, more than in any clause about it ("Kimura designed the
    seismograph, and Ashworth built it" where the sources say "Ashworth designed the
    instrument, and Kimura built it"). Each such name with the clause it was taken from (a
    :class:`RoleSwap` whose action is a word it was given) and the index of that clause's
    sentence. Clauses naming both, and names no clause of the sources is about, decide
    nothing; a claim that keeps each name with its words passes however it is worded.
    """
    claim = analyse(claim_text)
    spans = name_spans(claim)
    if not spans:
        return []
    mine = _clauses(claim)
    theirs = [c for n, text in enumerate(sentences) for c in _clauses(analyse(text), n)]
    words = [_words(claim, s) for s in spans]
    out: list[tuple[RoleSwap, int]] = []
    for x, y in permutations(range(len(spans)), 2):
        own_x, own_y = frozenset(words[x] - words[y]), frozenset(words[y] - words[x])
        if not own_x or not own_y:
            continue
        said = {"x": frozenset(), "y": frozenset()}
        for who, _, says in _about(mine, own_x, own_y):
            said[who] |= says
        only_x, only_y = said["x"] - said["y"], said["y"] - said["x"]
        if not only_x or not only_y:
            continue  # one clause of both, or nothing said of one
        runs = _about(theirs, own_x, own_y)

        def most(only: frozenset[str], who: str) -> tuple[int, _Clause | None]:
            scored = [(len(only & says), c) for w, c, says in runs if w == who]  # noqa: B023
            return max(scored, default=(0, None), key=lambda pair: pair[0])

        home_x, rival_x = most(only_x, "x"), most(only_x, "y")
        home_y, rival_y = most(only_y, "y"), most(only_y, "x")
        if home_x[1] is None or home_y[1] is None or rival_x[1] is None:
            continue  # a name no clause of the sources is about
        if rival_x[0] > home_x[0] and rival_y[0] > home_y[0]:
            c = rival_x[1]
            swap = _swap(claim, spans[x], sentences[c.sentence], c.start, c.end, min(only_x))
            if all(s.start != swap.start for s, _ in out):
                out.append((swap, c.sentence))
    return out
