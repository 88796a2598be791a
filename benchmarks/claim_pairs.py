"""How the default check decides hand-written claim-evidence pairs, by kind of change.

    python benchmarks/claim_pairs.py benchmarks/data/claims_relations/*.jsonl [--json]

Each line of the files is a claim-evidence pair (``claim``, ``evidence``, ``label``:
entailment / contradiction / neutral; a contradiction names the entailment it was changed
from in ``pair_of`` and the kind of change in brackets at the start of its ``note``). Each claim
is checked as the answer to a question about its evidence by the default ``RefChecker()``.
Prints, per label, how many the check decides right (an entailment passes, the others fail),
and per kind of change how many contradictions fail, and how many fail while the entailment
they were changed from passes (the pair told apart: wording alone cannot do it).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

from truthguard.refchecker import RefChecker

QUESTION = "What does the passage say?"


def evaluate(rows: list[dict]) -> dict:
    results = RefChecker().batch(
        [{"question": QUESTION, "answer": r["claim"], "references": [r["evidence"]]} for r in rows]
    )
    passing = {r["id"]: x.passing for r, x in zip(rows, results, strict=True)}
    right: collections.Counter = collections.Counter()
    total: collections.Counter = collections.Counter()
    kinds: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in rows:
        lab, ok = r["label"], passing[r["id"]]
        total[lab] += 1
        right[lab] += ok if lab == "entailment" else not ok
        if lab == "contradiction":
            m = re.match(r"\[(.*?)\]", r.get("note") or "")
            k = kinds[m.group(1) if m else "unlabelled"]
            k["n"] += 1
            k["caught"] += not ok
            k["pair_told_apart"] += (not ok) and passing.get(r.get("pair_of"), False)
    return {
        "labels": {lab: {"right": right[lab], "n": total[lab]} for lab in sorted(total)},
        "contradictions": {k: dict(v) for k, v in sorted(kinds.items())},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", type=Path, nargs="+")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    rows = []
    for f in args.files:
        if not f.is_file():
            print(f"no file of claim-evidence pairs at {f}", file=sys.stderr)
            return 2
        rows += [json.loads(line) for line in f.read_text("utf-8").splitlines() if line.strip()]
    out = evaluate(rows)
    if args.json:
        print(json.dumps(out))
        return 0
    for lab, v in out["labels"].items():
        print(f"{lab:14s} {v['right']:4d} / {v['n']:4d} decided right")
    print(f"{'kind of change':24s} {'n':>4s} {'caught':>7s} {'pair told apart':>16s}")
    for k, v in out["contradictions"].items():
        print(f"{k:24s} {v['n']:4d} {v['caught']:7d} {v['pair_told_apart']:16d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
