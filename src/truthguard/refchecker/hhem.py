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

import asyncio
import functools
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr

from truthguard.errors import ConfigurationError
from truthguard.llm import LLMSession
from truthguard.refchecker.checkers import ClaimChecker, ClaimVerdict
from truthguard.refchecker.extractors import Claim
from truthguard.refchecker.minicheck import _offline, document
from truthguard.refchecker.retrieval import Retrieval
from truthguard.store import ArtifactStore

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

_lock = threading.Lock()


def hhem_missing_message(model: str) -> str:
    """The one error a machine without the weights gets, saying how to fetch both folders."""
    return (
        f"the HHEM model {model!r} is not on this machine and could not be downloaded. "
        f"Where the Hugging Face hub is reachable, run `huggingface-cli download {HHEM_HUB_ID} "
        f"--local-dir ./hhem-2.1-open` and `huggingface-cli download {FOUNDATION} "
        "--local-dir ./flan-t5-base`, copy both folders here and pass "
        "HHEMChecker(model='./hhem-2.1-open', foundation='./flan-t5-base')."
    )


def _folder(source: str, what: str, model: str, *, patterns: list[str]) -> Path:
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    if source.startswith((".", "/", "~", "\\")):
        raise ConfigurationError(f"could not load the HHEM {what}: there is no folder at {path}")
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(source, allow_patterns=patterns, local_files_only=_offline()))
    except Exception as e:  # offline, unknown repo, HTTP errors: all mean "not available here"
        raise ConfigurationError(hhem_missing_message(model)) from e


@functools.lru_cache(maxsize=2)
def _load(model: str, foundation: str, device: str) -> tuple[Any, Any]:
    """Tokenizer and network, once per (model, foundation, device) per process."""
    try:
        import torch  # noqa: F401
        from safetensors.torch import load_file
        from transformers import AutoConfig, AutoTokenizer, T5ForTokenClassification
    except ImportError as e:
        raise ConfigurationError(
            "HHEMChecker needs transformers and torch: pip install 'truthguard[local]'"
        ) from e
    source = HHEM_HUB_ID if model.strip().lower() == "hhem-2.1-open" else model
    weights = _folder(source, "model", model, patterns=["*.json", "*.safetensors"])
    try:
        declared = json.loads((weights / "config.json").read_text()).get("foundation")
    except (OSError, ValueError):
        declared = None
    base = _folder(
        foundation or declared or FOUNDATION,
        "foundation",
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


class HHEMModel:
    """HHEM-2.1-Open's P(consistent) for (premise, hypothesis) pairs.

    Args:
        model: ``"hhem-2.1-open"``, the hub id or a local folder of the model.
        foundation: The Flan-T5 foundation's hub id or folder; None: what the model names.
        device: Torch device.
        batch_size: Pairs per forward pass.
    """

    def __init__(
        self,
        model: str | Path = "hhem-2.1-open",
        *,
        foundation: str | Path | None = None,
        device: str = "cpu",
        batch_size: int = 8,
    ) -> None:
        self.model = str(model)
        self.foundation = None if foundation is None else str(foundation)
        self.device = device
        self.batch_size = batch_size

    def loaded(self) -> tuple[Any, Any]:
        """The tokenizer and the network (loaded on first use, cached per process)."""
        with _lock:
            return _load(self.model, self.foundation or "", self.device)

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
        for s in range(0, len(texts), self.batch_size):
            batch = tokenizer(texts[s : s + self.batch_size], return_tensors="pt", padding=True).to(
                self.device
            )
            with torch.inference_mode():
                logits = net(**batch).logits[:, 0, :]  # the first token classifies the pair
            out.extend(float(p) for p in torch.softmax(logits.float(), dim=-1)[:, 1].cpu())
        return out


class HHEMChecker(ClaimChecker):
    """HHEM-2.1-Open judges each claim against its retrieved segments (consistent or not).

    A claim is Entailment when P(consistent) reaches ``threshold`` (0.5, as Vectara decides),
    else Neutral; its support is that probability.

    Example:
        >>> checker = HHEMChecker(model="./hhem-2.1-open", foundation="./flan-t5-base")
        >>> # RefChecker(checker="hhem-2.1-open") builds the hub version
    """

    model: str | Path = "hhem-2.1-open"
    """``"hhem-2.1-open"``, the hub id or a local folder of the model."""
    foundation: str | Path | None = None
    """The Flan-T5 foundation (hub id or folder) whose tokenizer and config the model uses;
    None: the one its ``config.json`` names (``google/flan-t5-base``)."""
    device: str = "cpu"
    """Torch device of the model."""
    batch_size: int = Field(default=8, ge=1)
    """(premise, hypothesis) pairs per forward pass."""
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    """A claim is Entailment when its P(consistent) reaches this."""

    _net: HHEMModel | None = PrivateAttr(default=None)

    def hhem(self) -> HHEMModel:
        """The model wrapper (its weights load on first use)."""
        if self._net is None:
            self._net = HHEMModel(
                self.model, foundation=self.foundation, device=self.device,
                batch_size=self.batch_size,
            )  # fmt: skip
        return self._net

    async def acheck(
        self,
        question: str,
        claims: list[Claim],
        retrieval: Retrieval,
        session: LLMSession,
        *,
        store: ArtifactStore | None,
    ) -> list[ClaimVerdict]:
        return await asyncio.to_thread(self.check, claims, retrieval)

    def check(self, claims: list[Claim], retrieval: Retrieval) -> list[ClaimVerdict]:
        """One verdict per claim (blocking; :meth:`acheck` runs it off the event loop)."""
        pairs = [(document(retrieval, i), c.text) for i, c in enumerate(claims)]
        out = []
        for p in self.hhem().scores(pairs):
            label = "Entailment" if p >= self.threshold else "Neutral"
            raw = json.dumps({"consistent": round(p, 4)})
            out.append(ClaimVerdict(label=label, support=p, raw=raw, mode="hhem"))
        return out
