"""Parsers for the extractor and checker outputs (pure functions, no I/O).

Models format lists in many ways; these parsers accept quoted tuples, JSON lists and markdown
bullets, deduplicate, and report the lines they could not use. Output they cannot read at all
raises :class:`~truthguard.errors.InvalidLLMOutput` with the raw text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from truthguard.errors import InvalidLLMOutput

__all__ = [
    "LABELS",
    "ParsedClaims",
    "parse_joint_labels",
    "parse_label",
    "parse_subsentence_claims",
    "parse_triplets",
]

LABELS = ("Entailment", "Neutral", "Contradiction")
"""The checker's three labels, spelled as upstream spells them."""

Triplet = tuple[str, str, str]


@dataclass
class ParsedClaims:
    """What a parser got out of an extractor output."""

    claims: list[Any] = field(default_factory=list)
    """Deduplicated claims (triplets or sentences), in order of appearance."""
    unparsed: list[str] = field(default_factory=list)
    """Non-empty lines that yielded nothing."""


_NONE = re.compile(r"^\W*(none|no (facts?|claims?|triplets?)|n/?a|\[\s*\])\W*$", re.IGNORECASE)
_HEADER = re.compile(r"^\s*(#+\s*)?(kg|triplets?|claims?|answer|output)\s*:?\s*$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*```\w*\s*$")
_Q = r"""(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')"""
_QUOTED_TRIPLE = re.compile(r"[(\[]\s*" + _Q + r"\s*,\s*" + _Q + r"\s*,\s*" + _Q + r"\s*[)\]]")
_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
_BARE_TRIPLE = re.compile(r"^\(\s*([^(),]+?)\s*,\s*([^(),]+?)\s*,\s*([^()]+?)\s*\)\W*$")


def _clean(s: str) -> str:
    return " ".join(s.replace('\\"', '"').replace("\\'", "'").split())


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
    return parts if all(parts) else None  # type: ignore[return-value]


def _says_nothing(text: str) -> bool:
    """Empty, or only ``NONE`` once headers ("Triplets:") and code fences are set aside."""
    lines = [
        stripped
        for line in text.splitlines()
        if (stripped := line.strip()) and not _HEADER.match(stripped) and not _FENCE.match(stripped)
    ]
    return all(_NONE.match(line) for line in lines)


def parse_triplets(text: str, *, stage: str = "refchecker.extract") -> ParsedClaims:
    """Parse claim triplets from an extractor output.

    Accepts ``("s", "p", "o")`` tuples (single or double quotes, several per line), a JSON list of
    3-lists or of ``{"subject", "predicate", "object"}`` objects, and bullet lines holding an
    unquoted ``(s, p, o)`` or ``s | p | o``. An explicit ``NONE`` (or empty output) means no claims,
    also under an echoed header (``"Triplets:\\nNONE"``) or in a code fence.

    Raises:
        InvalidLLMOutput: The output is not empty, not ``NONE``, and holds no triplet.
    """
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
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or _HEADER.match(stripped) or _FENCE.match(stripped):
            continue
        quoted = _QUOTED_TRIPLE.findall(stripped)
        if quoted:
            for m in quoted:
                parts = tuple(_clean(m[i] or m[i + 1]) for i in (0, 2, 4))
                if all(parts):
                    triplets.append(parts)  # type: ignore[arg-type]
            continue
        body = _BULLET.sub("", stripped)
        bare = _BARE_TRIPLE.match(body)
        piped = [p.strip() for p in body.split("|") if p.strip()]
        if bare:
            triplets.append(tuple(_clean(g) for g in bare.groups()))  # type: ignore[arg-type]
        elif len(piped) == 3:
            triplets.append(tuple(_clean(p) for p in piped))  # type: ignore[arg-type]
        else:
            unparsed.append(stripped)
    if not triplets:
        raise InvalidLLMOutput("no claim triplet could be parsed", raw=text, stage=stage)
    return ParsedClaims(_dedupe(triplets), unparsed)


def parse_subsentence_claims(text: str, *, stage: str = "refchecker.extract") -> ParsedClaims:
    """Parse stand-alone claims: a JSON list of strings, bullets, numbered or plain lines.

    Raises:
        InvalidLLMOutput: The output is a JSON value that is not a list of strings.
    """
    if _says_nothing(text):
        return ParsedClaims()
    payload = _json_payload(text)
    if payload is not None:
        if isinstance(payload, list) and all(isinstance(x, str) for x in payload):
            return ParsedClaims(_dedupe([_clean(x) for x in payload if x.strip()]))
        raise InvalidLLMOutput("expected a JSON list of claim strings", raw=text, stage=stage)
    claims: list[str] = []
    unparsed: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or _HEADER.match(stripped) or _FENCE.match(stripped):
            continue
        body = _clean(_BULLET.sub("", stripped))
        if re.search(r"\w", body):
            claims.append(body)
        else:
            unparsed.append(stripped)
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


# A negation up to two words before a label word ("does not entail", "no contradiction"): the
# reply denies that label instead of giving it.
_NEGATION = re.compile(
    r"(?:\b(?:not|no|never|neither|nor|cannot)|n't)(?:\s+\w+){0,2}\s+[*_\"'(\[]*$", re.I
)


def _asserted_labels(text: str) -> tuple[set[str], bool]:
    """Labels the text gives (negated mentions left out), and whether any mention was negated."""
    labels: set[str] = set()
    negated = False
    for m in _LABEL_WORD.finditer(text):
        if _NEGATION.search(text[: m.start()].replace("\u2019", "'")):
            negated = True
        else:
            labels.add(_canonical(m.group(1)))
    return labels, negated


def parse_label(text: str, *, stage: str = "refchecker.check") -> str:
    """Read one checker label from ``text``.

    The answer's first word decides when it is a label; otherwise the text must name exactly
    one label (a reply mentioning two different labels is ambiguous). A negated mention ("the
    passages do not entail it", "no contradiction") does not count as giving that label.

    Raises:
        InvalidLLMOutput: No label, only negated ones, or an ambiguous one.
    """
    words = _LABEL_WORD.findall(text)
    if not words:
        raise InvalidLLMOutput(
            "no Entailment / Neutral / Contradiction label", raw=text, stage=stage
        )
    first = re.match(r"\W*(\w+)", text)
    if first and _LABEL_WORD.fullmatch(first.group(1)):
        return _canonical(first.group(1))
    labels, _ = _asserted_labels(text)
    if not labels:
        raise InvalidLLMOutput(
            "the reply only negates labels and gives none", raw=text, stage=stage
        )
    if len(labels) > 1:
        raise InvalidLLMOutput(f"ambiguous label: {sorted(labels)}", raw=text, stage=stage)
    return labels.pop()


_NUMBERED = re.compile(r"^\s*(?:claim\s*)?(\d+)\s*[.):\-]\s*(.+)$", re.IGNORECASE)


def parse_joint_labels(text: str, n: int) -> list[str] | None:
    """Read the labels of ``n`` numbered claims checked jointly.

    Accepts ``"<i>. <label>"`` lines or a JSON list of ``n`` labels. Returns None when the reply
    does not align with the claims (a number missing, repeated or out of range, a line without a
    label or with only a negated one, or a list of the wrong length); the caller then re-asks
    claim by claim.
    """
    payload = _json_payload(text)
    if isinstance(payload, list):
        if len(payload) != n or not all(isinstance(x, str) for x in payload):
            return None
        out = []
        for x in payload:
            labels, _ = _asserted_labels(x)
            if len(labels) != 1:
                return None
            out.append(labels.pop())
        return out
    found: dict[int, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        m = _NUMBERED.match(line)
        if m is None:
            continue
        i = int(m.group(1))
        labels, _ = _asserted_labels(m.group(2))
        if i in found or not 1 <= i <= n or len(labels) != 1:
            return None
        found[i] = labels.pop()
    if sorted(found) != list(range(1, n + 1)):
        return None
    return [found[i] for i in range(1, n + 1)]
