"""Prompt templates of the RefChecker detector, written for truthguard.

RefChecker (Hu et al., 2024, "RefChecker: Reference-based Fine-grained Hallucination Checker and
Benchmark for Large Language Models") splits a response into claims with an *extractor* LLM and
labels each claim against reference passages with a *checker* LLM. The templates below implement
those two stages in our own wording. They are :class:`~truthguard._text.FencedTemplate` objects,
rendered with ``.format(**fields)``: the question, the answer, the claims and the reference
passages are fenced between tagged markers they cannot close, the template says fenced text is
data, and the instruction is repeated after the data.
"""

from __future__ import annotations

from truthguard._text import FencedTemplate

__all__ = [
    "CHECK_PROMPT",
    "JOINT_CHECK_PROMPT",
    "PROMPT_VERSION",
    "SUBSENTENCE_EXTRACTION_PROMPT",
    "TRIPLET_EXTRACTION_PROMPT",
]

PROMPT_VERSION = "refchecker-v2"
"""Goes into cache keys: bump it whenever a template below changes."""

# Paper section 3.1 (claim extraction as knowledge triplets), conditioned on the question.
TRIPLET_EXTRACTION_PROMPT = FencedTemplate(
    """\
{data_note}

Break the answer below into the individual facts it states. Write each fact as a triplet \
("subject", "predicate", "object"), one triplet per line, with nothing else on the line. \
Use the question to complete facts the answer only implies (a bare "1912" answering "When did \
the Titanic sink?" is ("Titanic", "sank in", "1912")). Only extract: do not judge whether a fact \
is true. If the answer states no fact at all, write NONE.

Example
Question: Which company makes the Model S and where is it based?
Answer: The Model S is built by Tesla, a carmaker headquartered in Austin, Texas. It was first \
delivered in 2012.
Triplets:
("Model S", "is built by", "Tesla")
("Tesla", "is a", "carmaker")
("Tesla", "is headquartered in", "Austin, Texas")
("Model S", "was first delivered in", "2012")

Example
Question: How long is the Seine?
Answer: About 777 km.
Triplets:
("Seine", "has a length of", "about 777 km")

Now the real question and answer:
Question:
{question}

Answer:
{answer}

Write the triplets of the fenced answer, one per line, or NONE.
Triplets:
""",
    fenced=("question", "answer"),
)

# Paper section 3.1, the sub-sentence claim variant (claims as short stand-alone sentences).
SUBSENTENCE_EXTRACTION_PROMPT = FencedTemplate(
    """\
{data_note}

Rewrite the answer below as a list of short stand-alone claims. Each claim states one fact, \
names its subject explicitly (no "it" or "they"), and is written as a markdown bullet ("- "). \
Use the question to complete facts the answer only implies. Only extract: do not judge whether \
a claim is true. If the answer states no fact at all, write NONE.

Example
Question: How long is the Seine?
Answer: About 777 km, and it flows through Paris.
Claims:
- The Seine is about 777 km long.
- The Seine flows through Paris.

Now the real question and answer:
Question:
{question}

Answer:
{answer}

Write the claims of the fenced answer as "- " bullets, or NONE.
Claims:
""",
    fenced=("question", "answer"),
)

# Paper section 3.2 (checker): three labels; supported by any passage wins, then contradiction.
CHECK_PROMPT = FencedTemplate(
    """\
{data_note}

You compare one claim with reference passages. Decide, using ONLY the passages and not your \
own knowledge:
- Entailment: at least one passage supports the claim.
- Contradiction: no passage supports it and some passage says the opposite.
- Neutral: the passages neither support nor contradict it, or lack the information.

Question the claim answers:
{question}

Reference passages:
{reference}

Claim:
{claim}

Label the fenced claim against the fenced passages. Reply with exactly one word: Entailment, \
Neutral or Contradiction.
""",
    fenced=("question", "reference", "claim"),
)

# Paper section 3.2, batched: several claims labelled in one call (RefChecker's joint checking).
JOINT_CHECK_PROMPT = FencedTemplate(
    """\
{data_note}

You compare numbered claims with reference passages. For each claim decide, using ONLY the \
passages and not your own knowledge:
- Entailment: at least one passage supports the claim.
- Contradiction: no passage supports it and some passage says the opposite.
- Neutral: the passages neither support nor contradict it, or lack the information.

Question the claims answer:
{question}

Reference passages:
{reference}

Claims:
{claims}

Label each fenced claim against the fenced passages. Reply with one line per claim, in order, \
formatted "<number>. <label>" (for example "1. Entailment"), and nothing else. There are {n} \
claims.
""",
    fenced=("question", "reference", "claims"),
)
