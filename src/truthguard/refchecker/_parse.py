"""Parsers for the extractor and checker outputs (pure functions, no I/O).

Models format lists in many ways; these parsers accept quoted tuples, JSON lists and markdown
bullets, deduplicate, and report the lines they could not use. Output they cannot read at all
raises :class:`~truthguard.errors.InvalidLLMOutput` with the raw text.

Every pattern runs in time linear in its input; a parser reads at most
:data:`~truthguard._text.MAX_SCAN` characters of a reply (and lines of at most
:data:`MAX_LINE` characters), and a claim or triplet part without content
(:func:`~truthguard._text.has_content`) is never returned.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from truthguard._text import capped, has_content, scan_note
from truthguard.errors import InvalidLLMOutput

__all__ = [
    "LABELS",
    "MAX_LINE",
    "ParsedClaims",
    "explicit_nothing",
    "parse_joint",
    "parse_joint_labels",
    "parse_label",
    "parse_subsentence_claims",
    "parse_triplets",
]

LABELS = ("Entailment", "Neutral", "Contradiction")
"""The checker's three labels, spelled as upstream spells them."""

Triplet = tuple[str, str, str]

MAX_LINE = 4_000
"""Longest line read as a claim or triplet line; a longer one is reported as unparsed."""
MAX_PART = 1_000
"""Longest claim or triplet part accepted (a fact, not a paragraph)."""


@dataclass
class ParsedClaims:
    """What a parser got out of an extractor output."""

    claims: list[Any] = field(default_factory=list)
    """Deduplicated claims (triplets or sentences), in order of appearance."""
    unparsed: list[str] = field(default_factory=list)
    """Non-empty lines that yielded nothing."""


_NONE = re.compile(r"^\W*(none|no (facts?|claims?|triplets?)|n/?a|\[\s*\])\W*$", re.IGNORECASE)
# Lines in which the extractor says the answer holds no fact, or repeats an abstention ("I don't
# know."): neither is a checkable claim. Anchored at both ends, so "No claims were filed against
# the firm" stays a claim.
_NO_CLAIM = re.compile(
    r"(?:there\s+(?:are|is)\s+)?no\s+(?:factual\s+|verifiable\s+|checkable\s+)?"
    r"(?:facts?|claims?|triplets?|statements?)"
    r"(?:\s+(?:to\s+extract|(?:were\s+|are\s+)?(?:found|stated|made|present|extracted)"
    r"|in\s+(?:the|this)\s+(?:answer|response|text)))?"
    r"|(?:the\s+)?(?:answer|response|text|speaker|assistant|model)\s+"
    r"(?:does\s+not|doesn't|did\s+not|didn't|cannot|can't)\s+"
    r"(?:state|contain|make|include|provide|give|express|know)\b[^.!?\n]{0,80}"
    r"|(?:the\s+)?(?:answer|response|speaker)\s+(?:is|was)\s+(?:an?\s+)?"
    r"(?:abstention|refusal|unsure|uncertain|not\s+sure)\b[^.!?\n]{0,80}"
    r"|i\s+(?:do\s+not|don't|did\s+not|didn't|cannot|can't)\s+(?:know|say|tell|answer)"
    r"\b[^.!?\n]{0,80}"
    r"|i\s*(?:'m|am)\s+(?:not\s+(?:sure|certain|aware)|unsure|uncertain)\b[^.!?\n]{0,80}",
    re.IGNORECASE,
)
_HEADER = re.compile(r"^\s*(#+\s*)?(kg|triplets?|claims?|answer|output)\s*:?\s*$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*```\w*\s*$")
_Q = r"""(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')"""
_QUOTED_TRIPLE = re.compile(r"[(\[]\s*" + _Q + r"\s*,\s*" + _Q + r"\s*,\s*" + _Q + r"\s*[)\]]")
_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
# Parts are stripped in Python: "\s*([^,]+?)\s*," retries every white-space run (quadratic).
_BARE_TRIPLE = re.compile(r"^\(([^(),]*),([^(),]*),([^()]*)\)\W*$")


def _clean(s: str) -> str:
    return " ".join(s.replace('\\"', '"').replace("\\'", "'").split())


def _usable(parts: tuple[str, ...]) -> bool:
    """Every part says something and none is a paragraph."""
    return all(has_content(p) and len(p) <= MAX_PART for p in parts)


def _no_claim(line: str) -> bool:
    """The line says there is nothing to extract (``NONE``, "No facts.", "I don't know.")."""
    body = _BULLET.sub("", line, count=1).strip().strip("*_\"'`").strip()
    body = body.replace("\u2019", "'")
    return bool(_NONE.match(body)) or (_NO_CLAIM.fullmatch(body.rstrip(".!").strip()) is not None)


def _key(parts: Any) -> Any:
    if isinstance(parts, tuple):
        return tuple(p.casefold() for p in parts)
    return parts.casefold().rstrip(".")


def _dedupe(items: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for item in items:
        k = _key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out


def _json_payload(text: str) -> Any:
    body = "\n".join(line for line in text.strip().splitlines() if not _FENCE.match(line)).strip()
    if not body.startswith(("[", "{")):
        return None
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        return None


def _triplet_from_json(item: Any) -> Triplet | None:
    if isinstance(item, list | tuple) and len(item) == 3 and all(isinstance(x, str) for x in item):
        parts = tuple(_clean(x) for x in item)
    elif isinstance(item, dict):
        keys = [("subject", "predicate", "object"), ("s", "p", "o"), ("head", "relation", "tail")]
        lower = {str(k).lower(): v for k, v in item.items()}
        for names in keys:
            if all(isinstance(lower.get(n), str) for n in names):
                parts = tuple(_clean(lower[n]) for n in names)
                break
        else:
            return None
    else:
        return None
    return parts if _usable(parts) else None  # type: ignore[return-value]


def explicit_nothing(text: str) -> bool:
    """The reply says, in so many words, that there is nothing: ``NONE``, ``N/A``, ``[]``."""
    lines = _content_lines(text)
    return bool(lines) and all(_NONE.match(line) for line in lines)


def _require_reply(text: str, raw: str, stage: str) -> None:
    """A reply without content ("", "...", ``null``) is no reply, unless it says ``NONE``."""
    if not has_content(text) and not explicit_nothing(text):
        shown = f" ({text.strip()[:40]!r})" if text.strip() else ""
        raise InvalidLLMOutput(
            f"the extractor's reply is empty or has no content{shown}", raw=raw, stage=stage
        )


def _content_lines(text: str) -> list[str]:
    """Stripped lines without headers ("Triplets:") and code fences."""
    return [
        stripped
        for line in text.splitlines()
        if (stripped := line.strip()) and not _HEADER.match(stripped) and not _FENCE.match(stripped)
    ]


def _says_nothing(text: str) -> bool:
    """Empty, or only ``NONE`` / "no facts" lines once headers and code fences are set aside."""
    return all(_no_claim(line) for line in _content_lines(text))


def parse_triplets(text: str, *, stage: str = "refchecker.extract") -> ParsedClaims:
    """Parse claim triplets from an extractor output.

    Accepts ``("s", "p", "o")`` tuples (single or double quotes, several per line), a JSON list of
    3-lists or of ``{"subject", "predicate", "object"}`` objects, and bullet lines holding an
    unquoted ``(s, p, o)`` or ``s | p | o``. An explicit ``NONE`` (or ``[]``) means no claims,
    also under an echoed header (``"Triplets:\\nNONE"``), in a code fence, or after a line of
    prose (``"The answer states no fact.\\nNONE"``). A triplet with an empty or punctuation-only
    part is not a claim: it is reported in ``unparsed``.

    Raises:
        InvalidLLMOutput: The output is empty or has no letter or digit, or it says nothing
            like ``NONE`` and holds no usable triplet in its first
            :data:`~truthguard._text.MAX_SCAN` characters.
    """
    full = text
    text, cut = capped(text)
    _require_reply(text, full, stage)
    if _says_nothing(text):
        return ParsedClaims()
    payload = _json_payload(text)
    if isinstance(payload, dict):
        payload = next((v for v in payload.values() if isinstance(v, list)), None)
    if isinstance(payload, list):
        found = [t for t in (_triplet_from_json(x) for x in payload) if t is not None]
        bad = [json.dumps(x) for x in payload if _triplet_from_json(x) is None]
        if found or not payload:
            return ParsedClaims(_dedupe(found), bad)
    triplets: list[Triplet] = []
    unparsed: list[str] = []
    said_none = False
    for stripped in _content_lines(text):
        if len(stripped) > MAX_LINE:
            unparsed.append(stripped[:80] + "...")
            continue
        quoted = _QUOTED_TRIPLE.findall(stripped)
        if quoted:
            for m in quoted:
                parts = tuple(_clean(m[i] or m[i + 1]) for i in (0, 2, 4))
                if _usable(parts):
                    triplets.append(parts)  # type: ignore[arg-type]
                else:
                    unparsed.append(str(parts))
            continue
        body = _BULLET.sub("", stripped, count=1)
        bare = _BARE_TRIPLE.match(body)
        piped = [p.strip() for p in body.split("|") if p.strip()]
        found: tuple[str, ...] | None = None
        if bare:
            found = tuple(_clean(g) for g in bare.groups())
        elif len(piped) == 3:
            found = tuple(_clean(p) for p in piped)
        if found is not None and _usable(found):
            triplets.append(found)  # type: ignore[arg-type]
        else:
            said_none = said_none or _no_claim(stripped)
            unparsed.append(stripped)
    if not triplets:
        if said_none:  # prose around a NONE: the extractor found nothing to extract
            return ParsedClaims([], unparsed)
        raise InvalidLLMOutput(
            f"no claim triplet could be parsed{scan_note(cut)}", raw=full, stage=stage
        )
    return ParsedClaims(_dedupe(triplets), unparsed)


def parse_subsentence_claims(text: str, *, stage: str = "refchecker.extract") -> ParsedClaims:
    """Parse stand-alone claims: a JSON list of strings, bullets, numbered or plain lines.

    When some lines are bullets or numbered, plain lines around them are chatter ("Here are the
    claims:") and go to ``unparsed``. Lines saying there is nothing to extract (``NONE``, "The
    answer states no facts.", an echoed "I don't know.") are never claims, and neither is a line
    without content or longer than :data:`MAX_PART`.

    Raises:
        InvalidLLMOutput: The output is empty or has no letter or digit (an outage, not an
            answer without facts: that one says ``NONE``), or is a JSON value that is not a
            list of strings.
    """
    full = text
    text, _ = capped(text)
    _require_reply(text, full, stage)
    if _says_nothing(text):
        return ParsedClaims()
    payload = _json_payload(text)
    if payload is not None:
        if isinstance(payload, list) and all(isinstance(x, str) for x in payload):
            kept = [_clean(x) for x in payload]
            return ParsedClaims(
                _dedupe([c for c in kept if _usable((c,)) and not _no_claim(c)]),
                [c for c in kept if c and (not _usable((c,)) or _no_claim(c))],
            )
        raise InvalidLLMOutput("expected a JSON list of claim strings", raw=text, stage=stage)
    lines = _content_lines(text)
    listed = any(_BULLET.match(line) for line in lines)
    claims: list[str] = []
    unparsed: list[str] = []
    for stripped in lines:
        if len(stripped) > MAX_LINE:
            unparsed.append(stripped[:80] + "...")
            continue
        is_item = _BULLET.match(stripped) is not None
        body = _clean(_BULLET.sub("", stripped, count=1))
        if (listed and not is_item) or _no_claim(stripped) or not _usable((body,)):
            unparsed.append(stripped)
        else:
            claims.append(body)
    return ParsedClaims(_dedupe(claims), unparsed)


_LABEL_WORD = re.compile(
    r"\b(entail(?:ment|ed|s)?|neutral|contradict(?:ion|ed|s|ory)?)\b", re.IGNORECASE
)


def _canonical(word: str) -> str:
    w = word.lower()
    if w.startswith("entail"):
        return "Entailment"
    if w.startswith("contradict"):
        return "Contradiction"
    return "Neutral"


# A negation up to two words before a label word ("does not entail", "no contradiction", "rather
# than neutral"): the reply denies that label instead of giving it.
_NEGATION = re.compile(
    r"(?:\b(?:not|no|never|neither|nor|cannot|without|nothing|none|rather\s+than|instead\s+of)"
    r"|n't)(?:\s+\w+){0,2}\s+[*_\"'(\[]*$",
    re.I,
)
# The negation is looked for in this many characters before a label (two words and some marks):
# scanning the whole prefix for every mention would be quadratic.
_NEGATION_WINDOW = 120


def _asserted_labels(text: str) -> tuple[set[str], bool]:
    """Labels the text gives (negated mentions left out), and whether any mention was negated."""
    labels: set[str] = set()
    negated = False
    for m in _LABEL_WORD.finditer(text):
        before = text[max(0, m.start() - _NEGATION_WINDOW) : m.start()].replace("\u2019", "'")
        if _NEGATION.search(before):
            negated = True
        else:
            labels.add(_canonical(m.group(1)))
    return labels, negated


def parse_label(text: str, *, stage: str = "refchecker.check") -> str:
    """Read one checker label from ``text``.

    The text must give exactly one label: a reply that gives two different ones ("Entailment.
    On reflection, Contradiction") is ambiguous, even when its first word is a label. A negated
    mention ("the passages do not entail it", "no contradiction", "rather than neutral") does
    not count as giving that label. Only the first :data:`~truthguard._text.MAX_SCAN`
    characters are read.

    Raises:
        InvalidLLMOutput: No label, only negated ones, or several.
    """
    head, cut = capped(text)
    if _LABEL_WORD.search(head) is None:
        raise InvalidLLMOutput(
            f"no Entailment / Neutral / Contradiction label{scan_note(cut)}", raw=text, stage=stage
        )
    labels, _ = _asserted_labels(head)
    first = re.match(r"[\W_]{0,200}([^\W_]+)", head)
    if first and _LABEL_WORD.fullmatch(first.group(1)):
        labels.add(_canonical(first.group(1)))  # a leading label is given, whatever precedes it
    if not labels:
        raise InvalidLLMOutput(
            "the reply only negates labels and gives none", raw=text, stage=stage
        )
    if len(labels) > 1:
        raise InvalidLLMOutput(
            f"the reply gives several labels: {sorted(labels)}", raw=text, stage=stage
        )
    return labels.pop()


_NUMBERED = re.compile(r"^\s*(?:\**claim\s*)?(\d{1,6})\s*[.):\-](.*)$", re.IGNORECASE)


def parse_joint(text: str, n: int, *, stage: str = "refchecker.check.joint") -> list[str]:
    """Read the labels of ``n`` numbered claims checked jointly, or say why they do not align.

    Accepts ``"<i>. <label>"`` lines or a JSON list of ``n`` labels. The reply is misaligned
    when a number is missing, repeated or out of range, a numbered line gives no label, only a
    negated one or several, a line without a number gives a label (which claim is it for?), or
    a list has the wrong length.

    Raises:
        InvalidLLMOutput: The reply does not align with the claims (the reason says how).
    """

    def bad(why: str) -> InvalidLLMOutput:
        return InvalidLLMOutput(f"joint reply misaligned: {why}", raw=text, stage=stage)

    head, cut = capped(text)
    payload = _json_payload(head)
    if isinstance(payload, list):
        if len(payload) != n or not all(isinstance(x, str) for x in payload):
            raise bad(f"expected a list of {n} label strings")
        out = []
        for k, x in enumerate(payload, 1):
            labels, _ = _asserted_labels(x)
            if len(labels) != 1:
                raise bad(f"item {k} gives {len(labels)} labels")
            out.append(labels.pop())
        return out
    found: dict[int, str] = {}
    for line in head.splitlines():
        if not line.strip():
            continue
        m = _NUMBERED.match(line)
        if m is None:
            if _asserted_labels(line)[0]:
                raise bad(f"a label outside any numbered line: {line.strip()[:80]!r}")
            continue
        i = int(m.group(1))
        labels, _ = _asserted_labels(m.group(2))
        if i in found:
            raise bad(f"claim {i} is labelled twice")
        if not 1 <= i <= n:
            raise bad(f"claim number {i} is out of range 1-{n}")
        if len(labels) != 1:
            raise bad(f"line {i} gives {len(labels)} labels")
        found[i] = labels.pop()
    missing = [i for i in range(1, n + 1) if i not in found]
    if missing:
        raise bad(f"no label for claim(s) {missing[:10]}{scan_note(cut)}")
    return [found[i] for i in range(1, n + 1)]


def parse_joint_labels(text: str, n: int) -> list[str] | None:
    """:func:`parse_joint` returning None instead of raising when the reply is misaligned.

    The caller then re-asks claim by claim.
    """
    try:
        return parse_joint(text, n)
    except InvalidLLMOutput:
        return None
