"""``truthguard bench rv``: Reverse Validation on PHD, replaying the recorded ChatGPT outputs.

Every passage goes through the real detector (:class:`~truthguard.rv.ReverseValidation`): the
replay model serves the recorded stage-1 and stage-2 outputs by (entity, stage), the detector
builds its prompts, parses, matches and returns a :class:`~truthguard.result.DetectionResult`.
Scores use the human PHD labels with non-factual as the positive class. Tokens are counted with
tiktoken on the prompts the detector sends and on the recorded answers (the replay model reports
no usage), so they are comparable in kind, not in wording, to the published cost.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from statistics import fmean
from typing import Any

from truthguard._progress import ProgressCallback, progress
from truthguard._sync import run_sync
from truthguard.datasets import (
    PHDPassage,
    RVRecord,
    load_phd,
    load_rv_records,
    load_wikibio_records,
)
from truthguard.result import DetectionResult, Label
from truthguard.rv import ReverseValidation, replay_model

__all__ = ["HELP", "PUBLISHED", "add_arguments", "format_table", "run", "scores"]

HELP = "Reverse Validation (QG / EM) on PHD from recorded ChatGPT outputs"

DOMAINS = ("PHD-Low", "PHD-Medium", "PHD-High")

# Paper, Tables 3 and 5 (full PHD, ChatGPT): F1, P, R, per-domain F1, tokens and seconds / passage.
PUBLISHED: dict[str, dict[str, Any]] = {
    "qg": {
        "f1": 52.3,
        "precision": 40.7,
        "recall": 73.1,
        "domains": {"PHD-Low": 58.6, "PHD-Medium": 53.3, "PHD-High": 33.3},
        "tokens_per_passage": 297.3,
        "seconds_per_passage": 2.65,
        "wikibio_accuracy": 74.2,
    },
    "em": {
        "f1": 59.1,
        "precision": 48.0,
        "recall": 76.9,
        "domains": {"PHD-Low": 63.6, "PHD-Medium": 64.2, "PHD-High": 41.9},
        "tokens_per_passage": 510.4,
        "seconds_per_passage": 7.25,
        "wikibio_accuracy": 67.2,
    },
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``truthguard bench rv``."""
    parser.add_argument("--variant", choices=("em", "qg"), default="em", help="RV variant")
    parser.add_argument(
        "--matcher",
        choices=("paper", "robust"),
        default="paper",
        help="stage-3 matcher: the published rules or the robust one",
    )
    parser.add_argument(
        "--concurrency", type=int, default=8, help="passages checked at once (abatch bound)"
    )


def scores(predicted: Sequence[bool], actual: Sequence[bool]) -> dict[str, float | None]:
    """F1 / precision / recall in percent, positive = hallucinated (None when undefined)."""
    tp = sum(p and a for p, a in zip(predicted, actual, strict=True))
    fp = sum(p and not a for p, a in zip(predicted, actual, strict=True))
    fn = sum(a and not p for p, a in zip(predicted, actual, strict=True))
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "f1": None if f1 is None else round(100 * f1, 2),
        "precision": None if precision is None else round(100 * precision, 2),
        "recall": None if recall is None else round(100 * recall, 2),
    }


async def _check_all(
    detector: ReverseValidation, inputs: list[dict[str, Any]], *, desc: str, enabled: bool
) -> list[DetectionResult]:
    bar: Any = progress(iter(()), desc=desc, total=len(inputs), enabled=enabled)
    try:
        return await detector.abatch(
            inputs,
            {"max_concurrency": detector.batch_concurrency, "callbacks": [ProgressCallback(bar)]},
        )
    finally:
        bar.close()


def _detector(variant: str, matcher: str, records: list[RVRecord], concurrency: int) -> Any:
    # The recordings hold no rebuilt stage-1 query: detect and report leaks, do not rebuild.
    # The paper counted a match under a query that names the entity: so does its replay.
    return ReverseValidation(
        model=replay_model(variant, records=records),  # type: ignore[arg-type]
        variant=variant,
        matcher=matcher,
        rebuild_leaks=False,
        trust_leaking_queries=True,
        batch_concurrency=max(1, concurrency),
    )


def _leaking_matches(items: Sequence[PHDPassage], results: Sequence[DetectionResult]) -> list[str]:
    """Entities whose match came under a stage-1 query naming them (a default detector would
    give these no verdict)."""
    return [
        p.entity
        for p, r in zip(items, results, strict=True)
        if r.label == Label.FACTUAL and (r.details or {}).get("leak", {}).get("still_leaking")
    ]


def _flagged(result: DetectionResult) -> bool:
    return result.label == Label.HALLUCINATED


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Replay every recorded PHD passage through the detector and score it."""
    variant, matcher = args.variant, args.matcher
    show = not getattr(args, "no_progress", False)
    passages: list[PHDPassage] = load_phd(args.data)
    records = load_rv_records(variant, args.data)
    recorded = {r.entity for r in records}
    items = [p for p in passages if p.entity in recorded]
    detector = _detector(variant, matcher, records, args.concurrency)
    results = run_sync(
        _check_all(
            detector,
            [{"answer": p.passage, "entity": p.entity} for p in items],
            desc=f"rv {variant}/{matcher}",
            enabled=show,
        )
    )
    invalid = [p.entity for p, r in zip(items, results, strict=True) if r.is_invalid]
    if invalid:  # replayed outputs should always parse: say so loudly, never hide it
        print(f"warning: {len(invalid)} invalid results: {invalid[:5]}", file=sys.stderr)
    flagged = [_flagged(r) for r in results]
    truth = [p.is_hallucinated for p in items]
    out: dict[str, Any] = {"variant": variant, "matcher": matcher, "n": len(items)}
    out.update(scores(flagged, truth))
    out["domains"] = {
        d: scores(
            [f for f, p in zip(flagged, items, strict=True) if p.domain == d],
            [t for t, p in zip(truth, items, strict=True) if p.domain == d],
        )
        for d in DOMAINS
        if any(p.domain == d for p in items)
    }
    out["leaking_matches"] = _leaking_matches(items, results)
    out["wikibio_accuracy"] = _wikibio_accuracy(args, variant, matcher, show)
    out["tokens_per_passage"] = round(fmean(r.usage.total_tokens for r in results), 1)
    out["seconds_per_passage"] = round(fmean(r.usage.wall_seconds for r in results), 4)
    return out


def _wikibio_accuracy(
    args: argparse.Namespace, variant: str, matcher: str, show: bool
) -> float | None:
    """Share of WikiBio-GPT3 passages (all non-factual) the detector rejects, or None."""
    records = load_wikibio_records(variant, args.data)  # type: ignore[arg-type]
    if not records:
        return None
    detector = _detector(variant, matcher, records, args.concurrency)
    results = run_sync(
        _check_all(
            detector,
            [{"answer": r.passage, "entity": r.entity} for r in records],
            desc=f"wikibio {variant}/{matcher}",
            enabled=show,
        )
    )
    return round(100 * fmean(_flagged(r) for r in results), 2)


def _pct(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:5.1f}"


def format_table(result: dict[str, Any]) -> str:
    """The measured numbers next to the published ones."""
    pub = PUBLISHED[result["variant"]]
    lines = [
        f"Reverse Validation via {result['variant'].upper()}, matcher={result['matcher']}, "
        f"{result['n']} PHD passages (non-factual = positive)",
        "",
        f"{'':<12} {'F1':>6} {'P':>6} {'R':>6}   published F1",
        f"{'PHD':<12} {_pct(result['f1']):>6} {_pct(result['precision']):>6} "
        f"{_pct(result['recall']):>6}   {pub['f1']:.1f} (P {pub['precision']:.1f}, "
        f"R {pub['recall']:.1f})",
    ]
    for d, s in result["domains"].items():
        lines.append(
            f"{d:<12} {_pct(s['f1']):>6} {_pct(s['precision']):>6} {_pct(s['recall']):>6}   "
            f"{pub['domains'][d]:.1f}"
        )
    wb = result["wikibio_accuracy"]
    leaking = result["leaking_matches"]
    lines += [
        "",
        f"matches under a query that names the entity: {len(leaking)}, counted as the paper "
        "did (a default detector gives them no verdict)",
        f"WikiBio-GPT3 accuracy: {'n/a (no wiki_bio_*_record.json)' if wb is None else _pct(wb)}"
        f"   published {pub['wikibio_accuracy']:.1f}",
        f"tokens / passage:  {result['tokens_per_passage']:8.1f}   published "
        f"{pub['tokens_per_passage']:.1f}",
        f"seconds / passage: {result['seconds_per_passage']:8.4f}   published "
        f"{pub['seconds_per_passage']:.2f} (replay: no model latency)",
    ]
    return "\n".join(lines)
