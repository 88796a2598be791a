"""Pure parsing helpers for Reverse Validation stage outputs (no I/O, no model calls)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from truthguard.errors import InvalidLLMOutput

__all__ = [
    "Percentage",
    "Token",
    "acronym",
    "find_name",
    "find_percentages",
    "first_percentage",
    "fold_word",
    "heuristic_entity",
    "is_abstention",
    "leaks_entity",
    "name_words",
    "normalize",
    "parse_entity",
    "parse_judge",
    "parse_query",
    "parse_requirements",
    "same_word",
    "strip_parenthetical",
    "tokenize",
    "unmet_requirements",
]

_TRAILING_PAREN = re.compile(r"\s*\([^()]*\)\s*$")
_ANY_PAREN = re.compile(r"\([^()]*\)")
_ARTICLES = {"the", "a", "an"}
_QUOTES = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb*"


def strip_parenthetical(entity: str) -> str:
    """Drop a trailing disambiguation such as ``"Carme (moon)"`` -> ``"Carme"``."""
    return _TRAILING_PAREN.sub("", entity).strip()


def normalize(text: str) -> str:
    """Case-fold, strip accents, parentheticals, punctuation and leading articles."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = _ANY_PAREN.sub(" ", text).casefold()
    text = re.sub(r"['\u2019]s\b", "", text)  # possessive: "Warsaw's" -> "Warsaw"
    text = re.sub(r"[^\w\s]|_", " ", text)
    words = text.split()
    while words and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)


def acronym(entity: str) -> str | None:
    """Initials of a multi-word name (``"National Hockey League"`` -> ``"NHL"``), else None."""
    words = [w for w in re.split(r"[\s\-]+", strip_parenthetical(entity)) if w]
    caps = [w for w in words if w[0].isupper()]
    if len(caps) < 2:
        return None
    return "".join(w[0] for w in caps)


@dataclass(frozen=True)
class Token:
    """A word or punctuation mark of a text, with its folded form and offset."""

    word: str
    """Case-folded, accent-free form without hyphens or possessive ``'s``; "" for punctuation."""
    text: str
    """The token as written."""
    start: int
    """Character offset in the text."""

    @property
    def is_word(self) -> bool:
        return bool(self.word)

    @property
    def capitalized(self) -> bool:
        return self.text[:1].isupper()


_TOKEN = re.compile(r"[^\W_]+(?:[-\u2010\u2011'\u2019][^\W_]+)*|[^\w\s]")


def fold_word(word: str) -> str:
    """Fold one word: accents, case, hyphens, apostrophes and a possessive ``'s``."""
    word = unicodedata.normalize("NFKD", word)
    word = "".join(c for c in word if not unicodedata.combining(c)).casefold()
    word = re.sub(r"['\u2019]s$", "", word)
    return re.sub(r"[-\u2010\u2011'\u2019]", "", word)


def tokenize(text: str) -> list[Token]:
    """Words and punctuation of ``text`` (words joined by hyphens stay one token)."""
    out = []
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        word = fold_word(tok) if tok[0].isalnum() else ""
        out.append(Token(word, tok, m.start()))
    return out


def same_word(a: str, b: str) -> bool:
    """Equal folded words, allowing a plural ``-s`` / ``-es`` on either side."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 3 and long_ in (short + "s", short + "es")


def name_words(entity: str) -> list[str]:
    """Folded words of an entity name (trailing parenthetical and leading article dropped)."""
    words = [t.word for t in tokenize(strip_parenthetical(entity)) if t.is_word]
    while len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return words


def find_name(words: list[str], tokens: list[Token]) -> int | None:
    """Offset of the first place ``tokens`` spell ``words`` in order (punctuation skipped)."""
    seq = [t for t in tokens if t.is_word]
    n = len(words)
    if not n:
        return None
    for i in range(len(seq) - n + 1):
        if all(same_word(seq[i + k].word, words[k]) for k in range(n)):
            return seq[i].start
    return None


def leaks_entity(query: str, entity: str) -> bool:
    """True when a stage-1 query names the entity (whole words, case and accents ignored)."""
    return find_name(name_words(entity), tokenize(query)) is not None


# -- entity extraction ----------------------------------------------------------------------------

# Lead-ins models put before the name: "Sure!", "Entity:", "The main entity is", "The passage is
# mainly about". A label word needs "is" or a colon after it, so "Entity Framework" stays whole.
_ENTITY_PREFIX = re.compile(
    r"^\s*(?:(?:sure|okay|ok|certainly|of\s+course)\s*[!,.:]\s*)?"
    r"(?:(?:the\s+)?(?:(?:main|primary|central)\s+)?(?:entity|subject|topic|name)"
    r"(?:\s+(?:is|would\s+be)\s*[:\-]?|\s*[:\-])\s*"
    r"|(?:the\s+)?(?:passage|text)\s+is\s+(?:(?:mainly|mostly|primarily|chiefly)\s+)?about\s+"
    r"|it\s+is\s+(?:(?:mainly|mostly|primarily|chiefly)\s+)?about\s+)?",
    re.I,
)
_SUBJECT = re.compile(
    r"^(?P<subject>.+?)(?:\s*\([^)]*\))?,?\s+(?:is|was|are|were|refers to|has been|became)\s",
)


def parse_entity(text: str, *, stage: str = "rv.entity") -> str:
    """Clean the extraction stage's reply into an entity name.

    Raises:
        InvalidLLMOutput: The reply is empty, several lines of prose, or too long to be a name.
    """
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        raise InvalidLLMOutput("the model named no entity", raw=text, stage=stage)
    name = _ENTITY_PREFIX.sub("", lines[0]).strip().strip(_QUOTES).strip().rstrip(".").strip()
    name = name.strip(_QUOTES).strip()
    if not name or len(lines) > 2 or len(name.split()) > 12:
        raise InvalidLLMOutput("the reply is not a single entity name", raw=text, stage=stage)
    return name


def heuristic_entity(passage: str) -> str | None:
    """The grammatical subject of the passage's first sentence (``"X is ..."``), if short."""
    first = re.split(r"(?<=[.!?])\s+", passage.strip(), maxsplit=1)[0]
    m = _SUBJECT.match(first)
    if m is None:
        return None
    subject = m.group("subject").strip().strip(_QUOTES)
    subject = re.sub(r"^(?:the|a|an)\s+", "", subject, flags=re.I)
    if not subject or len(subject.split()) > 8:
        return None
    return subject


# -- stage 1 --------------------------------------------------------------------------------------

_QUESTION_PREFIX = re.compile(r"^\s*(?:\*\*)?question\s*(?:\*\*)?\s*[:\-]\s*", re.I)
_ITEM = re.compile(r"^\s*(?:\(?\d{1,3}[.)\]:]|[-*\u2022])\s*(?P<text>.+?)\s*$")


def parse_query(text: str, *, stage: str = "rv.query") -> str:
    """The question generated by QG stage 1 (a leading ``Question:`` label is dropped).

    Raises:
        InvalidLLMOutput: The reply is empty.
    """
    query = _QUESTION_PREFIX.sub("", text.strip()).strip().strip(_QUOTES).strip()
    if not query:
        raise InvalidLLMOutput("stage 1 produced an empty question", raw=text, stage=stage)
    return query


def parse_requirements(text: str, *, stage: str = "rv.query") -> list[str]:
    """The numbered (or bulleted) features listed by EM stage 1.

    Raises:
        InvalidLLMOutput: No list item could be found.
    """
    items = [m.group("text") for ln in text.splitlines() if (m := _ITEM.match(ln))]
    if not items:
        raise InvalidLLMOutput(
            "stage 1 produced no numbered list of features", raw=text, stage=stage
        )
    return items


# -- stage 2 --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Percentage:
    """A percentage found in a stage-2 answer."""

    value: float
    """The value, 0 to 100."""
    start: int
    """Character offset of the match in the answer."""
    text: str
    """The matched text (``"85%"``, ``"9 out of 10"``)."""


_PERCENT = re.compile(r"(\d{1,3}(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b)", re.I)
_RATIO = re.compile(
    r"\b(\d{1,3})\s*(?:out\s+of|of\s+the|/)\s*(\d{1,3})\b(?=\s*(?:\w+\s+){0,2}"
    r"(?:requirements?|criteria|criterion|features?|points?|conditions?|items?))",
    re.I,
)


def first_percentage(text: str) -> float | None:
    """The first ``N%`` in the text (the published rule reads only this one)."""
    m = re.search(r"(\d+(?:\.\d+)?)\s*%", text)
    return float(m.group(1)) if m else None


def find_percentages(text: str) -> list[Percentage]:
    """Every percentage the answer states, as ``N%``, ``N percent`` or ``k out of n`` points."""
    found = [
        Percentage(float(m.group(1)), m.start(), m.group(0))
        for m in _PERCENT.finditer(text)
        if float(m.group(1)) <= 100
    ]
    for m in _RATIO.finditer(text):
        k, n = int(m.group(1)), int(m.group(2))
        if n > 0 and k <= n:
            found.append(Percentage(100.0 * k / n, m.start(), m.group(0)))
    return sorted(found, key=lambda p: p.start)


_ABSTAIN = re.compile(
    r"\b(?:i\s*(?:'m| am)\s+not\s+(?:sure|certain|aware)|i\s+(?:do\s+not|don't|cannot|can't)"
    r"\s+(?:know|find|identify|determine|say)|unable\s+to\s+(?:find|identify|determine)"
    r"|no\s+(?:such|known)\s+entity|not\s+enough\s+information|there\s+is\s+no\s+(?:entity|"
    r"known))",
    re.I,
)


def is_abstention(text: str) -> bool:
    """True when the answer hedges or declines (``"I'm not sure"``, ``"I cannot identify"``)."""
    return _ABSTAIN.search(text.replace("\u2019", "'")) is not None


_UNMET_CUE = re.compile(
    r"\b(?:except|does\s+not|doesn't|did\s+not|didn't|not\s+(?:met|meet|match|mentioned|"
    r"known|true|accurate|correct)|no\s+(?:information|evidence|record)|unmet|missing|"
    r"incorrect|inaccurate|however)\b",
    re.I,
)


def unmet_requirements(text: str) -> list[str]:
    """Sentences of a stage-2 answer that point out requirements the entity does not meet."""
    sentences = re.split(r"(?<=[.!?])\s+|\n+", text.strip())
    return [s.strip() for s in sentences if s.strip() and _UNMET_CUE.search(s)]


# -- judge ----------------------------------------------------------------------------------------


def parse_judge(text: str, *, stage: str = "rv.judge") -> bool:
    """Read a yes / no verdict.

    Raises:
        InvalidLLMOutput: The reply starts with neither yes nor no.
    """
    head = normalize(text).split()
    if head and head[0] in ("yes", "no"):
        return head[0] == "yes"
    raise InvalidLLMOutput("the judge answered neither yes nor no", raw=text, stage=stage)
