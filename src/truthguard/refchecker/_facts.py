"""Hard facts of a text (numbers, dates, names, quoted titles, negations), normalised, with offsets.

Everything here is rule-based and written to English, not to any data set:

* numbers in digits ("1,200", "3.5", "1.2 million", "11th", "1960s"), in words ("twelve",
  "two hundred and five", "twenty-first", "eleventh"), with a unit when one follows or precedes
  ("$", "%", "percent", "km", ...): "1,200" = "1200" = "one thousand two hundred";
* dates: month names are facts of their own ("August" = "Aug." = month 8), and numeric dates
  ("2021-08-19", "19/08/2021", "8/19/2021") break down into year, month and day;
* proper names: capitalised words (not function words, not a sentence's first word unless it is
  capitalised mid-text too), all-caps acronyms and initials;
* quoted titles: text between quotation marks;
* negation cues: not, n't, never, no, none, nothing, nobody, neither, nor, without, unable,
  unaware.
"""

from __future__ import annotations

from truthguard.refchecker._names import (
    FUNCTION_WORDS,
    honorific,
    names,
    negations,
    titles,
)
from truthguard.refchecker._numbers import (
    covered,
    month_of,
    numbers,
    numeric_dates,
    scale_words,
)
from truthguard.refchecker._tokens import Fact, Token, fold, stem, tokenize

__all__ = [
    "FUNCTION_WORDS",
    "Fact",
    "Token",
    "covered",
    "extract_facts",
    "fold",
    "honorific",
    "negations",
    "scale_words",
    "stem",
    "tokenize",
]


def extract_facts(text: str, tokens: list[Token] | None = None) -> list[Fact]:
    """Every hard fact of ``text``, in text order."""
    tokens = tokenize(text) if tokens is None else tokens
    facts, date_spans = numeric_dates(text)
    facts += numbers(text, tokens, date_spans)
    for t in tokens:
        month = month_of(t)
        if month:
            facts.append(Fact("month", month, t.start, t.end, t.text))
    numeric_idx = covered(tokens, facts) | scale_words(tokens)
    facts += names(text, tokens, numeric_idx)
    facts += titles(text)
    return sorted(facts, key=lambda f: (f.start, f.end))
