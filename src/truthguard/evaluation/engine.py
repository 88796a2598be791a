"""``evaluate``: score every row of a data file with the configured detectors.

The scoring of one batch of rows (:func:`~truthguard.evaluation.scoring.ascore_rows`) is shared
by both engines: ``local`` runs it here batch after batch, ``ray`` runs it inside Ray Data actors
(:mod:`truthguard.evaluation.ray_engine`). Either way results are appended to
``OUT/results.jsonl`` as they arrive, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Literal

from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.evaluation._lock import out_lock
from truthguard.evaluation.config import (
    EvaluateConfig,
    build_detectors,
    build_store,
    load_config,
)
from truthguard.evaluation.io import (
    ResultWriter,
    read_results,
    read_rows,
    unique_results,
    write_parquet,
)
from truthguard.evaluation.scoring import Job, ascore_rows, detector_fingerprint, result_row
from truthguard.metrics import confusion, precision_recall_f1
from truthguard.result import Label

__all__ = [
    "ascore_rows",
    "detector_fingerprint",
    "evaluate",
    "format_summary",
    "result_row",
    "summarize",
]

Engine = Literal["local", "ray"]


def _check_resumable(
    results: list[dict[str, Any]], fingerprints: dict[str, str], out: Path
) -> None:
    for r in results:
        fp = fingerprints.get(r["detector"])
        if fp is not None and r.get("fingerprint") != fp:
            raise ConfigurationError(
                f"{out}: results of detector {r['detector']!r} were made with other options; "
                "write to a new --out, or pass --restart to score everything again"
            )


def _out_dir(out: str | Path) -> Path:
    """``out`` as a directory that exists (made here), or an error naming it."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InvalidInputError("out", f"{out} is not a directory (results go into a directory)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InvalidInputError("out", f"cannot create the directory {out}: {e.strerror}") from e
    if not os.access(out, os.W_OK | os.X_OK):
        raise InvalidInputError("out", f"cannot write into {out}: permission denied")
    return out


def evaluate(
    data: str | Path,
    config: str | Path | dict[str, Any] | EvaluateConfig,
    out: str | Path,
    *,
    engine: Engine = "local",
    restart: bool = False,
    limit: int | None = None,
    progress: bool = True,
    wait: bool = False,
) -> dict[str, Any]:
    """Score every row of ``data`` with the detectors of ``config``; results go to ``out``.

    Args:
        data: A JSONL, JSON, CSV or Parquet file of rows (``question``, ``answer``, optional
            ``contexts``, ``label``, ``id`` and any detector-specific columns).
        config: A config file (YAML / TOML / JSON), a dict, or an :class:`EvaluateConfig`.
        out: Output directory: ``results.jsonl``, ``results.parquet``, ``summary.json``.
        engine: ``local`` (this process) or ``ray`` (Ray Data actors; needs ``truthguard[ray]``).
        restart: Drop earlier results in ``out`` instead of resuming.
        limit: Only the first ``limit`` rows.
        progress: Show a progress bar (rows x detectors, rate, ETA) on stderr.
        wait: When another run holds ``out`` (one run per directory at a time: an operating
            system lock on ``out/.lock``, released however its holder exits), wait for it to
            finish and then resume after it, instead of refusing at once with an
            :class:`InvalidInputError` on ``out``.

    Returns:
        The summary (also written to ``out/summary.json``): per detector, counts, pass rate,
        mean score, cost and, with gold labels, precision / recall / F1 / AUROC.
    """
    if engine not in ("local", "ray"):
        raise InvalidInputError("engine", f"expected 'local' or 'ray', got {engine!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidInputError("limit", "must be a positive integer")
    cfg = load_config(config)
    base_dir = Path(config).resolve().parent if isinstance(config, str | Path) else Path.cwd()
    out = _out_dir(out)
    with out_lock(out, wait=wait):
        return _evaluate(data, cfg, base_dir, out, engine, restart, limit, progress)


def _evaluate(
    data: str | Path,
    cfg: EvaluateConfig,
    base_dir: Path,
    out: Path,
    engine: Engine,
    restart: bool,
    limit: int | None,
    progress: bool,
) -> dict[str, Any]:
    rows = read_rows(data, cfg.columns)
    if limit is not None:
        rows = rows[:limit]
    results_path = out / "results.jsonl"
    if restart and results_path.exists():
        results_path.unlink()
    fingerprints = {name: detector_fingerprint(cfg, name) for name in cfg.detectors}
    writer = ResultWriter(results_path)
    _check_resumable(read_results(results_path), fingerprints, out)
    todo = {r["id"]: {n for n in cfg.detectors if (r["id"], n) not in writer.done} for r in rows}
    pending = [r for r in rows if todo[r["id"]]]
    total = sum(len(todo[r["id"]]) for r in pending)

    from truthguard._progress import progress as bar_of

    # Built before the bar starts: a model that cannot be built (no API key) is one line.
    local = pending and engine == "local"
    detectors = {}
    if local:
        detectors = build_detectors(cfg, store=build_store(cfg.store, base_dir=base_dir))
    bar: Any = bar_of(iter(()), desc=f"evaluate ({engine})", total=total, enabled=progress)
    started = time.perf_counter()
    job = Job(cfg, base_dir, pending, todo, fingerprints, writer, bar)
    try:
        if local:
            _run_local(job, detectors)
        elif pending:
            from truthguard.evaluation.ray_engine import run_ray

            run_ray(job)
    finally:
        bar.close()
    seconds = time.perf_counter() - started

    ids = {r["id"] for r in rows}
    results = [r for r in read_results(results_path) if r["id"] in ids]  # one per row, detector
    write_parquet(results, out / "results.parquet")
    summary = summarize(results)
    summary["run"] = {
        "engine": engine,
        "rows": len(rows),
        "scored_now": total,
        "skipped": len(rows) * len(cfg.detectors) - total,
        "seconds": round(seconds, 3),
        "rows_per_second": round(len({r["id"] for r in pending}) / seconds, 3)
        if pending and seconds > 0
        else None,
        "out": str(out),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def _run_local(job: Job, detectors: dict[str, Any]) -> None:
    from truthguard._sync import run_sync

    cfg = job.config
    for start in range(0, len(job.rows), cfg.batch_size):
        chunk = job.rows[start : start + cfg.batch_size]
        results = run_sync(ascore_rows(detectors, job.fingerprints, chunk, job.todo))
        job.bar.update(job.writer.write(results))


# -- summary ------------------------------------------------------------------------------------


def _flagged(r: dict[str, Any]) -> bool | None:
    """Predicted hallucinated (True), passed (False), or no verdict (None)."""
    if r["label"] in (Label.INVALID.value, Label.UNVERIFIABLE.value):
        return None
    if r["passing"] is not None:
        return not r["passing"]
    return r["label"] == Label.HALLUCINATED.value


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-detector figures of a list of result rows, each (row, detector) counted once."""
    from truthguard.evaluation.points import auroc  # to 4 places, as calibrate reports it

    by: dict[str, list[dict[str, Any]]] = {}
    for r in unique_results(results):
        by.setdefault(r["detector"], []).append(r)
    out: dict[str, Any] = {"detectors": {}}
    for name, rs in by.items():
        flags = [_flagged(r) for r in rs]
        verdicts = [f for f in flags if f is not None]
        scores = [r["score"] for r in rs if r["score"] is not None]
        usage = [r["usage"] for r in rs]
        entry: dict[str, Any] = {
            "n": len(rs),
            "invalid": sum(r["label"] == Label.INVALID.value for r in rs),
            "unverifiable": sum(r["label"] == Label.UNVERIFIABLE.value for r in rs),
            "flagged": sum(bool(f) for f in verdicts),
            "pass_rate": round(1 - sum(verdicts) / len(verdicts), 4) if verdicts else None,
            "mean_score": round(sum(scores) / len(scores), 4) if scores else None,
            "llm_calls": sum(u["llm_calls"] for u in usage),
            "cached_calls": sum(u["cached_calls"] for u in usage),
            "tokens": sum(u["prompt_tokens"] + u["completion_tokens"] for u in usage),
            "llm_seconds": round(sum(u["llm_seconds"] for u in usage), 3),
            "check_seconds": round(sum(u["wall_seconds"] for u in usage), 3),
        }
        labelled = [(f, r) for f, r in zip(flags, rs, strict=True) if r["gold"] is not None]
        if labelled:
            pairs = [(f, r["gold"] == "hallucinated") for f, r in labelled if f is not None]
            counts = confusion([f for f, _ in pairs], [g for _, g in pairs])
            p, rec, f1 = precision_recall_f1(*counts)
            scored = [(r["score"], r["gold"] == "hallucinated") for _, r in labelled]
            scored = [(s, g) for s, g in scored if s is not None]
            entry.update(
                {
                    "labelled": len(labelled),
                    "precision": None if p is None else round(p, 4),
                    "recall": None if rec is None else round(rec, 4),
                    "f1": None if f1 is None else round(f1, 4),
                    "accuracy": round(sum(f == g for f, g in pairs) / len(pairs), 4)
                    if pairs
                    else None,
                    "auroc": auroc([s for s, _ in scored], [g for _, g in scored]),
                }
            )
        out["detectors"][name] = entry
    return out


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as a text table."""
    head = (
        f"{'detector':<16} {'n':>6} {'invalid':>7} {'pass':>6} {'mean':>7} {'P':>6} {'R':>6} "
        f"{'F1':>6} {'AUROC':>6} {'calls':>7} {'cached':>7} {'tokens':>9}"
    )
    lines = [head, "-" * len(head)]

    def f(v: Any, spec: str = ".3f") -> str:
        return "-" if v is None else format(v, spec)

    for name, e in summary["detectors"].items():
        lines.append(
            f"{name:<16} {e['n']:>6} {e['invalid']:>7} {f(e['pass_rate'], '.1%'):>6} "
            f"{f(e['mean_score']):>7} {f(e.get('precision')):>6} {f(e.get('recall')):>6} "
            f"{f(e.get('f1')):>6} {f(e.get('auroc')):>6} {e['llm_calls']:>7} "
            f"{e['cached_calls']:>7} {e['tokens']:>9}"
        )
    run = summary.get("run")
    if run:
        rate = run["rows_per_second"]
        lines += [
            "",
            f"engine={run['engine']} rows={run['rows']} scored now={run['scored_now']} "
            f"skipped (already done)={run['skipped']} time={run['seconds']:.1f}s "
            f"rows/s={'-' if rate is None else rate}  -> {run['out']}",
        ]
    return "\n".join(lines)
