"""Benchmarks run by ``truthguard bench NAME``.

Each benchmark is a module here exposing:

* ``HELP``: one line for ``truthguard bench --help``;
* ``add_arguments(parser)``: its flags (``--json`` and ``--data`` are added for it);
* ``run(args) -> dict``: the measurement, as one JSON-serialisable object;
* ``format_table(result) -> str``: the human-readable table.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

__all__ = ["BENCHMARKS", "load_benchmark"]

BENCHMARKS: dict[str, str] = {
    "fewl": "truthguard.bench.fewl",
    "rv": "truthguard.bench.rv",
    "refchecker": "truthguard.bench.refchecker",
    "guard": "truthguard.bench.guard",
    "llamaindex": "truthguard.bench.llamaindex",
    "speed": "truthguard.bench.speed",
    "fuzz": "truthguard.bench.fuzz",
    "grounding": "truthguard.bench.grounding",
    "halueval": "truthguard.bench.halueval",
    "rag-answers": "truthguard.bench.rag_answers",
    "cascade": "truthguard.bench.cascade",
}


def available() -> dict[str, ModuleType | Exception]:
    """The benchmark modules of this installation (or the error that stopped one importing)."""
    out: dict[str, ModuleType | Exception] = {}
    for name, module in BENCHMARKS.items():
        if importlib.util.find_spec(module) is None:
            continue
        try:
            out[name] = importlib.import_module(module)
        except Exception as e:  # one broken benchmark must not take the others down
            out[name] = e
    return out


def load_benchmark(name: str) -> ModuleType:
    return importlib.import_module(BENCHMARKS[name])
