#!/usr/bin/env python3
"""Validate the kept-aside hand-written set policies_tech.jsonl.

Checks: JSON schema (exact fields and types), 120 rows, 24 documents x 5 kinds,
unique ids of the form kpol-NN-<kind>, the label that goes with each kind,
identical question and contexts for the five answers of a document, 2-3 contexts
per document totalling 700-1,800 characters, non-empty notes except for
`correct`, and that no answer sentence is copied verbatim from the contexts.

Usage: python validate_policies_tech.py [path/to/policies_tech.jsonl]
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
N_DOCS = 24
ID_RE = re.compile(r"^kpol-(\d{2})-(" + "|".join(LABELS) + r")$")


def norm(text):
    text = text.replace("\u2019", "'").lower()
    return re.sub(r"\s+", " ", text).strip()


def sentences(text):
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
        for f in FIELDS - {"contexts"}:
            if not isinstance(r[f], str):
                errors.append(f"line {n}: {f} is not a string")
        contexts = r["contexts"]
        listed = isinstance(contexts, list)
        if not listed or not all(isinstance(c, str) and c.strip() for c in contexts):
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
        if not r["answer"].strip():
            errors.append(f"line {n}: empty answer")
        if not r["question"].strip():
            errors.append(f"line {n}: empty question")
        if r["kind"] == "correct" and r["note"]:
            errors.append(f"line {n}: note should be empty for correct")
        if r["kind"] != "correct" and not r["note"].strip():
            errors.append(f"line {n}: note missing for {r['kind']}")
        docs[doc][r["kind"]] = (n, r)

        full = norm(" ".join(r["contexts"]))
        for s in sentences(r["answer"]):
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
    for doc, by_kind in sorted(docs.items()):
        if set(by_kind) != set(LABELS):
            errors.append(f"doc {doc}: kinds {sorted(by_kind)}")
        first = next(iter(by_kind.values()))[1]
        for kind, (n, r) in by_kind.items():
            if r["contexts"] != first["contexts"]:
                errors.append(f"doc {doc}: contexts differ for {kind} (line {n})")
            if r["question"] != first["question"]:
                errors.append(f"doc {doc}: question differs for {kind} (line {n})")
        ctx = first["contexts"]
        if not 2 <= len(ctx) <= 3:
            errors.append(f"doc {doc}: {len(ctx)} contexts, expected 2-3")
        total = len(" ".join(ctx))
        if not 700 <= total <= 1800:
            errors.append(f"doc {doc}: contexts total {total} characters, expected 700-1,800")

    labels = Counter(r["label"] for _, r in rows)
    if errors:
        print("\n".join(errors))
        print(f"FAILED: {len(errors)} problem(s)")
        return 1
    print(f"OK: {len(rows)} rows, {len(docs)} documents; kinds {dict(sorted(kinds.items()))}; "
          f"labels {dict(sorted(labels.items()))}")
    return 0


if __name__ == "__main__":
    default = Path(__file__).with_name("policies_tech.jsonl")
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else default))
