"""``truthguard bench halueval``: the default RefChecker's decisions on HaluEval.

HaluEval (Li et al., 2023; MIT) pairs each reference text with a correct output and an output
ChatGPT wrote with a plausible hallucination, for three tasks:

* **qa**: knowledge, question, short answer;
* **dialogue**: knowledge, the chat so far, the assistant's reply (the chat goes in as
  ``history``: a reply may repeat what was already said);
* **summarization**: a news article and a 3-4 sentence summary.

Every figure is the decision a guard would release on: the result's ``passing`` (or, where
unset, ``label == factual``) of ``RefChecker()`` at its defaults (``--checker NAME-OR-PATH``:
another checker labels the claims, ``nli:MODEL`` for a model ``truthguard train-checker`` wrote,
``minicheck-flan-t5-large`` or a folder of downloaded weights).
Reported per task: correct outputs passed, hallucinated outputs rejected, their mean (balanced
accuracy), the AUROC of the score, milliseconds per answer and per checked claim (warm, CPU of
the process over wall clock on a shared machine: both given). Beside it: the HaluEval paper's
ChatGPT judge (accuracy on balanced pairs, as published) and a whole-answer cosine baseline (the
packaged MiniLM, the answer against its closest reference passage; its decision at the cut that
is best on the same rows, so it is an upper bound for that baseline).

Rows: the first ``--n`` of each task's file in ``$TRUTHGUARD_DATA_DIR/halueval`` (or ``--data``),
or with ``--spread`` ``--n`` rows evenly spaced through it (the files change source part-way, so
the first rows are not a sample of the whole); HaluEval's public files are downloaded when no
folder is found. The coefficients of the default decision were fitted on other rows
(``benchmarks/fit_grounding_decision.py`` leaves out both selections of 200 rows).
"""

from __future__ import annotations

import argparse
import re
import time
from typing import Any

import numpy as np

from truthguard._progress import progress
from truthguard._sync import run_sync
from truthguard.bench._checker import add_checker_argument, refchecker_with
from truthguard.datasets import HALUEVAL_TASKS, load_halueval
from truthguard.datasets._loaders import HaluEvalItem
from truthguard.metrics import auroc

__all__ = [
    "HELP",
    "PAPER_JUDGE",
    "add_arguments",
    "build_detector",
    "check_items",
    "format_table",
    "run",
    "select_rows",
    "spread_rows",
]

HELP = "default RefChecker decisions on HaluEval (qa, dialogue, summarization)"

PAPER_JUDGE = {"qa": 62.59, "dialogue": 72.40, "summarization": 58.53}
"""The HaluEval paper's ChatGPT judge: accuracy on balanced right / hallucinated pairs."""

_TURN = re.compile(r"\[(Human|Assistant)\]:\s*")


def _turns(history: str) -> list[str]:
    """Upstream writes a chat as "[Human]: ... [Assistant]: ..."; one text per turn."""
    parts = _TURN.split(history)
    return [p.strip() for p in parts[2::2] if p.strip()] or ([history] if history.strip() else [])


def item_inputs(item: HaluEvalItem, *, in_chat: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """The two detector inputs of a row: ("right", ...) and ("hallucinated", ...); with
    ``in_chat`` a row without a chat history is asked in one (its question as the history)."""
    base: dict[str, Any] = {"contexts": [item.reference]}
    if item.task == "qa":
        base["question"] = item.question or "?"
    elif item.task == "dialogue":
        turns = _turns(item.history or "")
        base["question"] = turns[-1] if turns else "Continue the conversation."
        base["history"] = turns
    else:
        base["question"] = "Summarize the article."
    if in_chat and not base.get("history"):
        base["history"] = [base["question"]]
    return [
        ("right", {**base, "answer": item.right}),
        ("hallucinated", {**base, "answer": item.hallucinated}),
    ]


def check_items(
    items: list[HaluEvalItem],
    detector: Any = None,
    *,
    show_progress: bool = False,
    in_chat: bool = False,
) -> list[tuple[tuple[HaluEvalItem, str], Any]]:
    """Check both outputs of every row with ``detector`` (default ``RefChecker()``); with
    ``in_chat`` every row is asked in a chat (see :func:`item_inputs`)."""
    if detector is None:
        from truthguard.refchecker import RefChecker

        detector = RefChecker()
    keys, inputs = [], []
    for item in items:
        for kind, inp in item_inputs(item, in_chat=in_chat):
            keys.append((item, kind))
            inputs.append(inp)
    out: list[Any] = []
    chunk = 64
    starts = range(0, len(inputs), chunk)
    for s in progress(starts, desc="halueval", enabled=show_progress):
        out += detector.batch(inputs[s : s + chunk], config={"max_concurrency": 2})
    return list(zip(keys, out, strict=True))


def _passed(result: Any) -> bool:
    if result.passing is not None:
        return bool(result.passing)
    return str(result.label) == "factual"


def _cosine_baseline(items: list[HaluEvalItem]) -> dict[str, Any]:
    """Whole-answer cosine against the closest reference segment; best cut on these rows."""
    from truthguard.refchecker.segment import segment_references
    from truthguard.similarity import get_default_similarity

    sim = get_default_similarity()
    scores: list[float] = []
    gold: list[bool] = []
    for item in items:
        segments = [s.text for s in segment_references([item.reference], size=80)]
        answers = [item.right, item.hallucinated]
        m = sim.matrix(answers, segments)
        for k, row in enumerate(np.asarray(m)):
            scores.append(float(np.max(row)) if len(row) else 0.0)
            gold.append(k == 1)
    y = np.array(gold)
    s = np.array(scores)
    best = 0.0
    for cut in np.unique(s):
        passed_right = float(np.mean(s[~y] >= cut))
        rejected = float(np.mean(s[y] < cut))
        best = max(best, (passed_right + rejected) / 2)
    return {
        "auroc": round(auroc(s.tolist(), y.tolist()) or 0.0, 3),
        "balanced_accuracy_best_cut": round(100 * best, 1),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tasks", nargs="+", choices=HALUEVAL_TASKS, default=list(HALUEVAL_TASKS))
    parser.add_argument("--n", type=int, default=200, help="rows per task (from the start)")
    parser.add_argument(
        "--spread",
        action="store_true",
        help="take the --n rows evenly spaced through each task's file instead of the first ones "
        "(HaluEval's files change source part-way: the first summaries are CNN's, later ones "
        "the Daily Mail's)",
    )
    parser.add_argument("--no-baseline", action="store_true", help="skip the cosine baseline")
    parser.add_argument(
        "--chat-replies",
        choices=("open", "grounded"),
        default="open",
        help="RefChecker(chat_replies=...): how a reply in a chat is held to the sources",
    )
    parser.add_argument(
        "--in-chat",
        action="store_true",
        help="ask every row in a chat: a row without a chat history gets its question as one",
    )
    add_checker_argument(parser)


def spread_rows(total: int, n: int) -> list[int]:
    """Indices of ``n`` rows evenly spaced through ``total`` (all of them when ``n >= total``)."""
    if n >= total:
        return list(range(total))
    return [k * total // n for k in range(n)]


def select_rows(items: list[HaluEvalItem], n: int, *, spread: bool) -> list[HaluEvalItem]:
    """The rows ``bench halueval`` reports on: the first ``n``, or ``n`` spread through the file."""
    return [items[i] for i in spread_rows(len(items), n)] if spread else items[:n]


def build_detector(checker: str = "local", chat_replies: str = "open") -> Any:
    """``RefChecker(chat_replies=...)``, its claims labelled by the checker ``checker`` names
    (``nli:MODEL``, a name such as ``minicheck-flan-t5-large``, a folder of weights)."""
    return refchecker_with(checker, chat_replies=chat_replies)


def run(args: argparse.Namespace) -> dict[str, Any]:
    import os

    if args.n < 1:
        raise SystemExit("--n must be at least 1")
    checker = getattr(args, "checker", "local")
    chat_replies = getattr(args, "chat_replies", "open")
    in_chat = bool(getattr(args, "in_chat", False))
    detector = build_detector(checker, chat_replies)
    # warm: load the model and compile the rules once before timing
    run_sync(detector.ainvoke({"question": "Q?", "answer": "A cat sat.", "contexts": ["A cat."]}))
    spread = bool(getattr(args, "spread", False))
    out: dict[str, Any] = {
        "rows_per_task": args.n,
        "rows": "spread" if spread else "first",
        "checker": checker,
        "chat_replies": chat_replies,
        "in_chat": in_chat,
        "tasks": {},
    }
    for task in args.tasks:
        if spread:
            items = select_rows(load_halueval(task, args.data), args.n, spread=True)
        else:
            items = load_halueval(task, args.data, limit=args.n)
        cpu0, wall0 = os.times(), time.perf_counter()
        results = check_items(items, detector, show_progress=not args.no_progress, in_chat=in_chat)
        wall = time.perf_counter() - wall0
        cpu1 = os.times()
        cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
        right = [r for (_, kind), r in results if kind == "right"]
        wrong = [r for (_, kind), r in results if kind == "hallucinated"]
        passed = sum(_passed(r) for r in right) / len(right)
        rejected = sum(not _passed(r) for r in wrong) / len(wrong)
        n_claims = sum(len(r.details.get("claims") or []) for _, r in results)
        outcomes: dict[str, int] = {}
        for _, r in results:
            key = str(r.details.get("reason") or r.label)
            outcomes[key] = outcomes.get(key, 0) + 1

        def score(r: Any) -> float:
            # an answer with nothing to check passes: it ranks with the best-supported ones
            return 1.0 if r.score is None else float(r.score)

        row: dict[str, Any] = {
            "rows": len(items),
            "correct_passed": round(100 * passed, 1),
            "hallucinated_rejected": round(100 * rejected, 1),
            "balanced_accuracy": round(50 * (passed + rejected), 1),
            "auroc": round(
                auroc([score(r) for r in right + wrong], [False] * len(right) + [True] * len(wrong))
                or 0.0,
                3,
            ),
            "ms_per_answer": round(1000 * wall / len(results), 1),
            "cpu_ms_per_answer": round(1000 * cpu / len(results), 1),
            "ms_per_claim": round(1000 * wall / max(n_claims, 1), 1),
            "cpu_ms_per_claim": round(1000 * cpu / max(n_claims, 1), 1),
            "claims": n_claims,
            "outcomes": outcomes,
            "paper_chatgpt_judge_accuracy": PAPER_JUDGE[task],
        }
        if not args.no_baseline:
            row["cosine_baseline"] = _cosine_baseline(items)
        out["tasks"][task] = row
    return out


def _rows_phrase(result: dict[str, Any]) -> str:
    n = result["rows_per_task"]
    if result.get("rows") == "spread":
        return f"{n} rows spread through each file"
    return f"first {n} rows"


def format_table(result: dict[str, Any]) -> str:
    lines = [
        f"HaluEval, {_rows_phrase(result)} per task; RefChecker() defaults"
        + ("" if result.get("checker", "local") == "local" else f", checker {result['checker']}")
        + (
            ""
            if result.get("chat_replies", "open") == "open"
            else f", chat_replies={result['chat_replies']!r}"
        )
        + (", every row asked in a chat" if result.get("in_chat") else "")
        + " (decisions: passing)",
        "",
        "| task | correct passed | hallucinated rejected | balanced acc. | AUROC | ms/answer "
        "| ms/claim (CPU) | ChatGPT judge (paper) | cosine AUROC / best-cut bal. acc. |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for task, r in result["tasks"].items():
        base = r.get("cosine_baseline")
        base_txt = (
            f"{base['auroc']:.3f} / {base['balanced_accuracy_best_cut']:.1f}" if base else "-"
        )
        lines.append(
            f"| {task} | {r['correct_passed']:.1f}% | {r['hallucinated_rejected']:.1f}% | "
            f"{r['balanced_accuracy']:.1f} | {r['auroc']:.3f} | {r['ms_per_answer']:.1f} | "
            f"{r['ms_per_claim']:.1f} ({r['cpu_ms_per_claim']:.1f}) | "
            f"{r['paper_chatgpt_judge_accuracy']:.1f} | {base_txt} |"
        )
    lines.append("")
    for task, r in result["tasks"].items():
        shown = ", ".join(f"{k} {v}" for k, v in sorted(r["outcomes"].items()))
        lines.append(f"{task} outcomes: {shown}")
    return "\n".join(lines)
