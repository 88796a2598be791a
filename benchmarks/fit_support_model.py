"""Fit the claim support model (``src/truthguard/refchecker/support.json``) from claims_synth.

    python benchmarks/fit_support_model.py -o src/truthguard/refchecker/support.json

Reads ``$TRUTHGUARD_DATA_DIR/claims_synth/*.jsonl`` and ``benchmarks/data/claims_written/*.jsonl``
(claim, evidence, label: entailment / neutral / contradiction; each contradiction is a copy of
an entailment with one fact changed; ``--data`` names other folders),
checks each claim against its evidence with the local RefChecker, and fits
:class:`~truthguard.refchecker.support.SupportModel` on the fact claims it cuts.

A hand-written claim may be cut into clauses; in a pair labelled neutral or contradiction only
one of them is unsupported. So the fit runs twice (multiple-instance learning): first every
clause takes its pair's label, then an unsupported pair keeps only its clause the first model
finds least supported. The cut is the ``P(unsupported)`` that passes ``--pass-rate`` of the
entailment pairs (each as an answer: its least supported clause decides). Deterministic: the
same data gives the same file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from truthguard.refchecker import RefChecker
from truthguard.refchecker.checkers import LocalChecker
from truthguard.refchecker.support import (
    CLAIM_FEATURES,
    SupportModel,
    claim_features,
    fact_unsupported,
)

QUESTION = "What does the passage say?"


def _blank() -> SupportModel:
    zeros = dict.fromkeys(CLAIM_FEATURES, 0.0)
    return SupportModel(
        coefficients=zeros, means=zeros, scales=dict.fromkeys(CLAIM_FEATURES, 1.0), intercept=0.0
    )


def pair_features(*folders: Path) -> tuple[list[list[dict]], list[str], list[str]]:
    """Per pair: the features of each fact clause; the pair's label and id."""
    pairs = []
    for data in folders:
        for f in sorted(data.glob("*.jsonl")):
            lines = f.read_text("utf-8").splitlines()
            pairs += [json.loads(line) for line in lines if line.strip()]
    rc = RefChecker(checker=LocalChecker(support=_blank()))
    results = rc.batch(
        [{"question": QUESTION, "answer": p["claim"], "references": [p["evidence"]]} for p in pairs]
    )
    out = []
    for r in results:
        clauses = []
        for c in r.details.get("claims", []):
            if c.get("kind") != "fact" or not c.get("checker_output"):
                continue
            if fact_unsupported(c.get("issues") or []) is not None:
                continue  # decided by its facts: the model weighs the wording of the rest
            clauses.append(claim_features(json.loads(c["checker_output"]), c.get("issues") or []))
        out.append(clauses)
    return out, [p["label"] for p in pairs], [p["id"] for p in pairs]


def fit(
    clauses: list[list[dict]], labels: list[str], *, l2: float, pass_rate: float, note: str
) -> SupportModel:
    rows, ys = [], []
    for cs, lab in zip(clauses, labels, strict=True):
        for c in cs:
            rows.append(c)
            ys.append(lab != "entailment")
    first = SupportModel.fit(rows, ys, l2=l2)
    rows, ys = [], []
    for cs, lab in zip(clauses, labels, strict=True):
        if not cs:
            continue
        if lab == "entailment":
            rows += cs
            ys += [False] * len(cs)
        else:
            worst = max(cs, key=first.probability)
            rows.append(worst)
            ys.append(True)
    model = SupportModel.fit(rows, ys, l2=l2)
    answer_p = [
        max(model.probability(c) for c in cs)
        for cs, lab in zip(clauses, labels, strict=True)
        if cs and lab == "entailment"
    ]
    cut = float(np.quantile(answer_p, pass_rate))
    cut = round(min(max(cut, 0.05), 0.95), 4)
    return model.model_copy(
        update={"claim_threshold": cut, "answer_threshold": cut, "fitted_on": note}
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared = Path(os.environ.get("TRUTHGUARD_DATA_DIR", "../shared/data")) / "claims_synth"
    ours = Path(__file__).resolve().parent / "data" / "claims_written"
    ap.add_argument(
        "--data",
        type=Path,
        nargs="+",
        default=[shared, ours],
        help="folders of claim-evidence JSONL (default: claims_synth and claims_written)",
    )
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument(
        "--pass-rate",
        type=float,
        default=0.95,
        help="share of entailment pairs the cut passes (default 0.95)",
    )
    args = ap.parse_args(argv)
    for folder in args.data:
        if not folder.is_dir():
            print(f"no folder of claim-evidence pairs at {folder}", file=sys.stderr)
            return 2
    clauses, labels, _ = pair_features(*args.data)
    names = [f"{d.name}/{p.name}" for d in args.data for p in sorted(d.glob("*.jsonl"))]
    note = (
        f"{len(labels)} pairs: "
        + ", ".join(names)
        + f"; l2={args.l2}; cut passes {args.pass_rate:.0%} of entailment pairs"
    )
    model = fit(clauses, labels, l2=args.l2, pass_rate=args.pass_rate, note=note)
    model.save(args.output)
    print(json.dumps(model.model_dump(), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
