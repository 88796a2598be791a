"""Opposites: a claim that says "lost" where its evidence says "won", or "south" where it says
"north".

Token vectors put a word and its opposite close together (both occur in the same places), so a
soft word match reads "lost the final" as a paraphrase of "won the final". The opposites a retold
fact can flip are a small closed set: outcomes, directions, rates, yes-or-no qualities.
:data:`PAIRS` lists them by lemma; a claim word whose opposite its evidence sentence states,
while the sentence does not state the word itself, contradicts the sentence. Converse pairs are
left out, as the same fact can be told with either ("X came before Y" is "Y came after X", "A is
older than B" is "B is younger than A"), and so are words that also name a thing ("open", "end").
Beside the list, a word with the prefix "non" is the opposite of the rest of it, and an "-able"
adjective of its verb: "non-refundable" of "refund", "non-members" of "members".
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from truthguard.refchecker._analysis import Against, Analysed, analyse
from truthguard.refchecker._lemmas import lemmas as all_lemmas
from truthguard.refchecker._names import CLAUSE_END
from truthguard.refchecker._tokens import stem

__all__ = [
    "PAIRS",
    "Flip",
    "crossed_flips",
    "denied_words",
    "flips",
    "stated_opposite",
    "word_lemmas",
]

PAIRS: tuple[tuple[str, str], ...] = (
    *(("win", "lose"), ("victory", "defeat"), ("north", "south"), ("east", "west")),
    *(("northern", "southern"), ("eastern", "western"), ("northeast", "southwest")),
    *(("northwest", "southeast"), ("increase", "decrease"), ("rise", "fall"), ("gain", "lose")),
    *(("fast", "slow"), ("rapid", "slow"), ("rapidly", "slowly"), ("quickly", "slowly")),
    *(("accept", "reject"), ("allow", "forbid"), ("support", "oppose"), ("success", "failure")),
    *(("succeed", "fail"), ("male", "female"), ("inside", "outside"), ("same", "different")),
    *(("public", "private"), ("maximum", "minimum"), ("majority", "minority")),
    *(("ancient", "modern"), ("legal", "illegal"), ("true", "false"), ("optional", "compulsory")),
    *(("optional", "mandatory"), ("voluntary", "compulsory"), ("upstream", "downstream")),
    *(("indoor", "outdoor"), ("uphold", "overturn"), ("accept", "decline"), ("include", "exclude")),
    *(("import", "export"), ("permanent", "temporary"), ("internal", "external")),
    *(("ascend", "descend"), ("allow", "prohibit"), ("permit", "prohibit"), ("permit", "forbid")),
    *(("valid", "void"), ("valid", "invalid"), ("active", "inactive")),
    *(("available", "unavailable"), ("stop", "continue"), ("cease", "continue")),
)
"""Opposite lemmas, each pair both ways."""


def _opposites() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for a, b in PAIRS:
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


_OPPOSITE = _opposites()


@functools.lru_cache(maxsize=8192)
def _lemmas(word: str) -> frozenset[str]:
    """The word and its lemmas under every part of speech ("won" -> win, "lost" -> lose); a
    hyphenated word is also the word written together ("north-west" is "northwest")."""
    out = {word, word.replace("-", "")}
    for forms in all_lemmas(word).values():
        out.update(forms)
    return frozenset(out)


def stated_opposite(word: str, text: str) -> bool:
    """Whether ``text`` states an opposite of the lemma ``word`` (:data:`PAIRS`): "disabled"
    for ``enable``."""
    wanted = frozenset().union(*(_OPPOSITE.get(m, frozenset()) for m in _lemmas(word)))
    return bool(wanted) and any(
        _lemmas(t.norm) & wanted for t in analyse(text).tokens if _word(t.norm)
    )


def _negated(text: Analysed) -> frozenset[int]:
    """Starts of the tokens a negation cue governs: the next four words of its clause."""
    out = set()
    for i in text.negations:
        for k in range(i + 1, min(i + 5, len(text.tokens))):
            if CLAUSE_END.search(text.text[text.tokens[k - 1].end : text.tokens[k].start]):
                break
            out.add(text.tokens[k].start)
    return frozenset(out)


def _word(norm: str) -> bool:
    """Whether a token is a word, hyphenated ones included ("north-east")."""
    return norm.replace("-", "").isalpha()


@dataclass(frozen=True)
class Flip(Against):
    """A claim word whose opposite the evidence sentence states."""


def flips(claim_text: str, evidence_text: str) -> list[Flip]:
    """The claim's words put for their opposites in the evidence sentence (see the module)."""
    claim, evidence = analyse(claim_text), analyse(evidence_text)
    evidence_lemmas = [(t, _lemmas(t.norm)) for t in evidence.tokens if _word(t.norm)]
    stated = frozenset().union(*(lemmas for _, lemmas in evidence_lemmas))
    # a negated opposite may say the claim's word ("does not fall on the same day" is a
    # "different" day): it sets nothing against it
    negated = _negated(evidence)
    evidence_lemmas = [(t, lemmas) for t, lemmas in evidence_lemmas if t.start not in negated]
    # a value the claim states itself is accounted for ("the Portuguese ... for the Spanish
    # club" against "... for the Spanish club"): only one it leaves out is set against it
    claimed = frozenset().union(*(_lemmas(t.norm) for t in claim.tokens if _word(t.norm)))
    evidence_lemmas = [(t, lemmas) for t, lemmas in evidence_lemmas if not lemmas & claimed]
    denied = _negated(claim)  # "is not allowed" says what "is prohibited" says
    out = []
    for t in claim.tokens:
        if not _word(t.norm) or t.start in denied:
            continue
        mine = _lemmas(t.norm)
        if mine & stated:
            continue  # the sentence states the word itself (perhaps beside its opposite)
        wanted = frozenset().union(*(_OPPOSITE.get(m, frozenset()) for m in mine))
        for e, lemmas in evidence_lemmas:
            if lemmas & wanted or mine & _denied_base(e.norm):
                out.append(Flip(t.start, t.end, t.text, e.start, e.end, e.text))
                break
    return out


def crossed_flips(claim_text: str, evidence_text: str) -> list[Flip]:
    """The claim's words that the evidence sentence states beside an opposite, where the
    claim ties the word to what the sentence says with the opposite (:func:`_crossed`):
    "optional for new staff" of "mandatory for all new staff and optional for contractors"."""
    claim, evidence = analyse(claim_text), analyse(evidence_text)
    negated, denied = _negated(evidence), _negated(claim)
    claimed = frozenset().union(*(_lemmas(t.norm) for t in claim.tokens if _word(t.norm)))
    said = [
        (k, _lemmas(t.norm))
        for k, t in enumerate(evidence.tokens)
        if _word(t.norm) and t.start not in negated
    ]
    out = []
    for i, t in enumerate(claim.tokens):
        if not _word(t.norm) or t.start in denied:
            continue
        mine = _lemmas(t.norm)
        wanted = frozenset().union(*(_OPPOSITE.get(m, frozenset()) for m in mine))
        if not wanted or wanted & claimed:
            continue
        same = next((k for k, lemmas in said if lemmas & mine), None)
        other = next((k for k, lemmas in said if lemmas & wanted), None)
        if same is not None and other is not None and _crossed(claim, i, evidence, same, other):
            e = evidence.tokens[other]
            out.append(Flip(t.start, t.end, t.text, e.start, e.end, e.text))
    return out


_JOINS = frozenset(("and", "but", "while", "whereas", "or", "whilst"))
"""Words that join two statements of one sentence."""


def _joins(text: Analysed, k: int) -> bool:
    """Whether token ``k`` of ``text`` joins two statements ("and", "but", "while", ...)."""
    return text.tokens[k].norm in _JOINS


def _breaks(text: Analysed, k: int, marks: str = ",;:") -> bool:
    """Whether one of ``marks`` (by default a comma, semicolon or colon) stands between token
    ``k`` and the one before."""
    toks = text.tokens
    return any(m in text.text[toks[k - 1].end : toks[k].start] for m in marks)


def _crossed(claim: Analysed, at: int, text: Analysed, same: int, other: int) -> bool:
    """Whether the claim ties its word at token ``at`` to what ``text`` says in the statement
    of that word's opposite (token ``other``), ``text`` stating the word too (token ``same``)
    in another of its joined statements: "Training is mandatory for all new staff and optional
    for contractors" read with "optional for all new staff", "The minimum order is 20 units,
    and the maximum per customer is 500" with "The maximum order is 20 units". The claim's
    other content words and numbers found in only one of the two statements say which: at
    least one in the opposite's and none in the word's own. Words before the first of the two
    (the subject both share) say nothing."""
    lo, hi = sorted((same, other))
    # a joining word ends a statement where there is one, else a comma or a semicolon
    cut = next((f for f in (_joins, _breaks) for k in range(lo + 1, hi + 1) if f(text, k)), None)
    if cut is None:
        return False
    split = max(k for k in range(lo + 1, hi + 1) if cut(text, k))
    end = len(text.tokens)
    after = next((k for k in range(hi + 1, end) if _joins(text, k) or _breaks(text, k, ";")), end)
    first, second = range(lo, split), range(split, after)
    own, theirs = (first, second) if same == lo else (second, first)

    def keys(a: Analysed, ks: Iterable[int]) -> set[str]:
        return {
            stem(a.tokens[k].norm) for k in ks if k in a.content or a.tokens[k].norm[:1].isdigit()
        }

    mine = keys(claim, (k for k in range(len(claim.tokens)) if k != at))
    in_own, in_theirs = keys(text, own) & mine, keys(text, theirs) & mine
    return bool(in_theirs - in_own) and not in_own - in_theirs


def denied_words(text: str) -> frozenset[str]:
    """The lemmas the words of ``text`` deny with the prefix "non" (see :func:`_denied_base`)."""
    return frozenset().union(*(_denied_base(t.norm) for t in analyse(text).tokens))


def word_lemmas(word: str) -> frozenset[str]:
    """A word and its lemmas under every part of speech ("refunded": "refund")."""
    return _lemmas(word.casefold())


@functools.lru_cache(maxsize=8192)
def _denied_base(word: str) -> frozenset[str]:
    """What a word with the prefix "non" denies: the lemmas of the rest, and of the verb an
    "-able" / "-ible" adjective is made from ("non-refundable" and "nonrefundable" deny
    "refund", "non-members" denies "member"); empty for any other word. Written together, only
    such an adjective is read so: "nonprofit", "nonsense" and "nonstop" are words of their own."""
    if word.startswith("non-"):
        base = word[4:]
    elif word.startswith("non") and word.endswith(("able", "ible")) and all_lemmas(word[3:]):
        base = word[3:]
    else:
        return frozenset()
    if len(base) < 4:
        return frozenset()
    out = set(_lemmas(base))
    for suffix in ("able", "ible"):
        if base.endswith(suffix) and len(base) > len(suffix) + 2:
            verb = base[: -len(suffix)]
            out |= {verb, verb + "e"}
    return frozenset(out)
