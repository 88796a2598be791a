"""Numbers and dates of a text: digits, number words, spoken years, units and numeric dates."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from truthguard.refchecker._tokens import Fact, Token, fold

__all__ = [
    "DURATION_DAYS",
    "MONTHS",
    "MONTH_ABBR",
    "NUMBER_WORDS",
    "SERIES",
    "SIGNS",
    "SUBUNIT",
    "covered",
    "is_number_word",
    "month_of",
    "numbers",
    "numeric_dates",
    "unit_of",
]


_UNITS_W = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
NUMBER_WORDS = _UNITS_W
"""The numbers from zero to nineteen in words, with their values."""
_TENS_W = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_ORD_W = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "thirteenth": 13,
    "fourteenth": 14,
    "fifteenth": 15,
    "sixteenth": 16,
    "seventeenth": 17,
    "eighteenth": 18,
    "nineteenth": 19,
    "twentieth": 20,
    "thirtieth": 30,
    "fortieth": 40,
    "fiftieth": 50,
    "sixtieth": 60,
    "seventieth": 70,
    "eightieth": 80,
    "ninetieth": 90,
    "hundredth": 100,
    "thousandth": 1000,
}
_SCALES = {
    "hundred": 100,
    "thousand": 1_000,
    "million": 1_000_000,
    "billion": 1_000_000_000,
    "trillion": 1_000_000_000_000,
    "dozen": 12,
}
_FRACTIONS = {"half": 0.5, "quarter": 0.25}
"""What "and a ..." adds to the number before it."""
_SCALE_ABBR = {"k": 1_000, "m": 1_000_000, "mn": 1_000_000, "bn": 1_000_000_000, "b": 1_000_000_000}
_MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
}
_MONTH_ABBR = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_UNIT_ALIASES = {
    "%": "%",
    "percent": "%",
    "per cent": "%",
    "percentage": "%",
    "percentage point": "%",
    "percentage points": "%",
    "basis point": "bp",
    "basis points": "bp",
    "bp": "bp",
    "bps": "bp",
    "$": "$",
    "dollar": "$",
    "dollars": "$",
    "usd": "$",
    "us$": "$",
    "£": "£",
    "pound": "pound",  # money or weight: agrees with "£" and with "lb" (see POUNDS)
    "pounds": "pound",
    "gbp": "£",
    "€": "€",
    "euro": "€",
    "euros": "€",
    "eur": "€",
    "¥": "¥",
    "yen": "¥",
    "jpy": "¥",
    # the Nordic crowns: "NOK 1,800", "1 800 kroner", "1,800 kr" (one unit: a retelling
    # writes the code for the word)
    "nok": "kr",
    "sek": "kr",
    "dkk": "kr",
    "kr": "kr",
    "krone": "kr",
    "kroner": "kr",
    "kronor": "kr",
    "cent": "¢",  # a hundredth of whichever currency ("10 cents" is "€0.10" and "$0.10")
    "cents": "¢",
    "pence": "¢",
    "chf": "chf",
    "francs": "chf",
    "franc": "chf",
    "km": "km",
    "kilometre": "km",
    "kilometres": "km",
    "kilometer": "km",
    "kilometers": "km",
    "m": "m",
    "metre": "m",
    "metres": "m",
    "meter": "m",
    "meters": "m",
    "cm": "cm",
    "centimetre": "cm",
    "centimetres": "cm",
    "centimeter": "cm",
    "centimeters": "cm",
    "mi": "mi",
    "mile": "mi",
    "miles": "mi",
    # speeds: "389 km/h" is not 389 km, nor "242 mph" a bare 242
    "km h": "km/h",
    "kph": "km/h",
    "kmh": "km/h",
    "kilometres per hour": "km/h",
    "kilometers per hour": "km/h",
    "mph": "mph",
    "miles per hour": "mph",
    "ft": "ft",
    "foot": "ft",
    "feet": "ft",
    "in": "in",
    "inch": "in",
    "inches": "in",
    "kg": "kg",
    "kilogram": "kg",
    "kilograms": "kg",
    "lb": "lb",
    "lbs": "lb",
    "pound-weight": "lb",
    "g": "g",
    "gram": "g",
    "grams": "g",
    "year": "year",
    "years": "year",
    "month": "month",
    "months": "month",
    "week": "week",
    "weeks": "week",
    "day": "day",
    "days": "day",
    "hour": "hour",
    "hours": "hour",
    "hr": "hour",
    "hrs": "hour",
    "minute": "minute",
    "minutes": "minute",
    "min": "minute",
    "mins": "minute",
    # after a number "second" counts time ("1 second"); as a rank it comes before its noun
    "second": "second",
    "seconds": "second",
    "sec": "second",
    "secs": "second",
    "millisecond": "millisecond",
    "milliseconds": "millisecond",
    "ms": "millisecond",
    "century": "century",
    "centuries": "century",
    "decade": "decades",
    "decades": "decades",
    "ha": "ha",
    "hectare": "ha",
    "hectares": "ha",
    "acre": "acre",
    "acres": "acre",
    "square kilometres": "km²",
    "square kilometers": "km²",
    "square km": "km²",
    "sq km": "km²",
    "square miles": "mi²",
    "square mile": "mi²",
    "sq mi": "mi²",
    # degrees: of arc or of a scale the text names ("23.4°", "178 °C", "178 degrees Celsius")
    "°": "°",
    "degree": "°",
    "degrees": "°",
    "° c": "°C",
    "° f": "°F",
    "degree celsius": "°C",
    "degrees celsius": "°C",
    "degrees centigrade": "°C",
    "degree fahrenheit": "°F",
    "degrees fahrenheit": "°F",
    "celsius": "°C",
    "fahrenheit": "°F",
}

_JOINED_UNITS = {
    "kb": "kB",
    "kilobyte": "kB",
    "kilobytes": "kB",
    "mb": "MB",
    "megabyte": "MB",
    "megabytes": "MB",
    "gb": "GB",
    "gigabyte": "GB",
    "gigabytes": "GB",
    "tb": "TB",
    "terabyte": "TB",
    "terabytes": "TB",
    "kbps": "kbps",
    "mbps": "Mbps",
    "gbps": "Gbps",
    "mhz": "MHz",
    "ghz": "GHz",
    "wh": "Wh",
    "kwh": "kWh",
    "w": "W",
    "watt": "W",
    "watts": "W",
    "kw": "kW",
    "kilowatt": "kW",
    "kilowatts": "kW",
    "v": "V",
    "volt": "V",
    "volts": "V",
    "ah": "Ah",
    "mah": "mAh",
    "ml": "ml",
    "millilitre": "ml",
    "millilitres": "ml",
    "milliliter": "ml",
    "milliliters": "ml",
    "litre": "l",
    "litres": "l",
    "liter": "l",
    "liters": "l",
    "mg": "mg",
    "milligram": "mg",
    "milligrams": "mg",
    "rpm": "rpm",
}
"""Units of technical measures, read as a number's unit where written joined to it ("2GB",
"350Mbps", "65W"); apart ("2 GB"), those of :data:`_APART_UNITS`."""

_APART_UNITS = {k: v for k, v in _JOINED_UNITS.items() if len(k) > 1}
"""The technical units read after a number written apart too ("2 GB", "3.7 kW", "37 kWh"); a
single letter ("w", "v") only joined to it, as "65W"."""

_DECIMAL_UNITS = {"C": "C", "A": "A"}
"""Capital letters read as a unit only joined to a number with decimals: "0.5C" is a battery's
charge rate, "2.4A" a current; "1C" or "10A" names a flat or a form as often."""


def _decimal_unit(number: str, after: str) -> bool:
    """Whether ``after``, joined to ``number``, is the unit :data:`_DECIMAL_UNITS` reads."""
    return "." in number and after.rstrip(".") in _DECIMAL_UNITS


DURATION_DAYS = {
    "millisecond": 1 / 86_400_000,
    "second": 1 / 86_400,
    "minute": 1 / 1440,
    "hour": 1 / 24,
    "day": 1.0,
    "week": 7.0,
    "month": 365.25 / 12,
    "year": 365.25,
    "decades": 3652.5,
    "century": 36525.0,
}
"""The units of a stretch of time, in days ("decade", the unit of "the 1970s", names a decade
by its first year; "decades" counts them)."""

SCALES = frozenset(["c", "f", "celsius", "centigrade", "fahrenheit"])
"""A temperature scale's name or letter, part of a number's unit after "°" or "degrees"."""


def scale_words(tokens: list[Token]) -> set[int]:
    """Indices of the tokens that name a temperature scale or a currency as a number's unit
    ("°C", "degrees Celsius", "100 Fahrenheit", "NOK 1,800", "1 800 kroner", "USD 40m"): a
    unit, not a proper name nor a word the evidence must repeat."""
    out = set()
    for k in range(1, len(tokens)):
        before = tokens[k - 1].norm
        if tokens[k].norm.rstrip(".") in SCALES and (
            before in ("°", "degree", "degrees") or before[:1].isdigit()
        ):
            out.add(k)
    for k, t in enumerate(tokens):
        if t.norm.rstrip(".") not in CURRENCIES:
            continue
        after = tokens[k + 1].norm if k + 1 < len(tokens) else ""
        before = tokens[k - 1].norm if k > 0 else ""
        if after[:1].isdigit() or before[:1].isdigit() or before in _SCALES:
            out.add(k)
    return out


CURRENCIES = frozenset(
    (
        *("usd", "eur", "gbp", "nok", "sek", "dkk", "jpy", "chf", "kr", "kroner", "krone"),
        *("kronor", "euros", "euro", "dollars", "dollar", "pounds", "yen", "francs", "franc"),
        *("cent", "cents", "pence"),
    )
)
"""Currency codes and names a number is read with, before it ("NOK 1.2 billion") or after it
("1.2 billion kroner")."""

_CODES_BEFORE = frozenset(("usd", "eur", "gbp", "nok", "sek", "dkk", "jpy", "chf", "kr"))
"""Currency codes written before the amount, with a space ("NOK 1,800", "USD 40m")."""

_GROUP_SPACES = frozenset((" ", "\u00a0", "\u2009", "\u202f"))
"""Spaces a thousands separator may be ("1 800", "1\u2009800", "12\u202f500")."""

_FRACTION_OF = {
    **{"half": 2, "third": 3, "quarter": 4, "fifth": 5, "sixth": 6, "seventh": 7},
    **{"eighth": 8, "ninth": 9, "tenth": 10},
}
"""Fractions written as words ("a fifth" is 20%, "two thirds" 66.7%)."""

_FRACTION_NEXT = frozenset(
    (
        *("of", "in", "on", "by", "to", "and", "or", "from", "since", "compared", "than"),
        *("at", "over", "but", "while", "after", "before", "during", "for", "year-on-year"),
        # a time or a comparison after the share ("cut by a fifth last year")
        *("last", "this", "next", "each", "every", "per", "annually", "overall", "within"),
        *("between", "across", "against", "versus", "vs", "as", "when", "because", "until"),
    )
)
"""Words after "a fifth" that make it a share, not a rank ("a fifth season" is a rank): a
preposition, a conjunction, or a word opening a time ("by a fifth last year")."""


POUNDS = frozenset(["pound", "£", "lb"])
"""The units "pound" may be: after a number the word is money as often as weight."""


def _number_value(word: str) -> tuple[float, str | None] | None:
    """Value of one numeric token ("1,200", "11th", "1960s", "3.5", "8,998.40") and its kind
    of suffix."""
    m = re.fullmatch(r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(st|nd|rd|th|s)?", word)
    if not m:
        return None
    value = float(m.group(1).replace(",", ""))
    suffix = m.group(2)
    return value, ("decade" if suffix == "s" else "ordinal" if suffix else None)


def _word_number(tokens: list[Token], i: int) -> tuple[float, int] | None:
    """A number written in words starting at token ``i``: (value, tokens used)."""
    year = _spoken_year(tokens, i)
    if year is not None:
        return year
    total, current, used, seen = 0.0, 0.0, 0, False
    last = ""  # "unit" after one to nineteen: only a scale word goes on ("two hundred")
    j = i
    while j < len(tokens):
        parts = tokens[j].norm.split("-")
        ok = True
        for p in parts:
            small = _UNITS_W.get(p, _ORD_W.get(p, 100))
            if last == "unit" and small < 20:
                ok = False  # "two Seventh Coalition armies": two numbers, not "nine"
                break
            if p in _UNITS_W:
                current += _UNITS_W[p]
                last = "unit"
            elif p in _TENS_W:
                current += _TENS_W[p]
                last = "tens"
            elif p in _ORD_W:
                current += _ORD_W[p] if _ORD_W[p] < 100 else 0
                current = current * _ORD_W[p] if _ORD_W[p] >= 100 else current
                last = "unit" if _ORD_W[p] < 20 else "tens"
            elif p in _SCALES and (seen or p == "dozen"):
                last = "scale"
                if p == "dozen":
                    current = (current or 1) * 12
                elif _SCALES[p] == 100:
                    current = (current or 1) * 100
                else:
                    total += (current or 1) * _SCALES[p]
                    current = 0
            else:
                ok = False
                break
            seen = True
        if not ok:
            if seen and j == i and parts[0] and parts[0] not in _SCALES:
                used = 1  # "two-day", "one-off": the number word leads a compound
            break
        j += 1
        used = j - i
        if parts[-1] in _ORD_W:
            break  # an ordinal ends the number
        # "two hundred and five": "and" joins a scale word to the number word after it
        if (
            last == "scale"
            and j + 1 < len(tokens)
            and tokens[j].norm == "and"
            and _is_number_word(tokens[j + 1].norm)
        ):
            j += 1
    if not seen or used == 0:  # "one-" and the like: no whole number word
        return None
    return total + current, used


def _spoken_year(tokens: list[Token], i: int) -> tuple[float, int] | None:
    """A year said in two halves ("nineteen eighty-seven", "nineteen oh five") read as one number.

    The word-number reader adds the halves (19 + 87); a year is two numbers from 10 to 99 side by
    side, the first at least 11 and the second a tens word or "oh" with a unit, no scale word.
    """
    first = tokens[i].norm
    if first not in _UNITS_W or not 11 <= _UNITS_W[first] <= 19:
        return None
    value = float(_UNITS_W[first])
    j = i + 1
    if j >= len(tokens):
        return None
    parts = tokens[j].norm.split("-")
    if parts[0] in _TENS_W and all(p in _UNITS_W and _UNITS_W[p] < 10 for p in parts[1:]):
        second = _TENS_W[parts[0]] + sum(_UNITS_W[p] for p in parts[1:])
        if len(parts) == 1 and j + 1 < len(tokens) and tokens[j + 1].norm in _UNITS_W:
            u = _UNITS_W[tokens[j + 1].norm]
            if 0 < u < 10:
                return value * 100 + second + u, 3  # "nineteen eighty seven"
        return value * 100 + second, 2
    if parts[0] in _UNITS_W and 10 <= _UNITS_W[parts[0]] <= 19 and len(parts) == 1:
        return value * 100 + _UNITS_W[parts[0]], 2  # "nineteen twelve"
    if parts == ["oh"] and j + 1 < len(tokens) and tokens[j + 1].norm in _UNITS_W:
        u = _UNITS_W[tokens[j + 1].norm]
        if 0 < u < 10:
            return value * 100 + u, 3  # "nineteen oh five"
    return None


def _is_number_word(norm: str) -> bool:
    return all(
        p in _UNITS_W or p in _TENS_W or p in _ORD_W or p in _SCALES for p in norm.split("-")
    )


def _unit_after(tokens: list[Token], j: int) -> tuple[str | None, int]:
    if j < len(tokens):
        three = " ".join(t.norm for t in tokens[j : j + 3]) if j + 2 < len(tokens) else ""
        if three in _UNIT_ALIASES:
            return _UNIT_ALIASES[three], 3
        two = f"{tokens[j].norm} {tokens[j + 1].norm}" if j + 1 < len(tokens) else ""
        if two in _UNIT_ALIASES:
            return _UNIT_ALIASES[two], 2
        unit = unit_of(tokens[j].norm)
        if unit is not None:
            return unit, 1
        unit = _APART_UNITS.get(tokens[j].norm)
        if unit is None and tokens[j].text == "A" and _unit_noun(tokens, j + 1):
            unit = "A"  # "a 20 A circuit", "the 13 A fuse"
        if unit is not None:
            return unit, 1  # "38 MB", "3.7 kW": as "38MB" and "3.7kW" are
    return None, 0


def _unit_noun(tokens: list[Token], j: int) -> bool:
    """Whether token ``j`` is a lower-case word, the noun a capital unit letter measures."""
    return j < len(tokens) and tokens[j].text.isalpha() and tokens[j].text.islower()


def _pence(tokens: list[Token], j: int, value: float) -> bool:
    """Whether token ``j`` is a "p" joined to the whole number before it, under 100: pence
    ("25p", "75p each"), where "720p" and "1080p" are video resolutions; or joined to a
    decimal, which no resolution has ("24.5p per kWh", "142.9p a litre")."""
    if not (0 < j < len(tokens) and tokens[j].text == "p"):
        return False
    before = tokens[j - 1].text
    return tokens[j].start == tokens[j - 1].end and (
        (before.isdigit() and value < 100) or bool(_DECIMAL.fullmatch(before))
    )


_DECIMAL = re.compile(r"\d+\.\d+")


def unit_of(word: str) -> str | None:
    """The unit a word names after a number ("weeks": week; a possessive measure, "one month's
    notice": month), or None."""
    norm = word.casefold()
    return _UNIT_ALIASES.get(norm) or _UNIT_ALIASES.get(re.sub(r"['’]s$", "", norm))


_NUM_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b|\b(\d{1,2})/(\d{1,2})/(\d{2,4})\b")


_CLOCK = re.compile(
    r"(?<![\d:.,])(\d{1,2})(?::(\d{2}))?\s*(a\.m\.?|p\.m\.?|am\b|pm\b|o['’]clock\b|"
    r"(?=\s+(?:this|in\s+the)\s+(?:morning|afternoon|evening)\b))"
    r"|(?<![\d:.,])(\d{1,2}):(\d{2})(?![\d:])",
    re.IGNORECASE,
)
"""A time of day: "3 pm", "10:31 p.m.", "22:31" (not a stretch of "2:03:59"), "9 o'clock",
"9 this morning", "6 in the evening"."""

SUBUNIT = "¢"
BASIS = "bp"
"""The unit of an amount in basis points, read as a hundredth of a percentage point."""
"""The unit of an amount in hundredths of a currency ("10 cents", "45 pence"), read as the
currency's amount (0.10, 0.45): it agrees with any currency's sign or code."""

CLOCK = "clock"
"""The unit of a time of day, whose value is minutes past the hour on a twelve-hour dial."""


_WORD_CLOCK = re.compile(
    r"\b(?:(?P<part>half|(?:a\s+)?quarter)\s+(?P<rel>past|to)\s+)?(?P<hour>[a-z]+|\d{1,2})"
    r"(?(part)(?:\s+o['’]clock)?|\s+o['’]clock)\b(?![.,]\d|\s*%|\s*per\s*cent)",
    re.IGNORECASE,
)
"""A time of day in words: "half past six", "a quarter to 9", "ten o'clock" (not "the first
quarter to 2.6%", a share after a change "from" one quarter's)."""


_NOON = re.compile(r"\b(?:12\s+)?(?:noon|midday|midnight)\b", re.IGNORECASE)
"""Twelve o'clock by name: "noon", "midday", "midnight", "12 noon" (12 on the dial, as "00:00" and
"12:00" are)."""


def _word_clock_times(text: str) -> tuple[list[Fact], list[tuple[int, int]]]:
    facts, spans = [], []
    for m in _NOON.finditer(text):
        facts.append(Fact("number", 0.0, m.start(), m.end(), m.group(0), CLOCK))
        spans.append((m.start(), m.end()))
    for m in _WORD_CLOCK.finditer(text):
        word = m.group("hour").casefold()
        hour = int(word) if word.isdigit() else _UNITS_W.get(word)
        if hour is None or not 1 <= hour <= 12:
            continue
        minute = 0
        if m.group("part"):
            minute = 30 if m.group("part").casefold() == "half" else 15
            if m.group("rel").casefold() == "to":
                hour, minute = hour - 1 or 12, 60 - minute
        value = float((hour % 12) * 60 + minute)
        facts.append(Fact("number", value, m.start(), m.end(), m.group(0), CLOCK))
        spans.append((m.start(), m.end()))
    return facts, spans


def _clock_times(text: str) -> tuple[list[Fact], list[tuple[int, int]]]:
    """The times of day of ``text``, each valued on a twelve-hour dial ("15:00" and "3 pm" are
    180; "3 am" too: a time without its half of the day is read, not which half), in figures
    or in words ("half past six", "midnight")."""
    facts, spans = _word_clock_times(text)
    for m in _CLOCK.finditer(text):
        if any(lo < m.end() and m.start() < hi for lo, hi in spans):
            continue
        twelve = m.group(3) is not None
        hour = int(m.group(1) if twelve else m.group(4))
        minute = int((m.group(2) if twelve else m.group(5)) or 0)
        if minute > 59 or hour > (12 if twelve else 23) or (twelve and hour == 0):
            continue
        end = m.end() if twelve else m.end(5)
        # a minute to twelve ends the day (or the morning) as twelve does: "by 23:59" is "by
        # midnight"
        value = 0.0 if (hour % 12, minute) == (11, 59) else float((hour % 12) * 60 + minute)
        facts.append(Fact("number", value, m.start(), end, text[m.start() : end], CLOCK))
        spans.append((m.start(), end))
    return facts, spans


def _numeric_dates(text: str) -> tuple[list[Fact], list[tuple[int, int]]]:
    """Numeric dates ("2017-05-22", "22/5/2017") and times of day, and the spans they cover."""
    facts, spans = _clock_times(text)
    for m in _NUM_DATE.finditer(text):
        if any(lo < m.end() and m.start() < hi for lo, hi in spans):
            continue
        spans.append((m.start(), m.end()))
        if m.group(1):
            y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
            facts += [
                Fact("number", float(y), m.start(1), m.end(1), m.group(1)),
                Fact("month", mo, m.start(2), m.end(2), m.group(2)),
                Fact("number", float(d), m.start(3), m.end(3), m.group(3)),
            ]
        else:
            a, b, y = int(m.group(4)), int(m.group(5)), int(m.group(6))
            if y < 100:
                y += 2000 if y < 50 else 1900
            facts.append(Fact("number", float(y), m.start(6), m.end(6), m.group(6)))
            # day/month order is ambiguous: each part is a number that may be a month
            for g, v in ((4, a), (5, b)):
                alt = frozenset({("month", v)}) if v <= 12 else frozenset()
                facts.append(Fact("number", float(v), m.start(g), m.end(g), m.group(g), None, alt))
    return facts, spans


def covered(tokens: list[Token], spans: list[Any]) -> set[int]:
    """Indices of the tokens starting inside one of ``spans`` (objects with start / end)."""
    import bisect

    starts = [t.start for t in tokens]
    out: set[int] = set()
    for sp in spans:
        lo = bisect.bisect_left(starts, sp.start)
        hi = bisect.bisect_left(starts, sp.end)
        out.update(range(lo, hi))
    return out


_DETERMINERS = frozenset(
    (
        *("the", "a", "an", "its", "his", "her", "their", "our", "my", "your", "whose"),
        *("this", "that", "these", "those", "each", "every"),
    )
)


def _possessive(text: str, tok: Token) -> bool:
    """Whether ``tok`` ends a possessive: "album's", "players'", or the "s" of "album 's" as
    a tokenised text spaces it."""
    if tok.norm.endswith(("'s", "s'")):
        return True
    after = text[tok.end : tok.end + 1]
    before = text[max(tok.start - 1, 0) : tok.start]
    return after in ("'", "’") or (tok.norm == "s" and before in ("'", "’"))


SIGNS = frozenset("$£€¥")
"""Currency signs, which stand before an amount in English."""
_PERIODS_BEFORE = frozenset(["day", "week", "month", "year"])
"""A period named before a count of it numbers one of them: "in year 3" is the third year."""
_PLACING = frozenset(
    ["in", "from", "after", "before", "until", "till", "by", "of", "to", "during", "on", "since"]
)
"""Words that place something in a numbered period ("*in* year 3"); "each year 40 students" counts
students."""


SERIES = re.compile(
    r"\b(?:year|term|semester|tier|zone|level|stage|phase|step|band|grade|class|type|group|"
    r"section|clause|article|page|chapter|part|round|platform|gate|room|floor|version|module|"
    r"week|day|option|lane|bay|block|unit)\s+$",
    re.IGNORECASE,
)
"""A noun a number after it names one of a series with ("year 2", "Tier 1", "on day 4"): the
number counts nothing."""


def _numbers(text: str, tokens: list[Token], skip: list[tuple[int, int]]) -> list[Fact]:
    facts = _ranges(text, _read_numbers(text, tokens, skip))
    return [
        replace(f, series=True)
        if f.unit is None and f.text[:1].isdigit() and SERIES.search(text[: f.start])
        else f
        for f in facts
    ]


_RANGE_JOIN = re.compile(r"\s*(?:-|\u2013|\u2014|to|and)\s*[$£€¥]?\s*")
BETWEEN = re.compile(r"\bbetween\s+[$£€¥]?\s*$", re.IGNORECASE)
"""The word that opens a range, right before its first value ("between 42 and 49 days")."""
_FIGURE = re.compile(r"\d[\d,]*(?:\.\d+)?")


_PART_OF = re.compile(r"\s+(?:out\s+)?of\s+(?:the\s+|its\s+|your\s+|our\s+)?")
"""What joins a part to its whole ("46 *of* 50 GB", "2 *out of* the 8 TB")."""


def _ranges(text: str, facts: list[Fact]) -> list[Fact]:
    """The two ends of a range share what one end writes once: a scale and a unit written
    after the second end ("£1.62-1.66bn" is £1.62bn to £1.66bn, "40-50%" 40% to 50%, "between
    2 and 3 million"), a currency sign before the first ("£3-5m"). The ends are joined by a
    dash or "to" ("and" after "between"), and the first is below the second once scaled. A part
    of a whole measured in a technical unit is measured in it too ("46 of 50 GB")."""
    out = list(facts)
    for n in range(len(out) - 1):
        a, b = out[n], out[n + 1]
        if a.kind != "number" or b.kind != "number":
            continue
        if not isinstance(a.value, float) or not isinstance(b.value, float):
            continue
        if (
            a.unit is None
            and b.unit in _APART_UNITS.values()
            and a.value <= b.value
            and _PART_OF.fullmatch(text, a.end, b.start)
        ):
            out[n] = replace(a, unit=b.unit)  # "46 of 50 GB": 46 GB of the 50
            continue
        join = _RANGE_JOIN.fullmatch(text, a.end, b.start)
        if join is None or (
            join.group().strip(" $£€¥") == "and" and not BETWEEN.search(text, 0, a.start)
        ):
            continue
        raw_a, raw_b = _figure(a.text), _figure(b.text)
        if raw_a is None or raw_b is None or not 0 < raw_a < raw_b:
            continue
        scale = round(b.value / raw_b)
        value = a.value
        if a.value == raw_a and scale in _SCALE_ABBR.values():
            value = raw_a * scale
        unit = a.unit if a.unit is not None else b.unit
        if value > b.value:
            continue
        out[n] = replace(a, value=value, unit=unit)
        if b.unit is None and a.unit in SIGNS:
            out[n + 1] = replace(b, unit=a.unit)
    return out


def _figure(text: str) -> float | None:
    """The figure a number is written with, before any scale ("1.66" of "1.66bn")."""
    m = _FIGURE.match(text)
    return float(m.group().replace(",", "")) if m else None


def _read_numbers(text: str, tokens: list[Token], skip: list[tuple[int, int]]) -> list[Fact]:
    facts: list[Fact] = []
    skip_idx = covered(tokens, [Fact("span", None, s, e, "") for s, e in skip])
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if skip_idx and i in skip_idx:
            i += 1
            continue
        label = _fiscal(text, tokens, i)
        if label is not None:
            facts.append(label[0])
            i = label[1]
            continue
        span = part_of_a_span(text, tokens, i)
        if span is not None:
            value, unit, k = span
            start, end = tokens[i].start, tokens[k - 1].end
            facts.append(Fact("number", value, start, end, text[start:end], unit))
            i = k
            continue
        share = _fraction(text, tokens, i)
        if share is not None:
            value, k = share
            start, end = tok.start, tokens[k - 1].end
            facts.append(Fact("number", value, start, end, text[start:end], "%"))
            i = k
            continue
        parsed = _number_value(tok.text)
        used = 1
        if parsed is not None and parsed[1] is None and re.fullmatch(r"\d{1,3}", tok.text):
            # "1 800", "12\u2009500": groups of three digits after a space of their own
            while (
                i + used < len(tokens)
                and re.fullmatch(r"\d{3}", tokens[i + used].text)
                and tokens[i + used].start == tokens[i + used - 1].end + 1
                and text[tokens[i + used - 1].end] in _GROUP_SPACES
                and not (
                    i + used + 1 < len(tokens)
                    and tokens[i + used + 1].start == tokens[i + used].end
                    and tokens[i + used + 1].text[:1].isdigit()
                )
            ):
                parsed = (parsed[0] * 1000 + float(tokens[i + used].text), None)
                used += 1
        day = False
        if parsed is not None:
            value, suffix = parsed
            if suffix == "ordinal" and used == 1 and _day_of_month(tokens, i):
                # "June 21st, 2016", "the 21st of June": the day of a date, as "June 21" is
                suffix, day = None, True
        else:
            wn = _word_number(tokens, i)
            if wn is None:
                i += 1
                continue
            value, used = wn
            suffix = None
        j = i + used
        # "two and a half pounds", "3 and a quarter"
        follows = [t.norm for t in tokens[j : j + 3]]
        signed = i > 0 and tokens[i - 1].text in SIGNS  # "£62 and a half day £38": two prices
        if follows[:2] == ["and", "a"] and follows[2:] and follows[2] in _FRACTIONS and not signed:
            value += _FRACTIONS[follows[2]]
            j += 3
        # a scale word after digits: "1.2 million", "3 bn"
        if parsed is not None and j < len(tokens):
            nxt = tokens[j].norm
            if nxt in _SCALES and nxt != "dozen":
                value *= _SCALES[nxt]
                j += 1
            elif (
                nxt.rstrip(".") in _SCALE_ABBR
                and tokens[j].start == tokens[j - 1].end
                and (nxt in _SCALE_ABBR or tokens[j].text[:1].islower())  # not "4K."
            ):
                value *= _SCALE_ABBR[nxt.rstrip(".")]  # "€40m." ends a sentence
                j += 1
        if (
            parsed is not None
            and suffix is None
            and j == i + 1
            and j < len(tokens)
            and tokens[j].start == tok.end
            and tokens[j].text[:1].isupper()
            and len(tokens[j].text.rstrip(".")) <= 2
            and tokens[j].norm.rstrip(".") not in _UNIT_ALIASES  # "3Kg", "5G." as "5G"
            and tokens[j].norm not in _JOINED_UNITS
            and not _decimal_unit(tok.text, tokens[j].text)
        ):
            # "3D", "4K", "5G": digits joined to a capital name a format, not a count ("his
            # third film" is not stated by "released in IMAX 3D"), read as a name ("2D" is
            # not "3D")
            end = tokens[j].end - tokens[j].text.endswith(".")
            facts.append(
                Fact("name", fold(text[tok.start : end]), tok.start, end, text[tok.start : end])
            )
            i = j + 1
            continue
        before = tokens[i - 1].norm if i > 0 else ""
        # "the under-16s", "over-65s": the people under or over an age, no decade
        unit = "decade" if suffix == "decade" and before not in ("under", "over") else None
        if before in ("$", "£", "€", "¥", "us$") and tokens[i - 1].end >= tok.start - 1:
            unit = _UNIT_ALIASES[before]
        elif before in _CODES_BEFORE and tokens[i - 1].end >= tok.start - 1:
            unit = _UNIT_ALIASES[before]  # "NOK 1.2 billion"
        if unit is None and _pence(tokens, j, value):
            unit, value, j = SUBUNIT, value / 100, j + 1  # "25p a day" is £0.25
        if (
            unit is None
            and j < len(tokens)
            and tokens[j].start == tokens[j - 1].end
            and tokens[j].norm in _JOINED_UNITS
        ):
            unit, j = _JOINED_UNITS[tokens[j].norm], j + 1  # "2GB", "350Mbps"
        elif (
            unit is None
            and j < len(tokens)
            and tokens[j].start == tokens[j - 1].end
            and _decimal_unit(tok.text, tokens[j].text)
        ):
            unit, j = _DECIMAL_UNITS[tokens[j].text.rstrip(".")], j + 1  # "0.5C", "2.4A"
        if unit is None and parsed is None and used == 1 and "-" in tok.norm:
            # "a two-week grace period", "a six-month term": the number word leads a compound
            # whose other part is its unit, as "a 30-day window" is read
            unit = unit_of(tok.norm.rsplit("-", 1)[1])
            unit = unit if unit in DURATION_DAYS else None
        if unit is None:
            unit, words = _unit_after(tokens, j)
            if unit in ("%", BASIS) and (words > 1 or unit == BASIS):
                # "12 per cent", "0.8 percentage points", "80 basis points": the words are
                # the unit's, and a basis point is a hundredth of a percentage point
                j += words
                if unit == BASIS:
                    unit, value = "%", value / 100
            if unit == "in":
                unit = None  # "in" is a preposition far more often than inches
            elif (
                unit is not None
                and j < len(tokens)
                and tokens[j].text in SIGNS
                and j + 1 < len(tokens)
                and tokens[j + 1].text[:1].isdigit()
            ):
                unit = None  # the sign opens the next amount ("in year two (£150)")
            elif unit == SUBUNIT:
                value /= 100  # "10 cents" is 0.10 of the currency ("€0.10")
        if (
            unit is None
            and before in _PERIODS_BEFORE
            and value == int(value)
            and 0 < value < 100
            and (tokens[i - 1].text[:1].isupper() or (i > 1 and tokens[i - 2].norm in _PLACING))
        ):
            # "in year 3", "Day 5", "after week two": the third year, the fifth day
            unit = before
        if (
            unit is None
            and j < len(tokens)
            and tokens[j].norm in ("quarter", "half")
            and (suffix == "ordinal" or (parsed is None and tok.norm in _ORD_W))
            and part_of_a_span(text, tokens, j) is None  # "the first half hour"
        ):
            # "the fourth quarter", "the first half": a fiscal period, as "Q4" and "H1" are
            unit = tokens[j].norm
            j += 1
        if (
            parsed is None
            and used == 1
            and tok.norm == "second"
            and (before == "per" or re.search(r"\d(?:[-‐]|\s+)$", text[: tok.start]))
        ):
            # "902 metres per second", "a 300-second minimum", "1 second": a unit of time
            i = j
            continue
        if (
            suffix is None
            and len(tok.text) == 2
            and tok.text.isdigit()
            and facts
            and _year_range_start(text, facts[-1], tok.start)
        ):
            # "Louis XV (1715–74)": the second year of a range written with its last two digits
            first = int(float(facts[-1].value))
            value = first // 100 * 100 + value
            value += 100 if value <= first else 0
        if (
            used == 1
            and j == i + 1
            and (suffix == "ordinal" or (parsed is None and tok.norm in _ORD_W))
            and (_cardinal_at(tokens, j) or part_of_a_span(text, tokens, j) is not None)
        ):
            # "the first 60 days", "its first three months", "the first half hour": which end
            # of a stretch the count after it takes, not a rank of its own
            i = j
            continue
        if (
            parsed is None
            and used == 1
            and tok.norm == "first"
            and before not in _DETERMINERS
            and not (i > 0 and _possessive(text, tokens[i - 1]))
        ):
            # "first aired", "was first used": an adverb; an ordinal of a noun phrase has its
            # determiner ("the first city", "its first season") or a possessive ("the album's
            # first single")
            i = j
            continue
        if (
            parsed is None
            and used == 1
            and tok.norm == "one"
            and unit is None
            and text[tok.end : tok.end + 1] != "-"  # "a one- or two-day event" counts days
            and not _ONE_OF_A_RANGE.match(text, tok.end)  # "one or two tablets"
        ):
            # "one of the", "the one who", "one large bloom": a pronoun or an article far more
            # often than a count, and stated as a count it is rarely the fact that changes
            i = j
            continue
        if (
            unit is None
            and j < len(tokens)
            and tokens[j].norm in ("x", "×")
            and tokens[j].start == tokens[j - 1].end
            and not (j + 1 < len(tokens) and tokens[j + 1].start == tokens[j].end)
        ):
            j += 1  # "0.73x EBITDA", "a 3x return": a multiple, as "0.73 times" is
        start, end = tok.start, tokens[j - 1].end
        if unit in _DECIMAL_UNITS and tokens[j - 1].text.endswith("."):
            end -= 1  # "at 0.2C." ends a sentence
        # the day of a date is written as its digits: its shape is a day's, not a rank's
        written = tok.text[:-2] if day and j == i + 1 else text[start:end]
        facts.append(Fact("number", value, start, end, written, unit))
        i = j
    return facts


def month_of(t: Token) -> int | None:
    """The month token ``t`` names ("June", "Jun." with a capital; "May" with a capital, not
    the verb "may"), or None."""
    key = t.norm.rstrip(".")
    month = _MONTHS.get(key) or (_MONTH_ABBR.get(key) if t.text[:1].isupper() else None)
    return None if key == "may" and not t.text[:1].isupper() else month


def _month_at(tokens: list[Token], k: int) -> bool:
    """Whether token ``k`` names a month (:func:`month_of`)."""
    return 0 <= k < len(tokens) and month_of(tokens[k]) is not None


def _day_of_month(tokens: list[Token], i: int) -> bool:
    """Whether the ordinal in digits at token ``i`` is the day of a date: a month right before
    it ("June 21st") or after it ("21st June", "21st of June")."""
    if not 1 <= float(re.sub(r"\D", "", tokens[i].text) or 0) <= 31:
        return False
    after = i + 2 if i + 1 < len(tokens) and tokens[i + 1].norm == "of" else i + 1
    return _month_at(tokens, i - 1) or _month_at(tokens, after)


_ONE_OF_A_RANGE = re.compile(
    r"\s+(?:or|to)\s+(?:\d|two|three|four|five|six|seven|eight|nine|ten)\b", re.IGNORECASE
)
"""What makes "one" the first end of a count ("one or two tablets", "one to three days")."""


def _cardinal_at(tokens: list[Token], j: int) -> bool:
    """Whether token ``j`` is a whole number in digits, an amount ("£50") or a cardinal
    number word ("60", "three"), not an ordinal, and not "one", which after an ordinal is a
    pronoun ("the first one")."""
    if j >= len(tokens):
        return False
    t = tokens[j]
    if re.fullmatch(r"\d[\d,]*", t.text):
        return True
    if t.text in SIGNS and j + 1 < len(tokens) and tokens[j + 1].text[:1].isdigit():
        return True  # "the first £50 of an overdraft": the amount a stretch starts with
    return all(p in _UNITS_W or p in _TENS_W for p in t.norm.split("-")) and t.norm != "one"


def _fiscal(text: str, tokens: list[Token], i: int) -> tuple[Fact, int] | None:
    """A fiscal label at token ``i``: "Q4" (the fourth quarter), "H1" (the first half),
    "FY2022" / "FY22" / "FY 2022" (the year 2022); the fact and the token after it."""
    tok = tokens[i]
    if i + 1 >= len(tokens):
        return None
    nxt = tokens[i + 1]
    joined = nxt.start == tok.end
    if tok.text in ("Q", "H") and joined and re.fullmatch(r"[1-4]", nxt.text):
        unit = "quarter" if tok.text == "Q" else "half"
        if unit == "half" and nxt.text not in ("1", "2"):
            return None
        fact = Fact("number", float(nxt.text), tok.start, nxt.end, text[tok.start : nxt.end], unit)
        return fact, i + 2
    if (
        tok.text.upper() == "FY"
        and nxt.start <= tok.end + 1
        and re.fullmatch(r"\d{2}|\d{4}", nxt.text)
    ):
        year = float(nxt.text) + (2000 if len(nxt.text) == 2 else 0)
        return Fact("number", year, tok.start, nxt.end, text[tok.start : nxt.end]), i + 2
    return None


_OF_A_POINT = re.compile(
    r"\s+(of\s+)?an?\s+(?:percentage\s+point|per\s*cent(?:age\s+point)?)\b", re.IGNORECASE
)
"""A share of one percentage point after a fraction ("a quarter *of a percentage point*",
"half *a percentage point*")."""


def _token_after(tokens: list[Token], end: int) -> int:
    """The index of the first token starting at or after character ``end``."""
    return next((k for k, t in enumerate(tokens) if t.start >= end), len(tokens))


_SPANS = frozenset(["second", "minute", "hour", "day", "week", "month", "year"])
"""The units of time a fraction of one names a stretch of ("half an hour", "half a day")."""
_QUARTERS = {"a": 1, "one": 1, "three": 3}


def _span_of(text: str, tokens: list[Token], k: int) -> str | None:
    """The unit of time token ``k`` names, singular and not a possessive ("half a day's rate"
    is a share of a rate, not a stretch of time)."""
    if k >= len(tokens) or tokens[k].norm not in _SPANS or _possessive(text, tokens[k]):
        return None
    return tokens[k].norm


def part_of_a_span(text: str, tokens: list[Token], i: int) -> tuple[float, str, int] | None:
    """A stretch of time named as a fraction of its unit, from token ``i``: "half an hour",
    "the first half hour", "a half-day", "a quarter of an hour", "three quarters of an hour",
    "an hour and a half"; its value, its unit and the token after it ("half an hour" is 0.5
    hours, which is 30 minutes)."""
    if i >= len(tokens):
        return None
    norm = tokens[i].norm
    nxt = tokens[i + 1].norm if i + 1 < len(tokens) else ""
    if norm == "half":
        k = i + 2 if nxt in ("a", "an") else i + 1
        unit = _span_of(text, tokens, k)
        return (0.5, unit, k + 1) if unit else None
    first, _, second = norm.partition("-")
    if first == "half" and second in _SPANS and not _possessive(text, tokens[i]):
        return 0.5, second, i + 1  # "a half-day closure", "every half-hour"
    count, q = (_QUARTERS[norm], i + 1) if norm in _QUARTERS else (1, i)
    quarter = tokens[q].norm if q < len(tokens) else ""
    if quarter in ("quarter", "quarters") and (quarter == "quarters") == (count > 1):
        after = [t.norm for t in tokens[q + 1 : q + 3]]
        if after and after[0] == "of" and after[1:] and after[1] in ("a", "an"):
            unit = _span_of(text, tokens, q + 3)
            return (count / 4, unit, q + 4) if unit else None
    if norm in ("a", "an", "one"):
        unit = _span_of(text, tokens, i + 1) if nxt in _SPANS else None
        if unit and [t.norm for t in tokens[i + 2 : i + 5]] == ["and", "a", "half"]:
            return 1.5, unit, i + 5  # "an hour and a half", "a day and a half"
    return None


def _fraction(text: str, tokens: list[Token], i: int) -> tuple[float, int] | None:
    """A share written as a fraction from token ``i``: "half" (50%), "a fifth" (20%), "one
    third", "two thirds" (66.7%), "nine-tenths" (90%), followed by "of", a preposition or the
    end of the clause (not "a fifth season", a rank); its value in percent and the token after
    it."""
    if tokens[i].norm == "half":
        point = _OF_A_POINT.match(text, tokens[i].end)
        if point is not None and point.group(1) is None:
            return 0.5, _token_after(tokens, point.end())  # "half a percentage point"
        nxt = tokens[i + 1].norm if i + 1 < len(tokens) else ""
        if nxt in ("a", "an") or (i and tokens[i - 1].norm in ("a", "and", "one")):
            return None  # "half an hour", "two and a half", "a half-marathon"
        if i and tokens[i - 1].norm == "the" and nxt not in ("of", "the"):
            return None  # "during the half", "over the half": a half-year, no share
        return 50.0, i + 1  # "half the fee", "half of it", "in the second year, half"
    joined = tokens[i].norm.split("-")
    if len(joined) == 2:  # "nine-tenths", "two-thirds": one token
        first, word, last = joined[0], joined[1], i
    elif i + 1 < len(tokens):
        first, word, last = tokens[i].norm, tokens[i + 1].norm, i + 1
    else:
        return None
    count = {"a": 1, "one": 1}.get(first) or _UNITS_W.get(first)
    den = _FRACTION_OF.get(word) or _FRACTION_OF.get(word.removesuffix("s"))
    if not count or not den or den == 2 or (count > 1) != word.endswith("s"):
        return None  # a half is read elsewhere ("half of", "and a half")
    point = _OF_A_POINT.match(text, tokens[last].end)
    if point is not None and point.group(1) is not None:
        # "a quarter of a percentage point": a share of one point, not of the whole
        return round(count / den, 4), _token_after(tokens, point.end())
    after = tokens[last + 1].norm if last + 1 < len(tokens) else ""
    ends = after and re.search(r"[,.;:!?)]", text[tokens[last].end : tokens[last + 1].start])
    if after and not ends and after not in _FRACTION_NEXT and tokens[last + 1].text[:1].isalnum():
        return None
    return round(100.0 * count / den, 2), last + 1


def _year_range_start(text: str, fact: Fact, end: int) -> bool:
    """Whether ``fact`` is a year that a dash joins to the number starting at ``end``."""
    if not (fact.text.isdigit() and len(fact.text) == 4 and 1000 <= float(fact.value) <= 2100):
        return False
    return text[fact.end : end].strip() in ("–", "-", "—")


MONTHS = _MONTHS
MONTH_ABBR = _MONTH_ABBR
is_number_word = _is_number_word
numbers = _numbers
numeric_dates = _numeric_dates


# --- bounds: which side of a value a statement is on -----------------------------------------

_ABOVE = "|".join(
    (
        r"more\s+than",
        r"over",
        r"above",
        r"exceeding",
        r"in\s+excess\s+of",
        r"greater\s+than",
        r"longer\s+than",
        r"later\s+than",
        r"after",
        r"beyond",
        r"higher\s+than",
        r"bigger\s+than",
        r"larger\s+than",
        r"heavier\s+than",
        r"older\s+than",
    )
)
_AT_LEAST = "|".join(
    (
        r"at\s+least",
        r"a\s+minimum\s+of",
        r"minimum(?:\s+of)?",
        r"no\s+less\s+than",
        r"not\s+less\s+than",
        r"no\s+fewer\s+than",
        r"no\s+earlier\s+than",
        r"not\s+before",
    )
)
_BELOW = "|".join(
    (
        r"less\s+than",
        r"fewer\s+than",
        r"under",
        r"below",
        r"shorter\s+than",
        r"earlier\s+than",
        r"before",
        r"lower\s+than",
        r"smaller\s+than",
        r"lighter\s+than",
        r"younger\s+than",
    )
)
_AT_MOST = "|".join(
    (
        r"at\s+most",
        r"up\s+to",
        r"a\s+maximum\s+of",
        r"maximum(?:\s+of)?",
        r"max\.?",
        r"no\s+more\s+than",
        r"not\s+more\s+than",
        r"no\s+later\s+than",
        r"not\s+later\s+than",
        r"not\s+exceeding",
        r"not\s+to\s+exceed",
        r"within",
        r"as\s+(?:much",
        r"many",
        r"long)\s+as",
        r"capped\s+at",
        r"limited\s+to",
        r"no\s+longer\s+than",
        r"no\s+higher\s+than",
        r"no\s+heavier\s+than",
        r"no\s+bigger\s+than",
    )
)
_BEFORE_VALUE = re.compile(
    rf"(?:(?P<above>{_ABOVE})|(?P<at_least>{_AT_LEAST})|(?P<below>{_BELOW})|"
    rf"(?P<at_most>{_AT_MOST}))\s+(?:the\s+|a\s+|an\s+|[$£€¥]\s*|us\$\s*)?$",
    re.IGNORECASE,
)
_DENIED = re.compile(r"(?:\b(?:no|not|never)|n['’]t)\s*$", re.IGNORECASE)
"""A negation right before a bound, which turns its side."""
_AFTER_VALUE = re.compile(
    r"^\s*\S*?\s*(?:or\s+(?:more|over|above|longer|later|higher|greater)\b(?P<at_least>)|"
    r"or\s+(?:less|fewer|under|below|shorter|earlier|lower)\b(?P<at_most>)|"
    r"and\s+(?:up|over|above)\b(?P<up>)|and\s+(?:under|below)\b(?P<down>))",
    re.IGNORECASE,
)


def bound_span(text: str, start: int, end: int) -> tuple[str, int, int] | None:
    """The side of the value at ``text[start:end]`` a statement puts it on: ``"above"`` ("more
    than 300 km", "over 32 kg", "300 km or more", "at least 2 hours") or ``"below"`` ("under
    300 km", "up to 30 days", "no more than 2 m", "within 60 seconds", "2 m at most"); None for
    a value stated as such. Strict and inclusive bounds are one side: a retelling says "up to"
    for "no more than" and "over" for "more than"; what matters is which side."""
    lo = max(0, start - 40)
    m = _BEFORE_VALUE.search(text[lo:start])
    if m is not None:
        up = m.group("above") is not None or m.group("at_least") is not None
        denied = _DENIED.search(text[lo : lo + m.start()])
        if denied is not None and (m.group("above") or m.group("below")):
            # "never more than €6" is at most €6, "not under 18" at least 18
            return ("below" if up else "above"), lo + denied.start(), end
        if (
            not up
            and _DEADLINE.match(m.group(0))
            and _AHEAD.match(text[end : end + 40])
            and (not m.group(0).casefold().startswith("up") or _ANY_TIME.search(text[lo:start]))
        ):
            # "up to 48 hours before it opens" is a deadline: at least 48 hours ahead
            up = True
        return ("above" if up else "below"), lo + m.start(), end
    after = _AFTER_VALUE.match(text[end : end + 30])
    if after is not None:
        up = after.group("at_least") is not None or after.group("up") is not None
        return ("above" if up else "below"), start, end + after.end()
    for side, pattern in (("below", _MOST_AFTER), ("above", _LEAST_AFTER)):
        found = pattern.match(text[end : end + 30])
        if found is not None:
            return side, start, end + found.end()
    return None


def lead_time(text: str, start: int, end: int) -> bool:
    """Whether the value at ``text[start:end]`` is a lead time with a deadline's words ("up to
    48 hours before the start", "no later than 7 days before"), read as a deadline or not."""
    m = _BEFORE_VALUE.search(text[max(0, start - 40) : start])
    return (
        m is not None
        and m.group("at_most") is not None
        and _DEADLINE.match(m.group(0)) is not None
        and _AHEAD.match(text[end : end + 40]) is not None
    )


_ANY_TIME = re.compile(r"\bany\s*time\b", re.IGNORECASE)
"""What makes "up to 48 hours before" a deadline ("at any time up to ..."), not a stretch
followed by what ends it ("rights last up to 12 months before they are re-approved")."""
_DEADLINE = re.compile(r"(?:up\s+to|until|(?:no|not)\s+later\s+than)\b", re.IGNORECASE)
_AHEAD = re.compile(
    r"^\s*(?:[a-z-]+\s+){0,2}(?:(?:before|ahead\s+of|prior\s+to)\s+(?![a-z]+ing\b)|"
    r"in\s+advance\b)",
    re.IGNORECASE,
)
"""A lead time after a value ("48 hours before the event", "two working days in advance"), not
what follows a stretch ("held for up to 2 hours before being reheated")."""


_MOST_AFTER = re.compile(r"^\s*\S*?\s*(?:at\s+most|maximum|max\b|tops\b)", re.I)
_LEAST_AFTER = re.compile(r"^\s*\S*?\s*(?:at\s+least|minimum|min\b)", re.I)
