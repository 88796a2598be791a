"""``truthguard bench grounding``: does the default RefChecker reject answers with one wrong fact?

Every figure is a *decision* of ``RefChecker()`` at its defaults (or of the set-up given with
``--threshold`` / ``--score``), never a ranking:

* **CHALE** (reference = the long answer, HTML removed): the share of ``non-halu``, ``mid-halu``,
  ``halu`` and ``swap`` answers that pass (see ``bench refchecker`` for the swap answer), and the
  AUROC of the score, non-halu against each of the others.
* **Perturbations** derived here, in code, from CHALE references with a fixed seed. Sentences of
  6 to 45 words are taken from the references; each is used as an answer, either *copied* or
  *reworded* (detokenised, a fronted phrase moved to the end, common words replaced by synonyms).
  One fact is then replaced: a year (shifted by 1 to 30), a full date (the day or the month
  changed), a number written in digits (changed by a random step), a number word (another number
  word), a person / place / organisation (another name of the same kind found in another
  reference, by capitalisation and cue-word heuristics), a content noun (after a determiner,
  replaced by such a noun of another reference), or a negation added after an auxiliary verb or
  removed. The replacement never occurs in the sentence it replaces. Unchanged and reworded
  sentences are the controls. Reported: catch rate per type and variant, false alarms on
  controls.
* **Fixed cases**: the answers of the issue that introduced this benchmark.
* **Speed**: milliseconds per claim of the perturbation run, with the model loaded (warm), wall
  clock and CPU time of the process (all threads; steadier than wall on a shared machine).

No LLM is called: the detector is the local pipeline.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import time
from collections import defaultdict
from typing import Any, TypedDict

from truthguard import metrics
from truthguard._progress import progress
from truthguard._sync import run_sync
from truthguard.datasets import load_chale
from truthguard.datasets._loaders import strip_html

__all__ = [
    "FIXED_CASES",
    "HELP",
    "Perturbation",
    "add_arguments",
    "auroc",
    "build_perturbations",
    "format_table",
    "reword",
    "run",
]

HELP = "default RefChecker decisions: one-fact substitutions from CHALE, CHALE pass rates, speed"

FIXED_QUESTION = "Who made movable type, from what, and when?"
FIXED_REFERENCE = "Bi Sheng made movable type from baked clay in the eleventh century."
FIXED_CASES: list[tuple[str, bool]] = [
    ("Bi Sheng made movable type from baked clay in the eleventh century.", True),
    ("Bi Sheng made movable type from carved jade in the ninth century in Japan.", False),
    ("Bi Sheng made movable type from carved jade.", False),
    ("Gutenberg invented movable type in Japan in 1900.", False),
]
"""(answer, should pass) against :data:`FIXED_REFERENCE`."""

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

# -- rewording -------------------------------------------------------------------------------------

_SYNONYMS = {
    "began": "started",
    "begin": "start",
    "begins": "starts",
    "large": "big",
    "big": "large",
    "small": "little",
    "about": "around",
    "also": "additionally",
    "often": "frequently",
    "usually": "typically",
    "typically": "usually",
    "however": "nevertheless",
    "many": "numerous",
    "received": "got",
    "commonly": "frequently",
    "approximately": "roughly",
    "located": "situated",
    "called": "named",
    "known": "recognised",
    "became": "turned into",
    "created": "made",
    "built": "constructed",
    "used": "employed",
    "shows": "depicts",
    "show": "depict",
    "important": "significant",
    "several": "a number of",
    "main": "principal",
    "end": "finish",
    "ended": "finished",
    "help": "assist",
    "helped": "assisted",
    "allowed": "permitted",
    "released": "put out",
    "died": "passed away",
    "whole": "entire",
    "quickly": "rapidly",
    "near": "close to",
}

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
    candidates = [i for i, w in enumerate(words) if w.lower() in _SYNONYMS and w.islower()]
    for i in rng.sample(candidates, min(2, len(candidates))):
        words[i] = _SYNONYMS[words[i]]
    return " ".join(words)


# -- fact spotting (the generator's own heuristics, independent of the checker) -----------------

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_MONTH = "|".join(_MONTHS)
_DATE = re.compile(
    rf"\b(?:(?P<d1>\d{{1,2}})\s+(?P<m1>{_MONTH})\s*,?\s+(?P<y1>\d{{4}})"
    rf"|(?P<m2>{_MONTH})\s+(?P<d2>\d{{1,2}})\s*,\s*(?P<y2>\d{{4}}))\b"
)
_YEAR = re.compile(r"(?<![\w.,$])(1[0-9]{3}|20[0-9]{2})(?![\w%]|[.,]\d)")
_NUMBER = re.compile(r"(?<![\w.,$/-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w/]|[.,]\d|\s*%)")
_WORDS = [
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "fifteen",
    "twenty",
    "fifty",
]
_NUMWORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b")
_AUX = re.compile(
    r"\b(is|was|are|were|has|had|have|can|could|will|would|should|does|did)\s(?!not\b|n't)"
)
_NEG = re.compile(r"\s(?:not|never)\b|n't\b")
_CAP = r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
_NAME = re.compile(rf"(?<![\w.] )(?<=\s)({_CAP}(?:\s{_CAP}){{1,2}})\b")
_ORG_CUE = re.compile(
    r"\b(?:University|College|School|Company|Corporation|Inc|Records|Party|Association|Council|"
    r"Committee|Club|League|Department|Agency|Institute|Bank|Church|Army|Navy|Court|Commission|"
    r"Society|Foundation|Group|Network|Airlines|Studios|Museum|Board|Federation|Union|Times|"
    r"Post|Press|Ministry|Office|Service|Authority|Organization|Organisation|Team|Band)\b"
)
_PLACE_CUE = re.compile(r"\b(?:in|at|from|near|to|of)\s$")
_GIVEN_NAMES = frozenset(
    [
        "James",
        "John",
        "Robert",
        "Michael",
        "William",
        "David",
        "Richard",
        "Joseph",
        "Thomas",
        "Charles",
        "Christopher",
        "Daniel",
        "Matthew",
        "Anthony",
        "Mark",
        "Donald",
        "Steven",
        "Paul",
        "Andrew",
        "Joshua",
        "Kenneth",
        "Kevin",
        "Brian",
        "George",
        "Edward",
        "Ronald",
        "Timothy",
        "Jason",
        "Jeffrey",
        "Ryan",
        "Jacob",
        "Gary",
        "Nicholas",
        "Eric",
        "Jonathan",
        "Stephen",
        "Larry",
        "Justin",
        "Scott",
        "Brandon",
        "Benjamin",
        "Samuel",
        "Frank",
        "Gregory",
        "Raymond",
        "Alexander",
        "Patrick",
        "Jack",
        "Dennis",
        "Jerry",
        "Tyler",
        "Aaron",
        "Henry",
        "Adam",
        "Peter",
        "Nathan",
        "Zachary",
        "Walter",
        "Harold",
        "Kyle",
        "Carl",
        "Arthur",
        "Gerald",
        "Roger",
        "Keith",
        "Jeremy",
        "Terry",
        "Lawrence",
        "Sean",
        "Christian",
        "Albert",
        "Joe",
        "Ethan",
        "Austin",
        "Jesse",
        "Willie",
        "Billy",
        "Bryan",
        "Bruce",
        "Jordan",
        "Ralph",
        "Roy",
        "Noah",
        "Dylan",
        "Eugene",
        "Wayne",
        "Alan",
        "Juan",
        "Louis",
        "Russell",
        "Gabriel",
        "Randy",
        "Philip",
        "Harry",
        "Vincent",
        "Bobby",
        "Johnny",
        "Logan",
        "Mary",
        "Patricia",
        "Jennifer",
        "Linda",
        "Elizabeth",
        "Barbara",
        "Susan",
        "Jessica",
        "Sarah",
        "Karen",
        "Nancy",
        "Lisa",
        "Betty",
        "Margaret",
        "Sandra",
        "Ashley",
        "Kimberly",
        "Emily",
        "Donna",
        "Michelle",
        "Dorothy",
        "Carol",
        "Amanda",
        "Melissa",
        "Deborah",
        "Stephanie",
        "Rebecca",
        "Sharon",
        "Laura",
        "Cynthia",
        "Kathleen",
        "Amy",
        "Shirley",
        "Angela",
        "Helen",
        "Anna",
        "Brenda",
        "Pamela",
        "Nicole",
        "Emma",
        "Samantha",
        "Katherine",
        "Christine",
        "Debra",
        "Rachel",
        "Catherine",
        "Carolyn",
        "Janet",
        "Ruth",
        "Maria",
        "Heather",
        "Diane",
        "Virginia",
        "Julie",
        "Joyce",
        "Victoria",
        "Olivia",
        "Kelly",
        "Christina",
        "Lauren",
        "Joan",
        "Evelyn",
        "Judith",
        "Megan",
        "Cheryl",
        "Andrea",
        "Hannah",
        "Martha",
        "Jacqueline",
        "Frances",
        "Gloria",
        "Ann",
        "Teresa",
        "Kathryn",
        "Sara",
        "Janice",
        "Jean",
        "Alice",
        "Madison",
        "Doris",
        "Abigail",
        "Julia",
        "Judy",
        "Grace",
        "Denise",
        "Amber",
        "Marilyn",
        "Beverly",
        "Danielle",
        "Theresa",
        "Sophia",
        "Marie",
        "Diana",
        "Brittany",
        "Natalie",
        "Isabella",
        "Charlotte",
        "Rose",
        "Alexis",
        "Kayla",
        "Elvis",
        "Michael",
        "Taylor",
        "Justin",
        "Bob",
        "Tom",
        "Tim",
        "Steve",
        "Mike",
        "Chris",
        "Kate",
        "Jane",
        "Bill",
        "Dave",
        "Jim",
        "Ben",
        "Sam",
        "Max",
        "Jon",
        "Ray",
        "Lee",
        "Eddie",
        "Neil",
        "Ed",
        "Jimmy",
        "Freddie",
        "Kurt",
        "Stevie",
        "Marvin",
        "Ella",
        "Aretha",
        "Whitney",
        "Dolly",
        "Johnny",
    ]
)
_DETS = re.compile(r"\b(?:the|a|an|its|their|his|her)\s([a-z]{4,})\b")
_NOT_NOUN = re.compile(r"(?:ly|ed|ing|est|ous|ful|ive|able|ible|al|ic|ish|less)$")
_NOT_NOUN_WORDS = frozenset(
    [
        "first",
        "second",
        "third",
        "last",
        "next",
        "other",
        "same",
        "most",
        "many",
        "more",
        "only",
        "such",
        "same",
        "each",
        "every",
        "former",
        "latter",
        "whole",
        "entire",
        "early",
        "late",
        "new",
        "old",
        "original",
        "final",
        "following",
        "united",
    ]
)


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
    if first in _GIVEN_NAMES:
        return "person"
    if _PLACE_CUE.search(sentence[max(0, start - 6) : start]) and len(name.split()) <= 2:
        return "place"
    return None


def _names(sentence: str) -> list[tuple[int, int, str, str]]:
    out = []
    for m in _NAME.finditer(sentence):
        name = m.group(1)
        if any(w in _MONTHS for w in name.split()):
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
        if not any(w in _MONTHS or w in {"The", "A", "An"} for w in m.group(1).split())
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
    replaced."""
    reference: str
    """The whole reference the sentence was taken from."""
    kind: str
    """The replaced fact's type (one of :data:`TYPES`), or ``unchanged`` / ``reworded``."""
    variant: str
    """``copied`` or ``reworded``: the sentence the substitution was made in."""
    ref_id: int
    """Index of the reference (and of its CHALE item)."""
    replacement: str | None
    """The text put in place of the fact (None for controls; empty for a removed negation)."""


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
            if not _NOT_NOUN.search(w) and w not in _NOT_NOUN_WORDS:
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
            other = rng.choice([x for x in _MONTHS if x != month])
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
        put("written_number", m.start(), m.end(), rng.choice([w for w in _WORDS if w != m.group()]))
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
        if not _NOT_NOUN.search(m.group(1)) and m.group(1) not in _NOT_NOUN_WORDS
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
    references: list[str], *, per_type: int = 100, seed: int = 0
) -> list[Perturbation]:
    """The perturbation set: controls and one-fact substitutions, ``per_type`` per type and variant.

    Deterministic for given references, ``per_type`` and ``seed``.
    """
    from truthguard.refchecker.segment import split_sentences

    rng = random.Random(seed)
    sentences = [
        (r, s.text)
        for r, ref in enumerate(references)
        for s in split_sentences(ref)
        if 6 <= len(s.text.split()) <= 45 and s.text[:1].isupper()
    ]
    pools = _pools(sentences)
    order = list(range(len(sentences)))
    rng.shuffle(order)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    out: list[Perturbation] = []
    for idx in order:
        ref_id, sentence = sentences[idx]
        reworded = reword(sentence, rng)
        for variant, text in (("copied", sentence), ("reworded", reworded)):
            control = "unchanged" if variant == "copied" else "reworded"
            if counts[(control, variant)] < per_type:
                counts[(control, variant)] += 1
                out.append(
                    Perturbation(
                        answer=text,
                        reference=references[ref_id],
                        kind=control,
                        variant=variant,
                        ref_id=ref_id,
                        replacement=None,
                    )
                )
            for kind, (answer, new) in _substitutions(text, ref_id, pools, rng).items():
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
    return out


# -- metrics -------------------------------------------------------------------------------------


def auroc(positive: list[float], negative: list[float]) -> float | None:
    """P(a positive scores above a negative), ties counting half (Mann-Whitney)."""
    # truthguard.metrics counts the low-scoring (hallucinated) class as the positive one.
    labels = [False] * len(positive) + [True] * len(negative)
    return metrics.auroc([*positive, *negative], labels)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=None, help="only the first N CHALE questions")
    parser.add_argument(
        "--per-type", type=int, default=100, help="perturbations per type and variant"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the perturbation set")
    parser.add_argument(
        "--threshold", type=float, default=None, help="detector threshold (default: none)"
    )
    parser.add_argument(
        "--score",
        choices=("entailment_ratio", "mean_support", "min_support"),
        default=None,
        help="detector score mode (default: the detector's)",
    )
    parser.add_argument("--skip-chale", action="store_true", help="perturbations only")
    parser.add_argument("--batch", type=int, default=64, help="answers per abatch call")


def _passes(result: Any) -> bool:
    if result.passing is not None:
        return bool(result.passing)
    return result.label.value == "factual"


async def _run_all(detector: Any, inputs: list[dict[str, Any]], batch: int, show: bool) -> list:
    out: list = []
    chunks = [inputs[s : s + batch] for s in range(0, len(inputs), batch)]
    for n, chunk in enumerate(progress(chunks, desc="grounding", enabled=show)):
        if n == 0:
            await detector.aprefetch(chunk)
        # the next chunk is encoded while this one is checked (mostly Python, one core)
        nxt = chunks[n + 1] if n + 1 < len(chunks) else []
        ahead = asyncio.ensure_future(detector.aprefetch(nxt))
        out.extend(await detector.abatch(chunk))
        await ahead
    return out


def _n_claims(results: list) -> int:
    return sum(len(r.details.get("claims", [])) for r in results)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from truthguard.bench.refchecker import KINDS, build_answers
    from truthguard.refchecker import RefChecker
    from truthguard.similarity import get_default_similarity

    kwargs: dict[str, Any] = {"threshold": args.threshold, "batch_concurrency": 2}
    if args.score:
        kwargs["score"] = args.score
    detector = RefChecker(**kwargs)
    show = not args.no_progress
    items = load_chale(args.data)
    references = [strip_html(it.long_answer) for it in items]
    get_default_similarity().model  # load outside the timings  # noqa: B018

    fixed = []
    for answer, should_pass in FIXED_CASES:
        r = detector.invoke(
            {"question": FIXED_QUESTION, "answer": answer, "references": [FIXED_REFERENCE]}
        )
        fixed.append(
            {"answer": answer, "should_pass": should_pass, "passed": _passes(r), "score": r.score}
        )

    perturbations = build_perturbations(references, per_type=args.per_type, seed=args.seed)
    inputs = [
        {
            "question": items[p["ref_id"]].question,
            "answer": p["answer"],
            "references": [p["reference"]],
        }
        for p in perturbations
    ]
    started, cpu = time.perf_counter(), time.process_time()
    results = run_sync(_run_all(detector, inputs, args.batch, show))
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    n_claims = _n_claims(results)
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for p, r in zip(perturbations, results, strict=True):
        flagged = not _passes(r)
        for variant in (p["variant"], "all"):
            cell = table[p["kind"]][variant]
            cell[0] += flagged
            cell[1] += 1
    rates = {
        kind: {
            v: {"flagged": c[0], "n": c[1], "rate": 100.0 * c[0] / c[1]} for v, c in cols.items()
        }
        for kind, cols in table.items()
    }
    subs = [k for k in rates if k in TYPES]
    caught = sum(rates[k]["all"]["flagged"] for k in subs)
    total = sum(rates[k]["all"]["n"] for k in subs)
    controls = [k for k in rates if k not in TYPES]
    alarms = sum(rates[k]["all"]["flagged"] for k in controls)
    n_controls = sum(rates[k]["all"]["n"] for k in controls)
    out: dict[str, Any] = {
        "config": {
            "threshold": args.threshold,
            "score": detector.score,
            "verdict": detector.verdict,
            "checker": type(detector.checker).__name__,
            "per_type": args.per_type,
            "seed": args.seed,
        },
        "fixed_cases": fixed,
        "perturbations": {
            "rates": rates,
            "caught_overall": 100.0 * caught / max(total, 1),
            "false_alarms": 100.0 * alarms / max(n_controls, 1),
            "n": len(perturbations),
        },
        "ms_per_claim": 1000.0 * seconds / max(n_claims, 1),
        "cpu_ms_per_claim": 1000.0 * cpu_seconds / max(n_claims, 1),
        "claims": n_claims,
    }
    if args.skip_chale:
        return out
    chale_items = items[: args.limit] if args.limit else items
    answers = build_answers(chale_items)
    jobs = [(k, i) for k in KINDS for i in range(len(chale_items)) if answers[k][i] is not None]
    chale_inputs = [
        {
            "question": chale_items[i].question,
            "answer": answers[k][i],
            "references": [references[i]],
        }
        for k, i in jobs
    ]
    started, cpu = time.perf_counter(), time.process_time()
    chale_results = run_sync(_run_all(detector, chale_inputs, args.batch, show))
    chale_seconds, chale_cpu = time.perf_counter() - started, time.process_time() - cpu
    chale_claims = max(_n_claims(chale_results), 1)
    passed: dict[str, list[bool]] = defaultdict(list)
    scores: dict[str, list[float]] = defaultdict(list)
    for (k, _), r in zip(jobs, chale_results, strict=True):
        passed[k].append(_passes(r))
        scores[k].append(r.score if r.score is not None else 0.0)
    out["chale"] = {
        "n": len(chale_items),
        "pass_rate": {k: 100.0 * sum(v) / len(v) for k, v in passed.items()},
        "n_answers": {k: len(v) for k, v in passed.items()},
        "auroc": {k: auroc(scores["non_halu"], scores[k]) for k in KINDS if k != "non_halu"},
        "ms_per_claim": 1000.0 * chale_seconds / chale_claims,
        "cpu_ms_per_claim": 1000.0 * chale_cpu / chale_claims,
    }
    return out


def format_table(result: dict[str, Any]) -> str:
    """Catch rates per type and variant, false alarms, CHALE pass rates, fixed cases, speed."""
    p = result["perturbations"]
    lines = [
        f"config: {result['config']}",
        "",
        f"{'perturbation':<18} {'copied':>14} {'reworded':>14} {'all':>14}",
    ]
    order = [*TYPES, "unchanged", "reworded"]
    for kind in [k for k in order if k in p["rates"]]:
        cols = p["rates"][kind]
        cells = []
        for v in ("copied", "reworded", "all"):
            c = cols.get(v)
            cells.append(f"{c['rate']:5.1f}% ({c['n']:>3})" if c else f"{'-':>14}")
        name = kind if kind in TYPES else f"control:{kind}"
        lines.append(f"{name:<18} " + " ".join(f"{c:>14}" for c in cells))
    lines += [
        "",
        f"one-fact substitutions caught: {p['caught_overall']:.1f}%   "
        f"false alarms on controls: {p['false_alarms']:.1f}%",
        f"speed: {result['ms_per_claim']:.1f} ms/claim warm ({result['claims']} claims; "
        f"CPU {result['cpu_ms_per_claim']:.1f} ms/claim, all threads)",
        "",
        "fixed cases (reference: " + FIXED_REFERENCE + ")",
    ]
    for case in result["fixed_cases"]:
        ok = "ok  " if case["passed"] == case["should_pass"] else "FAIL"
        verdict = "passes  " if case["passed"] else "rejected"
        lines.append(f"  {ok} {verdict} {case['answer']}")
    if "chale" in result:
        c = result["chale"]
        lines += [
            "",
            f"CHALE ({c['n']} questions): share of answers passing, AUROC non-halu vs kind",
        ]
        for kind, rate in c["pass_rate"].items():
            a = c["auroc"].get(kind)
            extra = f"   AUROC {a:.3f}" if a is not None else ""
            lines.append(f"  {kind:<10} {rate:5.1f}% of {c['n_answers'][kind]}{extra}")
        lines.append(
            f"  speed: {c['ms_per_claim']:.1f} ms/claim (CPU {c['cpu_ms_per_claim']:.1f} ms/claim)"
        )
    return "\n".join(lines)
