"""Prompt templates of Reverse Validation, written in our own words.

Each template names the part of the paper (Yang et al., 2023, "A New Benchmark and Reverse
Validation Method for Passage-level Hallucination Detection") it implements. The templates ask
what Table 2 of the paper asks, phrased differently. ``PROMPT_VERSION`` goes into every cache key:
bump it whenever a template changes.
"""

from __future__ import annotations

__all__ = [
    "EM_ANSWER",
    "EM_QUERY",
    "EM_QUERY_REBUILD",
    "ENTITY_EXTRACTION",
    "JUDGE",
    "PROMPT_VERSION",
    "QG_ANSWER",
    "QG_QUERY",
    "QG_QUERY_REBUILD",
]

PROMPT_VERSION = "rv-2026-11-1"

# Section 4.1, stage 1 ("extract the entity of user concern from the response"): used only when
# the caller does not pass the entity.
ENTITY_EXTRACTION = """Read the passage below and tell me which single entity (a person, place, \
organisation, thing or concept) it is mainly about.
Reply with the entity's name only, exactly as the passage spells it, with no other words.

Passage:
{passage}

Entity:"""

# Section 4.2 / Table 2, RV via QG, stage 1 (Construct Query): a question whose answer is the
# entity, built from all the passage's information, never naming the entity (label leakage).
QG_QUERY = """Below is a passage about {entity}. Write one question that uses all of the \
information in the passage and whose only correct answer is {entity}.
The question must not contain the name {entity} or any part of it.
Reply with the question only.

Passage:
{passage}

Question:"""

# Section 4.2, the "entity name cannot appear in the question" rule: one rebuild after a leak.
QG_QUERY_REBUILD = """Below is a passage about {entity}. Write one question that uses all of the \
information in the passage and whose only correct answer is {entity}.
An earlier attempt gave away the answer: it mentioned "{entity}". Describe it instead; do not \
write the name {entity}, nor any word of it, anywhere in the question.
Reply with the question only.

Passage:
{passage}

Question:"""

# Section 4.2 / Table 2, RV via QG, stage 2 (Access Databases): the shortest possible answer.
QG_ANSWER = """Answer the question below. Keep the answer as short as you can.

{query}"""

# Section 4.2 / Table 2, RV via EM, stage 1 (Construct Query): the features of the entity the
# passage mentions, as a numbered list of requirements without the entity's name.
EM_QUERY = """{passage}

Make a numbered list of every feature of {entity} that the text above mentions, one per line.
Do not write the name {entity} anywhere in the list."""

# Section 4.2, leakage rule applied to EM: one rebuild after a leak.
EM_QUERY_REBUILD = """{passage}

Make a numbered list of every feature of {entity} that the text above mentions, one per line.
An earlier list gave the name away. Refer to it only by description: the words "{entity}" must \
not appear anywhere in the list."""

# Section 4.2 / Table 2, RV via EM, stage 2 (Access Databases): name the entity that best meets
# the requirements and say what percentage of them it meets.
EM_ANSWER = """Which entity fits the description below?

{query}

If nothing fits every point, name the entity that fits the most points. Say what percentage of \
the points the entity you name satisfies."""

# Section 7.1 (fuzzy matching by an LLM, the optional judge of the robust matcher).
JUDGE = """Does the answer below name {entity}? An abbreviation, a shorter or a longer name of \
the same thing counts; a different thing does not.
Reply with "yes" or "no" only.

Answer:
{answer}"""
