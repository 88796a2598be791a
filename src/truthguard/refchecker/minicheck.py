"""MiniCheck (Tang, Laban and Durrett, EMNLP 2024) as a claim checker, by name.

The three encoder-sized MiniCheck models are run the way their authors run them in
``minicheck/inference.py`` of https://github.com/Liyan06/MiniCheck (Apache-2.0):

* the document is split into sentences (NLTK's ``sent_tokenize`` on each line, the line breaks
  kept as sentences of their own) and whole sentences are packed into chunks of at most
  ``chunk_size``: words for Flan-T5 (500 by default), tokens of the model's tokenizer for
  RoBERTa and DeBERTa (400); a sentence that would overflow a chunk opens the next one;
* each chunk is joined with the claim by the tokenizer's end-of-sequence token
  (``chunk</s>claim``; DeBERTa-v3's is ``[SEP]``), Flan-T5's text is prefixed ``predict: ``, and
  the pair is tokenized with truncation at ``max_length`` (512 for RoBERTa, 2048 otherwise);
* the encoders' two-class softmax gives P(supported); Flan-T5 is run one decoder step from the
  start token and the softmax is taken over the logits of token ids 3 (unsupported) and 209
  (supported), as the authors read them;
* the claim's support is the best chunk's (max over chunks), supported when it exceeds 0.5.

The document a claim is checked against is the claim's ``top_k`` retrieved segments, in the
order they appear in the references, one per line. :data:`MINICHECK_MODELS` maps the names to
their hub ids; a local folder (what ``huggingface-cli download HUB_ID --local-dir FOLDER``
writes) works the same, its kind read from its ``config.json``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from truthguard.errors import ConfigurationError
from truthguard.refchecker.nli import (
    PairChecker,
    WeightsModel,
    batches,
    needs,
    offline,
    once,
    one_folder_message,
    source_of,
)
from truthguard.refchecker.segment import split_sentences

__all__ = [
    "MINICHECK_MODELS",
    "MiniCheckChecker",
    "MiniCheckModel",
    "missing_weights_message",
    "pack_chunks",
    "sentences_with_newlines",
]

MINICHECK_MODELS: dict[str, str] = {
    "minicheck-roberta-large": "lytang/MiniCheck-RoBERTa-Large",
    "minicheck-deberta-v3-large": "lytang/MiniCheck-DeBERTa-v3-Large",
    "minicheck-flan-t5-large": "lytang/MiniCheck-Flan-T5-Large",
}
"""Names :class:`MiniCheckChecker` and ``RefChecker(checker=...)`` accept, with their hub ids."""

Kind = Literal["roberta", "deberta", "flan-t5"]

# the authors' defaults (inference.py and minicheck.py): (max_model_len, chunk_size)
_DEFAULTS: dict[str, tuple[int, int]] = {
    "roberta": (512, 400),
    "deberta": (2048, 400),
    "flan-t5": (2048, 500),
}
# Flan-T5's vocabulary ids the authors read the answer from: 3 "no support", 209 "support"
_T5_LABEL_IDS = (3, 209)


def missing_weights_message(model: str) -> str:
    """The one error an offline machine without the weights gets, saying how to fetch them."""
    return one_folder_message("MiniCheck", model, MINICHECK_MODELS, "MiniCheckChecker")


def _sentences(text: str) -> list[str]:
    """NLTK's punkt sentences as the authors split, else truthguard's own sentence splitter."""
    try:
        from nltk.tokenize import sent_tokenize

        return sent_tokenize(text)
    except (ImportError, LookupError):  # no nltk, or its punkt data is not downloaded
        return [s.text for s in split_sentences(text) if s.text.strip()]


def sentences_with_newlines(text: str, split: Callable[[str], list[str]] = _sentences) -> list[str]:
    """The authors' ``sent_tokenize_with_newlines``: sentences of each line, ``"\\n"`` between."""
    out: list[str] = []
    for block in text.split("\n"):
        out.extend(split(block))
        out.append("\n")
    return out[:-1]


def pack_chunks(sentences: Sequence[str], size: int, count: Callable[[str], int]) -> list[str]:
    """Whole sentences packed into chunks of at most ``size`` (as ``count`` measures a sentence);
    a sentence that would overflow opens the next chunk, one longer than ``size`` stands alone.
    Line breaks are restored and empty chunks dropped, as in the authors' code."""

    def chunks() -> Iterator[str]:
        current: list[str] = []
        n = 0
        for sentence in sentences:
            k = count(sentence)
            if n + k > size:
                yield " ".join(current)
                current, n = [sentence], k
            else:
                current.append(sentence)
                n += k
        if current:
            yield " ".join(current)

    packed = [c.replace(" \n ", "\n").strip() for c in chunks()]
    return [c for c in packed if c != ""]


def _kind_of(model_type: str) -> Kind:
    if model_type == "t5":
        return "flan-t5"
    if model_type.startswith("deberta"):
        return "deberta"
    return "roberta"


def _load(model: str, device: str) -> tuple[Any, Any, Kind]:
    """Tokenizer, network and kind of a MiniCheck model."""
    with needs("MiniCheckChecker"):
        import torch  # noqa: F401
        from transformers import (
            AutoConfig,
            AutoModelForSeq2SeqLM,
            AutoModelForSequenceClassification,
            AutoTokenizer,
        )
    source, local = source_of(model, "MiniCheck", MINICHECK_MODELS)
    only_local = local or offline()
    try:
        config = AutoConfig.from_pretrained(source, local_files_only=only_local)
        kind = _kind_of(str(config.model_type))
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=only_local)
        if kind == "flan-t5":
            net = AutoModelForSeq2SeqLM.from_pretrained(source, local_files_only=only_local)
        else:
            config.num_labels = 2  # the authors load the encoders as two-class classifiers
            config.problem_type = "single_label_classification"
            net = AutoModelForSequenceClassification.from_pretrained(
                source, config=config, local_files_only=only_local
            )
    except Exception as e:  # OSError, ValueError, HTTP errors: all mean "not available here"
        if local:
            raise ConfigurationError(
                f"could not load the MiniCheck model from the folder {source!r}: "
                f"{type(e).__name__}: {e}. The folder must hold what `huggingface-cli download "
                "--local-dir` writes: config.json, the weights and the tokenizer files."
            ) from e
        raise ConfigurationError(missing_weights_message(model)) from e
    net.eval()
    net.to(device)
    return tokenizer, net, kind


@dataclass(frozen=True)
class _Scored:
    support: float
    chunks: list[str]
    per_chunk: list[float]

    def raw(self) -> dict[str, Any]:
        return {"support": round(self.support, 4), "chunks": len(self.chunks),
                "per_chunk": [round(p, 4) for p in self.per_chunk]}  # fmt: skip


@dataclass
class MiniCheckModel(WeightsModel):
    """One MiniCheck model (``model``: a name of :data:`MINICHECK_MODELS`, a hub id or a local
    folder): the authors' chunking, input format and aggregation."""

    _: KW_ONLY
    chunk_size: int | None = None
    """Chunk size (words for Flan-T5, tokens otherwise); None: the authors' default."""
    max_length: int | None = None
    """Token limit of a model input; None: the authors' default."""

    def loaded(self) -> tuple[Any, Any, Kind]:
        """The tokenizer, the network and the kind (loaded on first use, cached per process)."""
        return once(_load, self.model, self.device)

    @property
    def kind(self) -> Kind:
        return self.loaded()[2]

    @property
    def token_limit(self) -> int:
        return self.max_length or _DEFAULTS[self.kind][0]

    @property
    def chunk_limit(self) -> int:
        return self.chunk_size or _DEFAULTS[self.kind][1]

    def chunks(self, document: str) -> list[str]:
        """The document's chunks, as the authors pack them."""
        tokenizer, _, kind = self.loaded()
        if kind == "flan-t5":

            def count(s: str) -> int:
                return len(s.split())
        else:

            def count(s: str) -> int:
                ids = tokenizer(
                    s,
                    padding=False,
                    add_special_tokens=False,
                    max_length=self.token_limit,
                    truncation=True,
                )["input_ids"]
                return len(ids)

        return pack_chunks(sentences_with_newlines(document) or [""], self.chunk_limit, count)

    def texts(self, chunks: Sequence[str], claim: str) -> list[str]:
        """What the tokenizer is given for each chunk: chunk and claim joined by the EOS token."""
        tokenizer, _, kind = self.loaded()
        prefix = "predict: " if kind == "flan-t5" else ""
        return [prefix + tokenizer.eos_token.join([c, claim]) for c in chunks]

    def probabilities(self, texts: Sequence[str]) -> list[float]:
        """P(supported) of each model text, in batches."""
        import torch

        tokenizer, net, kind = self.loaded()
        out: list[float] = []
        for part in batches(texts, self.batch_size):
            batch = tokenizer(
                part,
                max_length=self.token_limit,
                truncation=True,
                padding=True,
                return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                if kind == "flan-t5":
                    start = torch.zeros(
                        (batch["input_ids"].size(0), 1), dtype=torch.long, device=self.device
                    )
                    logits = net(
                        input_ids=batch["input_ids"],
                        attention_mask=batch["attention_mask"],
                        decoder_input_ids=start,
                    ).logits.squeeze(1)
                    logits = logits[:, list(_T5_LABEL_IDS)]
                else:
                    logits = net(**batch).logits
                probs = torch.softmax(logits.float(), dim=-1)[:, 1]
            out.extend(float(p) for p in probs.cpu())
        return out

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[_Scored]:
        """Each (document, claim): the best chunk's P(supported), the chunks and each one's."""
        plan = []
        texts: list[str] = []
        for document, claim in pairs:
            chunks = self.chunks(document)
            plan.append((chunks, len(texts)))
            texts.extend(self.texts(chunks, claim))
        probs = self.probabilities(texts)  # every chunk of every claim, batched together
        out = []
        for chunks, at in plan:
            per = probs[at : at + len(chunks)]
            out.append(_Scored(max(per, default=0.0), chunks, per))
        return out


class MiniCheckChecker(PairChecker):
    """MiniCheck judges each claim against its retrieved segments (supported or not).

    A claim is Entailment when its best chunk's P(supported) exceeds ``threshold`` (0.5, as the
    authors decide), else Neutral: MiniCheck does not tell a contradiction from a claim the
    document does not state. Its support is that probability.

    Example:
        >>> checker = MiniCheckChecker(model="minicheck-flan-t5-large")  # loads on first check
        >>> # RefChecker(checker="minicheck-flan-t5-large") builds the same checker
    """

    mode = "minicheck"
    model: str | Path
    """A name of :data:`MINICHECK_MODELS`, a Hugging Face hub id or a local folder."""
    batch_size: int = Field(default=16, ge=1)
    """(chunk, claim) pairs per forward pass."""
    chunk_size: int | None = Field(default=None, ge=1)
    """Chunk size: words for Flan-T5, tokens for RoBERTa / DeBERTa; None: the authors' 500 / 400."""
    max_length: int | None = Field(default=None, ge=8)
    """Token limit of one model input; None: the authors' (512 RoBERTa, 2048 otherwise)."""
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    """A claim is Entailment when its support exceeds this (the authors' 0.5)."""

    @field_validator("model")
    @classmethod
    def _model_given(cls, v: Any) -> Any:
        if not str(v).strip():
            raise ValueError("give a MiniCheck name, a hub id or the path of a local folder")
        return v

    def minicheck(self) -> MiniCheckModel:
        """The model wrapper (its weights load on first use)."""
        return MiniCheckModel(
            self.model, device=self.device, batch_size=self.batch_size,
            chunk_size=self.chunk_size, max_length=self.max_length,
        )  # fmt: skip

    def passes(self, score: float) -> bool:
        return score > self.threshold  # the authors' rule: above 0.5

    def scores(self, pairs: list[tuple[str, str]]) -> list[tuple[float, dict[str, Any]]]:
        return [(s.support, s.raw()) for s in self.minicheck().score(pairs)]
