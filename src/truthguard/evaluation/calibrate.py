"""Choosing a detector's threshold on a labelled sample.

Hallucinated is the positive class and an answer is flagged when its score is *below* the
threshold (``passing = score >= threshold``, as everywhere in truthguard). :func:`calibrate`
sweeps every distinct score as a threshold, computes the ROC and precision-recall curves, picks
the operating point for a target precision, recall or best F1, and can write the thresholds into
the config file that ``truthguard evaluate`` and the guard read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from truthguard.errors import InvalidInputError
from truthguard.evaluation.points import (
    OperatingPoint,
    Target,
    auroc,
    choose_threshold,
    sweep,
)
from truthguard.evaluation.refit import base_decision, refit_decision

__all__ = [
    "OperatingPoint",
    "auroc",
    "calibrate",
    "choose_threshold",
    "dump",
    "format_calibration",
    "sweep",
]


def calibrate(
    results: str | Path | list[dict[str, Any]],
    *,
    target: Target = "f1",
    value: float | None = None,
    detectors: Sequence[str] | None = None,
    config: str | Path | None = None,
    write_config: str | Path | None = None,
    refit_decision: str | Path | None = None,
    l2: float = 1.0,
    cascade_coverage: float | Sequence[float] | None = None,
    cascade_accuracy: float | Sequence[float] | None = None,
    cascade_stages: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Choose a threshold per detector from labelled results of ``truthguard evaluate``.

    Args:
        results: A run directory, a ``results.jsonl``, or result rows.
        target: ``precision``, ``recall`` (each needs ``value``) or ``f1``.
        value: The precision or recall to reach, in (0, 1].
        detectors: Only these detector names (default: every one with labelled scores).
        config: The config the run used; with ``write_config`` the thresholds are saved into
            a copy of it (``write_config`` may be the same path, to update it in place: the
            config is then kept as ``CONFIG.bak``, since the rewrite drops its comments).
        write_config: Where to write the updated config (``calibrated_path(config)`` is what
            the command line picks).
        refit_decision: Also refit the answer-level decision of the local RefChecker in the
            results (the one of ``detectors`` when several) and save it to this file (see
            :mod:`~truthguard.evaluation.refit`); that detector then gets no score threshold,
            and a written config names the file in its ``options.decision``.
        l2: The refit's penalty on the standardised coefficients.
        cascade_coverage: Also choose, for each detector (the local stage of a
            :class:`~truthguard.cascade.CascadeChecker`), the uncertainty band that decides at
            least this share of the answers locally, as accurately as it can (see
            :func:`~truthguard.evaluation.band.fit_cascade`).
        cascade_accuracy: Or the band that decides the most locally while the local
            decisions reach this balanced accuracy.
        cascade_stages: Detectors of the run, in order, as the stages of one
            :class:`~truthguard.cascade.CascadeChecker` (each run on every answer): their bands
            are chosen together (:func:`~truthguard.evaluation.band.fit_stages`), each stage's
            for ``cascade_coverage`` / ``cascade_accuracy`` (one value for every stage but the
            last, or one each) on the answers the stages before it send on; a written config
            gets a ``cascade`` detector of those stages with their bands.

    Returns:
        ``{"target": ..., "detectors": {name: {"chosen": point, "roc": [...], "pr": [...],
        "auroc": ..., "n": ..., "skipped": ...}}}``; with ``refit_decision`` also
        ``"decision": {"detector": name, "path": ..., "threshold": ..., "before": ...,
        "after": ...}``; with ``cascade_stages`` also ``"stages": {"names": [...], "n": ...,
        "fitted": [one entry per stage but the last]}``.
    """
    from truthguard.evaluation.io import read_results

    rows = read_results(results) if isinstance(results, str | Path) else list(results)
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if detectors is None or r["detector"] in detectors:
            by.setdefault(r["detector"], []).append(r)
    if detectors is not None:
        missing = [d for d in detectors if d not in by]
        if missing:
            raise InvalidInputError("detectors", f"no results for {missing}")
    out: dict[str, Any] = {"target": target, "value": value, "detectors": {}}
    refit_name = None
    if refit_decision is not None:
        refit_name = _refit(out, by, refit_decision, config, l2, str(results)[:200])
    for name, rs in by.items():
        if name == refit_name:
            continue  # its scores came from the decision being replaced
        usable = [r for r in rs if r["gold"] is not None and r["score"] is not None]
        if not usable:
            continue
        scores = [float(r["score"]) for r in usable]
        gold = [r["gold"] == "hallucinated" for r in usable]
        if all(gold) or not any(gold):
            raise InvalidInputError(
                "label", f"{name}: the labelled sample needs both hallucinated and factual rows"
            )
        points = sweep(scores, gold)
        chosen = choose_threshold(points, target, value)
        out["detectors"][name] = {
            "n": len(usable),
            "skipped": len(rs) - len(usable),
            "auroc": auroc(scores, gold),
            "chosen": chosen,
            "roc": [(p["fpr"], p["recall"]) for p in points],
            "pr": [(p["recall"], p["precision"]) for p in points if p["precision"] is not None],
        }
    if cascade_stages is not None:
        out["stages"] = _stage_bands(by, list(cascade_stages), cascade_coverage, cascade_accuracy)
    elif cascade_coverage is not None or cascade_accuracy is not None:
        coverage, accuracy = (_one(x) for x in (cascade_coverage, cascade_accuracy))
        out["cascade"] = _cascade_bands(by, coverage, accuracy)
    if not out["detectors"] and refit_name is None:
        raise InvalidInputError("label", "no result has both a gold label and a score")
    if write_config is not None:
        if config is None:
            raise InvalidInputError("config", "needed to write the thresholds (write_config)")
        written, backup = _write_thresholds(out, config, write_config)
        out["config_written"] = str(written)
        out["config_backup"] = None if backup is None else str(backup)
    return out


def _refit(
    out: dict[str, Any],
    by: dict[str, list[dict[str, Any]]],
    path: str | Path,
    config: str | Path | None,
    l2: float,
    source: str,
) -> str:
    """Refit the decision of the one RefChecker in ``by``; records it in ``out``; its name."""
    names = [
        name
        for name, rs in by.items()
        if any(isinstance(r.get("details"), dict) and r["details"].get("decision") for r in rs)
    ]
    if not names:
        raise InvalidInputError(
            "refit_decision",
            "no result of a local RefChecker with its decision in the details "
            f"(detectors: {sorted(by)})",
        )
    if len(names) > 1:
        raise InvalidInputError(
            "detectors", f"several RefCheckers {names}: name the one to refit (--detector)"
        )
    name = names[0]
    options: dict[str, Any] = {}
    if config is not None:
        from truthguard.evaluation.config import load_config

        spec = load_config(config).detectors.get(name)
        options = dict(spec.options) if spec is not None else {}
    fitted = refit_decision(
        by[name],
        path,
        base=base_decision(options),
        target=out["target"],
        value=out["value"],
        l2=l2,
        source=source,
    )
    out["decision"] = {"detector": name, **fitted}
    return name


def _cascade_bands(
    by: dict[str, list[dict[str, Any]]], coverage: float | None, accuracy: float | None
) -> dict[str, Any]:
    """The cascade band of each detector with labelled rows, or why none could be chosen."""
    from truthguard.errors import ConfigurationError
    from truthguard.evaluation.band import band_rows, fit_cascade

    out: dict[str, Any] = {}
    for name, rs in by.items():
        results, gold = band_rows(rs)
        if not results:
            continue
        try:
            out[name] = fit_cascade(results, gold, coverage=coverage, accuracy=accuracy)
        except ConfigurationError as e:
            out[name] = {"error": str(e), "n": len(results)}
    return out


def _one(value: float | Sequence[float] | None) -> float | None:
    if value is None or isinstance(value, int | float):
        return value
    if len(value) != 1:
        raise InvalidInputError(
            "cascade_stages", "one target per stage needs the stages (--cascade-stages)"
        )
    return float(value[0])


def _per_stage(value: float | Sequence[float] | None, n: int) -> list[float | None] | None:
    """One target for each of ``n`` stages: one value for all, or one each."""
    if value is None:
        return None
    values: list[float | None] = (
        [float(value)] if isinstance(value, int | float) else [float(v) for v in value]
    )
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise InvalidInputError(
            "cascade_stages", f"give one target, or one for each of the {n} stages but the last"
        )
    return values


def _stage_bands(
    by: dict[str, list[dict[str, Any]]],
    names: list[str],
    coverage: float | Sequence[float] | None,
    accuracy: float | Sequence[float] | None,
) -> dict[str, Any]:
    """The bands of a cascade whose stages are the detectors ``names`` of the run."""
    from truthguard.evaluation.band import band_rows, fit_stages

    if len(names) < 2:
        raise InvalidInputError("cascade_stages", "a cascade has at least two stages")
    if (coverage is None) == (accuracy is None):
        raise InvalidInputError(
            "cascade_stages", "give the stages' target: cascade_coverage or cascade_accuracy"
        )
    missing = [n for n in names if n not in by]
    if missing:
        raise InvalidInputError("cascade_stages", f"no results for {missing}")
    labelled = [r for r in by[names[0]] if r.get("gold") is not None]
    ids = [r["id"] for r in labelled]
    rows = []
    for name in names:
        of = {r["id"]: r for r in by[name]}
        absent = [i for i in ids if i not in of]
        if absent:
            raise InvalidInputError(
                "cascade_stages",
                f"{name} has no result for {len(absent)} of the {len(ids)} labelled answers "
                f"(first {absent[0]!r}): every stage must run on every answer",
            )
        rows.append(band_rows([of[i] for i in ids])[0])
    gold = [r["gold"] == "hallucinated" for r in labelled]
    fitted = fit_stages(
        lambda k, idx: [rows[k][i] for i in idx],
        gold,
        len(names),
        coverage=_per_stage(coverage, len(names) - 1),
        accuracy=_per_stage(accuracy, len(names) - 1),
    )
    out: dict[str, Any] = {"names": names, "n": len(ids), "fitted": fitted}
    if all("error" not in f for f in fitted):
        out |= _decided(rows, gold, fitted)
    return out


def _decided(
    rows: list[list[Any]], gold: list[bool], fitted: list[dict[str, Any]]
) -> dict[str, Any]:
    """With the chosen bands, the balanced accuracy of what the last stage decides and of the
    whole cascade on the labelled answers (each answer read from the stage deciding it)."""
    from truthguard.cascade import escalation_reasons

    deciding = [len(rows) - 1] * len(gold)
    reach = list(range(len(gold)))
    for k, f in enumerate(fitted):
        band = None if f["band"] is None else tuple(f["band"])
        sent = [
            i
            for i in reach
            if escalation_reasons(rows[k][i], band=band, escalate_on=f["escalate_on"])
        ]
        for i in set(reach) - set(sent):
            deciding[i] = k
        reach = sent
    passed = [
        bool(r.passing if r.passing is not None else r.label == "factual")
        for r in (rows[k][i] for i, k in enumerate(deciding))
    ]

    def balanced(among: list[int]) -> float | None:
        """The mean over the kinds among these answers of the share decided rightly."""
        rates = []
        for kind in (False, True):
            mine = [i for i in among if gold[i] is kind]
            if mine:
                rates.append(sum(passed[i] != kind for i in mine) / len(mine))
        return sum(rates) / len(rates) if rates else None

    return {
        "last": {"reached": len(reach), "balanced_accuracy": balanced(reach)},
        "balanced_accuracy": balanced(list(range(len(gold)))),
    }


def _stage_detector(stages: dict[str, Any], cfg: Any) -> Any:
    """The ``cascade`` detector whose stages are the config's detectors ``stages["names"]``
    with the chosen bands (a stage with a model checks with it: ``llm``)."""
    from truthguard.evaluation.config import DetectorSpec

    names = stages["names"]
    tables, models = [], []
    for k, name in enumerate(names):
        spec = cfg.detectors.get(name)
        if spec is None or spec.type != "refchecker":
            raise InvalidInputError(
                "cascade_stages", f"{name!r} must be a refchecker detector of the config"
            )
        options = dict(spec.options)
        if spec.threshold is not None:
            options["threshold"] = spec.threshold
        table: dict[str, Any] = {"name": name, "options": options, "llm": spec.model is not None}
        if k < len(names) - 1:
            fitted = stages["fitted"][k] if k < len(stages["fitted"]) else {"error": ""}
            if "error" in fitted:
                raise InvalidInputError(
                    "cascade_stages", f"no band for the stage {name!r}: nothing to write"
                )
            table["band"] = fitted["band"]
            table["escalate_on"] = list(fitted["escalate_on"])
        if spec.model is not None:
            models.append(spec.model)
        tables.append(table)
    if not models or any(m != models[0] for m in models):
        raise InvalidInputError(
            "cascade_stages", "the stages that check with a model must share one model"
        )
    return DetectorSpec(type="cascade", model=models[0], options={"stages": tables})


def calibrated_path(config: str | Path) -> Path:
    """Where ``truthguard calibrate`` writes by default: ``NAME.calibrated.SUFFIX`` beside it."""
    path = Path(config)
    if path.stem.endswith(".calibrated"):  # calibrating a calibrated config again
        return path
    return path.with_name(f"{path.stem}.calibrated{path.suffix}")


def _write_thresholds(
    out: dict[str, Any], config: str | Path, target: str | Path
) -> tuple[Path, Path | None]:
    """Save the config with the chosen thresholds to ``target``; (target, backup or None).

    Written over the config itself, the config is first copied to ``CONFIG.bak`` (the rewrite
    drops its comments and layout).
    """
    import shutil

    from truthguard.evaluation.config import load_config, save_config

    cfg = load_config(config)
    if out.get("stages") is not None:
        if "cascade" in cfg.detectors and cfg.detectors["cascade"].type != "cascade":
            raise InvalidInputError("detectors", "the config has a 'cascade' of another type")
        cfg.detectors["cascade"] = _stage_detector(out["stages"], cfg)
    refit = out.get("decision")
    if refit is not None:
        if refit["detector"] not in cfg.detectors:
            raise InvalidInputError("detectors", f"{refit['detector']!r} is not in {config}")
        spec = cfg.detectors[refit["detector"]]
        spec.options = {**spec.options, "decision": str(Path(refit["path"]).resolve())}
        spec.threshold = None  # the decision's own threshold decides
        spec.calibration = {
            "refit_decision": str(Path(refit["path"]).resolve()),
            "target": out["target"],
            "value": out["value"],
            "n": refit["n"],
            "threshold": refit["threshold"],
            **refit["after"],
        }
    for name, entry in out["detectors"].items():
        if name not in cfg.detectors:
            raise InvalidInputError("detectors", f"{name!r} is not in {config}")
        chosen = entry["chosen"]
        spec = cfg.detectors[name]
        spec.threshold = chosen["threshold"]
        spec.calibration = {
            "target": out["target"],
            "value": out["value"],
            "precision": _round(chosen["precision"]),
            "recall": _round(chosen["recall"]),
            "f1": _round(chosen["f1"]),
            "n": entry["n"],
            "auroc": entry["auroc"],
        }
    target = Path(target)
    backup = None
    if target.exists() and target.resolve() == Path(config).resolve():
        backup = target.with_name(target.name + ".bak")
        shutil.copy2(target, backup)
    save_config(cfg, target)
    return target, backup


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def format_calibration(result: dict[str, Any]) -> str:
    """The chosen operating points as a text table."""
    lines = [
        f"target: {result['target']}"
        + ("" if result["value"] is None else f" >= {result['value']}")
    ]
    if result["detectors"]:
        lines.append(
            f"{'detector':<16} {'n':>5} {'threshold':>10} {'P':>6} {'R':>6} {'F1':>6} {'AUROC':>6}"
        )
    for name, e in result["detectors"].items():
        c = e["chosen"]

        def f(v: Any) -> str:
            return "-" if v is None else f"{v:.3f}"

        lines.append(
            f"{name:<16} {e['n']:>5} {c['threshold']:>10.4f} {f(c['precision']):>6} "
            f"{f(c['recall']):>6} {f(c['f1']):>6} {f(e['auroc']):>6}"
        )
    refit = result.get("decision")
    if refit is not None:
        b, a = refit["before"], refit["after"]

        def pct(v: Any) -> str:
            return "-" if v is None else f"{v:.1f}%"

        lines.append(
            f"{refit['detector']}: decision refit on {refit['n']} labelled answers "
            f"({refit['weighed_rows']} weighed by the model, fitted on {refit['fitted_rows']}), "
            "threshold "
            f"P(hallucinated) >= {refit['threshold']:.3f}; on these rows: correct passed "
            f"{pct(b['correct_passed'])} -> {pct(a['correct_passed'])}, hallucinated rejected "
            f"{pct(b['hallucinated_rejected'])} -> {pct(a['hallucinated_rejected'])}"
        )
        lines.append(
            f"decision saved to {refit['path']}: "
            f"RefChecker(decision={refit['path']!r}, decide='fitted')"
        )
    for name, c in (result.get("cascade") or {}).items():
        lines.append(_cascade_line(name, c))
    if result.get("stages") is not None:
        lines.extend(_stage_lines(result["stages"]))
    return "\n".join(lines)


def _stage_lines(stages: dict[str, Any]) -> list[str]:
    """Each stage's band, and the code of the cascade."""
    names = stages["names"]
    lines = [f"cascade of {' -> '.join(names)} on {stages['n']} labelled answers:"]
    code = []
    for k, name in enumerate(names[:-1]):
        f = stages["fitted"][k] if k < len(stages["fitted"]) else None
        if f is None:
            lines.append(f"  {name}: nothing reaches it")
            continue
        if "error" in f:
            lines.append(f"  {name}: {f['error']} ({f['reached']} answers reach it)")
            continue
        band = "None" if f["band"] is None else f"({f['band'][0]:.4f}, {f['band'][1]:.4f})"
        lines.append(
            f"  {name}: band {band}, escalate on {', '.join(f['escalate_on'])}: decides "
            f"{f['reached'] - f['sent_on']} of the {f['reached']} answers reaching it "
            f"at balanced accuracy {_pct(f['balanced_accuracy'])}, sends {f['sent_on']} on"
        )
        code.append(
            f"CascadeStage(name={name!r}, detector=..., band={band}, "
            f"escalate_on={tuple(f['escalate_on'])!r})"
        )
    last = stages.get("last")
    if last is None:
        lines.append(f"  {names[-1]}: decides the rest")
    else:
        lines.append(
            f"  {names[-1]}: decides the rest ({last['reached']} answers) at balanced accuracy "
            f"{_pct(last['balanced_accuracy'])}"
        )
        lines.append(
            f"  the cascade: balanced accuracy {_pct(stages['balanced_accuracy'])} on these "
            "answers (the ones the bands were chosen on)"
        )
    code.append(f"CascadeStage(name={names[-1]!r}, detector=...)")
    lines.append("  CascadeChecker(stages=[" + ", ".join(code) + "])")
    return lines


def _cascade_line(name: str, c: dict[str, Any]) -> str:
    """One detector's cascade band as a sentence, with the code that uses it."""
    if "error" in c:
        return f"{name} as a cascade's local stage: {c['error']}"
    band = "None" if c["band"] is None else f"({c['band'][0]:.4f}, {c['band'][1]:.4f})"
    accuracy = "-" if c["balanced_accuracy"] is None else f"{100 * c['balanced_accuracy']:.1f}%"
    return (
        f"{name} as a cascade's local stage: {100 * c['coverage']:.1f}% of {c['n']} answers "
        f"decided locally at balanced accuracy {accuracy}; "
        f"CascadeChecker(band={band}, escalate_on={tuple(c['escalate_on'])!r}, escalate_to=...)"
    )


def dump(result: dict[str, Any], path: str | Path) -> None:
    """Write a calibration result as JSON (the report reads it)."""
    Path(path).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
