"""Fit the remark model (``src/truthguard/refchecker/remarks.json``) from hand-written sentences.

    python benchmarks/fit_remark_model.py -o src/truthguard/refchecker/remarks.json

Reads ``benchmarks/data/remarks/*.jsonl`` (``text``, ``label``: remark / fact; ``note``: the
family of a remark, "hard" or "plain" for a fact), embeds each text with the packaged MiniLM
(the vectors the check computes for every claim) and fits
:class:`~truthguard.refchecker.remarks.RemarkModel`. Before the final fit, each file is held out
in turn and predicted by a model fitted on the others: the threshold is the lowest cut at which
the held-out hard facts (facts worded like remarks) called remarks stay within
``--hard-fact-rate``, the highest such cut over the folds; the held-out figures are printed.
Deterministic: the same data gives the same file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from truthguard.refchecker.remarks import RemarkModel
from truthguard.refchecker.segment import split_clauses
from truthguard.similarity import get_default_similarity


def read(folder: Path) -> dict[str, list[dict]]:
    out = {}
    for f in sorted(folder.glob("*.jsonl")):
        out[f.name] = [json.loads(line) for line in f.read_text("utf-8").splitlines() if line]
    return out


def claim_facts(folders: list[Path]) -> list[dict]:
    """The claims of claim-evidence pairs, every one a statement about the world worded the way
    chat models answer (entailed, contradicted or unsupported alike), as plain facts; each
    clause the local extractor cuts from one too."""
    out: dict[str, None] = {}
    for folder in folders:
        for rows in read(folder).values():
            for r in rows:
                out[r["claim"]] = None
                for piece in split_clauses(r["claim"], min_words=4):
                    out[piece] = None
    return [{"text": t, "label": "fact", "note": "claim"} for t in out]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = Path(__file__).resolve().parent / "data" / "remarks"
    ap.add_argument("--data", type=Path, default=here, help="folder of remark / fact JSONL")
    shared = Path(os.environ.get("TRUTHGUARD_DATA_DIR", "../shared/data")) / "claims_synth"
    data = Path(__file__).resolve().parent / "data"
    ap.add_argument(
        "--claims",
        type=Path,
        nargs="*",
        default=[data / "claims_train", data / "claims_written", shared],
        help="folders of claim-evidence pairs whose claims (and clauses) are facts",
    )
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument(
        "--hard-fact-rate",
        type=float,
        default=0.05,
        help="share of held-out hard facts the threshold may call remarks (default 0.05)",
    )
    args = ap.parse_args(argv)
    files = read(args.data)
    claims = claim_facts([f for f in args.claims if f.is_dir()])
    if claims:  # one held-out fold of its own, split in two by position
        files["claims (1st half)"] = claims[: len(claims) // 2]
        files["claims (2nd half)"] = claims[len(claims) // 2 :]
    if len(files) < 2:
        print(f"need two or more files of remarks and facts in {args.data}", file=sys.stderr)
        return 2
    sim = get_default_similarity()
    vecs = {name: sim.embed([r["text"] for r in rows]) for name, rows in files.items()}
    labels = {
        name: np.array([r["label"] == "remark" for r in rows]) for name, rows in files.items()
    }
    cuts, held = [], []
    for name, rows in files.items():
        rest = [n for n in files if n != name]
        model = RemarkModel.fit(
            np.vstack([vecs[n] for n in rest]),
            np.concatenate([labels[n] for n in rest]),
            l2=args.l2,
        )
        p = model.probabilities(vecs[name])
        y = labels[name]
        hard = np.array([str(r.get("note", "")).startswith("hard") for r in rows])
        if hard.any():
            cuts.append(float(np.quantile(p[hard], 1 - args.hard_fact_rate)))
        held.append((name, p, y, hard))
    threshold = round(min(max(max(cuts), 0.05), 0.95), 4)
    for name, p, y, hard in held:
        found = f"remarks found {np.mean(p[y] >= threshold):.1%}, " if y.any() else ""
        worded = (
            f"hard facts called remarks {np.mean(p[hard] >= threshold):.1%}, " if hard.any() else ""
        )
        print(
            f"held out {name} at {threshold}: {found}{worded}"
            f"plain facts called remarks {np.mean(p[~y & ~hard] >= threshold):.1%}"
        )
    names = ", ".join(files)
    model = RemarkModel.fit(
        np.vstack(list(vecs.values())),
        np.concatenate(list(labels.values())),
        l2=args.l2,
        threshold=threshold,
        fitted_on=(
            f"{sum(len(r) for r in files.values())} sentences: {names}; l2={args.l2}; "
            f"threshold: held-out hard facts called remarks <= {args.hard_fact_rate:.0%}"
        ),
    )
    model.save(args.output)
    print(f"threshold {threshold}; wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
