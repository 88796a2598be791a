"""Which of two came first: an answer's order of two names held against the years its sources give.

"Pablo Trapero was born first", asked "Who was born first, Pablo Trapero or Aleksander Ford?",
has every word in sources that say "Pablo Trapero (born 4 October 1971)" and "Aleksander Ford
(born ... 24 November 1908 ...)": the word match passes it, though the years order the two the
other way. This module reads the order:

* the claim's order word: one that puts a name earlier (``first``, ``earlier``, ``older``,
  ``before``, ...) or later (``later``, ``younger``, ``after``, ...) than another, in a claim
  about when each began (an age word, or "born", "released", "founded", "came out", ...);
* the two sides: the name the claim says it of, and the other one: named after ``than`` /
  ``before`` / ``after`` in the claim, else the other option of the question ("A or B");
* each side's year: the first year the sources state after the first sentence naming it (and
  before the other side is named there), as a reference text gives a person's birth, a film's
  release or a band's founding at its first mention.

The claim is set against the sources when both years are found, differ, and order the two the
other way. A claim about deaths or endings, with a negation, or whose sides are not found is
left alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from truthguard.refchecker._analysis import Against, Analysed, analyse, name_spans
from truthguard.refchecker._facts import FUNCTION_WORDS, stem
from truthguard.refchecker._lemmas import lemmas
from truthguard.refchecker.structure import options, parse

__all__ = ["OPTIONS", "counted_the_other_way", "out_of_order"]

_EARLY = frozenset(["first", "earlier", "older", "oldest", "elder", "before", "sooner", "earliest"])
_LATE = frozenset(["later", "younger", "youngest", "after", "newer", "last", "latest"])
_THAN = frozenset(["than", "before", "after"])
_AGE = frozenset(["older", "oldest", "elder", "younger", "youngest", "newer"])
_BEGINNINGS = re.compile(
    r"\b(?:born|releas|found|form|establish|launch|open|buil[dt]|creat|publish|premiere|debut"
    r"|start|began|begun|introduc|came|come|made|produc|recorded|written|wrote|compos|incorporat"
    r"|set up|occur|happen|took place|develop|aired)"
)
"""Words that say a comparison is about when each side began, which the year at its first
mention gives; an order of anything else ("retired first", "won the title first") is not read."""
_ENDINGS = re.compile(r"\b(?:die[ds]?|death|dead|end(?:ed|s)?|clos(?:ed|es)|dissolved|disbanded)\b")
_YEAR = re.compile(r"(?<![\d.])(?<!\d,)(1[0-9]{3}|20[0-9]{2})(?!\d)(?!,\d)")
OPTIONS = re.compile(r"\bor\b", re.IGNORECASE)
"""The "or" of a question that offers options ("A or B")."""


def out_of_order(
    claim_text: str, question: str, sentences: Sequence[str]
) -> list[tuple[Against, int]]:
    """The claim's order word, when the years the sources give its two sides order them the
    other way: an :class:`~truthguard.refchecker._analysis.Against` (the order word, set against
    the first side's name and year in its sentence) and that sentence's index."""
    lowered = claim_text.casefold()
    if _ENDINGS.search(lowered):
        return []
    claim = analyse(claim_text)
    found = _compared_by(claim, _EARLY | _LATE)
    if found is None:
        return []
    k, word = found
    if word.norm not in _AGE and not _BEGINNINGS.search(lowered):
        return []
    if _attributive(claim.tokens, k):
        return []
    sides = _sides(claim, k, question)
    if sides is None:
        return []
    first, other = sides
    found_first = _year_of(first, other, sentences)
    found_other = _year_of(other, first, sentences)
    if found_first is None or found_other is None:
        return []
    (year_first, n, start, end), (year_other, _, _, _) = found_first, found_other
    if year_first == year_other:
        return []
    says_earlier = word.norm in _EARLY
    if says_earlier == (year_first < year_other):
        return []
    text = sentences[n]
    return [
        (Against(word.start, word.end, word.text, start, end, text[start:end]), n),
    ]


def _compared_by(claim: Analysed, words: frozenset[str]) -> tuple[int, Any] | None:
    """The token of ``words`` that compares two sides in a claim with no negation, and its
    index: the first when several all order the same way ("formed first, before Suede"); None
    when the claim has none of them, some ordering each way, or a negation."""
    if claim.negations:
        return None
    found = [(k, t) for k, t in enumerate(claim.tokens) if t.norm in words]
    if not found:
        return None
    ways = {t.norm in _EARLY for _, t in found}
    return found[0] if len(ways) == 1 else None


_DETERMINERS = frozenset(
    ["the", "a", "an", "his", "her", "its", "their", "my", "our", "your", "whose", "this", "that"]
)


def _attributive(tokens: Sequence[Any], k: int) -> bool:
    """Whether the order word at ``k`` ranks a noun after a determiner ("wrote the first
    version", "her first album", "its later editions") rather than ordering the two sides; "the
    first to", "the older of the two" still order them."""
    if k == 0 or tokens[k - 1].norm not in _DETERMINERS or k + 1 >= len(tokens):
        return False
    return tokens[k + 1].norm not in ("to", "of", "one")


def _sides(claim: Analysed, k: int, question: str) -> tuple[str, str] | None:
    """The two names a comparison word at token ``k`` orders: the first name before it (or an
    option of the question that opens the claim, though its first word is not read as a name
    there: "Cancer was produced before Crumb"), and the one it is compared with."""
    spans = name_spans(claim)
    text = claim.text
    names = [
        text[claim.tokens[lo].start : claim.tokens[hi].end] for lo, hi in spans if hi < k or lo > k
    ]
    before = [n for (lo, _), n in zip(spans, names, strict=False) if lo < k]
    if not before:
        head = _words(text[: claim.tokens[k].start])
        before = [o for o in _options(question) if _words(o) and _words(o) <= head]
    if not before:
        return None
    other = _other_side(text, names, before[0], question)
    return None if other is None else (before[0], other)


def _other_side(claim_text: str, names: list[str], first: str, question: str) -> str | None:
    """The name the claim compares ``first`` with: one after "than" / "before" / "after" in
    the claim, else the question's other option of two ("A or B")."""
    for n in names:
        if n is first:
            continue
        at = claim_text.find(n)
        lead = [w for w in claim_text[:at].casefold().split() if w not in ("the", "a", "an")]
        if lead and lead[-1] in _THAN:
            return n
    options = _options(question)
    if len(options) != 2:
        return None
    a, b = options
    own = [_own_words(a, b), _own_words(b, a)]
    mine = [o for o, words in zip(options, own, strict=True) if words & _words(first)]
    if len(mine) != 1:
        return None
    return next(o for o in options if o is not mine[0])


def _options(question: str) -> list[str]:
    """The two phrases around the question's "or" ("..., A or B?"), read from its parse (see
    :func:`~truthguard.refchecker.structure.options`)."""
    if OPTIONS.search(question) is None:
        return []
    return options(question)


def _own_words(name: str, other: str) -> set[str]:
    """The words of ``name`` that ``other`` lacks, else all of them ("Orrin" of "Orrin
    University" beside "Tavish State University")."""
    return (_words(name) - _words(other)) or _words(name)


def _words(name: str) -> set[str]:
    return {w for w in re.findall(r"\w+", name.casefold()) if len(w) > 2} - FUNCTION_WORDS


def _year_of(name: str, other: str, sentences: Sequence[str]) -> tuple[int, int, int, int] | None:
    """The first year after the first mention of ``name`` in ``sentences``, in that sentence and
    before ``other`` is named: (year, sentence index, start of the mention, end of the year)."""
    found = _first_mention(name, other, sentences)
    if found is None:
        return None
    n, start, end, stop = found
    year = _YEAR.search(sentences[n], end, stop)
    if year is None:
        return None  # its first mention gives no year: nothing to order by
    return int(year.group(1)), n, start, year.end()


def _first_mention(
    name: str, other: str, sentences: Sequence[str]
) -> tuple[int, int, int, int] | None:
    """Where ``sentences`` first name ``name``: (sentence index, start and end of the mention,
    where that sentence names ``other``, else its end)."""
    mine = _own_words(name, other)
    theirs = _words(other) - _words(name)
    if not mine:
        return None
    for n, text in enumerate(sentences):
        words = list(re.finditer(r"\w+", text.casefold()))
        at = next((j for j, m in enumerate(words) if m.group() in mine), None)
        if at is None:
            continue
        end = at
        while end + 1 < len(words) and words[end + 1].group() in mine:
            end += 1  # the rest of the name: "Pablo Trapero"
        stop = next((m.start() for m in words[end + 1 :] if m.group() in theirs), len(text))
        return n, words[at].start(), words[end].end(), stop
    return None


_MORE = frozenset(["more", "larger", "bigger", "greater", "higher"])
_FEWER = frozenset(["fewer", "less", "smaller", "lower"])


def counted_the_other_way(
    claim_text: str, question: str, sentences: Sequence[str]
) -> list[tuple[Against, int]]:
    """The claim's "more" or "fewer" of a noun ("Muse has fewer members"), when the numbers of
    that noun the sources give its two sides order them the other way: each side's number is
    the first one counting the noun ("five members", "a population of 3.7 million") in the
    first sentence naming the side, before the other side is named there. The sides are found
    as :func:`out_of_order` finds them."""
    claim = analyse(claim_text)
    found = _compared_by(claim, _MORE | _FEWER)
    if found is None:
        return []
    k, word = found
    than = k + 1 < len(claim.tokens) and claim.tokens[k + 1].norm == "than"
    if than and not any(lo == k + 2 for lo, _ in name_spans(claim)):
        return []  # "more than one species" compares with a number, not the other side
    nouns = [t.norm for t in claim.tokens[k + 1 : k + 4] if _noun(claim_text, t)]
    if not nouns:
        return []
    noun = stem(nouns[-1])  # (of a compound, its head: "band members")
    sides = _sides(claim, k, question)
    if sides is None:
        return []
    first, other = sides
    mine, theirs = (
        _count_of(first, other, noun, sentences),
        _count_of(other, first, noun, sentences),
    )
    if mine is None or theirs is None or mine[0] == theirs[0]:
        return []
    if (word.norm in _MORE) == (mine[0] > theirs[0]):
        return []
    n, start, end = mine[1:]
    text = sentences[n]
    return [(Against(word.start, word.end, word.text, start, end, text[start:end]), n)]


def _noun(text: str, token: Any) -> bool:
    """Whether a word of ``text`` is a noun: by the lexicon, else by the parse where the
    lexicon knows only another use of the word ("acts" of "has more acts")."""
    if "NOUN" in lemmas(token.norm):
        return True
    return any(t.idx == token.start and t.pos_ == "NOUN" for t in parse(text))


def _count_of(
    name: str, other: str, noun: str, sentences: Sequence[str]
) -> tuple[float, int, int, int] | None:
    """The first number of ``noun`` in the first sentence naming ``name`` (before ``other`` is
    named there): (value, sentence index, start of the mention, end of the number); "one" (no
    number elsewhere, where it is as often a pronoun) counts one when it counts the noun ("an
    opera in one act")."""
    found = _first_mention(name, other, sentences)
    if found is None:
        return None
    n, start, _, stop = found
    said = analyse(sentences[n][:stop])
    ones = {t.start: t.end for t in said.tokens if t.norm == "one"}
    counts = [(f.start, f.end, f.value) for f in said.facts if f.kind == "number"]
    counts += [(lo, hi, 1.0) for lo, hi in ones.items()]
    for lo, hi, value in sorted(counts, key=lambda c: c[0]):
        if lo < start:
            continue
        after = [t.norm for t in said.tokens if t.start >= hi][:3]
        lead = [t.norm for t in said.tokens if t.end <= lo][-2:]
        if lo in ones and (not after or stem(after[0]) != noun):
            continue  # "one" only right before the noun it counts
        if noun in {stem(w) for w in after} or (
            len(lead) == 2 and lead[1] == "of" and stem(lead[0]) == noun
        ):
            return float(value), n, start, hi  # type: ignore[arg-type]
    return None
