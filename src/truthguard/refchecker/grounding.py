"""Fact grounding of one claim in its evidence: hard facts, negation and content-word alignment.

A claim is grounded when what it asserts is found in its evidence, not when it merely resembles
it:

1. Its **hard facts** (numbers, dates, names, quoted titles; see :mod:`._facts`) must each occur,
   after normalisation, somewhere in the evidence passages. A surname or initials stand for a full
   name found there; an acronym for the capitalised words it abbreviates.
2. The claim is aligned word by word (``difflib``) with its **evidence sentence**, the passage
   sentence sharing most of its content words. A fact of the claim that is set against a different
   fact of the same kind in that sentence (a replaced stretch, or the claim matching the sentence
   closely while the sentence's own year / name is absent from the claim) is a **conflict**; so is
   a negation present on one side of the aligned words and not on the other.
3. Its **content words** must align with the evidence: same word or same stem, else a soft match
   of contextual MiniLM token vectors (BERTScore-style: the best cosine of the word against the
   evidence words). The soft precision is the mean match over the claim's content words.

Label: Contradiction on a conflict; Neutral when a hard fact is not in the evidence, when a
content word matches nothing closely (below ``word_floor``) or the precision is below
``precision_threshold``; Entailment otherwise.
"""

from __future__ import annotations

import difflib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from truthguard.refchecker._facts import (
    FUNCTION_WORDS,
    Fact,
    Token,
    covered,
    extract_facts,
    negations,
    stem,
    tokenize,
)
from truthguard.refchecker.lexical import STOPWORDS

__all__ = ["Grounding", "Issue", "SoftMatcher", "analyse", "ground_claim"]

# Besides the function words: "one" and "having", adverbial particles and directional
# prepositions, which say little on their own, and the possessive "'s" split off by the tokenizer.
_NON_CONTENT = (
    FUNCTION_WORDS
    | STOPWORDS
    | frozenset(
        [
            "out",
            "up",
            "off",
            "down",
            "away",
            "back",
            "still",
            "even",
            "ever",
            "per",
            "via",
            "onto",
            "toward",
            "towards",
            "across",
            "along",
            "around",
            "through",
            "throughout",
            "'s",
            "s",
        ]
    )
)


# Verbs that only relate the subject to what follows ("stands on", "served as", "is known as"),
# and adverbs that only link a sentence to the one before ("additionally" for "also"): a
# paraphrase swaps them and keeps the fact, which the words around them carry.
_LIGHT_VERBS = frozenset(
    [
        "stand",
        "stands",
        "stood",
        "standing",
        "lie",
        "lies",
        "lying",
        "sit",
        "sits",
        "sat",
        "sitting",
        "serve",
        "serves",
        "served",
        "serving",
        "remain",
        "remains",
        "remained",
        "remaining",
        "become",
        "becomes",
        "became",
        "becoming",
        "located",
        "situated",
        "known",
        "recognised",
        "recognized",
        "called",
        "named",
        "considered",
        "regarded",
        "additionally",
        "furthermore",
        "moreover",
        "likewise",
    ]
)


@dataclass(frozen=True)
class Analysed:
    """A text tokenised once: tokens, hard facts, negation cues, content-word indices."""

    text: str
    tokens: list[Token]
    facts: list[Fact]
    negations: list[int]
    content: list[int]
    norms: frozenset[str]
    stems: frozenset[str]


_cache: OrderedDict[str, Analysed] = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 20_000


def analyse(text: str) -> Analysed:
    """Tokens, facts and word sets of ``text`` (memoised: evidence sentences recur)."""
    with _cache_lock:
        hit = _cache.get(text)
        if hit is not None:
            _cache.move_to_end(text)
            return hit
    tokens = tokenize(text)
    facts = extract_facts(text, tokens)
    in_fact = covered(tokens, facts)
    content = [
        i
        for i, t in enumerate(tokens)
        if i not in in_fact
        and t.norm not in _NON_CONTENT
        and t.norm not in _LIGHT_VERBS
        and any(ch.isalpha() for ch in t.norm)
        and not t.norm.endswith("n't")
        and t.norm not in ("not", "never", "no", "nor", "cannot")
    ]
    norms: set[str] = set()
    stems: set[str] = set()
    for t in tokens:
        for w in (t.norm, *t.norm.replace("'s", "").split("-")):
            w = w.strip(".'")
            if w:
                norms.add(w)
                stems.add(stem(w))
    out = Analysed(
        text, tokens, facts, negations(tokens), content, frozenset(norms), frozenset(stems)
    )
    with _cache_lock:
        _cache[text] = out
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return out


@dataclass
class Issue:
    """Why a claim is not Entailment: one span of the claim, and its evidence if it conflicts."""

    kind: str
    """number, month, name, title, negation or content."""
    relation: str
    """``ungrounded`` (not in the evidence) or ``conflict`` (the evidence says otherwise)."""
    start: int
    """Offset of the span in the claim."""
    end: int
    text: str
    evidence: tuple[int, int, int, str] | None = None
    """(reference index, start, end, text) of the conflicting span in the reference."""


@dataclass
class Grounding:
    """The grounding verdict of one claim."""

    label: str
    support: float
    precision: float
    issues: list[Issue]
    sentence: tuple[int, int, int, str] | None
    """(reference index, start, end, text) of the evidence sentence in its reference."""
    soft: dict[str, float] = field(default_factory=dict)
    """Content words matched only softly, with their best cosine."""


class SoftMatcher:
    """BERTScore-style word matching with contextual token vectors of an embedding model.

    Words are the mean of their tokens' vectors; vectors of evidence sentences are memoised
    (references are re-used across claims).
    """

    def __init__(self, embedder: Any, cache_size: int = 2_000) -> None:
        self.embedder = embedder
        self._cache: OrderedDict[str, tuple[np.ndarray, list[tuple[int, int]]]] = OrderedDict()
        self._lock = threading.Lock()
        self.cache_size = cache_size

    def _token_vectors(
        self, texts: Sequence[str]
    ) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
        found: dict[str, tuple[np.ndarray, list[tuple[int, int]]]] = {}
        missing: list[str] = []
        with self._lock:  # hits are taken now: another thread may evict them before we return
            for t in dict.fromkeys(texts):
                hit = self._cache.get(t)
                if hit is None:
                    missing.append(t)
                else:
                    self._cache.move_to_end(t)
                    found[t] = hit
        if missing:
            fresh = self.embedder.token_embeddings(missing)
            found.update(zip(missing, fresh, strict=True))
            with self._lock:
                for t, v in zip(missing, fresh, strict=True):
                    self._cache[t] = v
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return [found[t] for t in texts]

    @staticmethod
    def _words(
        vecs: np.ndarray, offsets: list[tuple[int, int]], spans: list[tuple[int, int]]
    ) -> np.ndarray:
        rows = []
        for s, e in spans:
            idx = [i for i, (a, b) in enumerate(offsets) if a < e and b > s]
            v = vecs[idx].mean(axis=0) if idx else np.zeros(vecs.shape[1] if vecs.size else 1)
            n = np.linalg.norm(v)
            rows.append(v / n if n > 0 else v)
        return np.stack(rows).astype(np.float32) if rows else np.zeros((0, 1), np.float32)

    def best(self, claim: Analysed, words: list[int], evidence: Sequence[Analysed]) -> list[float]:
        """For each claim token index in ``words``: its best cosine with an evidence word."""
        if not words or not evidence:
            return [0.0] * len(words)
        encoded = self._token_vectors([claim.text, *[ev.text for ev in evidence]])
        cv, co = encoded[0]
        if cv.size == 0:
            return [0.0] * len(words)
        cw = self._words(cv, co, [(claim.tokens[i].start, claim.tokens[i].end) for i in words])
        mats = []
        for ev, (ev_v, ev_o) in zip(evidence, encoded[1:], strict=True):
            if ev.content and ev_v.size:
                spans = [(ev.tokens[i].start, ev.tokens[i].end) for i in ev.content]
                mats.append(self._words(ev_v, ev_o, spans))
        if not mats:
            return [0.0] * len(words)
        sims = cw @ np.concatenate(mats).T
        return [float(x) for x in sims.max(axis=1)]


# -- fact matching -------------------------------------------------------------------------------


def _same_number(a: Fact, b: Fact) -> bool:
    if not isinstance(a.value, float) or not isinstance(b.value, float):
        return False
    if abs(a.value - b.value) > 1e-9 * max(1.0, abs(a.value)):
        return False
    return a.unit is None or b.unit is None or a.unit == b.unit or "decade" in (a.unit, b.unit)


def _fact_in(fact: Fact, facts: list[Fact], norms: frozenset[str], stems: frozenset[str]) -> bool:
    if fact.kind == "number":
        if any(f.kind == "number" and _same_number(fact, f) for f in facts):
            return True
        return any(
            ("month", f.value) in fact.alternatives or ("month", fact.value) in f.alternatives
            for f in facts
            if f.kind in ("month", "number")
        ) or any(f.kind == "month" and ("month", f.value) in fact.alternatives for f in facts)
    if fact.kind == "month":
        return any(
            (f.kind == "month" and f.value == fact.value) or ("month", fact.value) in f.alternatives
            for f in facts
        )
    if fact.kind == "title":
        return fact.value in " ".join(sorted(norms)) or any(
            f.kind == "title" and (fact.value in f.value or f.value in fact.value) for f in facts
        )
    if fact.kind == "name":
        return _name_in(str(fact.value), facts, norms, stems)
    return False


def _name_in(name: str, facts: list[Fact], norms: frozenset[str], stems: frozenset[str]) -> bool:
    if name in norms or stem(name) in stems:
        return True
    parts = [p for p in name.replace(".", " ").replace("-", " ").split() if p]
    if len(parts) > 1 and all(p in norms or len(p) == 1 for p in parts):
        return True  # "Jean-Paul", "J.K." against "Jean Paul", "Joanne K."
    names = [str(f.value) for f in facts if f.kind == "name"]
    if len(name) == 1:  # an initial: a capitalised evidence word with that letter
        return any(n.startswith(name) for n in names)
    if name.isalpha() and 2 <= len(name) <= 6:  # an acronym of consecutive capitalised words
        initials = "".join(n[0] for n in names)
        return name in initials or name.rstrip("s") in initials
    return False


def _tokens_of(a: Analysed, start: int, end: int) -> list[int]:
    return [i for i, t in enumerate(a.tokens) if t.start >= start and t.end <= end]


def _opcode_of(ops: list[tuple[str, int, int, int, int]], i: int) -> tuple[str, int, int, int, int]:
    for op in ops:
        if op[1] <= i < op[2]:
            return op
    return ("insert", i, i + 1, 0, 0)


def _conflict(
    fact: Fact, claim: Analysed, sent: Analysed, ops: list, close: bool, claim_facts: list[Fact]
) -> Fact | None:
    """The fact of the evidence sentence that ``fact`` (absent from it) is set against, if any."""
    idx = _tokens_of(claim, fact.start, fact.end)
    if not idx:
        return None
    tag, i1, _, j1, j2 = _opcode_of(ops, idx[0])
    k = next((n for n, op in enumerate(ops) if op[1] == i1 and op[0] == tag), 0)
    interior = any(op[0] == "equal" for op in ops[:k]) and any(
        op[0] == "equal" for op in ops[k + 1 :]
    )
    # a replaced stretch is a conflict only where the claim retells this sentence around it
    if tag == "replace" and (close or interior):
        lo, hi = sent.tokens[j1].start, sent.tokens[j2 - 1].end
        for f in sent.facts:
            same_unit = fact.kind != "number" or f.unit == fact.unit or None in (f.unit, fact.unit)
            if (
                f.kind == fact.kind
                and lo <= f.start < hi
                and same_unit
                and not _fact_in(f, claim_facts, frozenset(), frozenset())
            ):
                return f
    if close and fact.kind in ("number", "month"):
        # the claim retells this sentence, whose own fact of this kind it does not repeat
        for f in sent.facts:
            if (
                f.kind == fact.kind
                and (fact.kind == "month" or f.unit == fact.unit)
                and not _fact_in(f, claim_facts, frozenset(), frozenset())
            ):
                return f
    return None


def _negation_issue(claim: Analysed, sent: Analysed, ops: list) -> tuple[Issue, Any] | None:
    equal = [op for op in ops if op[0] == "equal"]
    if not equal:
        return None
    first_eq, last_eq = equal[0][3], equal[-1][4]
    cneg, sneg = set(claim.negations), set(sent.negations)
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        a = sum(1 for i in range(i1, i2) if i in cneg)
        b = sum(1 for j in range(j1, j2) if j in sneg)
        interior = j1 >= first_eq and j2 <= last_eq
        if a > b:
            i = next(i for i in range(i1, i2) if i in cneg)
            t = claim.tokens[i]
            return Issue("negation", "conflict", t.start, t.end, t.text), None
        if b > a and interior:
            j = next(j for j in range(j1, j2) if j in sneg)
            # where the claim drops it: the claim word aligned just before
            i = max(i1 - 1, 0)
            t = claim.tokens[i] if claim.tokens else None
            span = (t.start, t.end, t.text) if t else (0, 0, "")
            return Issue("negation", "conflict", *span), sent.tokens[j]
    return None


def ground_claim(
    claim_text: str,
    sentences: Sequence[tuple[int, int, str]],
    *,
    hint: int = 0,
    soft: SoftMatcher | None = None,
    word_floor: float = 0.5,
    precision_threshold: float = 0.8,
    check_content: bool = True,
) -> Grounding:
    """Ground one claim in evidence sentences.

    Args:
        claim_text: The claim.
        sentences: The evidence sentences as (reference index, start offset in it, text).
        hint: Index of the sentence preferred on a tie (the embedding-closest one).
        soft: Soft word matcher; None accepts only exact and stem matches.
        word_floor: Best cosine below which a content word counts as not in the evidence.
        precision_threshold: Soft precision below which the claim is Neutral.
        check_content: Check content words (off when an NLI model judges the relation instead).
    """
    claim = analyse(claim_text)
    evid = [analyse(text) for _, _, text in sentences]
    norms = frozenset().union(*(e.norms for e in evid)) if evid else frozenset()
    stems = frozenset().union(*(e.stems for e in evid)) if evid else frozenset()
    all_facts = [f for e in evid for f in e.facts]

    # evidence sentence: most shared content stems and facts, the embedding's choice on a tie
    claim_stems = {stem(claim.tokens[i].norm) for i in claim.content}
    best, best_key = None, (-1.0, 0)
    for k, e in enumerate(evid):
        shared = len(claim_stems & e.stems) + sum(
            _fact_in(f, e.facts, e.norms, e.stems) for f in claim.facts
        )
        key = (shared, int(k == hint))
        if key > best_key:
            best, best_key = k, key
    issues: list[Issue] = []
    sentence = None
    ops: list = []
    if best is not None:
        ref, offset, text = sentences[best]
        sentence = (ref, offset, offset + len(text), text)
        sent = evid[best]
        ops = difflib.SequenceMatcher(
            None, [t.norm for t in claim.tokens], [t.norm for t in sent.tokens], autojunk=False
        ).get_opcodes()
        n_claim = max(len(claim.content) + len(claim.facts), 1)
        close = best_key[0] / n_claim >= 0.6
        for fact in claim.facts:
            in_sentence = _fact_in(fact, sent.facts, sent.norms, sent.stems)
            if in_sentence:
                continue
            other = _conflict(fact, claim, sent, ops, close, claim.facts)
            if other is not None:
                ev = (ref, offset + other.start, offset + other.end, other.text)
                issues.append(Issue(fact.kind, "conflict", fact.start, fact.end, fact.text, ev))
            elif not _fact_in(fact, all_facts, norms, stems):
                issues.append(Issue(fact.kind, "ungrounded", fact.start, fact.end, fact.text))
        neg = _negation_issue(claim, sent, ops) if close else None
        if neg is not None:
            issue, tok = neg
            if tok is not None:
                issue.evidence = (ref, offset + tok.start, offset + tok.end, tok.text)
            issues.append(issue)
    else:
        for fact in claim.facts:
            issues.append(Issue(fact.kind, "ungrounded", fact.start, fact.end, fact.text))

    # content words: exact / stem, else soft
    matches: list[float] = []
    soft_words: dict[str, float] = {}
    if check_content and claim.content:
        unaligned = []
        for i in claim.content:
            t = claim.tokens[i]
            w = t.norm.replace("'s", "").strip(".'")
            parts = [p for p in w.split("-") if p]
            if (
                w in norms
                or stem(w) in stems
                or (parts and all(p in norms or stem(p) in stems for p in parts))
            ):
                matches.append(1.0)
            else:
                unaligned.append(i)
        if unaligned:
            # soft matches are sought in the evidence sentence (and the embedding's choice):
            # encoding every passage sentence would cost more than the whole check
            picks = (best, hint)
            near = [evid[k] for k in dict.fromkeys(picks) if k is not None and k < len(evid)]
            sims = soft.best(claim, unaligned, near) if soft is not None else [0.0] * len(unaligned)
            for i, s in zip(unaligned, sims, strict=True):
                t = claim.tokens[i]
                soft_words[t.text] = round(s, 4)
                matches.append(max(min(s, 1.0), 0.0))
                if s < word_floor:
                    issues.append(Issue("content", "ungrounded", t.start, t.end, t.text))
    precision = float(np.mean(matches)) if matches else 1.0

    if any(i.relation == "conflict" for i in issues):
        label, support = "Contradiction", 0.0
    elif issues or precision < precision_threshold:
        label = "Neutral"
        n = sum(1 for i in issues if i.kind != "content")
        support = min(precision, 0.5) * (0.5 ** max(n - 1, 0)) if n else min(precision, 0.5)
    else:
        label, support = "Entailment", precision
    return Grounding(label, support, precision, issues, sentence, soft_words)
