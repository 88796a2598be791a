"""``truthguard demo``: the offline demo on a small slice, and the live path on a scripted model."""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from truthguard import demo
from truthguard.cli import main
from truthguard.testing import ScriptedChatModel


def test_offline_demo_on_a_slice(data_dir, embedder, tmp_path, capsys):
    assert main(["demo", "--data", str(data_dir), "--limit", "6", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Mode: OFFLINE")
    assert "(mode: offline)" in out
    assert "F1 " in out and "precision" in out
    lines = (tmp_path / "truthguard_scores.jsonl").read_text().splitlines()
    assert len(lines) == 6  # the handler logged every passage the chain produced
    assert all(json.loads(line)["status"] == "scored" for line in lines)
    assert "summary: 6 records" in out
    assert "FEWL-best answer" in out and "FewShotPromptTemplate" in out


def _truthguard() -> list[str]:
    script = Path(sys.executable).with_name("truthguard")
    return [str(script)] if script.exists() else [sys.executable, "-m", "truthguard.cli"]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_demo_runs_without_data_or_network(embedder, tmp_path):
    embedder.warm_up()  # the ONNX export is made once, outside the timed subprocess
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRUTHGUARD_DATA")}
    env.update(
        HOME=str(tmp_path),
        TRUTHGUARD_HOME=str(tmp_path / "tg"),
        TRUTHGUARD_DATA_URL=f"http://127.0.0.1:{_closed_port()}",  # downloads are refused
    )
    done = subprocess.run(
        [*_truthguard(), "demo", "--out", str(tmp_path / "out")],
        cwd=tmp_path,  # no ../shared/data from here
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout
    assert out.startswith("Mode: OFFLINE")
    # the guard over the packaged corpus: one answer passes, one is regenerated, one replaced
    assert "guard: passed; attempts first:pass" in out
    assert "guard: passed; attempts first:fail -> regenerate:pass" in out
    assert "guard: fallback; attempts first:fail -> regenerate:fail -> fallback" in out
    log = (tmp_path / "out" / "truthguard_corpus_scores.jsonl").read_text().splitlines()
    assert len(log) == 6 and all(json.loads(line)["status"] == "scored" for line in log)
    # the selector keeps the right candidate where the baseline keeps the first (wrong) one
    assert "-> Iron oxide in the dust on its surface makes Mars red." in out
    assert "-> Copper in its rocks gives Mars its red colour." in out
    skipped = [line for line in out.splitlines() if line.startswith("Skipped")]
    assert len(skipped) == 1
    assert "PHD guard, RefChecker selector" in skipped[0] and "TRUTHGUARD_DATA_DIR" in skipped[0]
    assert out.rstrip().endswith("(mode: offline).")


def test_demo_with_a_missing_data_dir_skips_the_recorded_sections(embedder, tmp_path, capsys):
    missing = tmp_path / "nowhere"
    assert main(["demo", "--data", str(missing), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"no data in {missing}" in out and "Recorded:" not in out


def test_live_without_credentials_says_so(monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main(["demo", "--live"]) == 2
    assert "Mode: LIVE requested" in capsys.readouterr().out


def test_live_model_from_env_uses_base_url(monkeypatch):
    pytest.importorskip("langchain_openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:9/v1")
    monkeypatch.setenv("TRUTHGUARD_LIVE_MODEL", "local-model")
    model = demo.live_model_from_env()
    assert model is not None and model.model_name == "local-model"


def test_live_path_runs_on_any_chat_model(embedder, tmp_path, capsys):
    # The corpus says Mars has Phobos and Deimos; an answer copied from it passes.
    model = ScriptedChatModel(script=lambda p: "Mars has two small moons, Phobos and Deimos.")
    args = argparse.Namespace(limit=1, out=str(tmp_path), live=True, data=None)
    assert demo.run_live(args, model) == 0
    out = capsys.readouterr().out
    assert out.startswith("Mode: LIVE") and "(mode: live)" in out
    assert "Phobos" in out
    assert "FEWL example selector" in out and "Q: Which planet is red, and why?" in out
    assert len((tmp_path / "truthguard_live_scores.jsonl").read_text().splitlines()) == 1


def test_live_path_on_a_failing_model_reports_instead_of_crashing(embedder, tmp_path, capsys):
    pytest.importorskip("langchain_openai")
    from truthguard.testing import Fault, OpenAIServer

    with OpenAIServer(reply="Mars has two moons.", faults=[Fault("500")]) as server:
        model = server.chat_model(max_retries=0, timeout=5)
        args = argparse.Namespace(limit=1, out=str(tmp_path), live=True, data=None)
        assert demo.run_live(args, model) == 0
    out = capsys.readouterr().out
    assert "model error" in out or "fallback" in out.lower()
    assert "Demo finished (mode: live)." in out
