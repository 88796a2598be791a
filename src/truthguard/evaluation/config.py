"""The evaluation config file (YAML or TOML): which detectors, built how, from which models.

A config describes detectors by *configuration*, never by Python objects, so the same file builds
them in this process, in Ray workers and on other machines::

    detectors:
      rc:
        type: refchecker
        options: {score: mean_support}
        threshold: 0.42
      rv:
        type: reverse_validation
        model: {provider: openai, kwargs: {model: gpt-4o-mini, temperature: 0}}
    store: {url: "http://chroma.internal:8000", headers: {Authorization: "Bearer ..."}}
    columns: {question: prompt, answer: response}
"""

from __future__ import annotations

import importlib
import json
import math
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from truthguard.errors import ConfigurationError, InvalidInputError

__all__ = [
    "ColumnMap",
    "DetectorSpec",
    "EvaluateConfig",
    "ModelSpec",
    "RaySpec",
    "StoreSpec",
    "build_detectors",
    "build_model",
    "build_store",
    "load_config",
    "save_config",
]

DetectorType = Literal["refchecker", "fewl", "reverse_validation", "cascade", "fake"]

# provider name -> (module, class) of its LangChain chat model
_PROVIDERS = {
    "openai": ("langchain_openai", "ChatOpenAI"),
    "azure-openai": ("langchain_openai", "AzureChatOpenAI"),
    "anthropic": ("langchain_anthropic", "ChatAnthropic"),
    "ollama": ("langchain_ollama", "ChatOllama"),
    "google": ("langchain_google_genai", "ChatGoogleGenerativeAI"),
    "mistral": ("langchain_mistralai", "ChatMistralAI"),
}


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelSpec(_Spec):
    """A chat model described by provider name and keyword arguments."""

    provider: str
    """``openai``, ``azure-openai``, ``anthropic``, ``ollama``, ``google``, ``mistral``; or
    ``rv-replay`` (the recorded PHD outputs), ``scripted`` (a test double); or an import path
    ``package.module:factory`` called with ``kwargs``."""
    kwargs: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments of the model class (``model``, ``temperature``, ``base_url``, ...).
    Keep API keys out: providers read them from the environment of each worker."""
    requests_per_second: float | None = Field(default=None, gt=0)
    """Rate limit of this model for the whole run; split evenly between workers."""


class DetectorSpec(_Spec):
    """One detector of the run."""

    type: DetectorType
    """Which detector: ``refchecker``, ``fewl``, ``reverse_validation``, ``cascade`` (the local
    RefChecker first, the LLM RefChecker of ``model`` for the answers it escalates; options
    ``band``, ``escalate_on``, ``deadline``, ``on_escalation_failure``, and ``local`` /
    ``escalate``: the options of each stage's RefChecker) or ``fake`` (tests)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Constructor options of the detector (for example ``score``, ``top_k``, ``variant``)."""
    model: ModelSpec | None = None
    """The model of Reverse Validation; for RefChecker, the LLM extractor and checker (the
    local pipeline runs when absent)."""
    reference_models: list[ModelSpec] = Field(default_factory=list)
    """FEWL's reference models."""
    threshold: float | None = None
    """Scores at or above pass; set by ``truthguard calibrate``."""
    calibration: dict[str, Any] | None = None
    """What ``truthguard calibrate`` chose (target, precision, recall), for the record."""

    @field_validator("threshold")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        if v is not None and not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v


class StoreSpec(_Spec):
    """Where the artifact store lives (a local directory, or a Chroma server shared by workers)."""

    path: str | None = None
    """Directory of a persistent local store."""
    url: str | None = None
    """URL of a Chroma server (``chroma run``); needed to share artifacts between machines."""
    headers: dict[str, str] | None = None
    """HTTP headers for the server (auth). Values ``${NAME}`` are read from the environment."""
    tenant: str | None = None
    """Chroma tenant on the server."""
    database: str | None = None
    """Chroma database on the server."""
    namespace: str = "truthguard"
    """Collection prefix."""
    lease_seconds: float | None = Field(default=None, gt=0)
    """Cross-process de-duplication window (see ``ArtifactStore.claim``); None: off."""


class ColumnMap(_Spec):
    """Names of the input columns (defaults: the canonical names)."""

    question: str = "question"
    """Column holding the question."""
    answer: str = "answer"
    """Column holding the answer to check."""
    contexts: str = "contexts"
    """Column holding the retrieved contexts (a list, or a JSON list in CSV)."""
    label: str = "label"
    """Column holding the gold label (optional): the words ``hallucinated`` / ``factual``, or a
    boolean / 1 / 0 read as ``label_true`` says."""
    label_true: Literal["hallucinated", "factual"] = "hallucinated"
    """What true (and 1, ``yes``) means in the label column: ``hallucinated`` (the default, as in
    an ``is_hallucinated`` column) or ``factual`` (as in an ``is_correct`` column)."""
    id: str = "id"
    """Column holding a stable row id (optional: a content hash is used otherwise)."""


class RaySpec(_Spec):
    """How the Ray engine runs."""

    address: str | None = None
    """Ray cluster address (``auto``, ``ray://head:10001``); None starts a local Ray."""
    num_cpus: int | None = Field(default=None, ge=1)
    """CPUs of a local Ray (ignored with ``address``)."""
    workers: int = Field(default=2, ge=1)
    """Scoring actors (each builds its own detectors once)."""
    batch_size: int = Field(default=16, ge=1)
    """Rows per ``map_batches`` batch."""


class EvaluateConfig(_Spec):
    """The whole evaluation config."""

    detectors: dict[str, DetectorSpec] = Field(min_length=1)
    """Detectors by the name results are reported under."""
    store: StoreSpec | None = None
    """Artifact store given to detectors that take one; None: none (FEWL keeps a private one)."""
    columns: ColumnMap = Field(default_factory=ColumnMap)
    """Input column names."""
    concurrency: int = Field(default=4, ge=1)
    """Checks in flight per detector (per worker with Ray)."""
    batch_size: int = Field(default=32, ge=1)
    """Rows scored and written per step (the unit of resumption)."""
    ray: RaySpec = Field(default_factory=RaySpec)
    """Ray engine settings."""

    @field_validator("detectors")
    @classmethod
    def _names(cls, v: dict[str, DetectorSpec]) -> dict[str, DetectorSpec]:
        for name in v:
            if not name.strip():
                raise ValueError("detector names must not be blank")
        return v


def _input_error(e: ValidationError, source: str) -> InvalidInputError:
    err = e.errors()[0]
    field = ".".join(str(p) for p in err.get("loc", ())) or "config"
    msg = "is not an accepted field" if err.get("type") == "extra_forbidden" else err["msg"]
    return InvalidInputError(field, f"{msg} (in {source})")


def load_config(source: str | Path | dict[str, Any] | EvaluateConfig) -> EvaluateConfig:
    """Read a YAML (``.yaml``/``.yml``), TOML (``.toml``) or JSON config, or validate a dict."""
    if isinstance(source, EvaluateConfig):
        return source
    if isinstance(source, dict):
        data, name = source, "config"
    else:
        path = Path(source)
        if not path.is_file():
            raise InvalidInputError("config", f"no config file at {path}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            bad = e.object[e.start : e.start + 1].hex()
            raise InvalidInputError(
                "config", f"{path} is not UTF-8 text (byte 0x{bad} at offset {e.start})"
            ) from e
        suffix = path.suffix.lower()
        try:
            if suffix == ".toml":
                data = tomllib.loads(text)
            elif suffix == ".json":
                data = json.loads(text)
            else:
                import yaml

                data = yaml.safe_load(text)
        except Exception as e:
            raise InvalidInputError("config", f"cannot parse {path}: {e}") from e
        if not isinstance(data, dict):
            raise InvalidInputError("config", f"{path} must hold a mapping at the top level")
        name = str(path)
    try:
        return EvaluateConfig.model_validate(data)
    except ValidationError as e:
        raise _input_error(e, name) from e


def save_config(config: EvaluateConfig, path: str | Path) -> Path:
    """Write ``config`` as YAML or TOML (by suffix); fields left at their default are omitted."""
    path = Path(path)
    data = config.model_dump(mode="json", exclude_defaults=True)
    data["detectors"] = {
        name: spec.model_dump(mode="json", exclude_defaults=True)
        for name, spec in config.detectors.items()
    }
    if path.suffix.lower() == ".toml":
        text = _toml(data)
    elif path.suffix.lower() == ".json":
        text = json.dumps(data, indent=2) + "\n"
    else:
        import yaml

        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)  # never leave a half-written config behind
    return path


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise ConfigurationError(f"cannot write {type(v).__name__} to TOML")


def _toml(data: dict[str, Any], prefix: str = "") -> str:
    """A small TOML writer for config-shaped data (tables of scalars, lists and tables)."""
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for k, v in data.items():
        if v is None:
            continue  # TOML has no null: absent means default
        if isinstance(v, dict) and v:
            tables.append((k, v))
        else:
            lines.append(f"{json.dumps(k)} = {_toml_value(v)}")
    out = "\n".join(lines) + ("\n" if lines else "")
    for k, v in tables:
        name = f"{prefix}.{json.dumps(k)}" if prefix else json.dumps(k)
        out += f"\n[{name}]\n" + _toml(v, name)
    return out


# -- building detectors -------------------------------------------------------------------------


def build_model(spec: ModelSpec, *, rate_share: int = 1, field: str = "model") -> Any:
    """The chat model a spec describes; ``rate_share`` splits its rate limit between workers."""
    kwargs = dict(spec.kwargs)
    if spec.requests_per_second is not None:
        from langchain_core.rate_limiters import InMemoryRateLimiter

        kwargs["rate_limiter"] = InMemoryRateLimiter(
            requests_per_second=spec.requests_per_second / max(rate_share, 1),
            check_every_n_seconds=0.05,
            max_bucket_size=1,
        )
    provider = spec.provider
    if provider == "rv-replay":
        from truthguard.rv import replay_model

        kwargs.pop("rate_limiter", None)  # replays cost nothing
        try:
            return replay_model(**kwargs)
        except TypeError as e:
            raise InvalidInputError(f"{field}.kwargs", str(e)) from e
    if provider == "scripted":
        from truthguard.testing import ScriptedChatModel

        return _construct(ScriptedChatModel, kwargs, field)
    if provider in _PROVIDERS:
        module, cls = _PROVIDERS[provider]
        try:
            factory = getattr(importlib.import_module(module), cls)
        except ImportError as e:
            package = module.replace("_", "-")
            raise ConfigurationError(
                f"{field}: provider {provider!r} needs {package}: pip install {package}"
            ) from e
        return _construct(factory, kwargs, field)
    if ":" in provider:
        module, _, attr = provider.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as e:
            raise InvalidInputError(f"{field}.provider", f"cannot import {provider!r}: {e}") from e
        return _construct(factory, kwargs, field)
    known = ", ".join([*_PROVIDERS, "rv-replay", "scripted"])
    raise InvalidInputError(
        f"{field}.provider", f"unknown provider {provider!r}; use one of {known} or module:attr"
    )


def _construct(factory: Any, kwargs: dict[str, Any], field: str) -> Any:
    try:
        return factory(**kwargs)
    except (TypeError, ValidationError) as e:
        raise InvalidInputError(f"{field}.kwargs", str(e).splitlines()[0]) from e
    except Exception as e:  # the client's own refusal (no API key in the environment): name it
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ConfigurationError(f"{field}: the model could not be built: {first}") from e


def build_store(spec: StoreSpec | None, *, base_dir: Path | None = None) -> Any:
    """The :class:`~truthguard.store.ArtifactStore` a spec describes (None for none)."""
    if spec is None:
        return None
    from truthguard.store import ArtifactStore

    headers = {k: _env(v) for k, v in (spec.headers or {}).items()} or None
    if spec.url is not None:
        return ArtifactStore(
            url=spec.url,
            headers=headers,
            tenant=spec.tenant,
            database=spec.database,
            namespace=spec.namespace,
            lease_seconds=spec.lease_seconds,
        )
    path = Path(spec.path) if spec.path else None
    if path is not None and not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return ArtifactStore(path, namespace=spec.namespace, lease_seconds=spec.lease_seconds)


def _env(value: str) -> str:
    # "${NAME}" keeps secrets out of config files.
    if value.startswith("${") and value.endswith("}"):
        name = value[2:-1]
        if name not in os.environ:
            raise ConfigurationError(f"store.headers: environment variable {name} is not set")
        return os.environ[name]
    return value


def build_detectors(
    config: EvaluateConfig, *, store: Any = None, rate_share: int = 1
) -> dict[str, Any]:
    """Every detector of ``config``, by name, sharing ``store``."""
    return {
        name: _build_detector(name, spec, config, store, rate_share)
        for name, spec in config.detectors.items()
    }


def _cascade_stages(
    field: str, local: Any, escalate: Any, model: Any, store: Any
) -> tuple[Any, Any]:
    """The local and the LLM RefChecker of a ``cascade`` detector, from their options."""
    from truthguard.refchecker import LLMChecker, LLMExtractor, RefChecker

    stages = []
    for key, given in (("local", local), ("escalate", escalate)):
        if given is not None and not isinstance(given, dict):
            raise InvalidInputError(f"{field}.options.{key}", "must be a table of options")
        opts = dict(given or {})
        if key == "escalate":
            opts.setdefault("extractor", LLMExtractor(model=model))
            opts.setdefault("checker", LLMChecker(model=model))
            if store is not None:
                opts.setdefault("store", store)
        try:
            stages.append(RefChecker(**opts))
        except InvalidInputError as e:
            msg = str(e).split(": ", 1)[-1]
            raise InvalidInputError(f"{field}.options.{key}.{e.field}", msg) from e
    return stages[0], stages[1]


def _cascade_stage_list(field: str, given: Any, model: Any, store: Any) -> list[Any]:
    """``options.stages`` of a ``cascade`` detector: a list of tables, each ``name``, ``band``,
    ``escalate_on``, ``llm`` (the stage checks with the detector's model; default: the last
    stage only) and ``options`` (its RefChecker's, ``checker: minicheck-flan-t5-large`` say)."""
    from truthguard.cascade import CascadeStage
    from truthguard.refchecker import LLMChecker, LLMExtractor, RefChecker

    if not isinstance(given, list) or not all(isinstance(t, dict) for t in given):
        raise InvalidInputError(f"{field}.options.stages", "must be a list of stage tables")
    out = []
    for i, table in enumerate(given):
        at = f"{field}.options.stages[{i}]"
        unknown = set(table) - {"name", "band", "escalate_on", "llm", "options"}
        if unknown:
            raise InvalidInputError(at, f"unknown keys {sorted(unknown)}")
        opts = dict(table.get("options") or {})
        if table.get("llm", i == len(given) - 1):
            opts.setdefault("extractor", LLMExtractor(model=model))
            opts.setdefault("checker", LLMChecker(model=model))
            if store is not None:
                opts.setdefault("store", store)
        try:
            detector = RefChecker(**opts)
            stage = {k: table[k] for k in ("name", "band", "escalate_on") if k in table}
            out.append(CascadeStage(detector=detector, **stage))
        except InvalidInputError as e:
            msg = str(e).split(": ", 1)[-1]
            raise InvalidInputError(f"{at}.options.{e.field}", msg) from e
        except ValidationError as e:
            raise InvalidInputError(at, e.errors()[0]["msg"]) from e
    return out


def _build_detector(
    name: str, spec: DetectorSpec, config: EvaluateConfig, store: Any, rate_share: int
) -> Any:
    field = f"detectors.{name}"
    options = dict(spec.options)
    options.setdefault("batch_concurrency", config.concurrency)
    if spec.threshold is not None:
        options["threshold"] = spec.threshold
    model = (
        build_model(spec.model, rate_share=rate_share, field=f"{field}.model")
        if spec.model is not None
        else None
    )
    if spec.type == "refchecker":
        from truthguard.refchecker import LLMChecker, LLMExtractor, RefChecker

        cls: Any = RefChecker
        if model is not None:
            options.setdefault("extractor", LLMExtractor(model=model))
            options.setdefault("checker", LLMChecker(model=model))
        if store is not None:
            options.setdefault("store", store)
    elif spec.type == "cascade":
        from truthguard.cascade import CascadeChecker

        cls = CascadeChecker
        if model is None:
            raise InvalidInputError(f"{field}.model", "cascade needs the model of its LLM stage")
        if "stages" in options:
            options["stages"] = _cascade_stage_list(field, options.pop("stages"), model, store)
        else:
            options["local"], options["escalate_to"] = _cascade_stages(
                field, options.pop("local", None), options.pop("escalate", None), model, store
            )
    elif spec.type == "reverse_validation":
        from truthguard.rv import ReverseValidation

        cls = ReverseValidation
        if model is None:
            raise InvalidInputError(f"{field}.model", "reverse_validation needs a model")
        options["model"] = model
        if store is not None:
            options.setdefault("store", store)
    elif spec.type == "fewl":
        from truthguard.fewl import FEWL

        cls = FEWL
        if not spec.reference_models:
            raise InvalidInputError(f"{field}.reference_models", "fewl needs reference models")
        options["reference_models"] = [
            build_model(m, rate_share=rate_share, field=f"{field}.reference_models[{i}]")
            for i, m in enumerate(spec.reference_models)
        ]
        if model is not None:
            options.setdefault("generator", model)
        if store is not None:
            options.setdefault("store", store)
    else:
        from truthguard.testing import FakeDetector

        cls = FakeDetector
        if model is not None:
            options.setdefault("model", model)
    try:
        return cls(**options)
    except InvalidInputError as e:
        raise InvalidInputError(f"{field}.options.{e.field}", str(e).split(": ", 1)[-1]) from e
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err.get("loc", ()))
        msg = "is not an accepted option" if err.get("type") == "extra_forbidden" else err["msg"]
        raise InvalidInputError(f"{field}.options.{loc}", msg) from e
