#!/usr/bin/env python3
"""Validate the kept-aside hand-written set hr_health.jsonl.

Checks: JSON schema (exact fields and types), 80 rows, 16 documents x 5 kinds,
unique ids of the form khr-NN-<kind>, the label that goes with each kind,
identical question and contexts for the five answers of a document, 2-4 contexts
per document totalling 700-1,800 characters and 120-200 words, answers of 1-4
sentences, non-empty notes except for `correct` (reworded_wrong notes start with
"changed:", invented notes with "invented:" and quote the invented sentence, which
must occur in the answer), and that no answer sentence is copied verbatim from
the contexts.

Usage: python validate_hr_health.py [path/to/hr_health.jsonl]
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
N_DOCS = 16
ID_RE = re.compile(r"^khr-(\d{2})-(" + "|".join(LABELS) + r")$")


def norm(text):
    text = text.replace("\u2009", " ").replace("\u202f", " ").replace("\u00a0", " ")
    text = re.sub(r"[\u2018\u2019]", "'", text)
    text = re.sub(r"[\u201c\u201d]", '"', text)
    return re.sub(r"\s+", " ", text).strip().lower()


def sentences(text):
    """Sentences of an answer (split after . ! ? followed by white space)."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def clauses(text):
    """Sentences and clauses (also split at ; and :), for the verbatim-copy check."""
    parts = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s+", "", line)
        parts += re.split(r"(?<=[.!?;:])\s+", line)
    return [p.strip() for p in parts if p.strip()]


def main(path):
    errors = []
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            errors.append(f"line {n}: empty line")
            continue
        try:
            rows.append((n, json.loads(line)))
        except json.JSONDecodeError as e:
            errors.append(f"line {n}: invalid JSON ({e})")

    if len(rows) != N_DOCS * 5:
        errors.append(f"expected {N_DOCS * 5} rows, found {len(rows)}")

    ids = Counter()
    kinds = Counter()
    docs = defaultdict(dict)
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
        m = ID_RE.match(r["id"])
        if not m:
            errors.append(f"line {n}: bad id {r['id']!r}")
            continue
        doc, kind = m.group(1), m.group(2)
        if kind != r["kind"]:
            errors.append(f"line {n}: id kind {kind} != kind {r['kind']}")
        if r["kind"] not in LABELS:
            errors.append(f"line {n}: unknown kind {r['kind']!r}")
            continue
        kinds[r["kind"]] += 1
        if r["label"] != LABELS[r["kind"]]:
            errors.append(f"line {n}: label {r['label']!r} wrong for kind {r['kind']}")
        if not r["question"].strip():
            errors.append(f"line {n}: empty question")
        n_sent = len(sentences(r["answer"]))
        if not 1 <= n_sent <= 4:
            errors.append(f"line {n}: answer has {n_sent} sentences, expected 1-4")
        note = r["note"].strip()
        if r["kind"] == "correct" and note:
            errors.append(f"line {n}: note should be empty for correct")
        if r["kind"] != "correct" and not note:
            errors.append(f"line {n}: note missing for {r['kind']}")
        if r["kind"] == "reworded_wrong" and not note.startswith("changed:"):
            errors.append(f"line {n}: reworded_wrong note should start with 'changed:'")
        if r["kind"] == "invented":
            q = re.match(r'invented: "([^"]+)"', note)
            if not q:
                errors.append(f'line {n}: invented note should quote the sentence: invented: "..."')
            elif q.group(1) not in r["answer"]:
                errors.append(f"line {n}: quoted invented sentence not found in the answer")
        docs[doc][r["kind"]] = (n, r)

        full = norm(" ".join(r["contexts"]))
        for s in clauses(r["answer"]):
            s_n = norm(s).rstrip(".!?;:")
            if len(s_n) >= 25 and s_n in full:
                errors.append(f"line {n}: answer sentence copied from contexts: {s!r}")

    for i, c in ids.items():
        if c > 1:
            errors.append(f"duplicate id {i} ({c} times)")
    for k in LABELS:
        if kinds[k] != N_DOCS:
            errors.append(f"kind {k}: {kinds[k]} rows, expected {N_DOCS}")
    if len(docs) != N_DOCS:
        errors.append(f"expected {N_DOCS} documents, found {len(docs)}")
    questions = Counter()
    for doc, by_kind in sorted(docs.items()):
        if set(by_kind) != set(LABELS):
            errors.append(f"doc {doc}: kinds {sorted(by_kind)}")
        first = next(iter(by_kind.values()))[1]
        questions[first["question"]] += 1
        for kind, (n, r) in by_kind.items():
            if r["contexts"] != first["contexts"]:
                errors.append(f"doc {doc}: contexts differ for {kind} (line {n})")
            if r["question"] != first["question"]:
                errors.append(f"doc {doc}: question differs for {kind} (line {n})")
        answers = [r["answer"] for _, r in by_kind.values()]
        if len(set(answers)) != len(answers):
            errors.append(f"doc {doc}: two answers are identical")
        ctx = first["contexts"]
        if not 2 <= len(ctx) <= 4:
            errors.append(f"doc {doc}: {len(ctx)} contexts, expected 2-4")
        text = " ".join(ctx)
        if not 700 <= len(text) <= 1800:
            errors.append(f"doc {doc}: contexts total {len(text)} characters, expected 700-1,800")
        words = len(text.split())
        if not 120 <= words <= 200:
            errors.append(f"doc {doc}: {words} words, expected 120-200")
    for q, c in questions.items():
        if c > 1:
            errors.append(f"question used by {c} documents: {q!r}")

    labels = Counter(r["label"] for _, r in rows)
    if errors:
        print("\n".join(errors))
        print(f"FAILED: {len(errors)} problem(s)")
        return 1
    print(
        f"OK: {len(rows)} rows, {len(docs)} documents; kinds {dict(sorted(kinds.items()))}; "
        f"labels {dict(sorted(labels.items()))}"
    )
    return 0


if __name__ == "__main__":
    default = Path(__file__).with_name("hr_health.jsonl")
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else default))
