"""Reading input rows (JSONL, CSV, Parquet) and writing result rows (JSONL, Parquet).

Results are appended to ``results.jsonl`` one batch at a time and synced to disk, so a run that
is killed loses at most the batch in flight, and a rerun skips every (row, detector) already
written. ``results.parquet`` is rewritten from the JSONL at the end of a run.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from truthguard.errors import InvalidInputError
from truthguard.evaluation.config import ColumnMap

__all__ = [
    "ResultWriter",
    "gold_label",
    "read_results",
    "read_rows",
    "write_parquet",
]

_HALLUCINATED = {"hallucinated", "non-factual", "nonfactual", "halu", "1", "true", "yes"}
_FACTUAL = {"factual", "non-halu", "0", "false", "no", "correct"}


def gold_label(value: Any, *, field: str = "label") -> str | None:
    """Normalise a gold label to ``hallucinated`` / ``factual`` (None when missing).

    Accepted: those two words (and ``non-factual``), booleans and 1 / 0 meaning *hallucinated*.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    if isinstance(value, bool):
        return "hallucinated" if value else "factual"
    text = str(int(value) if isinstance(value, float) and value.is_integer() else value)
    text = text.strip().lower()
    if text in _HALLUCINATED:
        return "hallucinated"
    if text in _FACTUAL:
        return "factual"
    raise InvalidInputError(
        field, f"unknown label {value!r}: use hallucinated / factual, true / false or 1 / 0"
    )


def _contexts(value: Any, field: str) -> list[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return []
    if hasattr(value, "tolist"):  # numpy / pyarrow arrays from Parquet
        value = value.tolist()
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("["):
            try:
                value = json.loads(stripped)
            except json.JSONDecodeError as e:
                raise InvalidInputError(field, f"not a JSON list: {e}") from e
        else:
            return [value]
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise InvalidInputError(field, "expected a list of strings")
    return value


def _iter_raw(path: Path) -> Iterator[dict[str, Any]]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        with path.open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise InvalidInputError(f"line {n}", f"not JSON: {e}") from e
                if not isinstance(row, dict):
                    raise InvalidInputError(f"line {n}", "expected a JSON object")
                yield row
    elif suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise InvalidInputError("data", f"{path} must hold a list of objects")
        yield from data
    elif suffix in (".csv", ".tsv"):
        with path.open(encoding="utf-8", newline="") as f:
            yield from csv.DictReader(f, delimiter="\t" if suffix == ".tsv" else ",")
    elif suffix in (".parquet", ".pq"):
        try:
            import pyarrow.parquet as pq
        except ImportError as e:
            raise InvalidInputError(
                "data", "reading Parquet needs pyarrow: pip install 'truthguard[evaluate]'"
            ) from e
        yield from pq.read_table(path).to_pylist()
    else:
        raise InvalidInputError(
            "data", f"unknown format {suffix!r}: use .jsonl, .json, .csv, .tsv or .parquet"
        )


def read_rows(path: str | Path, columns: ColumnMap | None = None) -> list[dict[str, Any]]:
    """The rows of a data file, with canonical keys.

    Each row has ``index`` (position in the file), ``id`` (the id column, or a hash of question,
    answer and contexts, made unique among duplicates), ``question``, ``answer``, ``contexts``,
    ``gold`` (normalised label or None) and ``fields`` (every other column, passed to detectors
    that accept it, such as ``entity`` or ``references``).
    """
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError("data", f"no data file at {path}")
    cols = columns or ColumnMap()
    mapped = {cols.question, cols.answer, cols.contexts, cols.label, cols.id}
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(_iter_raw(path)):
        where = f"row {index}"
        question, answer = raw.get(cols.question), raw.get(cols.answer)
        if not isinstance(question, str) or not question.strip():
            raise InvalidInputError(f"{where}.{cols.question}", "missing or blank question")
        if not isinstance(answer, str):
            raise InvalidInputError(f"{where}.{cols.answer}", "missing answer")
        contexts = _contexts(raw.get(cols.contexts), f"{where}.{cols.contexts}")
        gold = gold_label(raw.get(cols.label), field=f"{where}.{cols.label}")
        rid = raw.get(cols.id)
        if rid is None or rid == "":
            digest = hashlib.sha1(
                json.dumps([question, answer, contexts], ensure_ascii=False).encode("utf-8")
            ).hexdigest()[:16]
            n = seen.get(digest, 0)
            seen[digest] = n + 1
            rid = digest if n == 0 else f"{digest}#{n}"
        fields = {k: v for k, v in raw.items() if k not in mapped}
        rows.append(
            {
                "index": index,
                "id": str(rid),
                "question": question,
                "answer": answer,
                "contexts": contexts,
                "gold": gold,
                "fields": fields,
            }
        )
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InvalidInputError(cols.id, f"row ids must be unique; {dup!r} repeats")
    return rows


class ResultWriter:
    """Appends result rows to a JSONL file, synced per batch; knows what is already done."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._repair()
        self.done: set[tuple[str, str]] = {
            (r["id"], r["detector"]) for r in read_results(self.path)
        }

    def _repair(self) -> None:
        # A kill mid-write leaves a partial last line: cut it so appends start clean.
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with self.path.open("r+b") as f:
                f.truncate(cut)

    def write(self, results: Iterable[dict[str, Any]]) -> int:
        lines = [json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in results]
        if not lines:
            return 0
        with self.path.open("a", encoding="utf-8") as f:
            f.write("".join(lines))
            f.flush()
            os.fsync(f.fileno())
        for line in lines:
            r = json.loads(line)
            self.done.add((r["id"], r["detector"]))
        return len(lines)


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Result rows of a ``results.jsonl`` (or of the run directory holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.jsonl"
    if not path.exists():
        return []
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break  # partial last line of a killed run
            if line.strip():
                out.append(json.loads(line))
    return out


def write_parquet(results: list[dict[str, Any]], path: str | Path) -> Path | None:
    """Write results to Parquet (nested ``details`` as JSON text); None without pyarrow."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return None
    flat = []
    for r in sorted(results, key=lambda r: (r["index"], r["detector"])):
        row = {k: v for k, v in r.items() if k not in ("details", "usage", "fields", "contexts")}
        row["contexts"] = list(r.get("contexts") or [])
        row["details"] = json.dumps(r.get("details") or {}, ensure_ascii=False, default=str)
        row["fields"] = json.dumps(r.get("fields") or {}, ensure_ascii=False, default=str)
        for k, v in (r.get("usage") or {}).items():
            row[f"usage_{k}"] = v
        flat.append(row)
    # from_pylist takes its columns from the first row: give every row every column.
    keys = list(dict.fromkeys(k for row in flat for k in row))
    flat = [{k: row.get(k) for k in keys} for row in flat]
    schema = None if flat else pa.schema([("id", pa.string())])
    path = Path(path)
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(pa.Table.from_pylist(flat, schema=schema), tmp)
    os.replace(tmp, path)
    return path
