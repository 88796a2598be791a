"""Check the default RefChecker decision on HaluEval rows neither the fit nor the bench uses.

``benchmarks/fit_grounding_decision.py`` fits on ``--rows`` rows spread through each task's file
and ``truthguard bench halueval`` reports on the first ``--skip`` rows or as many spread
(``--spread``). This takes ``--n`` further rows spread through what is left of each file and
prints correct passed / hallucinated rejected / balanced accuracy, as the bench does:

    python benchmarks/check_unseen_rows.py --n 500

A decision that only holds on the rows it was fitted or measured on shows here first (the
kept-aside half of HaluEval is the final check).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from fit_grounding_decision import rows_to_fit

from truthguard.bench.halueval import check_items, spread_rows
from truthguard.datasets import HALUEVAL_TASKS, load_halueval
from truthguard.refchecker import RefChecker


def unseen_rows(items: list, skip: int, fit_rows: int, n: int) -> list:
    """``n`` rows spread through ``items`` that are neither bench nor fit rows."""
    fitted = {id(x) for x in rows_to_fit(items, skip, fit_rows)}
    bench = set(range(skip)) | set(spread_rows(len(items), skip))
    pool = [x for i, x in enumerate(items) if i not in bench and id(x) not in fitted]
    step = max(len(pool) // max(n, 1), 1)
    return pool[step // 3 :: step][:n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="data root (default: $TRUTHGUARD_DATA_DIR)")
    parser.add_argument("--n", type=int, default=500, help="rows per task to check")
    parser.add_argument("--skip", type=int, default=200, help="the bench's rows (as the fit)")
    parser.add_argument("--fit-rows", type=int, default=2000, help="the fit's rows (as the fit)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    detector = RefChecker()
    out: dict[str, dict[str, float | int]] = {}
    for task in HALUEVAL_TASKS:
        items = unseen_rows(load_halueval(task, args.data), args.skip, args.fit_rows, args.n)
        results = check_items(items, detector)

        def passed(r: Any) -> bool:
            return bool(r.passing) if r.passing is not None else str(r.label) == "factual"

        right = [r for (_, kind), r in results if kind == "right"]
        wrong = [r for (_, kind), r in results if kind == "hallucinated"]
        ok = sum(passed(r) for r in right) / len(right)
        caught = sum(not passed(r) for r in wrong) / len(wrong)
        out[task] = {
            "rows": len(items),
            "correct_passed": round(100 * ok, 1),
            "hallucinated_rejected": round(100 * caught, 1),
            "balanced_accuracy": round(50 * (ok + caught), 1),
        }
    if args.json:
        print(json.dumps(out))
        return 0
    print("| task | rows | correct passed | hallucinated rejected | balanced acc. |")
    print("|---|---|---|---|---|")
    for task, r in out.items():
        print(
            f"| {task} | {r['rows']} | {r['correct_passed']:.1f}% | "
            f"{r['hallucinated_rejected']:.1f}% | {r['balanced_accuracy']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
