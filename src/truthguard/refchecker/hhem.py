"""Vectara's HHEM-2.1-Open as a claim checker, without running the model repository's code.

HHEM-2.1-Open (https://huggingface.co/vectara/hallucination_evaluation_model, Apache-2.0) is
published with its own modelling code (``modeling_hhem_v2.py``, loaded with
``trust_remote_code``), which an offline machine cannot fetch and which we do not run. Its
inference is written here from that published code:

* the network is a ``T5ForTokenClassification`` of the Flan-T5 foundation named in the model's
  ``config.json`` (``google/flan-t5-base``), whose weights the model's ``model.safetensors``
  holds under a ``t5.`` prefix; the tokenizer is the foundation's;
* each (premise, hypothesis) pair is written into the prompt :data:`HHEM_PROMPT` (premise first),
  tokenized with padding and no truncation (T5's relative positions read any length);
* the score is the softmax over the two classes of the first token's logits, class 1 being
  "consistent": P(consistent), consistent at 0.5 or more as its authors decide.

In a :class:`~truthguard.refchecker.RefChecker` the premise is the claim's ``top_k`` segments in
reference order, the hypothesis the claim.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from truthguard.errors import ConfigurationError
from truthguard.refchecker.nli import (
    PairChecker,
    WeightsModel,
    batches,
    fetch_message,
    needs,
    offline,
    once,
    source_of,
)

__all__ = ["HHEM_HUB_ID", "HHEM_PROMPT", "HHEMChecker", "HHEMModel", "hhem_missing_message"]

HHEM_HUB_ID = "vectara/hallucination_evaluation_model"
"""The hub id of HHEM-2.1-Open (the name ``hhem-2.1-open`` stands for it)."""
FOUNDATION = "google/flan-t5-base"
"""The foundation whose tokenizer and architecture HHEM-2.1-Open uses."""
# modeling_hhem_v2.py, HHEMv2Config.prompt: the literal "<pad>" is T5's pad token, read at 0
HHEM_PROMPT = (
    "<pad> Determine if the hypothesis is true given the premise?\n\n"
    "Premise: {text1}\n\nHypothesis: {text2}"
)


def hhem_missing_message(model: str) -> str:
    """The one error a machine without the weights gets, saying how to fetch both folders."""
    return fetch_message(
        "HHEM",
        model,
        [f"{HHEM_HUB_ID} --local-dir ./hhem-2.1-open", f"{FOUNDATION} --local-dir ./flan-t5-base"],
        "copy both folders here and pass "
        "HHEMChecker(model='./hhem-2.1-open', foundation='./flan-t5-base')",
    )


def _folder(source: str, what: str, model: str, *, patterns: list[str]) -> Path:
    found, local = source_of(source, what)
    if local:
        return Path(found)
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(source, allow_patterns=patterns, local_files_only=offline()))
    except Exception as e:  # offline, unknown repo, HTTP errors: all mean "not available here"
        raise ConfigurationError(hhem_missing_message(model)) from e


def _load(model: str, foundation: str, device: str) -> tuple[Any, Any]:
    """Tokenizer and network of HHEM-2.1-Open."""
    with needs("HHEMChecker"):
        import torch  # noqa: F401
        from safetensors.torch import load_file
        from transformers import AutoConfig, AutoTokenizer, T5ForTokenClassification
    source = HHEM_HUB_ID if model.strip().lower() == "hhem-2.1-open" else model
    weights = _folder(source, "HHEM", model, patterns=["*.json", "*.safetensors"])
    try:
        declared = json.loads((weights / "config.json").read_text()).get("foundation")
    except (OSError, ValueError):
        declared = None
    base = _folder(
        foundation or declared or FOUNDATION,
        "HHEM foundation",
        model,
        patterns=["*.json", "*.model", "*.txt"],
    )
    try:
        config = AutoConfig.from_pretrained(str(base), local_files_only=True)
        config.num_labels = 2
        tokenizer = AutoTokenizer.from_pretrained(str(base), local_files_only=True)
        net = T5ForTokenClassification(config)
        state = load_file(str(weights / "model.safetensors"))
    except Exception as e:
        raise ConfigurationError(
            f"could not load the HHEM model from {str(weights)!r} with the foundation "
            f"{str(base)!r}: {type(e).__name__}: {e}. The model folder must hold config.json and "
            "model.safetensors, the foundation folder Flan-T5's config and tokenizer files."
        ) from e
    state = {k.removeprefix("t5."): v for k, v in state.items()}
    missing, unexpected = net.load_state_dict(state, strict=False)
    tied = {"transformer.encoder.embed_tokens.weight"}  # tied to transformer.shared.weight
    if unexpected or set(missing) - tied:
        raise ConfigurationError(
            f"the weights in {str(weights)!r} are not HHEM-2.1-Open's: missing "
            f"{sorted(set(missing) - tied)[:5]}, unexpected {sorted(unexpected)[:5]}"
        )
    net.eval()
    net.to(device)
    return tokenizer, net


@dataclass
class HHEMModel(WeightsModel):
    """HHEM-2.1-Open's P(consistent) for (premise, hypothesis) pairs (``model``:
    ``"hhem-2.1-open"``, the hub id or a local folder of the model)."""

    model: str | Path = "hhem-2.1-open"
    _: KW_ONLY
    foundation: str | Path | None = None
    """The Flan-T5 foundation's hub id or folder; None: what the model names."""
    batch_size: int = 8

    def loaded(self) -> tuple[Any, Any]:
        """The tokenizer and the network (loaded on first use, cached per process)."""
        return once(_load, self.model, str(self.foundation or ""), self.device)

    @staticmethod
    def texts(pairs: Sequence[tuple[str, str]]) -> list[str]:
        """The prompt of each (premise, hypothesis) pair."""
        return [HHEM_PROMPT.format(text1=p, text2=h) for p, h in pairs]

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(consistent) of each pair."""
        import torch

        tokenizer, net = self.loaded()
        texts = self.texts(pairs)
        out: list[float] = []
        for part in batches(texts, self.batch_size):
            batch = tokenizer(part, return_tensors="pt", padding=True).to(self.device)
            with torch.inference_mode():
                logits = net(**batch).logits[:, 0, :]  # the first token classifies the pair
            out.extend(float(p) for p in torch.softmax(logits.float(), dim=-1)[:, 1].cpu())
        return out


class HHEMChecker(PairChecker):
    """HHEM-2.1-Open judges each claim against its retrieved segments (consistent or not).

    A claim is Entailment when P(consistent) reaches ``threshold`` (0.5, as Vectara decides),
    else Neutral; its support is that probability.

    Example:
        >>> checker = HHEMChecker(model="./hhem-2.1-open", foundation="./flan-t5-base")
        >>> # RefChecker(checker="hhem-2.1-open") builds the hub version
    """

    mode = "hhem"
    model: str | Path = "hhem-2.1-open"
    """``"hhem-2.1-open"``, the hub id or a local folder of the model."""
    foundation: str | Path | None = None
    """The Flan-T5 foundation (hub id or folder) whose tokenizer and config the model uses;
    None: the one its ``config.json`` names (``google/flan-t5-base``)."""
    batch_size: int = Field(default=8, ge=1)
    """(premise, hypothesis) pairs per forward pass."""

    def hhem(self) -> HHEMModel:
        """The model wrapper (its weights load on first use)."""
        return HHEMModel(
            self.model, foundation=self.foundation, device=self.device, batch_size=self.batch_size
        )

    def scores(self, pairs: list[tuple[str, str]]) -> list[tuple[float, dict[str, Any]]]:
        return [(p, {"consistent": round(p, 4)}) for p in self.hhem().scores(pairs)]
