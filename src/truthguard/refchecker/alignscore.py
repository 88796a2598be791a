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

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from truthguard.errors import ConfigurationError
from truthguard.refchecker.minicheck import _sentences
from truthguard.refchecker.nli import (
    PairChecker,
    WeightsModel,
    batches,
    fetch_message,
    needs,
    offline,
    once,
)

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


def alignscore_missing_message(model: str) -> str:
    """The one error a machine without the weights gets, saying how to fetch both parts."""
    ckpt, base = ALIGNSCORE_MODELS.get(model, ALIGNSCORE_MODELS["alignscore-large"])
    folder = "./" + base.rsplit("/", 1)[-1]
    return fetch_message(
        "AlignScore",
        model,
        [f"{_REPO} {ckpt} --local-dir ./alignscore", f"{base} --local-dir {folder}"],
        f"copy both here and pass AlignScoreChecker(model='./alignscore/{ckpt}', base='{folder}')",
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


def _load(model: str, base: str | None, device: str, allow_pickle: bool) -> tuple[Any, Any, Any]:
    """Tokenizer, encoder and three-way head."""
    with needs("AlignScoreChecker"):
        import torch
        from transformers import AutoConfig, AutoModel, AutoTokenizer
    ckpt, base_source = _resolve(model, base)
    local_base = Path(base_source).expanduser().is_dir()
    only_local = local_base or offline()
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

    def raw(self) -> dict[str, Any]:
        return {"score": round(self.score, 4), "chunks": len(self.chunks),
                "sentences": len(self.sentences)}  # fmt: skip


@dataclass
class AlignScoreModel(WeightsModel):
    """AlignScore's ``nli_sp`` score of (context, claim) pairs (``model``: ``"alignscore-base"``
    / ``"alignscore-large"`` or the path of a checkpoint)."""

    model: str | Path = "alignscore-large"
    _: KW_ONLY
    base: str | Path | None = None
    """The RoBERTa base model (hub id or folder); a name brings its own."""
    allow_pickle: bool = False
    """Read a checkpoint holding pickled objects (only for a trusted file)."""

    def loaded(self) -> tuple[Any, Any, Any]:
        """Tokenizer, encoder and head (loaded on first use, cached per process)."""
        base = None if self.base is None else str(self.base)
        return once(_load, self.model, base, self.device, self.allow_pickle)

    def aligned(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(aligned) of each (premise chunk, claim sentence) pair."""
        import torch

        tokenizer, encoder, head = self.loaded()
        out: list[float] = []
        for part in batches(pairs, self.batch_size):
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


class AlignScoreChecker(PairChecker):
    """AlignScore judges each claim against its retrieved segments (aligned or not).

    A claim is Entailment when its score reaches ``threshold``, else Neutral; its support is the
    score. AlignScore's authors publish no threshold (they report threshold-free metrics and
    tune one per dataset): 0.5 here, choose yours on labelled data.

    Example:
        >>> checker = AlignScoreChecker(model="./alignscore/AlignScore-large.ckpt",
        ...                             base="./roberta-large")
    """

    mode = "alignscore"
    model: str | Path = "alignscore-large"
    """``"alignscore-base"`` / ``"alignscore-large"`` or the path of a downloaded checkpoint."""
    base: str | Path | None = None
    """The RoBERTa base (folder or hub id) the checkpoint was trained from; a name brings its
    own (``FacebookAI/roberta-large`` / ``-base``)."""
    batch_size: int = Field(default=16, ge=1)
    """(chunk, claim sentence) pairs per forward pass."""
    allow_pickle: bool = False
    """Read a Lightning checkpoint that holds pickled objects besides tensors (runs their
    code: only for a file you trust)."""

    def alignscore(self) -> AlignScoreModel:
        """The model wrapper (its weights load on first use)."""
        return AlignScoreModel(
            self.model, base=self.base, device=self.device, batch_size=self.batch_size,
            allow_pickle=self.allow_pickle,
        )  # fmt: skip

    def scores(self, pairs: list[tuple[str, str]]) -> list[tuple[float, dict[str, Any]]]:
        return [(s.score, s.raw()) for s in self.alignscore().score(pairs)]
