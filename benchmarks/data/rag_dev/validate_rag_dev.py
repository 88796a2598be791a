#!/usr/bin/env python3
"""Validate the readable development answer sets in this folder.

Each set has 8 invented documents, 2 questions per document and one answer of each of
the 5 kinds per question (80 rows). Checks: JSON schema (exact fields and types), the
row count, unique ids of the form <prefix>-NN<a|b>-<kind>, the label that goes with each
kind, identical question and contexts for the five answers of a question, two different
questions per document, 2-4 contexts per question, 3-6 distinct passages per document of
60-160 words each, no passage shared by two documents, answers of 1-4 sentences,
non-empty notes except for `correct` (reworded_wrong notes start with "changed:",
invented notes quote the invented text, which must occur in the answer), and that no
answer sentence or clause (25 characters or more) is copied verbatim from the contexts.

Usage: python validate_rag_dev.py [FILE ...]   (default: every *.jsonl beside this script)
Exit status 0 when every check passes, 1 otherwise.
"""

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

FIELDS = {"id", "question", "contexts", "answer", "kind", "label", "note"}
LABELS = {
    "correct": "factual",
    "correct_joined": "factual",
    "hedge": "factual",
    "reworded_wrong": "hallucinated",
    "invented": "hallucinated",
}
PREFIXES = {
    "bills_study_shopping": "devbs",
    "devices_code_rules": "devdc",
    "contracts_releases": "devcr",
    "encyclopedia_news": "deven",
    "money_home_leisure": "devmh",
    "ops_hospitality": "devoh",
    "reports_savings_tax": "devrs",
    "public_services_health": "devph",
    "science_transport": "devst",
    "travel_property_clubs": "devtp",
    "utilities_hire_care": "devuh",
    "work_money_cover": "devwm",
}
N_DOCS = 8
N_QUESTIONS = 2


def norm(text):
    text = text.replace("\u2009", " ").replace("\u202f", " ").replace("\u00a0", " ")
    text = re.sub(r"[\u2018\u2019]", "'", text)
    text = re.sub(r"[\u201c\u201d]", '"', text)
    return re.sub(r"\s+", " ", text).strip().lower()


def sentences(text):
    """Sentences of an answer (split after . ! ? and white space, not after i.e. / e.g.)."""
    text = re.sub(r"\b(i\.e|e\.g)\.", r"\1", text)
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def clauses(text):
    """Sentences and clauses (also split at ; and :), for the verbatim-copy check."""
    parts = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s+", "", line)
        parts += re.split(r"(?<=[.!?;:])\s+", line)
    return [p.strip() for p in parts if p.strip()]


def check(path):
    path = Path(path)
    errors = []
    prefix = PREFIXES.get(path.stem)
    if prefix is None:
        return [f"{path.name}: unknown set (expected one of {sorted(PREFIXES)})"], None
    id_re = re.compile(rf"^{prefix}-(\d{{2}})([ab])-(" + "|".join(LABELS) + r")$")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            errors.append(f"line {n}: empty line")
            continue
        try:
            rows.append((n, json.loads(line)))
        except json.JSONDecodeError as e:
            errors.append(f"line {n}: invalid JSON ({e})")
    expected = N_DOCS * N_QUESTIONS * len(LABELS)
    if len(rows) != expected:
        errors.append(f"expected {expected} rows, found {len(rows)}")

    ids = Counter()
    kinds = Counter()
    groups = defaultdict(dict)
    for n, r in rows:
        if set(r) != FIELDS:
            errors.append(f"line {n}: fields {sorted(r)} != {sorted(FIELDS)}")
            continue
        if not all(isinstance(r[f], str) for f in FIELDS - {"contexts"}):
            errors.append(f"line {n}: a field other than contexts is not a string")
            continue
        if not (
            isinstance(r["contexts"], list)
            and all(isinstance(c, str) and c.strip() for c in r["contexts"])
        ):
            errors.append(f"line {n}: contexts must be a list of non-empty strings")
            continue
        ids[r["id"]] += 1
        m = id_re.match(r["id"])
        if not m:
            errors.append(f"line {n}: bad id {r['id']!r}")
            continue
        doc, q, kind = m.groups()
        if kind != r["kind"]:
            errors.append(f"line {n}: id kind {kind} != kind {r['kind']}")
            continue
        kinds[kind] += 1
        if r["label"] != LABELS[kind]:
            errors.append(f"line {n}: label {r['label']!r} wrong for kind {kind}")
        if not r["question"].strip():
            errors.append(f"line {n}: empty question")
        n_sent = len(sentences(r["answer"]))
        if not 1 <= n_sent <= 4:
            errors.append(f"line {n}: answer has {n_sent} sentences, expected 1-4")
        note = r["note"].strip()
        if kind == "correct" and note:
            errors.append(f"line {n}: note should be empty for correct")
        if kind != "correct" and not note:
            errors.append(f"line {n}: note missing for {kind}")
        if kind == "reworded_wrong" and not note.startswith("changed:"):
            errors.append(f"line {n}: reworded_wrong note should start with 'changed:'")
        if kind == "invented":
            quoted = re.match(r'invented: "([^"]+)"$', note)
            if not quoted:
                errors.append(f'line {n}: invented note should be: invented: "..."')
            elif quoted.group(1) not in r["answer"]:
                errors.append(f"line {n}: quoted invented text not found in the answer")
        full = norm(" ".join(r["contexts"]))
        for s in clauses(r["answer"]):
            s_n = norm(s).rstrip(".!?;:")
            if len(s_n) >= 25 and s_n in full:
                errors.append(f"line {n}: answer clause copied from contexts: {s!r}")
        groups[(doc, q)][kind] = (n, r)

    for i, c in ids.items():
        if c > 1:
            errors.append(f"duplicate id {i} ({c} times)")
    for k in LABELS:
        if kinds[k] != N_DOCS * N_QUESTIONS:
            errors.append(f"kind {k}: {kinds[k]} rows, expected {N_DOCS * N_QUESTIONS}")

    passages_of = defaultdict(set)
    questions_of = defaultdict(set)
    for (doc, q), by_kind in sorted(groups.items()):
        if set(by_kind) != set(LABELS):
            errors.append(f"question {doc}{q}: kinds {sorted(by_kind)}")
        first = next(iter(by_kind.values()))[1]
        for kind, (n, r) in by_kind.items():
            if r["contexts"] != first["contexts"]:
                errors.append(f"question {doc}{q}: contexts differ for {kind} (line {n})")
            if r["question"] != first["question"]:
                errors.append(f"question {doc}{q}: question differs for {kind} (line {n})")
        answers = [r["answer"] for _, r in by_kind.values()]
        if len(set(answers)) != len(answers):
            errors.append(f"question {doc}{q}: two answers are identical")
        ctx = first["contexts"]
        if not 2 <= len(ctx) <= 4:
            errors.append(f"question {doc}{q}: {len(ctx)} contexts, expected 2-4")
        if len(set(ctx)) != len(ctx):
            errors.append(f"question {doc}{q}: a passage is repeated in its contexts")
        passages_of[doc].update(ctx)
        questions_of[doc].add(first["question"])

    if len(passages_of) != N_DOCS:
        errors.append(f"expected {N_DOCS} documents, found {len(passages_of)}")
    owner = {}
    for doc, passages in sorted(passages_of.items()):
        if len(questions_of[doc]) != N_QUESTIONS:
            errors.append(f"doc {doc}: {len(questions_of[doc])} distinct questions")
        if not 3 <= len(passages) <= 6:
            errors.append(f"doc {doc}: {len(passages)} distinct passages, expected 3-6")
        for p in passages:
            words = len(p.split())
            if not 60 <= words <= 160:
                errors.append(f"doc {doc}: passage of {words} words, expected 60-160: {p[:50]!r}")
            if p in owner:
                errors.append(f"passage shared by documents {owner[p]} and {doc}: {p[:50]!r}")
            owner[p] = doc
    all_questions = Counter(q for qs in questions_of.values() for q in qs)
    for q, c in all_questions.items():
        if c > 1:
            errors.append(f"question used by {c} documents: {q!r}")
    summary = (
        f"{path.name}: {len(rows)} rows, {len(passages_of)} documents, "
        f"{sum(len(p) for p in passages_of.values())} passages; "
        f"kinds {dict(sorted(kinds.items()))}; "
        f"labels {dict(sorted(Counter(r['label'] for _, r in rows).items()))}"
    )
    return errors, summary


def main(paths):
    failed = 0
    for path in paths:
        errors, summary = check(path)
        if errors:
            failed += 1
            print("\n".join(f"{Path(path).name}: {e}" for e in errors))
            print(f"FAILED {Path(path).name}: {len(errors)} problem(s)")
        else:
            print(f"OK {summary}")
    return 1 if failed else 0


if __name__ == "__main__":
    here = Path(__file__).parent
    sys.exit(main(sys.argv[1:] or sorted(here.glob("*.jsonl"))))
