"""What a claim is: a checkable statement of fact, or talk around one.

An answer mixes facts with things that are not facts about the world: questions back to the user
("Have you seen it?"), greetings and thanks, opinions and feelings ("I loved it", "you'll like
it"), hedges ("I'm not sure"), framing ("Here is a summary", "Based on the passages") and
refusals ("I don't know", "The context does not say"). None of these can be supported or
contradicted by a passage, so counting them against the answer would reject correct replies.

:func:`claim_kind` names the kind of one claim; :func:`strip_frame` removes a framing lead-in
so the statement after it is checked alone; :func:`refusal_turn` finds the statement that
follows an opening refusal in the same sentence ("I don't know when, but it was shot in
Rome"); :func:`claim_parts` cuts a sentence into claims with those rules, the way the local
extractor does; :func:`is_refusal` says whether an answer, taken whole, declines to answer
(some part of it refuses and no part states a fact). A name, number or title inside an opinion
("I love Tom Hanks in Zodiac") is still a fact: callers check those facts and only skip the
claim's other words.

Everything here is a rule over English wording, written for no data set.
"""

from __future__ import annotations

import re
from typing import Literal

from truthguard._text import has_content
from truthguard.refchecker.segment import iter_sentences, split_clauses
from truthguard.refchecker.structure import BINDING, DOCUMENTS, clause_cuts, remark

__all__ = [
    "ClaimKind",
    "attribution_names",
    "claim_kind",
    "claim_parts",
    "hedged_at",
    "is_refusal",
    "refusal_turn",
    "strip_frame",
]

ClaimKind = Literal["fact", "question", "greeting", "opinion", "hedge", "framing", "refusal"]

_I = r"(?:i|we)"
_YOU = r"(?:you|u)"

# Declining to answer, or saying the sources do not hold the answer.
_REFUSAL = re.compile(
    r"""^(?:(?:sorry|unfortunately|i'?m\ sorry|i\ am\ sorry|apologies)[,.!]?\s*(?:but\s*)?)?
    (?:
        (?:i|we)\s+(?:really\s+)?(?:do\s*n[o']t|don't|dont|did\s*n[o']t|cannot|can't|can\s+not|
            am\s+not\s+able\s+to|
            'm\s+not\s+able\s+to|am\s+unable\s+to|'m\s+unable\s+to|could\s*n[o']t|couldn't|
                have\s+no|do\s+not\s+have)
            \s*(?:think\s+(?:i|we)\s+)?
            (?:know|tell|say|answer|find|determine|have|see|confirm|be\s+sure|sure|idea|
                information|access)
      | (?:i\s*'?m\s+|i\s+am\s+)?not\s+sure\b
      | (?:i\s*'?m|i\s+am)\s+(?:unsure|uncertain)\b
      | not\s+that\s+(?:i|we)\s+(?:can\s+(?:see|tell|find)|know|recall|remember|'?m\s+aware|
          am\s+aware)\b
      | no\s+idea\b
      | (?:that|this|it|the\ answer)\s+(?:is|was)\s+(?:not|n't)\s+(?:mentioned|stated|given|
          provided|specified|said|clear|known|included|available)
      | (?:not|never)\s+(?:mentioned|stated|given|provided|specified|included|available|answered)\b
      | (?:the\s+)?(?:context|passages?|documents?|sources?|texts?|references?|articles?|
          information|provided\s+\w+)\s+
            (?:does|do|did)\s*(?:n[o']t|n't)\s+(?:say|mention|contain|provide|specify|include|
                state|give|tell|answer|cover|indicate)
      | there\s+(?:is|are)\s+no\s+(?:information|mention|details?|data|record|answer)
      | (?:the\s+)?(?:answer|information)\s+(?:is\s+)?(?:not|n't)\s+(?:in|available|found|provided)
      | (?:unknown|n/?a|none\ given|no\ answer)\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)

_GREETING = re.compile(
    r"""^(?:hi|hello|hey|greetings|good\s+(?:morning|afternoon|evening|luck|night)|thanks?|
        thank\s+you|
    you'?re\s+welcome|you\s+are\s+welcome|welcome|no\s+problem|my\s+pleasure|cheers|bye|goodbye|see\s+you|take\s+care|
    have\s+(?:a|fun)|enjoy|glad|happy\s+to\s+help|hope\s+(?:this|that|it|you)|of\s+course|sure|
        okay|ok|
    alright|yes|yeah|yep|yup|no|nope|oh|wow|haha|lol|great|cool|awesome|nice|right|indeed|
        absolutely|
    definitely|exactly|me\s+too|same\s+here|good\s+(?:question|choice|idea|pick))\b
    (?!\.?\s*\d)  # "No. 11 also reappears" numbers a character""",
    re.IGNORECASE | re.VERBOSE,
)

# Feelings, tastes and recommendations: first person, or a prediction of the user's taste.
_OPINION = re.compile(
    rf"""(?:^|\b)(?:
        {_I}\s+(?:really\s+|also\s+|absolutely\s+|just\s+|personally\s+|do\s+|would\s+|'d\s+|
            totally\s+|do\s*n[o']?t\s+|don't\s+|did\s*n[o']?t\s+|didn't\s+|never\s+|
            highly\s+|definitely\s+|still\s+|usually\s+|mostly\s+|often\s+)*
            (?:love|loved|like|liked|enjoy|enjoyed|adore|prefer|hate|dislike|think|thought|
                believe|feel|felt|watch|follow|listen\s+to|care\s+(?:for|about)|
            guess|suppose|hope|wish|recommend|suggest|find|found\s+it|agree|am\s+a\s+(?:big\s+|
                huge\s+)?fan|
            'm\s+a\s+(?:big\s+|huge\s+)?fan|would\s+say|'d\s+say|can\s+see\s+why|want|wanted|
                need|know\s+what\s+you\s+mean)\b
      | {_I}'?(?:m|\s+am|'ve|\s+have)\s+(?:not\s+)?(?:a\s+)?(?:big\s+|huge\s+)?(?:fan|glad|happy|
          sorry|
          excited|curious|
            interested|never|always|heard|been|seen|read|watched)\b
      | {_YOU}\s+(?:will|'ll|would|'d|might|may|should|could|must|can)\s+(?:really\s+|
          definitely\s+|probably\s+|also\s+)?
            (?:love|like|enjoy|check|try|want|find|appreciate|read|watch|see|consider|look)\b
      | {_YOU}'ll\s+(?:really\s+|definitely\s+|probably\s+|also\s+)?(?:love|like|enjoy|want|find|
          appreciate)\b
      | (?:it|that|this|they|he|she)\s*(?:'s|\s+is|\s+was|\s+are|\s+were|'re)\s+(?:such\s+|
          really\s+|very\s+|so\s+|also\s+|
            quite\s+|definitely\s+|one\s+of\s+)?(?:a\s+|an\s+|my\s+)?(?:great|good|fun|wonderful|
                amazing|excellent|awesome|
            nice|interesting|favou?rites?|classic|must|beautiful|fantastic|brilliant|lovely|
                terrific|cool|funny|
            hilarious|sad|scary|boring|overrated|underrated|worth|enjoyable|entertaining)\b
      | (?:my|our)\s+(?:all[-\s]time\s+)?favou?rite
      | (?:highly|definitely|strongly)\s+recommend
      | (?:sounds|looks|seems)\s+(?:like\s+)?(?:a\s+)?(?:good|great|fun|interesting|nice|cool|
          awesome)
      | ^(?:what\s+an?|such\s+an?)\s+\w+  # "What a game!", not "after such a crash"
      | (?:let\s+me\s+know|check\s+(?:it|them)\s+out|give\s+it\s+a\s+try)
    )""",
    re.IGNORECASE | re.VERBOSE,
)

_HEDGE = re.compile(
    r"""^(?:(?:i'?m|i\s+am)\s+not\s+(?:sure|certain)|not\s+sure|maybe|perhaps|possibly|probably|
    i\s+(?:could\s+be|might\s+be|may\s+be)\s+wrong|if\s+i\s+(?:remember|recall)\s+correctly|
        i\s+(?:don't|do\s+not)\s+know\s+(?:if|whether))\b""",
    re.IGNORECASE | re.VERBOSE,
)

# What the source is: the passage, the text, or "it" when it is the subject of a saying verb.
_SOURCE = r"(?:passage|text|context|source|article|document|reference|excerpt)s?(?:'s\s+\w+)?"
_SAYING = (
    r"(?:say|mention|name|describe|give|explain|specify|list|identify|address|discuss|state|"
    r"establish|confirm|cover|tell|include|provide|indicate|report|detail|clarify|go\s+into|"
    r"refer\s+to|make\s+clear|show|spell\s+out|reveal|answer|"
    r"use\s+the\s+(?:terms?|words?|phrases?|names?|expressions?))"
)
# "does not", "doesn't", "did not", "can't" ("ca" + "n't"), "cannot", "could not", "won't"
_NOT = r"(?:(?:does|do|did|could|would|will)\s*(?:not|n't)|can\s*not|can't|won't)"

# What the sources do not say, or what they are limited to ("The passage doesn't say when it
# closed", "but it doesn't identify which god that was", "It only discusses beetles"): a remark
# about the sources, not a fact about the world, so there is nothing in it to check. Whatever
# the passage is said not to do is such a remark ("The passage doesn't split donors into two
# types"); "it" is a source only before a saying verb ("it doesn't work" is about a thing). A text's
# silence is told in the simple present or past ("it doesn't say", "it can't confirm"; "they
# could not report everything to the governors" is about people), and only a text or a thought
# "suggests" ("the passage suggests"; "Mead suggests they kill everyone" is something Mead did).
_ABSENCE = re.compile(
    rf"""(?:
        \b{_SOURCE}\b[^.;]{{0,40}}?\b{_NOT}\s+(?!be\b)\w+
      | \b(?:it\s+(?:also\s+|only\s+|just\s+)?(?:(?:does|did)\s*(?:not|n't)|can\s*not|can't)
          |they\s+(?:also\s+|only\s+|just\s+)?(?:do|did)\s*(?:not|n't))\s+
            (?:\w+ly\s+)?{_SAYING}\b
      | \b(?:{_SOURCE}|it)\b[^.;]{{0,20}}?\bnever\s+(?:\w+ly\s+)?(?:says|said|mentions|
            mentioned|names|named|states|stated|gives|gave|specifies|identifies|explains|
            describes|tells|refers\s+to|makes\s+clear)\b
      | \b(?:says|said|tells?\s+us|mentions?)\s+nothing\b
      | \b(?:{_SOURCE}|it)\s+(?:only\s+|just\s+)?(?:covers|discusses|deals\s+with|concerns|
            talks\s+about|describes|addresses)\s+only\b
      | \b(?:{_SOURCE}|it)\s+only\s+(?:covers|discusses|deals\s+with|concerns|talks\s+about|
            describes|addresses|gives|mentions|says|refers\s+to|names|lists|identifies|
            states|specifies|provides)\b
      | \b(?:{_SOURCE}|it)\b[^.;]{{0,80}}?\bwithout\s+(?:\w+ly\s+)?(?:saying|mentioning|
            naming|specifying|explaining|stating|identifying|giving|telling)\b
      | \b(?:is|are|was|were)\s*(?:not|n't)\s+(?:even\s+)?mentioned\b
      | \b(?:{_SOURCE}|it)\s+(?:gives|names|lists|mentions|states|provides|offers|specifies|
            identifies)\s+only\b
      | \b{_SOURCE}\s+(?:\w+ly\s+)?(?:gives|names|lists|mentions|states|provides|offers|
            specifies|identifies)\b[^.;]{{0,40}}?\bonly\s+(?:for|about|of|to|in|on|at|with)\b
      | ^\W*(?:(?:and|but|so)\s+)?no\s+(?:[\w'-]+\s+){{0,4}}?(?:is|are|was|were)\s+
            (?:\w+ly\s+|ever\s+|even\s+)?(?:named|mentioned|stated|specified|listed)
            (?=\s*(?:[.;,!]|$)|\s+(?:in|by|for|anywhere|here|there|at\s+all)\b)
      | \b(?:is|are|was|were)\s*(?:not|n't)\s+(?:\w+ly\s+)?(?:stated|mentioned|given|named|
            specified|said|described|listed|included|spelled\s+out|explained|addressed|covered|
            identified|confirmed)\s+(?:in|by)\s+(?:the\s+|this\s+)?{_SOURCE}\b
      | ^\W*(?:the|this)\s+{_SOURCE}\b[^.;]*?\band\s+(?:\w+ly\s+)?{_NOT}\s+(?:\w+ly\s+)?
            {_SAYING}\b
      | \b{_SOURCE}\b[^.;]{{0,40}}?\b(?:stops|ends)\s+(?:there|at|before)\b
      | \b(?:{_SOURCE}|it)\s+(?:\w+ly\s+)?(?:gives|names|lists|offers|has)\s+(?:no|neither)\b
      | \b(?:it|they|{_SOURCE})\s+(?:does|did)\s*(?:not|n't)\s+quote\b
      | \b(?:{_SOURCE}|it|this|that|which)\s+(?:\w+ly\s+|also\s+)?(?:suggests?|suggested|
            implies|implied)\b
      | \b(?:it|this|that)(?:'s|\s+is|\s+was)\s+(?:only\s+|just\s+|merely\s+)?
            (?:suggested|implied|hinted)\b
      | \b(?:which|this|that)\s+(?:\w+ly\s+)?(?:points?|pointed)\s+to\b
      | ^it\s+(?:all\s+)?depends\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)

# A text named as where the answer comes from ("According to the leaflet,", "Going by the
# council's notice,", "Per the policy summary,"): a frame, whatever kind of text it is.
_TEXTS = "(?:" + "|".join(sorted(DOCUMENTS | BINDING)) + ")s?"

# Lead-ins that frame what follows without stating anything ("Based on the passages, X").
_FRAME = re.compile(
    rf"""^\s*(?:
        (?:here\s+is|here's|here\s+are|below\s+is)\s+(?:a|an|the|my)?\s*(?:brief\s+|short\s+|
            concise\s+|quick\s+)?
            (?:summary|answer|overview|response|rundown|recap)(?:\s+of\s+[^:,.]{{0,60}})?\s*[:.,-]?
      | (?:based\s+on|according\s+to|from|given|per|as\s+(?:stated|mentioned|
          described)\s+in)\s+(?:the|these|this|your|my)?\s*
            (?:provided\s+|given\s+|available\s+|retrieved\s+)?(?:passages?|context|documents?|
                sources?|texts?|article|
            information|references?|excerpts?|knowledge|data|records?)\s*(?:provided|given|above|
                below)?\s*[,:]?
      | (?:in\s+summary|to\s+summari[sz]e|in\s+short|in\s+brief|overall|to\s+sum\s+up|
          summary)\s*[,:]
      | (?:a\s+few|several|some|a\s+couple\s+of|two|three|four|five)\s+(?:things|points|
          notes|details|caveats)(?:\s+to\s+(?:note|know|keep\s+in\s+mind|bear\s+in\s+mind))?
          \s*[:.,-]
      | (?:going|judging)\s+by\s+(?:the|these|this)\s+(?:passages?|texts?|context|sources?|
          articles?|documents?)\s*[,:]?
      | (?:according\s+to|going\s+by|judging\s+by|based\s+on|per)\s+(?:the|this|these|your)\s+
          (?:[\w-]+(?:'s)?\s+){{0,2}}?{_TEXTS}\s*,
      | (?:the|this|these)\s+(?:passages?|texts?|context|sources?|articles?|documents?)\s+
            (?:also\s+|further\s+|itself\s+|clearly\s+)?(?:says|say|notes|note|states|
                state|adds|add|explains|mentions|reports|indicates|tells\s+us|confirms)
            (?:\s+that)?\s*[,:]?
      | it\s+(?:also|further)\s+(?:says|notes|adds|states|mentions|reports|explains)
            (?:\s+that)?\s*[,:]?
      | (?:the|this)\s+(?:passages?|texts?|context|sources?|articles?|documents?)\s+
            (?:also\s+|further\s+|only\s+)?(?!does\b|did\b|is\b|was\b|has\b)[a-z]+s
            (?:\s+that)?\s+
    )\s*""",
    re.IGNORECASE | re.VERBOSE,
)


# A reply's opening particle ("Yes, ...", "No, ...", "Well, ..."): it answers the user's
# question, and the statement after it carries the fact.
# "no", "well", "right", "sure", "okay" are also words of a statement ("no later theorist is
# named", "Well over half", "Right whales"): a particle only before a stop or a pronoun ("No, it
# was", "No it wasn't", "Well he did"), and never before a number ("No. 11").
_AFTER_PARTICLE = (
    r"(?!\.?\s*\d)(?=\s*(?:[,.!:;]|[-–—]\s|$)|\s+(?:it|he|she|they|i|we|you|that|this|there)\b)"
)
_PARTICLE = re.compile(
    r"^\s*(?:(?:yes|yeah|yep|yup|nope|nah|alright|oh|ah|wow|indeed|absolutely|definitely|"
    r"of\s+course|actually|hmm)\b|(?:no|sure|okay|ok|well|right)\b" + _AFTER_PARTICLE + r")"
    r"\s*[,.!:;]*(?:\s*[-–—](?=\s))?\s*(?:,\s*)?",
    re.IGNORECASE,
)


_ELLIPTICAL = re.compile(
    r"""^\s*(?:he|she|it|they|we|i|you|that|this|there)\s+
        (?:did|does|do|is|was|were|are|am|has|had|have|can|could|will|would|should|may|might|
        must|wo|ca)(?:n['’]t|\s+not)?\s*(?::|;|\s[-–—](?=\s))\s*""",
    re.IGNORECASE | re.VERBOSE,
)
"""An elliptical reply to a yes-or-no question opening a sentence before a colon or a dash
("He didn't: Tolley opposed it", "It was — the band formed in 1984"): the reply's stance, its
negation no fact; what follows says why."""


def strip_frame(text: str) -> tuple[str, int]:
    """``text`` without a framing lead-in, an opening particle or an elliptical reply ("He
    didn't:"), and where the rest starts."""
    at = 0
    for pattern in (_PARTICLE, _ELLIPTICAL, _FRAME, _PARTICLE):
        m = pattern.match(text[at:])  # "^" anchors at the slice's start
        end = at + m.end() if m else at
        if m and end < len(text.rstrip()) and text[end:].strip(" .:,;-!"):
            at = end
    return text[at:], at


def _norm(text: str) -> str:
    return " ".join(text.replace("’", "'").strip().strip("\"“”'").split())


_LEAD_CHARS = 300
"""Characters read for a refusal lead-in: one is a few words, and a long text is not copied."""


def _refusal_end(text: str) -> int | None:
    """Where the refusal ``text`` opens with ends (after an answering particle: "No, I don't
    know"), as an offset in ``text``; None when it opens with none."""
    t = text[:_LEAD_CHARS].replace("’", "'")  # same length: offsets stay those of ``text``
    at = len(t) - len(t.lstrip(" \t\n\"“”'"))
    m = _REFUSAL.match(t[at:])
    if m is None and (lead := _PARTICLE.match(t[at:])) is not None and lead.end():
        at += lead.end()
        m = _REFUSAL.match(t[at:])  # "^" anchors at the slice's start
    return None if m is None else at + m.end()


def claim_kind(text: str) -> ClaimKind:
    """The kind of one claim (a sentence or clause of an answer)."""
    t = _norm(text)
    if not t:
        return "greeting"
    if _refusal_end(t) is not None:
        return "refusal"
    if t.rstrip(")]\"'").endswith("?"):
        return "question"
    frame = _FRAME.match(t)
    if frame and not t[frame.end() :].strip(" .:,-"):
        return "framing"
    if t.endswith(":"):
        return "framing"  # a lead-in ("Key points:"): the items after it carry the facts
    if _HEDGE.match(t) or _ABSENCE.search(t) or remark(t):
        return "hedge"
    if _OPINION.search(t):
        return "opinion"
    if _QUALIFIED_REPLY.match(t):
        return "greeting"  # "Mostly, yes.": the reply's stance; the claims after it say why
    words = re.findall(r"[^\W\d_]+", t)
    greeting = _GREETING.match(t)
    if greeting and len(words) <= 4 and not _opens_a_statement(t, greeting):
        return "greeting"
    return "fact"


_QUALIFIED_REPLY = re.compile(
    r"""^(?:mostly|largely|generally|usually|mainly|partly|partially|basically|essentially|
        broadly|often|sometimes|some|in\s+part|in\s+short|in\s+most\s+cases|for\s+the\s+most\s+part|
        not\s+always|not\s+quite|not\s+really)\s*,?\s*(?:yes|no)\s*[.!]?$
      | ^(?:yes|no)?\s*,?\s*(?:not|only)\s+(?:fully|entirely|completely|quite|always|really|
        exactly|necessarily|in\s+full|partly|partially)\s*[.!]?$
      | ^(?:yes|no)?\s*,?\s*(?:but\s+)?(?:only\s+)?(?:in|under)\s+(?:some|certain|limited|
        specific|a\s+few)\s+(?:cases|circumstances|situations|conditions)\s*[.!]?$""",
    re.IGNORECASE | re.VERBOSE,
)
"""A yes or no with how far it holds ("Mostly, yes.", "In short, no.", "Not fully.", "Only in
certain cases."): a stance, no fact."""

_NAME_OPENERS = frozenset(("great", "nice", "good", "happy", "glad", "cool", "right", "sure"))
_WORD_OPENERS = frozenset(("no", "right"))


def _opens_a_statement(text: str, greeting: re.Match[str]) -> bool:
    """Whether a word that opens greetings opens a statement here: a name, right before a
    capitalised word ("Great Britain.", "Nice Airport"), or a word of the statement, not
    followed by a stop, a pronoun or another greeting and with two words after it ("No
    survivors were found", "Right whales feed here"), rather than a reply's mood ("Great,
    thanks", "No it isn't", "No worries")."""
    word = greeting.group(0).casefold()
    rest = text[greeting.end() :]
    if word in _NAME_OPENERS and re.match(r" [A-Z]", rest):
        return True
    return (
        word in _WORD_OPENERS
        and re.match(r"\s+[\w'-]+\s+[\w'-]", rest) is not None  # "No worries." is a mood
        and re.match(_AFTER_PARTICLE, rest, re.IGNORECASE) is None
        and _GREETING.match(rest.lstrip()) is None  # "No no no", "Right on"
    )


# A turn from a refusal to a statement in the same sentence: "I don't know when, but it was
# shot in Rome", "No information on Twisted, just that it was written by Laurie", "Not sure as
# he is ...". "as", "since", "because" only before a subject and its verb ("I don't know as
# much as you about it" goes on with no statement).
_TURN = re.compile(
    r"""(?<![\s,;:–—-])[\s,;:–—-]+  # from the start of a run only: no retry inside a long one
    (?:but|however|though|although|except(?:\s+that)?|
        # "only that it was written by Laurie"; "only that figure" names what the remark
        # leaves the sources: "that" points, it opens no statement
        (?:just|only)\s+that(?=\s+(?:(?:the|a|an|its|his|her|their|it|he|she|they|there|
            this|these|those|some|one)\b|(?-i:[A-Z0-9])))|
        other\s+than(?:\s+that)?|apart\s+from\s+that|besides(?:\s+that)?|
        (?:as|since|because)
            (?=\s+(?:he|she|it|they|we|i|you|there|this|that)
                (?:['’]\w|\s+(?:\w+ly\s+)?(?:is|was|are|were|has|had|have|does|did|do|can|
                    could|will|would|may|might|must|should)\b))
    )\b[\s,]*""",
    re.IGNORECASE | re.VERBOSE,
)


def refusal_turn(text: str, *, min_words: int = 4) -> tuple[int, int] | None:
    """Where the refusal ``text`` opens with gives way to a statement, or None.

    "I don't know when, but it was shot in Rome": the refusal is ``text[:end]`` and the
    statement after the connective, ``text[start:]``, is a claim of its own. A rest shorter than
    ``min_words`` words is no statement ("I can't tell anything but the year").

    Returns:
        ``(end, start)``: where the refusal ends and where the statement starts.
    """
    end = _refusal_end(text)
    if end is None:
        return None
    turn = _TURN.search(text, end)
    if turn is None or len(text[turn.end() :].split(maxsplit=min_words)) < min_words:
        return None
    return turn.start(), turn.end()


def claim_parts(
    sentence: str, *, min_words: int = 4, clauses: bool = True
) -> list[tuple[str, ClaimKind]]:
    """The claims of one answer sentence with their kinds, as the local extractor cuts them.

    The sentence is split at clause boundaries (``clauses``; pieces shorter than ``min_words``
    are glued to a neighbour), and a refusal that gives way to a statement ("I don't know when,
    but it was shot in Rome") is cut there: the statement is classified on its own.
    """
    pieces = split_clauses(sentence, min_words=min_words) if clauses else [sentence]
    if clauses:
        pieces = [q for piece in pieces for q in _joined_clauses(piece, min_words)]
    out: list[tuple[str, ClaimKind]] = []
    for piece in pieces:
        if out and out[-1][1] in _SCOPING and _goes_on(out[-1][0], piece):
            # "The passage doesn't say whether she returns or, if she does, | who plays her":
            # what the remark leaves open goes on in the next clause, and is no fact either
            out.append((piece, out[-1][1]))
            continue
        # a statement after a refusal may itself turn again; each cut reads only a lead-in
        while (cut := refusal_turn(piece, min_words=min_words)) is not None:
            out.append((piece[: cut[0]], "refusal"))
            piece = piece[cut[1] :]
        out.append((piece, claim_kind(piece)))
    return out


def _joined_clauses(piece: str, min_words: int) -> list[str]:
    """``piece`` cut before each "and" / "but" joining a verb with a subject of its own
    (:func:`~truthguard.refchecker.structure.clause_cuts`), each part ``min_words`` long."""
    if _refusal_end(piece) is not None:
        return [piece]  # "Not that I know of, but ...": the refusal's own turn cuts it
    out: list[str] = []
    start = 0
    for cut in [*clause_cuts(piece), len(piece)]:
        part = piece[start:cut].strip()
        if out and len(part.split()) < min_words:
            return [piece]  # a short part is no clause of its own: keep the piece whole
        if part:
            out.append(part)
        start = cut
    if any(len(p.split()) < min_words for p in out):
        return [piece]
    return out


_SCOPING: frozenset[ClaimKind] = frozenset({"hedge", "refusal"})
# A clause that goes on with what a remark about the sources leaves open: an alternative
# ("..., or whether it closed"), or a question word after one ("whether she returns or, if she
# does, | who plays her"). A relative clause after a plain remark ("doesn't say when it closed,
# which was in 1990") and a clause after a turn ("but") or a semicolon state something.
_ALTERNATIVE = re.compile(r"^\W*(?:or|nor|whether|if)\b", re.IGNORECASE)
_QUESTION_WORD = re.compile(r"^\W*(?:who|whom|whose|which|what|when|where|why|how)\b", re.I)
_OPEN = re.compile(r"\b(?:whether|or)\b", re.IGNORECASE)


def _goes_on(remark: str, piece: str) -> bool:
    return bool(_ALTERNATIVE.match(piece) or (_QUESTION_WORD.match(piece) and _OPEN.search(remark)))


_REFUSAL_SCAN = 3_000
"""Longest answer (in characters, white space included) read as a possible refusal."""


def is_refusal(answer: str) -> bool:
    """True when the answer declines to answer or says the sources lack it, and states nothing.

    The answer is cut into claims as the local extractor cuts it (:func:`claim_parts`): it is a
    refusal when some claim is one and none is a fact; questions, greetings, opinions and hedges
    may come with it ("I'm not sure. Do you like sci-fi?"). The reading stops at the first fact.
    """
    if len(answer) > _REFUSAL_SCAN:
        return False  # a refusal is short: never cut a long answer here (on the loop)
    refused = False
    for sentence in iter_sentences(answer):
        for piece, kind in claim_parts(sentence.text):
            if not has_content(piece):
                continue  # the extractor makes no claim of it
            if kind == "fact":
                return False
            refused = refused or kind == "refusal"
    return refused


_NAME_WORDS = r"[A-Z][\w'’.\-]*(?:\s+(?:and\s+)?[A-Z][\w'’.\-]*){0,3}"
_SAYS = (
    r"(?:says?|said|writes?|wrote|asks?|asked|argues?|argued|notes?|noted|tells?|told|adds?|"
    r"added)"
)
_ATTRIBUTION = re.compile(
    # "Salil Shetty: Countries that ...", "Ana Ruiz, Tom Hale: The city must ..."
    rf"^\s*(?P<lead>{_NAME_WORDS}(?:,\s+{_NAME_WORDS})?)\s*:"
    rf"|\b{_SAYS}\s+(?P<after>{_NAME_WORDS})"  # "..., writes Silvia Marchetti."
    rf"|(?P<before>{_NAME_WORDS})\s+{_SAYS}\b"  # "O'Mara says such cameras ..."
    # "According to the SOP, ...", "Per Forbes, ..." (a capital "Per" opens a clause; "$5 per GB"
    # attributes nothing)
    rf"|(?:\b[Aa]ccording\s+to|(?:^|(?<=[,;:(]\s))Per)\s+(?:the\s+)?(?P<source>{_NAME_WORDS})"
)
_HEDGED_NUMBER = re.compile(
    r"\b(?:more\s+than|less\s+than|fewer\s+than|at\s+least|at\s+most|about|around|nearly|"
    r"almost|over|under|up\s+to|some|roughly|approximately|an\s+estimated|estimated)\s+$",
    re.IGNORECASE,
)


def attribution_names(claim: str) -> set[str]:
    """The name words a claim attributes its statement to ("Salil Shetty: ...", "..., writes
    Silvia Marchetti", "O'Mara says ..."): who said it, not what is said about the world."""
    words: set[str] = set()
    for m in _ATTRIBUTION.finditer(claim):
        for group in ("lead", "after", "before", "source"):
            if m.group(group):
                words.update(w.strip(".,'’") for w in m.group(group).split())
    return words


def hedged_at(claim: str, start: int) -> bool:
    """Whether the number at ``start`` in ``claim`` is hedged ("more than 10", "at least four")."""
    return bool(_HEDGED_NUMBER.search(claim[max(0, start - 30) : start]))
