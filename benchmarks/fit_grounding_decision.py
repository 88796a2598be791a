"""Fit the local RefChecker's answer-level decision on HaluEval's development half.

Writes ``src/truthguard/refchecker/decision.json`` (the packaged default). The rows the
``truthguard bench halueval`` command reports on (the first ``--skip`` rows of each task, and
with ``--spread`` as many spread through the file) are left out of the fit, so its figures are
measured on rows the coefficients never saw; the fit takes ``--rows`` rows spread evenly through
the rest of each file, so that every part of it (HaluEval's summaries change source part-way) is
represented. The kept-aside half of HaluEval is the final check.

    python benchmarks/fit_grounding_decision.py --data ../shared/data

Each task counts equally, and within a task each class; the threshold is the highest
``P(hallucinated)`` cut that still lets ``--min-pass`` of the correct answers of every task pass
... within the fitting rows only. Chat replies (rows with a history) get their own cut, saved as
an offset of their log-odds (``chat_offset``), so one threshold serves both.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from truthguard.bench.halueval import check_items, spread_rows
from truthguard.datasets import HALUEVAL_TASKS, load_halueval
from truthguard.refchecker import RefChecker
from truthguard.refchecker.decision import (
    FEATURES,
    GroundingDecision,
    answer_features,
    decided_by_claims,
)


def rows_to_fit(items: list, skip: int, rows: int, first: bool = False) -> list:
    """The rows to fit on: ``rows`` spread evenly through the file, leaving out the bench's rows
    (the first ``skip`` and ``skip`` spread through the file); with ``first``, the ``rows`` rows
    right after the first ``skip``.

    HaluEval's files change source part-way (the first summaries are CNN's, later ones the
    Daily Mail's): rows from one stretch of the file fit a decision to that stretch.
    """
    if first:
        return items[skip : skip + rows]
    left_out = set(range(skip)) | set(spread_rows(len(items), skip))
    pool = [i for i in range(len(items)) if i not in left_out]
    step = max(len(pool) // max(rows, 1), 1)
    return [items[i] for i in pool[step // 2 :: step][:rows]]


def _neutral() -> GroundingDecision:
    """A decision that does not depend on the packaged one (only the features are used here)."""
    zeros = dict.fromkeys(FEATURES, 0.0)
    return GroundingDecision(
        coefficients=zeros, means=zeros, scales=dict.fromkeys(FEATURES, 1.0), intercept=0.0
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="data root (default: $TRUTHGUARD_DATA_DIR)")
    parser.add_argument(
        "--skip",
        type=int,
        default=200,
        help="rows per task left for the bench: the first ones and as many spread through the file",
    )
    parser.add_argument(
        "--rows",
        type=int,
        default=500,
        help="rows per task to fit on, spread evenly through the rest of each task's file",
    )
    parser.add_argument(
        "--first",
        action="store_true",
        help="fit on the --rows rows right after the first --skip instead (the older selection)",
    )
    parser.add_argument("--l2", type=float, default=1.0, help="L2 penalty")
    parser.add_argument(
        "--min-pass",
        type=float,
        default=0.82,
        help="correct answers to pass in every block of every task's fit rows (see --blocks); "
        "two points above the 80%% aimed at, as a margin for unseen rows: at 0.80 a cut let "
        "77-79%% of unseen correct chat replies and of the file's first 200 summaries pass",
    )
    parser.add_argument(
        "--min-pass-chat",
        type=float,
        default=0.82,
        help="the same for chat replies' own cut",
    )
    parser.add_argument(
        "--blocks",
        type=int,
        default=5,
        help="each task's fit rows are cut into this many stretches of the file and the cut must "
        "let --min-pass of the correct answers of each pass: HaluEval's files change source "
        "part-way, and a cut that holds on the file as a whole failed 30%% of the first 200 "
        "correct summaries",
    )
    parser.add_argument("--features", default=None, help="cache of computed features (JSONL)")
    parser.add_argument(
        "--retelling-cosine",
        type=float,
        default=1.01,
        help="see GroundingDecision (above 1: off; on HaluEval's fit rows a close retelling "
        "with a word changed is as often a correct summary as a wrong one)",
    )
    parser.add_argument("--strict-claims", type=int, default=1, help="see GroundingDecision")
    parser.add_argument(
        "--retelling-sentences",
        type=int,
        default=1,
        help="see GroundingDecision (0: any length, and then no cut keeps correct summaries "
        "passing; 2 did no better than 1 on the fit rows)",
    )
    parser.add_argument("--retelling-copied", type=float, default=0.8, help="see GroundingDecision")
    parser.add_argument(
        "--separate-chat",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fit chat replies' own cut (GroundingDecision.chat_offset)",
    )
    parser.add_argument("--lead-words", type=int, default=5, help="see GroundingDecision")
    parser.add_argument(
        "--other-value",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="see GroundingDecision.other_value",
    )
    parser.add_argument(
        "--invented",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="see GroundingDecision.invented",
    )
    parser.add_argument(
        "-o",
        "--output",
        default=str(Path(__file__).parents[1] / "src/truthguard/refchecker/decision.json"),
    )
    args = parser.parse_args(argv)

    rows: list[dict] = []
    cache = Path(args.features) if args.features else None
    if cache is not None and cache.is_file():
        rows = [json.loads(line) for line in cache.read_text().splitlines() if line.strip()]
    else:
        for task in HALUEVAL_TASKS:
            items = rows_to_fit(load_halueval(task, args.data), args.skip, args.rows, args.first)
            started = time.perf_counter()
            results = check_items(items, RefChecker(decision=_neutral()))
            print(
                f"{task}: {len(items)} rows in {time.perf_counter() - started:.0f}s",
                file=sys.stderr,
            )
            for (item, kind), r in results:
                feats = answer_features(r.details.get("claims") or [])
                rows.append(
                    {
                        "task": task,
                        "chat": item.history is not None,
                        "index": item.index,
                        "hallucinated": kind == "hallucinated",
                        "features": feats,
                        "reason": r.details.get("reason"),
                        "claims": [
                            {
                                "claim": c["claim"],
                                "sentence": c.get("sentence"),
                                "label": c["label"],
                                "kind": c.get("kind"),
                                "checker_output": c["checker_output"],
                                "issues": [
                                    {k: i.get(k) for k in ("kind", "relation", "text")}
                                    | {"claim_start": i.get("claim_start")}
                                    for i in c["issues"]
                                ],
                            }
                            for c in r.details.get("claims") or []
                        ],
                    }
                )
        if cache is not None:
            cache.write_text("".join(json.dumps(r) + "\n" for r in rows))

    # answers a contradicted or altered retelling decides are left out of the fit: the model
    # weighs the evidence of the rest
    settings = {
        "retelling_cosine": args.retelling_cosine,
        "retelling_copied": args.retelling_copied,
        "strict_claims": args.strict_claims,
        "retelling_sentences": args.retelling_sentences,
        "invented": args.invented,
        "lead_words": args.lead_words,
        "other_value": args.other_value,
    }
    rules = _neutral().model_copy(update=settings)

    def decided(r: dict) -> tuple[bool, str, Any] | None:
        return decided_by_claims(r["claims"], chat=r["chat"], decision=rules)

    fit_rows = [r for r in rows if r["features"] is not None and decided(r) is None]
    weights = []
    for r in fit_rows:
        same = [
            x for x in fit_rows if x["task"] == r["task"] and x["hallucinated"] == r["hallucinated"]
        ]
        weights.append(len(fit_rows) / (2 * len(HALUEVAL_TASKS) * len(same)))
    decision = GroundingDecision.fit(
        [r["features"] for r in fit_rows],
        [r["hallucinated"] for r in fit_rows],
        weights=weights,
        l2=args.l2,
    )

    # threshold: the largest share of hallucinated answers rejected with every task's correct
    # answers passing at least --min-pass (answers without features pass: nothing was checked);
    # chat replies get their own cut, kept as an offset of their log-odds (see chat_offset)
    def prob(r: dict) -> float:
        rule = decided(r)
        if rule is not None:
            return 1.0 if rule[0] else 0.0
        return decision.probability(r["features"])

    probs = {id(r): prob(r) for r in rows if r["features"] is not None}

    def stretch(mine: list[dict]) -> dict[int, Any]:
        """Each row's group for the cut: its task and its block, its place among the task's
        fit rows in file order."""
        out = {}
        for task in dict.fromkeys(r["task"] for r in mine):
            place = {
                ix: k
                for k, ix in enumerate(sorted({r["index"] for r in mine if r["task"] == task}))
            }
            for r in mine:
                if r["task"] == task:
                    out[id(r)] = (
                        task,
                        min(place[r["index"]] * args.blocks // len(place), args.blocks - 1),
                    )
        return out

    def rates(
        mine: list[dict], t: float, group_of: dict[int, Any] | None = None
    ) -> dict[Any, tuple[float, float]]:
        """Correct passed and hallucinated caught at cut ``t``, per task (or per group)."""
        groups: dict[Any, list[dict]] = {}
        for r in mine:
            groups.setdefault(group_of[id(r)] if group_of else r["task"], []).append(r)
        out = {}
        for key, group in groups.items():
            right = [r for r in group if not r["hallucinated"]]
            wrong = [r for r in group if r["hallucinated"]]
            passed = sum(1 for r in right if r["features"] is None or probs[id(r)] < t)
            caught = sum(1 for r in wrong if r["features"] is not None and probs[id(r)] >= t)
            out[key] = (passed / max(len(right), 1), caught / max(len(wrong), 1))
        return out

    def cut(
        mine: list[dict], min_pass: float
    ) -> tuple[float, dict[str, tuple[float, float]]] | None:
        block = stretch(mine)
        best = None
        for t in np.linspace(0.05, 0.95, 181):
            if min(p for p, _ in rates(mine, float(t), block).values()) < min_pass:
                continue
            r = rates(mine, float(t))
            bal = float(np.mean([(p + c) / 2 for p, c in r.values()]))
            if best is None or bal > best[0]:
                best = (bal, round(float(t), 3), r)
        return None if best is None else best[1:]

    answers = [r for r in rows if not r["chat"]]
    replies = [r for r in rows if r["chat"]]
    if not args.separate_chat:
        answers, replies = rows, []
    found = cut(answers, args.min_pass)
    chat_found = cut(replies, args.min_pass_chat) if replies else None
    if found is None or (replies and chat_found is None):
        print("no threshold keeps every task's correct answers passing", file=sys.stderr)
        return 1
    threshold, r = found
    offset = 0.0
    if chat_found is not None:
        chat_threshold, chat_rates = chat_found
        r = {**r, **chat_rates}
        offset = math.log(threshold / (1 - threshold)) - math.log(
            chat_threshold / (1 - chat_threshold)
        )
    bal = float(np.mean([(p + c) / 2 for p, c in r.values()]))
    decision = decision.model_copy(
        update={
            "threshold": threshold,
            "chat_offset": round(offset, 4),
            **settings,
            "fitted_on": (
                (
                    f"HaluEval development half, rows {args.skip}-{args.skip + args.rows - 1} "
                    if args.first
                    else f"HaluEval development half, {args.rows} rows spread through the file "
                    f"(the bench's {args.skip} first and {args.skip} spread rows left out) "
                )
                + f"of each of {', '.join(HALUEVAL_TASKS)}; l2={args.l2}; the threshold keeps "
                f">= {args.min_pass:.0%} of correct answers passing in each of {args.blocks} "
                "stretches of every task's rows"
                + (f" ({args.min_pass_chat:.0%} of chat replies)" if chat_found else "")
                + (", chat replies by their own cut (chat_offset)" if chat_found else "")
            ),
        }
    )
    decision.save(args.output)
    for task, (p, c) in r.items():
        bal_task = (p + c) / 2
        print(f"{task:14} correct passed {p:6.1%}  rejected {c:6.1%}  balanced {bal_task:6.1%}")
    print(
        f"threshold {threshold:.3f}, chat offset {offset:+.3f}, mean balanced accuracy "
        f"{bal:.1%} -> {args.output}"
    )
    print(json.dumps(decision.coefficients, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
