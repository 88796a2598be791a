"""Validate the kept-aside finance RAG answer set (finance.jsonl).

Checks: JSON schema (exactly the expected fields and types), 120 rows, 24 rows per kind,
unique ids of the form kfin-NN-<kind>, label per kind, one question and identical contexts
for all five answers of a document, 2-3 passages per document, and that no answer sentence
is copied verbatim from the contexts. Prints the longest run of words an answer shares with
its contexts, for information only.

Usage: python validate_finance.py [path/to/finance.jsonl]
"""
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

FIELDS = {"id", "question", "contexts", "answer", "kind", "label", "note"}
LABELS = {"correct": "factual", "correct_joined": "factual", "hedge": "factual",
          "reworded_wrong": "hallucinated", "invented": "hallucinated"}
N_DOCS = 24
ID_RE = re.compile(r"^kfin-(\d{2})-(" + "|".join(LABELS) + r")$")


def norm(text):
    text = text.replace("\u2009", " ").replace("\u202f", " ").replace("\u00a0", " ")
    text = re.sub(r"[\u2018\u2019]", "'", text)
    text = re.sub(r"[\u201c\u201d]", '"', text)
    return re.sub(r"\s+", " ", text).strip().lower()


def sentences(text):
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def longest_shared_run(answer, context):
    a, c = norm(answer).split(), norm(context).split()
    best = 0
    prev = [0] * (len(c) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(c) + 1)
        for j in range(1, len(c) + 1):
            if a[i - 1] == c[j - 1]:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def main(path):
    errors = []
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            errors.append(f"line {n}: blank line")
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            errors.append(f"line {n}: bad JSON ({e})")
    if len(rows) != N_DOCS * len(LABELS):
        errors.append(f"expected {N_DOCS * len(LABELS)} rows, found {len(rows)}")

    ids = Counter(r.get("id") for r in rows)
    for rid, c in ids.items():
        if c > 1:
            errors.append(f"duplicate id {rid}")

    by_doc = defaultdict(list)
    for r in rows:
        rid = r.get("id")
        if set(r) != FIELDS:
            errors.append(f"{rid}: fields {sorted(r)} != {sorted(FIELDS)}")
            continue
        for f in ("id", "question", "answer", "kind", "label", "note"):
            if not isinstance(r[f], str):
                errors.append(f"{rid}: {f} is not a string")
        if not (isinstance(r["contexts"], list) and 2 <= len(r["contexts"]) <= 3
                and all(isinstance(c, str) and c.strip() for c in r["contexts"])):
            errors.append(f"{rid}: contexts must be a list of 2-3 non-empty strings")
            continue
        m = ID_RE.match(rid)
        if not m:
            errors.append(f"{rid}: id does not match kfin-NN-<kind>")
            continue
        if m.group(2) != r["kind"]:
            errors.append(f"{rid}: id kind != kind field {r['kind']}")
        if LABELS.get(r["kind"]) != r["label"]:
            errors.append(f"{rid}: label {r['label']} wrong for kind {r['kind']}")
        if r["kind"] != "correct" and not r["note"].strip():
            errors.append(f"{rid}: empty note")
        if not r["answer"].strip():
            errors.append(f"{rid}: empty answer")
        by_doc[m.group(1)].append(r)

    kinds = Counter(r.get("kind") for r in rows)
    for k in LABELS:
        if kinds.get(k, 0) != N_DOCS:
            errors.append(f"kind {k}: {kinds.get(k, 0)} rows, expected {N_DOCS}")
    if len(by_doc) != N_DOCS:
        errors.append(f"expected {N_DOCS} documents, found {len(by_doc)}")

    longest = []
    for doc, rs in sorted(by_doc.items()):
        if sorted(r["kind"] for r in rs) != sorted(LABELS):
            errors.append(f"doc {doc}: kinds {sorted(r['kind'] for r in rs)}")
        if len({json.dumps(r["contexts"], ensure_ascii=False) for r in rs}) != 1:
            errors.append(f"doc {doc}: contexts differ between answers")
        if len({r["question"] for r in rs}) != 1:
            errors.append(f"doc {doc}: question differs between answers")
        ctx = norm(" ".join(rs[0]["contexts"]))
        chars = len(" ".join(rs[0]["contexts"]))
        if not 700 <= chars <= 1800:
            errors.append(f"doc {doc}: contexts are {chars} characters (want 700-1800)")
        for r in rs:
            for s in sentences(r["answer"]):
                ns = norm(s)
                if len(ns.split()) >= 4 and ns in ctx:
                    errors.append(f"{r['id']}: sentence copied verbatim: {s!r}")
            longest.append((longest_shared_run(r["answer"], " ".join(r["contexts"])), r["id"]))

    longest.sort(reverse=True)
    print(f"rows: {len(rows)}; documents: {len(by_doc)}; kinds: {dict(sorted(kinds.items()))}")
    labels = Counter(r.get("label") for r in rows)
    print(f"labels: {dict(sorted(labels.items()))}")
    print("longest word runs shared with the contexts (info): "
          + ", ".join(f"{rid} {n}" for n, rid in longest[:5]))
    if errors:
        print(f"{len(errors)} problem(s):")
        for e in errors:
            print("  " + e)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    default = Path(__file__).with_name("finance.jsonl")
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else default))
