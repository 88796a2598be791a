"""Fit the meaning model (``src/truthguard/refchecker/meaning.json``) from hand-written pairs.

    python benchmarks/fit_meaning_model.py -o src/truthguard/refchecker/meaning.json

Reads the claim-evidence pairs of ``benchmarks/data/claims_train`` (``--data`` for others;
label entailment = supported, contradiction and neutral = not), splits each evidence passage
into sentences as the check splits references, embeds claims and sentences with the packaged
MiniLM and fits :class:`~truthguard.refchecker.meaning.MeaningModel` on
:func:`~truthguard.refchecker.meaning.pair_features` (``MeaningModel.fit_read``: each claim read
against the closest sentence, then against the candidate that model reads as supporting it
best). The L2 penalty is picked from ``--l2``
by two folds (the files' first half against their second half), on the AUROC of entailments
against neutrals; the held-out figures are printed. Nothing the support model is fitted on
(``claims_synth``, ``claims_written``) is read here, so its weight for this model's output is
fitted on pairs this model did not see. Deterministic: the same data gives the same file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from truthguard.metrics import auroc
from truthguard.refchecker.meaning import MeaningModel, pair_features
from truthguard.refchecker.segment import split_sentences
from truthguard.similarity import get_default_similarity


def read_pairs(folder: Path) -> list[list[dict]]:
    """The pairs of each file, in name order."""
    return [
        [json.loads(line) for line in f.read_text("utf-8").splitlines() if line.strip()]
        for f in sorted(folder.glob("*.jsonl"))
    ]


def features(rows: list[dict]) -> list[np.ndarray]:
    sim = get_default_similarity()
    sentences = {r["evidence"]: [s.text for s in split_sentences(r["evidence"])] for r in rows}
    texts = list(
        dict.fromkeys([r["claim"] for r in rows] + [s for v in sentences.values() for s in v])
    )
    vec = dict(zip(texts, sim.embed(texts), strict=True))
    return [
        pair_features(vec[r["claim"]], np.array([vec[s] for s in sentences[r["evidence"]]]))
        for r in rows
    ]


def held_out(x: list[np.ndarray], labels: list[str], test: np.ndarray, model: MeaningModel) -> dict:
    z = np.array([model.best(f) for f, t in zip(x, test, strict=True) if t])
    lab = np.asarray(labels)[test]
    out = {}
    for other in ("neutral", "contradiction"):
        # auroc: hallucinated = low score
        pos, neg = z[lab == "entailment"], z[lab == other]
        out[other] = auroc(np.r_[pos, neg].tolist(), ([False] * len(pos)) + ([True] * len(neg)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = Path(__file__).resolve().parent / "data" / "claims_train"
    ap.add_argument("--data", type=Path, default=here, help="folder of claim-evidence JSONL")
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--l2", type=float, nargs="+", default=[100.0, 300.0, 1000.0, 3000.0, 10000.0])
    args = ap.parse_args(argv)
    files = read_pairs(args.data)
    if len(files) < 2:
        print(f"need two or more files of claim-evidence pairs in {args.data}", file=sys.stderr)
        return 2
    rows = [r for f in files for r in f]
    labels = [r["label"] for r in rows]
    x = features(rows)
    y = np.array([lab == "entailment" for lab in labels])
    half = sum(len(f) for f in files[: len(files) // 2])
    folds = [np.arange(len(rows)) < half, np.arange(len(rows)) >= half]
    best, chosen = -1.0, args.l2[0]
    for l2 in args.l2:
        scores = []
        for test in folds:
            train = [f for f, t in zip(x, test, strict=True) if not t]
            model = MeaningModel.fit_read(train, y[~test], l2=l2)
            scores.append(held_out(x, labels, test, model))
        mean = float(np.mean([s["neutral"] for s in scores]))
        contra = float(np.mean([s["contradiction"] for s in scores]))
        print(
            f"l2={l2}: held-out AUROC entailment vs neutral {mean:.3f}, "
            f"vs contradiction {contra:.3f}"
        )
        if mean > best:
            best, chosen = mean, l2
    names = ", ".join(f"{args.data.name}/{f.name}" for f in sorted(args.data.glob("*.jsonl")))
    model = MeaningModel.fit_read(
        x, y, l2=chosen, fitted_on=f"{len(rows)} pairs: {names}; l2={chosen} (two folds)"
    )
    model.save(args.output)
    print(f"l2={chosen}; wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
