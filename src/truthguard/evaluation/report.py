"""``truthguard report``: one self-contained HTML page of an evaluation run.

Everything is inline (CSS and SVG plots drawn here, no script, no CDN), so the file can be mailed,
attached to a ticket or opened offline. Sections: a summary table; per detector the score
distribution per gold label, pass rates, and ROC / precision-recall curves when labels exist,
with tick values; the threshold in use (the one ``truthguard calibrate`` chose, else the run's)
marked on every plot; cost (token and model-call charts only when some detector calls a model); the
correct answers the threshold flags; and the worst answers, with the conflicting facts of a
contradicted claim (else the unsupported claim) highlighted and the evidence shown.
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


def _ticks(axis: str, lo: float, hi: float, n: int = 4, fmt: str = ".2f") -> str:
    """``n + 1`` labelled ticks from ``lo`` to ``hi`` on the x or y axis."""
    out = []
    for i in range(n + 1):
        v = lo + (hi - lo) * i / n
        label = _e(format(v, fmt))
        if axis == "x":
            x = _sx(v, lo, hi)
            out.append(
                f'<line x1="{x:.1f}" y1="{_H - _PAD}" x2="{x:.1f}" y2="{_H - _PAD + 4}" '
                f'stroke="#868e96"/><text class="tick" x="{x:.1f}" y="{_H - _PAD + 14}" '
                f'font-size="9" text-anchor="middle">{label}</text>'
            )
        else:
            y = _sy(v, lo, hi)
            out.append(
                f'<line x1="{_PAD - 4}" y1="{y:.1f}" x2="{_PAD}" y2="{y:.1f}" stroke="#868e96"/>'
                f'<text class="tick" x="{_PAD - 6}" y="{y + 3:.1f}" font-size="9" '
                f'text-anchor="end">{label}</text>'
            )
    return "".join(out)


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


def _histogram(name: str, rows: list[dict[str, Any]], threshold: float | None = None) -> str:
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
    body += _ticks("x", lo, hi) + _ticks("y", 0, top, n=min(top, 4), fmt=".0f")
    if threshold is not None and lo <= threshold <= hi:
        x = _sx(threshold, lo, hi)
        body += (
            f'<line class="threshold-marker" x1="{x:.1f}" y1="10" x2="{x:.1f}" '
            f'y2="{_H - _PAD}" stroke="#f08c00" stroke-width="2" stroke-dasharray="5 3">'
            f"<title>threshold {threshold:.4g}: answers left of it are flagged</title></line>"
            f'<text x="{x + 3 if x < _W / 2 else x - 3:.1f}" y="20" font-size="10" '
            f'fill="#e8590c" text-anchor="{"start" if x < _W / 2 else "end"}">'
            f"threshold {threshold:.3g}</text>"
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
    body += _ticks("x", 0, 1) + _ticks("y", 0, 1)
    if chosen is not None and None not in chosen[:2]:
        x, y, threshold = _sx(chosen[0], 0, 1), _sy(chosen[1], 0, 1), chosen[2]
        body += (
            f'<circle class="threshold-marker" cx="{x:.1f}" cy="{y:.1f}" r="5" fill="#f08c00">'
            f"<title>threshold {threshold:.4g} in use</title></circle>"
            f'<text x="{min(x + 7, _W - 80):.1f}" y="{max(y - 6, 20):.1f}" font-size="10" '
            f'fill="#e8590c">threshold {threshold:.3g}</text>'
        )
    title = "ROC (hallucinated = positive)" if kind == "roc" else "precision-recall"
    return _svg(kind, name, body, f"{name}: {title}")


def _tradeoff(name: str, cascade: dict[str, Any]) -> str:
    """The cascade's trade-off: share decided locally against the balanced accuracy of those
    decisions, the best band at each share, the chosen band marked."""
    pts = [
        (p["coverage"], p["balanced_accuracy"])
        for p in cascade.get("curve") or []
        if p["balanced_accuracy"] is not None
    ]
    body = _axes("share decided locally", "balanced accuracy of local decisions")
    if not pts:
        return _svg("tradeoff", name, body + _nodata(), f"{name}: cascade trade-off")
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{_sx(x, 0, 1):.1f},{_sy(y, 0, 1):.1f}"
        for i, (x, y) in enumerate(pts)
    )
    body += f'<path d="{path}" fill="none" stroke="#1c7ed6" stroke-width="2"/>'
    body += "".join(
        f'<circle cx="{_sx(x, 0, 1):.1f}" cy="{_sy(y, 0, 1):.1f}" r="2.5" fill="#1c7ed6">'
        f"<title>{x:.0%} decided locally: {y:.1%}</title></circle>"
        for x, y in pts
    )
    body += _ticks("x", 0, 1) + _ticks("y", 0, 1)
    if cascade.get("balanced_accuracy") is not None:
        x, y = _sx(cascade["coverage"], 0, 1), _sy(cascade["balanced_accuracy"], 0, 1)
        body += (
            f'<circle class="band-marker" cx="{x:.1f}" cy="{y:.1f}" r="5" fill="#f08c00">'
            f"<title>the chosen band</title></circle>"
            f'<text x="{min(x + 7, _W - 80):.1f}" y="{max(y - 6, 20):.1f}" font-size="10" '
            f'fill="#e8590c">chosen band</text>'
        )
    return _svg("tradeoff", name, body, f"{name}: cascade trade-off")


def _cascade_text(cascade: dict[str, Any]) -> str:
    if "error" in cascade:
        return f"<p>As a cascade's local stage: {_e(cascade['error'])}</p>"
    band = cascade["band"]
    shown = "none" if band is None else f"[{band[0]:.4f}, {band[1]:.4f}]"
    return (
        f"<p>As a cascade's local stage, band {shown} (escalating also on "
        f"{_e(', '.join(x for x in cascade['escalate_on'] if x != 'band'))}): "
        f"{cascade['coverage']:.1%} of the answers decided locally, balanced accuracy "
        f"{_fmt(cascade['balanced_accuracy'], '.1%')}. The curve gives the best band at each "
        "share decided locally.</p>"
    )


def _bars(
    kind: str, title: str, values: dict[str, float], fmt: str = ".0f", top: float | None = None
) -> str:
    """One bar per detector, to scale from 0 to ``top`` (default: the largest value)."""
    body = _axes("", title)
    if not values:
        return _svg(kind, "all", body + _nodata(), title)
    top = top or max(values.values()) or 1.0
    body += _ticks("y", 0, top, fmt=".3g")
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


def _claim_spans(answer: str, claim: dict[str, Any]) -> list[tuple[int, int, str]]:
    """Where to mark a non-entailed claim: its conflicting facts (``1991``), else the claim."""
    cls = "contradicted" if claim.get("label") == "Contradiction" else "unsupported"
    start, end = claim.get("start"), claim.get("end")
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(answer)):
        text = (claim.get("claim") or "").strip().rstrip(".")
        start = answer.find(text) if text else -1
        if start < 0:
            return []
        end = start + len(text)
        if answer[start:end] != text:
            return []
    conflicts = [
        (start + i["claim_start"], start + i["claim_end"], "contradicted")
        for i in claim.get("issues") or []
        if isinstance(i, dict)
        and i.get("relation") in _SET_AGAINST
        and isinstance(i.get("claim_start"), int)
        and isinstance(i.get("claim_end"), int)
        and 0 <= i["claim_start"] < i["claim_end"] <= end - start
    ]
    return conflicts or [(start, end, cls)]


_SET_AGAINST = ("conflict", "other_value")
"""Issue relations that name the evidence span a claim's span is set against."""


def _highlight(answer: str, claims: list[dict[str, Any]]) -> str:
    """The answer with each non-entailed claim marked: its conflicting span, else its text."""
    spans: list[tuple[int, int, str]] = []
    for c in claims:
        if isinstance(c, dict) and c.get("label") != "Entailment":
            spans += _claim_spans(answer, c)
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
            conflicts = "".join(
                f"; “{_e(i.get('text'))}” against “{_e((i.get('evidence') or {}).get('text'))}”"
                for i in c.get("issues") or []
                if isinstance(i, dict) and i.get("relation") in _SET_AGAINST
            )
            block.append(
                f'<p class="evidence">{_e(c.get("label"))}: “{_e(c.get("claim"))}”{conflicts}'
                + (f" — closest evidence: “{_e(ev)}”" if ev else "")
                + "</p>"
            )
        if not claims and r.get("explanation"):
            block.append(f'<p class="evidence">{_e(r["explanation"])}</p>')
        block.append("</div>")
        parts.append("".join(block))
    return "\n".join(parts)


def _threshold_in_use(rows: list[dict[str, Any]], calibrated: dict[str, Any] | None) -> tuple:
    """(threshold, where it comes from): the calibrated one, else the run's, else (None, None)."""
    if calibrated and calibrated.get("chosen", {}).get("threshold") is not None:
        return float(calibrated["chosen"]["threshold"]), "calibrated"
    used = {r.get("threshold") for r in rows if r.get("threshold") is not None}
    if len(used) == 1:
        return float(used.pop()), "used in the run"
    return None, None


def _flagged(row: dict[str, Any], threshold: float | None) -> bool:
    """Whether the answer is flagged at ``threshold`` (else by the run's own verdict)."""
    if threshold is not None and row["score"] is not None:
        return row["score"] < threshold
    if row.get("passing") is not None:
        return not row["passing"]
    return row.get("label") == "hallucinated"


def _point_at(points: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """The sweep point that flags what ``score < threshold`` flags."""
    return next((p for p in points if p["threshold"] >= threshold), points[-1])


def _flagged_correct(name: str, rows: list[dict[str, Any]], threshold: float | None) -> str:
    wrong = [r for r in rows if r["gold"] == "factual" and _flagged(r, threshold)]
    rule = "below the threshold" if threshold is not None else "not passing"
    head = (
        f'<h3 id="flagged-correct-{_e(name)}">{_e(name)}: {len(wrong)} correct answers flagged '
        f"({rule}; gold label factual)</h3>"
    )
    if not wrong:
        return head + "<p>None.</p>"
    wrong.sort(key=lambda r: (-(r["score"] if r["score"] is not None else -1.0), r["index"]))
    items = "".join(
        f'<li class="flagged-correct" data-row="{_e(r["id"])}"><b>{_e(r["question"])}</b> '
        f"(score {_fmt(r['score'])}): {_e(r['answer'][:300])}</li>"
        for r in wrong
    )
    return head + f"<ol>{items}</ol>"


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
    cascades: dict[str, Any] = {}
    if (run_dir / "calibration.json").exists():
        saved = json.loads((run_dir / "calibration.json").read_text())
        calibration = saved["detectors"]
        cascades = saved.get("cascade") or {}
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
    from truthguard.evaluation.points import sweep

    in_use = {name: _threshold_in_use(rs, calibration.get(name)) for name, rs in by.items()}
    for name, rs in by.items():
        threshold, source = in_use[name]
        plots = [_histogram(name, rs, threshold)]
        labelled = [r for r in rs if r["gold"] is not None and r["score"] is not None]
        golds = {r["gold"] for r in labelled}
        if len(golds) == 2:
            points = sweep(
                [r["score"] for r in labelled], [r["gold"] == "hallucinated" for r in labelled]
            )
            at = None if threshold is None else _point_at(points, threshold)
            roc = [(p["fpr"], p["recall"]) for p in points]
            pr = [(p["recall"], p["precision"]) for p in points if p["precision"] is not None]
            plots.append(
                _curve(
                    "roc",
                    name,
                    roc,
                    (at["fpr"], at["recall"], threshold) if at else None,
                    ("false positive rate", "recall"),
                )
            )
            plots.append(
                _curve(
                    "pr",
                    name,
                    pr,
                    (at["recall"], at["precision"], threshold) if at else None,
                    ("recall", "precision"),
                )
            )
        sections.append(f"<h2>Detector {_e(name)}</h2>")
        if name in calibration:
            c = calibration[name]["chosen"]
            sections.append(
                f"<p>Calibrated threshold {c['threshold']:.4f}: precision {_fmt(c['precision'])}, "
                f"recall {_fmt(c['recall'])}, F1 {_fmt(c['f1'])}. The orange marks show it.</p>"
            )
        elif threshold is not None:
            sections.append(
                f"<p>Threshold {threshold:.4f} ({source}); the orange marks show it.</p>"
            )
        else:
            sections.append("<p>No threshold in use: flagged means the answer did not pass.</p>")
        if name in cascades:
            sections.append(_cascade_text(cascades[name]))
            if "error" not in cascades[name]:
                plots.append(_tradeoff(name, cascades[name]))
        sections.append(f'<div class="plots">{"".join(plots)}</div>')
    sections.append("<h2>Pass rates and cost</h2>")
    d = summary["detectors"]
    pass_rates = {n: 100 * (e["pass_rate"] or 0.0) for n, e in d.items()}
    plots = [
        _bars("pass", "pass rate (%)", pass_rates, ".1f", top=100.0),
        _bars("seconds", "check seconds", {n: e["check_seconds"] for n, e in d.items()}, ".1f"),
    ]
    no_llm = []
    for kind, title, key in (("tokens", "tokens", "tokens"), ("calls", "model calls", "llm_calls")):
        values = {n: float(e[key]) for n, e in d.items()}
        if any(values.values()):
            plots.append(_bars(kind, title, values))
        else:
            no_llm.append(title)
    sections.append(f'<div class="plots">{"".join(plots)}</div>')
    if no_llm:
        sections.append(
            f"<p>No {' and no '.join(no_llm)} to show: these detectors call no model.</p>"
        )
    sections.append("<h2>Correct answers that were flagged</h2>")
    sections.append(
        "<p>Answers labelled factual that the detector flags at the threshold in use: the "
        "cost of the threshold, and what to read before moving it.</p>"
    )
    for name, rs in by.items():
        sections.append(_flagged_correct(name, rs, in_use[name][0]))
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
