"""Typed loaders for the three benchmark data folders (see the package docstring)."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import tempfile
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from truthguard.errors import DatasetNotFoundError, InvalidInputError

__all__ = [
    "HALUEVAL_TASKS",
    "REFCHECKER_MODELS",
    "ChaleItem",
    "HaluEvalItem",
    "PHDPassage",
    "RVRecord",
    "RefCheckerClaim",
    "RefCheckerResponse",
    "dataset_dir",
    "load_chale",
    "load_halueval",
    "load_phd",
    "load_refchecker",
    "load_rv_records",
    "load_wikibio_records",
    "strip_html",
]

# Upstream files per dataset folder: (repository, path in the repository, path in our folder).
REFCHECKER_MODELS = (
    "gpt4",
    "chatgpt",
    "claude2",
    "llama2_70b_chat",
    "falcon_40B_instruct",
    "alpaca_7B",
    "davinci001",
)
_RC_PREFIX = {"zero_context": "nq", "noisy_context": "msmarco"}
_UPSTREAM: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "phd": (
        "maybenotime/PHD",
        [
            ("PHD_benchmark.json", "PHD_benchmark.json"),
            (
                "Reverse_Validation/our_dataset_em_record.json",
                "Reverse_Validation/our_dataset_em_record.json",
            ),
            (
                "Reverse_Validation/our_dataset_qg_record.json",
                "Reverse_Validation/our_dataset_qg_record.json",
            ),
        ],
    ),
    "chale": (
        "weijiaheng/CHALE",
        [("hallucinated_ans_final_filtered.json", "hallucinated_ans_final_filtered.json")],
    ),
    "refchecker": (
        "amazon-science/RefChecker",
        [
            (
                f"benchmark/human_annotations_v1/{setting}/{prefix}_{model}_answers.json",
                f"{setting}/{prefix}_{model}_answers.json",
            )
            for setting, prefix in _RC_PREFIX.items()
            for model in REFCHECKER_MODELS
        ],
    ),
    # Upstream names its files *_data.json (one JSON object per line); ours are <task>.jsonl.
    "halueval": (
        "RUCAIBox/HaluEval",
        [
            (f"data/{task}_data.json", f"{task}.jsonl")
            for task in ("qa", "dialogue", "summarization")
        ],
    ),
}
_PROBE = {
    "phd": "PHD_benchmark.json",
    "chale": "hallucinated_ans_final_filtered.json",
    "halueval": "qa.jsonl",
}
PHD_DOMAINS = {"wiki_10w": "PHD-Low", "wiki_1000w": "PHD-Medium", "wiki_1y": "PHD-High"}


def _cache_root() -> Path:
    home = os.environ.get("TRUTHGUARD_HOME")
    return (Path(home) if home else Path.home() / ".cache" / "truthguard") / "data"


def _has_dataset(folder: Path, name: str) -> bool:
    if name == "refchecker":
        return any(folder.glob("*_context/*_answers.json"))
    if name == "halueval":
        return any((folder / f"{task}.jsonl").is_file() for task in HALUEVAL_TASKS)
    return (folder / _PROBE[name]).is_file()


def _download(name: str, target: Path) -> None:
    repo, files = _UPSTREAM[name]
    base = os.environ.get("TRUTHGUARD_DATA_URL", "https://raw.githubusercontent.com")
    tmp = Path(tempfile.mkdtemp(prefix=f"truthguard-{name}-"))
    try:
        for remote, local in files:
            url = f"{base.rstrip('/')}/{repo}/main/{remote}"
            dest = tmp / local
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                with urllib.request.urlopen(url, timeout=60) as resp, open(dest, "wb") as out:
                    shutil.copyfileobj(resp, out)
            except OSError as e:
                raise DatasetNotFoundError(
                    f"could not download {url} ({e}); pass a data directory or set "
                    "TRUTHGUARD_DATA_DIR"
                ) from e
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(tmp), str(target))  # all files or none
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def dataset_dir(name: str, data_dir: str | Path | None = None, *, download: bool = True) -> Path:
    """Find (or download) the folder of dataset ``name`` (``phd``, ``chale``, ``refchecker``)."""
    if name not in _UPSTREAM:
        raise InvalidInputError(
            "name", f"unknown dataset {name!r}; expected one of {sorted(_UPSTREAM)}"
        )
    candidates: list[Path] = []
    if data_dir is not None:
        root = Path(data_dir).expanduser()
        if not root.is_dir():
            raise DatasetNotFoundError(f"data_dir: no directory at {root}")
        for folder in (root / name, root):
            if _has_dataset(folder, name):
                return folder
        raise DatasetNotFoundError(f"data_dir: no {name} data in {root} or {root / name}")
    env = os.environ.get("TRUTHGUARD_DATA_DIR")
    if env:
        candidates += [Path(env) / name, Path(env)]
    cached = _cache_root() / name
    candidates.append(cached)
    for folder in candidates:
        if _has_dataset(folder, name):
            return folder
    if not download:
        raise DatasetNotFoundError(f"no {name} data found in {[str(c) for c in candidates]}")
    _download(name, cached)
    return cached


def _read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise DatasetNotFoundError(f"{path} is not valid JSON: {e}") from e


# -- PHD ------------------------------------------------------------------------------------------


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PHDPassage(_Record):
    """A ChatGPT passage about an entity, with the human factuality label."""

    entity: str
    passage: str
    label: Literal["factual", "non-factual"]
    domain: str
    """PHD-Low, PHD-Medium or PHD-High (from the upstream key)."""
    url: str | None = None
    wrong_part: str | None = None

    @property
    def is_hallucinated(self) -> bool:
        return self.label == "non-factual"


def _text_or_none(value: Any) -> str | None:
    # Upstream stores a few ``wrong_part`` values as bare numbers (e.g. 13).
    if value is None or value == "":
        return None
    return str(value)


def _entity(value: Any) -> str:
    # Upstream entity strings sometimes carry stray spaces ("Ailanthus "): the passages and the
    # recordings of one entity must meet under one spelling.
    return " ".join(str(value).split())


def load_phd(data_dir: str | Path | None = None) -> list[PHDPassage]:
    """The PHD passages, in upstream order within each domain."""
    raw = _read_json(dataset_dir("phd", data_dir) / "PHD_benchmark.json")
    out = []
    for key, items in raw.items():
        for item in items:
            out.append(
                PHDPassage(
                    entity=_entity(item["entity"]),
                    passage=item["AI"],
                    label=item["label"],
                    domain=PHD_DOMAINS.get(key, key),
                    url=item.get("url"),
                    wrong_part=_text_or_none(item.get("wrong_part")),
                )
            )
    return out


class RVRecord(_Record):
    """Recorded ChatGPT outputs of both Reverse Validation stages for one passage."""

    variant: Literal["em", "qg"]
    entity: str
    passage: str
    stage1: str
    """Generated question (QG) or numbered feature list (EM)."""
    stage2: str
    """The model's answer to the stage-1 query."""
    recorded_label: Literal["factual", "non-factual"]
    """The ``label`` field of the record file. NOT the human label: it disagrees with
    ``PHD_benchmark.json`` on dozens of passages. Score against :func:`load_phd` instead."""
    is_same: str | None = None
    """Upstream's recorded "same entity?" verdict ("Yes." / "No."), None where absent."""
    domain: str | None = None


def _rv_from_raw(
    raw: Iterable[dict[str, Any]], variant: str, domains: dict[str, str]
) -> list[RVRecord]:
    field = "question" if variant == "qg" else "detail"
    return [
        RVRecord(
            variant=variant,  # type: ignore[arg-type]
            entity=_entity(r["entity"]),
            passage=r["claim"],
            stage1=r[field],
            stage2=r["answer"],
            recorded_label=r["label"],
            is_same=None if r.get("Is_same") in (None, "None") else str(r["Is_same"]),
            domain=domains.get(_entity(r["entity"])),
        )
        for r in raw
    ]


def load_rv_records(
    variant: Literal["em", "qg"], data_dir: str | Path | None = None
) -> list[RVRecord]:
    """The recorded stage outputs for PHD (``our_dataset_<variant>_record.json``)."""
    if variant not in ("em", "qg"):
        raise InvalidInputError("variant", f"expected 'em' or 'qg', got {variant!r}")
    folder = dataset_dir("phd", data_dir)
    domains = {p.entity: p.domain for p in load_phd(folder)}
    raw = _read_json(folder / "Reverse_Validation" / f"our_dataset_{variant}_record.json")
    return _rv_from_raw(raw, variant, domains)


def load_wikibio_records(
    variant: Literal["em", "qg"], data_dir: str | Path | None = None
) -> list[RVRecord] | None:
    """WikiBio-GPT3 records (``wiki_bio_<variant>_record.json``) when present, else None."""
    folder = dataset_dir("phd", data_dir)
    for path in (folder / "Reverse_Validation", folder):
        f = path / f"wiki_bio_{variant}_record.json"
        if f.is_file():
            return _rv_from_raw(_read_json(f), variant, {})
    return None


# -- CHALE ----------------------------------------------------------------------------------------

_TAG = re.compile(r"<[^>]+>")


def strip_html(text: str) -> str:
    """Remove HTML tags and entities, collapse white space."""
    return " ".join(html.unescape(_TAG.sub(" ", text)).split())


class ChaleItem(_Record):
    """A Natural Questions item with a non-, half- and fully hallucinated answer."""

    index: int
    question: str
    short_answer: str
    long_answer_html: str
    non_halu: str
    mid_halu: str
    halu: str

    @property
    def long_answer(self) -> str:
        """The long answer with HTML removed (the reference passage)."""
        return strip_html(self.long_answer_html)


def load_chale(data_dir: str | Path | None = None) -> list[ChaleItem]:
    """CHALE items in upstream order."""
    raw = _read_json(dataset_dir("chale", data_dir) / "hallucinated_ans_final_filtered.json")
    cols = ("Question", "Short_ans", "Long_ans", "non-halu", "mid-halu", "halu")
    missing = [c for c in cols if c not in raw]
    if missing:
        raise DatasetNotFoundError(f"CHALE file lacks columns {missing}")
    return [
        ChaleItem(
            index=i,
            question=q,
            short_answer=s,
            long_answer_html=la,
            non_halu=nh,
            mid_halu=mh,
            halu=h,
        )
        for i, (q, s, la, nh, mh, h) in enumerate(zip(*(raw[c] for c in cols), strict=True))
    ]


# -- RefChecker human annotations -----------------------------------------------------------------


class RefCheckerClaim(_Record):
    """A claim triplet of a response with its human label."""

    triplet: tuple[str, str, str]
    label: Literal["Entailment", "Neutral", "Contradiction"]


class RefCheckerResponse(_Record):
    """One LLM's response to one question, split into human-labelled claims."""

    setting: Literal["zero_context", "noisy_context"]
    model: str
    id: str
    response: str
    claims: tuple[RefCheckerClaim, ...]

    def rate(self, label: str) -> float | None:
        """Share of claims with ``label`` (None when the response has no claims)."""
        if not self.claims:
            return None
        return sum(c.label == label for c in self.claims) / len(self.claims)


def load_refchecker(
    setting: Literal["zero_context", "noisy_context"] = "zero_context",
    data_dir: str | Path | None = None,
    *,
    models: Iterable[str] = REFCHECKER_MODELS,
) -> list[RefCheckerResponse]:
    """Responses of the annotated LLMs for one setting (all models, upstream order)."""
    if setting not in _RC_PREFIX:
        raise InvalidInputError("setting", f"expected one of {sorted(_RC_PREFIX)}, got {setting!r}")
    folder = dataset_dir("refchecker", data_dir) / setting
    out: list[RefCheckerResponse] = []
    for model in models:
        path = folder / f"{_RC_PREFIX[setting]}_{model}_answers.json"
        if not path.is_file():
            raise DatasetNotFoundError(f"missing {path}")
        for item in _read_json(path):
            kg_key = next((k for k in item if k.endswith("_response_kg")), None)
            claims = []
            for c in item.get(kg_key, []) if kg_key else []:
                triplet = c.get("triplet")
                label = c.get("human_label")
                if (
                    not triplet
                    or len(triplet) != 3
                    or label
                    not in (
                        "Entailment",
                        "Neutral",
                        "Contradiction",
                    )
                ):
                    continue  # upstream has a few unlabelled or malformed triplets
                claims.append(RefCheckerClaim(triplet=tuple(triplet), label=label))
            out.append(
                RefCheckerResponse(
                    setting=setting,
                    model=model,
                    id=str(item["id"]),
                    response=item.get("response") or "",
                    claims=tuple(claims),
                )
            )
    return out


# -- HaluEval -------------------------------------------------------------------------------------

HALUEVAL_TASKS = ("qa", "dialogue", "summarization")
"""The HaluEval tasks this loader reads (general user queries carry no reference text)."""

# Per task: the reference field, the prompt field (None: no prompt), the right / hallucinated
# output fields, as upstream names them.
_HALUEVAL_FIELDS = {
    "qa": ("knowledge", "question", "right_answer", "hallucinated_answer"),
    "dialogue": ("knowledge", "dialogue_history", "right_response", "hallucinated_response"),
    "summarization": ("document", None, "right_summary", "hallucinated_summary"),
}


class HaluEvalItem(_Record):
    """One HaluEval row: a reference text, its prompt, a correct and a hallucinated output."""

    task: Literal["qa", "dialogue", "summarization"]
    index: int
    """Line number in the task's file, from 0."""
    reference: str
    """The knowledge (QA, dialogue) or the news article (summarization)."""
    question: str | None = None
    """The question (QA); None for the other tasks."""
    history: str | None = None
    """The chat so far, as upstream writes it ("[Human]: ... [Assistant]: ..."), for dialogue."""
    right: str
    """The correct output."""
    hallucinated: str
    """The output ChatGPT was asked to write with a plausible hallucination."""


def load_halueval(
    task: Literal["qa", "dialogue", "summarization"],
    data_dir: str | Path | None = None,
    *,
    limit: int | None = None,
) -> list[HaluEvalItem]:
    """HaluEval rows of one task in file order (``limit``: only the first rows).

    Reads ``<task>.jsonl`` from the ``halueval`` folder (one JSON object per line, upstream's
    format); downloads upstream's ``data/<task>_data.json`` files when no folder is found.
    """
    if task not in _HALUEVAL_FIELDS:
        raise InvalidInputError(
            "task", f"unknown HaluEval task {task!r}; expected one of {list(HALUEVAL_TASKS)}"
        )
    if limit is not None and limit < 0:
        raise InvalidInputError("limit", "must be >= 0")
    path = dataset_dir("halueval", data_dir) / f"{task}.jsonl"
    if not path.is_file():
        raise DatasetNotFoundError(f"no HaluEval {task} file at {path}")
    ref_key, prompt_key, right_key, hallu_key = _HALUEVAL_FIELDS[task]
    out: list[HaluEvalItem] = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            if limit is not None and len(out) >= limit:
                break
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                prompt = str(row[prompt_key]) if prompt_key else None
                out.append(
                    HaluEvalItem(
                        task=task,
                        index=n,
                        reference=str(row[ref_key]),
                        question=prompt if task == "qa" else None,
                        history=prompt if task == "dialogue" else None,
                        right=str(row[right_key]),
                        hallucinated=str(row[hallu_key]),
                    )
                )
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise DatasetNotFoundError(f"{path}, line {n + 1}: not a HaluEval row ({e})") from e
    return out
