"""Pure parsing helpers for Reverse Validation stage outputs (no I/O, no model calls).

Every pattern here runs in time linear in its input (no nested or adjacent quantifiers over the
same characters), and each parser reads at most :data:`~truthguard._text.MAX_SCAN` characters of
a reply; every stage output passes :func:`~truthguard._text.require_content` before it is used.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from truthguard._text import MAX_SCAN, capped, has_content, require_content, scan_note
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
    "parse_answer",
    "parse_entity",
    "parse_judge",
    "parse_query",
    "parse_requirements",
    "same_word",
    "strip_parenthetical",
    "tokenize",
    "unmet_requirements",
]

MAX_ENTITY_CHARS = 300
"""Longest entity name accepted from a model (a name, not a passage)."""

_ANY_PAREN = re.compile(r"\([^()]*\)")
_ARTICLES = {"the", "a", "an"}
_QUOTES = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb*"


def strip_parenthetical(entity: str) -> str:
    """Drop a trailing disambiguation such as ``"Carme (moon)"`` -> ``"Carme"``."""
    # String scanning, not a regex: "\s*(...)\s*$" retries every white-space run (quadratic).
    text = entity.rstrip()
    if text.endswith(")"):
        open_at = text.rfind("(")
        if open_at >= 0 and "(" not in text[open_at + 1 : -1] and ")" not in text[open_at + 1 : -1]:
            text = text[:open_at]
    return text.strip()


def normalize(text: str) -> str:
    """Case-fold, strip accents, parentheticals, punctuation and leading articles."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = _ANY_PAREN.sub(" ", text).casefold()
    text = re.sub(r"['\u2019]s\b", "", text)  # possessive: "Warsaw's" -> "Warsaw"
    text = re.sub(r"[^\w\s]|_", " ", text)
    words = text.split()
    i = 0
    while i < len(words) and words[i] in _ARTICLES:  # an index: re-slicing the list is quadratic
        i += 1
    return " ".join(words[i:])


def acronym(entity: str) -> str | None:
    """Initials of a multi-word name (``"National Hockey League"`` -> ``"NHL"``), else None."""
    words = [w for w in re.split(r"[\s\-]+", strip_parenthetical(entity)) if w]
    caps = [w for w in words if w[0].isupper()]
    if len(caps) < 2:
        return None
    return "".join(w[0] for w in caps)


class Token(NamedTuple):
    """A word or punctuation mark of a text, with its folded form and offset.

    A named tuple: answers of 100,000 tokens are tokenised in linear time with a small constant.
    """

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


@lru_cache(maxsize=8192)
def fold_word(word: str) -> str:
    """Fold one word: accents, case, hyphens, apostrophes and a possessive ``'s``."""
    if word.isascii() and word.isalnum():  # fast path, same result: nothing to strip
        return word.lower()
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
    i = 0
    while len(words) - i > 1 and words[i] in _ARTICLES:
        i += 1
    return words[i:]


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
    """True when a stage-1 query names the entity.

    The entity's words must appear in order, as whole words (a plural ``-s`` allowed), accents
    and case ignored, with one exception: a name of several words each written with a capital
    ("The Wedding Planner", "Lower Canada") counts only where the query writes it so, since
    "a successful wedding planner" does not name the film. A sentence-case title ("Condition
    number", "Human skin color") and a single word ("Chalk") match in any case: lower case is how
    a query names them. Reads the first :data:`~truthguard._text.MAX_SCAN` characters.
    """
    name = [t for t in tokenize(strip_parenthetical(entity)) if t.is_word]
    i = 0
    while len(name) - i > 1 and name[i].word in _ARTICLES:
        i += 1
    name = name[i:]
    if not name:
        return False
    words = [t.word for t in name]
    proper = len(name) > 1 and all(t.capitalized for t in name if t.word not in _NAME_LINKS)
    seq = [t for t in tokenize(query[:MAX_SCAN]) if t.is_word]
    n = len(words)
    for i in range(len(seq) - n + 1):
        if all(same_word(seq[i + k].word, words[k]) for k in range(n)) and (
            not proper or all(seq[i + k].capitalized for k in range(n) if name[k].capitalized)
        ):
            return True
    return False


# Words a proper name may keep in lower case ("Bank of England", "Isle of Man").
_NAME_LINKS = frozenset({"of", "the", "and", "de", "du", "la", "le", "von", "van", "der", "da"})


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
    head, cut = capped(text.strip(), 4 * MAX_ENTITY_CHARS)
    lines = [ln for ln in head.splitlines() if ln.strip()]
    if not lines:
        raise InvalidLLMOutput("the model named no entity", raw=text, stage=stage)
    if len(lines) > 2 or (cut and len(lines) < 2):
        raise InvalidLLMOutput("the reply is not a single entity name", raw=text, stage=stage)
    first = lines[0][: 2 * MAX_ENTITY_CHARS]
    name = _ENTITY_PREFIX.sub("", first, count=1).strip().strip(_QUOTES).strip().rstrip(".")
    name = name.strip().strip(_QUOTES).strip()
    name = require_content(
        name, what="entity name", stage=stage, raw=text, max_chars=MAX_ENTITY_CHARS
    )
    if len(name.split()) > 12 or len(lines[0]) > 2 * MAX_ENTITY_CHARS:
        raise InvalidLLMOutput("the reply is not a single entity name", raw=text, stage=stage)
    return name


# The subject is at most 8 words plus a parenthetical: the verb comes within this many characters.
_SUBJECT_SCAN = 400


def heuristic_entity(passage: str) -> str | None:
    """The grammatical subject of the passage's first sentence (``"X is ..."``), if short."""
    head = passage.strip()[: 4 * _SUBJECT_SCAN]
    first = re.split(r"(?<=[.!?])\s+", head, maxsplit=1)[0][:_SUBJECT_SCAN]
    m = _SUBJECT.match(first)
    if m is None:
        return None
    subject = m.group("subject").strip().strip(_QUOTES)
    subject = re.sub(r"^(?:the|a|an)\s+", "", subject, flags=re.I)
    if not subject or len(subject.split()) > 8 or not any(c.isalnum() for c in subject):
        return None
    return subject


# -- stage 1 --------------------------------------------------------------------------------------

# One optional group per emphasis mark, so no two white-space runs can trade characters.
_QUESTION_PREFIX = re.compile(r"^\s*(?:\*\*)?question(?:\s*\*\*)?\s*[:\-]", re.I)
_ITEM = re.compile(r"^\s*(?:\(?\d{1,3}[.)\]:]|[-*\u2022])(?P<text>.*)$")


def parse_query(text: str, *, stage: str = "rv.query") -> str:
    """The question generated by QG stage 1 (a leading ``Question:`` label is dropped).

    Raises:
        InvalidLLMOutput: The reply is empty, punctuation only, or longer than
            :data:`~truthguard._text.MAX_SCAN` characters.
    """
    body = text.strip()
    if len(body) > MAX_SCAN:
        raise InvalidLLMOutput(
            f"stage 1 produced a question of {len(body)} characters{scan_note(True)}",
            raw=text,
            stage=stage,
        )
    query = _QUESTION_PREFIX.sub("", body, count=1).strip().strip(_QUOTES).strip()
    if not query:
        raise InvalidLLMOutput("stage 1 produced an empty question", raw=text, stage=stage)
    return require_content(query, what="stage-1 question", stage=stage, raw=text)


def parse_requirements(text: str, *, stage: str = "rv.query") -> list[str]:
    """The numbered (or bulleted) features listed by EM stage 1 (items without content dropped).

    Raises:
        InvalidLLMOutput: No list item with content could be found in the first
            :data:`~truthguard._text.MAX_SCAN` characters.
    """
    head, cut = capped(text)
    found = [m.group("text").strip() for ln in head.splitlines() if (m := _ITEM.match(ln))]
    items = [t for t in found if has_content(t)]
    if not items:
        why = "features without content" if found else "no numbered list of features"
        raise InvalidLLMOutput(f"stage 1 produced {why}{scan_note(cut)}", raw=text, stage=stage)
    return items


# -- stage 2 --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Percentage:
    """A percentage found in a stage-2 answer."""

    value: float
    """The value as stated, sign included: it may be negative or above 100."""
    start: int
    """Character offset of the match in the answer."""
    text: str
    """The matched text (``"85%"``, ``"9 out of 10"``)."""
    of_requirements: bool = False
    """The answer ties it to the requirements (``"9 out of 10 points"``, ``"85% of the
    criteria"``): such a value outside 0-100 is an impossible reading, not some other figure."""

    @property
    def in_range(self) -> bool:
        """True for a value a share of requirements can take (0 to 100)."""
        return 0.0 <= self.value <= 100.0


# (?<!\d): never restart inside a run of digits (a failed run is then scanned once, not n times).
_PERCENT = re.compile(r"(?<!\d)(\d+(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b)", re.I)
_FIRST_PERCENT = re.compile(r"(?<!\d)(\d+(?:\.\d+)?)\s*%")
_MINUS = "-\u2212\u2013"


def _signed(text: str, start: int, value: float) -> float:
    """``value`` negated when a minus sign stands right before it (not a range "70-80%")."""
    if start > 0 and text[start - 1] in _MINUS:
        before = text[start - 2] if start > 1 else " "
        if not before.isalnum():
            return -value
    return value


_REQUIREMENT_WORDS = r"(?:requirements?|criteria|criterion|features?|points?|conditions?|items?)"
# "% of the criteria", "percent of its listed requirements" (up to two words in between).
_OF_REQUIREMENTS = re.compile(r"\s*of\s+(?:\w+\s+){0,2}" + _REQUIREMENT_WORDS, re.I)


def _of_requirements(text: str, end: int) -> bool:
    after = text[end : end + 80]
    if after.lstrip()[:2].lower() != "of":  # the common case, without a regex
        return False
    return _OF_REQUIREMENTS.match(after) is not None


_RATIO = re.compile(
    r"\b(\d{1,3})\s*(?:out\s+of|of\s+the|/)\s*(\d{1,3})\b(?=\s*(?:\w+\s+){0,2}"
    r"(?:requirements?|criteria|criterion|features?|points?|conditions?|items?))",
    re.I,
)


def first_percentage(text: str) -> float | None:
    """The first ``N%`` in the text (the published rule reads only this one), with its sign.

    A value below 0 or above 100 is returned as stated; the matchers refuse it.
    """
    m = _FIRST_PERCENT.search(text)
    return _signed(text, m.start(), float(m.group(1))) if m else None


def find_percentages(text: str) -> list[Percentage]:
    """Every percentage the answer states, as ``N%``, ``N percent`` or ``k out of n`` points.

    Values are kept as stated (``-5%``, ``120%``, ``11 out of 10``) so a caller can refuse an
    impossible share instead of reading it as another number; ``of_requirements`` says whether
    the answer ties the value to the requirements.
    """
    found = [
        Percentage(
            _signed(text, m.start(), float(m.group(1))),
            m.start(),
            m.group(0),
            _of_requirements(text, m.end()),
        )
        for m in _PERCENT.finditer(text)
    ]
    for m in _RATIO.finditer(text):
        k, n = int(m.group(1)), int(m.group(2))
        if n > 0:
            found.append(Percentage(100.0 * k / n, m.start(), m.group(0), True))
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


def parse_answer(text: str, *, stage: str = "rv.answer") -> str:
    """The stage-2 answer, checked for content (it is what the entity is matched against).

    Raises:
        InvalidLLMOutput: The answer is empty or punctuation only.
    """
    require_content(text, what="stage-2 answer", stage=stage, raw=text)
    return text


# -- judge ----------------------------------------------------------------------------------------


def parse_judge(text: str, *, stage: str = "rv.judge") -> bool:
    """Read a yes / no verdict from the reply's first word (only its first 200 characters).

    Raises:
        InvalidLLMOutput: The reply starts with neither yes nor no.
    """
    head = normalize(text[:200]).split()
    if head and head[0] in ("yes", "no"):
        return head[0] == "yes"
    raise InvalidLLMOutput("the judge answered neither yes nor no", raw=text, stage=stage)
