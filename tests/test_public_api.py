"""Lock the public exports: a change here is a change of the public API."""

from __future__ import annotations

import truthguard
import truthguard.datasets
import truthguard.testing


def test_top_level_exports():
    assert sorted(truthguard.__all__) == sorted(
        [
            "FEWL",
            "ArtifactStore",
            "AsyncTruthGuardCallbackHandler",
            "FEWLExampleSelector",
            "HallucinationGuard",
            "RefChecker",
            "ReverseValidation",
            "TruthGuardCallbackHandler",
            "BaseDetector",
            "CascadeChecker",
            "ConfigurationError",
            "DatasetNotFoundError",
            "DetectionResult",
            "DetectorInput",
            "GuardRejected",
            "InvalidInputError",
            "InvalidLLMOutput",
            "LLMCallError",
            "LLMSession",
            "LLMSettings",
            "Label",
            "MissingRecordingError",
            "TruthGuardError",
            "Usage",
            "__version__",
            "evaluate",
        ]
    )
    for name in truthguard.__all__:
        assert hasattr(truthguard, name), name


def test_cascade_exports():
    import truthguard.cascade

    assert truthguard.CascadeChecker is truthguard.cascade.CascadeChecker
    assert sorted(truthguard.cascade.__all__) == [
        "CascadeChecker",
        "CascadeStage",
        "DEFAULT_BAND",
        "OPTIONAL_SIGNALS",
        "SIGNALS",
        "Signal",
        "escalation_reasons",
    ]


def test_evaluation_exports():
    import truthguard.evaluation

    assert callable(truthguard.evaluate)
    assert truthguard.evaluate is truthguard.evaluation.evaluate
    assert sorted(truthguard.evaluation.__all__) == sorted(
        [
            "ColumnMap",
            "DetectorSpec",
            "EvaluateConfig",
            "ModelSpec",
            "RaySpec",
            "StoreSpec",
            "auroc",
            "build_detectors",
            "build_model",
            "build_store",
            "calibrate",
            "choose_threshold",
            "convert_dataset",
            "evaluate",
            "export_sft",
            "load_config",
            "read_results",
            "read_rows",
            "render_report",
            "save_config",
            "summarize",
            "sweep",
        ]
    )


def test_testing_exports():
    assert sorted(truthguard.testing.__all__) == [
        "FakeDetector",
        "Fault",
        "NotGrounded",
        "OpenAIServer",
        "ReplayChatModel",
        "ScriptedChatModel",
        "ServerRequest",
        "ServerUsage",
        "ToolCall",
        "assert_grounded",
        "prompt_of",
    ]


def test_every_error_derives_from_the_root():
    for name in truthguard.__all__:
        obj = getattr(truthguard, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, truthguard.TruthGuardError), name


def test_lazy_exports_are_the_real_classes():
    from truthguard.fewl import FEWL
    from truthguard.guard import HallucinationGuard
    from truthguard.refchecker import RefChecker
    from truthguard.rv import ReverseValidation

    assert truthguard.FEWL is FEWL
    assert truthguard.ReverseValidation is ReverseValidation
    assert truthguard.RefChecker is RefChecker
    assert truthguard.HallucinationGuard is HallucinationGuard
    for name in ("FEWL", "ReverseValidation", "RefChecker"):
        assert issubclass(getattr(truthguard, name), truthguard.BaseDetector)


def test_llm_exports_keep_their_public_module():
    import pickle

    import truthguard.llm

    assert sorted(truthguard.llm.__all__) == [
        "LLMSession",
        "LLMSettings",
        "ModelLike",
        "as_runnable",
        "count_tokens",
        "message_text",
        "model_id",
        "streams_like_invoke",
    ]
    # Pickles (detectors shipped to workers) name a class by its module: the public one.
    for cls in (truthguard.llm.LLMSession, truthguard.llm.LLMSettings):
        assert cls.__module__ == "truthguard.llm", cls
    settings = truthguard.llm.LLMSettings(max_concurrency=3)
    assert pickle.loads(pickle.dumps(settings)) == settings


def test_the_all_extra_holds_every_feature_extra_and_the_readme_names_each():
    import re
    import tomllib
    from pathlib import Path

    root = Path(__file__).parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    (spec,) = extras["all"]
    named = set(re.fullmatch(r"truthguard\[(.*)\]", spec).group(1).split(","))
    # a cluster runtime, an opt-in encoder, the open checkers' packages: asked for by name
    opt_in = {"ray", "openvino", "open-checkers"}
    assert named == set(extras) - {"all", "dev"} - opt_in
    assert {"agents", "otel"} <= named
    install = (root / "docs" / "index.md").read_text()
    for extra in set(extras) - {"all", "dev"}:
        assert f"| `{extra}` |" in install, extra
    agents = (root / "docs" / "agents.md").read_text()
    langgraph = agents.split("## LangGraph: a check node and a router", 1)[1][:400]
    assert "truthguard[agents]" in langgraph
