"""A cross-encoder NLI model (hub id or local path) loaded lazily with ``transformers``.

Three-way models (DeBERTa-v3 MNLI family: entailment / neutral / contradiction) and two-way
consistency models (HHEM-style: a "consistent" / "supported" class and its opposite, or a single
logit) are both read: :meth:`NLIModel.scores` returns entailment and contradiction probabilities
per (premise, hypothesis) pair; a model without a contradiction class reports 0 for it.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from truthguard.errors import ConfigurationError

__all__ = ["NLIModel"]

_lock = threading.Lock()
_ENTAIL = ("entail", "consistent", "support", "faithful", "true")
_CONTRA = ("contradict", "refute")


@functools.lru_cache(maxsize=4)
def _load(model: str, device: str) -> tuple[Any, Any]:
    try:
        import torch  # noqa: F401
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
    except ImportError as e:
        raise ConfigurationError(
            "NLIChecker needs transformers and torch: pip install 'truthguard[local]'"
        ) from e
    local = Path(model).expanduser().exists()
    if not local and model.startswith((".", "/", "~", "\\")):  # a path, not a hub id
        raise ConfigurationError(
            f"could not load the NLI model {model!r}: there is no folder at "
            f"{Path(model).expanduser()}"
        )
    if local:
        model = str(Path(model).expanduser())
    offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")
    try:
        tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=local or offline)
        net = AutoModelForSequenceClassification.from_pretrained(
            model, local_files_only=local or offline
        )
    except Exception as e:  # OSError, ValueError, HTTP errors: all mean "not available here"
        if local:
            raise ConfigurationError(
                f"could not load the NLI model from the local folder {model!r}: "
                f"{type(e).__name__}: {e}. The folder must hold a transformers "
                "sequence-classification model: config.json, the weights and the tokenizer files "
                "(what save_pretrained or `hf download MODEL --local-dir FOLDER` writes)."
            ) from e
        raise ConfigurationError(
            f"could not load the NLI model {model!r} (the Hugging Face hub id): "
            f"{type(e).__name__}: {e}. If this machine is offline, fetch it where the hub is "
            f"reachable with `hf download {model} --local-dir ./nli-model` (huggingface_hub's "
            f"CLI), copy the folder here and pass NLIChecker(model='./nli-model')."
        ) from e
    net.eval()
    net.to(device)
    return tokenizer, net


class NLIModel:
    """Entailment / contradiction probabilities from a sequence-classification NLI model.

    Args:
        model: Hub id (e.g. ``"cross-encoder/nli-deberta-v3-small"``) or local directory.
        device: Torch device.
        batch_size: Pairs per forward pass.
        max_length: Token limit of a (premise, hypothesis) pair; longer premises are truncated.
    """

    def __init__(
        self, model: str | Path, *, device: str = "cpu", batch_size: int = 16, max_length: int = 512
    ) -> None:
        self.model = str(model)
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length

    def _loaded(self) -> tuple[Any, Any]:
        with _lock:
            return _load(self.model, self.device)

    def columns(self) -> tuple[int, int | None, int]:
        """(entailment column, contradiction column or None, number of outputs)."""
        _, net = self._loaded()
        labels = {int(k): str(v).lower() for k, v in (net.config.id2label or {}).items()}
        n = int(net.config.num_labels)
        ent = next((i for i, v in labels.items() if v.startswith(_ENTAIL)), None)
        con = next((i for i, v in labels.items() if v.startswith(_CONTRA)), None)
        if ent is None:
            if n == 1:
                return 0, None, 1
            if n == 2:
                ent = 1  # HHEM convention: class 1 = consistent
            else:
                raise ConfigurationError(
                    f"NLI model {self.model!r} names no entailment label (id2label={labels})"
                )
        return ent, con, n

    def scores(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Shape (len(pairs), 2): entailment and contradiction probability of each pair."""
        if not pairs:
            return np.zeros((0, 2), dtype=np.float32)
        import torch

        tokenizer, net = self._loaded()
        ent, con, n = self.columns()
        rows = []
        for s in range(0, len(pairs), self.batch_size):
            chunk = pairs[s : s + self.batch_size]
            enc = tokenizer(
                [p for p, _ in chunk],
                [h for _, h in chunk],
                padding=True,
                truncation="only_first",
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                logits = net(**enc).logits.float().cpu().numpy()
            if n == 1:
                p_ent = 1.0 / (1.0 + np.exp(-logits[:, 0]))
                rows.append(np.stack([p_ent, np.zeros_like(p_ent)], axis=1))
                continue
            e = np.exp(logits - logits.max(axis=1, keepdims=True))
            probs = e / e.sum(axis=1, keepdims=True)
            p_con = probs[:, con] if con is not None else np.zeros(len(chunk))
            rows.append(np.stack([probs[:, ent], p_con], axis=1))
        return np.concatenate(rows).astype(np.float32)
