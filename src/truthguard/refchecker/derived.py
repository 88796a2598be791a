"""Numbers an answer works out itself: a count of what it lists, a span between two dates, the
things it has named counted again ("the two").

Chat models answer "in two places: the Fifth and the Fourteenth Amendment" or "on 6 August
1945, and on Nagasaki three days later, on 9 August" where the sources give the two amendments
and the two dates but never the "two" or the "three". Such a number is supported by what
stands beside it, and only when it agrees: "three places" before two listed items, or "four
days later" between the 6th and the 9th, stays a number no source states.

* :func:`enumerated`: a cardinal from 2 to 12 followed, in the same sentence, by a list of
  exactly that many items ("two of its members, A and B, ...", "three kinds: X, Y, or Z");
* :func:`anaphoric`: "the two" (or "these three") standing for things the answer has named, as
  a noun phrase of its own ("the two then agree", "sits between the two"), not a count of a noun
  that follows ("the two sisters");
* :func:`per_count`: an amount that is a rate times the claim's count of what the rate is
  charged per ("£12 per dog per night" and "your two dogs": "£24 a night");
* :func:`per_period`: an amount charged for one period that is a rate for another counted over
  it ("£30 a month", "£360 a year");
* :func:`date_span`: a number of days, weeks, months or years (the unit the number's fact
  carries) that two dates stated in the claim or its evidence sentence are apart ("about five
  months after", "12 years, from 1990 to 2002"), or a date the claim states and one stated
  anywhere in the sources ("finished in 1677, eleven years after the fire"; "after" and
  "before", "later" and "earlier" must put the two in that order); "about" and its kin (the words
  :data:`~truthguard.refchecker._alignment.APPROX` reads as a loose value) allow rounding.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import re
from collections.abc import Collection, Iterator, Mapping, Sequence

import numpy as np

from truthguard.refchecker._alignment import APPROX, MONEY, year
from truthguard.refchecker._lemmas import lemmas
from truthguard.refchecker._numbers import CLOCK, DURATION_DAYS, MONTHS, SERIES, unit_of
from truthguard.refchecker._tokens import Fact, stem
from truthguard.refchecker.lexical import STOPWORDS

__all__ = [
    "REST_OF",
    "WEEKDAYS",
    "anaphoric",
    "asked_period",
    "clock_span",
    "counts_of",
    "date_after",
    "date_span",
    "day_condition",
    "day_of_date",
    "day_spans",
    "derived",
    "enumerated",
    "from_case",
    "measure_of",
    "month_after",
    "named_days",
    "per_count",
    "per_period",
    "per_period_value",
    "per_what",
    "period_span",
    "shown_working",
    "spans_period",
    "summed_total",
    "timed",
    "weekday_after",
    "workable",
    "worked",
]

_ORDINAL = re.compile(r"(?:st|nd|rd|th)$|^(?:first|second|third)$", re.IGNORECASE)
_LIST_START = re.compile(r"^[^:,;.]{0,40}?(?:[:,]|\bboth\b)\s*")
_IN_BRACKETS = re.compile(r"\([^()]*\)")
_DAYS = {u: DURATION_DAYS[u] for u in ("day", "week", "month", "year", "decades")}
"""The units a span between two dates is counted in (a date has no hours)."""
_WORD_BEFORE = re.compile(r"(\w+)\W*$")


def derived(
    fact: Fact,
    text: str,
    facts: Sequence[Fact],
    evidence: Sequence[Fact] = (),
    sources: Sequence[Fact] = (),
    context: str | None = None,
    said: str = "",
    working: Sequence[Fact] | None = None,
) -> bool:
    """Whether the number ``fact`` of the claim ``text`` (with its ``facts``) is a count of
    items the claim lists or a span between dates the claim or its evidence sentence states,
    or between a date the claim states and one stated anywhere in the ``sources``, or worked
    out (:func:`worked`) from the claim's numbers and those of its evidence sentence ``said``.
    A claim cut from the answer sentence ``context`` counts the items that sentence lists: "two
    advantages: they hold more cargo" of "... and they are easier to carry". Arithmetic works
    from ``working`` (default: ``facts``), the claim's values a step may start from."""
    if fact.kind != "number" or _ORDINAL.search(fact.text):
        return False
    return (
        enumerated(fact, text)
        or anaphoric(fact, text)
        or _enumerated_in(fact, text, context)
        or date_span(fact, text, facts, evidence, sources)
        or clock_span(fact, text, facts, evidence)
        or worked(fact, text, facts if working is None else working, evidence, said)
        # (a share no source sets against another: one they do is theirs to state, "a damage
        # waiver at 15% adds £18" of £120 where the sources charge 12%)
        or (fact.unit == "%" and share_shown(fact, facts))
    )


_WORKING = re.compile(
    r"\b(?:so|thus|hence|therefore|total(?:ling|s)?|in\s+all|altogether|leaving|leaves|"
    r"comes?\s+to|came\s+to|works?\s+out|adds?\s+up|which\s+makes|making|i\.e\.|that\s+is|"
    r"remaining|remainder|combined|overall|together|which\s+is|that's|another|off)\b|[=+×]",
    re.IGNORECASE,
)
"""Words that say the answer works a number out ("so €250 at most", "leaving 131", "= 12")."""
REST_OF = re.compile(
    r"\bthe\s+(?:other|remaining|rest\s+of\s+the|remainder\s+of\s+the)\s+[$£€¥]?$", re.IGNORECASE
)
"""Words right before a value that make it what is left of a whole once a part is taken ("the
first 15 minutes ..., and the other 10 minutes" of 25; "the remaining €2,880")."""
_SUMMED_AFTER = re.compile(
    r"^[^,.;:()]{0,20}?\b(?:altogether|in\s+total|in\s+all|all\s+told|combined)\b", re.IGNORECASE
)
"""A total said after its value ("£90 a year altogether")."""
_TOTAL_BEFORE = re.compile(
    r"\b(?:in\s+total|altogether|in\s+all|a\s+total\s+of|totals?|totalling)\s+[$£€¥]?$",
    re.IGNORECASE,
)
"""A total said before its value ("in total £90", "a total of 12")."""


def summed_total(fact: Fact, text: str, values: Sequence[Fact]) -> bool:
    """Whether the claim ``text`` says the value ``fact`` is a total ("£90 a year altogether",
    "a total of £90") and it is the sum of two or three of ``values`` of its unit (£65 and
    £25): what a total is, with no other step that chance could make. A bare number ("a
    total of 14 episodes") has no unit to tie its parts to it, and is never read so."""
    if not (_SUMMED_AFTER.match(text[fact.end :]) or _TOTAL_BEFORE.search(text[: fact.start])):
        return False
    if fact.kind != "number" or fact.unit is None or not isinstance(fact.value, (int, float)):
        return False
    if year(fact):
        return False
    parts = sorted(
        {
            float(v.value)
            for v in values
            if v is not fact
            and v.kind == "number"
            and v.unit == fact.unit
            and isinstance(v.value, (int, float))
            and not year(v)
            and not _ORDINAL.search(v.text)
        }
    )
    target = float(fact.value)
    return any(
        _same(target, sum(combo)) for n in (2, 3) for combo in itertools.combinations(parts, n)
    )


_BRACKETED = re.compile(r"\(\s*[$£€¥]?\s*$")
"""A value in brackets right after what it works out ("10% of the balance (£22,000)")."""
_BROKEN_DOWN = re.compile(
    r"^\s*(?:[^\W\d]+\s+){0,3}\(|^\s*[,:\u2013\u2014]\s*[^.;,]{0,40}?"
    r"\b(?:each|per|a\s+head|apiece|for\s+every)\b"
    r"|^\s*(?:[^\W\d]+\s+)?[^\W\d]*\s*[,:\u2013\u2014]\s*(?:that\s+is|that's|i\.e\.|which\s+is)\s"
)
"""A value's breakdown after it: in brackets after at most three words ("17 withdrew (9 ...",
"90 minutes a charge (110 minus 20)"), after a comma, a colon or a dash as a rate ("£100, £10
for each of the ten adults"), or as what it is ("about 90 minutes, that is its 110 minutes less
the 20 mopping takes")."""
_HALF = re.compile(r"\bhalf\b", re.IGNORECASE)
_TWICE = re.compile(r"\b(?:twice|double)\b", re.IGNORECASE)
_EQUATION = re.compile(r"\d[\d,.]*\s*%?\s+(?:is|are|equals|gives|makes)\s+[$£€¥]?\s*$")
"""A value an equation ends with ("25% of $4,200 is $1,050")."""


_CLAUSE_CUT = re.compile(r"[,;:.!?()\u2013\u2014]")
"""What ends the clause before a value."""


def _steps(a: float, b: float, a_share: bool, b_share: bool) -> list[float]:
    """What one step of working makes of ``a`` and ``b``: their sum, difference, product and
    quotients, and a share of one the other gives as a percentage (``*_share``), or the rest."""
    out = [a + b, abs(a - b), a * b, a / b if b else 0.0, b / a if a else 0.0]
    for share, value, whole in ((a_share, a, b), (b_share, b, a)):
        if share:
            p = value / 100
            out += [whole * p, whole * (1 - p)]
    return out


def _from_own(target: float, fact: Fact, facts: Sequence[Fact]) -> bool:
    """Whether the amount ``target`` is worked out, in one step or two, from the other numbers
    of its own claim (``facts``, years left out), a count or a percentage among them: "six
    tickets at £40, with 25% off, cost £180"; "tea at £3 a day and cake at £4 a day cost £35
    over five days". A claim that states every number it works from shows its working, and a changed
    amount would have to fall on one of the few values its own numbers make; amounts alone
    ("£100, £200 and £300") are a list, not working."""
    own = [
        (float(f.value), f.unit == "%", f.unit in MONEY)
        for f in facts
        if f is not fact
        and f.kind == "number"
        and isinstance(f.value, (int, float))
        and f.value
        and not year(f)
    ]
    for i, (a, sa, ma) in enumerate(own):
        for j in range(i + 1, len(own)):
            b, sb, mb = own[j]
            for r in _steps(a, b, sa, sb):
                if not (ma and mb) and _same(target, r):
                    return True
                for k, (c, sc, mc) in enumerate(own):
                    if (
                        k not in (i, j)
                        and r
                        and not (ma and mb and mc)
                        and any(_same(target, x) for x in _steps(r, c, False, sc))
                    ):
                        return True
    return False


def share_shown(fact: Fact, facts: Sequence[Fact]) -> bool:
    """Whether the percentage ``fact`` is the share one of two other values of its claim
    (``facts``, of one unit) makes of the other: "£14.1m of the £17.6m, about 80%"; "$60, a
    quarter of $240". The claim states the part and the whole, so the share follows from
    them; one given as a whole number or in words may be rounded (80%, "four-fifths" of 80.1),
    one with decimals is as exact as its figures."""
    if not isinstance(fact.value, (int, float)):
        return False
    rounded = "." not in fact.text
    values = [
        f
        for f in facts
        if f is not fact
        and f.kind == "number"
        and f.unit != "%"
        and not year(f)
        and isinstance(f.value, (int, float))
        and f.value > 0
    ]
    for part in values:
        for whole in values:
            if part.unit != whole.unit or not part.value < whole.value:  # type: ignore[operator]
                continue
            share = 100 * float(part.value) / float(whole.value)  # type: ignore[arg-type]
            if (rounded and abs(share - fact.value) <= 0.5) or _same(share, float(fact.value)):
                return True
    return False


def worked(
    fact: Fact, text: str, facts: Sequence[Fact], evidence: Sequence[Fact] = (), said: str = ""
) -> bool:
    """Whether the number ``fact`` is worked out, in one step, from two other numbers of the
    claim or of its evidence sentence: their sum, difference, product or quotient, or a share
    of one the other gives as a percentage (or what is left of it), where the claim says it
    works the number out (:data:`_WORKING`: "so", "in total", "leaving", "comes to", "="), puts
    it in brackets after what it works out ("10% of the balance (£22,000)"), ends an equation
    with it ("25% of $4,200 is $1,050"), or breaks it down right after it, in brackets ("17
    withdrew (9 in the first period and 8 in the second)") or as a rate ("£100, £10 for each of
    the ten adults"). "Up to €50 a day for five days, so €250 at most"; "15% of the remaining
    €2,880, i.e. €432". A time of day may be another plus or minus a stretch of time ("down at
    10am, back within 4 hours, so by 2pm"), and any value half or twice another of its unit
    where the claim or its evidence sentence ``said`` says "half" or "twice" ("£270, half of
    the £540 fee"; "you repay £4,000" of "the £8,000 allowance ..., and half if you leave
    within 24 months")."""
    if fact.kind != "number" or not isinstance(fact.value, (int, float)) or year(fact):
        return False  # a year is a date, never worked out (spans are :func:`date_span`'s)
    if fact.unit in MONEY and _from_own(float(fact.value), fact, facts):
        return True
    # the words before the value: forty characters, or its whole clause where that is longer
    # ("so the whole family of four staying that week would pay £160")
    cuts = [m.end() for m in _CLAUSE_CUT.finditer(text, 0, fact.start)]
    before = text[min(max(0, fact.start - 40), cuts[-1] if cuts else 0) : fact.start]
    after = text[fact.end : fact.end + 80]
    broken_down = _BROKEN_DOWN.match(after) is not None
    values = [f for f in (*facts, *evidence) if f.kind == "number" and f is not fact and f.value]
    target = float(fact.value)
    # half or twice another value of its unit, where the claim or its evidence sentence says
    # so ("£270, half of the £540 fee"; not the "half" of a value, "half a percentage point")
    for times, word in ((0.5, _HALF), (2.0, _TWICE)):
        says = [
            m
            for m in word.finditer(said)
            if not any(f.start <= m.start() < f.end for f in evidence)
        ]
        if (word.search(text) or says) and any(
            _same(target, float(v.value) * times)  # type: ignore[arg-type]
            for v in values
            if v.unit == fact.unit
        ):
            return True
    if not (
        _WORKING.search(before)
        or REST_OF.search(before)
        or broken_down
        or _BRACKETED.search(before)
        or _EQUATION.search(before)
        or _SUMMED_AFTER.match(after)
    ):
        return False
    if fact.unit == CLOCK:
        # a time of day a stretch after or before another ("down at 10am, back within 4
        # hours, so by 2pm")
        return timed(fact, values, values)
    for i, a in enumerate(values):
        for b in values[i + 1 :]:
            results = _steps(float(a.value), float(b.value), a.unit == "%", b.unit == "%")
            if any(_same(target, r) for r in results):
                return True
    # a charge worked out as a rate times two counts ("25p a day for three books ten days
    # late, so £7.50")
    if fact.unit in MONEY:
        rates = [f for f in values if f.unit in MONEY]
        counts = [f for f in values if f.unit not in MONEY and f.unit != "%"]
        for rate in rates:
            for i, a in enumerate(counts):
                for b in counts[i + 1 :]:
                    if _same(target, float(rate.value) * float(a.value) * float(b.value)):  # type: ignore[arg-type]
                        return True
    return False


def per_count(
    fact: Fact, text: str, facts: Sequence[Fact], said: Sequence[tuple[str, Sequence[Fact]]]
) -> bool:
    """Whether the amount ``fact`` is a rate times a count the claim ``text`` gives of what the
    rate is charged per: "£12 per dog per night" (stated in one of ``said``, pairs of a text and
    its facts) and "your two dogs" make "£24 a night" (:func:`per_what`, :func:`counts_of`,
    :func:`_per_results`). The noun ties the two numbers, so no word need say that the answer
    works the amount out."""
    if fact.unit not in MONEY or not isinstance(fact.value, (int, float)):
        return False
    counts = [
        (float(f.value), counts_of(f, text), True)
        for f in facts
        if f.kind == "number"
        and f is not fact
        and isinstance(f.value, (int, float))
        and measure_of(f) != "money"
        and not year(f)
    ]
    if not counts:
        return False
    rates = [(float(r.value), "money", per_what(r, where)) for where, r in _rates(fact, said)]  # type: ignore[arg-type]
    made = _per_results([r for r in rates if r[2]], counts)
    return any(_same(float(fact.value), value) for value, _ in made)


def _rates(fact: Fact, said: Sequence[tuple[str, Sequence[Fact]]]) -> Iterator[tuple[str, Fact]]:
    """The amounts of money ``said`` states other than ``fact``, each with its text."""
    for where, values in said:
        for rate in values:
            if rate is not fact and rate.unit in MONEY and isinstance(rate.value, (int, float)):
                yield where, rate


_PERIOD = re.compile(
    r"^\s*(?:(?:a|an|per|each|every|(?:over|for|in)\s+(?:a|an|one|the))\s+|/\s*)"
    r"(day|week|fortnight|month|quarter|year)\b"
    r"|^\s*(daily|weekly|fortnightly|monthly|quarterly|yearly|annually)\b",
    re.IGNORECASE,
)
"""The period an amount is charged for, after it ("£30 *a month*", "£520 *over a year*",
"£8 *daily*")."""
_ADVERBS = {
    "daily": "day",
    "weekly": "week",
    "fortnightly": "fortnight",
    "monthly": "month",
    "quarterly": "quarter",
    "yearly": "year",
    "annually": "year",
}
_WITHIN = {
    ("day", "week"): 7,
    ("day", "fortnight"): 14,
    ("week", "fortnight"): 2,
    ("month", "quarter"): 3,
    ("month", "year"): 12,
    ("quarter", "year"): 4,
    ("week", "year"): 52,
    ("fortnight", "year"): 26,
    ("day", "year"): 365,
}
"""How many of a shorter period a longer one holds, by the usual count (52 weeks, 365 days)."""


def _period(text: str, end: int) -> str | None:
    """The period an amount ending at ``end`` of ``text`` is charged for, or None."""
    at = period_span(text, end)
    if at is None:
        return None
    word = text[at[0] : at[1]].casefold()
    return _ADVERBS.get(word, word)


def period_span(text: str, end: int) -> tuple[int, int] | None:
    """The offsets in ``text`` of the word naming the period an amount ending at ``end`` is
    charged for ("*year*" of "£276 over a year", "*monthly*"), or None."""
    m = _PERIOD.match(text[end:])
    if m is None:
        return None
    group = 1 if m.group(1) else 2
    return end + m.start(group), end + m.end(group)


def per_period(
    fact: Fact, text: str, said: Sequence[tuple[str, Sequence[Fact]]], asked: str | None = None
) -> bool:
    """Whether the amount ``fact`` of the claim ``text``, charged for a period ("£360 a year"),
    is a rate for another period that one of ``said`` (pairs of a text and its facts) states
    ("£30 a month"), counted over the claim's period: twelve months to a year, seven days to a
    week, four quarters to a year, or the other way. The two periods tie the two amounts, so
    no word need say that the answer works the amount out. An amount the claim gives no period
    is for the period the question asks about (``asked``, see :func:`asked_period`)."""
    if fact.unit not in MONEY or not isinstance(fact.value, (int, float)):
        return False
    mine = _period(text, fact.end) or asked
    if mine is None:
        return False
    for where, rate in _rates(fact, said):
        theirs = _period(where, rate.end)
        if theirs is None or theirs == mine:
            continue
        if (k := _WITHIN.get((theirs, mine))) is not None:
            worked_out = float(rate.value) * k
        elif (k := _WITHIN.get((mine, theirs))) is not None:
            worked_out = float(rate.value) / k
        else:
            continue
        if _same(float(fact.value), worked_out):
            return True
    return False


def asked_period(question: str) -> str | None:
    """The one period a question asks an amount for ("what would *a year* of electricity cost
    us", "how much is it *per month*", "our *annual* bill"), or None where it names none or
    several."""
    found = {
        _ADVERBS.get(word, "year" if word == "annual" else word)
        for m in _ASKED_PERIOD.finditer(question)
        for word in [(m.group(1) or m.group(2)).casefold()]
    }
    return found.pop() if len(found) == 1 else None


def spans_period(fact: Fact, period: str | None) -> bool:
    """Whether ``fact`` is ``period`` counted in a shorter period's units ("365 days", "12
    months" of a year), by the usual count of :data:`_WITHIN`."""
    return (
        period is not None
        and isinstance(fact.value, (int, float))
        and _WITHIN.get((str(fact.unit), period)) == fact.value
    )


_ASKED_PERIOD = re.compile(
    r"\b(?:a|an|per|each|every|one)\s+("
    + "|".join(dict.fromkeys(_ADVERBS.values()))
    + r")\b|\b("
    + "|".join([*_ADVERBS, "annual"])
    + r")\b",
    re.IGNORECASE,
)
"""A period a question names for what it asks the cost of (the words of :data:`_PERIOD_AFTER`)."""


_MINUTES = {u: DURATION_DAYS[u] * 1440 for u in ("minute", "hour")}
"""Minutes in a stretch of these units (a time of day is worked out only in them)."""


_TIME_FACTORS = (7.0, 5.0, 12.0, 52.0, 24.0, 60.0)
"""Factors a stretch of the asker's becomes another by: days and working days in a week,
months and weeks in a year, hours in a day, minutes in an hour."""
_MONEY_FACTORS = (12.0, 52.0)
"""Factors an amount of the asker's becomes another by: a year's and a month's, a week's."""


def measure_of(f: Fact) -> str:
    """What ``f`` measures, for working: ``money``, ``%``, ``time`` (a stretch in any unit) or
    ``count`` (a bare number); any other unit is its own measure."""
    unit = f.unit
    if unit is None and "-" in f.text:
        unit = unit_of(f.text.rsplit("-", 1)[-1])  # "a five-week trip"
    if unit is None:
        return "count"
    if unit in MONEY:
        return "money"
    if unit in _DAYS or unit in ("hour", "minute"):
        return "time"
    return str(unit)


_PRODUCTS = {
    ("money", "count"): "money",
    ("money", "time"): "money",
    ("time", "count"): "time",
    ("count", "count"): "count",
}
_QUOTIENTS = {
    ("money", "money"): "count",
    ("money", "count"): "money",
    ("money", "time"): "money",
    ("time", "time"): "count",
    ("time", "count"): "time",
    ("count", "count"): "count",
}


_PLAIN = frozenset(("money", "time", "count"))
"""The measures :data:`_PRODUCTS` and :data:`_QUOTIENTS` pair; any other unit is its own."""


def _product_of(p: str, q: str) -> str | None:
    """What a product of measures ``p`` and ``q`` makes beyond :data:`_PRODUCTS`: an amount of
    another unit (miles, kWh) times a count or a stretch of time is of that unit ("10,000 miles
    a year" for 3 years), and money times it is money (24.5p per kWh for 2,900 kWh)."""
    if p in _PLAIN or p == "%":
        return "money" if p == "money" and q not in _PLAIN and q != "%" else None
    return p if q in ("count", "time") else None


def _quotient_of(p: str, q: str) -> str | None:
    """What a quotient of measures ``p`` by ``q`` makes beyond :data:`_QUOTIENTS`: two amounts
    of one other unit make a count ("300 GB" is three times "100 GB"), and an amount of it
    divided by a count is of that unit."""
    if p in _PLAIN or p == "%":
        return None
    return "count" if q == p else p if q == "count" else None


def _results(a: Fact, b: Fact) -> list[tuple[float, str]]:
    """What one step of working makes of ``a`` and ``b``, each with the measure it has: a sum
    or difference of one measure (stretches of one unit), a product or quotient of measures
    that make one ("£12 a day" for 5 days; £9,000 at £3.20 a share), a share of an amount the
    other gives as a percentage, or the rest of it."""
    return _combined(
        float(a.value),  # type: ignore[arg-type]
        measure_of(a),
        float(b.value),  # type: ignore[arg-type]
        measure_of(b),
        a.unit == b.unit,
    )


def _combined(x: float, ma: str, y: float, mb: str, one_unit: bool) -> list[tuple[float, str]]:
    """:func:`_results` of the values ``x`` and ``y`` of measures ``ma`` and ``mb``; stretches
    of time are added or taken away only in ``one_unit``."""
    out: list[tuple[float, str]] = []
    if ma == mb and ma != "%" and (ma != "time" or one_unit):
        out += [(x + y, ma), (abs(x - y), ma)]  # (miles and miles, kWh and kWh too)
    for (p, u), (q, v) in (((ma, x), (mb, y)), ((mb, y), (ma, x))):
        made = _PRODUCTS.get((p, q)) or _product_of(p, q)
        if made is not None:
            out.append((u * v, made))
        made = _QUOTIENTS.get((p, q)) or _quotient_of(p, q)
        if made is not None and v:
            out.append((u / v, made))
        if q == "%" and p != "%":
            out += [(u * v / 100, p), (u * (1 - v / 100), p)]
    return out


def _whole(value: float, result: float, measure: str) -> bool:
    """Whether ``value`` is the whole count ``result`` holds: so many whole shares, seats or
    items as an amount buys (£9,000 at £3.20 a share buys 2,812)."""
    return measure == "count" and value == int(value) and int(result) == value < result


def _numeric(f: Fact, dated: frozenset[int]) -> bool:
    return (
        f.kind == "number"
        and isinstance(f.value, (int, float))
        and bool(f.value)
        and not year(f)
        and f.unit != CLOCK
        and not _ORDINAL.search(f.text)
        and id(f) not in dated
    )


def workable(fact: Fact, facts: Sequence[Fact], text: str = "") -> bool:
    """Whether the number ``fact`` of ``text`` (with its ``facts``) may be worked out or worked
    from: not a year, a time of day, an ordinal, the day of a date or a number naming one of a
    series ("year 2", "Tier 1"), and not zero."""
    return _numeric(fact, _days_of_dates(facts)) and not SERIES.search(text[: fact.start])


def day_of_date(fact: Fact, facts: Sequence[Fact]) -> bool:
    """Whether the number ``fact`` is the day of a date among ``facts`` (one text's): a month
    right before or after it ("July 4", "4 July")."""
    return any(
        m.kind == "month" and (0 <= fact.start - m.end <= 2 or 0 <= m.start - fact.end <= 2)
        for m in facts
    )


def _days_of_dates(facts: Sequence[Fact]) -> frozenset[int]:
    """The numbers of ``facts`` (one text's) that are the day of a date ("12 September")."""
    return frozenset(id(f) for f in facts if f.kind == "number" and day_of_date(f, facts))


def from_case(
    fact: Fact,
    case: Sequence[Fact],
    claim: Sequence[Fact],
    pool: Sequence[Sequence[Fact]],
    unstated: Collection[tuple[int, int]] = (),
) -> bool:
    """Whether the number ``fact`` is worked out from the asker's own figures (``case``: the
    facts of a question about their own case), step by step: each step makes one value of two
    (:func:`_results`: a sum, difference, product, quotient or share whose measures make the
    result's, money from money, a count of days from weeks; a stretch of time may count what
    comes once in each of its units, "16 rentals left" of a 36-month lease 20 months in), or
    converts one of the asker's figures (five weeks, 35 days; £36,000 a year, £3,000 a month).
    The result of a step that makes one value of two may be taken at a percentage the asker,
    the sources or the claim give, as that share of it, less it or more it: "4 children" at
    "£48 a head" and "half price", £96; six at £48 "plus 10% service", £316.80. That is the one
    step whose first result nobody states; a conversion is never taken at a share in the same
    step.

    A step starts from the asker's figures or from a number the answer has worked out from
    them (the claim's own, ``claim`` being its facts, in any order, since a total may come
    before what it adds up, or one of its other claims': the last of ``pool``), and may take
    its other value from the sources (``pool``: the facts of each other text, the evidence and
    the answer's other claims last) or from the claim's values, less those at the ``unstated``
    spans (no source states them) until they are worked out themselves. So "9%
    of the £700 you earn over £2,200, about £63" of a £2,900 salary holds: £700 is £2,900 less
    £2,200, and £63 is 9% of £700; a count a quotient makes is its whole part (£9,000 buys
    2,812 shares at £3.20). No word of working is needed: a figure the asker gave is the
    answer's to work from, and a wrong result would have to fall on one of the few values of
    its measure that one step makes. A percentage is never worked out (it is the sources' to
    state), only taken as a share; a time of day, a year and the day of a date are neither
    worked out nor worked from."""
    dated = _days_of_dates(case) | _days_of_dates(claim)
    for facts in pool:
        dated |= _days_of_dates(facts)
    target_measure = measure_of(fact)
    if not _numeric(fact, dated) or target_measure == "%":
        return False
    own = [f for f in case if _numeric(f, dated)]
    if not own:
        return False
    # a value the claim states that no source does is worked from only once worked out itself
    # (two such values of a claim cannot vouch for each other: "£823.65 ... £710.50, ...
    # £113.15")
    others = [
        f
        for facts in (*pool, claim)
        for f in facts
        if _numeric(f, dated)
        and f is not fact
        and not (facts is claim and (f.start, f.end) in unstated)
    ]

    # what a step's result may be taken at: a percentage the asker, the sources or the claim
    # give, as that share, less it or more it ("at half price", "20% off", "plus 10% service")
    shares = [
        k
        for facts in (case, *pool, claim)
        for f in facts
        if f is not fact and _numeric(f, dated) and measure_of(f) == "%" and f.value < 100
        for v in (float(f.value),)  # type: ignore[arg-type]
        for k in (v / 100, 1 - v / 100, 1 + v / 100)
    ]

    def one_step(start: Sequence[Fact], value: float, measure: str) -> bool:
        """A step, or the result of one that makes a value of two taken at a share."""
        for a in start:
            x, ma = float(a.value), measure_of(a)  # type: ignore[arg-type]
            factors = _TIME_FACTORS if ma == "time" else _MONEY_FACTORS if ma == "money" else ()
            if (measure == ma or (ma, measure) == ("time", "count")) and any(
                _same(value, x * k) or _same(value, x / k) for k in factors
            ):
                return True
            for b in (*start, *others):
                if b is a:
                    continue
                shared = shares if measure_of(b) != "%" else ()
                if any(
                    _counts_as(m, measure)
                    and (
                        _same(value, r)
                        or _whole(value, r, m)
                        or any(_same(value, r * k) for k in shared)
                    )
                    for r, m in _results(a, b)
                ):
                    return True
        return False

    # the numbers the answer works out from the case: its other claims' first, then the
    # claim's own, in the order the claim works them; a total may come before the values it
    # adds up ("about £897: ... £710.50, and ... £186.15"), so a second round takes them in
    worked_out = list(own)
    steps = [*(pool[-1] if pool else ()), *(f for f in claim if f is not fact)]
    for _ in range(2):
        for f in steps:
            if not _numeric(f, dated) or any(f is w for w in worked_out) or measure_of(f) == "%":
                continue
            if any(restates(f, w) for w in worked_out) or one_step(
                worked_out,
                float(f.value),  # type: ignore[arg-type]
                measure_of(f),
            ):
                worked_out.append(f)
    # (a stretch of the asker's in another unit is theirs: "6 minutes behind", "360 seconds")
    return any(restates(fact, w) for w in worked_out) or one_step(
        worked_out,
        float(fact.value),  # type: ignore[arg-type]
        target_measure,
    )


def restates(a: Fact, b: Fact) -> bool:
    """Whether ``a`` and ``b`` are one stretch of time in two units ("6 minutes" and "360
    seconds"; "a minute and a half" and "90,000 ms"): an answer that gives both restates one,
    and works nothing out."""
    if a.unit == b.unit or a.unit not in DURATION_DAYS or b.unit not in DURATION_DAYS:
        return False
    if not isinstance(a.value, (int, float)) or not isinstance(b.value, (int, float)):
        return False
    x, y = a.value * DURATION_DAYS[a.unit], b.value * DURATION_DAYS[b.unit]
    return x > 0 and abs(x - y) <= 0.005 * max(x, y)


def _counts_as(result: str, target: str) -> bool:
    """Whether a step's result of measure ``result`` may be a value of measure ``target`` in
    :func:`from_case`: the same measure, or a stretch of time counting what comes once in each
    of its units ("a 36-month lease" 20 months in: "the 16 rentals left")."""
    return result == target or (result, target) == ("time", "count")


def _fits(result: str, target: str) -> bool:
    """Whether a result of measure ``result`` may be a value of measure ``target``: the same
    measure, or a bare number restating an amount of any unit but money, a share or time ("the
    4,500 miles over your 30,000 total")."""
    if target.startswith(_PER_PERIOD):
        return result in (target, target[len(_PER_PERIOD) :])  # a rate worked from an amount
    return result == target or (
        target == "count" and result not in ("money", "%", "time") and _PER_PERIOD not in result
    )


def shown_working(
    targets: Sequence[Fact],
    known: Sequence[Fact],
    rates: Collection[int] = (),
    per: Sequence[tuple[float, str, tuple[tuple[frozenset[str], float, bool], ...]]] = (),
    counted: Mapping[int, tuple[frozenset[str], bool]] | None = None,
    shares: Mapping[int, Sequence[float]] | None = None,
    bases: Mapping[int, Sequence[tuple[float, str]]] | None = None,
) -> set[int]:
    """The ``targets`` (numbers of an answer no source states) the answer works out from the
    values it shows: ``known`` holds the numbers of the answer the sources state where it
    states them and the asker's own figures. A target is worked out in up to three steps
    (:func:`_results`: a sum, difference, product, quotient or share whose measures make the
    target's): from two known values, from one of those results and a known value, or as the
    sum or difference of two such results ("a quarter of 58 plus three quarters of 68, 65.5");
    a target worked out joins the known values, so one result may build on another ("£87.50
    ... £22.50, about £110"), and a target that is not worked out is never worked from, so two
    unstated values cannot vouch for each other.

    The operands are the answer's own, each held in its own slot by the grounding: a wrong
    operand is caught where the answer states it, and a wrong result does not come out of the
    right operands. A value the answer works from that it does not show (a rate of the sources
    it leaves out) is no operand here. A value the answer or the asker gives for a period
    (``rates``, ids: "10,000 miles a year", "the £2,200 monthly threshold") is a rate: it
    adds only to rates, and times a count or a stretch of time it makes an amount (3 years at
    10,000 miles a year, 30,000 miles), so an amount is never taken from a rate ("34,500 miles
    less the 10,000-mile annual allowance"). A rate the sources give per something (``per``:
    each a value, its measure and what it is given per, :func:`per_what`) is no operand either,
    but times a known value that counts what it is given per (``counted``: by id, the keys
    :func:`counts_of` reads and whether the answer states it) it makes a value the answer may
    state (:func:`_per_results`), though not one worked with further until the answer does:
    "£22 per extra day" and the answer's "3 days beyond your 10" make its "£66". A target may
    also be a known value of its measure times one of its own ``shares`` (by id: the
    multipliers the percentages of its claim's evidence sentence make, "40% in October" for
    "£7,360 in October" of £18,400), or one of its own ``bases`` (by id: values the sources
    state beside its evidence sentence, in its passage, "The annual fee is £18,400") times one
    of its shares. Ids (``id``) of the targets worked out are returned."""

    def measured(f: Fact) -> tuple[float, str]:
        m = measure_of(f)
        return float(f.value), (_PER_PERIOD + m if id(f) in rates and m != "%" else m)  # type: ignore[arg-type]

    counted = counted or {}
    shares = shares or {}
    bases = bases or {}
    wanted = [t for t in targets if measure_of(t) != "%"]
    held = list(known)
    have = [measured(f) for f in known]
    done: set[int] = set()
    while wanted:
        counts = [(float(f.value), *counted[id(f)]) for f in held if id(f) in counted]  # type: ignore[arg-type]
        made = _per_results(per, counts)
        one = [
            r
            for i, (x, mx) in enumerate(have)
            for y, my in have[i + 1 :]
            for r in _rated(x, mx, y, my)
        ]
        found = [
            t
            for t in wanted
            if _one_step(*measured(t), [*one, *made])
            or _taken_at(t, [*have, *bases.get(id(t), ())], shares.get(id(t), ()))
        ]
        if not found:
            reached = _reachable(one, have)
            found = [t for t in wanted if _reached(*measured(t), reached)]
        if not found:
            break
        for t in found:
            done.add(id(t))
            held.append(t)
            have.append(measured(t))
        wanted = [t for t in wanted if id(t) not in done]
    return done


def _taken_at(target: Fact, have: Sequence[tuple[float, str]], shares: Sequence[float]) -> bool:
    """Whether ``target`` is a known value of its measure times one of ``shares``."""
    m, value = measure_of(target), float(target.value)  # type: ignore[arg-type]
    return any(_same(value, x * p) for x, mx in have if mx == m for p in shares)


def _reachable(
    one: Sequence[tuple[float, str]], have: Sequence[tuple[float, str]]
) -> dict[str, np.ndarray]:
    """The values two or three steps make, by measure: a step from a one-step result ``one``
    and a value of ``have``, and the sums and differences of two one-step results of a
    measure."""
    out: dict[str, list[float]] = {}
    for r, m in one:
        if not r or m == "%":
            continue
        for y, my in have:
            for x, k in _rated(r, m, y, my):
                out.setdefault(k, []).append(x)
    by_measure: dict[str, list[float]] = {}
    for r, m in one:
        if m != "%":
            by_measure.setdefault(m, []).append(r)
    for m, rs in by_measure.items():
        v = np.array(rs)
        i, j = np.triu_indices(len(v), 1)
        out.setdefault(m, []).extend([*(v[i] + v[j]), *np.abs(v[i] - v[j])])
    return {m: np.array(v) for m, v in out.items()}


def _one_step(value: float, measure: str, one: Sequence[tuple[float, str]]) -> bool:
    """Whether ``value`` of ``measure`` is one of the one-step results ``one`` (or the whole
    count one holds)."""
    return any(_fits(m, measure) and (_same(value, r) or _whole(value, r, m)) for r, m in one)


def _reached(value: float, measure: str, reached: dict[str, np.ndarray]) -> bool:
    """Whether ``value`` of ``measure`` is one of the values more steps make (``reached``, by
    measure; as close as :func:`_same` asks)."""
    return any(
        bool(np.any((v != 0) & (np.abs(v - value) <= np.maximum(0.005, 0.001 * np.abs(v)))))
        for m, v in reached.items()
        if _fits(m, measure)
    )


_PER_PERIOD = "per period: "
"""The prefix of a rate's measure (an amount given for a period)."""


def _rated(x: float, ma: str, y: float, mb: str) -> list[tuple[float, str]]:
    """:func:`_combined` where either value may be a rate (its measure prefixed
    :data:`_PER_PERIOD`): rates of one measure add up and divide into a count; a rate times a
    count is a rate again (two permits at £65 a year) or an amount, times a stretch of time an
    amount; a share of a rate is a rate. Stretches of time are added only where both units are
    known (:func:`_results`), never here."""
    ra, rb = ma.startswith(_PER_PERIOD), mb.startswith(_PER_PERIOD)
    if not (ra or rb):
        return _combined(x, ma, y, mb, False)
    if ra and rb:
        if ma != mb:
            return []
        out = [(x + y, ma), (abs(x - y), ma)]
        return [*out, (x / y, "count")] if y else out
    (r, m), (v, q) = ((x, ma), (y, mb)) if ra else ((y, mb), (x, ma))
    base = m[len(_PER_PERIOD) :]
    if q == "count":
        return [(r * v, m), (r * v, base), *([(r / v, m)] if v else [])]
    if q == "time":
        return [(r * v, base)]
    if q == "%":
        return [(r * v / 100, m), (r * (1 - v / 100), m)]
    return []


_PERIOD_AFTER = re.compile(
    r"^(?:-?[^\W\d_]+)?\s*(?:(?:a|an|per|each|every)\s+(?:"
    + "|".join(dict.fromkeys(_ADVERBS.values()))
    + r")\b|(?:"
    + "|".join([*_ADVERBS, "annual"])
    + r")\b)",
    re.IGNORECASE,
)
"""A period after a value and at most its unit word ("10,000 miles *a year*", "£2,200
*monthly* threshold", "10,000-mile *annual* allowance")."""


def per_period_value(fact: Fact, text: str) -> bool:
    """Whether the number ``fact`` of ``text`` is given for a period (a rate: "£290 a month",
    "10,000 miles a year", "the £2,200 monthly threshold")."""
    return _PERIOD_AFTER.match(text[fact.end :].lstrip()) is not None


_PER_WHAT = re.compile(
    r"(?:\s+(?!(?:per|an?|each|for|every)\b)(?P<unit>[^\W\d_]+)\b)?"
    r"\s+(?:per|an?|each|for\s+(?:each|every)|every)\s+"
    r"(?P<extra>(?:extra|additional|further)\s+)?(?:(?P<cur>[£$€])\s*(?P<amount>\d[\d,]*(?:\.\d+)?)"
    r"|(?P<words>[^\W\d_]+(?:[ -](?!(?:per|an?|each|for|every)\b)[^\W\d_]+)?))",
    re.IGNORECASE,
)
"""What a value is given per, after it and at most one word of its unit ("7 points *per £1*",
"£22 *per extra day*", "£25 *an hour*", "£3.80 *per metre* per night", "£1.10 per week *for
each £1,000*")."""

_RANGE_END = re.compile(r"\s*(?:to|[-–])\s*[£$€]?\d[\d,]*(?:\.\d+)?p?(?=\s)", re.IGNORECASE)
"""The last value of a range after its first ("*to €4.49*", "*-£10.25*")."""

_MONEY_WORDS = frozenset(map(stem, ("pound", "dollar", "euro")))
"""Nouns a rate may be given per that are money ("7 points for each *pound*")."""

_FOLLOWING = re.compile(r"[ -]*([^\W\d_]+)")


_EXCESS = re.compile(r"\s*(?:over|beyond|above|more)\b", re.IGNORECASE)
"""A word after a rate's noun that gives it only beyond an allowance ("9p for each mile
*over*")."""


def _noun(word: str) -> str:
    """The key a counted noun is matched by: the stem of its singular ("miles", "mile")."""
    word = word.casefold()
    return stem((lemmas(word).get("NOUN") or (word,))[0])


def _per_key(m: re.Match[str], text: str) -> tuple[frozenset[str], float, bool]:
    """What the rate matched by ``m`` (of ``text``) is given per: the keys of its noun
    (:func:`_noun`) and a divisor (one), or money (``£``) and the amount ("per £1,000": 1,000);
    and whether only beyond an allowance ("per *extra* day", "for each mile *over*")."""
    excess = bool(m.group("extra")) or _EXCESS.match(text, m.end()) is not None
    if m.group("cur"):
        return frozenset(("£",)), float(m.group("amount").replace(",", "")) or 1.0, excess
    said = re.split(r"[ -]", m.group("words").casefold())
    excess = excess or any(_EXCESS.fullmatch(w) for w in said[1:])
    words = [w for w in said if w not in STOPWORDS]
    keys = frozenset(_noun(w) for w in words)
    return (frozenset(("£",)) if keys & _MONEY_WORDS else keys), 1.0, excess


def per_what(fact: Fact, text: str) -> tuple[tuple[frozenset[str], float, bool], ...]:
    """What the number ``fact`` of ``text`` is given per, in the order the text says it (see
    :func:`_per_key`); empty for a value given per nothing. A percentage is a share, not a
    rate."""
    if fact.unit == "%":
        return ()
    # the first value of a range is given per what its last one is ("from €3.99 to €4.49 a
    # month")
    to = _RANGE_END.match(text, fact.end)
    m = _PER_WHAT.match(text, to.end() if to else fact.end)
    if m is None or (m.group("unit") or "").casefold() in STOPWORDS:
        return ()
    keys = [_per_key(m, text)]
    while len(keys) < 3 and (m := _PER_WHAT.match(text, m.end())) and not m.group("unit"):
        keys.append(_per_key(m, text))
    return tuple(keys)


def counts_of(fact: Fact, text: str) -> frozenset[str]:
    """The keys (:func:`_noun`) of the words that may name what the number ``fact`` of
    ``text`` counts: its unit and up to two words after it ("3 *extra days*", "2 *room
    hours*"); money (``£``) for an amount of money."""
    if measure_of(fact) == "money":
        return frozenset(("£",))
    words = re.findall(r"[^\W\d_]+", fact.text) if fact.unit is not None else []
    at = fact.end
    for _ in range(2):
        m = _FOLLOWING.match(text, at)
        if m is None:
            break
        words.append(m.group(1))
        at = m.end()
    return frozenset(_noun(w) for w in words if w.casefold() not in STOPWORDS)


def _per_results(
    rates: Sequence[tuple[float, str, tuple[tuple[frozenset[str], float, bool], ...]]],
    counts: Sequence[tuple[float, frozenset[str], bool]],
) -> list[tuple[float, str]]:
    """What ``rates`` (each a value, its measure and what it is given per) make times the
    ``counts`` of what they are given per (each a value, the keys naming what it counts and
    whether the answer states it): "£22 per extra day" and "3 extra days" make £66; a rate
    given per two things makes a rate per the other first ("£3.80 per metre per night" for 9.5
    metres, £36.10 a night, then for 5 nights £180.50). A rate given only beyond an allowance
    ("9p for each mile over") counts only what the answer states, never the asker's whole
    figure (their 34,500 miles). A count of one makes nothing new. What is made is a value
    the answer must state to work with further: a rate still given per something holds the
    count it was taken for ("£2 per helmet per day" for 5 days is £10 a helmet, not £10 to take
    5 days of again), and an amount worked with unstated would widen the search until a wrong
    total fell on one of its values."""
    out: list[tuple[float, str]] = []
    frontier = list(rates)
    for _ in range(2):
        following = []
        for value, measure, keys in frontier:
            for i, (words, divisor, excess) in enumerate(keys):
                for n, counted, own in counts:
                    if n != 1 and words & counted and (own or not excess):
                        made = value * n / divisor
                        out.append((made, measure))
                        if len(keys) > 1:
                            following.append((made, measure, keys[:i] + keys[i + 1 :]))
        frontier = following
    return out


def timed(fact: Fact, clocks: Sequence[Fact], stretches: Sequence[Fact]) -> bool:
    """Whether the time of day ``fact`` is one of ``clocks`` a stretch of minutes or hours of
    ``stretches`` later or earlier, on the twelve-hour dial ("noticed at 9, reported within
    two hours": by 11am)."""
    if fact.unit != CLOCK or not isinstance(fact.value, (int, float)):
        return False
    target = float(fact.value)
    times = [float(f.value) for f in clocks if f.unit == CLOCK and f is not fact]  # type: ignore[arg-type]
    spans = [
        float(f.value) * _MINUTES[f.unit]  # type: ignore[index]
        for f in stretches
        if f.unit in _MINUTES and isinstance(f.value, (int, float))
    ]
    return any(
        _same(target % 720 or 720.0, (c + sign * d) % 720 or 720.0)
        for c in times
        for d in spans
        for sign in (1, -1)
    )


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_UNIT = re.compile(r"\s+(?:([a-z]+)\s+)?(day|night|week|hour)s?\b", re.IGNORECASE)
"""The unit of a number of days, a word between the two ("5 working days", "24 stable hours")."""
_RATE = frozenset(("a", "an", "per", "each", "every"))


def _weekdays(text: str) -> list[tuple[int, int]]:
    """The weekdays ``text`` names, each as (0 for Monday .. 6, offset)."""
    return [
        (WEEKDAYS.index(m.group(1).casefold()), m.start())
        for m in re.finditer(r"\b(" + "|".join(WEEKDAYS) + r")s?\b", text, re.IGNORECASE)
    ]


_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_SHORT = r"(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)"
"""A day's short form, read only in a run ("Mon-Fri", "Tue to Sat"): alone, "Sat", "Wed" and
"Sun" are words."""
_RUN = r"(?:to|until|till|through|[-–])"
_NAMED_DAYS = re.compile(
    rf"\b(?:(?:from\s+)?({_DAY})s?\s*{_RUN}\s*({_DAY})s?"
    rf"|({_SHORT})\.?\s*{_RUN}\s*({_SHORT})\b\.?"
    rf"|({_DAY})s?|(week-?days?)|(week-?ends?))\b",
    re.IGNORECASE,
)
"""A day of the week, a run of them ("Monday to Thursday", "Sunday-Tuesday", "Mon-Fri"),
weekdays or weekends."""


def _day_index(word: str) -> int:
    """0 for Monday .. 6, of a day's name or short form."""
    return next(k for k, d in enumerate(WEEKDAYS) if d.startswith(word.casefold()[:3]))


def day_spans(text: str) -> list[tuple[int, int, frozenset[int]]]:
    """Each mention of days in ``text``: its span and the days it names (see
    :func:`named_days`)."""
    return [(m.start(), m.end(), named_days(m.group(0))) for m in _NAMED_DAYS.finditer(text)]


def named_days(text: str) -> frozenset[int]:
    """The days of the week ``text`` names (0 for Monday .. 6): "on Saturdays" {5}, "from
    Monday to Thursday" {0, 1, 2, 3}, "Mon-Fri" {0 .. 4}, "on weekdays" {0 .. 4}, "at
    weekends" {5, 6}. A price or rule said of some days says nothing of the others."""
    days: set[int] = set()
    for m in _NAMED_DAYS.finditer(text):
        first, last, short_first, short_last, one, weekdays, _ = m.groups()
        if first or short_first:
            a, b = _day_index(first or short_first), _day_index(last or short_last)
            days.update((a + i) % 7 for i in range((b - a) % 7 + 1))
        elif one:
            days.add(_day_index(one))
        else:
            days.update(range(5) if weekdays else (5, 6))
    return frozenset(days)


_HABITUAL = re.compile(
    rf"\b(?:{_DAY}s|(?:a|an|every|each)\s+{_DAY}|week-?days?|week-?ends?"
    rf"|{_DAY}s?\s*{_RUN}\s*{_DAY}|{_SHORT}\.?\s*{_RUN}\s*{_SHORT})\b",
    re.IGNORECASE,
)
"""Days named as a condition rather than a date: in the plural ("on Saturdays"), as any one
("on a Friday", "every Monday"), as weekdays or weekends, or as a run ("Monday to Thursday",
"Mon-Fri")."""


def day_condition(text: str) -> frozenset[int]:
    """The days of the week a statement of ``text`` holds on, where it names days as a
    condition (:data:`_HABITUAL`: "£2.50 an hour at weekends", "£4,200 on a Saturday, £3,400
    on a Friday or Sunday"); none where it names a day only as when something happened ("the
    storm reaches the coast on Sunday")."""
    return named_days(text) if _HABITUAL.search(text) else frozenset()


def _day_stretches(text: str, facts: Sequence[Fact]) -> list[tuple[int, bool]]:
    """The whole numbers of days of ``text`` (with its ``facts``): "three nights", "48 hours",
    "24 stable hours", "5 working days" (True: counted on weekdays only)."""
    out = []
    for f in facts:
        if f.kind != "number" or not isinstance(f.value, (int, float)):
            continue
        if f.unit not in (None, "day", "week", "hour"):
            continue  # money, a share, a time of day
        m = _DAY_UNIT.match(text, f.end)
        if m is not None and (m.group(1) or "").casefold() in _RATE:
            continue  # "2 a day", "£5 per night": a rate, no stretch
        unit = m.group(2).casefold() if m else f.unit
        days = {"day": 1.0, "night": 1.0, "week": 7.0, "hour": 1 / 24}.get(unit or "")
        if days is None:
            continue
        n = float(f.value) * days
        working = m is not None and (m.group(1) or "").casefold() in ("working", "business")
        if n.is_integer() and n > 0:
            out.append((int(n), working))
    return out


def _later(day: int, n: int, working: bool) -> int:
    if not working:
        return (day + n) % 7
    while n:
        day = (day + 1) % 7
        n -= day < 5  # Saturday and Sunday are no working days
    return day


def weekday_after(at: int, claim: str, said: Sequence[tuple[str, Sequence[Fact]]]) -> bool:
    """Whether the weekday the ``claim`` names at offset ``at`` is a weekday one of ``said``
    (texts with their facts: the question's, the claim's, its evidence sentence's) names, a
    whole number of days one of them states later: "fixed at 9am on Monday", "stable for 24
    hours": from Tuesday; "filed on Monday", "within two working days": by Wednesday; "three
    nights" from Wednesday: Saturday."""
    target = next((d for d, k in _weekdays(claim) if k == at), None)
    if target is None:
        return False
    bases = [d for text, _ in said for d, k in _weekdays(text) if text is not claim or k != at]
    stretches = [s for text, facts in said for s in _day_stretches(text, facts)]
    return any(_later(b, n, w) == target for b in bases for n, w in stretches)


def _same(a: float, b: float) -> bool:
    return b != 0 and abs(a - b) <= max(0.005, 0.001 * abs(b))


_ANAPHOR_BEFORE = re.compile(r"\b(?:the|these|those|all)\s+$", re.IGNORECASE)
_ANAPHOR_AFTER = re.compile(r"\s*(?:$|[,;:.!?)\u2013\u2014]|of\s+(?:them|us|you|these|those)\b)")
_NEXT_WORD = re.compile(r"\s+([a-z]+)\b")
_JOINING = frozenset(["and", "or", "but", "while", "who", "which", "that", "together", "each"])


def anaphoric(fact: Fact, text: str) -> bool:
    """Whether the spelled count ``fact`` (two to five) is a noun phrase standing for things
    named before ("the two then agree", "the three of them", "sits between the two"): after
    "the", "these", "those" or "all", followed by the end of its clause, "of them", a joining
    word, or a verb or adverb (a word the lexicon reads so, not ending in "s" or "ing": a plural
    noun would make it a count of that noun, "the two sisters", and so would an adjective or a
    participle, "the two main ...", "the four founding leaders")."""
    if fact.text.casefold() not in ("two", "three", "four", "five"):
        return False
    if not _ANAPHOR_BEFORE.search(text[max(0, fact.start - 8) : fact.start]):
        return False
    rest = text[fact.end :]
    if _ANAPHOR_AFTER.match(rest):
        return True
    word = _NEXT_WORD.match(rest)
    if word is None:
        return False
    w = word.group(1)
    if w in _JOINING:
        return True
    found = set(lemmas(w))
    verb = bool({"VERB", "AUX"} & found)
    adverb = "ADV" in found and found <= {"ADV", "ADJ"}  # "then", "later"
    # a plural noun ("the two sisters") or a participle before one ("the four founding
    # leaders") makes it a count of that noun
    return not w.endswith(("s", "ing")) and (verb or adverb)


def _enumerated_in(fact: Fact, text: str, context: str | None) -> bool:
    """:func:`enumerated` over the sentence ``text`` was cut from, where it lies in it."""
    at = context.find(text) if context and context != text else -1
    if at < 0:
        return False
    return enumerated(dataclasses.replace(fact, start=fact.start + at, end=fact.end + at), context)


def enumerated(fact: Fact, text: str) -> bool:
    """Whether the list that follows ``fact`` in ``text`` has exactly that many items."""
    n = fact.value
    if not (isinstance(n, float) and n.is_integer() and 2 <= n <= 12):
        return False
    # (what an item says in brackets is part of it: "within 14 days (a full refund, if ...)")
    rest = _IN_BRACKETS.sub(" ", re.split(r"[.;](?:\s|$)", text[fact.end :], maxsplit=1)[0])
    start = _LIST_START.match(rest)
    if start is None:
        return False
    items = [x.strip() for x in rest[start.end() :].split(",")]
    count = 0
    for k, item in enumerate(items):
        joined = re.search(r"\b(?:and|or)\b", item)
        if joined is None:
            count += 1
            continue
        # "A and B" closes the list (two items); ", and C" after a comma is one more
        count += 1 if item.startswith(("and ", "or ")) and k > 0 else 2
        break
    else:
        return False  # no "and" / "or": a clause, not a list
    return count == int(n)


def date_span(
    fact: Fact,
    text: str,
    facts: Sequence[Fact],
    evidence: Sequence[Fact],
    sources: Sequence[Fact] = (),
) -> bool:
    """Whether ``fact`` counts units of time (days, weeks, months, years) that two of the dates
    of the claim and its evidence sentence are apart, or a date of the claim and one of the
    ``sources`` ("finished in 1677, eleven years after the fire" where another sentence dates
    the fire), within the rounding its wording allows. Two dates of the sources alone must
    stand in one sentence: a passage's many years are apart by most small numbers."""
    days = _DAYS.get(fact.unit or "")
    if days is None or not isinstance(fact.value, float):
        return False
    slack = _slack(fact, text)
    own = _dated([f for f in facts if f is not fact])
    theirs = _dates(list(evidence))
    word = _AFTER.match(text[fact.end : fact.end + 30])

    def fits(a: dt.date, b: dt.date) -> bool:
        return abs(abs((b - a).days) / days - fact.value) <= slack

    def ordered(a: dt.date, at: int, b: dt.date) -> bool:
        # "in 1677, eleven years after the fire": the claim's date is the later one; "in 1990,
        # and three years later": the earlier; read the other way round when the claim's date
        # is the one the word governs ("twenty-five years after its 1954 premiere")
        if word is None:
            return True
        later = word.group(1).casefold() in ("after", "earlier")
        if at > fact.end + word.end():
            later = not later
        return (a > b) if later else (a < b)

    # two dates of one side: which the span runs from is not read (two days of months the
    # claim gives no year for count the same days in any year)
    dates = [d for d, _ in own]
    bare_at = _dated([f for f in facts if f is not fact], bare=True)
    bare = [d for d, _ in bare_at]
    free = [
        (a, b) for side in (dates, theirs, bare) for i, a in enumerate(side) for b in side[i + 1 :]
    ]
    # the claim's date and another: the words say which comes first; a day of a month the
    # claim gives no year for is read in the other date's year ("On 15 May you'd be 46 days
    # from the end" of a tariff ending on 30 June 2027)
    others = theirs + _dates(list(sources))
    mine = [(a, at, b) for a, at in own for b in others]
    mine += [
        (a.replace(year=b.year), at, b)
        for a, at in bare_at
        for b in others
        if _valid(b.year, a.month, a.day)
    ]
    return any(fits(a, b) for a, b in free) or any(
        fits(a, b) and ordered(a, at, b) for a, at, b in mine
    )


def _slack(fact: Fact, text: str) -> float:
    """How far a worked-out count may be off: half a unit, more after "about", "nearly"."""
    before = _WORD_BEFORE.search(text[max(0, fact.start - 20) : fact.start])
    rounded = before is not None and before.group(1).casefold() in APPROX
    return max(0.6, 0.15 * float(fact.value)) if rounded else 0.5


_UNIT_WORD = re.compile(r"-(minute|hour)s?$", re.IGNORECASE)


def clock_span(fact: Fact, text: str, facts: Sequence[Fact], evidence: Sequence[Fact]) -> bool:
    """Whether ``fact`` counts the minutes or hours between two times of day that the claim,
    or its evidence sentence, states ("in the ten minutes between 10:05 and 10:15 p.m.", "the
    ten-minute attack" where the sentence gives both times), the shorter way round the dial,
    within the rounding its wording allows."""
    named = _UNIT_WORD.search(fact.text)
    per = _MINUTES.get(fact.unit or (named.group(1).casefold() if named else ""))
    if per is None or not isinstance(fact.value, float):
        return False
    slack = _slack(fact, text)
    for side in (facts, evidence):
        times = [float(f.value) for f in side if f.unit == CLOCK and f is not fact]  # type: ignore[arg-type]
        for i, a in enumerate(times):
            for b in times[i + 1 :]:
                gap = abs(a - b) % 720
                if abs(min(gap, 720 - gap) / per - fact.value) <= slack:
                    return True
    return False


_AFTER = re.compile(r"^\W*(?:[a-z]+\W+)?(after|before|prior|later|afterwards|earlier)\b", re.I)


_NO_YEAR = 2001
"""The year a day and month no year goes with are read in: days apart are the same in any year
but a leap year's (a common year)."""


def _dated(facts: Sequence[Fact], bare: bool = False) -> list[tuple[dt.date, int]]:
    """The dates ``facts`` state: a month with its day and year ("6 August 1945", "April 20,
    2010"; a missing year borrowed from the nearest one stated), or a year alone (1 July),
    each with where its month or year starts in the text. With ``bare``, only the days of a
    month that no year is stated with, read in :data:`_NO_YEAR` ("3 March to 28 March")."""
    years = [f for f in facts if f.kind == "number" and _year(f)]
    if bare:
        if years:
            return []
        return [
            (dt.date(_NO_YEAR, int(m.value), int(d.value)), m.start)
            for _, m, d in _days_of_months(facts)
            if d is not None and _valid(_NO_YEAR, int(m.value), int(d.value))
        ]
    out: list[tuple[dt.date, int]] = []
    used: set[int] = set()
    for k, f, day in _days_of_months(facts):
        year = next((g for g in facts[k + 1 : k + 3] if _year(g) and g.start - f.end < 12), None)
        if year is None and years:
            year = min(years, key=lambda g: abs(g.start - f.start))
        if year is None:
            continue
        used.add(id(year))
        try:
            out.append(
                (dt.date(int(year.value), int(f.value), int(day.value) if day else 15), f.start)
            )
        except ValueError:
            continue
    out += [(dt.date(int(y.value), 7, 1), y.start) for y in years if id(y) not in used]
    return out


def _days_of_months(facts: Sequence[Fact]) -> list[tuple[int, Fact, Fact | None]]:
    """Each month of ``facts``, with its index there and the day number beside it, or None."""
    out = []
    for k, f in enumerate(facts):
        if f.kind != "month":
            continue
        near = (facts[k - 1] if k else None, facts[k + 1] if k + 1 < len(facts) else None)
        day = next(
            (
                g
                for g in near
                if g is not None and g.kind == "number" and _day(g) and abs(g.start - f.start) < 12
            ),
            None,
        )
        out.append((k, f, day))
    return out


def _valid(year: int, month: int, day: int) -> bool:
    try:
        dt.date(year, month, day)
    except ValueError:
        return False
    return True


_STRICTLY = re.compile(r"\b(?:more|longer|later|earlier)\s+than\s+$|\bover\s+$", re.IGNORECASE)
"""A strict bound right before a stretch of time ("more than 14 days after the policy starts")."""


def date_after(
    at: int, claim: str, facts: Sequence[Fact], said: Sequence[tuple[str, Sequence[Fact]]]
) -> bool:
    """Whether the date the ``claim`` (with its ``facts``) gives with the month at offset
    ``at`` is a date of the asker's (the first of ``said``: texts with their facts, the
    question's first, then the claim's and its evidence sentence's) a whole number of days,
    weeks or months one of them states later or earlier: "spent on 3 March", "within 30
    days": "by 2 April". Dates without a year are read in one common year, and the year of
    the claim's date is not compared (a deadline is told by its day and month)."""
    claimed = _dated(facts) + _dated(facts, bare=True)
    mine = [d for d, k in claimed if k == at]
    if not mine or not said:
        return False
    asked = said[0][1]
    bases = [d for d, _ in _dated(asked) + _dated(asked, bare=True)]
    stretches = [
        (f, bool(_STRICTLY.search(text[: f.start])))
        for text, found in said
        for f in found
        if f.kind == "number"
        and f.unit in ("day", "week", "month")
        and isinstance(f.value, float)
        and f.value.is_integer()
    ]

    def ends(base: dt.date) -> Iterator[dt.date]:
        for f, strictly in stretches:
            n = int(f.value)  # type: ignore[arg-type]
            if f.unit == "month":
                for months in (base.month - 1 + n, base.month - 1 - n):  # later or earlier
                    year, month = base.year + months // 12, months % 12 + 1
                    if _valid(year, month, base.day):
                        yield dt.date(year, month, base.day)
            else:
                # "more than 14 days after" 3 May is first met on 18 May
                step = dt.timedelta(days=n * (7 if f.unit == "week" else 1) + strictly)
                yield from (base + step, base - step)

    def met(reached: Sequence[dt.date], dates: Sequence[dt.date]) -> list[dt.date]:
        return [
            d
            for d in dates
            if any(e.replace(year=d.year) == d for e in reached if _valid(d.year, e.month, e.day))
        ]

    reached = [e for base in bases for e in ends(base)]
    if met(reached, mine):
        return True
    # a date the claim works out first may be where its next stretch runs from ("a £20 fee
    # from 9 March and a further £40 from 23 March" of rent due on 2 March, a fee 7 days
    # after that and another 14 days after the first)
    others = [d for d, k in claimed if k != at]
    return bool(met([e for base in met(reached, others) for e in ends(base)], mine))


_MONTH_NAMES = "|".join(MONTHS)
_MONTH_AFTER = re.compile(
    r"\b(?:(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:day\s+)?of\s+)?the\s+"
    r"(?:(?:next|following)\s+month|month\s+(?:after|following)"
    rf"|(?:first\s+)?(?P<named>{_MONTH_NAMES})\s+(?:after|following))\b",
    re.IGNORECASE,
)
"""A date the sources set by the month after another ("by the *15th of the month after* the
stay", "in *the April after* you leave"), with its day where they give one."""


def month_after(
    at: int, claim: str, facts: Sequence[Fact], said: Sequence[tuple[str, Sequence[Fact]]]
) -> bool:
    """Whether the month the ``claim`` (with its ``facts``) names at offset ``at``, with its day
    and year where it gives them, is the one the sources (the texts of ``said`` after the first
    two, the question's and the claim's) set after a month of the asker's (in the first of
    ``said``): "the 15th of the month after the stay" and lets in August make 15 September;
    "the April after you leave" and a course ending in June 2027 make April 2028."""
    mine = next(((f, d) for _, f, d in _days_of_months(facts) if f.start == at), None)
    if mine is None or len(said) < 3:
        return False
    month, day = mine
    year = next((g for g in facts if _year(g) and 0 < g.start - month.end < 3), None)
    asked = said[0][1]
    theirs = []
    for k, f in enumerate(asked):
        if f.kind == "month":
            y = next((g for g in asked[k + 1 : k + 2] if _year(g) and g.start - f.end < 3), None)
            theirs.append((int(f.value), None if y is None else int(y.value)))  # type: ignore[arg-type]
    for text, _ in said[2:]:
        for m in _MONTH_AFTER.finditer(text):
            named = m.group("named")
            for base, base_year in theirs:
                if named:
                    target = MONTHS[named.casefold()]
                    later = target <= base
                else:
                    target, later = base % 12 + 1, base == 12
                if int(month.value) != target:  # type: ignore[arg-type]
                    continue
                if m.group("day") and (day is None or int(day.value) != int(m.group("day"))):  # type: ignore[arg-type]
                    continue
                if year is not None and base_year is not None and year.value != base_year + later:
                    continue
                return True
    return False


def _dates(facts: Sequence[Fact]) -> list[dt.date]:
    """The dates ``facts`` state (see :func:`_dated`)."""
    return [d for d, _ in _dated(facts)]


def _year(f: Fact) -> bool:
    v = f.value
    return f.kind == "number" and isinstance(v, float) and v.is_integer() and 1000 <= v <= 2100


def _day(f: Fact) -> bool:
    v = f.value
    return isinstance(v, float) and v.is_integer() and 1 <= v <= 31
