"""The notebooks run as written (their code cells, in order, offline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_code_cells_run(path, embedder, tmp_path, monkeypatch):
    if path.stem == "llamaindex":
        pytest.importorskip("truthguard_llamaindex")  # its own distribution, under integrations/
    if path.stem == "agents":
        pytest.importorskip("langchain.agents")  # LangChain 1.x: the agents extra
        pytest.importorskip("opentelemetry.sdk")
    monkeypatch.chdir(tmp_path)  # notebooks may write logs next to themselves
    cells = json.loads(path.read_text())["cells"]
    namespace: dict = {"__name__": "__notebook__"}
    ran = 0
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        exec(compile(source, f"{path.name}[cell {i}]", "exec"), namespace)
        ran += 1
    assert ran >= 1, f"{path.name} has no code cell"


def test_there_is_a_notebook():
    assert {"guard.ipynb", "llamaindex.ipynb", "agents.ipynb"} <= {p.name for p in NOTEBOOKS}
