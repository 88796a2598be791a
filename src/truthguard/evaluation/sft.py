"""``truthguard export-sft``: label-free fine-tuning data from FEWL (FEWL paper, section 5.2).

For each question with several candidate answers, FEWL ranks the candidates against reference
models (no gold answer needed) and the best one becomes a training example in the OpenAI chat
fine-tuning format: ``{"messages": [{"role": "user", ...}, {"role": "assistant", ...}]}``. With
``baseline=True`` the selection uses one reference answer and no laziness penalty (the paper's
baseline), for comparison. When the rows carry gold labels, the share of questions whose chosen
answer is factual is reported.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from truthguard.errors import InvalidInputError

__all__ = ["export_sft"]


def _fewl_name(cfg: Any, detector: str | None) -> str:
    names = [n for n, s in cfg.detectors.items() if s.type == "fewl"]
    if detector is not None:
        if detector not in names:
            raise InvalidInputError(
                "detector", f"{detector!r} is not a fewl detector of the config"
            )
        return detector
    if len(names) != 1:
        raise InvalidInputError(
            "detector", f"the config has {len(names)} fewl detectors; name one with --detector"
        )
    return names[0]


def export_sft(
    data: str | Path,
    config: Any,
    out: str | Path,
    *,
    detector: str | None = None,
    baseline: bool = False,
    system: str | None = None,
) -> dict[str, Any]:
    """Write the FEWL-best answer of each question as chat fine-tuning JSONL.

    Args:
        data: Rows (as for ``evaluate``); rows with the same question are its candidates.
        config: Config file or object with a ``fewl`` detector.
        out: Output JSONL.
        detector: Name of the fewl detector (needed when the config has several).
        baseline: Select with a single reference answer, uniform weights and no penalty.
        system: A system message put first in every example.

    Returns:
        Counts (questions, examples, skipped) and, with gold labels, ``chosen_factual``.
    """
    from truthguard.evaluation.config import build_detectors, build_store, load_config
    from truthguard.evaluation.io import read_rows

    cfg = load_config(config)
    name = _fewl_name(cfg, detector)
    spec = cfg.detectors[name]
    if baseline:
        spec = spec.model_copy(
            update={
                "options": {
                    **spec.options,
                    "mode": "single",
                    "penalty": False,
                    "expertise": "uniform",
                    "threshold": spec.threshold if spec.threshold is not None else 0.0,
                }
            }
        )
    one = cfg.model_copy(update={"detectors": {name: spec}})
    fewl = build_detectors(one, store=build_store(cfg.store))[name]

    groups: dict[str, list[dict[str, Any]]] = {}
    for row in read_rows(data, cfg.columns):
        groups.setdefault(" ".join(row["question"].split()), []).append(row)
    examples, chosen_gold, skipped = [], [], 0
    for rows in groups.values():
        answers = list(dict.fromkeys(r["answer"] for r in rows))
        if len(answers) < 2:
            skipped += 1  # nothing to choose between
            continue
        ranked = fewl.rank(rows[0]["question"], answers)
        best, result = ranked[0]
        if result.score is None:
            skipped += 1  # every candidate invalid: no honest choice
            continue
        messages = [{"role": "system", "content": system}] if system else []
        messages += [
            {"role": "user", "content": rows[0]["question"]},
            {"role": "assistant", "content": best},
        ]
        examples.append({"messages": messages})
        gold = next(r["gold"] for r in rows if r["answer"] == best)
        chosen_gold.append(gold)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in examples))
    os.replace(tmp, out)
    labelled = [g for g in chosen_gold if g is not None]
    return {
        "selection": "baseline" if baseline else "fewl",
        "questions": len(groups),
        "examples": len(examples),
        "skipped": skipped,
        "chosen_factual": round(labelled.count("factual") / len(labelled), 4) if labelled else None,
        "out": str(out),
    }
