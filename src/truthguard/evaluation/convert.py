"""``truthguard convert``: the CHALE and PHD development data as rows for ``truthguard evaluate``.

* ``chale``: one row per (question, answer kind): the ``non-halu`` answer (label ``factual``) and
  the ``mid-halu`` and ``halu`` answers (label ``hallucinated``), HTML markers removed, with the
  question's long answer as the single context. ``group`` is the question's index, so the three
  answers of a question can be compared (``truthguard export-sft``).
* ``phd``: one row per passage, label from the human annotation (``non-factual`` is
  ``hallucinated``), the ``entity`` column that Reverse Validation reads, and ``domain``. PHD has
  no questions: each row's question is "Tell me about <entity>.", the request the passages were
  written for.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from truthguard.errors import InvalidInputError

__all__ = ["convert_dataset", "dataset_rows"]

Dataset = Literal["chale", "phd"]
CHALE_KINDS = ("non_halu", "mid_halu", "halu")


def dataset_rows(name: Dataset, data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The rows of a dataset, in upstream order."""
    if name == "chale":
        from truthguard.datasets import load_chale
        from truthguard.datasets._loaders import strip_html

        rows = []
        for item in load_chale(data_dir):
            for kind in CHALE_KINDS:
                rows.append(
                    {
                        "id": f"chale-{item.index}-{kind}",
                        "question": item.question,
                        "answer": strip_html(getattr(item, kind)),
                        "contexts": [item.long_answer],
                        "label": "factual" if kind == "non_halu" else "hallucinated",
                        "kind": kind,
                        "group": item.index,
                    }
                )
        return rows
    if name == "phd":
        from truthguard.datasets import load_phd

        return [
            {
                "id": f"phd-{i}",
                "question": f"Tell me about {p.entity}.",
                "answer": p.passage,
                "label": "hallucinated" if p.is_hallucinated else "factual",
                "entity": p.entity,
                "domain": p.domain,
            }
            for i, p in enumerate(load_phd(data_dir))
        ]
    raise InvalidInputError("dataset", f"expected 'chale' or 'phd', got {name!r}")


def convert_dataset(
    name: Dataset,
    out: str | Path,
    *,
    data_dir: str | Path | None = None,
    limit: int | None = None,
) -> int:
    """Write a dataset as JSONL rows to ``out``; returns the number of rows.

    ``limit`` keeps the first rows (for CHALE, whole questions: ``limit`` questions).
    """
    rows = dataset_rows(name, data_dir)
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputError("limit", "must be a positive integer")
        per = len(CHALE_KINDS) if name == "chale" else 1
        rows = rows[: limit * per]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    return len(rows)
