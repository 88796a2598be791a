"""``truthguard bench rag-answers``: the default RefChecker on RAG answers written the way chat
models write them, decided at its defaults (what a guard would release).

Rows: ``$TRUTHGUARD_DATA_DIR/rag_answers/dev.jsonl`` (or ``--data``: that folder's parent, the
folder itself, or a ``.jsonl`` file of the same schema): ``question``, ``contexts`` (passages),
``answer``, ``kind`` and ``label`` (``factual`` / ``hallucinated``). Reported per kind: how many
answers pass; then correct answers passed, errors caught, their balanced accuracy, and the time
per answer and per claim (wall clock and CPU, all threads), with the model loaded and warmed on
text outside the rows, so the rows' own embeddings are computed inside the timing.

``--sets FILE [FILE ...]`` reads those files instead and reports each on one line, then all
of them pooled: the way to hold sets a change was made on against sets kept aside from it.

``--distractors N`` adds to each answer's contexts N passages of other references of the same
file (drawn with ``--seed``, then shuffled in with the answer's own), as a retriever with a larger
``k`` would, and reports each set twice: as written and with the distractors. A check that takes
support from any passage lets more errors through the second time.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

from truthguard.bench._checker import add_checker_argument, refchecker_with
from truthguard.errors import InvalidInputError

__all__ = [
    "HELP",
    "KINDS",
    "add_arguments",
    "format_table",
    "load_rows",
    "run",
    "with_distractors",
]

HELP = "default RefChecker on hand-written RAG answers: passes per kind, balanced accuracy, speed"

KINDS = ("correct", "correct_joined", "hedge", "reworded_wrong", "invented")
"""The dev set's kinds, in the order the table prints them (other kinds follow)."""

_WARM = {
    "question": "How long is the tunnel?",
    "answer": "It is 14.6 km long and opened in 2004. The passage doesn't say what it cost.",
    "contexts": ["The tunnel is 14.6 kilometres long. It opened to rail traffic in 2004."],
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=None, help="only the first N rows")
    parser.add_argument(
        "--show-failures",
        action="store_true",
        help="list each answer decided wrongly with the claim that decided it",
    )
    parser.add_argument(
        "--sets",
        nargs="+",
        default=None,
        metavar="FILE",
        help="answer files of the same schema: one line each, then pooled (instead of --data)",
    )
    parser.add_argument(
        "--distractors",
        type=int,
        default=0,
        metavar="N",
        help="also report each set with N passages of its other references added to every answer",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the distractor draw (default 0)"
    )
    add_checker_argument(parser)


def find_dev(data: str | Path | None) -> Path | None:
    """The rag-answers ``dev.jsonl``: ``data`` itself when it is a file, else in that folder or
    its ``rag_answers/`` (``data`` None: ``$TRUTHGUARD_DATA_DIR``); None when there is none.
    The set is the project's own, written by hand: there is no upstream to download it from."""
    root = data or os.environ.get("TRUTHGUARD_DATA_DIR")
    if not root:
        return None
    p = Path(root).expanduser()
    for candidate in (p, p / "dev.jsonl", p / "rag_answers" / "dev.jsonl"):
        if candidate.is_file():
            return candidate
    return None


def _path(data: str | None) -> Path:
    root = data or os.environ.get("TRUTHGUARD_DATA_DIR")
    if not root:
        raise InvalidInputError("data", "no --data given and TRUTHGUARD_DATA_DIR is not set")
    found = find_dev(root)
    if found is None:
        raise InvalidInputError("data", f"no rag_answers dev.jsonl at {Path(root).expanduser()}")
    return found


def load_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a rag-answers JSON Lines file, each checked for the fields the bench reads."""
    from truthguard.evaluation.io import iter_jsonl

    rows = []
    for where, row in iter_jsonl(path):
        for field in ("question", "answer", "contexts", "label"):
            if field not in row:
                raise InvalidInputError(where, f"missing field {field!r}")
        if row["label"] not in ("factual", "hallucinated"):
            raise InvalidInputError(
                where, f"label must be 'factual' or 'hallucinated', got {row['label']!r}"
            )
        row.setdefault("kind", row["label"])
        rows.append(row)
    return rows


def detector_input(row: dict[str, Any]) -> dict[str, Any]:
    """What the detector is asked about one row: its question, answer and contexts."""
    return {"question": row["question"], "answer": row["answer"], "contexts": row["contexts"]}


def with_distractors(rows: list[dict[str, Any]], n: int, *, seed: int = 0) -> list[dict[str, Any]]:
    """Each row with ``n`` passages of the file's other references added to its contexts.

    A reference is a distinct list of contexts; a row draws its ``n`` passages (without
    replacement, seeded by ``seed`` and the row's place) from every other reference's passages,
    and its own passages and the drawn ones are shuffled together, so neither position nor
    order tells them apart. Rows are copied; the input is left as it is.
    """
    if n < 0:
        raise InvalidInputError("distractors", f"must be >= 0, got {n}")
    if n == 0:
        return [dict(r) for r in rows]
    pool: dict[tuple[str, ...], None] = {}
    for row in rows:
        pool.setdefault(tuple(row["contexts"]), None)
    refs = list(pool)
    out = []
    for i, row in enumerate(rows):
        own = tuple(row["contexts"])
        others = [p for ref in refs if ref != own for p in ref if p not in own]
        if len(others) < n:
            raise InvalidInputError(
                "distractors",
                f"{n} asked, but row {row.get('id', i)!r} has only {len(others)} passages of "
                "other references in its file",
            )
        rng = random.Random(f"{seed}:{i}")
        contexts = [*own, *rng.sample(others, n)]
        rng.shuffle(contexts)
        out.append({**row, "contexts": contexts})
    return out


def _score(detector: Any, path: Path, rows: list[dict[str, Any]]) -> tuple:
    inputs = [detector_input(r) for r in rows]
    wall, cpu = time.perf_counter(), time.process_time()
    results = detector.batch(inputs)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return path, rows, results, wall, cpu


def run(args: argparse.Namespace) -> dict[str, Any]:
    from truthguard.refchecker import RefChecker

    paths = [Path(p).expanduser() for p in args.sets] if args.sets else [_path(args.data)]
    loaded = [load_rows(p)[: args.limit] for p in paths]
    n = getattr(args, "distractors", 0) or 0
    if n < 0:
        raise InvalidInputError("distractors", f"must be >= 0, got {n}")
    seed = getattr(args, "seed", 0)
    checker = getattr(args, "checker", "local")
    detector = refchecker_with(checker) if checker != "local" else RefChecker()
    detector.invoke(_WARM)  # the model loaded and every code path warm, outside the timing
    parts = [_score(detector, path, rows) for path, rows in zip(paths, loaded, strict=True)]
    out = _report(parts, args)
    if checker != "local":
        out["checker"] = checker
    if not n:
        return out
    noisy = [
        _score(detector, path, with_distractors(rows, n, seed=seed))
        for path, rows in zip(paths, loaded, strict=True)
    ]
    with_n = _report(noisy, args)
    return {
        "benchmark": "rag-answers",
        "distractors": n,
        "seed": seed,
        "as_written": out,
        "with_distractors": with_n,
    }


def _report(parts: list[tuple], args: argparse.Namespace) -> dict[str, Any]:
    if not args.sets:
        path, rows, results, wall, cpu = parts[0]
        return _summary(str(path), rows, results, wall, cpu, show_failures=args.show_failures)
    out: dict[str, Any] = {
        "benchmark": "rag-answers",
        "sets": [
            _summary(str(p), rows, res, wall, cpu, show_failures=args.show_failures)
            for p, rows, res, wall, cpu in parts
        ],
    }
    out["pooled"] = _summary(
        "pooled",
        [r for part in parts for r in part[1]],
        [r for part in parts for r in part[2]],
        sum(part[3] for part in parts),
        sum(part[4] for part in parts),
        show_failures=False,
    )
    return out


def _summary(
    data: str,
    rows: list[dict[str, Any]],
    results: list[Any],
    wall: float,
    cpu: float,
    *,
    show_failures: bool,
) -> dict[str, Any]:
    """Passes per kind, correct passed, errors caught, balanced accuracy and speed of one set."""
    passed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    label_of: dict[str, str] = {}
    claims = 0
    failures = []
    for row, r in zip(rows, results, strict=True):
        kind = row["kind"]
        total[kind] += 1
        label_of[kind] = row["label"]
        passed[kind] += bool(r.passing)
        claims += len(r.details.get("claims", []))
        if bool(r.passing) != (row["label"] == "factual"):
            decision = r.details.get("decision") or {}
            failures.append(
                {
                    "id": row.get("id"),
                    "kind": kind,
                    "passing": r.passing,
                    "p_hallucinated": decision.get("p_hallucinated"),
                    "deciding_claim": decision.get("deciding_claim"),
                }
            )
    factual = [k for k in total if label_of[k] == "factual"]
    wrong = [k for k in total if label_of[k] == "hallucinated"]
    n_factual = sum(total[k] for k in factual)
    n_wrong = sum(total[k] for k in wrong)
    correct_passed = sum(passed[k] for k in factual) / n_factual if n_factual else None
    errors_caught = sum(total[k] - passed[k] for k in wrong) / n_wrong if n_wrong else None
    balanced = (
        (correct_passed + errors_caught) / 2
        if correct_passed is not None and errors_caught is not None
        else None
    )
    order = [k for k in KINDS if k in total] + sorted(k for k in total if k not in KINDS)
    out: dict[str, Any] = {
        "benchmark": "rag-answers",
        "data": data,
        "rows": len(rows),
        "kinds": {k: {"label": label_of[k], "n": total[k], "passed": passed[k]} for k in order},
        "correct_passed": correct_passed,
        "errors_caught": errors_caught,
        "balanced_accuracy": balanced,
        "claims": claims,
        "ms_per_answer": 1000.0 * wall / max(len(rows), 1),
        "ms_per_claim": 1000.0 * wall / max(claims, 1),
        "cpu_ms_per_answer": 1000.0 * cpu / max(len(rows), 1),
        "cpu_ms_per_claim": 1000.0 * cpu / max(claims, 1),
        "llm_calls": sum(r.usage.llm_calls for r in results),
    }
    if show_failures:
        out["failures"] = failures
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def format_table(result: dict[str, Any]) -> str:
    if "with_distractors" in result:
        n = result["distractors"]
        return "\n\n".join(
            [
                "as written:\n" + format_table(result["as_written"]),
                f"with {n} passages of other references added to each answer "
                f"(seed {result['seed']}):\n" + format_table(result["with_distractors"]),
            ]
        )
    if "sets" in result:
        return _sets_table(result)
    lines = [
        f"rag-answers: {result['rows']} answers from {result['data']} "
        "(default RefChecker, decisions at the defaults)",
        f"{'kind':<18}{'label':<14}{'passed':>10}{'pass rate':>11}",
    ]
    for kind, k in result["kinds"].items():
        lines.append(
            f"{kind:<18}{k['label']:<14}{k['passed']:>5} / {k['n']:<3}"
            f"{_pct(k['passed'] / k['n'] if k['n'] else None):>11}"
        )
    lines += [
        f"correct passed {_pct(result['correct_passed'])}, errors caught "
        f"{_pct(result['errors_caught'])}, balanced accuracy {_pct(result['balanced_accuracy'])}",
        f"speed: {result['ms_per_answer']:.1f} ms/answer, {result['ms_per_claim']:.1f} ms/claim "
        f"warm ({result['claims']} claims; CPU {result['cpu_ms_per_claim']:.1f} ms/claim, all "
        f"threads); LLM calls {result['llm_calls']}",
    ]
    for f in result.get("failures", []):
        lines.append(_failure_line(f))
    return "\n".join(lines)


def _failure_line(f: dict[str, Any]) -> str:
    return (
        f"  wrong: {f['id']} ({f['kind']}, passing={f['passing']}, "
        f"P={f['p_hallucinated']}): {f['deciding_claim']!r}"
    )


def _sets_table(result: dict[str, Any]) -> str:
    kinds = list(
        dict.fromkeys(k for part in [*result["sets"], result["pooled"]] for k in part["kinds"])
    )
    head = " | ".join(f"{k} passed" for k in kinds)
    lines = [
        "rag-answers, one line per set (default RefChecker, decisions at the defaults)",
        f"| set | {head} | correct passed | errors caught | balanced | ms/claim |",
        "|---" * (len(kinds) + 5) + "|",
    ]
    for part in [*result["sets"], result["pooled"]]:
        cells = [
            f"{part['kinds'][k]['passed']}/{part['kinds'][k]['n']}" if k in part["kinds"] else "-"
            for k in kinds
        ]
        lines.append(
            f"| {part['data']} | {' | '.join(cells)} | {_pct(part['correct_passed'])} | "
            f"{_pct(part['errors_caught'])} | {_pct(part['balanced_accuracy'])} | "
            f"{part['ms_per_claim']:.1f} |"
        )
    failures = [f for part in result["sets"] for f in part.get("failures", [])]
    for f in failures:
        lines.append(_failure_line(f))
    return "\n".join(lines)
