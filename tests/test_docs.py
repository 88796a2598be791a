"""Every Python block of README.md and docs/*.md runs, as written, offline.

Each page runs in a fresh interpreter (blocks set process-wide state such as OpenTelemetry's
tracer provider), in a temporary directory (blocks write ``scores.jsonl`` and the like); each
block gets a fresh namespace, so a block never leans on an earlier one. A block marked
``<!-- docs-test: needs-data -->`` reads the recorded benchmark data and is skipped, with that
reason, only where the data is not found.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

RUNNER = r"""
import json, re, sys, traceback
from pathlib import Path

page, has_data = sys.argv[1], sys.argv[2] == "1"
text = Path(page).read_text()
fence = re.compile(r"^(<!-- docs-test: ([a-z-]+) -->\n)?```python\n(.*?)^```", re.S | re.M)
report = []
for m in fence.finditer(text):
    line = text.count("\n", 0, m.start(3)) + 1
    if m.group(2) == "needs-data" and not has_data:
        report.append({"line": line, "status": "skipped"})
        continue
    try:
        exec(compile(m.group(3), f"{page}:{line}", "exec"), {"__name__": "__docs__"})
        report.append({"line": line, "status": "ok"})
    except BaseException:
        report.append({"line": line, "status": "failed", "error": traceback.format_exc()[-3000:]})
print("\n@@REPORT@@" + json.dumps(report))
"""


def _has_data() -> bool:
    data = os.environ.get("TRUTHGUARD_DATA_DIR")
    return bool(data) and Path(data, "phd").is_dir()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_python_block_of_the_page_runs(page: Path, tmp_path: Path) -> None:
    has_data = _has_data()
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(page), "1" if has_data else "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "@@REPORT@@" in proc.stdout, proc.stderr[-3000:]
    report = json.loads(proc.stdout.rsplit("@@REPORT@@", 1)[1])
    failed = [f"{page.name}:{r['line']}\n{r['error']}" for r in report if r["status"] == "failed"]
    assert not failed, "\n\n".join(failed)
    skipped = [r["line"] for r in report if r["status"] == "skipped"]
    if skipped and not any(r["status"] == "ok" for r in report):
        pytest.skip(f"blocks at lines {skipped} need the recorded data ($TRUTHGUARD_DATA_DIR)")


def test_the_runner_finds_every_block() -> None:
    """A block the fence pattern missed would pass unseen: count the fences another way."""
    import re

    fence = re.compile(r"^(<!-- docs-test: ([a-z-]+) -->\n)?```python\n(.*?)^```", re.S | re.M)
    for page in PAGES:
        text = page.read_text()
        assert len(fence.findall(text)) == text.count("```python\n"), page.name
