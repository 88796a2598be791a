"""AlignScore (Zha et al., ACL 2023) as a claim checker, written from its published code.

The inference follows ``src/alignscore/inference.py`` of https://github.com/yuh-zha/AlignScore
(MIT) in its recommended ``nli_sp`` mode:

* the context is split into sentences (NLTK's ``sent_tokenize``) and packed into chunks of
  ``len(sentences) // (words // 350 + 1)`` consecutive sentences (at least one): about 350
  words each;
* the claim is split into sentences too, and every (chunk, claim sentence) pair is tokenized
  as a pair, the context truncated (``only_first``) at the tokenizer's ``model_max_length``,
  padded to it;
* a RoBERTa encoder's pooled output goes through the three-way ``tri_layer``; the softmax's
  first class (aligned) is the pair's score;
* the claim's score is the mean over its sentences of the best chunk's score (max-mean).

The published weights are PyTorch Lightning checkpoints (``AlignScore-base.ckpt`` over
``roberta-base``, ``AlignScore-large.ckpt`` over ``roberta-large``) whose ``state_dict`` holds
``base_model.*`` (the encoder) and ``tri_layer.*``; the base model's folder gives the config
and the tokenizer.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr

from truthguard.errors import ConfigurationError
from truthguard.llm import LLMSession
from truthguard.refchecker.checkers import ClaimChecker, ClaimVerdict
from truthguard.refchecker.extractors import Claim
from truthguard.refchecker.minicheck import _offline, _sentences, document
from truthguard.refchecker.retrieval import Retrieval
from truthguard.store import ArtifactStore

__all__ = [
    "ALIGNSCORE_MODELS",
    "AlignScoreChecker",
    "AlignScoreModel",
    "alignscore_chunks",
    "alignscore_missing_message",
]

ALIGNSCORE_MODELS: dict[str, tuple[str, str]] = {
    "alignscore-base": ("AlignScore-base.ckpt", "FacebookAI/roberta-base"),
    "alignscore-large": ("AlignScore-large.ckpt", "FacebookAI/roberta-large"),
}
"""Names, with the checkpoint file in the hub repository ``yzha/AlignScore`` and the base model."""
_REPO = "yzha/AlignScore"
_WORDS_PER_CHUNK = 350  # inference.py: n_chunk = words // 350 + 1

_lock = threading.Lock()


def alignscore_missing_message(model: str) -> str:
    """The one error a machine without the weights gets, saying how to fetch both parts."""
    ckpt, base = ALIGNSCORE_MODELS.get(model, ALIGNSCORE_MODELS["alignscore-large"])
    folder = "./" + base.rsplit("/", 1)[-1]
    return (
        f"the AlignScore model {model!r} is not on this machine and could not be downloaded. "
        f"Where the Hugging Face hub is reachable, run `huggingface-cli download {_REPO} {ckpt} "
        f"--local-dir ./alignscore` and `huggingface-cli download {base} --local-dir {folder}`, "
        f"copy both here and pass AlignScoreChecker(model='./alignscore/{ckpt}', "
        f"base='{folder}')."
    )


def alignscore_chunks(premise: str, split: Callable[[str], list[str]] = _sentences) -> list[str]:
    """The context's chunks as the authors cut them: sentences in runs of equal count."""
    sentences = split(premise) or [""]
    n_chunk = len(premise.strip().split()) // _WORDS_PER_CHUNK + 1
    size = max(len(sentences) // n_chunk, 1)
    return [" ".join(sentences[i : i + size]) for i in range(0, len(sentences), size)]


def _resolve(model: str, base: str | None) -> tuple[Path, str]:
    """The checkpoint file and the base model (hub id or folder)."""
    if model in ALIGNSCORE_MODELS:
        ckpt, hub_base = ALIGNSCORE_MODELS[model]
        # a name is looked up in the local Hugging Face cache only: nothing is downloaded at run
        # time (an offline machine would fail there); fetch it once as the message says
        try:
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(_REPO, ckpt)
        except ImportError:
            found = None
        if not isinstance(found, str):
            raise ConfigurationError(alignscore_missing_message(model))
        return Path(found), base or hub_base
    path = Path(model).expanduser()
    if not path.is_file():
        raise ConfigurationError(
            f"could not load the AlignScore model {model!r}: there is no checkpoint file at {path}"
        )
    if base is None:
        raise ConfigurationError(
            "AlignScoreChecker(model=CHECKPOINT) needs base=: the RoBERTa model the checkpoint "
            "was trained from (a folder with its config and tokenizer, or a hub id)"
        )
    return path, base


@functools.lru_cache(maxsize=2)
def _load(model: str, base: str | None, device: str, allow_pickle: bool) -> tuple[Any, Any, Any]:
    """Tokenizer, encoder and three-way head, once per process."""
    try:
        import torch
        from transformers import AutoConfig, AutoModel, AutoTokenizer
    except ImportError as e:
        raise ConfigurationError(
            "AlignScoreChecker needs transformers and torch: pip install 'truthguard[local]'"
        ) from e
    ckpt, base_source = _resolve(model, base)
    local_base = Path(base_source).expanduser().is_dir()
    only_local = local_base or _offline()
    try:
        config = AutoConfig.from_pretrained(base_source, local_files_only=only_local)
        tokenizer = AutoTokenizer.from_pretrained(base_source, local_files_only=only_local)
    except Exception as e:
        if local_base or model not in ALIGNSCORE_MODELS:
            raise ConfigurationError(
                f"could not load the AlignScore base model {base_source!r}: {type(e).__name__}: {e}"
            ) from e
        raise ConfigurationError(alignscore_missing_message(model)) from e
    try:
        saved = torch.load(str(ckpt), map_location="cpu", weights_only=not allow_pickle)
    except Exception as e:
        raise ConfigurationError(
            f"could not read the AlignScore checkpoint {str(ckpt)!r}: {type(e).__name__}: {e}. "
            "A Lightning checkpoint holding objects besides tensors loads only with "
            "AlignScoreChecker(allow_pickle=True), which runs its pickled code: pass it only "
            "for a file you trust."
        ) from e
    state = saved.get("state_dict", saved)
    encoder = AutoModel.from_config(config, add_pooling_layer=True)
    head = torch.nn.Linear(config.hidden_size, 3)
    enc_state = {
        k.removeprefix("base_model."): v for k, v in state.items() if k.startswith("base_model.")
    }
    missing, _ = encoder.load_state_dict(enc_state, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    head_state = {
        k.removeprefix("tri_layer."): v for k, v in state.items() if k.startswith("tri_layer.")
    }
    if missing or set(head_state) != {"weight", "bias"}:
        raise ConfigurationError(
            f"the checkpoint {str(ckpt)!r} is not an AlignScore checkpoint for {base_source!r}: "
            f"missing {missing[:5] or ['tri_layer.weight', 'tri_layer.bias']}"
        )
    head.load_state_dict(head_state)
    encoder.eval().to(device)
    head.eval().to(device)
    return tokenizer, encoder, head


@dataclass(frozen=True)
class _Scored:
    score: float
    chunks: list[str]
    sentences: list[str]
    matrix: list[list[float]]  # chunks x claim sentences


class AlignScoreModel:
    """AlignScore's ``nli_sp`` score of (context, claim) pairs.

    Args:
        model: ``"alignscore-base"`` / ``"alignscore-large"`` or the path of a checkpoint.
        base: The RoBERTa base model (hub id or folder); a name brings its own.
        device: Torch device.
        batch_size: Pairs per forward pass.
        allow_pickle: Read a checkpoint holding pickled objects (only for a trusted file).
    """

    def __init__(
        self,
        model: str | Path = "alignscore-large",
        *,
        base: str | Path | None = None,
        device: str = "cpu",
        batch_size: int = 16,
        allow_pickle: bool = False,
    ) -> None:
        self.model = str(model)
        self.base = None if base is None else str(base)
        self.device = device
        self.batch_size = batch_size
        self.allow_pickle = allow_pickle

    def loaded(self) -> tuple[Any, Any, Any]:
        """Tokenizer, encoder and head (loaded on first use, cached per process)."""
        with _lock:
            return _load(self.model, self.base, self.device, self.allow_pickle)

    def aligned(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(aligned) of each (premise chunk, claim sentence) pair."""
        import torch

        tokenizer, encoder, head = self.loaded()
        out: list[float] = []
        for s in range(0, len(pairs), self.batch_size):
            part = pairs[s : s + self.batch_size]
            batch = tokenizer(
                [p for p, _ in part],
                [h for _, h in part],
                truncation="only_first",
                padding="max_length",
                max_length=tokenizer.model_max_length,
                return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                pooled = encoder(
                    input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
                ).pooler_output
                probs = torch.softmax(head(pooled).float(), dim=-1)[:, 0]
            out.extend(float(p) for p in probs.cpu())
        return out

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[_Scored]:
        """Each (context, claim): max over chunks, mean over the claim's sentences."""
        plans = []
        flat: list[tuple[str, str]] = []
        for premise, claim in pairs:
            chunks = alignscore_chunks(premise)
            sentences = _sentences(claim) or [claim]
            plans.append((chunks, sentences, len(flat)))
            flat.extend((c, h) for c in chunks for h in sentences)
        probs = self.aligned(flat)
        out = []
        for chunks, sentences, at in plans:
            n = len(sentences)
            matrix = [probs[at + i * n : at + (i + 1) * n] for i in range(len(chunks))]
            best = [max(row[j] for row in matrix) for j in range(n)]
            out.append(_Scored(sum(best) / n, chunks, sentences, matrix))
        return out


class AlignScoreChecker(ClaimChecker):
    """AlignScore judges each claim against its retrieved segments (aligned or not).

    A claim is Entailment when its score reaches ``threshold``, else Neutral; its support is the
    score. AlignScore's authors publish no threshold (they report threshold-free metrics and
    tune one per dataset): 0.5 here, choose yours on labelled data.

    Example:
        >>> checker = AlignScoreChecker(model="./alignscore/AlignScore-large.ckpt",
        ...                             base="./roberta-large")
    """

    model: str | Path = "alignscore-large"
    """``"alignscore-base"`` / ``"alignscore-large"`` or the path of a downloaded checkpoint."""
    base: str | Path | None = None
    """The RoBERTa base (folder or hub id) the checkpoint was trained from; a name brings its
    own (``FacebookAI/roberta-large`` / ``-base``)."""
    device: str = "cpu"
    """Torch device of the model."""
    batch_size: int = Field(default=16, ge=1)
    """(chunk, claim sentence) pairs per forward pass."""
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    """A claim is Entailment when its score reaches this."""
    allow_pickle: bool = False
    """Read a Lightning checkpoint that holds pickled objects besides tensors (runs their
    code: only for a file you trust)."""

    _net: AlignScoreModel | None = PrivateAttr(default=None)

    def alignscore(self) -> AlignScoreModel:
        """The model wrapper (its weights load on first use)."""
        if self._net is None:
            self._net = AlignScoreModel(
                self.model, base=self.base, device=self.device, batch_size=self.batch_size,
                allow_pickle=self.allow_pickle,
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
        for s in self.alignscore().score(pairs):
            label = "Entailment" if s.score >= self.threshold else "Neutral"
            raw = {
                "score": round(s.score, 4),
                "chunks": len(s.chunks),
                "sentences": len(s.sentences),
            }
            out.append(
                ClaimVerdict(label=label, support=s.score, raw=json.dumps(raw), mode="alignscore")
            )
        return out
