"""``truthguard bench cascade``: how much a local-first cascade decides alone, and how well.

For each task (HaluEval ``qa``, ``dialogue``, ``summarization``, and ``rag`` for
``$TRUTHGUARD_DATA_DIR/rag_answers/dev.jsonl``) the local check (``RefChecker()`` at its
defaults) scores two disjoint sets of answers:

* **fitting rows**, on which the uncertainty band is chosen
  (:func:`~truthguard.evaluation.band.choose_band`) for ``--coverage`` (the share of answers
  decided locally) or ``--accuracy`` (what the local decisions must reach);
* **bench rows**, on which that band is reported: the share decided locally, the balanced
  accuracy (and accuracy) of the local decisions alone, the local check's own balanced
  accuracy on every bench row for comparison, and how many answers each signal escalates.

HaluEval: the bench rows are the ``--n`` rows spread evenly through each file (those of
``truthguard bench halueval --spread``), the fitting rows the first ``--fit-n`` rows of the file
that are not bench rows; with the defaults (200 each) neither set was among the rows the packaged
decision was fitted on. rag-answers (50 questions, five answers each): the answers to the
even-numbered questions fit, those to the odd-numbered ones are the bench rows (125 each,
whatever ``--n``). ``--rag-bench FILE ...`` reports on other answer sets of the same schema
instead (sets kept aside, written over other references), with the band fitted on every row of
``--rag-fit FILE ...`` (default: all of ``dev.jsonl``): whether a band chosen on one set of
references holds on another.

With ``--llm PROVIDER:MODEL`` (say ``openai:gpt-4o-mini``; keys and ``OPENAI_BASE_URL`` from the
environment) the whole cascade runs on the bench rows, escalating to ``RefChecker`` with that
model as extractor and checker: its balanced accuracy, LLM calls and milliseconds per answer.
Without it the table says so and reports the local part only, which needs no model.

``--stages local,NAME,llm`` measures a cascade of any number of stages instead: ``local``
(``RefChecker()``), ``llm`` (the ``RefChecker`` of ``--llm``) or an open checker (a name such as
``minicheck-flan-t5-large``, ``KIND:MODEL`` or a folder of weights; its ``RefChecker`` scores by
``mean_support`` so that a band has a graded score to cut, and decides at its defaults: the
claims' labels at the authors' threshold). Each stage's band is chosen in order on the fitting
rows (:func:`~truthguard.evaluation.band.fit_stages`: for ``--coverage``, the share of the answers
reaching the stage that it decides, or for ``--accuracy``), each stage running only on the rows
the stages before it send on; the whole cascade then runs on the bench rows, and the table says
who decided what: the answers each stage decided and the balanced accuracy of its decisions, the
LLM calls and milliseconds per answer.

``--cache FILE`` keeps the local results (JSON lines keyed by the input and by a digest of the
local check's code: every file of ``truthguard.refchecker``, ``similarity`` and ``embedding``),
so a re-run with another target only chooses and reports, and a changed local check is run
afresh.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from truthguard._progress import progress
from truthguard._sync import run_sync
from truthguard.bench.halueval import item_inputs, spread_rows
from truthguard.datasets import load_halueval
from truthguard.errors import ConfigurationError, DatasetNotFoundError

__all__ = [
    "HELP",
    "TASKS",
    "add_arguments",
    "format_table",
    "load_rag_answers",
    "run",
    "task_rows",
]

HELP = "local-first cascade: share decided locally and their accuracy (HaluEval, rag-answers)"

TASKS = ("qa", "dialogue", "summarization", "rag")


def load_rag_answers(data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The rows of ``rag_answers/dev.jsonl`` under ``data_dir`` or ``$TRUTHGUARD_DATA_DIR``
    (found and read as ``bench rag-answers`` does)."""
    from truthguard.bench.rag_answers import find_dev, load_rows

    path = find_dev(data_dir)
    if path is None:
        raise DatasetNotFoundError(
            "no rag_answers/dev.jsonl: pass --data DIR or set TRUTHGUARD_DATA_DIR to the folder "
            "holding rag_answers/"
        )
    return load_rows(path)


Row = tuple[str, dict[str, Any], bool]
"""(row id, detector input, gold hallucinated)."""


def _rag_row(r: dict[str, Any], where: str = "") -> Row:
    from truthguard.bench.rag_answers import detector_input

    return (f"{where}{r['id']}", detector_input(r), r["label"] == "hallucinated")


def _rag_files(paths: list[str]) -> list[Row]:
    from truthguard.bench.rag_answers import load_rows

    out: list[Row] = []
    for path in paths:
        rows = load_rows(Path(path).expanduser())
        out += [_rag_row({"id": str(n), **r}, f"{path}:") for n, r in enumerate(rows, 1)]
    return out


def task_rows(
    task: str,
    data: str | None,
    *,
    n: int,
    fit_n: int,
    rag_fit: list[str] | None = None,
    rag_bench: list[str] | None = None,
) -> tuple[list[Row], list[Row]]:
    """The fitting rows and the bench rows of one task (disjoint; see the module doc)."""
    if task == "rag":
        if rag_bench:
            fit_rows = (
                _rag_files(rag_fit) if rag_fit else [_rag_row(r) for r in load_rag_answers(data)]
            )
            bench_rows = _rag_files(rag_bench)
            shared = {_key(i) for _, i, _ in fit_rows} & {_key(i) for _, i, _ in bench_rows}
            if shared:
                raise ConfigurationError(
                    f"--rag-bench shares {len(shared)} answers with the fitting rows: a band is "
                    "reported on answers it was not chosen on"
                )
            return fit_rows, bench_rows
        rows = load_rag_answers(data)
        questions = list(dict.fromkeys(r["id"].rsplit("-", 1)[0] for r in rows))
        side = {q: i % 2 for i, q in enumerate(questions)}
        fit: list[Row] = []
        bench: list[Row] = []
        for r in rows:
            (bench if side[r["id"].rsplit("-", 1)[0]] else fit).append(_rag_row(r))
        return fit, bench  # 125 answers each: --n and --fit-n are HaluEval's
    items = load_halueval(task, data)  # type: ignore[arg-type]
    bench_idx = spread_rows(len(items), n)
    taken = set(bench_idx)
    fit_idx = [i for i in range(len(items)) if i not in taken][:fit_n]

    def rows_of(indices: list[int]) -> list[Row]:
        out = []
        for i in indices:
            for kind, inp in item_inputs(items[i]):
                out.append((f"{task}-{i}-{kind}", inp, kind == "hallucinated"))
        return out

    return rows_of(fit_idx), rows_of(bench_idx)


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    """A digest of the code (and packaged data) the local check's results depend on."""
    import truthguard

    root = Path(truthguard.__file__).parent
    digest = hashlib.sha1()
    for package in ("refchecker", "similarity", "embedding"):
        for path in sorted((root / package).rglob("*")):
            if path.suffix in (".py", ".json") and path.is_file():
                digest.update(str(path.relative_to(root)).encode("utf-8"))
                digest.update(path.read_bytes())
    return digest.hexdigest()


def _key(inp: dict[str, Any]) -> str:
    text = json.dumps(inp, sort_keys=True) + _code_digest()
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _local_results(
    rows: list[Row], detector: Any, cache: dict[str, Any], *, show_progress: bool, desc: str
) -> list[Any]:
    """The local check's result of every row (from ``cache`` where it has one)."""
    from truthguard.result import DetectionResult

    todo = [inp for _, inp, _ in rows if _key(inp) not in cache]
    chunk = 64
    for s in progress(range(0, len(todo), chunk), desc=desc, enabled=show_progress):
        part = todo[s : s + chunk]
        for inp, r in zip(part, detector.batch(part, config={"max_concurrency": 2}), strict=True):
            cache[_key(inp)] = r.model_dump(mode="json")
    return [DetectionResult.model_validate(cache[_key(inp)]) for _, inp, _ in rows]


def _signal_shares(results: list[Any], escalate_on: list[str]) -> dict[str, float | None]:
    """Share of the answers each signal other than ``band`` escalates (in %)."""
    from truthguard.cascade import escalation_reasons

    counts: dict[str, int] = {}
    signals = [x for x in escalate_on if x != "band"]
    for r in results:
        for x in escalation_reasons(r, band=None, escalate_on=signals):
            counts[x] = counts.get(x, 0) + 1
    return {x: _pct(k / len(results)) for x, k in sorted(counts.items())}


def _passed(r: Any) -> bool:
    return bool(r.passing if r.passing is not None else r.label == "factual")


def _balanced(gold: list[bool], passed: list[bool]) -> float | None:
    right = [p for g, p in zip(gold, passed, strict=True) if not g]
    wrong = [not p for g, p in zip(gold, passed, strict=True) if g]
    parts = [sum(x) / len(x) for x in (right, wrong) if x]
    return sum(parts) / len(parts) if parts else None


def _pct(x: float | None) -> float | None:
    return None if x is None else round(100 * x, 1)


def _figures(point: dict[str, Any]) -> dict[str, Any]:
    return {
        "decided_locally": _pct(point["coverage"]),
        "balanced_accuracy": _pct(point["balanced_accuracy"]),
        "accuracy": _pct(point["accuracy"]),
        "correct_passed": _pct(point["correct_passed"]),
        "hallucinated_rejected": _pct(point["hallucinated_rejected"]),
    }


def _band_on(results: list[Any], gold: list[bool], chosen: dict[str, Any]) -> dict[str, Any]:
    """The figures of the chosen band and signals on rows they were not chosen on."""
    from truthguard.cascade import escalation_reasons
    from truthguard.evaluation.band import band_table

    band = chosen["band"]
    signals = chosen["escalate_on"]
    escalated = [
        bool(escalation_reasons(r, band=None if band is None else tuple(band), escalate_on=signals))
        for r in results
    ]
    # no score left to band: the one entry is the local decisions of the rows not escalated
    table = band_table([None] * len(results), gold, [_passed(r) for r in results], forced=escalated)
    return table.point(0)


def _run_cascade(rows: list[Row], cascade: Any, *, show_progress: bool) -> dict[str, Any]:
    """The whole cascade on ``rows``: balanced accuracy, LLM calls and ms per answer."""
    results = []
    started = time.perf_counter()
    chunk = 16
    inputs = [inp for _, inp, _ in rows]
    for s in progress(range(0, len(inputs), chunk), desc="cascade", enabled=show_progress):
        results += cascade.batch(inputs[s : s + chunk], config={"max_concurrency": 4})
    wall = time.perf_counter() - started
    gold = [g for _, _, g in rows]
    passed = [_passed(r) for r in results]
    decided = [str(r.details.get("decided_by", "")) for r in results]
    outcomes: dict[str, int] = {}
    for d in decided:
        outcomes[d] = outcomes.get(d, 0) + 1
    by_stage = {}
    for name in outcomes:
        mine = [i for i, d in enumerate(decided) if d == name]
        g, p = [gold[i] for i in mine], [passed[i] for i in mine]
        by_stage[name] = {
            "answers": len(mine),
            "balanced_accuracy": _pct(_balanced(g, p)),
            "accuracy": _pct(sum(x != y for x, y in zip(g, p, strict=True)) / len(mine)),
        }
    calls = sum(r.usage.llm_calls for r in results)
    tokens = sum(r.usage.total_tokens for r in results)
    return {
        "balanced_accuracy": _pct(_balanced(gold, passed)),
        "llm_calls_per_answer": round(calls / len(rows), 2),
        "tokens_per_answer": round(tokens / len(rows), 1),
        "ms_per_answer": round(1000 * wall / len(rows), 1),
        "decided_by": outcomes,
        "by_stage": by_stage,
    }


def comma_numbers(text: str) -> list[float]:
    """``0.7`` or ``0.7,0.5``: one number, or one per stage (an argparse ``type``)."""
    try:
        return [float(x) for x in text.split(",")]
    except ValueError as e:
        raise argparse.ArgumentTypeError(
            f"expected a number or numbers with commas: {text!r}"
        ) from e


def _each(values: list[float] | None, n: int) -> list[float | None] | None:
    """One target for each of ``n`` stages from one value or one each."""
    if values is None:
        return None
    if len(values) == 1:
        return [values[0]] * n
    if len(values) != n:
        raise SystemExit(f"give one target, or one for each of the {n} stages but the last")
    return list(values)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
    parser.add_argument(
        "--n", type=int, default=200, help="bench rows per task (HaluEval rows: two answers each)"
    )
    parser.add_argument(
        "--fit-n", type=int, default=200, help="fitting rows per task (HaluEval rows)"
    )
    target = parser.add_mutually_exclusive_group()
    target.add_argument(
        "--coverage",
        type=comma_numbers,
        default=None,
        help="share decided locally (default 0.7); with --stages of the answers reaching each "
        "stage, one for all or one each (0.7,0.5)",
    )
    target.add_argument(
        "--accuracy",
        type=comma_numbers,
        default=None,
        help="balanced accuracy the local decisions reach (with --stages: one or one each)",
    )
    parser.add_argument(
        "--escalate-on",
        nargs="+",
        default=None,
        help="signals that escalate (default: CascadeChecker's): band no_evidence "
        "undecided_claims chat_reply second_opinion meaning invalid",
    )
    parser.add_argument(
        "--llm",
        default=None,
        help="PROVIDER:MODEL of the second stage (e.g. openai:gpt-4o-mini); none: local part only",
    )
    parser.add_argument(
        "--stages",
        default=None,
        metavar="local,NAME,llm",
        help="a cascade of these stages, in order: local, llm (the RefChecker of --llm) or an "
        "open checker (a name such as minicheck-flan-t5-large, KIND:MODEL or a folder); each "
        "stage's band is chosen on the fitting rows for --coverage / --accuracy of the answers "
        "reaching it, and the whole cascade is run on the bench rows",
    )
    parser.add_argument("--cache", default=None, help="JSON-lines file of local results to reuse")
    parser.add_argument(
        "--rag-bench",
        nargs="+",
        default=None,
        metavar="FILE",
        help="rag: report on these answer files (rag_answers schema) instead of half of dev.jsonl",
    )
    parser.add_argument(
        "--rag-fit",
        nargs="+",
        default=None,
        metavar="FILE",
        help="rag, with --rag-bench: fit the band on these files (default: all of dev.jsonl)",
    )


def _load_cache(path: str | None) -> dict[str, Any]:
    if path is None or not Path(path).is_file():
        return {}
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                entry = json.loads(line)
                out[entry["key"]] = entry["result"]
    return out


def _save_cache(path: str | None, cache: dict[str, Any]) -> None:
    if path is None:
        return
    with open(path, "w", encoding="utf-8") as f:
        for key, result in cache.items():
            f.write(json.dumps({"key": key, "result": result}) + "\n")


def _second_stage(spec: str) -> Any:
    from truthguard.evaluation.config import ModelSpec, build_model
    from truthguard.refchecker import LLMChecker, LLMExtractor, RefChecker

    provider, _, model = spec.partition(":")
    if not provider or not model:
        raise SystemExit(f"--llm: expected PROVIDER:MODEL, got {spec!r}")
    llm = build_model(ModelSpec(provider=provider, kwargs={"model": model}), field="--llm")
    return RefChecker(extractor=LLMExtractor(model=llm), checker=LLMChecker(model=llm))


def _stage_detectors(spec: str, llm: str | None) -> list[tuple[str, Any]]:
    """``--stages``: each stage's name and detector."""
    from truthguard.refchecker import RefChecker
    from truthguard.refchecker.named import checker_from_spec

    out: list[tuple[str, Any]] = []
    for token in (t.strip() for t in spec.split(",")):
        if token == "local":
            out.append(("local", RefChecker()))
        elif token == "llm":
            if llm is None:
                raise SystemExit("--stages names llm: give its model with --llm PROVIDER:MODEL")
            out.append(("llm", _second_stage(llm)))
        else:
            try:
                checker = checker_from_spec(token)
            except ConfigurationError as e:
                raise SystemExit(f"--stages: {e}") from e
            out.append(
                (Path(token).name or token, RefChecker(checker=checker, score="mean_support"))
            )
    names = [n for n, _ in out]
    if len(names) < 2 or len(set(names)) < len(names):
        raise SystemExit(f"--stages: at least two stages, each named once (got {names})")
    return out


def _run_stages(
    args: argparse.Namespace, coverage: list[float] | None, accuracy: list[float] | None
) -> dict[str, Any]:
    """``--stages``: every band chosen in order on the fitting rows, the cascade run on the
    bench rows."""
    from truthguard.cascade import CascadeChecker, CascadeStage
    from truthguard.evaluation.band import fit_stages

    stages = _stage_detectors(args.stages, args.llm)
    fitted_n = len(stages) - 1
    coverages, accuracies = _each(coverage, fitted_n), _each(accuracy, fitted_n)
    cache = _load_cache(args.cache)
    show = not args.no_progress
    given = args.escalate_on is not None
    out: dict[str, Any] = {
        "stages": [n for n, _ in stages],
        "target": {"coverage": coverages} if coverages is not None else {"accuracy": accuracies},
        "escalate_on": args.escalate_on,
        "tasks": {},
    }

    def results_of(rows: list[Row], desc: str) -> Any:
        def results(k: int, idx: list[int]) -> list[Any]:
            name, detector = stages[k]
            part = [rows[i] for i in idx]
            if name == "local":  # the local check's results are cached
                return _local_results(part, detector, cache, show_progress=show, desc=desc)
            inputs = [inp for _, inp, _ in part]
            return detector.batch(inputs, config={"max_concurrency": 2})

        return results

    try:
        for task in args.tasks:
            fit_rows, bench_rows = task_rows(
                task, args.data, n=args.n, fit_n=args.fit_n, rag_fit=args.rag_fit,
                rag_bench=args.rag_bench,
            )  # fmt: skip
            fitted = fit_stages(
                results_of(fit_rows, f"{task} fit"),
                [g for _, _, g in fit_rows],
                len(stages),
                coverage=coverages,
                accuracy=accuracies,
                escalate_on=[args.escalate_on] * fitted_n if given else None,
                try_signals=[] if given else None,
            )
            row: dict[str, Any] = {
                "fit_rows": len(fit_rows),
                "bench_rows": len(bench_rows),
                "fitted": [
                    {"stage": stages[k][0], **{x: v for x, v in f.items() if x != "curve"}}
                    for k, f in enumerate(fitted)
                ],
            }
            out["tasks"][task] = row
            if len(fitted) < fitted_n or any("error" in f for f in fitted):
                continue  # a band out of reach (or nothing reached a stage): no cascade to run
            chosen = [
                {"band": None if f["band"] is None else tuple(f["band"]),
                 "escalate_on": tuple(f["escalate_on"])}
                for f in fitted
            ]  # fmt: skip
            cascade = CascadeChecker(
                stages=[
                    CascadeStage(name=name, detector=detector, **kw)
                    for (name, detector), kw in zip(stages, [*chosen, {}], strict=True)
                ]
            )
            row["cascade"] = _run_cascade(bench_rows, cascade, show_progress=show)
    finally:
        _save_cache(args.cache, cache)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from truthguard.cascade import OPTIONAL_SIGNALS, CascadeChecker
    from truthguard.evaluation.band import fit_cascade, result_table, tradeoff_curve
    from truthguard.refchecker import RefChecker

    if args.n < 1 or args.fit_n < 1:
        raise SystemExit("--n and --fit-n must be at least 1")
    if args.rag_fit and not args.rag_bench:
        raise SystemExit("--rag-fit needs --rag-bench: without it dev.jsonl is split in two")
    if args.accuracy is None and args.coverage is None:
        args.coverage = [0.7]
    if args.stages is not None:
        return _run_stages(args, args.coverage, args.accuracy)
    if len(args.coverage or args.accuracy) > 1:
        raise SystemExit("one target per stage needs --stages")
    coverage = None if args.coverage is None else args.coverage[0]
    accuracy = None if args.accuracy is None else args.accuracy[0]
    # named signals are used as given; otherwise the optional ones are tried on the fitting rows
    given = args.escalate_on is not None
    escalate_on = list(args.escalate_on or CascadeChecker.model_fields["escalate_on"].default)
    second = _second_stage(args.llm) if args.llm else None
    local = RefChecker()
    run_sync(local.ainvoke({"question": "Q?", "answer": "A cat sat.", "contexts": ["A cat."]}))
    cache = _load_cache(args.cache)
    show = not args.no_progress
    out: dict[str, Any] = {
        "local": "RefChecker()",
        "second_stage": None if second is None else f"RefChecker(LLM {args.llm})",
        "target": {"coverage": coverage} if coverage is not None else {"accuracy": accuracy},
        "escalate_on": escalate_on,
        "tried": [] if given else [x for x in OPTIONAL_SIGNALS if x not in escalate_on],
        "rows": {
            "halueval": f"bench: {args.n} rows spread through each file; fitting: the first "
            f"{args.fit_n} other rows (two answers per row)",
            "rag": (
                "bench: answers to the odd-numbered questions; fitting: the even-numbered"
                if not args.rag_bench
                else f"bench: {', '.join(args.rag_bench)}; fitting: "
                + (", ".join(args.rag_fit) if args.rag_fit else "all of dev.jsonl")
            ),
        },
        "tasks": {},
    }
    pooled: list[tuple[list[Any], list[bool], list[Any], list[bool]]] = []
    try:
        for task in args.tasks:
            fit_rows, bench_rows = task_rows(
                task,
                args.data,
                n=args.n,
                fit_n=args.fit_n,
                rag_fit=args.rag_fit,
                rag_bench=args.rag_bench,
            )
            fit_res = _local_results(fit_rows, local, cache, show_progress=show, desc=f"{task} fit")
            fresh = all(_key(inp) not in cache for _, inp, _ in bench_rows)
            started = time.perf_counter()
            bench_res = _local_results(
                bench_rows, local, cache, show_progress=show, desc=f"{task} bench"
            )
            local_ms = 1000 * (time.perf_counter() - started) / len(bench_rows)
            fit_gold = [g for _, _, g in fit_rows]
            bench_gold = [g for _, _, g in bench_rows]
            pooled.append((fit_res, fit_gold, bench_res, bench_gold))
            try:
                chosen = fit_cascade(
                    fit_res,
                    fit_gold,
                    coverage=coverage,
                    accuracy=accuracy,
                    escalate_on=escalate_on,
                    try_signals=[] if given else None,
                )
            except ConfigurationError as e:  # the target is out of reach on these rows
                out["tasks"][task] = {"error": str(e), "fit_rows": len(fit_rows)}
                continue
            signals = chosen["escalate_on"]
            bench_curve = tradeoff_curve(result_table(bench_res, bench_gold, signals))
            row: dict[str, Any] = {
                "fit_rows": len(fit_rows),
                "bench_rows": len(bench_rows),
                "band": None if chosen["band"] is None else [round(x, 4) for x in chosen["band"]],
                "escalate_on": signals,
                "on_fitting_rows": _figures(chosen),
                "on_bench_rows": _figures(_band_on(bench_res, bench_gold, chosen)),
                "local_alone_balanced_accuracy": _pct(
                    _balanced(bench_gold, [_passed(r) for r in bench_res])
                ),
                # timed only when every bench row was checked in this run (none cached)
                "local_ms_per_answer": round(local_ms, 1) if fresh else None,
                "signals_on_bench_rows": _signal_shares(bench_res, signals),
                "curve_on_bench_rows": [
                    {
                        "band": p["band"],
                        "decided_locally": _pct(p["coverage"]),
                        "balanced_accuracy": _pct(p["balanced_accuracy"]),
                    }
                    for p in bench_curve
                ],
            }
            if second is not None:
                cascade = CascadeChecker(
                    local=local,
                    escalate_to=second,
                    band=None if chosen["band"] is None else tuple(chosen["band"]),
                    escalate_on=tuple(signals),
                )
                row["cascade"] = _run_cascade(bench_rows, cascade, show_progress=show)
            out["tasks"][task] = row
        if len(pooled) > 1:
            out["pooled"] = _pooled(args.tasks, pooled, coverage, accuracy, escalate_on)
    finally:
        _save_cache(args.cache, cache)
    return out


def _pooled(
    tasks: list[str],
    pooled: list[tuple[list[Any], list[bool], list[Any], list[bool]]],
    coverage: float | None,
    accuracy: float | None,
    escalate_on: list[str],
) -> dict[str, Any]:
    """One band for every task: fitted on all their fitting rows together (how the default
    band was chosen), reported on each task's bench rows."""
    from truthguard.evaluation.band import fit_cascade

    fit_res = [r for part in pooled for r in part[0]]
    fit_gold = [g for part in pooled for g in part[1]]
    try:
        chosen = fit_cascade(
            fit_res, fit_gold, coverage=coverage, accuracy=accuracy, escalate_on=escalate_on,
            try_signals=[],
        )  # fmt: skip
    except ConfigurationError as e:
        return {"error": str(e)}
    return {
        "band": None if chosen["band"] is None else [round(x, 4) for x in chosen["band"]],
        "on_fitting_rows": _figures(chosen),
        "on_bench_rows": {
            task: _figures(_band_on(part[2], part[3], chosen))
            for task, part in zip(tasks, pooled, strict=True)
        },
    }


def _fmt(x: Any, suffix: str = "") -> str:
    return "-" if x is None else f"{x}{suffix}"


def _format_stages(result: dict[str, Any]) -> str:
    """The table of a ``--stages`` run: each stage's band, then who decided what."""
    target = result["target"]
    each = ", ".join(f"{v:.0%}" for v in target.get("coverage") or target["accuracy"])
    aim = (
        f"at least {each} of the answers reaching it decided there"
        if "coverage" in target
        else f"its decisions at balanced accuracy >= {each}"
    )
    lines = [
        f"Cascade {' -> '.join(result['stages'])}: each stage's band chosen on the fitting rows "
        f"for {aim}; the whole cascade run on the bench rows",
        "",
        "| task | stage | band | escalate on | fitting rows reaching it | decided there "
        "| bal. acc. of its decisions |",
        "|---|---|---|---|---|---|---|",
    ]
    for task, r in result["tasks"].items():
        for f in r["fitted"]:
            if "error" in f:
                lines.append(f"| {task} | {f['stage']} | {f['error']} | | {f['reached']} | | |")
                continue
            band = "none" if f["band"] is None else f"{f['band'][0]:.3f} - {f['band'][1]:.3f}"
            lines.append(
                f"| {task} | {f['stage']} | {band} | {', '.join(f['escalate_on'])} | "
                f"{f['reached']} | {f['reached'] - f['sent_on']} | "
                f"{_fmt(_pct(f['balanced_accuracy']))} |"
            )
    lines += [
        "",
        "| task | decided by | answers | bal. acc. of its decisions | accuracy |",
        "|---|---|---|---|---|",
    ]
    totals = []
    for task, r in result["tasks"].items():
        c = r.get("cascade")
        if c is None:
            lines.append(f"| {task} | not run: a band is out of reach | | | |")
            continue
        for name, b in c["by_stage"].items():
            lines.append(
                f"| {task} | {name} | {b['answers']} | {_fmt(b['balanced_accuracy'])} | "
                f"{_fmt(b['accuracy'])} |"
            )
        totals.append(
            f"| {task} | {_fmt(c['balanced_accuracy'])} | {c['llm_calls_per_answer']} | "
            f"{c['tokens_per_answer']} | {c['ms_per_answer']} |"
        )
    lines += [
        "",
        "| task | whole cascade bal. acc. | LLM calls / answer | tokens / answer | ms / answer |",
        "|---|---|---|---|---|",
        *totals,
    ]
    return "\n".join(lines)


def format_table(result: dict[str, Any]) -> str:
    if "stages" in result:
        return _format_stages(result)
    target = result["target"]
    aim = (
        f"at least {target['coverage']:.0%} decided locally"
        if "coverage" in target
        else f"local decisions at balanced accuracy >= {target['accuracy']:.0%}"
    )
    lines = [
        f"Local-first cascade: {result['local']} first; band chosen on the fitting rows for "
        f"{aim}, reported on the bench rows; escalate on {', '.join(result['escalate_on'])}"
        + (f" (tried adding: {', '.join(result['tried'])})" if result.get("tried") else ""),
        f"HaluEval {result['rows']['halueval']}; rag-answers {result['rows']['rag']}",
        "",
        "| task | band (local score) | also escalated | decided locally "
        "| balanced acc. of local decisions | accuracy | local alone bal. acc. "
        "| fitting rows: decided / bal. acc. |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for task, r in result["tasks"].items():
        if "error" in r:
            lines.append(f"| {task} | {r['error']} | | | | | | |")
            continue
        band = "none" if r["band"] is None else f"{r['band'][0]:.3f} - {r['band'][1]:.3f}"
        b, f = r["on_bench_rows"], r["on_fitting_rows"]
        added = [x for x in r["escalate_on"] if x not in result["escalate_on"]]
        lines.append(
            f"| {task} | {band} | {', '.join(added) or '-'} | {_fmt(b['decided_locally'], '%')} | "
            f"{_fmt(b['balanced_accuracy'])} | {_fmt(b['accuracy'])} | "
            f"{_fmt(r['local_alone_balanced_accuracy'])} | "
            f"{_fmt(f['decided_locally'], '%')} / {_fmt(f['balanced_accuracy'])} |"
        )
    lines.append("")
    for task, r in result["tasks"].items():
        if "error" in r:
            continue
        shown = ", ".join(f"{k} {v}%" for k, v in r["signals_on_bench_rows"].items()) or "none"
        curve = ", ".join(
            f"{p['decided_locally']:.0f}%: {_fmt(p['balanced_accuracy'])}"
            for p in r["curve_on_bench_rows"]
            if p["decided_locally"] is not None
        )
        lines.append(f"{task}: escalated whatever the score: {shown}")
        if r.get("local_ms_per_answer") is not None:
            lines.append(f"{task}: the local check took {r['local_ms_per_answer']} ms per answer")
        lines.append(f"{task}: best balanced accuracy at each share decided locally: {curve}")
    pooled = result.get("pooled")
    if pooled is not None and "error" not in pooled:
        band = (
            "none"
            if pooled["band"] is None
            else f"{pooled['band'][0]:.3f} - {pooled['band'][1]:.3f}"
        )
        shown = "; ".join(
            f"{task} {_fmt(f['decided_locally'], '%')} at {_fmt(f['balanced_accuracy'])}"
            for task, f in pooled["on_bench_rows"].items()
        )
        lines.append(
            f"One band for every task (fitted on all fitting rows together: "
            f"{_fmt(pooled['on_fitting_rows']['decided_locally'], '%')} decided locally): "
            f"{band}; on the bench rows, decided locally at balanced accuracy: {shown}"
        )
    lines.append("")
    if result["second_stage"] is None:
        lines.append(
            "No LLM configured (--llm PROVIDER:MODEL): the whole cascade's accuracy, LLM calls "
            "and ms per answer are not measured; the figures above are the local part only."
        )
    else:
        lines.append(f"Whole cascade on the bench rows, escalating to {result['second_stage']}:")
        lines.append(
            "| task | balanced acc. | LLM calls / answer | tokens / answer | ms / answer |"
        )
        lines.append("|---|---|---|---|---|")
        for task, r in result["tasks"].items():
            c = r.get("cascade")
            if c is None:
                continue
            lines.append(
                f"| {task} | {_fmt(c['balanced_accuracy'])} | {c['llm_calls_per_answer']} | "
                f"{c['tokens_per_answer']} | {c['ms_per_answer']} |"
            )
    return "\n".join(lines)
