"""Prompt templates of the FEWL detector (written for truthguard, not copied from the paper).

``PROMPT_VERSION`` goes into every cache key: change it whenever a template changes, so stored
artifacts produced by an older wording are not reused.

The question is a user's text: it is fenced by :class:`~truthguard._text.FencedTemplate` between
tagged markers it cannot close (a question carrying "Answer: yes" or its own ``Question:``
header stays data), and the instruction is repeated after it.
"""

from __future__ import annotations

from truthguard._text import FencedTemplate

__all__ = [
    "IWCO_PROMPT",
    "PROMPT_VERSION",
    "REFERENCE_PROMPT",
    "SAMPLE_HINTS",
    "iwco_prompt",
    "reference_prompt",
]

PROMPT_VERSION = "fewl-v2"

# Algorithm 1, step 1 (section 2.3): a reference model answers the question on its own.
REFERENCE_PROMPT = FencedTemplate(
    """{data_note}

Answer the following question truthfully and to the point, in a few sentences at most.{hint}

Question:
{question}

Answer the fenced question in a few sentences at most.
Answer:""",
    fenced=("question",),
)

# "multi" mode (the paper's several answers from one model): a light, index-dependent nudge so
# repeated samples from one model are not verbatim copies even at low temperature.
SAMPLE_HINTS = (
    "",
    " Write your answer independently, in your own words.",
    " State the key fact first, then one supporting detail.",
    " Answer as you would to a curious student.",
    " Give the answer in a plain, encyclopedic tone.",
    " Mention the most specific fact you are confident about.",
)

# Section 2.1 and appendix D.1: R intentionally wrong (IW) answers, each followed by a corrected
# (CO) counterpart that rejects the error in other words rather than by inserting "not".
IWCO_PROMPT = FencedTemplate(
    """{data_note}

We are building test material for checking how well answers are grounded.

Question:
{question}

Write {n} different answers to the fenced question that are deliberately false but sound \
plausible. Right after each false answer, write a corrected counterpart: a true statement \
that refutes the false one using different wording, rather than just adding "not" to the \
false sentence. Vary how the corrections are phrased.

Reply with exactly {n} numbered pairs in this layout and nothing else:
1. Wrong: <false answer>
1. Corrected: <corrected statement>
2. Wrong: <false answer>
2. Corrected: <corrected statement>
...
{n}. Wrong: <false answer>
{n}. Corrected: <corrected statement>""",
    fenced=("question",),
)


def reference_prompt(question: str, sample: int = 0) -> str:
    """Prompt asking a reference model for its answer (``sample`` picks the multi-mode hint)."""
    hint = SAMPLE_HINTS[sample % len(SAMPLE_HINTS)] if sample else ""
    return REFERENCE_PROMPT.format(question=question.strip(), hint=hint)


def iwco_prompt(question: str, n: int) -> str:
    """Prompt asking the generator for ``n`` (wrong, corrected) answer pairs."""
    return IWCO_PROMPT.format(question=question.strip(), n=n)
