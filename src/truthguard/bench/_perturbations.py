"""The one-fact perturbation set of ``truthguard bench grounding``, built in code with a seed.

Sentences of 6 to 45 words are taken from the references; each is used as an answer, either
*copied* or *reworded* (detokenised, a fronted phrase moved to the end, common words replaced by
synonyms). One fact is then replaced: a year (shifted by 1 to 30), a full date (the day or the
month changed), a number written in digits (changed by a random step), a number word (another
number word), a person / place / organisation (another name of the same kind found in another
reference, by capitalisation and cue-word heuristics), a content noun (after a determiner,
replaced by such a noun of another reference), or a negation added after an auxiliary verb or
removed. The replacement never occurs in the sentence it replaces. Unchanged and reworded
sentences are the controls.

A third variant, *passage*, sets each copied sentence (substituted, or unchanged for the control)
between its neighbouring sentences of the same reference, copied unchanged: the previous sentence
(if any), the sentence, the next sentence (if any), with the reference's own spacing. A sentence
that is the reference's only one gives no passage. A fourth, *long_passage*, takes up to two
neighbours on each side (four sentences or more in all: answers long enough for the decision to
weigh a wrong sentence among the others), and *long_reworded* does the same with the reworded
sentence. *long_reordered* sets there a sentence reworded more heavily, its clauses reordered on
top of the light rewording (:func:`reorder`; only sentences it can reorder), unchanged for the
control or with one fact replaced after the reordering. *long_invented* puts into each unchanged
long passage one sentence that is not a changed copy of a reference sentence but made up: another
document's sentence holding a name or year of this reference in place of its own (see
:func:`_invented`); its controls are the long passages without it. Passages are built after the
copied and reworded answers, without drawing from their generator (the last two draw from
generators seeded by the sentence), so those stay the same for a given seed.
"""

from __future__ import annotations

import math
import random
import re
from collections import defaultdict
from typing import TYPE_CHECKING, NotRequired, TypedDict

from truthguard.bench._wordlists import (
    GIVEN_NAMES,
    MONTHS,
    NOT_NOUN_WORDS,
    NUMBER_WORDS,
    SYNONYMS,
)

if TYPE_CHECKING:
    from truthguard.refchecker.segment import Span

__all__ = ["INVENTED", "TYPES", "Perturbation", "build_perturbations", "reorder", "reword"]

TYPES = (
    "year",
    "full_date",
    "number",
    "written_number",
    "person",
    "place",
    "organisation",
    "content_noun",
    "negation_added",
    "negation_removed",
)
INVENTED = ("person", "place", "organisation", "year")
"""The types of fact (of :data:`TYPES`) an invented sentence of ``long_invented`` takes from the
reference, in place of one of its own."""

# -- rewording -------------------------------------------------------------------------------------


_MONTH = "|".join(MONTHS)
_CAP = r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
_DETOK = [
    (re.compile(r"\s+([,.;:!?%)\]])"), r"\1"),
    (re.compile(r"([(\[])\s+"), r"\1"),
    (re.compile(r"\s+('s|'re|'ve|'ll|'d|n't)\b"), r"\1"),
    (re.compile(r"\s+-\s+"), "-"),
    (re.compile(r"``\s*|\s*''"), '"'),
]
_FRONTED = re.compile(r"^((?:In|On|At|During|By|After|Before|Since|From)\s[^,]{2,40}),\s+(\S)(.*)$")
_KEEP_CAPITAL = re.compile(r"^(?:I|[A-Z][a-z]*[A-Z]\w*|[A-Z]{2,}\w*)\b")


def reword(sentence: str, rng: random.Random) -> str:
    """A light rewording that keeps the meaning: spacing, phrase order, a few synonyms."""
    text = sentence
    for pattern, repl in _DETOK:
        text = pattern.sub(repl, text)
    m = _FRONTED.match(text)
    if m:  # "In 1990, the band split." -> "The band split in 1990."
        phrase, first, rest = m.groups()
        rest = rest.rstrip()
        end = rest[-1] if rest and rest[-1] in ".!?" else ""
        rest = rest[: len(rest) - len(end)] if end else rest
        first_word = first + rest.split(" ", 1)[0]
        lead = first if _KEEP_CAPITAL.match(first_word) else first.upper()
        text = f"{lead}{rest} {phrase[0].lower()}{phrase[1:]}{end or '.'}"
    words = text.split(" ")
    candidates = [i for i, w in enumerate(words) if w.lower() in SYNONYMS and w.islower()]
    for i in rng.sample(candidates, min(2, len(candidates))):
        words[i] = SYNONYMS[words[i]]
    return " ".join(words)


# Past participles not ending in "-ed", with their past tense ("X was built by Y" -> "Y built X")
_IRREGULAR = {
    "begun": "began",
    "bought": "bought",
    "brought": "brought",
    "built": "built",
    "chosen": "chose",
    "drawn": "drew",
    "driven": "drove",
    "found": "found",
    "given": "gave",
    "held": "held",
    "led": "led",
    "made": "made",
    "sent": "sent",
    "sold": "sold",
    "sung": "sang",
    "taken": "took",
    "taught": "taught",
    "won": "won",
    "written": "wrote",
}
_OBJECT_CASE = {"It": "it", "He": "him", "She": "her", "They": "them"}
# sentence-initial words that are not names, lowered when they stop being first
_NOT_A_NAME = frozenset(
    {"The", "A", "An", "This", "These", "That", "Those", "Its", "His", "Her", "Their", "It"}
    | {"He", "She", "They", "There", "Some", "Many", "Most", "All", "Each", "One", "Both"}
)
_CAPS = rf"(?:(?:Dr|Mr|Mrs|Ms|Prof|Sir|St)\.?\s)?{_CAP}(?:\s{_CAP}){{0,3}}"  # a name
_PASSIVE = re.compile(
    rf"^(?P<subj>(?:The|A|An|This|Its|His|Her|Their)\s[a-z][\w-]*(?:\s[a-z][\w'-]*){{0,4}}"
    rf"|It|He|She|They|{_CAPS})\s(?:was|were)\s(?P<verb>[a-z]+ed|{'|'.join(_IRREGULAR)})\sby\s"
    rf"(?P<agent>(?:the\s)?{_CAPS}(?:\sand\s{_CAPS})?)"
    r"(?P<rest>(?:\s(?:in|on|at|for|during|after|before|from|with|as)\s[^,;]*?)?)(?P<end>[.!?])$"
)
_TIME = rf"(?:in|on|since|during)\s(?:(?:{_MONTH})\s(?:\d{{1,2}},\s)?)?\d{{4}}"
# a time phrase and a name's phrase, in either order ("in Big in Japan" may be a title)
_PHRASE = rf"(?:by|in|at|from|near)\s(?:the\s)?{_CAPS}"
_TWO_PHRASES = re.compile(
    rf"\s(?:(?P<a>{_PHRASE})\s(?P<b>{_TIME})|(?P<c>{_TIME})\s(?P<d>{_PHRASE}))(?P<end>[.!])$"
)
_TRAILING = re.compile(rf"^(?P<head>[^,;]*?\S)\s(?P<phrase>{_TIME})(?P<end>[.!])$")
# a clause whose scope a fronted phrase would change ("A formed and B split in 1990")
_COMPOUND = re.compile(r"\b(?:and|or|but|which|who|that|when|where|while|because|until)\b")
# ... and, for a moved clause, its main clause ("Y happens as Z recedes as X rests")
_JOINED = re.compile(rf"{_COMPOUND.pattern}|\bas\b")
# a last clause that must stay where it is: "named after X", "came when X" (the verb needs it),
# "in 1878, when X" (it says what 1878 was)
_BOUND_VERB = re.compile(
    r"\b(?:named|renamed|called|modell?ed|patterned|looks?|looked|takes?|took|taken|goes|went|"
    r"came|comes?)$"
)
_WHEN_OF = re.compile(r"(?:\d|\b(?:time|day|year|moment|point|period)),?$")
# a pronoun put before the name it stands for would lose it
_PRONOUN = re.compile(r"\b(?:he|she|it|they|him|her|them|his|its|their)\b", re.IGNORECASE)
_FRONT_CLAUSE = re.compile(
    r"^(?P<clause>(?:When|While|After|Before|Because|Although|Though|As|Once|Until|Since|"
    r"Despite|Following|Upon|According\sto|In|On|At|During|By|From)\s"
    r"[^,;]{3,100}),\s(?P<main>(?!\w+ing\b)[^,;]+?)(?P<end>[.!])$"
)
_LAST_CLAUSE = re.compile(
    r"^(?P<main>[^,;]+?),?\s(?P<clause>(?:when|while|after|before|because|although|until|once)\s"
    r"[^,;]{3,100}?)(?P<end>[.!])$"
)
_PAIR = re.compile(rf"(?<!\S)(?P<a>{_CAPS})\sand\s(?P<b>{_CAPS})(?![\w'-]|\s[A-Z]|\.\S|\.\s\S)")


def _lower_first(text: str) -> str | None:
    """``text`` as it reads after something put before it: its first word lowered unless it is a
    name; None when that cannot be told (``Filming`` or ``Goku``)."""
    first, _, rest = text.partition(" ")
    if first in _NOT_A_NAME:
        return f"{first.lower()} {rest}"
    if first in GIVEN_NAMES or rest[:1].isupper() or _KEEP_CAPITAL.match(first):
        return text  # "Maria ...", "New York ...", "NASA ..."
    return None


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _whole(*parts: str) -> bool:
    """Each part closes its quotes and brackets (so moving it splits none)."""
    return all(p.count('"') % 2 == 0 and p.count("(") == p.count(")") for p in parts)


def _to_active(text: str) -> str | None:
    """``X was built by Y in 1790.`` -> ``Y built X in 1790.`` (simple clauses only)."""
    m = _PASSIVE.match(text)
    if not m:
        return None
    subj, verb, agent, rest, end = m.group("subj", "verb", "agent", "rest", "end")
    obj = _OBJECT_CASE.get(subj) or _lower_first(subj)
    if obj is None:
        return None
    return f"{_upper_first(agent)} {_IRREGULAR.get(verb, verb)} {obj}{rest}{end}"


def _swap_phrases(text: str) -> str | None:
    """``... by Y in 1987.`` -> ``... in 1987 by Y.``: the last two phrases of a sentence."""
    m = _TWO_PHRASES.search(text)
    if not m:
        return None
    first, second = m.group("a", "b") if m.group("a") else m.group("c", "d")
    return f"{text[: m.start()]} {second} {first}{m.group('end')}"


def _front(text: str) -> str | None:
    """``The museum opened in 1999.`` -> ``In 1999, the museum opened.``"""
    m = _TRAILING.match(text)
    if (
        not m
        or _COMPOUND.search(m.group("head"))
        or not _whole(m.group("head"))
        or m.group("head").endswith("ing")  # "a policy beginning in 1823"
    ):
        return None
    head, phrase, end = m.group("head", "phrase", "end")
    head = _lower_first(head)
    return f"{_upper_first(phrase)}, {head}{end}" if head else None


def _move_clause(text: str) -> str | None:
    """``As X, Y.`` -> ``Y as X.`` and ``Y before X.`` -> ``Before X, Y.`` (one clause each)."""
    if m := _FRONT_CLAUSE.match(text):
        clause, main, end = m.group("clause", "main", "end")
        first, second = main, clause
        out = f"{_upper_first(main)} {clause[0].lower()}{clause[1:]}{end}"
    elif (m := _LAST_CLAUSE.match(text)) and (lowered := _lower_first(m.group("main"))):
        main, clause, end = m.group("main", "clause", "end")
        if _BOUND_VERB.search(main) or (clause.startswith("when") and _WHEN_OF.search(main)):
            return None
        first, second = clause, main
        out = f"{_upper_first(clause)}, {lowered}{end}"
    else:
        return None
    if (
        not _whole(main, clause)
        or _JOINED.search(main)
        or _JOINED.search(clause.split(" ", 1)[1])
        or (_PRONOUN.search(first) and re.search(r"\b[A-Z][a-z]", second[1:]))
    ):
        return None
    return out


def _swap_pair(text: str) -> str | None:
    """``Kevin Eastman and Peter Laird`` -> ``Peter Laird and Kevin Eastman`` (names of as many
    words, not inside a longer name)."""
    for m in _PAIR.finditer(text):
        a, b = m.group("a", "b")
        before = text[: m.start()].split()
        if len(a.split()) != len(b.split()) or (before and before[-1] in {"of", "the", "'s"}):
            continue
        if before and before[-1][:1].isupper() and not before[-1].endswith(","):
            continue  # "Las Vegas Hotel and Casino": the pair is part of a longer name
        if a.split()[0] in _NOT_A_NAME or b.split()[0] in _NOT_A_NAME:
            continue
        return f"{text[: m.start()]}{b} and {a}{text[m.end() :]}"
    return None


def reorder(sentence: str, rng: random.Random) -> str | None:
    """A heavier rewording than :func:`reword`: that one, then its clauses reordered.

    A simple passive clause is made active (``The house was built by George Wood in 1790.`` ->
    ``George Wood built the house in 1790.``). Then a subordinate clause moves from the front to
    the end or the other way (``When the war ended, the band split.`` -> ``The band split when
    the war ended.``); else the last two phrases, a time and a name's, are swapped (``founded by
    Maria Okafor in 1987`` -> ``founded in 1987 by Maria Okafor``); else a trailing time phrase
    goes to the front (unless :func:`reword` has just moved it to the end). Last, two names
    joined by ``and`` change places (not enough alone). Each step keeps the meaning and every
    fact, and is taken only where the sentence is simple enough for that to hold: no clause
    whose scope would change, no quote or bracket split, no pronoun put before its name, no
    sentence start that may be a name lowered. None when no step applies (about one sentence in
    35 of CHALE's references is reordered).
    """
    light = reword(sentence, rng)
    active = _to_active(light)
    text = active or light
    moved = _move_clause(text) or _swap_phrases(text)
    if not moved and not _FRONTED.match(sentence.replace(" ,", ",")):
        moved = _front(text)
    if not (active or moved):
        return None  # two names swapped alone is no reordering of clauses
    text = moved or text
    return _swap_pair(text) or text


# -- fact spotting (the generator's own heuristics, independent of the checker) -----------------

_DATE = re.compile(
    rf"\b(?:(?P<d1>\d{{1,2}})\s+(?P<m1>{_MONTH})\s*,?\s+(?P<y1>\d{{4}})"
    rf"|(?P<m2>{_MONTH})\s+(?P<d2>\d{{1,2}})\s*,\s*(?P<y2>\d{{4}}))\b"
)
_YEAR = re.compile(r"(?<![\w.,$])(1[0-9]{3}|20[0-9]{2})(?![\w%]|[.,]\d)")
_NUMBER = re.compile(r"(?<![\w.,$/-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w/]|[.,]\d|\s*%)")
_NUMWORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b")
_AUX = re.compile(
    r"\b(is|was|are|were|has|had|have|can|could|will|would|should|does|did)\s(?!not\b|n't)"
)
_NEG = re.compile(r"\s(?:not|never)\b|n't\b")
_NAME = re.compile(rf"(?<![\w.] )(?<=\s)({_CAP}(?:\s{_CAP}){{1,2}})\b")
_ORG_CUE = re.compile(
    r"\b(?:University|College|School|Company|Corporation|Inc|Records|Party|Association|Council|"
    r"Committee|Club|League|Department|Agency|Institute|Bank|Church|Army|Navy|Court|Commission|"
    r"Society|Foundation|Group|Network|Airlines|Studios|Museum|Board|Federation|Union|Times|"
    r"Post|Press|Ministry|Office|Service|Authority|Organization|Organisation|Team|Band)\b"
)
_PLACE_CUE = re.compile(r"\b(?:in|at|from|near|to|of)\s$")
_DETS = re.compile(r"\b(?:the|a|an|its|their|his|her)\s([a-z]{4,})\b")
_NOT_NOUN = re.compile(r"(?:ly|ed|ing|est|ous|ful|ive|able|ible|al|ic|ish|less)$")


def _shift(value: int, rng: random.Random, low: int, high: int) -> int:
    return value + rng.choice([-1, 1]) * rng.randint(low, high)


def _fmt_like(original: str, value: float) -> str:
    if "." in original and "," not in original:
        decimals = len(original.split(".")[1])
        return f"{value:.{decimals}f}"
    if "," in original:
        return f"{int(value):,}"
    return str(int(value))


def _classify_name(sentence: str, start: int, name: str) -> str | None:
    first = name.split()[0]
    if first in GIVEN_NAMES:
        return "person"
    if _PLACE_CUE.search(sentence[max(0, start - 6) : start]) and len(name.split()) <= 2:
        return "place"
    return None


def _names(sentence: str) -> list[tuple[int, int, str, str]]:
    out = []
    for m in _NAME.finditer(sentence):
        name = m.group(1)
        if any(w in MONTHS for w in name.split()):
            continue
        kind = _classify_name(sentence, m.start(1), name)
        if kind == "person":
            out.append((m.start(1), m.end(1), name, kind))
    return out


def _place_words(sentence: str) -> list[tuple[int, int, str]]:
    # Capitalised words closing a locative phrase: "in Texas,", "from New Zealand ."
    return [
        (m.start(1), m.end(1), m.group(1))
        for m in re.finditer(
            rf"\b(?:in|at|from|near)\s({_CAP}(?:\s{_CAP})?)(?=\s?[,.;)]|\s(?:and|where)\b|$)",
            sentence,
        )
        if not any(w in MONTHS or w in {"The", "A", "An"} for w in m.group(1).split())
        and not re.search(r"(?:an|ish|ese|ic)$", m.group(1))
    ]


_ORG = re.compile(
    rf"(?<=\s)((?:{_CAP}\s(?:of\s(?:the\s)?)?){{0,3}}{_CAP})\b|(?<=\s)([A-Z]{{3,5}})\b"
)


def _organisations(sentence: str) -> list[tuple[int, int, str]]:
    out = []
    for m in _ORG.finditer(sentence):
        text = m.group(0)
        if m.group(2):
            if re.fullmatch(r"[IVXLCDM]+", text):
                continue  # roman numerals
        elif not _ORG_CUE.search(text):
            continue
        out.append((m.start(), m.end(), text))
    return out


class Perturbation(TypedDict):
    """One generated answer and what was done to it."""

    answer: str
    """The answer to check: a reference sentence, copied or reworded, maybe with one fact
    replaced; for the ``passage`` variant, that copied sentence between its unchanged neighbours
    in the reference."""
    reference: str
    """The whole reference the sentence was taken from."""
    kind: str
    """The replaced fact's type (one of :data:`TYPES`), or ``unchanged`` / ``reworded``; for
    ``long_invented``, the type of this reference's fact put in the invented sentence."""
    variant: str
    """``copied`` or ``reworded``: the sentence the substitution was made in; ``passage``: the
    copied sentence (substituted or not) between its previous and next sentences of the
    reference, those copied unchanged; ``long_passage``: the same with up to two sentences on
    each side; ``long_reworded``: the reworded sentence so set; ``long_reordered``: the sentence
    reworded with its clauses reordered (:func:`reorder`) so set; ``long_invented``: an
    unchanged long passage with an invented sentence after its middle one."""
    ref_id: int
    """Index of the reference (and of its CHALE item)."""
    replacement: str | None
    """The text put in place of the fact (None for controls; empty for a removed negation)."""
    donor_id: NotRequired[int]
    """For ``long_invented``: the reference the invented sentence was taken from."""


def _pools(sentences: list[tuple[int, str]]) -> dict[str, list[tuple[int, str]]]:
    pools: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for ref_id, s in sentences:
        for _, _, name, kind in _names(s):
            pools[kind].append((ref_id, name))
        for _, _, word in _place_words(s):
            pools["place"].append((ref_id, word))
        for _, _, org in _organisations(s):
            pools["organisation"].append((ref_id, org))
        for m in _DETS.finditer(s):
            w = m.group(1)
            if not _NOT_NOUN.search(w) and w not in NOT_NOUN_WORDS:
                pools["noun"].append((ref_id, w))
    return pools


def _pick(
    pool: list[tuple[int, str]], ref_id: int, sentence: str, rng: random.Random
) -> str | None:
    low = sentence.lower()
    for _ in range(20):
        other_ref, value = rng.choice(pool)
        if other_ref != ref_id and value.lower() not in low:
            return value
    return None


def _substitutions(
    sentence: str, ref_id: int, pools: dict[str, list[tuple[int, str]]], rng: random.Random
) -> dict[str, tuple[str, str]]:
    """Per type, one (perturbed sentence, replacement text) where the sentence allows it."""
    out: dict[str, tuple[str, str]] = {}

    def put(kind: str, start: int, end: int, new: str) -> None:
        if kind not in out and new and new not in sentence:
            out[kind] = (sentence[:start] + new + sentence[end:], new)

    dates = list(_DATE.finditer(sentence))
    date_spans = [(m.start(), m.end()) for m in dates]
    if dates:
        m = rng.choice(dates)
        day_key = "d1" if m.group("d1") else "d2"
        month_key = "m1" if m.group("m1") else "m2"
        if rng.random() < 0.5:
            day = int(m.group(day_key))
            new_day = (day + rng.randint(1, 27) - 1) % 28 + 1
            put("full_date", m.start(day_key), m.end(day_key), str(new_day))
        else:
            month = m.group(month_key)
            other = rng.choice([x for x in MONTHS if x != month])
            put("full_date", m.start(month_key), m.end(month_key), other)
    years = [
        m for m in _YEAR.finditer(sentence) if not any(s <= m.start() < e for s, e in date_spans)
    ]
    if years:
        m = rng.choice(years)
        put("year", m.start(), m.end(), str(_shift(int(m.group()), rng, 1, 30)))
    numbers = [
        m
        for m in _NUMBER.finditer(sentence)
        if not _YEAR.fullmatch(m.group()) and not any(s <= m.start() < e for s, e in date_spans)
    ]
    if numbers:
        m = rng.choice(numbers)
        value = float(m.group().replace(",", ""))
        step = max(1.0, round(abs(value) * rng.uniform(0.1, 0.6)))
        new_value = value + step if rng.random() < 0.5 or value - step <= 0 else value - step
        put("number", m.start(), m.end(), _fmt_like(m.group(), new_value))
    words = list(_NUMWORD.finditer(sentence))
    if words:
        m = rng.choice(words)
        put(
            "written_number",
            m.start(),
            m.end(),
            rng.choice([w for w in NUMBER_WORDS if w != m.group()]),
        )
    names = _names(sentence)
    for kind in ("person", "organisation", "place"):
        spans = [(s, e) for s, e, _, k in names if k == kind]
        if kind == "place":
            spans = [(s, e) for s, e, _ in _place_words(sentence)]
        elif kind == "organisation":
            spans = [(s, e) for s, e, _ in _organisations(sentence)]
        if spans and pools.get(kind):
            s, e = rng.choice(spans)
            new = _pick(pools[kind], ref_id, sentence, rng)
            if new:
                put(kind, s, e, new)
    nouns = [
        m
        for m in _DETS.finditer(sentence)
        if not _NOT_NOUN.search(m.group(1)) and m.group(1) not in NOT_NOUN_WORDS
    ]
    if nouns and pools.get("noun"):
        m = rng.choice(nouns)
        new = _pick(pools["noun"], ref_id, sentence, rng)
        if new:
            put("content_noun", m.start(1), m.end(1), new)
    negs = list(_NEG.finditer(sentence))
    if negs:
        m = rng.choice(negs)
        out["negation_removed"] = (sentence[: m.start()] + sentence[m.end() :], "")
    else:
        auxes = list(_AUX.finditer(sentence))
        if auxes:
            m = rng.choice(auxes)
            put("negation_added", m.end(1), m.end(1), " not")
    return out


def build_perturbations(
    references: list[str], *, per_type: int = 100, seed: int = 0, passages: bool = True
) -> list[Perturbation]:
    """The perturbation set: controls and one-fact substitutions, ``per_type`` per type and variant.

    Deterministic for given references, ``per_type`` and ``seed``. The copied and reworded
    answers come first, in the same order whether ``passages`` is set or not; with ``passages``,
    the ``passage``, ``long_passage``, ``long_reworded``, ``long_reordered`` and
    ``long_invented`` answers follow them, in that order (at most ``per_type`` per type each;
    see the module docstring).
    """
    from truthguard.refchecker.segment import split_sentences

    rng = random.Random(seed)
    splits = [split_sentences(ref) for ref in references]
    sentences: list[tuple[int, str]] = []
    places: list[int] = []  # each sentence's place in splits[ref_id]
    for r, spans in enumerate(splits):
        for i, s in enumerate(spans):
            if 6 <= len(s.text.split()) <= 45 and s.text[:1].isupper():
                sentences.append((r, s.text))
                places.append(i)
    pools = _pools(sentences)
    order = list(range(len(sentences)))
    rng.shuffle(order)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    out: list[Perturbation] = []
    # per variant, each answer with its sentence's place in the reference
    placed: dict[str, list[tuple[Perturbation, int]]] = {"copied": [], "reworded": []}
    for idx in order:
        ref_id, sentence = sentences[idx]
        reworded = reword(sentence, rng)
        for variant, text in (("copied", sentence), ("reworded", reworded)):
            control = "unchanged" if variant == "copied" else "reworded"
            subs = _substitutions(text, ref_id, pools, rng)
            for kind, (answer, new) in {control: (text, None), **subs}.items():
                if counts[(kind, variant)] < per_type:
                    counts[(kind, variant)] += 1
                    out.append(
                        Perturbation(
                            answer=answer,
                            reference=references[ref_id],
                            kind=kind,
                            variant=variant,
                            ref_id=ref_id,
                            replacement=new,
                        )
                    )
                    placed[variant].append((out[-1], places[idx]))
    if passages:
        for answers, width, variant in (
            (placed["copied"], 1, "passage"),
            (placed["copied"], 2, "long_passage"),
            (placed["reworded"], 2, "long_reworded"),
        ):
            out.extend(_passages(answers, splits, counts, per_type, width=width, variant=variant))
        drawn = [(sentences[idx], places[idx]) for idx in order]
        out.extend(_reordered(drawn, references, splits, pools, counts, per_type, seed=seed))
        controls = [(p, i) for p, i in placed["copied"] if p["kind"] == "unchanged"]
        out.extend(_invented(controls, splits, sentences, counts, per_type, seed=seed))
    return out


def _window(spans: list[Span], i: int, width: int) -> tuple[int, int] | None:
    """The first and last sentence of up to ``width`` on each side of sentence ``i``; None when
    that gives fewer than ``2 * width`` sentences in all."""
    lo, hi = max(i - width, 0), min(i + width, len(spans) - 1)
    return (lo, hi) if hi - lo + 1 >= 2 * width else None


def _passages(
    answers: list[tuple[Perturbation, int]],
    splits: list[list[Span]],
    counts: dict[tuple[str, str], int],
    per_type: int,
    *,
    width: int,
    variant: str,
) -> list[Perturbation]:
    """Each answer between up to ``width`` neighbouring sentences of its reference on each side
    (no randomness); the passage needs ``2 * width`` sentences or more in all."""
    out: list[Perturbation] = []
    for p, i in answers:
        spans = splits[p["ref_id"]]
        window = _window(spans, i, width)
        if window is None or counts[(p["kind"], variant)] >= per_type:
            continue
        counts[(p["kind"], variant)] += 1
        ref = p["reference"]
        first, here, last = spans[window[0]], spans[i], spans[window[1]]
        answer = ref[first.start : here.start] + p["answer"] + ref[here.end : last.end]
        out.append(Perturbation(**{**p, "answer": answer, "variant": variant}))
    return out


def _reordered(
    sentences: list[tuple[tuple[int, str], int]],
    references: list[str],
    splits: list[list[Span]],
    pools: dict[str, list[tuple[int, str]]],
    counts: dict[tuple[str, str], int],
    per_type: int,
    *,
    seed: int,
) -> list[Perturbation]:
    """The ``long_reordered`` answers: each sentence that :func:`reorder` reorders, as it
    reorders it (the ``reworded`` control) and with each fact that allows it replaced, among up
    to two unchanged neighbours each side (four sentences or more in all).

    ``sentences`` are ((ref_id, text), place in the reference), in the order the copied answers
    were drawn. Every draw comes from a generator seeded by ``seed`` and the sentence's place,
    never from the shared one, so the other answers stay as they were.
    """
    variant = "long_reordered"
    out: list[Perturbation] = []
    for (ref_id, sentence), i in sentences:
        spans, ref = splits[ref_id], references[ref_id]
        window = _window(spans, i, 2)
        if window is None:
            continue
        rng = random.Random(f"{variant}:{seed}:{ref_id}:{i}")
        text = reorder(sentence, rng)
        if text is None:
            continue
        first, here, last = spans[window[0]], spans[i], spans[window[1]]
        subs = _substitutions(text, ref_id, pools, rng)
        for kind, (answer, new) in {"reworded": (text, None), **subs}.items():
            if counts[(kind, variant)] >= per_type:
                continue
            counts[(kind, variant)] += 1
            out.append(
                Perturbation(
                    answer=ref[first.start : here.start] + answer + ref[here.end : last.end],
                    reference=ref,
                    kind=kind,
                    variant=variant,
                    ref_id=ref_id,
                    replacement=new,
                )
            )
    return out


# sentences that lean on one before them ("He ...", "It ...") are not taken as invented ones
_LEANS_BACK = re.compile(r"^(?:He|She|It|They|This|These|Those|His|Her|Its|Their|There)\b")


def _facts(text: str, kind: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each fact of ``kind`` (one of :data:`INVENTED`) in ``text``, found
    as the substitutions find them."""
    if kind == "year":
        return [(m.start(), m.end(), m.group()) for m in _YEAR.finditer(text)]
    if kind == "person":
        return [(s, e, name) for s, e, name, _ in _names(text)]
    return _place_words(text) if kind == "place" else _organisations(text)


def _topic_words(texts: list[str]) -> tuple[list[set[str]], dict[str, float]]:
    """Each text's words of four letters or more, and each word's weight: log(n / number of
    texts holding it), so that words of a topic count and common words hardly do."""
    words = [set(re.findall(r"[a-z]{4,}", t.lower())) for t in texts]
    df: dict[str, int] = defaultdict(int)
    for ws in words:
        for w in ws:
            df[w] += 1
    return words, {w: math.log(len(texts) / n) for w, n in df.items()}


def _invented(
    controls: list[tuple[Perturbation, int]],
    splits: list[list[Span]],
    sentences: list[tuple[int, str]],
    counts: dict[tuple[str, str], int],
    per_type: int,
    *,
    seed: int,
) -> list[Perturbation]:
    """The ``long_invented`` answers: each ``long_passage`` control with one invented sentence
    put after its middle sentence, one answer per type of fact in :data:`INVENTED`.

    The invented sentence is a sentence of another reference (another document: none of its
    sentences is one of this reference's) with one of its names or years replaced by one of this
    reference's, of the same type. That imitates a made-up statement in a long answer: it names
    what the answer is about or keeps the answer's dates, so part of it is found in the sources,
    and it reads like a sentence of a reference (a whole, fluent statement of a relation or an
    event), but the relation it states is in none of them. To keep it near the topic, it is the
    sentence (of 30 words at most) sharing the most weighted words with the passage, rare words
    weighing most; it does not start with a pronoun or "This" (which would lean on a sentence of
    its own document); no sentence is taken twice; and one sharing half its words or more with
    a sentence of this reference is not taken, so the statement is not true by chance. The name
    or year put in is one the passage states if it has one, else one stated elsewhere in the
    reference. Most CHALE passages have no other document on their topic, so the sentence is
    often off it: a statement made up on the topic (which would take an LLM to write) is harder
    still. Draws are seeded by ``seed`` and the passage's place, not by the shared generator.
    The false alarms of this variant are those of the ``long_passage`` controls: the same
    passages without the invented sentence.
    """
    variant = "long_invented"
    owners: dict[str, set[int]] = defaultdict(set)  # sentence text -> references holding it
    for r, spans in enumerate(splits):
        for span in spans:
            owners[span.text].add(r)
    donors = [(r, t) for r, t in sentences if len(t.split()) <= 30 and not _LEANS_BACK.match(t)]
    words, weight = _topic_words([t for _, t in donors])
    facts = {kind: [_facts(t, kind) for _, t in donors] for kind in INVENTED}
    used: set[int] = set()
    out: list[Perturbation] = []
    for p, i in controls:
        ref_id, ref, spans = p["ref_id"], p["reference"], splits[p["ref_id"]]
        window = _window(spans, i, 2)
        if window is None:
            continue
        first, here, last = spans[window[0]], spans[i], spans[window[1]]
        passage = ref[first.start : last.end]
        related = {r for span in spans for r in owners[span.text]}
        topic = set(re.findall(r"[a-z]{4,}", passage.lower()))
        ref_words = [set(re.findall(r"[a-z]{4,}", s.text.lower())) for s in spans]
        rng = random.Random(f"{variant}:{seed}:{ref_id}:{i}")
        ranked = sorted(
            ((sum(weight[w] for w in words[d] & topic), d) for d in range(len(donors))),
            key=lambda x: -x[0],
        )
        for kind in INVENTED:
            mine = sorted({f[2] for f in _facts(passage, kind) or _facts(ref, kind)})
            if not mine or counts[(kind, variant)] >= per_type:
                continue
            new = rng.choice(mine)
            best: list[int] = []  # the eligible donors of the highest score, ``top``
            top = 0.0
            for score, d in ranked:
                if best and score < top:
                    break
                r, text = donors[d]
                if (
                    r in related
                    or d in used
                    or new in text
                    or not [f for f in facts[kind][d] if f[2] not in ref]
                    or any(len(words[d] & w) * 2 >= len(words[d]) for w in ref_words)
                ):
                    continue
                best.append(d)
                top = score
            if not best:
                continue
            d = rng.choice(best)
            used.add(d)
            r, text = donors[d]
            start, end, _ = rng.choice([f for f in facts[kind][d] if f[2] not in ref])
            invented = text[:start] + new + text[end:]
            counts[(kind, variant)] += 1
            out.append(
                Perturbation(
                    answer=ref[first.start : here.end] + " " + invented + ref[here.end : last.end],
                    reference=ref,
                    kind=kind,
                    variant=variant,
                    ref_id=ref_id,
                    replacement=new,
                    donor_id=r,
                )
            )
    return out
