"""``truthguard bench refchecker``: the local RefChecker pipeline on CHALE, against whole-answer
cosine similarity.

For each CHALE question the reference is its long answer (HTML removed). Four answers are scored:
``non-halu``, ``mid-halu``, ``halu`` and a derived ``swap`` answer (the halu answer's short answer,
its first sentence, followed by the non-halu answer's text after its ``Short_ans`` prefix;
questions where the halu short answer has every word of the right one are skipped for swap).
The answers' own HTML markers (``<P>``) are removed like the reference's. Reported: the share
of questions where non-halu scores strictly higher than mid-halu (``nh_gt_hh``), halu
(``nh_gt_h``) and swap (``nh_gt_swap``). An answer that abstains (no claim) has no score and
never ranks higher.

The local pipeline runs through ``RefChecker(...).abatch``; its three score modes are computed
from the same per-claim verdicts, so they share one timing.

Every text either method embeds (references and answers for the cosine baseline; claims and
reference sentences for the pipeline) is embedded once up front, sorted by length, into the
process-wide embedding cache; ``embedding_seconds`` reports that shared step and each method's
``seconds_per_answer`` its own work after it. The vectors are saved (``--vectors-dir``, keyed by
model, weights and the exact texts) and read back by later runs: ``embeddings_from`` says which.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, get_args

import numpy as np

from truthguard._progress import progress
from truthguard._sync import run_sync
from truthguard.datasets import load_chale
from truthguard.datasets._loaders import ChaleItem, strip_html
from truthguard.embedding import onnx_model_path
from truthguard.refchecker import LocalChecker, LocalExtractor, RefChecker, response_score
from truthguard.refchecker.aggregate import ScoreMode
from truthguard.refchecker.segment import segment_references, split_sentences
from truthguard.similarity import (
    default_model_cache_dir,
    embedding_cache,
    get_default_similarity,
)

__all__ = ["HELP", "add_arguments", "build_answers", "format_table", "rank_metrics", "run"]

HELP = "RefChecker local pipeline vs whole-answer cosine on CHALE (non-halu vs mid/halu/swap)"

KINDS = ("non_halu", "mid_halu", "halu", "swap")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument(
        "--score",
        choices=get_args(ScoreMode),
        default="mean_support",
        help="score the detector returns (the other modes are reported too)",
    )
    parser.add_argument("--segment-size", type=int, default=80, help="words per segment")
    parser.add_argument("--top-k", type=int, default=3, help="segments checked per claim")
    parser.add_argument(
        "--question-context-words",
        type=int,
        default=0,
        help="prefix claims shorter than this many words with the question (0: off)",
    )
    parser.add_argument(
        "--entailment-threshold", type=float, default=0.6, help="support for Entailment"
    )
    parser.add_argument(
        "--lexical-weight", type=float, default=0.5, help="weight of content-word recall in support"
    )
    parser.add_argument("--batch", type=int, default=64, help="answers per abatch call")
    parser.add_argument("--concurrency", type=int, default=2, help="checks run at once")
    parser.add_argument(
        "--vectors-dir",
        default=None,
        help="keep the embeddings of the bench's texts here and reuse them on later runs "
        "(default: $TRUTHGUARD_HOME/bench-vectors; 'none' to always compute)",
    )


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[^\W_]+", text.casefold()))


def swap_answer(item: ChaleItem) -> str | None:
    """The halu short answer + the non-halu informative part; None when the halu short answer
    has every word of the right one (the same answer, or the same said more fully: "On June 17 ,
    1885" for "June 17 , 1885").

    The halu short answer is the halu answer's first sentence as :func:`split_sentences` reads
    it, so an initial or a title does not end it ("Dr. Lexie Grey", "J.J. Thomson", "Edward A.
    Calahan" are whole names, not "Dr", "J.J." and "Edward A.")."""
    sentences = split_sentences(item.halu)
    if not sentences:
        return None
    halu_short = sentences[0].text.strip()
    halu_short = halu_short[:-1].rstrip() if halu_short.endswith(".") else halu_short
    ours, theirs = _words(halu_short), _words(item.short_answer)
    if not ours or theirs <= ours:
        return None
    if not item.non_halu.startswith(item.short_answer):
        return None  # no informative part to isolate
    return halu_short + item.non_halu[len(item.short_answer) :]


def build_answers(items: list[ChaleItem]) -> dict[str, list[str | None]]:
    """The four answers of every question, HTML markers removed (None: no swap answer)."""
    swaps = [swap_answer(it) for it in items]
    return {
        "non_halu": [strip_html(it.non_halu) for it in items],
        "mid_halu": [strip_html(it.mid_halu) for it in items],
        "halu": [strip_html(it.halu) for it in items],
        "swap": [strip_html(s) if s is not None else None for s in swaps],
    }


def _higher(a: float | None, b: float | None) -> bool:
    return a is not None and (b is None or a > b)


def rank_metrics(scores: dict[str, list[float | None]], has_swap: list[bool]) -> dict[str, float]:
    """Shares of questions where non-halu outscores mid-halu, halu and swap (in percent)."""
    nh = scores["non_halu"]
    n = len(nh)
    swap_idx = [i for i in range(n) if has_swap[i]]
    return {
        "nh_gt_hh": 100.0 * sum(_higher(nh[i], scores["mid_halu"][i]) for i in range(n)) / n,
        "nh_gt_h": 100.0 * sum(_higher(nh[i], scores["halu"][i]) for i in range(n)) / n,
        "nh_gt_swap": 100.0
        * sum(_higher(nh[i], scores["swap"][i]) for i in swap_idx)
        / max(len(swap_idx), 1),
    }


def texts_to_embed(
    detector: RefChecker,
    items: list[ChaleItem],
    refs: list[str],
    answers: dict[str, list[str | None]],
) -> list[str]:
    """Every distinct text the two methods embed, shortest first."""
    texts: dict[str, None] = dict.fromkeys(refs)
    extract = getattr(detector.extractor, "extract", None)  # local extractors only: no LLM here
    for i, item in enumerate(items):
        for span_seg in segment_references([refs[i]], size=detector.segment_size):
            texts.update(dict.fromkeys(sp.text for sp in span_seg.spans))
        for kind in KINDS:
            answer = answers[kind][i]
            if answer is None:
                continue
            texts[answer] = None
            if extract is not None:
                texts.update(dict.fromkeys(c.text for c in extract(item.question, answer)))
    return sorted(texts, key=len)


def _vectors_file(directory: Path, texts: list[str]) -> Path:
    """Where the vectors of exactly these texts, by exactly this model, are kept."""
    sim = get_default_similarity()
    # The export path's digest covers the model directory and its weights' size and mtime.
    model = onnx_model_path(Path(sim.path), directory).parent.name
    h = hashlib.sha1(f"{sim.backend}\x1f{model}".encode())
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass") + b"\x1e")
    return directory / f"refchecker-{h.hexdigest()[:16]}.npy"


def _embed_all(texts: list[str], *, show: bool, directory: Path | None, chunk: int = 1024) -> str:
    """Put every text's vector in the process cache; ``"disk"`` when read from ``directory``."""
    sim = get_default_similarity()
    path = _vectors_file(directory, texts) if directory is not None else None
    if path is not None and path.is_file():
        vectors = np.load(path)
        if vectors.shape == (len(texts), sim.dimension):
            embedding_cache().put_many(sim.cache_key, texts, vectors)
            return "disk"
    chunks = [texts[s : s + chunk] for s in range(0, len(texts), chunk)]
    with ThreadPoolExecutor(sim.parallel_encodes) as pool:  # map keeps the chunks' order
        done = progress(
            pool.map(sim.embed, chunks), desc="embedding", total=len(chunks), enabled=show
        )
        parts = list(done)
    if path is not None and parts:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.npy")
        np.save(tmp, np.concatenate(parts))
        os.replace(tmp, path)
    return "computed"


def _cosine(refs: list[str], answers: dict[str, list[str | None]]) -> dict[str, list]:
    sim = get_default_similarity()
    r = sim.embed(refs)
    out: dict[str, list] = {}
    for kind in KINDS:
        idx = [i for i, a in enumerate(answers[kind]) if a is not None]
        vecs = sim.embed([answers[kind][i] for i in idx])  # type: ignore[misc]
        col: list[float | None] = [None] * len(refs)
        for row, i in enumerate(idx):
            col[i] = float(vecs[row] @ r[i])
        out[kind] = col
    return out


async def _local(
    detector: RefChecker,
    items: list[ChaleItem],
    refs: list[str],
    answers: dict[str, list[str | None]],
    *,
    batch: int,
    show: bool,
) -> dict[str, list[Any]]:
    # Kind-major order: the answers of one question never run at the same time, so its reference
    # is embedded once (with the first answer) and served from the embedder's memo afterwards.
    jobs = [(kind, i) for kind in KINDS for i in range(len(items)) if answers[kind][i] is not None]
    results: dict[tuple[str, int], Any] = {}
    chunks = [jobs[s : s + batch] for s in range(0, len(jobs), batch)]
    for chunk in progress(chunks, desc="refchecker", enabled=show):
        inputs = [
            {"question": items[i].question, "answer": answers[k][i], "references": [refs[i]]}
            for k, i in chunk
        ]
        for job, res in zip(chunk, await detector.abatch(inputs), strict=True):
            results[job] = res
    return {kind: [results.get((kind, i)) for i in range(len(items))] for kind in KINDS}


def _mode_scores(results: dict[str, list[Any]], mode: ScoreMode) -> dict[str, list]:
    out: dict[str, list] = {}
    for kind, col in results.items():
        scores: list[float | None] = []
        for res in col:
            claims = res.details.get("claims", []) if res is not None else []
            scores.append(
                response_score([c["label"] for c in claims], [c["support"] for c in claims], mode)
                if claims
                else None
            )
        out[kind] = scores
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    items = load_chale(args.data)
    if args.limit:
        items = items[: args.limit]
    refs = [it.long_answer for it in items]
    answers = build_answers(items)
    has_swap = [a is not None for a in answers["swap"]]
    n_answers = sum(a is not None for kind in KINDS for a in answers[kind])
    get_default_similarity().warm_up()  # load once, outside the timings

    detector = RefChecker(
        extractor=LocalExtractor(question_context_words=args.question_context_words),
        checker=LocalChecker(
            entailment_threshold=args.entailment_threshold, lexical_weight=args.lexical_weight
        ),
        score=args.score,
        segment_size=args.segment_size,
        top_k=args.top_k,
        similarity=None,
        batch_concurrency=args.concurrency,
    )
    started = time.perf_counter()
    texts = texts_to_embed(detector, items, refs, answers)
    vectors_dir = (
        None
        if args.vectors_dir == "none"
        else Path(args.vectors_dir or default_model_cache_dir().parent / "bench-vectors")
    )
    source = _embed_all(texts, show=not args.no_progress, directory=vectors_dir)
    embedding_seconds = time.perf_counter() - started

    methods: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    cos = _cosine(refs, answers)
    cos_seconds = time.perf_counter() - started
    methods["cosine (whole answer)"] = {
        **rank_metrics(cos, has_swap),
        "seconds_per_answer": cos_seconds / n_answers,
    }

    started = time.perf_counter()
    results = run_sync(
        _local(detector, items, refs, answers, batch=args.batch, show=not args.no_progress)
    )
    local_seconds = time.perf_counter() - started
    direct = {k: [r.score if r is not None else None for r in col] for k, col in results.items()}
    for mode in get_args(ScoreMode):
        scores = direct if mode == args.score else _mode_scores(results, mode)
        methods[f"refchecker-local ({mode})"] = {
            **rank_metrics(scores, has_swap),
            "seconds_per_answer": local_seconds / n_answers,
        }
    n_claims = sum(len(r.details.get("claims", [])) for col in results.values() for r in col if r)
    return {
        "n": len(items),
        "n_swap": sum(has_swap),
        "n_answers": n_answers,
        "claims_per_answer": n_claims / n_answers,
        "embedding_backend": get_default_similarity().backend,
        "texts_embedded": len(texts),
        "embedding_seconds": embedding_seconds,
        "embeddings_from": source,
        "config": {
            "score": args.score,
            "segment_size": args.segment_size,
            "top_k": args.top_k,
            "question_context_words": args.question_context_words,
            "entailment_threshold": args.entailment_threshold,
            "lexical_weight": args.lexical_weight,
        },
        "methods": methods,
    }


def format_table(result: dict[str, Any]) -> str:
    """A fixed-width table of the three shares and seconds per answer."""
    lines = [
        f"CHALE: {result['n']} questions ({result['n_swap']} with a swap answer), "
        f"{result['n_answers']} answers, {result['claims_per_answer']:.2f} claims/answer (local)",
        f"config: {result['config']}",
        f"embedding: {result['texts_embedded']} distinct texts once up front in "
        f"{result['embedding_seconds']:.1f} s ({result['embedding_backend']}, "
        f"{result.get('embeddings_from', 'computed')}); "
        "s/answer below is each method's own time after it",
        "",
        f"{'method':<34} {'nh>mid':>8} {'nh>halu':>8} {'nh>swap':>8} {'s/answer':>9}",
    ]
    for name, m in result["methods"].items():
        lines.append(
            f"{name:<34} {m['nh_gt_hh']:>7.1f}% {m['nh_gt_h']:>7.1f}% "
            f"{m['nh_gt_swap']:>7.1f}% {m['seconds_per_answer']:>9.4f}"
        )
    return "\n".join(lines)
