"""``truthguard report LOG.jsonl``: the answers a callback handler's log rejected, for review.

One self-contained HTML page (inline CSS, no script) read from the JSONL a
:class:`~truthguard.callbacks.JSONLSink` wrote: how many first answers the model got wrong (the
guard's attempt 1, or the handler's own check), then every rejected answer, each attempt of a
guarded run on its own, with the spans that failed highlighted in the answer and, beside each,
the evidence sentence the claim was held against (what the evidence says there highlighted).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from truthguard.errors import InvalidInputError

__all__ = ["is_record_log", "read_records", "render_review"]

_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#212529;max-width:1200px}
h2{border-bottom:1px solid #dee2e6;padding-bottom:.3rem;margin-top:2rem}
table{border-collapse:collapse} td,th{border:1px solid #dee2e6;padding:.25rem .5rem;text-align:left}
.rejected{border-left:4px solid #c92a2a;padding-left:.7rem;margin-bottom:1.5rem}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
.answer,.evidence{background:#f8f9fa;padding:.5rem;white-space:pre-wrap}
mark.span{background:#ff8787} mark.claim{background:#ffe3e3} mark.said{background:#b2f2bb}
.meta{font-size:.85rem;color:#495057}
"""


def _e(text: Any) -> str:
    return html.escape("" if text is None else str(text))


def is_record_log(path: str | Path) -> bool:
    """True when ``path`` is a JSONL file of callback-handler records (not evaluate results)."""
    p = Path(path)
    if not p.is_file():
        return False
    with p.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                try:
                    first = json.loads(line)
                except ValueError:
                    return False
                return isinstance(first, dict) and {"run_id", "captured_at"} <= first.keys()
    return False


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a handler's JSONL log, one dict per line (a torn last line is skipped)."""
    p = Path(path)
    records = []
    with p.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except ValueError as e:
                raise InvalidInputError("log", f"{p}, line {n}: not a JSON record") from e
    return records


def _marked(text: str, spans: list[tuple[int, int, str]]) -> str:
    out, pos = [], 0
    for start, end, cls in sorted(spans):
        if start < pos or not (0 <= start < end <= len(text)):
            continue  # overlapping or out of range: the first one wins
        out += [_e(text[pos:start]), f'<mark class="{cls}">{_e(text[start:end])}</mark>']
        pos = end
    out.append(_e(text[pos:]))
    return "".join(out)


def _claim_spans(answer: str, claim: dict[str, Any]) -> list[tuple[int, int, str]]:
    """The failing spans of a claim (``Galileo``, ``1610``), else the claim itself."""
    issues = [
        (i["start"], i["end"], "span")
        for i in claim.get("issues") or []
        if isinstance(i.get("start"), int) and isinstance(i.get("end"), int)
    ]
    if issues:
        return issues
    start, end = claim.get("start"), claim.get("end")
    if isinstance(start, int) and isinstance(end, int):
        return [(start, end, "claim")]
    at = answer.find(claim.get("claim") or "\0")
    return [(at, at + len(claim["claim"]), "claim")] if at >= 0 else []


def _evidence(claim: dict[str, Any]) -> str:
    sentence = claim.get("evidence")
    if not sentence:
        return '<div class="evidence"><i>no evidence sentence found</i></div>'
    said = [
        (i["evidence_start"], i["evidence_end"], "said")
        for i in claim.get("issues") or []
        if isinstance(i.get("evidence_start"), int) and isinstance(i.get("evidence_end"), int)
    ]
    notes = "; ".join(
        f"{_e(i.get('relation'))}: “{_e(i.get('text'))}”"
        + (f" where the evidence says “{_e(i['evidence'])}”" if i.get("evidence") else "")
        for i in claim.get("issues") or []
    )
    source = f" ({_e(claim['source'])})" if claim.get("source") else ""
    return (
        f'<div class="evidence">{_marked(sentence, said)}</div>'
        f'<p class="meta">{_e(claim.get("label"))}{source}: {notes or _e(claim.get("claim"))}</p>'
    )


def _rejected(rec: dict[str, Any], attempt: dict[str, Any] | None) -> str:
    """One rejected answer: the answer with its failing spans beside their evidence."""
    answer = (attempt or rec).get("answer") or ""
    claims = (attempt or rec).get("claims") or []
    reason = (attempt or rec).get("reason") or rec.get("explanation") or ""
    which = (
        f"attempt {attempt['number']}"
        + (f" ({_e(attempt['policy'])})" if attempt.get("policy") else " (the model's own)")
        + (f", followed by {_e(attempt['followed_by'])}" if attempt.get("followed_by") else "")
        if attempt
        else f"{_e(rec.get('detector'))}, label {_e(rec.get('label'))}"
    )
    spans = [s for c in claims for s in _claim_spans(answer, c)]
    rows = "".join(
        f'<div class="pair"><div class="answer">{_marked(answer, _claim_spans(answer, c))}</div>'
        f"<div>{_evidence(c)}</div></div>"
        for c in claims
    )
    body = rows or f'<div class="answer">{_marked(answer, spans)}</div>'
    return (
        f'<div class="rejected" data-run="{_e(rec.get("run_id"))}">'
        f"<p><b>{_e(rec.get('question'))}</b></p>"
        f'<p class="meta">{which}. {_e(reason)}</p>{body}</div>'
    )


def _first_answers(records: list[dict[str, Any]]) -> tuple[int, int]:
    """(wrong, judged) over first answers: a guarded run's attempt 1, else the record itself."""
    wrong = judged = 0
    for rec in records:
        if rec.get("status") != "scored":
            continue
        first = (rec.get("attempts") or [rec])[0]
        if first.get("passing") is None:
            continue
        judged += 1
        wrong += first["passing"] is False
    return wrong, judged


def render_review(
    log: str | Path, out: str | Path | None = None, *, title: str = "truthguard review"
) -> Path:
    """Write the review page of a handler's JSONL log; returns its path (``LOG.html`` by
    default)."""
    src = Path(log)
    records = read_records(src)
    if not records:
        raise InvalidInputError("log", f"no records in {src}")
    wrong, judged = _first_answers(records)
    blocks = []
    for rec in records:
        attempts = rec.get("attempts") or []
        if attempts:
            blocks += [_rejected(rec, a) for a in attempts if a.get("passing") is False]
        elif rec.get("status") == "scored" and rec.get("passing") is False:
            blocks.append(_rejected(rec, None))
    failed = sum(r.get("status") == "failed" for r in records)
    share = f"{wrong / judged:.1%}" if judged else "n/a"
    summary = (
        "<table id='summary'><tr><th>records</th><th>not scored</th><th>first answers judged</th>"
        "<th>first answers wrong</th><th>rejected answers</th></tr>"
        f"<tr><td>{len(records)}</td><td>{failed}</td><td>{judged}</td>"
        f'<td id="first-wrong">{wrong} ({share})</td><td>{len(blocks)}</td></tr></table>'
    )
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title>"
        f"<style>{_CSS}</style></head><body><h1>{_e(title)}</h1>"
        f"<p>{len(records)} records from <code>{_e(src)}</code>. A first answer is the model's "
        "own (a guarded run's attempt 1); it is wrong when its check failed.</p>"
        f"<h2>Summary</h2>{summary}<h2>Rejected answers</h2>"
        + ("".join(blocks) or "<p>No answer was rejected.</p>")
        + "</body></html>"
    )
    path = Path(out) if out is not None else src.with_suffix(".html")
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as e:
        raise InvalidInputError("out", f"cannot write {path}: {e}") from e
    return path
