"""``truthguard report LOG.jsonl``: a handler's log read back as a review page."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from truthguard.cli import main
from truthguard.errors import InvalidInputError
from truthguard.evaluation.review import is_record_log, render_review


def _chromium_dom(page, tmp_path) -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (make install puts it there)")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    flags += ["--disable-background-networking", "--disable-component-update"]
    flags.append(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    done = subprocess.run(
        [exe, *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_report_of_a_guarded_runs_log_highlights_the_failing_span(
    chroma_server, tmp_path, capsys
):
    from guarded_chain import WRONG, guarded_chain, mars_reply, run_logged
    from truthguard.guard import Fallback, Regenerate
    from truthguard.testing import OpenAIServer

    log = tmp_path / "scores.jsonl"
    with OpenAIServer(reply=mars_reply) as server:
        guard = guarded_chain(
            server, chroma_server, policies=[Regenerate(), Fallback(answer="I don't know.")]
        )
        run_logged(guard, log)
        run_logged(guard, log)
    assert is_record_log(log)
    assert main(["report", str(log)]) in (0, None)
    page = tmp_path / "scores.html"
    assert capsys.readouterr().out.strip() == str(page)
    text = page.read_text()
    assert "<script" not in text

    dom = _chromium_dom(page, tmp_path)
    # both runs' first answers were wrong, and only they were rejected
    assert re.search(r'id="first-wrong">2 \(100\.0%\)<', dom)
    blocks = re.findall(r'<div class="rejected".*?</div></div></div>', dom, re.S)
    assert len(blocks) == 2 and all("attempt 1" in b and "regenerate" in b for b in blocks)
    # the failing span highlighted in the answer, beside the evidence saying what is there
    assert '<mark class="span">1610</mark>' in blocks[0]
    assert '<mark class="said">1877</mark>' in blocks[0]
    assert WRONG.split("1610")[0] in blocks[0]


def test_a_plain_handlers_failing_answer_is_listed_and_an_empty_log_is_refused(tmp_path):
    base = {"question": "Q?", "detector": "refchecker", "captured_at": 0.0, "contexts": []}
    records = [
        {
            **base,
            "run_id": "a",
            "status": "scored",
            "answer": "Mars has forty moons.",
            "passing": False,
            "label": "hallucinated",
            "reason": "unsupported: forty",
            "claims": [
                {
                    "detector": "refchecker",
                    "claim": "Mars has forty moons.",
                    "start": 0,
                    "end": 21,
                    "evidence": "Mars has two moons.",
                    "issues": [
                        {
                            "relation": "conflict",
                            "text": "forty",
                            "start": 9,
                            "end": 14,
                            "evidence": "two",
                            "evidence_start": 9,
                            "evidence_end": 12,
                        }
                    ],
                }
            ],
        },
        {**base, "run_id": "b", "status": "scored", "answer": "Two.", "passing": True},
        {**base, "run_id": "c", "status": "failed", "answer": "x", "error": "timeout"},
    ]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    text = render_review(log).read_text()
    assert 'id="first-wrong">1 (50.0%)<' in text  # of the two judged, one was wrong
    assert '<mark class="span">forty</mark>' in text and '<mark class="said">two</mark>' in text
    assert text.count('class="rejected"') == 1
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(InvalidInputError, match="no records"):
        render_review(tmp_path / "empty.jsonl")
