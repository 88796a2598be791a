"""The HTML report, rendered by headless Chromium: text from the DOM, every plot present."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from truthguard.errors import InvalidInputError
from truthguard.evaluation.calibrate import calibrate, dump
from truthguard.evaluation.io import ResultWriter
from truthguard.evaluation.report import render_report

ANSWER = "Paris is the capital of France. It has 90 million inhabitants."


def _row(i: int, score: float, gold: str, claims=None) -> dict:
    return {
        "id": f"r{i}",
        "index": i,
        "detector": "rc",
        "detector_type": "refchecker",
        "fingerprint": "x",
        "question": f"Question {i}?",
        "answer": ANSWER if claims else f"answer {i}",
        "contexts": [],
        "gold": gold,
        "score": score,
        "label": "factual" if score >= 0.5 else "hallucinated",
        "passing": None,
        "threshold": None,
        "explanation": "an explanation",
        "invalid_reason": None,
        "raw_output": None,
        "usage": {
            "llm_calls": 2,
            "cached_calls": 1,
            "failed_calls": 0,
            "prompt_tokens": 30,
            "completion_tokens": 5,
            "estimated_tokens": False,
            "llm_seconds": 0.5,
            "wall_seconds": 0.4,
        },
        "details": {"claims": claims or []},
        "fields": {},
    }


@pytest.fixture()
def run_dir(tmp_path):
    claims = [
        {"claim": "Paris is the capital of France", "label": "Entailment"},
        {
            "claim": "It has 90 million inhabitants",
            "label": "Contradiction",
            "evidence": {"text": "Paris has about 2.1 million inhabitants."},
        },
    ]
    rows = [_row(0, 0.05, "hallucinated", claims)]
    rows += [_row(i, 0.1 + i / 20, "hallucinated" if i < 6 else "factual") for i in range(1, 12)]
    ResultWriter(tmp_path / "results.jsonl").write(rows)
    dump(calibrate(tmp_path, target="f1"), tmp_path / "calibration.json")
    return tmp_path


def _chromium(*args: str, tmp_path) -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (make install puts it there)")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ]
    done = subprocess.run(
        [exe, *flags, *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_report_renders_with_every_plot(run_dir, tmp_path):
    page = render_report(run_dir, worst=3, title="My RAG log")
    assert page == run_dir / "report.html"
    text = page.read_text()
    assert "<script" not in text and "http://" not in text.replace("http://www.w3.org", "")

    shot = tmp_path / "report.png"
    _chromium("--window-size=1200,1800", f"--screenshot={shot}", page.as_uri(), tmp_path=tmp_path)
    assert shot.stat().st_size > 10_000  # a real rendering, not an empty page

    dom = _chromium("--dump-dom", page.as_uri(), tmp_path=tmp_path)
    assert "My RAG log" in dom and "Detector rc" in dom and "Worst answers" in dom
    assert "Calibrated threshold" in dom
    plots = dict(re.findall(r'<svg class="plot" data-plot="([^"]+)"(.*?)</svg>', dom, re.S))
    expected = {"hist:rc", "roc:rc", "pr:rc", "pass:all", "tokens:all", "calls:all", "seconds:all"}
    assert set(plots) == expected, f"missing plots: {expected - set(plots)}"
    for name, body in plots.items():
        assert re.search(r"<(rect|path)\b", body), f"plot {name} draws nothing"
    for kind in ("roc", "pr", "hist"):  # the threshold in use (the calibrated one) on every plot
        assert 'class="threshold-marker"' in plots[f"{kind}:rc"], kind
        assert re.search(r">threshold 0\.\d+<", plots[f"{kind}:rc"]), kind
    for kind in ("roc", "pr"):  # tick values on both axes
        ticks = re.findall(r'<text class="tick"[^>]*>([^<]+)</text>', plots[f"{kind}:rc"])
        assert ticks.count("0.00") == 2 and ticks.count("0.50") == 2 and ticks.count("1.00") == 2
    # the pass-rate bar is drawn to scale against 100%
    from truthguard.evaluation.engine import summarize
    from truthguard.evaluation.io import read_results

    rate = summarize(read_results(run_dir))["detectors"]["rc"]["pass_rate"]
    height = float(re.search(r'<rect [^>]*height="([\d.]+)"', plots["pass:all"]).group(1))
    assert abs(height / (220 - 36 - 10) - rate) < 0.01
    # correct answers the calibrated threshold flags are listed
    threshold = json.loads((run_dir / "calibration.json").read_text())["detectors"]["rc"]
    threshold = threshold["chosen"]["threshold"]
    flagged = {
        r["id"] for r in read_results(run_dir) if r["gold"] == "factual" and r["score"] < threshold
    }
    listed = set(re.findall(r'<li class="flagged-correct" data-row="([^"]+)"', dom))
    assert listed == flagged and "Correct answers that were flagged" in dom
    # the contradicted claim is highlighted in the answer, the entailed one is not
    assert '<mark class="contradicted">It has 90 million inhabitants</mark>' in dom
    assert not re.search(r"<mark[^>]*>Paris is the capital", dom)
    assert "Paris has about 2.1 million inhabitants." in dom


def test_no_labels_means_no_curves_and_empty_results_are_refused(tmp_path):
    rows = [{**_row(i, i / 4, "factual"), "gold": None} for i in range(4)]
    ResultWriter(tmp_path / "run" / "results.jsonl").write(rows)
    text = render_report(tmp_path / "run").read_text()
    assert 'data-plot="hist:rc"' in text and 'data-plot="roc:rc"' not in text
    with pytest.raises(InvalidInputError, match="results"):
        render_report(tmp_path / "empty")


def test_a_conflicting_fact_is_marked_alone_and_zero_llm_runs_draw_no_cost_charts(tmp_path):
    answer = "The tower opened in 1991. It is in Paris."
    claims = [
        {
            "claim": "The tower opened in 1991.",
            "label": "Contradiction",
            "start": 0,
            "end": 25,
            "evidence": {"text": "The tower opened in 1889."},
            "issues": [
                {
                    "kind": "number",
                    "relation": "conflict",
                    "text": "1991",
                    "evidence": {"text": "1889"},
                    "claim_start": 20,
                    "claim_end": 24,
                }
            ],
        },
        {"claim": "It is in Paris.", "label": "Entailment", "start": 26, "end": 41},
        {
            "claim": "Gustave Eiffel built it.",
            "label": "Neutral",
            "start": 42,
            "end": 66,
            "issues": [
                {
                    "kind": "name",
                    "relation": "other_value",
                    "text": "Gustave",
                    "evidence": {"text": "Stephen Sauvestre"},
                    "claim_start": 0,
                    "claim_end": 7,
                }
            ],
        },
    ]
    answer += " Gustave Eiffel built it."
    zero = {"llm_calls": 0, "cached_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    rows = [{**_row(0, 0.0, "hallucinated", claims), "answer": answer}]
    rows += [_row(i, i / 10, "factual" if i > 2 else "hallucinated") for i in range(1, 8)]
    rows = [{**r, "threshold": 0.45, "usage": {**r["usage"], **zero}} for r in rows]
    ResultWriter(tmp_path / "run" / "results.jsonl").write(rows)
    page = render_report(tmp_path / "run")
    dom = _chromium("--dump-dom", page.as_uri(), tmp_path=tmp_path)
    assert 'The tower opened in <mark class="contradicted">1991</mark>.' in dom
    assert "“1991” against “1889”" in dom
    # a value put in a slot the evidence fills with another is marked and shown the same way
    assert '<mark class="contradicted">Gustave</mark> Eiffel built it.' in dom
    assert "“Gustave” against “Stephen Sauvestre”" in dom
    plots = set(re.findall(r'<svg class="plot" data-plot="([^"]+)"', dom))
    assert "tokens:all" not in plots and "calls:all" not in plots and "pass:all" in plots
    assert "these detectors call no model" in dom
    # no calibration: the run's own threshold is the one marked, and its flagged correct answers
    assert "Threshold 0.4500 (used in the run)" in dom
    assert set(re.findall(r'<li class="flagged-correct" data-row="([^"]+)"', dom)) == {"r3", "r4"}


def test_the_report_draws_the_cascade_tradeoff_when_a_band_was_chosen(tmp_path):
    rows = [
        _row(i, 0.1 + i / 20, "hallucinated" if i in (1, 2, 3, 7) else "factual") for i in range(12)
    ]
    ResultWriter(tmp_path / "results.jsonl").write(rows)
    dump(calibrate(tmp_path, target="f1", cascade_coverage=0.6), tmp_path / "calibration.json")
    page = render_report(tmp_path).read_text()
    plots = dict(re.findall(r'<svg class="plot" data-plot="([^"]+)"(.*?)</svg>', page, re.S))
    tradeoff = plots["tradeoff:rc"]
    assert re.search(r"<path d=\"M", tradeoff) and 'class="band-marker"' in tradeoff
    assert "As a cascade's local stage, band [" in page
    assert "decided locally" in tradeoff
