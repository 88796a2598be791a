"""``truthguard report``: one self-contained HTML page of an evaluation run.

Everything is inline (CSS and SVG plots drawn here, no script, no CDN), so the file can be mailed,
attached to a ticket or opened offline. Sections: a summary table; per detector the score
distribution per gold label, pass rates, and ROC / precision-recall curves when labels exist
(with the operating point ``truthguard calibrate`` chose, if it ran); cost; and the worst answers
with their unsupported claims highlighted in the answer text and the evidence shown.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from truthguard.errors import InvalidInputError

__all__ = ["render_report"]

_W, _H, _PAD = 360, 220, 36
_COLORS = {"factual": "#2b8a3e", "hallucinated": "#c92a2a", "unlabelled": "#5c7cfa"}

_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#212529;max-width:1200px}
h1{margin-bottom:.2rem} h2{border-bottom:1px solid #dee2e6;padding-bottom:.3rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0} td,th{border:1px solid #dee2e6;padding:.25rem .5rem;
text-align:right} th{background:#f1f3f5} td:first-child,th:first-child{text-align:left}
.plots{display:flex;flex-wrap:wrap;gap:1rem} figure{margin:0}
figcaption{font-size:.85rem;color:#495057}
svg.plot{background:#fff;border:1px solid #dee2e6} .answer{background:#f8f9fa;padding:.5rem;
white-space:pre-wrap} mark.unsupported{background:#ffc9c9} mark.contradicted{background:#ff8787}
.evidence{font-size:.9rem;color:#495057;margin:.2rem 0 .2rem 1rem} .worst{margin-bottom:1.2rem;
border-left:4px solid #c92a2a;padding-left:.7rem} .legend span{margin-right:1rem}
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _fmt(v: Any, spec: str = ".3f") -> str:
    return "–" if v is None else format(v, spec)


def _axes(x_label: str, y_label: str) -> str:
    x0, y0, x1, y1 = _PAD, _H - _PAD, _W - 10, 10
    return (
        f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#868e96"/>'
        f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#868e96"/>'
        f'<text x="{(x0 + x1) / 2}" y="{_H - 6}" font-size="11" text-anchor="middle">'
        f"{_e(x_label)}</text>"
        f'<text x="10" y="{(y0 + y1) / 2}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 10 {(y0 + y1) / 2})">{_e(y_label)}</text>'
    )


def _svg(kind: str, name: str, body: str, title: str) -> str:
    return (
        f'<figure><svg class="plot" data-plot="{_e(kind)}:{_e(name)}" width="{_W}" '
        f'height="{_H}" viewBox="0 0 {_W} {_H}" xmlns="http://www.w3.org/2000/svg" role="img">'
        f"<title>{_e(title)}</title>{body}</svg><figcaption>{_e(title)}</figcaption></figure>"
    )


def _sx(v: float, lo: float, hi: float) -> float:
    return _PAD + (v - lo) / ((hi - lo) or 1.0) * (_W - 10 - _PAD)


def _sy(v: float, lo: float, hi: float) -> float:
    return _H - _PAD - (v - lo) / ((hi - lo) or 1.0) * (_H - _PAD - 10)


def _histogram(name: str, rows: list[dict[str, Any]]) -> str:
    scores = [r["score"] for r in rows if r["score"] is not None]
    if not scores:
        return _svg("hist", name, _axes("score", "answers") + _nodata(), f"{name}: no scores")
    lo, hi = min(scores), max(scores)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    bins = 20
    groups: dict[str, list[int]] = {}
    for r in rows:
        if r["score"] is None:
            continue
        key = r["gold"] or "unlabelled"
        i = min(int((r["score"] - lo) / (hi - lo) * bins), bins - 1)
        groups.setdefault(key, [0] * bins)[i] += 1
    top = max(max(c) for c in groups.values())
    width = (_W - 10 - _PAD) / bins / max(len(groups), 1)
    body = _axes("score", "answers")
    for g, (key, counts) in enumerate(sorted(groups.items())):
        for i, c in enumerate(counts):
            if not c:
                continue
            x = _PAD + i * (_W - 10 - _PAD) / bins + g * width
            y = _sy(c, 0, top)
            body += (
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" '
                f'height="{_H - _PAD - y:.1f}" fill="{_COLORS[key]}" opacity="0.8">'
                f"<title>{_e(key)}: {c}</title></rect>"
            )
    body += (
        f'<text x="{_PAD}" y="{_H - _PAD + 12}" font-size="10">{lo:.2f}</text>'
        f'<text x="{_W - 10}" y="{_H - _PAD + 12}" font-size="10" text-anchor="end">{hi:.2f}</text>'
        f'<text x="{_PAD + 4}" y="20" font-size="10">max {top}</text>'
    )
    return _svg("hist", name, body, f"{name}: score distribution per gold label")


def _nodata() -> str:
    return f'<text x="{_W / 2}" y="{_H / 2}" text-anchor="middle" font-size="12">no data</text>'


def _curve(
    kind: str, name: str, pts: list[tuple[float, float]], chosen: tuple | None, labels: tuple
) -> str:
    body = _axes(*labels)
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{_sx(x, 0, 1):.1f},{_sy(y, 0, 1):.1f}"
        for i, (x, y) in enumerate(pts)
    )
    body += f'<path d="{path}" fill="none" stroke="#1c7ed6" stroke-width="2"/>'
    if kind == "roc":
        body += (
            f'<line x1="{_sx(0, 0, 1)}" y1="{_sy(0, 0, 1)}" x2="{_sx(1, 0, 1)}" '
            f'y2="{_sy(1, 0, 1)}" stroke="#ced4da" stroke-dasharray="4"/>'
        )
    if chosen is not None and None not in chosen:
        body += (
            f'<circle class="operating-point" cx="{_sx(chosen[0], 0, 1):.1f}" '
            f'cy="{_sy(chosen[1], 0, 1):.1f}" r="5" fill="#f08c00">'
            "<title>chosen operating point</title></circle>"
        )
    title = "ROC (hallucinated = positive)" if kind == "roc" else "precision-recall"
    return _svg(kind, name, body, f"{name}: {title}")


def _bars(kind: str, title: str, values: dict[str, float], fmt: str = ".0f") -> str:
    body = _axes("", title)
    if not values:
        return _svg(kind, "all", body + _nodata(), title)
    top = max(values.values()) or 1.0
    n = len(values)
    slot = (_W - 10 - _PAD) / n
    for i, (name, v) in enumerate(values.items()):
        y = _sy(v, 0, top)
        x = _PAD + i * slot + slot * 0.15
        body += (
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" height="{_H - _PAD - y:.1f}" '
            f'fill="#5c7cfa"><title>{_e(name)}: {format(v, fmt)}</title></rect>'
            f'<text x="{x + slot * 0.35:.1f}" y="{_H - _PAD + 12}" font-size="10" '
            f'text-anchor="middle">{_e(name)}</text>'
            f'<text x="{x + slot * 0.35:.1f}" y="{max(y - 3, 10):.1f}" font-size="10" '
            f'text-anchor="middle">{format(v, fmt)}</text>'
        )
    return _svg(kind, "all", body, title)


def _highlight(answer: str, claims: list[dict[str, Any]]) -> str:
    """The answer with each non-entailed claim's text marked where it occurs."""
    spans: list[tuple[int, int, str]] = []
    for c in claims:
        if c.get("label") == "Entailment":
            continue
        text = (c.get("claim") or "").strip().rstrip(".")
        start = answer.find(text) if text else -1
        if start < 0:
            continue
        cls = "contradicted" if c.get("label") == "Contradiction" else "unsupported"
        spans.append((start, start + len(text), cls))
    out, pos = [], 0
    for start, end, cls in sorted(spans):
        if start < pos:
            continue  # overlapping claims: the first one wins
        out.append(_e(answer[pos:start]))
        out.append(f'<mark class="{cls}">{_e(answer[start:end])}</mark>')
        pos = end
    out.append(_e(answer[pos:]))
    return "".join(out)


def _worst(name: str, rows: list[dict[str, Any]], k: int) -> str:
    scored = [r for r in rows if r["score"] is not None]
    scored.sort(key=lambda r: (r["score"], r["index"]))
    parts = [f"<h3>{_e(name)}: the {min(k, len(scored))} lowest-scoring answers</h3>"]
    for r in scored[:k]:
        details = r.get("details") or {}
        claims = details.get("claims") or []
        gold = f", gold: {_e(r['gold'])}" if r["gold"] else ""
        block = [
            f'<div class="worst" data-row="{_e(r["id"])}">',
            f"<p><b>{_e(r['question'])}</b> (score {_fmt(r['score'])}, {_e(r['label'])}{gold})</p>",
            f'<div class="answer">{_highlight(r["answer"], claims)}</div>',
        ]
        for c in claims:
            if c.get("label") == "Entailment":
                continue
            ev = (c.get("evidence") or {}).get("text")
            block.append(
                f'<p class="evidence">{_e(c.get("label"))}: “{_e(c.get("claim"))}”'
                + (f" — closest evidence: “{_e(ev)}”" if ev else "")
                + "</p>"
            )
        if not claims and r.get("explanation"):
            block.append(f'<p class="evidence">{_e(r["explanation"])}</p>')
        block.append("</div>")
        parts.append("".join(block))
    return "\n".join(parts)


def render_report(
    results: str | Path,
    out: str | Path | None = None,
    *,
    worst: int = 20,
    title: str = "truthguard evaluation",
) -> Path:
    """Write the HTML report of a run directory (or ``results.jsonl``); returns its path."""
    from truthguard.evaluation.engine import summarize
    from truthguard.evaluation.io import read_results

    src = Path(results)
    rows = read_results(src)
    if not rows:
        raise InvalidInputError("results", f"no results in {src}")
    if isinstance(worst, bool) or not isinstance(worst, int) or worst < 0:
        raise InvalidInputError("worst", "must be a non-negative integer")
    run_dir = src if src.is_dir() else src.parent
    calibration: dict[str, Any] = {}
    if (run_dir / "calibration.json").exists():
        calibration = json.loads((run_dir / "calibration.json").read_text())["detectors"]
    summary = summarize(rows)
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["detector"], []).append(r)

    head = (
        "<tr><th>detector</th><th>answers</th><th>invalid</th><th>unverifiable</th>"
        "<th>pass rate</th><th>mean score</th><th>precision</th><th>recall</th><th>F1</th>"
        "<th>AUROC</th><th>model calls</th><th>cached</th><th>tokens</th><th>check s</th></tr>"
    )
    table = [head]
    for name, e in summary["detectors"].items():
        table.append(
            f"<tr><td>{_e(name)}</td><td>{e['n']}</td><td>{e['invalid']}</td>"
            f"<td>{e['unverifiable']}</td><td>{_fmt(e['pass_rate'], '.1%')}</td>"
            f"<td>{_fmt(e['mean_score'])}</td><td>{_fmt(e.get('precision'))}</td>"
            f"<td>{_fmt(e.get('recall'))}</td><td>{_fmt(e.get('f1'))}</td>"
            f"<td>{_fmt(e.get('auroc'))}</td><td>{e['llm_calls']}</td><td>{e['cached_calls']}</td>"
            f"<td>{e['tokens']}</td><td>{e['check_seconds']:.1f}</td></tr>"
        )
    sections = [
        f"<h1>{_e(title)}</h1>",
        f"<p>{len(rows)} results from <code>{_e(src)}</code>. Hallucinated is the positive "
        "class; an answer is flagged when it does not pass.</p>",
        "<h2>Summary</h2>",
        f"<table id='summary'>{''.join(table)}</table>",
        '<p class="legend">'
        + "".join(f'<span style="color:{c}">■ {k}</span>' for k, c in _COLORS.items())
        + "</p>",
    ]
    from truthguard.evaluation.calibrate import sweep

    for name, rs in by.items():
        plots = [_histogram(name, rs)]
        labelled = [r for r in rs if r["gold"] is not None and r["score"] is not None]
        golds = {r["gold"] for r in labelled}
        if len(golds) == 2:
            points = sweep(
                [r["score"] for r in labelled], [r["gold"] == "hallucinated" for r in labelled]
            )
            cal = (calibration.get(name) or {}).get("chosen")
            roc = [(p["fpr"], p["recall"]) for p in points]
            pr = [(p["recall"], p["precision"]) for p in points if p["precision"] is not None]
            plots.append(
                _curve(
                    "roc",
                    name,
                    roc,
                    (cal["fpr"], cal["recall"]) if cal else None,
                    ("false positive rate", "recall"),
                )
            )
            plots.append(
                _curve(
                    "pr",
                    name,
                    pr,
                    (cal["recall"], cal["precision"]) if cal else None,
                    ("recall", "precision"),
                )
            )
        sections.append(f"<h2>Detector {_e(name)}</h2>")
        if name in calibration:
            c = calibration[name]["chosen"]
            sections.append(
                f"<p>Calibrated threshold {c['threshold']:.4f}: precision {_fmt(c['precision'])}, "
                f"recall {_fmt(c['recall'])}, F1 {_fmt(c['f1'])}.</p>"
            )
        sections.append(f'<div class="plots">{"".join(plots)}</div>')
    sections.append("<h2>Pass rates and cost</h2>")
    d = summary["detectors"]
    sections.append(
        '<div class="plots">'
        + _bars("pass", "pass rate (%)", {n: 100 * (e["pass_rate"] or 0.0) for n, e in d.items()})
        + _bars("tokens", "tokens", {n: float(e["tokens"]) for n, e in d.items()})
        + _bars("calls", "model calls", {n: float(e["llm_calls"]) for n, e in d.items()})
        + _bars("seconds", "check seconds", {n: e["check_seconds"] for n, e in d.items()}, ".1f")
        + "</div>"
    )
    sections.append("<h2>Worst answers</h2>")
    for name, rs in by.items():
        sections.append(_worst(name, rs, worst))
    page = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        + "\n".join(sections)
        + "</body></html>\n"
    )
    target = Path(out) if out is not None else run_dir / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    return target
