"""Reading input rows (JSONL, CSV, Parquet) and writing result rows (JSONL, Parquet).

Results are appended to ``results.jsonl`` one batch at a time and synced to disk, so a run that
is killed loses at most the batch in flight, and a rerun skips every (row, detector) already
written. ``results.parquet`` is rewritten from the JSONL at the end of a run.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from truthguard._clean import clean_text
from truthguard.errors import InvalidInputError
from truthguard.evaluation.config import ColumnMap

__all__ = [
    "ResultWriter",
    "gold_label",
    "iter_jsonl",
    "read_results",
    "read_rows",
    "unique_results",
    "write_parquet",
]

_WORDS = {
    **dict.fromkeys(("hallucinated", "non-factual", "nonfactual", "halu"), "hallucinated"),
    **dict.fromkeys(("factual", "non-halu", "correct"), "factual"),
}
_TRUE = {"1", "true", "yes"}
_FALSE = {"0", "false", "no"}


def gold_label(
    value: Any,
    *,
    field: str = "label",
    true_means: Literal["hallucinated", "factual"] = "hallucinated",
) -> str | None:
    """Normalise a gold label to ``hallucinated`` / ``factual`` (None when missing).

    Accepted: those two words (and ``non-factual``), and booleans, 1 / 0 and yes / no, where
    true means ``true_means`` (*hallucinated* by default).
    """
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    false_means = "factual" if true_means == "hallucinated" else "hallucinated"
    if isinstance(value, bool):
        return true_means if value else false_means
    text = str(int(value) if isinstance(value, float) and value.is_integer() else value)
    text = text.strip().lower()
    if text in _WORDS:
        return _WORDS[text]
    if text in _TRUE:
        return true_means
    if text in _FALSE:
        return false_means
    raise InvalidInputError(
        field,
        f"unknown label {value!r}: use hallucinated / factual, or true / false and 1 / 0 "
        f"(true means {true_means}; set columns.label_true to change that)",
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


def _not_utf8(path: Path, e: UnicodeDecodeError, where: str | None = None) -> InvalidInputError:
    bad = e.object[e.start : e.start + 1].hex()
    return InvalidInputError(
        where or str(path), f"not UTF-8 text (byte 0x{bad} at offset {e.start})"
    )


def _object(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise InvalidInputError(where, f"expected a JSON object, got {type(raw).__name__}")
    return raw


def iter_jsonl(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The objects of a JSON Lines file as ``(where, row)``, ``where`` naming the file and the
    line (``"rows.jsonl line 3"``, counting from 1) for errors about the row; blank lines are
    skipped, and a line that is not UTF-8, not JSON or not an object raises
    :class:`~truthguard.errors.InvalidInputError` naming it."""
    path = Path(path)
    with path.open("rb") as f:
        for n, data in enumerate(f, 1):
            where = f"{path.name} line {n}"
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError as e:
                raise _not_utf8(path, e, where) from e
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise InvalidInputError(where, f"not JSON: {e}") from e
            yield where, _object(row, where)


def _iter_raw(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The rows of ``path`` as ``(where, row)``, ``where`` naming the file and the row.

    ``line N`` for JSONL and CSV (the file's own line numbers), ``row N`` for JSON and Parquet;
    both count from 1.
    """
    name = path.name
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        yield from iter_jsonl(path)
    elif suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as e:
            raise _not_utf8(path, e) from e
        except json.JSONDecodeError as e:
            raise InvalidInputError("data", f"{path} is not JSON: {e}") from e
        if not isinstance(data, list):
            raise InvalidInputError("data", f"{path} must hold a list of objects")
        for n, row in enumerate(data, 1):
            yield f"{name} row {n}", _object(row, f"{name} row {n}")
    elif suffix in (".csv", ".tsv"):
        raw = path.read_bytes()
        try:  # decoded whole: a decoder reading ahead in blocks cannot say which line failed
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw.count(b"\n", 0, e.start) + 1
            raise _not_utf8(path, e, f"{name} line {line}") from e
        reader = csv.DictReader(
            io.StringIO(text, newline=""), delimiter="\t" if suffix == ".tsv" else ","
        )
        for row in reader:
            yield f"{name} line {reader.line_num}", row
    elif suffix in (".parquet", ".pq"):
        try:
            import pyarrow.parquet as pq
        except ImportError as e:
            raise InvalidInputError(
                "data", "reading Parquet needs pyarrow: pip install 'truthguard[evaluate]'"
            ) from e
        for n, row in enumerate(pq.read_table(path).to_pylist(), 1):
            yield f"{name} row {n}", row
    else:
        raise InvalidInputError(
            "data", f"unknown format {suffix!r}: use .jsonl, .json, .csv, .tsv or .parquet"
        )


def _cleaned(value: Any) -> Any:
    """``value`` with every string in it cleaned (lone surrogates cannot be written as UTF-8)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_cleaned(v) for v in value]
    if isinstance(value, dict):
        return {_cleaned(k): _cleaned(v) for k, v in value.items()}
    return value


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
    for index, (where, raw) in enumerate(_iter_raw(path)):
        raw = _cleaned(raw)  # as the Python API does where text enters
        question, answer = raw.get(cols.question), raw.get(cols.answer)
        for field, value in ((cols.question, question), (cols.answer, answer)):
            if value is None:
                raise InvalidInputError(f"{where}.{field}", f"missing {field}")
            if not isinstance(value, str):
                raise InvalidInputError(
                    f"{where}.{field}", f"expected a string, got {type(value).__name__}"
                )
        if not question.strip():
            raise InvalidInputError(f"{where}.{cols.question}", "blank question")
        contexts = _contexts(raw.get(cols.contexts), f"{where}.{cols.contexts}")
        gold = gold_label(
            raw.get(cols.label), field=f"{where}.{cols.label}", true_means=cols.label_true
        )
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


def unique_results(results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One result per (row id, detector), the last written, in first-seen order: a file two
    runs appended to (before ``evaluate`` locked its ``--out``) never counts a row twice."""
    last: dict[tuple[Any, Any], dict[str, Any]] = {}
    for r in results:
        last[(r["id"], r["detector"])] = r
    return list(last.values())


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Result rows of a ``results.jsonl`` (or of the run directory holding one), one per
    (row id, detector) (:func:`unique_results`)."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.jsonl"
    if not path.exists():
        return []
    out = []
    with path.open("rb") as f:
        for n, data in enumerate(f, 1):
            if not data.endswith(b"\n"):
                break  # partial last line of a killed run
            if not data.strip():
                continue
            try:
                row = json.loads(data.decode("utf-8"))
                if not isinstance(row, dict) or not {"id", "detector"} <= row.keys():
                    raise ValueError("not a result row")
            except ValueError as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
                raise InvalidInputError(
                    f"{path} line {n}",
                    f"corrupt result row ({_short_error(e)}); delete that line to keep the "
                    "others, or rerun evaluate with --restart",
                ) from e
            out.append(row)
    return unique_results(out)


def _short_error(e: Exception) -> str:
    text = str(e)
    return text if len(text) <= 120 else text[:117] + "..."


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
