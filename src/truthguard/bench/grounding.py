"""``truthguard bench grounding``: does the default RefChecker reject answers with one wrong fact?

Every figure is a *decision* of ``RefChecker()`` at its defaults (or of the set-up given with
``--threshold`` / ``--score``), never a ranking:

* **CHALE** (reference = the long answer, HTML removed): the share of ``non-halu``, ``mid-halu``,
  ``halu`` and ``swap`` answers that pass (see ``bench refchecker`` for the swap answer), and the
  AUROC of the score, non-halu against each of the others.
* **Perturbations** derived in code from CHALE references with a fixed seed (one fact of a
  copied or reworded reference sentence replaced; see :mod:`truthguard.bench._perturbations`),
  and the copied ones again as *passages*: the sentence between its unchanged neighbours of the
  reference, and as *long passages* with up to two on each side, four sentences or more in all;
  the reworded ones as long passages too, and *reordered* ones: reworded with their clauses
  reordered, unchanged or with one fact replaced; and *invented* sentences (another document's
  sentence holding a name or year of this reference) each put into an unchanged long passage,
  whose false alarms are those of the long passages without it (``--no-passages`` leaves all
  five out). Reported: catch rate per type and variant, false alarms on controls. The ``all``
  column and the headline (substitutions caught, false alarms) count copied and reworded answers
  only, as before passages were added; passages have figures of their own.
* **Fixed cases**: the answers of the issue that introduced this benchmark.
* **Speed**: milliseconds per claim of the perturbation run (copied and reworded answers; the
  passages are checked after it, untimed), with the model loaded (warm), wall clock and CPU time
  of the process (all threads; steadier than wall on a shared machine).

No LLM is called: the detector is the local pipeline.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from typing import Any

from truthguard import metrics
from truthguard._progress import progress
from truthguard._sync import run_sync
from truthguard.bench._checker import add_checker_argument, refchecker_with
from truthguard.bench._perturbations import TYPES, Perturbation, build_perturbations, reword
from truthguard.datasets import load_chale
from truthguard.datasets._loaders import strip_html
from truthguard.errors import InvalidInputError

__all__ = [
    "FIXED_CASES",
    "HELP",
    "Perturbation",
    "add_arguments",
    "auroc",
    "build_perturbations",
    "format_table",
    "reword",
    "run",
    "tabulate",
]

PASSAGES = {
    "passage": "in a passage (the sentence between its neighbours)",
    "long_passage": "in a long passage (up to two neighbours each side)",
    "long_reworded": "reworded, in a long passage",
    "long_reordered": "reworded with clauses reordered, in a long passage",
    "long_invented": "an invented sentence put in a long passage (false alarms: the long passages)",
}
"""The variants that set an answer sentence among its neighbours (reported apart), and how the
table's lines name them."""

# the table's column headers: the variants, PASSAGES in order, then "all"
_COLUMNS = (
    "copied",
    "reworded",
    "passage",
    "long",
    "long-reworded",
    "long-reordered",
    "long-invented",
    "all",
)

# a variant whose controls are another's: long_invented adds a sentence to the long passages,
# whose controls are those passages without it
_CONTROLS = {"long_invented": "long_passage"}

HELP = "default RefChecker decisions: one-fact substitutions from CHALE, CHALE pass rates, speed"

FIXED_QUESTION = "Who made movable type, from what, and when?"
FIXED_REFERENCE = "Bi Sheng made movable type from baked clay in the eleventh century."
FIXED_CASES: list[tuple[str, bool]] = [
    ("Bi Sheng made movable type from baked clay in the eleventh century.", True),
    ("Bi Sheng made movable type from carved jade in the ninth century in Japan.", False),
    ("Bi Sheng made movable type from carved jade.", False),
    ("Gutenberg invented movable type in Japan in 1900.", False),
]
"""(answer, should pass) against :data:`FIXED_REFERENCE`."""

# -- metrics -------------------------------------------------------------------------------------


def auroc(positive: list[float], negative: list[float]) -> float | None:
    """P(a positive scores above a negative), ties counting half (Mann-Whitney)."""
    # truthguard.metrics counts the low-scoring (hallucinated) class as the positive one.
    labels = [False] * len(positive) + [True] * len(negative)
    return metrics.auroc([*positive, *negative], labels)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=None, help="only the first N CHALE questions")
    parser.add_argument(
        "--per-type", type=int, default=100, help="perturbations per type and variant"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the perturbation set")
    parser.add_argument(
        "--threshold", type=float, default=None, help="detector threshold (default: none)"
    )
    parser.add_argument(
        "--score",
        choices=("entailment_ratio", "mean_support", "min_support"),
        default=None,
        help="detector score mode (default: the detector's)",
    )
    parser.add_argument("--skip-chale", action="store_true", help="perturbations only")
    parser.add_argument(
        "--no-passages",
        action="store_true",
        help="leave out the passage variants (the sentence among its neighbours, reworded, "
        "reordered, or an invented sentence among them)",
    )
    parser.add_argument("--batch", type=int, default=64, help="answers per abatch call")
    parser.add_argument(
        "--save-perturbations",
        metavar="FILE",
        default=None,
        help="write the perturbation set drawn (JSON lines) to FILE",
    )
    parser.add_argument(
        "--perturbations",
        metavar="FILE",
        default=None,
        help="check the perturbation set saved in FILE instead of drawing one: the set is drawn "
        "from the references' split sentences, so a change to the split draws another; compare "
        "two versions of the check on one set",
    )
    parser.add_argument(
        "--chat",
        choices=("open", "grounded"),
        default=None,
        help="ask every question in a chat (the question as the history), checked with "
        "RefChecker(chat_replies=...); default: no chat",
    )
    add_checker_argument(parser)


def _passes(result: Any) -> bool:
    if result.passing is not None:
        return bool(result.passing)
    return result.label.value == "factual"


async def _run_all(detector: Any, inputs: list[dict[str, Any]], batch: int, show: bool) -> list:
    out: list = []
    chunks = [inputs[s : s + batch] for s in range(0, len(inputs), batch)]
    for chunk in progress(chunks, desc="grounding", enabled=show):
        # the batch embeds its texts in waves, the next while one is checked
        out.extend(await detector.abatch(chunk))
    return out


def _n_claims(results: list) -> int:
    return sum(len(r.details.get("claims", [])) for r in results)


def tabulate(perturbations: list[Perturbation], flagged: list[bool]) -> dict[str, Any]:
    """The ``perturbations`` block of the result: rates per kind and variant (``flagged``, ``n``,
    ``rate``), the headline over the ``all`` column (copied and reworded answers only), and the
    same two figures over each passage variant (None when there are none; the false alarms of
    ``long_invented`` are those of the long passages it is put in)."""
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for p, f in zip(perturbations, flagged, strict=True):
        # "all" keeps the figures of before passages: copied and reworded answers only
        for variant in (p["variant"], "all") if p["variant"] not in PASSAGES else (p["variant"],):
            cell = table[p["kind"]][variant]
            cell[0] += f
            cell[1] += 1
    rates = {
        kind: {
            v: {"flagged": c[0], "n": c[1], "rate": 100.0 * c[0] / c[1]} for v, c in cols.items()
        }
        for kind, cols in table.items()
    }
    caught, alarms = _share(rates, "all")
    out: dict[str, Any] = {
        "rates": rates,
        "caught_overall": caught if caught is not None else 0.0,
        "false_alarms": alarms if alarms is not None else 0.0,
        "n": sum(p["variant"] not in PASSAGES for p in perturbations),
    }
    for variant in PASSAGES:
        out[f"{variant}_caught"] = _share(rates, variant)[0]
        out[f"{variant}_false_alarms"] = _share(rates, _CONTROLS.get(variant, variant))[1]
        out[f"n_{variant}"] = sum(p["variant"] == variant for p in perturbations)
    return out


def _share(
    rates: dict[str, dict[str, dict[str, Any]]], column: str
) -> tuple[float | None, float | None]:
    """(% of substitutions flagged, % of controls flagged) in one column of the table; None where
    the column has none."""
    out: list[float | None] = []
    for group in ([k for k in rates if k in TYPES], [k for k in rates if k not in TYPES]):
        cells = [rates[k][column] for k in group if column in rates[k]]
        n = sum(c["n"] for c in cells)
        out.append(100.0 * sum(c["flagged"] for c in cells) / n if n else None)
    return out[0], out[1]


_PERTURBATION_FIELDS = ("answer", "reference", "kind", "variant", "ref_id")


def _load_perturbations(path: str, n_items: int) -> list[Perturbation]:
    """A perturbation set written by ``--save-perturbations``, each line checked; copied and
    reworded answers first, as :func:`build_perturbations` orders them."""
    from truthguard.evaluation.io import iter_jsonl

    out: list[Perturbation] = []
    for where, p in iter_jsonl(path):
        missing = [k for k in _PERTURBATION_FIELDS if k not in p]
        if missing:
            raise InvalidInputError(where, f"missing field {missing[0]!r}")
        if not isinstance(p["ref_id"], int) or not 0 <= p["ref_id"] < n_items:
            raise InvalidInputError(where, f"ref_id {p['ref_id']!r} is no CHALE question of --data")
        out.append(p)  # type: ignore[arg-type]
    return sorted(out, key=lambda p: p["variant"] in PASSAGES)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from truthguard.bench.refchecker import KINDS, build_answers
    from truthguard.refchecker import RefChecker
    from truthguard.similarity import get_default_similarity

    kwargs: dict[str, Any] = {"threshold": args.threshold, "batch_concurrency": 2}
    if args.score:
        kwargs["score"] = args.score
    chat = getattr(args, "chat", None)
    if chat:
        kwargs["chat_replies"] = chat
    checker = getattr(args, "checker", "local")
    detector = refchecker_with(checker, **kwargs) if checker != "local" else RefChecker(**kwargs)

    def asked(question: str, answer: str, reference: str) -> dict[str, Any]:
        inp = {"question": question, "answer": answer, "references": [reference]}
        return {**inp, "history": [question]} if chat else inp

    show = not args.no_progress
    items = load_chale(args.data)
    references = [strip_html(it.long_answer) for it in items]
    get_default_similarity().model  # load outside the timings  # noqa: B018

    fixed = []
    for answer, should_pass in FIXED_CASES:
        r = detector.invoke(asked(FIXED_QUESTION, answer, FIXED_REFERENCE))
        fixed.append(
            {"answer": answer, "should_pass": should_pass, "passed": _passes(r), "score": r.score}
        )

    with_passages = not args.no_passages
    saved = getattr(args, "perturbations", None)
    if saved:
        perturbations = _load_perturbations(saved, len(items))
        if not with_passages:
            perturbations = [p for p in perturbations if p["variant"] not in PASSAGES]
    else:
        perturbations = build_perturbations(
            references, per_type=args.per_type, seed=args.seed, passages=with_passages
        )
    if getattr(args, "save_perturbations", None):
        with open(args.save_perturbations, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(p, ensure_ascii=False) + "\n" for p in perturbations)
    # copied and reworded answers first (those alone are timed, as before passages were added),
    # then the passages, which build_perturbations puts last
    n_main = sum(p["variant"] not in PASSAGES for p in perturbations)
    n_passage = len(perturbations) - n_main
    inputs = [
        asked(items[p["ref_id"]].question, p["answer"], p["reference"]) for p in perturbations
    ]
    started, cpu = time.perf_counter(), time.process_time()
    results = run_sync(_run_all(detector, inputs[:n_main], args.batch, show))
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    n_claims = _n_claims(results)
    if n_passage:
        results += run_sync(_run_all(detector, inputs[n_main:], args.batch, show))
    out: dict[str, Any] = {
        "config": {
            "threshold": args.threshold,
            "score": detector.score,
            "verdict": detector.verdict,
            "checker": type(detector.checker).__name__,
            "per_type": args.per_type,
            "seed": args.seed,
            "passages": with_passages,
            "chat": chat,
            "perturbations_from": saved or None,
        },
        "fixed_cases": fixed,
        "perturbations": tabulate(perturbations, [not _passes(r) for r in results]),
        "ms_per_claim": 1000.0 * seconds / max(n_claims, 1),
        "cpu_ms_per_claim": 1000.0 * cpu_seconds / max(n_claims, 1),
        "claims": n_claims,
    }
    if args.skip_chale:
        return out
    chale_items = items[: args.limit] if args.limit else items
    answers = build_answers(chale_items)
    jobs = [(k, i) for k in KINDS for i in range(len(chale_items)) if answers[k][i] is not None]
    chale_inputs = [asked(chale_items[i].question, answers[k][i], references[i]) for k, i in jobs]
    started, cpu = time.perf_counter(), time.process_time()
    chale_results = run_sync(_run_all(detector, chale_inputs, args.batch, show))
    chale_seconds, chale_cpu = time.perf_counter() - started, time.process_time() - cpu
    chale_claims = max(_n_claims(chale_results), 1)
    passed: dict[str, list[bool]] = defaultdict(list)
    scores: dict[str, list[float]] = defaultdict(list)
    for (k, _), r in zip(jobs, chale_results, strict=True):
        passed[k].append(_passes(r))
        scores[k].append(r.score if r.score is not None else 0.0)
    out["chale"] = {
        "n": len(chale_items),
        "pass_rate": {k: 100.0 * sum(v) / len(v) for k, v in passed.items()},
        "n_answers": {k: len(v) for k, v in passed.items()},
        "auroc": {k: auroc(scores["non_halu"], scores[k]) for k in KINDS if k != "non_halu"},
        "ms_per_claim": 1000.0 * chale_seconds / chale_claims,
        "cpu_ms_per_claim": 1000.0 * chale_cpu / chale_claims,
    }
    return out


def format_table(result: dict[str, Any]) -> str:
    """Catch rates per type and variant, false alarms, CHALE pass rates, fixed cases, speed."""
    p = result["perturbations"]
    lines = [
        f"config: {result['config']}",
        "",
        f"{'perturbation':<18} " + " ".join(f"{c:>14}" for c in _COLUMNS),
    ]
    order = [*TYPES, "unchanged", "reworded"]
    for kind in [k for k in order if k in p["rates"]]:
        cols = p["rates"][kind]
        cells = []
        for v in ("copied", "reworded", *PASSAGES, "all"):
            c = cols.get(v)
            cells.append(f"{c['rate']:5.1f}% ({c['n']:>3})" if c else f"{'-':>14}")
        name = kind if kind in TYPES else f"control:{kind}"
        lines.append(f"{name:<18} " + " ".join(f"{c:>14}" for c in cells))
    lines += [
        "",
        f"one-fact substitutions caught: {p['caught_overall']:.1f}%   "
        f"false alarms on controls: {p['false_alarms']:.1f}%   (all: copied and reworded)",
    ]
    for variant, what in PASSAGES.items():
        pc, pa = p.get(f"{variant}_caught"), p.get(f"{variant}_false_alarms")
        if pc is not None or pa is not None:
            lines.append(
                f"{what}: substitutions caught "
                + (f"{pc:.1f}%" if pc is not None else "-")
                + "   false alarms "
                + (f"{pa:.1f}%" if pa is not None else "-")
            )
    lines += [
        f"speed: {result['ms_per_claim']:.1f} ms/claim warm ({result['claims']} claims; "
        f"CPU {result['cpu_ms_per_claim']:.1f} ms/claim, all threads)",
        "",
        "fixed cases (reference: " + FIXED_REFERENCE + ")",
    ]
    for case in result["fixed_cases"]:
        ok = "ok  " if case["passed"] == case["should_pass"] else "FAIL"
        verdict = "passes  " if case["passed"] else "rejected"
        lines.append(f"  {ok} {verdict} {case['answer']}")
    if "chale" in result:
        c = result["chale"]
        lines += [
            "",
            f"CHALE ({c['n']} questions): share of answers passing, AUROC non-halu vs kind",
        ]
        for kind, rate in c["pass_rate"].items():
            a = c["auroc"].get(kind)
            extra = f"   AUROC {a:.3f}" if a is not None else ""
            lines.append(f"  {kind:<10} {rate:5.1f}% of {c['n_answers'][kind]}{extra}")
        lines.append(
            f"  speed: {c['ms_per_claim']:.1f} ms/claim (CPU {c['cpu_ms_per_claim']:.1f} ms/claim)"
        )
    return "\n".join(lines)
