"""What a text is made of for grounding: tokens, hard facts, negation cues and content words.

Which words count as content (to be found in the evidence) and which only carry the sentence:
function words, light relational verbs, and words that colour a statement without adding a
checkable fact. :func:`analyse` tokenises a text once and memoises it (evidence sentences recur
across claims and checks).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from truthguard.memory import SizedCache
from truthguard.refchecker._facts import (
    FUNCTION_WORDS,
    Fact,
    Token,
    covered,
    extract_facts,
    honorific,
    negations,
    scale_words,
    stem,
    tokenize,
)
from truthguard.refchecker._numbers import DURATION_DAYS, SIGNS
from truthguard.refchecker.lexical import STOPWORDS

__all__ = ["NON_CONTENT", "Against", "Analysed", "analyse", "name_spans"]

# Besides the function words: "one" and "having", adverbial particles and directional
# prepositions, which say little on their own, the possessive "'s" split off by the tokenizer,
# and the indefinite pronouns that stand for what the sentence goes on to say ("*anything*
# shorter than 25 cm", "*everyone* on the plan"; the negative ones, "nothing", "nobody", are
# negations and stay content).
_NON_CONTENT = (
    FUNCTION_WORDS
    | STOPWORDS
    | frozenset(
        [
            *("out", "up", "off", "down", "away", "back", "still", "even", "ever", "per", "via"),
            *("onto", "toward", "towards", "across", "along", "around", "through", "throughout"),
            *("'s", "s", "him", "due"),
            *("anything", "something", "everything", "anyone", "someone", "everyone"),
            *("anybody", "somebody", "everybody", "whatever", "whoever"),
        ]
    )
)


# Verbs that only relate the subject to what follows ("stands on", "served as", "is known as"),
# and adverbs that only link a sentence to the one before ("additionally" for "also"): a
# paraphrase swaps them and keeps the fact, which the words around them carry.
_LIGHT_VERBS = frozenset(
    [
        *("stand", "stands", "stood", "standing", "lie", "lies", "lying", "sit", "sits", "sat"),
        *("sitting", "serve", "serves", "served", "serving", "remain", "remains", "remained"),
        *("remaining", "become", "becomes", "became", "becoming", "located", "situated", "known"),
        *("recognised", "recognized", "called", "named", "considered", "regarded", "additionally"),
        *("furthermore", "moreover", "likewise"),
        *("get", "gets", "got", "getting", "gotten"),
    ]
)

# Words that only say how a number stated beside them is worked out ("£16 in total", "you'd
# save £208", "it comes to £386.20", "£22 a night plus £11", "which makes £840"): the
# arithmetic is the number's, checked where the number is read, and the sources state no fact
# in these words.
_WORKING_WORDS = frozenset(
    [
        *("total", "totals", "totalling", "totaling", "totalled", "totaled", "plus", "minus"),
        *("altogether", "overall", "combined", "sum", "save", "saves", "saving", "come", "comes"),
        *("makes", "making"),
    ]
)

# Words naming the sources themselves ("the term in the passage is ...", "the passage notes
# that ..."): an answer's remark about where it read something, never a fact the sources state.
_SOURCE_WORDS = frozenset(["passage", "passages", "excerpt", "excerpts"])

_DISCOURSE = frozenset(
    [
        *(("in", "fact"), ("in", "particular"), ("in", "general"), ("in", "addition")),
        *(("in", "turn"), ("in", "short"), ("in", "brief"), ("in", "practice"), ("for", "example")),
        *(("for", "instance"), ("of", "course"), ("as", "well")),
    ]
)
"""Two-word discourse markers whose second word is no content of the claim ("In fact, ...",
"for example"): they join or weigh statements, they state nothing the sources could hold."""

# Words that colour a statement without adding a checkable fact: discourse and degree adverbs
# ("actually", "really", "just"), evaluative adjectives ("great", "popular"), and reporting
# verbs ("says", "told"), whose speaker is the fact, not the verb. A paraphrase or a summary adds
# them freely; a claim made only of them has nothing to check.
_COLOURING = frozenset(
    [
        *("actually", "really", "just", "quite", "very", "so", "too", "pretty", "fairly", "rather"),
        *("truly", "certainly", "surely", "obviously", "clearly", "basically", "literally"),
        *("simply", "definitely", "absolutely", "probably", "possibly", "perhaps", "maybe"),
        *("apparently", "reportedly", "allegedly", "currently", "recently", "already", "once"),
        *("again", "ever", "still", "good", "great", "best", "better", "nice", "fine", "popular"),
        *("famous", "well-known", "important", "amazing", "excellent", "wonderful", "awesome"),
        *("fantastic", "brilliant", "terrific", "lovely", "beautiful", "interesting", "favourite"),
        *("favorite", "classic", "notable", "remarkable", "incredible", "huge", "big", "major"),
        *("key", "say", "says", "said", "saying", "tell", "tells", "told", "telling", "add"),
        *("adds", "added", "report", "reports", "reported", "according", "claim", "claims"),
        *("claimed", "note", "notes", "noted", "explain", "explains", "explained"),
    ]
)


@dataclass(frozen=True)
class Against:
    """A span of a claim set against a span of its evidence sentence (a role swap, an opposite,
    a recount): offsets in the claim, and ``evidence_*`` offsets in that sentence."""

    start: int
    end: int
    text: str
    evidence_start: int
    evidence_end: int
    evidence_text: str


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

    @functools.cached_property
    def keys(self) -> frozenset[int]:
        """The tokens that say what the text is about: its content words and every token that
        starts inside one of its facts (a name, a number, a title)."""
        inside = {
            i for f in self.facts for i, t in enumerate(self.tokens) if f.start <= t.start < f.end
        }
        return frozenset(self.content) | inside


_cache: SizedCache[str, Analysed] = SizedCache("analyses")
"""Analyses kept, within their share of the memory budget (see :mod:`truthguard.memory`)."""


def _analysed_bytes(a: Analysed) -> int:
    return 1_800 + 275 * len(a.tokens)  # measured with tracemalloc over 5 to 100 tokens


def _outside_titles(found: list[int], tokens: list[Token], facts: list[Fact]) -> list[int]:
    """The negation cues less those capitalised inside a title the text quotes: "Believe It or
    Not" names a song and negates nothing ("I will not go" in quotes still negates)."""
    titles = [(f.start, f.end) for f in facts if f.kind == "title"]
    if not titles:
        return found
    return [
        k
        for k in found
        if not (
            tokens[k].text[:1].isupper() and any(lo <= tokens[k].start < hi for lo, hi in titles)
        )
    ]


_STRETCHES = frozenset(["window", "period", "limit", "deadline", "timeframe", "term", "wait"])
"""Nouns that name the stretch of time a duration before them measures ("the 30-day window",
"inside the 14-day limit"): the duration is the fact, the noun only names it."""


def _stretch_nouns(tokens: list[Token], facts: list[Fact]) -> set[int]:
    """Indices of the :data:`_STRETCHES` nouns right after a duration and its unit word."""
    out: set[int] = set()
    for f in facts:
        if f.kind != "number" or f.unit not in DURATION_DAYS:
            continue
        k = next((k for k, t in enumerate(tokens) if t.start >= f.end), len(tokens))
        # (the unit word follows "30", or is part of "two-week")
        k += 0 if f.text.casefold().endswith(f.unit) else 1
        if k < len(tokens) and tokens[k].norm in _STRETCHES:
            out.add(k)
    return out


def _times_signs(tokens: list[Token], numbers: set[int]) -> set[int]:
    """The lone "x" tokens that stand for "times": a number (token index in ``numbers``), or a
    currency sign and a number, follows ("20 x £4", "40 builds x 3")."""
    return {
        k
        for k, t in enumerate(tokens[:-1])
        if t.text in ("x", "X")
        and (k + 1 in numbers or (tokens[k + 1].text in SIGNS and k + 2 in numbers))
    }


def analyse(text: str) -> Analysed:
    """Tokens, facts and word sets of ``text`` (memoised: evidence sentences recur)."""
    hit = _cache.get(text)
    if hit is not None:
        return hit
    tokens = tokenize(text)
    facts = extract_facts(text, tokens)
    in_fact = covered(tokens, facts) | scale_words(tokens)  # "178 degrees Celsius": a unit
    in_fact |= _stretch_nouns(tokens, facts)
    in_fact |= {
        k
        for k in range(1, len(tokens))
        if (tokens[k - 1].norm, tokens[k].norm) in _DISCOURSE  # "In fact, it is ..."
    }
    if any(f.kind == "number" for f in facts):
        in_fact |= {k for k, t in enumerate(tokens) if t.norm in _WORKING_WORDS}
        in_fact |= _times_signs(tokens, covered(tokens, facts))
    content = [
        i
        for i, t in enumerate(tokens)
        if i not in in_fact
        and t.norm not in _NON_CONTENT
        and t.norm not in _LIGHT_VERBS
        and t.norm not in _COLOURING
        and t.norm not in _SOURCE_WORDS
        and any(ch.isalpha() for ch in t.norm)
        and not t.norm.endswith("n't")
        and t.norm.split("'")[0] not in _NON_CONTENT  # "they'll", "it's", "we've"
        and t.norm not in ("not", "never", "no", "nor", "cannot")
        and not honorific(tokens, i, text)
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
        text,
        tokens,
        facts,
        _outside_titles(negations(tokens, text), tokens, facts),
        content,
        frozenset(norms),
        frozenset(stems),
    )
    _cache.put(text, out, _analysed_bytes(out))
    return out


NON_CONTENT = _NON_CONTENT
"""Words never counted as content (function words, particles, ``'s``)."""
LIGHT_VERBS = _LIGHT_VERBS
"""Verbs that only relate the subject to what follows ("stands", "served as"), no content."""


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
