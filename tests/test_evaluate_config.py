"""The evaluation config: files, validation, building detectors from configuration."""

from __future__ import annotations

import json

import pytest

from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.evaluation.config import (
    EvaluateConfig,
    ModelSpec,
    StoreSpec,
    build_detectors,
    build_model,
    build_store,
    load_config,
    save_config,
)
from truthguard.rv import ReverseValidation
from truthguard.testing import FakeDetector, ScriptedChatModel

YAML = """
detectors:
  rv:
    type: reverse_validation
    model: {provider: scripted, kwargs: {model_name: m, default: "x"}}
    options: {variant: qg}
    threshold: 0.5
  fake:
    type: fake
    options: {score: 0.7}
columns: {question: prompt, answer: response}
concurrency: 3
"""

TOML = """
concurrency = 3

[columns]
question = "prompt"
answer = "response"

[detectors.rv]
type = "reverse_validation"
options = {variant = "qg"}
threshold = 0.5
model = {provider = "scripted", kwargs = {model_name = "m", default = "x"}}

[detectors.fake]
type = "fake"
options = {score = 0.7}
"""


def test_yaml_toml_and_json_give_the_same_config(tmp_path):
    (tmp_path / "c.yaml").write_text(YAML)
    (tmp_path / "c.toml").write_text(TOML)
    a = load_config(tmp_path / "c.yaml")
    b = load_config(tmp_path / "c.toml")
    (tmp_path / "c.json").write_text(json.dumps(a.model_dump(mode="json")))
    c = load_config(tmp_path / "c.json")
    assert a == b == c
    assert a.columns.question == "prompt" and a.detectors["rv"].threshold == 0.5


@pytest.mark.parametrize("suffix", [".yaml", ".toml", ".json"])
def test_save_then_load_round_trips(tmp_path, suffix):
    (tmp_path / "c.yaml").write_text(YAML)
    cfg = load_config(tmp_path / "c.yaml")
    cfg.detectors["fake"].calibration = {"target": "precision", "value": 0.9, "recall": None}
    cfg.store = StoreSpec(url="http://127.0.0.1:8000", headers={"X-Token": "${TOKEN}"})
    out = save_config(cfg, tmp_path / f"saved{suffix}")
    again = load_config(out)
    if suffix == ".toml":  # TOML has no null: a None inside a table is simply absent
        again.detectors["fake"].calibration["recall"] = None
    assert again == cfg


def test_unknown_fields_and_bad_values_name_the_field(tmp_path):
    with pytest.raises(InvalidInputError, match=r"detectors\.x\.typo"):
        load_config({"detectors": {"x": {"type": "fake", "typo": 1}}})
    with pytest.raises(InvalidInputError, match=r"detectors\.x\.type"):
        load_config({"detectors": {"x": {"type": "nope"}}})
    with pytest.raises(InvalidInputError, match=r"detectors\.x\.threshold"):
        load_config({"detectors": {"x": {"type": "fake", "threshold": float("nan")}}})
    with pytest.raises(InvalidInputError, match="detectors"):
        load_config({"detectors": {}})
    (tmp_path / "bad.yaml").write_text("detectors: [1, 2")
    with pytest.raises(InvalidInputError, match="config"):
        load_config(tmp_path / "bad.yaml")
    with pytest.raises(InvalidInputError, match="config"):
        load_config(tmp_path / "missing.yaml")


def test_build_detectors_from_configuration():
    cfg = load_config(
        {
            "detectors": {
                "rv": {
                    "type": "reverse_validation",
                    "model": {"provider": "scripted", "kwargs": {"model_name": "m"}},
                    "threshold": 0.5,
                },
                "fake": {"type": "fake", "options": {"score": 0.2}, "threshold": 0.4},
            },
            "concurrency": 3,
        }
    )
    dets = build_detectors(cfg)
    assert isinstance(dets["rv"], ReverseValidation)
    assert isinstance(dets["rv"].model, ScriptedChatModel)
    assert dets["rv"].batch_concurrency == 3
    assert isinstance(dets["fake"], FakeDetector) and dets["fake"].threshold == 0.4
    assert dets["fake"].check("Q?", "a").passing is False


def test_bad_detector_options_and_models_name_the_field():
    cfg = load_config({"detectors": {"f": {"type": "fake", "options": {"nope": 1}}}})
    with pytest.raises(InvalidInputError, match=r"detectors\.f\.options\.nope"):
        build_detectors(cfg)
    cfg = load_config({"detectors": {"rv": {"type": "reverse_validation"}}})
    with pytest.raises(InvalidInputError, match=r"detectors\.rv\.model"):
        build_detectors(cfg)
    with pytest.raises(InvalidInputError, match="provider"):
        build_model(ModelSpec(provider="no-such-provider"))
    with pytest.raises(InvalidInputError, match="kwargs"):
        build_model(ModelSpec(provider="scripted", kwargs={"latency": "slow"}))
    with pytest.raises(InvalidInputError, match="provider"):
        build_model(ModelSpec(provider="no_such_module_x:factory"))


def test_openai_model_is_built_from_provider_name_and_rate_is_split(monkeypatch):
    pytest.importorskip("langchain_openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    spec = ModelSpec(
        provider="openai",
        kwargs={"model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1"},
        requests_per_second=4.0,
    )
    model = build_model(spec, rate_share=4)
    assert model.model_name == "gpt-4o-mini"
    assert model.rate_limiter.requests_per_second == pytest.approx(1.0)


def test_store_headers_read_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("TG_TOKEN", raising=False)
    spec = StoreSpec(url="http://127.0.0.1:1", headers={"Authorization": "${TG_TOKEN}"})
    with pytest.raises(ConfigurationError, match="TG_TOKEN"):
        build_store(spec)
    store = build_store(StoreSpec(path="rel"), base_dir=tmp_path)
    assert store.path == tmp_path / "rel"
    assert build_store(None) is None


def test_config_object_passes_through():
    cfg = EvaluateConfig(detectors={"f": {"type": "fake"}})
    assert load_config(cfg) is cfg


def test_the_docs_fewl_config_runs_against_an_openai_compatible_server(tmp_path, embedder):
    """The docs' fewl.yaml, as written, scores rows through `truthguard evaluate` with the
    reference model reached over HTTP (OPENAI_BASE_URL pointing at OpenAIServer)."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    from truthguard.testing import OpenAIServer

    page = (Path(__file__).parents[1] / "docs" / "evaluate.md").read_text()
    yaml_text = re.search(r"cat > fewl\.yaml <<'EOF'\n(.*?)\nEOF\n", page, re.S).group(1)
    (tmp_path / "fewl.yaml").write_text(yaml_text + "\n")
    rows = [
        {"question": "What colour is the sky?", "answer": "The sky is blue.", "label": False},
        {"question": "What colour is grass?", "answer": "Grass is purple.", "label": True},
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def reply(messages: list[dict]) -> str:
        asked = re.search(r"Write (\d+) different answers", str(messages[-1]["content"]))
        if asked:  # the IW/CO pairs FEWL asks for
            n = int(asked.group(1))
            return "\n".join(
                f"{i}. Wrong: The thing is made of cheese {i}.\n"
                f"{i}. Corrected: The thing is made of rock {i}."
                for i in range(1, n + 1)
            )
        return "The sky is blue and grass is green."

    embedder.warm_up()
    with OpenAIServer(reply=reply) as server:
        env = dict(os.environ, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
        done = subprocess.run(
            [sys.executable, "-m", "truthguard.cli", "evaluate", "rows.jsonl", "-c", "fewl.yaml",
             "-o", "runs/fewl", "--no-progress"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        asked_for = {r.model for r in server.requests}
    assert done.returncode == 0, done.stderr[-2000:]
    assert asked_for == {"gpt-4o-mini"}
    results = [json.loads(line) for line in (tmp_path / "runs/fewl/results.jsonl").open()]
    assert [r["detector"] for r in results] == ["fewl", "fewl"]
    assert all(r["label"] != "invalid" and r["score"] is not None for r in results)
    assert (tmp_path / "runs/fewl-store").is_dir()  # the store path the config names
