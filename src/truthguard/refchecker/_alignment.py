"""Aligning one claim with one evidence sentence: facts found, facts in conflict, negation.

A fact of the claim is *found* when the same value (after normalisation) is in the evidence; it
is *in conflict* when the claim retells the sentence and a different value of the same kind
stands in its slot; a negation conflicts when it flips a word both sides share.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from truthguard.refchecker._analysis import NON_CONTENT as _NON_CONTENT
from truthguard.refchecker._analysis import Analysed
from truthguard.refchecker._facts import FUNCTION_WORDS, Fact, fold, stem
from truthguard.refchecker._lemmas import lemmas
from truthguard.refchecker._numbers import DURATION_DAYS as DURATION
from truthguard.refchecker._numbers import POUNDS, SUBUNIT, bound_span
from truthguard.refchecker.structure import kind_named

__all__ = [
    "APPROX",
    "COPIED",
    "DURATION",
    "MONEY",
    "Issue",
    "Names",
    "conflict",
    "copied_share",
    "country_forms",
    "country_in",
    "fact_in",
    "hedge_at",
    "hedge_met",
    "local_negation_issue",
    "negation_issue",
    "ordinal",
    "other_value",
    "retold_other_side",
    "same_country",
    "same_sort",
    "swapped",
    "tokens_of",
    "year",
]


@dataclass
class Issue:
    """Why a claim is not Entailment: one span of the claim, and its evidence if it conflicts."""

    kind: str
    """number, month, name, title, negation or content."""
    relation: str
    """``ungrounded`` (not in the evidence), ``conflict`` (the evidence says otherwise),
    ``other_value`` (the evidence fills the same slot with another value), ``swapped`` (another
    name does the action), ``of_another`` (said only of another of the names the claim joins)
    or ``opposite`` (the evidence says the other way)."""
    start: int
    """Offset of the span in the claim."""
    end: int
    text: str
    evidence: tuple[int, int, int, str] | None = None
    """(reference index, start, end, text) of the span in the reference the claim's span is set
    against (a conflict or another value)."""


def _same_number(a: Fact, b: Fact) -> bool:
    if not isinstance(a.value, float) or not isinstance(b.value, float):
        return False
    if (a.series and b.unit in _MEASURED) or (b.series and a.unit in _MEASURED):
        return False  # "term 2" names a term: no "2%", no "£2"
    if a.unit != b.unit and a.unit in DURATION and b.unit in DURATION:
        # one stretch of time in two units: "two decades" is "twenty years"
        x, y = a.value * DURATION[a.unit], b.value * DURATION[b.unit]
        return abs(x - y) <= 0.02 * max(x, y)
    if a.unit == b.unit == "%" and (a.text[:1].isalpha() or b.text[:1].isalpha()):
        # a share in words is its percentage rounded: "a third" is 33%, 33.3% or 33.33% (and
        # "a quarter of a percentage point" no half of one)
        gap = abs(a.value - b.value)
        same = gap < 0.5 and gap <= 0.02 * max(abs(a.value), abs(b.value))
    elif abs(a.value - b.value) > 1e-9 * max(1.0, abs(a.value)) and not (
        _rounded_to(a.value, b.value)
        or _rounded_to(b.value, a.value)
        or _decimals_dropped(a, b)
        or _decimals_dropped(b, a)
        or _same_decade(a, b)
        or _in_decade(a, b)
    ):
        return False
    else:
        same = (
            _same_unit(a.unit, b.unit) or None in (a.unit, b.unit) or "decade" in (a.unit, b.unit)
        )
    # (asked last: most pairs differ in value)
    return same and not _rank_for_count(a, b) and not _count_for_share(a, b)


def _count_for_share(a: Fact, b: Fact) -> bool:
    """Whether one of two values is a percentage and the other a bare count spelled in words:
    "a 3% discount" is not stated by "three instalments". A share in words is read as a
    percentage already ("a third"), so a number word with no unit counts things."""
    units = (a.unit, b.unit)
    bare = b if b.unit is None else a
    return "%" in units and None in units and bare.text.isalpha()


def _rank_for_count(a: Fact, b: Fact) -> bool:
    """Whether ``a`` (the claim's) is a rank ("fourth", "3rd") and ``b`` (the sources') a count
    spelled in words ("four stages"): "the fourth ventricle" is not stated by "four stages". A
    rank and a number in digits may label the same thing ("the fourth season", "season 4"), and
    a claim's count may be a label the sources give as a rank ("game three", "the third game")."""
    return b.text.isalpha() and _shape(a)[1] and not _shape(b)[1]


def _same_decade(a: Fact, b: Fact) -> bool:
    """Whether one of two decades is the other without its century ("the '50s", "the 1950s")."""
    if a.unit != "decade" or b.unit != "decade":
        return False
    short, full = sorted((float(a.value), float(b.value)))  # type: ignore[arg-type]
    return short < 100 <= full and full % 100 == short


def _in_decade(a: Fact, b: Fact) -> bool:
    """Whether the claim's decade or century ``a`` ("the 1960s", "the early 1800s") holds the
    year or decade ``b`` the sources give (1964; 1804, "the 1830s"): the claim says when more
    loosely."""
    if a.unit != "decade" or b.unit not in (None, "decade") or not isinstance(b.value, float):
        return False
    start = float(a.value)  # type: ignore[arg-type]
    if start < 100 or not b.value.is_integer():
        return False
    width = 100.0 if start % 100 == 0 else 10.0  # "the 1800s" is read as the century
    return start <= b.value < start + width


def _same_unit(a: str | None, b: str | None) -> bool:
    """One unit, or "pound" beside "£" or "lb" (the word is money or weight), or degrees
    beside degrees of a named scale ("178 degrees" for "178 °C")."""
    return (
        a == b
        or (a in POUNDS and b in POUNDS and "pound" in (a, b))
        or (a in _DEGREES and b in _DEGREES and "°" in (a, b))
        or (SUBUNIT in (a, b) and {a, b} <= MONEY)
    )


def durations(a: str | None, b: str | None) -> bool:
    """Whether two units are both units of time ("30 seconds" may fill the slot of "2
    minutes")."""
    return a in DURATION and b in DURATION


def _same_measure(a: str | None, b: str | None) -> bool:
    """One unit (see :func:`_same_unit`), or two units of time."""
    return _same_unit(a, b) or durations(a, b)


def bounded_alike(fact: Fact, text: Analysed, other: Fact, other_text: Analysed) -> bool:
    """Whether ``fact`` in ``text`` and ``other`` in ``other_text`` are bounds of one side
    ("up to 48 hours" and "at most 24 hours")."""
    mine = bound_span(text.text, fact.start, fact.end)
    theirs = bound_span(other_text.text, other.start, other.end)
    return mine is not None and theirs is not None and mine[0] == theirs[0]


MONEY = frozenset(["$", "£", "€", "¥", "kr", "chf", "pound", SUBUNIT])
"""Currency units: an amount in cents or pence agrees with any of them."""
_MEASURED = MONEY | {"%"}
"""Units a number naming one of a series never has: a share or an amount of money."""


_DEGREES = frozenset(["°", "°C", "°F"])


_DIGITS = re.compile(r"\d[\d,]*(?:\.(\d+))?")


def _decimals_dropped(a: Fact, b: Fact) -> bool:
    """Whether ``a`` is ``b`` rounded to fewer decimals, keeping two significant digits or
    more: "902 m/s" for 902.21, "1.1 kg" for 1.13 (not "3" for 3.4: one digit says little)."""
    if "." not in b.text:
        return False  # ``b`` has no decimals to drop
    m = _DIGITS.fullmatch(a.text)
    n = _DIGITS.fullmatch(b.text)
    if m is None or n is None or n.group(1) is None:
        return False
    places = len(m.group(1) or "")
    if places >= len(n.group(1)) or len(a.text.replace(",", "").replace(".", "").lstrip("0")) < 2:
        return False
    shifted = Decimal(str(b.value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return float(shifted) == a.value


def _rounded_to(a: float, b: float) -> bool:
    """Whether ``a`` is ``b`` rounded at its last non-zero digit, two zeros or more, keeping
    two significant digits or more, and neither could be a year ("205,000" for 205,014,
    "941,300" for 941,329; not "100 billion" for 119 billion: one digit says little)."""
    if a <= 2100 or not a.is_integer() or 1000 <= b <= 2100:
        return False  # never a year: "1900" is no rounded 1889
    n, zeros = int(a), 0
    while n % 10 == 0:
        n, zeros = n // 10, zeros + 1
    return zeros >= 2 and n >= 10 and round(b, -zeros) == a


_ORDINAL_WORDS = frozenset(["first", "second", "third"])


def _shape(fact: Fact) -> tuple[bool, bool, bool]:
    """What kind of number a fact is: a year, an ordinal ("fourth", "86th"), a whole number.
    Only numbers of one shape stand in one slot: "fourth" is set against "third", not against
    "52.38"; "2008" against "2009", not against "five"."""
    text = fact.text.lower().rstrip(".")
    ordinal = text in _ORDINAL_WORDS or (
        text.endswith(("st", "nd", "rd", "th")) and (text[:-2].isdigit() or text.isalpha())
    )
    whole = isinstance(fact.value, float | int) and float(fact.value).is_integer()
    return year(fact), ordinal, whole


@dataclass(frozen=True)
class Names:
    """The names among some evidence facts, indexed for looking a claim's name up in them.

    Built once per evidence pool: a pool's names are looked up for every fact of every claim.
    """

    bare: frozenset[str]
    """Each name without a possessive "'s"."""
    initials: str
    """The first letter of each name, in order (an acronym is a run of them)."""
    long_by_first: Mapping[str, tuple[str, ...]] = field(hash=False)
    """The names of six letters or more by their first letter: only those can be a misspelling
    or another ending of a claim's name (see :func:`_variant`)."""

    @classmethod
    def of(cls, facts: Iterable[Fact]) -> Names:
        """The index of the name facts among ``facts``."""
        names = [str(f.value) for f in facts if f.kind == "name"]
        by_first: dict[str, list[str]] = {}
        for n in names:
            if len(n) >= 6:
                by_first.setdefault(n[0], []).append(n)
        return cls(
            frozenset(n.removesuffix("'s") for n in names),
            "".join(n[:1] for n in names),
            {k: tuple(v) for k, v in by_first.items()},
        )

    def __add__(self, other: Names) -> Names:
        """The index of both sets of facts, ``self``'s first (as if their lists were joined)."""
        by_first = dict(self.long_by_first)
        for k, v in other.long_by_first.items():
            by_first[k] = by_first.get(k, ()) + v
        return Names(self.bare | other.bare, self.initials + other.initials, by_first)


def fact_in(
    fact: Fact,
    facts: Sequence[Fact],
    norms: frozenset[str],
    stems: frozenset[str],
    names: Names | None = None,
) -> bool:
    """Whether ``fact`` is found among ``facts`` (or, for a name or a title, among the words
    ``norms`` / ``stems``); ``names`` is the index of ``facts``' names, if already built."""
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
        if any(
            f.kind == "title" and (fact.value in f.value or f.value in fact.value) for f in facts
        ):
            return True
        # a quotation is found when its words are ("fight of the century," / "... century")
        words = [w.strip(".,;:!?'\"") for w in str(fact.value).split()]
        words = [w for w in words if w]
        return bool(words) and all(w in norms or stem(w) in stems for w in words)
    if fact.kind == "name":
        name = str(fact.value)
        if name in norms or stem(name) in stems:
            return True  # the word itself (the index is built only when it is needed)
        return _name_in(name, Names.of(facts) if names is None else names, norms)
    return False


def country_in(fact: Fact, sentence: Analysed) -> bool:
    """Whether the name ``fact`` names a country (or its people) that ``sentence`` names in
    another form: "Danish" of "Denmark", "Switzerland's" of "Swiss", "British" of "the UK"
    (:func:`country_forms`). Read in the claim's evidence sentence only: "the Kingdom of
    France" is not stated by "a French army" in another sentence. A code of two or three
    letters counts only in capitals ("US" or "U.S.", not the word "us")."""
    if fact.kind != "name":
        return False
    forms = country_forms(str(fact.value).removesuffix("'s"))
    if not forms:
        return False
    codes = {
        t.text.replace(".", "").casefold()
        for t in sentence.tokens
        if t.text.replace(".", "").isupper() and t.text.replace(".", "").isalpha()
    }
    folded = fold(sentence.text)
    return any(
        form in codes
        if len(form) <= 3
        else re.search(rf"\b{re.escape(form)}\b", folded) is not None
        if " " in form
        else form in sentence.norms
        for form in forms
    )


@functools.cache
def _countries() -> dict[str, frozenset[str]]:
    from countryinfo import all_countries

    by_form: dict[str, set[str]] = {}
    for country in all_countries():
        info = country.info()
        forms = {info.get("name"), info.get("demonym"), *(info.get("altSpellings") or ())}
        folded = {fold(f) for f in forms if isinstance(f, str) and f.strip()}
        folded = {f for f in folded if len(f) >= 2}  # (no single letters)
        for f in folded:
            by_form.setdefault(f, set()).update(folded)
    return {f: frozenset(v) for f, v in by_form.items()}


def same_country(fact: Fact, other: str) -> bool:
    """Whether the name ``fact`` and the text ``other`` name one country in two of its forms
    ("Denmark" and "Danish")."""
    forms = country_forms(str(fact.value).removesuffix("'s")) if fact.kind == "name" else ()
    return fold(other).removesuffix("'s") in forms


def country_forms(name: str) -> frozenset[str]:
    """The folded forms of every country ``name`` (folded) is a form of: its name, its
    people's adjective and its other names and codes (the ``countryinfo`` package's); empty
    when it names none."""
    return _countries().get(name, frozenset())


def _name_in(name: str, names: Names, norms: frozenset[str]) -> bool:
    """Whether ``name``, not itself among the evidence words, stands for a name of ``names``."""
    if name.removesuffix("'s") in names.bare:
        return True  # "Apple's" / "Apple"
    parts = [p for p in name.replace(".", " ").replace("-", " ").split() if p]
    if len(parts) > 1 and all(p in norms or len(p) == 1 for p in parts):
        return True  # "Jean-Paul", "J.K." against "Jean Paul", "Joanne K."
    initials = names.initials
    if len(name) == 1:  # an initial: a capitalised evidence word with that letter
        return name in initials
    acronym = name.isalpha() and 2 <= len(name) <= 6  # of consecutive capitalised words
    if acronym and (name in initials or name.rstrip("s") in initials):
        return True
    # a long name misspelt by one letter ("Firoentina", "Maurico") is the evidence's name, and
    # the same word with another ending ("Argentinian" / "Argentine") stands for it
    if len(name) < 6:
        return False  # too short for either
    return any(_variant(name, n) for n in names.long_by_first.get(name[0], ()))


def _variant(a: str, b: str) -> bool:
    """Whether one name is a misspelling of the other or the same word with another ending
    ("Argentinian" / "Argentine": six first letters the same, at most two of the shorter
    not). A name that opens another is not one ("John" / "Johnson", "Robert" / "Roberta")."""
    if len(a) < 6 or len(b) < 6 or a == b or a[0] != b[0]:
        return False
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if long_.startswith(short):
        return False
    same = next(k for k in range(len(short)) if short[k] != long_[k])
    return (same >= 6 and len(short) - same <= 2) or _one_edit(a, b)


def _one_edit(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter changed, added, dropped or two swapped, not the
    last one. Only :func:`_variant` calls it, once it has found both names of six letters or
    more, different, with the same first letter."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return (len(diff) == 1 and diff[0] < len(a) - 1) or (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    # not at the end: "Roberta" and "Daniela" are other people than "Robert" and "Daniel"
    return i < len(short) and short[i:] == long_[i + 1 :]


def tokens_of(a: Analysed, start: int, end: int) -> list[int]:
    return [i for i, t in enumerate(a.tokens) if t.start >= start and t.end <= end]


def _opcode_of(ops: list[tuple[str, int, int, int, int]], i: int) -> tuple[str, int, int, int, int]:
    for op in ops:
        if op[1] <= i < op[2]:
            return op
    return ("insert", i, i + 1, 0, 0)


_SLOT = 5
"""Most tokens on each side of a replaced stretch read as one value swapped for another."""

APPROX = frozenset(
    [
        *("about", "around", "approximately", "nearly", "almost", "roughly", "some", "over"),
        *("under", "more", "less", "fewer", "least", "most", "up", "estimated", "circa"),
    ]
)


def _approximate(text: Analysed, i: int) -> bool:
    """Whether the number at token ``i`` is hedged ("more than", "about", "nearly", "over")."""
    before = {t.norm for t in text.tokens[max(i - 2, 0) : i]}
    return bool(before & APPROX)


_HEDGE = re.compile(
    r"\b(?:(?P<about>about|around|roughly|approximately|some|circa|an\s+estimated|close\s+to)"
    r"|(?P<nearly>nearly|almost|just\s+under|just\s+short\s+of)"
    r"|(?P<over>more\s+than|over|upwards\s+of|in\s+excess\s+of|just\s+over)"
    r"|(?P<under>fewer\s+than|less\s+than|under|below))\s+(?:[$£€¥]\s*)?$",
    re.IGNORECASE,
)
"""A hedge right before a number that says it rounds a value ("about 2,200", "nearly 16
million") or bounds it by a round one ("more than 2,000", "fewer than 3,000"); not the bounds
a rule sets ("up to 30 days", "at least 18", "within 14 days"), which are read as such."""


def _step(fact: Fact) -> float | None:
    """The place value of the last significant digit a number is written with: 100 for
    "2,200", a million for "16 million", 0.1 for "1.5"; None for one in words."""
    m = _DIGITS.search(fact.text)
    if m is None:
        return None
    written = m.group().replace(",", "")
    digits = written.replace(".", "").lstrip("0") if "." in written else written.strip("0")
    value = abs(float(fact.value))  # type: ignore[arg-type]
    return 10.0 ** (math.floor(math.log10(value)) - max(len(digits), 1) + 1)


def hedge_at(text: str, fact: Fact) -> tuple[str, int] | None:
    """The hedge right before a number (:data:`_HEDGE`): its sort (``about``, ``nearly``,
    ``over``, ``under``) and where its words start."""
    lo = max(0, fact.start - 30)
    m = _HEDGE.search(text[lo : fact.start])
    if m is None:
        return None
    sort = next(k for k in ("about", "nearly", "over", "under") if m.group(k))
    return sort, lo + m.start()


def _bounded_itself(sent: Analysed, f: Fact) -> bool:
    """Whether a value of the sources is a bound ("more than 2,000", "up to 30 days"), not a
    value stated as such or estimated ("an estimated 15.9 million")."""
    m = _HEDGE.search(sent.text[max(0, f.start - 30) : f.start])
    return (m is not None and not m.group("about")) or bound_span(
        sent.text, f.start, f.end
    ) is not None


def _lead(value: float) -> float:
    """The place value of a number's first digit: 1,000 for 2,226."""
    return 10.0 ** math.floor(math.log10(value))


def hedge_met(claim: Analysed, fact: Fact, sent: Analysed) -> Fact | None:
    """The value of ``sent`` that the claim's hedged number stands for, if any: one of the same
    measure, stated as such (not hedged or bounded itself), that the hedge holds for. "About
    2,200" and "about 2,000" round 2,226 (within half the last digit's place, or that place
    for a number of two significant digits or more); "nearly 16 million" is 15.9 million (at
    most that place below); "more than 2,000" and "fewer than 3,000" bound 2,226 by itself
    rounded at its first digit (not "more than 100": a bound that far says little of the
    count). Such a bound rounds a count of a hundred or more, not an amount of money or time
    ("over £100" of £150, "over 60" of 65 set a threshold of their own). Years are never
    hedged values."""
    if fact.kind != "number" or not isinstance(fact.value, float) or fact.value <= 0:
        return None
    hedge = hedge_at(claim.text, fact)
    if hedge is None or year(fact):
        return None
    sort = hedge[0]
    claimed, step = fact.value, _step(fact)
    if step is None:
        return None
    sig = round(claimed / step)
    for f in sent.facts:
        if (
            f.kind != "number"
            or not isinstance(f.value, float)
            or f.value <= 0
            or year(f)
            or not (_same_measure(f.unit, fact.unit) or None in (f.unit, fact.unit))
            or _bounded_itself(sent, f)
        ):
            continue
        stated = f.value
        if sort in ("over", "under") and (
            stated < 100 or fact.unit in MONEY or fact.unit in DURATION
        ):
            continue
        if sort == "about":
            held = abs(stated - claimed) <= (step if sig >= 10 else step / 2)
        elif sort == "nearly":
            held = 0 <= claimed - stated <= step
        elif sort == "over":
            held = math.floor(stated / _lead(stated)) * _lead(stated) <= claimed < stated
        else:
            held = stated < claimed <= math.ceil(stated / _lead(stated)) * _lead(stated)
        if held:
            return f
    return None


_WEEKDAYS = frozenset(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
)


def _weekday(fact: Fact) -> bool:
    """A day of the week is a name, but never stands in the slot of a person or place."""
    return fact.kind == "name" and str(fact.value) in _WEEKDAYS


def conflict(
    fact: Fact, claim: Analysed, sent: Analysed, ops: list, close: bool, claim_facts: list[Fact]
) -> Fact | None:
    """The fact of the evidence sentence that ``fact`` (absent from it) is set against, if any."""
    idx = tokens_of(claim, fact.start, fact.end)
    if not idx:
        return None
    tag, i1, i2, j1, j2 = _opcode_of(ops, idx[0])
    k = next((n for n, op in enumerate(ops) if op[1] == i1 and op[0] == tag), 0)
    interior = any(op[0] == "equal" for op in ops[:k]) and any(
        op[0] == "equal" for op in ops[k + 1 :]
    )
    # a replaced stretch is a conflict only where the claim retells this sentence around it,
    # and only a short one: one value in the slot of another ("by John Smith" / "by Dr. Maria
    # Okafor"), not a long stretch a summary rewrote in its own words
    short = i2 - i1 <= _SLOT and j2 - j1 <= _SLOT
    if _approximate(claim, idx[0]) and fact.kind == "number":
        # "more than 10,000" is not set against "10,190", but a bound is against the bound of
        # the same side the sentence states in its place ("up to 48 hours" / "at most 24")
        return (
            _same_side_bound(fact, claim, sent, (j1, j2))
            if tag == "replace" and short and (close or interior)
            else None
        )
    if tag == "replace" and fact.kind == "name" and _described(claim, i2, sent, j2):
        return None
    if retold_other_side(claim, sent, ops):
        return None  # "after the first 4 weeks ... 50%" of "within the first 4 weeks ... 25%"
    if tag == "replace" and short and (close or interior):
        lo, hi = sent.tokens[j1].start, sent.tokens[j2 - 1].end
        for f in sent.facts:
            units = (f.unit, fact.unit)
            same_unit = fact.kind != "number" or _same_measure(*units) or None in units
            if (
                f.kind == fact.kind
                and lo <= f.start < hi
                and same_unit
                and _weekday(fact) == _weekday(f)
                and (fact.kind != "number" or _shape(fact) == _shape(f))
                and times(f, claim_facts) < times(f, sent.facts)
            ):
                return f
    if close and short and fact.kind in ("number", "month"):
        # the claim retells this sentence, whose own fact of this kind it does not repeat
        for f in sent.facts:
            if (
                f.kind == fact.kind
                and (
                    fact.kind == "month"
                    or (_same_measure(f.unit, fact.unit) and _shape(f) == _shape(fact))
                )
                and not fact_in(f, claim_facts, frozenset(), frozenset())
            ):
                return f
    return None


_INSIDE = frozenset(("within", "before", "during", "inside", "under", "until"))
_OUTSIDE = frozenset(("after", "beyond", "past", "outside", "over", "later"))


def retold_other_side(claim: Analysed, sent: Analysed, ops: list) -> bool:
    """Whether the claim retells the sentence with one bound word put for its other side
    ("*after* the first 4 weeks" where it says "*within* the first 4 weeks"): the claim speaks
    of the case the sentence leaves out, whose values it does not give."""
    for k, (tag, _, i2, _, j2) in enumerate(ops[:-1]):
        if tag == "replace" and ops[k + 1][0] == "equal":
            # the bound words just before what both go on to say alike
            mine, theirs = claim.tokens[i2 - 1].norm, sent.tokens[j2 - 1].norm
            if {mine, theirs} & _INSIDE and {mine, theirs} & _OUTSIDE:
                return True
    return False


def _described(claim: Analysed, i2: int, sent: Analysed, j2: int) -> bool:
    """Whether a replaced stretch ending before the last word of a name both sides share
    (claim token ``i2``, sentence token ``j2``) holds on one side a description, ending in a
    noun in lower case just before the shared name ("Tottenham striker Kane", "Lisbon forward
    Oliveira"), and on the other a capitalised word (a first name: "Harry Kane"): the
    description's capitalised word qualifies its noun, not the name, so the two fill different
    slots and neither is set against the other."""
    if i2 >= len(claim.tokens) or j2 >= len(sent.tokens):
        return False
    mine, theirs = claim.tokens[i2 - 1], sent.tokens[j2 - 1]
    shared = claim.tokens[i2].text
    if not shared[:1].isupper() or sent.tokens[j2].text != shared:
        return False
    if not (_ends_name(claim, i2) and _ends_name(sent, j2)):
        return False  # "Liverpool FC" / "and FC Bayern": not one name's last word
    return _noun_word(mine.text) != _noun_word(theirs.text) and (
        mine.text[:1].isupper() or theirs.text[:1].isupper()
    )


def _describes(claim: Analysed, i: int, sent: Analysed, j: int) -> bool:
    """Whether the sentence's name ending before token ``j`` describes a noun that comes before
    the claim's next name word (token ``i``), as :func:`_described` reads them: "Lisbon forward
    Oliveira" where the claim says "Marta Oliveira"."""
    if i >= len(claim.tokens):
        return False
    shared = claim.tokens[i].text
    ahead = range(j, min(j + 3, len(sent.tokens)))
    at = next((k for k in ahead if sent.tokens[k].text == shared), None)
    return at is not None and _described(claim, i, sent, at)


def _ends_name(text: Analysed, k: int) -> bool:
    return k + 1 >= len(text.tokens) or not text.tokens[k + 1].text[:1].isupper()


def _noun_word(word: str) -> bool:
    """Whether a word is in lower case and no function word: the noun a description ends in."""
    return word.isalpha() and word.islower() and word not in FUNCTION_WORDS


def _same_side_bound(
    fact: Fact, claim: Analysed, sent: Analysed, where: tuple[int, int]
) -> Fact | None:
    """The value of ``sent``'s tokens ``where`` bounded on the side ``fact`` is bounded on in
    the claim, of its unit and shape, or None."""
    lo, hi = sent.tokens[where[0]].start, sent.tokens[where[1] - 1].end
    for f in sent.facts:
        if (
            lo <= f.start < hi
            and f.kind == "number"
            and _same_measure(f.unit, fact.unit)
            and _shape(f) == _shape(fact)
            and bounded_alike(fact, claim, f, sent)
        ):
            return f
    return None


def times(fact: Fact, facts: list[Fact]) -> int:
    """How many of ``facts`` state ``fact``'s value: a value the sentence holds twice ("Universe
    10's angel mourns Universe 10's erasure") is replaced once even if the claim keeps the
    other."""
    return sum(fact_in(fact, [f], frozenset(), frozenset()) for f in facts)


def swapped(fact: Fact, other: Fact, claim: Analysed, sent: Analysed, ops: list) -> bool:
    """Whether the claim copies the sentence around ``fact`` with only that value replaced by
    ``other``: one replaced stretch holding no more than the two values (and a word each side),
    between words both sides share. Then the claim says something else about the *same* slot,
    even if its value occurs elsewhere in the evidence."""
    idx = tokens_of(claim, fact.start, fact.end)
    jdx = tokens_of(sent, other.start, other.end)
    if not idx or not jdx:
        return False
    tag, i1, i2, j1, j2 = _opcode_of(ops, idx[0])
    if tag != "replace":
        return False
    k = next((n for n, op in enumerate(ops) if op[1] == i1 and op[0] == tag), 0)
    if not (
        any(op[0] == "equal" for op in ops[:k]) or any(op[0] == "equal" for op in ops[k + 1 :])
    ):
        return False
    return (
        i1 >= idx[0] - 1
        and i2 <= idx[-1] + 2
        and j1 >= jdx[0] - 1
        and j2 <= jdx[-1] + 2
        and copied_share(ops, claim) >= COPIED
    )


def copied_share(ops: list, claim: Analysed) -> float:
    """Share of the claim's words that the alignment copies from the sentence."""
    copied = sum(op[2] - op[1] for op in ops if op[0] == "equal")
    return copied / max(len(claim.tokens), 1)


COPIED = 0.7
"""Share of a claim's words that must be copied from the sentence for a swapped value to
conflict with the sentence even when the value is stated elsewhere."""


def _negates_shared_word(
    text: Analysed, k: int, aligned: list[tuple[int, int]], *, words: int = 1
) -> bool:
    """Whether the negation at token ``k`` governs a word both sides share: one of the next
    ``words`` content words after it (within four tokens) lies in an aligned stretch ("is not a
    tower" / "is a tower"; with two, "is not an important centre" / "is a major centre"). A
    negation whose words the other side does not have at all flips nothing there."""
    for seen, m in enumerate(_words_after(text, k), start=1):
        if any(lo <= m < hi for lo, hi in aligned):
            return True
        if seen == words:
            break
    return False


def _words_after(text: Analysed, k: int) -> Iterator[int]:
    """The content words after the negation at token ``k``, within four tokens of it."""
    for m in range(k + 1, min(k + 5, len(text.tokens))):
        if text.tokens[m].norm not in _NON_CONTENT and m not in text.negations:
            yield m


def _negated_there(one: Analysed, k: int, other: Analysed) -> bool:
    """Whether ``other`` states, only under a negation, the word ``one``'s negation at token
    ``k`` governs (its next content word, by stem): "shall not be construed to deny" says the
    "doesn't deny" of a retelling, in its own order. A word ``other`` also states without a
    negation ("does not apply to children, and applies to adults") is left to the alignment."""
    m = next(_words_after(one, k), None)
    if m is None:
        return False
    word = stem(one.tokens[m].norm)
    at = [n for n, t in enumerate(other.tokens) if stem(t.norm) == word]
    if not at:
        return False
    # as many negations before the word on both sides ("has not no effect" is not "has no
    # effect"), and of one sort ("no one, not even themselves" is not "no one, even themselves")
    mine = sum(1 for j in one.negations if k <= j < m)
    sort = _cue_sort(one.tokens[k].norm)
    return all(
        sum(
            1
            for j in other.negations
            if _cue_sort(other.tokens[j].norm) == sort
            and n in itertools.islice(_words_after(other, j), 2)
        )
        == mine
        for n in at
    )


_NO_WORDS = frozenset(["no", "none", "nothing", "nobody", "nowhere", "neither", "nor", "no-one"])


def _cue_sort(norm: str) -> str:
    """A negation cue's sort: "without", a negative determiner or pronoun ("no", "nothing"), or
    a negated verb ("not", "n't", "never")."""
    return "without" if norm == "without" else "no" if norm in _NO_WORDS else "not"


_NEGATIVE_PREFIXES = ("un", "in", "im", "il", "ir", "non", "dis")


def _negative_prefix(claim: Analysed, k: int, sent: Analysed) -> bool:
    """Whether the sentence holds the next content word after the claim's negation at ``k``
    with a negative prefix ("not experienced" / "inexperienced", "not fair" / "unfair")."""
    m = next(_words_after(claim, k), None)
    if m is None:
        return False
    word = claim.tokens[m].norm
    return any(p + word in sent.norms or f"{p}-{word}" in sent.norms for p in _NEGATIVE_PREFIXES)


def _same_word_start(a: Analysed, ia: range, b: Analysed, jb: range, skip: set[int]) -> bool:
    """Whether a word of ``b[jb]`` starts like a word of ``a[ia]`` (negations skipped):
    "make" / "made", "win" / "won" are one verb."""
    heads = {a.tokens[i].norm[:1] for i in ia if i not in skip and a.tokens[i].norm}
    return any(b.tokens[j].norm[:1] in heads for j in jb if b.tokens[j].norm)


def _same_polarity(claim: Analysed, sent: Analysed) -> bool:
    """Whether the claim and its sentence negate alike: as many negations of each sort, at
    least one ("parallel rays they reflect don't come to a single focus" / "... do not focus to
    a single point": each negates once, each its own verb). A negation moved from one verb to
    another of the same statement flips nothing."""
    if not claim.negations:
        return False
    mine = sorted(_cue_sort(claim.tokens[k].norm) for k in claim.negations)
    return mine == sorted(_cue_sort(sent.tokens[k].norm) for k in sent.negations)


def negation_issue(claim: Analysed, sent: Analysed, ops: list) -> tuple[Issue, Any] | None:
    equal = [op for op in ops if op[0] == "equal"]
    if not equal or _same_polarity(claim, sent):
        return None
    first_eq, last_eq = equal[0][3], equal[-1][4]
    cneg, sneg = set(claim.negations), set(sent.negations)
    for one, other in ((claim, sent), (sent, claim)):
        # "doesn't feed on any other" says what "feeds on no other" says: a negation before
        # "any" (or "ever", "anyone", ...) where the other side has "no" ("never", "nobody")
        mine, theirs = (cneg, sneg) if one is claim else (sneg, cneg)
        for tag, i1, i2, j1, j2 in ops:
            lo, hi, olo, ohi = (i1, i2, j1, j2) if one is claim else (j1, j2, i1, i2)
            if tag != "replace" or hi - lo != 1 or ohi - olo != 1:
                continue
            word, their = one.tokens[lo].norm, other.tokens[olo].norm
            if _NEGATIVE_OF.get(word) != their or olo not in theirs:
                continue
            cue = next((k for k in range(lo - 1, max(lo - 4, -1), -1) if k in mine), None)
            if cue is not None:
                mine.discard(cue)
                theirs.discard(olo)
    claim_equal = [(op[1], op[2]) for op in equal]
    sent_equal = [(op[3], op[4]) for op in equal]
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        a = sum(1 for i in range(i1, i2) if i in cneg)
        b = sum(1 for j in range(j1, j2) if j in sneg)
        interior = j1 >= first_eq and j2 <= last_eq
        # the only words put in or left out, between copied words, are a negation: "so she does
        # (not) have to be around him" flips whatever words follow it
        # (difflib: "delete" words are the claim's alone, "insert" words the sentence's)
        if tag == "delete" and 0 < a == i2 - i1 and interior:
            if _negated_there(claim, i1, sent):
                continue  # the sentence says it too, elsewhere in its order
            t = claim.tokens[i1]
            return Issue("negation", "conflict", t.start, t.end, t.text), None
        # ("No pets are allowed" before a claim that copies the rest: the sentence's subject
        # is negated from its first word)
        opening = i1 == j1 == 0 and sent.tokens[0].norm in ("no", "neither") and bool(claim.tokens)
        if tag == "insert" and 0 < b == j2 - j1 and ((interior and i1 > 0) or opening):
            if _negated_there(sent, j1, claim):
                continue
            t = claim.tokens[max(i1 - 1, 0)]
            return Issue("negation", "conflict", t.start, t.end, t.text), sent.tokens[j1]
        if a > b:
            i = next(i for i in range(i1, i2) if i in cneg)
            # "did not make" / "made": the other side is the same verb without the negation
            swapped = (
                tag == "replace"
                and j2 - j1 <= 2
                and interior
                and _same_word_start(claim, range(i1, i2), sent, range(j1, j2), cneg)
            )
            # the claim's own negation may sit before a word it reworded ("not an important
            # centre" for "a major centre"): the next two words count
            if not swapped and not _negates_shared_word(claim, i, claim_equal, words=2):
                continue  # "no longer work" for "banned from working": other words, no flip
            if not swapped and _negative_prefix(claim, i, sent):
                continue  # "an inexperienced sailor" / "isn't an experienced sailor"
            if _negated_there(claim, i, sent):
                continue  # "Without fluid it weighs 133 lb" / "... without transmission fluid"
            t = claim.tokens[i]
            return Issue("negation", "conflict", t.start, t.end, t.text), None
        if b > a and interior:
            j = next(j for j in range(j1, j2) if j in sneg)
            # "made" for "did not make": a short stretch put for the same verb, negated
            swapped = (
                tag == "replace"
                and i2 - i1 <= 2
                and j2 - j1 <= 3
                and _same_word_start(sent, range(j1, j2), claim, range(i1, i2), sneg)
            )
            if not swapped and not _negates_shared_word(sent, j, sent_equal):
                continue  # the claim left out the negated part ("leave and never return")
            if _negated_there(sent, j, claim):
                continue  # the claim says it too, elsewhere in its order
            # where the claim drops it: the claim's words put in its place ("can" for
            # "cannot"), else the claim word aligned just before
            if tag == "replace":
                a0, a1 = claim.tokens[i1], claim.tokens[i2 - 1]
                span = (a0.start, a1.end, claim.text[a0.start : a1.end])
            else:
                t = claim.tokens[max(i1 - 1, 0)] if claim.tokens else None
                span = (t.start, t.end, t.text) if t else (0, 0, "")
            return Issue("negation", "conflict", *span), sent.tokens[j]
    return None


_NEGATIVE_OF = {
    "any": "no",
    "anything": "nothing",
    "anyone": "nobody",
    "anybody": "nobody",
    "ever": "never",
    "anywhere": "nowhere",
    "either": "neither",
}
"""A word a negation turns into the negative word beside it ("not ... any" is "no")."""

_POSITIVE = {"won't": "will", "can't": "can", "cannot": "can", "shan't": "shall", "ain't": "is"}
"""Negated auxiliaries whose positive form is not the word less "n't"."""


def _positive(norm: str) -> tuple[str, ...] | None:
    """The words a negation cue leaves when it is taken out ("not" / "never": none; "isn't":
    "is"), or None for a cue that does more than negate ("no", "without", "nobody")."""
    if norm in ("not", "never", "n't"):
        return ()
    if norm in _POSITIVE:
        return (_POSITIVE[norm],)
    if norm.endswith("n't") and len(norm) > 3:
        return (norm[:-3],)
    return None


def _around(text: Analysed, k: int) -> tuple[list[str], list[str], int] | None:
    """The (at most two) words before the negation at ``k`` within its clause and the words
    after it up to its second content word (at most five), with how many of them are content
    words or names."""
    toks = text.tokens
    before: list[int] = []
    for m in (k - 1, k - 2):
        if (
            m < 0
            or m in text.negations
            or re.search(r"[,;:()]", text.text[toks[m].end : toks[m + 1].start])
        ):
            break
        before.insert(0, m)
    if not before:
        return None
    weighty = text.keys
    after, seen = [], 0
    for m in range(k + 1, min(k + 6, len(toks))):
        if m in text.negations:
            break
        after.append(m)
        if m in weighty:
            seen += 1
            if seen == 2:
                break
    n = sum(1 for m in (*before, *after) if m in weighty)
    return [toks[m].norm for m in before], [toks[m].norm for m in after], n


def _find(words: Sequence[str], seq: Sequence[str]) -> int | None:
    n = len(seq)
    return next((i for i in range(len(words) - n + 1) if list(words[i : i + n]) == list(seq)), None)


def _flipped_here(a: Analysed, b: Analysed) -> tuple[int, int] | None:
    """A negation of ``a`` (its token index) whose words around it ``b`` states without it
    (with the index in ``b`` where they start): "she is not happy with" / "she is happy with",
    wherever the two put the phrase."""
    words = [t.norm for t in b.tokens]
    for k in a.negations:
        rest = _positive(a.tokens[k].norm)
        near = _around(a, k) if rest is not None else None
        if rest is None or near is None:
            continue
        before, after, weight = near
        if weight < 2 or not after:
            continue
        at = _find(words, [*before, *rest, *after])
        if at is not None and _find(words, [*before, a.tokens[k].norm, *after]) is None:
            return k, at
    return None


def local_negation_issue(claim: Analysed, sent: Analysed) -> tuple[Issue, Any] | None:
    """A negation set against the sentence by the words around it alone, when the two order
    their clauses differently and the whole-sentence alignment cannot see it ("After the
    contest, she is not happy with the decision" / "She is happy with the decision after the
    contest"): the claim says "X not Y" where the sentence says "X Y", or the reverse. The
    phrase must hold two content words or names, so that "it is (not) known" decides nothing."""
    if _same_polarity(claim, sent):
        return None
    added = _flipped_here(claim, sent)
    if added is not None:
        t = claim.tokens[added[0]]
        return Issue("negation", "conflict", t.start, t.end, t.text), None
    dropped = _flipped_here(sent, claim)
    if dropped is None:
        return None
    j, at = dropped
    t = claim.tokens[at + 1]  # the word before the dropped negation, as the aligned case
    return Issue("negation", "conflict", t.start, t.end, t.text), sent.tokens[j]


_ADDITIVE = frozenset(["also", "too", "another", "other", "besides", "additionally", "either"])
"""Words by which a claim adds a value to a slot rather than naming the slot's value."""

_ATTITUDE = frozenset(
    [
        *("know", "knew", "like", "liked", "love", "loved", "enjoy", "enjoyed", "recommend"),
        *("suggest", "think", "thought", "believe", "check", "try", "read", "watch", "see", "saw"),
        *("hear", "heard", "remember", "want", "prefer", "mean", "call", "called"),
    ]
)
"""Verbs of what someone thinks, likes or does with a thing ("Did you know X", "I recommend X"):
their object is no value of a relation the evidence could state."""

_PREPOSITIONS = frozenset(["by", "in", "on", "at", "for", "from", "with", "as", "of", "to"])
_FACT_RUN_GAP = frozenset(["and", ",", "&", "or"])


def _relation_before(a: Analysed, i: int, content: frozenset[int]) -> tuple[int, tuple] | None:
    """The relation word whose slot the value starting at token ``i`` fills: the nearest content
    word before it, with only function words between; returned with its key (the word's stem
    and the prepositions between, so "starred in X" and "starring X" are different slots)."""
    between: list[str] = []
    j = i - 1
    while j >= 0 and len(between) <= 2:
        norm = a.tokens[j].norm
        if j in content:
            return None if norm in _ATTITUDE else (j, (stem(norm), *reversed(between)))
        if norm not in _NON_CONTENT or not norm.isalpha():
            return None
        if norm in _PREPOSITIONS:
            between.append(norm)
        j -= 1
    return None


def _run_after(a: Analysed, j: int, kind: str) -> list[Fact]:
    """The facts of ``kind`` that fill the slot after token ``j``: the first within two
    function words of it, and those listed after it ("Michael Caine and Hugh Jackman"); none
    when they only qualify the noun after them."""
    by_start: dict[int, Fact] = {}
    for f in a.facts:
        idx = tokens_of(a, f.start, f.end)
        if idx and f.kind == kind:
            by_start.setdefault(idx[0], f)
    k, gap, run = j + 1, 0, []
    while k < len(a.tokens):
        f = by_start.get(k)
        if f is not None:
            run.append(f)
            k = max(tokens_of(a, f.start, f.end)) + 1
            gap = 0
            continue
        norm = a.tokens[k].norm
        if run and norm in _FACT_RUN_GAP:
            k += 1
            continue
        if run or norm not in _NON_CONTENT or not norm.isalpha() or gap >= 2:
            break
        gap += 1
        k += 1
    after = a.tokens[k].norm if k < len(a.tokens) else ""
    if after.isalpha() and after not in _NON_CONTENT:
        return []  # names that qualify a noun ("Indiana's religious freedom law")
    return run


def year(fact: Fact) -> bool:
    """Whether ``fact`` can be a year: a whole number from 1000 to 2100 with no unit (but a
    decade's, "the 1970s") and no thousands separator ("$1,050", "1,500 staff", "2000 km" are
    amounts)."""
    v = fact.value
    return (
        isinstance(v, float | int)
        and float(v).is_integer()
        and 1000 <= v <= 2100
        and fact.unit in (None, "decade")
        and "," not in fact.text
    )


def other_value(fact: Fact, claim: Analysed, evid: list[Analysed]) -> tuple[int, int, int] | None:
    """An evidence sentence that gives the slot ``fact`` fills another value, if one does:
    ``(sentence index, start, end)`` of that value in the sentence.

    The slot is the relation word before the value ("The Prestige *stars* Orlando Bloom"); an
    evidence sentence states the same relation of the same subject ("The Prestige is *starring*
    Michael Caine") with values none of which the claim names, and the claim names none of
    its. A claim that adds a value ("he *also* wrote ...") fills no slot; one without a named
    subject ("It stars ...") is taken to be about the sentence's.
    """
    idx = tokens_of(claim, fact.start, fact.end)
    if not idx or any(t.norm in _ADDITIVE for t in claim.tokens):
        return None
    content = frozenset(claim.content)
    kind = fact.kind
    # the start of the value: back over the facts of the same kind listed before this one
    run_start = idx[0]
    found = _relation_before(claim, run_start, content)
    while found is None:
        before = [
            f for f in claim.facts if f.kind == kind and f.end <= claim.tokens[run_start].start
        ]
        prev = max(before, key=lambda f: f.end, default=None)
        if prev is None:
            return None
        p_idx = tokens_of(claim, prev.start, prev.end)
        gap = claim.tokens[p_idx[-1] + 1 : run_start] if p_idx else []
        if not p_idx or any(t.norm not in _FACT_RUN_GAP for t in gap):
            return None
        run_start = p_idx[0]
        found = _relation_before(claim, run_start, content)
    j, key = found
    if kind == "number":
        key = key[:1]  # "released in 2013" and "released 2012" fill one slot
    values = _run_after(claim, j, kind)
    if fact not in values:
        return None
    # the subject: the content words and names before the relation ("It", "he" and an empty
    # subject are taken to be the sentence's)
    before = [i for i in content if i < j] + [
        i for f in claim.facts for i in tokens_of(claim, f.start, f.end) if i < j
    ]
    subject = {stem(claim.tokens[i].norm) for i in before}
    for n, sent in enumerate(evid):
        sent_content = frozenset(sent.content)
        for k in sent_content:
            if stem(sent.tokens[k].norm) != key[0]:
                continue
            theirs = _run_after(sent, k, kind)
            if not theirs:
                continue
            between = tuple(
                t.norm
                for t in sent.tokens[k + 1 : tokens_of(sent, theirs[0].start, theirs[0].end)[0]]
                if t.norm in _PREPOSITIONS
            )
            if kind != "number" and (key[0], *between) != key:
                continue
            if kind == "number" and not all(_shape(v) == _shape(theirs[0]) for v in values):
                continue  # one slot holds one shape of number: "released 2012", not "2 million"
            if any(fact_in(v, theirs, frozenset(), frozenset()) for v in values) or any(
                fact_in(v, claim.facts, frozenset(), frozenset()) for v in theirs
            ):
                continue  # the claim names one of the sentence's values: the same list
            if subject and not subject & {stem(t.norm) for t in sent.tokens[:k]}:
                continue  # the relation of something else
            return n, theirs[0].start, theirs[-1].end
    return None


PLACE_WINDOW = 3
"""Words and facts on each side of a fact that say what it is a value of ("recognised by X",
"the second season aired in X")."""

PLACE_MARGIN = 1 / 3
PLACE_MORE = 2
"""How much more of a fact's neighbourhood (a share of it, and at least how many words or
facts) a sentence must state than the fact's own sentences for the fact to be read as put in
that sentence's slot: one word more is a paraphrase's reach ("version" for "song")."""


def _counted_word(a: Analysed, f: Fact) -> str | None:
    """The stem of the word right after a number: what it counts ("five *mills*")."""
    after = [t for t in a.tokens if t.start >= f.end]
    return stem(after[0].norm) if after else None


def same_sort(a: Fact, in_a: Analysed, b: Fact, in_b: Analysed) -> bool:
    """Whether two facts could fill one slot: two years, two dates, two measures of one unit,
    two counts of one thing."""
    if a.kind != b.kind:
        return False
    if a.kind == "number":
        if year(a) != year(b) or a.unit != b.unit:
            return False
        if not year(a) and a.unit is None:
            return _counted_word(in_a, a) == _counted_word(in_b, b)
    return True


@functools.lru_cache(maxsize=16384)
def _lemma(word: str) -> str:
    """A word's lemma, a verb's first ("wrote" and "written": write), else its stem."""
    found = lemmas(word)
    for pos in ("VERB", "NOUN", "ADJ"):
        if found.get(pos):
            return stem(found[pos][0])
    return stem(word)


def _framed_rival(fact: Fact, claim: Analysed, sent: Analysed) -> Fact | None:
    """The sentence's value after the same two words as ``fact`` in the claim, of its kind and
    unit, that the claim leaves out: the words (a content word or a name among them) name one
    slot ("in Universe 6" where the sentence says "In Universe 7, ..."), wherever the claim puts
    the phrase. Not after a hedge ("at least 16" may well be what "at least 20" says)."""
    own = tokens_of(claim, fact.start, fact.end)
    if not own:
        return None
    if fact.kind == "name" and (kind := kind_named(claim.text, fact.start, fact.end)):
        # a name before the noun it names one of ("the Enterprise tier") has its slot in the
        # sentence's name of that noun ("the Basic and Standard tiers")
        for f in sent.facts:
            if (
                f.kind == "name"
                and not fact_in(f, claim.facts, claim.norms, claim.stems)
                and kind_named(sent.text, f.start, f.end) == kind
            ):
                return f
    if own[0] < 2 or _approximate(claim, own[0]):
        return None
    named = {
        i
        for f in claim.facts
        if f.kind in ("name", "title")
        for i in tokens_of(claim, f.start, f.end)
    }
    if not ({own[0] - 2, own[0] - 1} & (set(claim.content) | named)):
        return None  # "in the": two function words name no slot; "on July" 10 is a date
    frame = [t.norm for t in claim.tokens[own[0] - 2 : own[0]]]
    for f in sent.facts:
        if f.kind != fact.kind or year(f) != year(fact) or f.unit != fact.unit:
            continue
        at = tokens_of(sent, f.start, f.end)
        if (
            at
            and at[0] >= 2
            and [t.norm for t in sent.tokens[at[0] - 2 : at[0]]] == frame
            and not fact_in(f, claim.facts, claim.norms, claim.stems)
            and not (f.kind == "name" and _describes(claim, own[-1] + 1, sent, at[-1] + 1))
        ):
            return f
    return None


_POINTS_BACK = re.compile(
    r"\b(?:of|from|in|for|on|at|by|to)\s+(?:that|this|these|those)\b(?!\s+(?:is|was)\b)"
    r"|^\s*(?:It|They|This|These|That|Those)\b"
    r"|^\s*(?:(?:Each|Either|Neither)\s+one|(?:Each|Either|Neither|Both|One|All)\s+of\s+"
    r"(?:them|these|those))\b"
)
"""A sentence pointing back to what came before ("... of *that revenue*", "*It* reached number
3", "*Each one* is half of last year's bill")."""


def misplaced(
    fact: Fact,
    claim: Analysed,
    evid: Sequence[Analysed],
    best: int,
    beyond: Sequence[Analysed] = (),
) -> tuple[int, Fact] | None:
    """The claim's fact put in the slot of another fact the sources state, if it is.

    ``fact``, a number or a date, is stated in the sources, but not in the claim's evidence
    sentence ``evid[best]``, which states another value of its sort that the claim leaves out.
    What a value is a value of is said by the words next to it: when the evidence sentence
    states clearly more of them (:data:`PLACE_WINDOW` words and facts each side, by lemma) than
    any sentence stating the value, the claim has moved the value from where the sources put it
    ("its second season reached viewers in 2009" where the first season aired in 2009 and the
    second in 2011; "the bridge carries 2 tracks on 9 arches" where its sister viaduct has the
    9). A value joined from another sentence keeps its own words there ("..., after the United
    States took over in 1904") and is not moved. A name's sort (a person, a place, a firm) is
    unknown here, so a name is weighed only against the sentence's name after the same two words
    (:func:`_framed_rival`: "issued at Rashid" where the sentence says "issued at Memphis" and
    another says the stone was found at Rashid), and moved only when, as a value, its neighbours
    are the evidence sentence's ("crosses the River Tarn on nine arches" is not moved into "links
    the River Sallow ..." when another sentence carries the canal over the Tarn on nine arches).
    ``beyond``: sentences of the passages the claim was retrieved against, other than ``evid``,
    that state the value; they are weighed as those of ``evid`` are (a retriever's sentences
    for the claim may leave out the one the value was taken from, "wait up to 30 seconds" of
    a request's queue where "its minimum is 30 seconds" is said of a connection's lifetime).
    Returns the evidence sentence's index and its own value.
    """
    if fact.kind not in ("number", "month", "name") or _shape(fact)[1]:
        return None  # an ordinal says which, not how many
    sent = evid[best]
    framed = _framed_rival(fact, claim, sent)
    if framed is not None and fact.kind != "name":
        return best, framed
    if fact.kind == "name":
        # a name's sort (a person, a place, a firm) is told only by the words framing it
        rivals = [] if framed is None else [framed]
    else:
        rivals = [
            f
            for f in sent.facts
            if same_sort(fact, claim, f, sent)
            and not fact_in(f, claim.facts, claim.norms, claim.stems)
        ]
    if not rivals:
        return None
    homes = [
        e for k, e in enumerate(evid) if k != best and fact_in(fact, e.facts, e.norms, e.stems)
    ]
    homes += [e for e in beyond if fact_in(fact, e.facts, e.norms, e.stems)]
    if not homes:
        return None  # stated nowhere the claim was retrieved against: nothing to weigh
    if any(_POINTS_BACK.search(e.text) for e in homes):
        # a sentence stating the value of what the one before it said ("Brightwater
        # contributed £95 million of that revenue"): its own words are not all its neighbours
        return None
    # the fact's neighbours: content words and other facts, nearest first, on each side
    own = set(tokens_of(claim, fact.start, fact.end))
    if not own:
        return None
    fact_at = {}
    for f in claim.facts:
        for i in tokens_of(claim, f.start, f.end):
            fact_at[i] = f
    # an item is a word's lemma, or the facts of one value or one name ("James A. Bland")
    items: list[tuple[int, str | list[Fact]]] = []
    for i in sorted(set(claim.content) | set(fact_at)):
        if i in own:
            continue
        f = fact_at.get(i)
        last = items[-1][1] if items else None
        if (
            f is not None
            and isinstance(last, list)
            and (f is last[-1] or one_name(claim, last[-1], f))
        ):
            if f is not last[-1]:
                last.append(f)
            continue
        items.append((i, [f] if f is not None else _lemma(claim.tokens[i].norm)))
    before = [(i, it) for i, it in items if i < min(own)][-PLACE_WINDOW:]
    after = [(i, it) for i, it in items if i > max(own)][:PLACE_WINDOW]
    near = [it for _, it in before + after]
    if len(near) < 2:
        return None
    # a fact right beside the value is part of it ("February 1861", "4 June"), no neighbour
    beside = [
        isinstance(it, list) and i in (min(own) - 1, max(own) + 1) for i, it in before + after
    ]

    def states(e: Analysed) -> list[bool]:
        lemmas = {_lemma(t.norm) for t in e.tokens}
        return [
            any(fact_in(f, e.facts, e.norms, e.stems) for f in it)
            if isinstance(it, list)
            else it in lemmas
            for it in near
        ]

    here = states(sent)
    there = [states(e) for e in homes]
    if any(
        any(h and not s and not b for h, s, b in zip(t, here, beside, strict=True)) for t in there
    ):
        # a value joined from its sentence comes with a neighbour from there that the evidence
        # sentence lacks ("cut the song for Time Well Wasted in 2005", held against the
        # re-recording's sentence and its other year); one put in from a sentence about
        # something else comes alone
        return None
    more = sum(here) - max(sum(t) for t in there)
    if more < PLACE_MORE or more / len(near) < PLACE_MARGIN - 1e-9:
        return None
    return best, rivals[0]


def one_name(a: Analysed, prev: Fact, fact: Fact) -> bool:
    """Whether two name facts are words of one name ("James A. Bland")."""
    if prev.kind != "name" or fact.kind != "name":
        return False
    return not a.text[prev.end : fact.start].strip()


def ordinal(fact: Fact) -> bool:
    """Whether ``fact`` is a rank ("fourth", "3rd"): it says which, not how many."""
    return _shape(fact)[1]
