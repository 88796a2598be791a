"""Claim checkers that run downloaded weights (a hub id or a local folder), and the NLI one.

What every such checker shares:

* :func:`once`: a model's load, run on first use and once per process for each key (a lock
  guards it; a load that raises is not kept);
* :func:`needs`, :func:`source_of`, :func:`fetch_message`, :func:`offline`: the import error,
  the hub-id-or-folder reading and the one error an offline machine without the weights gets;
* :class:`WeightsModel`: a model wrapper's model, device and batch size;
* :class:`WeightsChecker`: a claim checker that runs its blocking ``check`` off the event loop;
  :class:`PairChecker` one that scores (document, claim) pairs, the document being the claim's
  ``top_k`` segments in reference order, one per line (:func:`document`).

:class:`NLIModel` reads a cross-encoder NLI model: three-way models (DeBERTa-v3 MNLI family:
entailment / neutral / contradiction) and two-way consistency models (HHEM-style: a "consistent"
/ "supported" class and its opposite, or a single logit); :meth:`NLIModel.scores` returns
entailment and contradiction probabilities per (premise, hypothesis) pair, 0 for contradiction
from a model without that class. :class:`NLIChecker` runs it on each (segment, claim) pair.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import threading
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np
from pydantic import Field, field_validator

from truthguard.errors import ConfigurationError
from truthguard.llm import LLMSession
from truthguard.refchecker.checkers import ClaimChecker, ClaimVerdict, LocalChecker, _nli_verdicts
from truthguard.refchecker.extractors import Claim
from truthguard.refchecker.retrieval import Retrieval
from truthguard.store import ArtifactStore

__all__ = ["NLIChecker", "NLIModel", "PairChecker", "WeightsChecker", "WeightsModel"]

T = TypeVar("T")
_lock = threading.Lock()


def offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` tells the hub client not to reach the network."""
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")


@contextmanager
def needs(
    checker: str, extra: str = "local", what: str = "transformers and torch"
) -> Iterator[None]:
    """Imports inside it that fail say which extra to install."""
    try:
        yield
    except ImportError as e:
        raise ConfigurationError(
            f"{checker} needs {what}: pip install 'truthguard[{extra}]'"
        ) from e


def source_of(model: str, what: str, names: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """The hub id or folder ``model`` stands for (a name of ``names`` for its hub id) and
    whether it is a folder here; a path that is no folder is a :class:`ConfigurationError`."""
    source = (names or {}).get(model, model)
    path = Path(source).expanduser()
    if path.is_dir():
        return str(path), True
    if source.startswith((".", "/", "~", "\\")):
        raise ConfigurationError(
            f"could not load the {what} model {model!r}: there is no folder at {path}"
        )
    return source, False


def fetch_message(what: str, model: str, downloads: Sequence[str], then: str) -> str:
    """The one error a machine without the weights gets: the ``huggingface-cli download``
    commands (their arguments in ``downloads``) and what to do ``then``."""
    run = " and ".join(f"`huggingface-cli download {d}`" for d in downloads)
    return (
        f"the {what} model {model!r} is not on this machine and could not be downloaded. "
        f"Where the Hugging Face hub is reachable, run {run}, {then}."
    )


def one_folder_message(what: str, model: str, names: Mapping[str, str], checker: str) -> str:
    """:func:`fetch_message` for a model that is one hub repository, fetched into one folder."""
    hub = names.get(model, model)
    folder = "./" + (model if model in names else hub.rsplit("/", 1)[-1].lower())
    return fetch_message(
        what,
        model,
        [f"{hub} --local-dir {folder}"],
        f"copy the folder here and pass {checker}(model={folder!r})",
    )


def batches(items: Sequence[T], size: int) -> Iterator[list[T]]:
    """``items`` in consecutive runs of at most ``size``."""
    for s in range(0, len(items), size):
        yield list(items[s : s + size])


@functools.lru_cache(maxsize=8)
def _load_once(load: Callable[..., Any], *key: Any) -> Any:
    return load(*key)


def once(load: Callable[..., T], *key: Any) -> T:
    """``load(*key)``, run once per process for each key (a lock guards the load; one that
    raises is not kept, so the next call tries again)."""
    with _lock:
        return _load_once(load, *key)


@dataclass
class WeightsModel:
    """A model wrapper: its weights (a name, hub id or folder), device and batch size; the
    network loads on first use, once per process (:func:`once`)."""

    model: str | Path
    """A name, a Hugging Face hub id or a local folder."""
    _: KW_ONLY
    device: str = "cpu"
    """Torch device (``"cpu"``, ``"cuda"``)."""
    batch_size: int = 16
    """Inputs per forward pass."""

    def __post_init__(self) -> None:
        self.model = str(self.model)


class WeightsChecker(ClaimChecker):
    """A claim checker running downloaded weights: :meth:`check` (blocking) off the event loop."""

    device: str = "cpu"
    """Torch device of the model (``"cpu"``, ``"cuda"``)."""

    async def acheck(
        self,
        question: str,
        claims: list[Claim],
        retrieval: Retrieval,
        session: LLMSession,
        *,
        store: ArtifactStore | None,
    ) -> list[ClaimVerdict]:
        return await asyncio.to_thread(self.check, claims, retrieval, question)

    @abstractmethod
    def check(
        self, claims: list[Claim], retrieval: Retrieval, question: str = ""
    ) -> list[ClaimVerdict]:
        """One verdict per claim (blocking; :meth:`acheck` runs it off the event loop)."""


class PairChecker(WeightsChecker):
    """A checker scoring each (document, claim) pair: Entailment when the score passes
    ``threshold``, else Neutral; the support is the score."""

    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    """A claim is Entailment when its score reaches this."""

    mode: ClassVar[str]
    """The verdicts' ``mode``."""

    @abstractmethod
    def scores(self, pairs: list[tuple[str, str]]) -> list[tuple[float, dict[str, Any]]]:
        """Each pair's score and what the verdict's ``raw`` records of it."""

    def passes(self, score: float) -> bool:
        return score >= self.threshold

    def check(
        self, claims: list[Claim], retrieval: Retrieval, question: str = ""
    ) -> list[ClaimVerdict]:
        pairs = [(document(retrieval, i), c.text) for i, c in enumerate(claims)]
        return [
            ClaimVerdict(
                label="Entailment" if self.passes(score) else "Neutral",
                support=score,
                raw=json.dumps(raw),
                mode=self.mode,
            )
            for score, raw in self.scores(pairs)
        ]


def document(retrieval: Retrieval, i: int) -> str:
    """Claim ``i``'s document: its top-k segments in reference order, one per line."""
    order = sorted(set(retrieval.top_k[i]), key=lambda j: (retrieval.segments[j].reference, j))
    return "\n".join(retrieval.segments[j].text for j in order)


_ENTAIL = ("entail", "consistent", "support", "faithful", "true")
_CONTRA = ("contradict", "refute")


def _load(model: str, device: str) -> tuple[Any, Any]:
    with needs("NLIChecker"):
        import torch  # noqa: F401
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
    model, local = source_of(model, "NLI")
    only_local = local or offline()
    try:
        tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=only_local)
        net = AutoModelForSequenceClassification.from_pretrained(model, local_files_only=only_local)
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


@dataclass
class NLIModel(WeightsModel):
    """Entailment / contradiction probabilities from a sequence-classification NLI model
    (``model``: a hub id, e.g. ``"cross-encoder/nli-deberta-v3-small"``, or a local folder)."""

    _: KW_ONLY
    max_length: int = 512
    """Token limit of a (premise, hypothesis) pair; longer premises are truncated."""

    def _loaded(self) -> tuple[Any, Any]:
        return once(_load, self.model, self.device)

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
        for chunk in batches(pairs, self.batch_size):
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


class NLIChecker(WeightsChecker, LocalChecker):
    """A cross-encoder NLI model judges each claim; the fact grounding guards numbers and names.

    ``model`` is a Hugging Face hub id or a local directory of a sequence-classification NLI
    model: three-way (DeBERTa-v3 MNLI family, e.g. ``cross-encoder/nli-deberta-v3-small``) or
    two-way consistency (HHEM-style). It is loaded on the first check; when it is neither on disk
    nor downloadable, a :class:`~truthguard.errors.ConfigurationError` names it and says how to
    fetch it. Each claim is paired with each of its ``top_k`` segments (premise = segment): it is
    Entailment when some segment entails it with probability >= ``nli_threshold``, else
    Contradiction when some segment contradicts it, else Neutral. With ``grounding`` on (the
    default), a number, date or name of the claim missing from the evidence caps it at Neutral
    and one conflicting with its evidence sentence makes it Contradiction, whatever the model
    says: NLI models are known to pass swapped numbers.

    Example:
        >>> checker = NLIChecker(model="cross-encoder/nli-deberta-v3-small")  # loads lazily
    """

    model: str | Path
    """Hub id or local directory of the NLI model."""
    batch_size: int = Field(default=16, ge=1)
    """(segment, claim) pairs per forward pass."""

    @field_validator("model")
    @classmethod
    def _model_given(cls, v: Any) -> Any:
        if not str(v).strip():
            raise ValueError("give a hub id or the path of a local NLI model")
        return v

    def nli_model(self) -> NLIModel:
        """The model wrapper (its weights load on first use)."""
        return NLIModel(self.model, device=self.device, batch_size=self.batch_size)

    def check(
        self, claims: list[Claim], retrieval: Retrieval, question: str = ""
    ) -> list[ClaimVerdict]:
        return _nli_verdicts(self, claims, retrieval, self.nli_model().scores)
