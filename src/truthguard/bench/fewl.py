"""``truthguard bench fewl``: FEWL ablations on the RefChecker human annotations.

Seven LLMs answered the same questions and humans labelled every claim of every response. For
each LLM as the evaluated model, the other six LLMs' recorded responses are the reference panel
(real answers of real models; nothing is generated). Similarities are cosines of the packaged
MiniLM embeddings, computed in one encode call, and every score goes through
:func:`truthguard.fewl.fewl_formula`, the function the detector uses.

Question texts are not in the data, so neighbour questions are found through a proxy (``--proxy``):

* ``panel_mean`` (default): the normalised mean embedding of the reference panel's responses to
  a question (the evaluated response is left out);
* ``all_mean``: the mean embedding of all seven responses (includes the evaluated response).

The neighbours' reference answers are the panel's recorded responses to the neighbour questions.

Metrics:

* pairwise accuracy: over pairs of responses to the same question whose human contradiction
  rates differ, the share where the less-contradicted response scores higher (score ties count
  one half). Single-reference ablations let each model be the single reference in turn and only
  compare two responses scored against the same reference (neither of them being it);
* Spearman correlation, over the seven LLMs, between a model's mean score and its mean human
  entailment rate, and between the mean score and minus its mean contradiction rate (responses
  without labelled claims are left out of both).
"""

from __future__ import annotations

import argparse
import importlib
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from truthguard.errors import InvalidInputError, InvalidLLMOutput, LLMCallError
from truthguard.fewl import fewl_formula, parse_iwco_pairs
from truthguard.fewl._prompts import iwco_prompt

__all__ = [
    "ABLATIONS",
    "HELP",
    "PROXIES",
    "add_arguments",
    "evaluate",
    "format_table",
    "pairwise_accuracy",
    "run",
    "spearman",
]

HELP = "FEWL ablations on RefChecker: seven LLMs as each other's reference panel"

#: name -> (reference set, expertise, penalty)
ABLATIONS: dict[str, tuple[str, str, bool]] = {
    "single_no_penalty": ("single", "uniform", False),
    "panel_uniform_no_penalty": ("panel", "uniform", False),
    "single_penalty": ("single", "uniform", True),
    "panel_uniform_penalty": ("panel", "uniform", True),
    "panel_estimated_penalty": ("panel", "estimated", True),
}
PROXIES = {
    "panel_mean": "normalised mean MiniLM embedding of the reference panel's responses to the "
    "question (the evaluated response left out)",
    "all_mean": "normalised mean MiniLM embedding of all seven responses to the question "
    "(the evaluated response included)",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--setting", choices=["zero_context", "noisy_context"], default="zero_context"
    )
    parser.add_argument(
        "--proxy",
        choices=sorted(PROXIES),
        default="panel_mean",
        help="what stands in for the missing question text in neighbour search",
    )
    parser.add_argument("--neighbor-mode", choices=["knn", "random"], default="knn")
    parser.add_argument("--k", type=int, default=25, help="neighbour questions (K)")
    parser.add_argument(
        "--cutoff", type=float, default=0.8, help="skip neighbours above this proxy similarity"
    )
    parser.add_argument("--divergence", choices=["tv", "js", "kl"], default="tv")
    parser.add_argument("--seed", type=int, default=0, help="seed of --neighbor-mode random")
    parser.add_argument(
        "--generator",
        default=None,
        metavar="MODULE:ATTR",
        help="chat model (or factory) for IW/CO pairs; enables the estimated-expertise ablation",
    )


# -- metrics --------------------------------------------------------------------------------------


def pairwise_accuracy(
    groups: Sequence[Sequence[tuple[float, float]]],
) -> tuple[float | None, int]:
    """Share of pairs ordered like the humans, over groups of ``(score, contradiction_rate)``.

    Within each group every pair whose contradiction rates differ counts; the response with the
    lower rate should have the higher score. A score tie counts one half.

    Returns:
        ``(accuracy, n_pairs)``; accuracy is None when no pair qualifies.
    """
    hits = 0.0
    n = 0
    for group in groups:
        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                (si, ci), (sj, cj) = group[i], group[j]
                if ci == cj:
                    continue
                n += 1
                better, worse = (si, sj) if ci < cj else (sj, si)
                hits += 1.0 if better > worse else 0.5 if better == worse else 0.0
    return (hits / n if n else None), n


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman rank correlation (average ranks for ties); None when undefined."""
    from scipy.stats import spearmanr

    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    value = float(spearmanr(x, y).statistic)
    return None if np.isnan(value) else value


# -- data preparation -----------------------------------------------------------------------------


class _Panel:
    """Responses, human rates and all pairwise similarities of one setting."""

    def __init__(self, rows: Sequence[Any], embedder: Any) -> None:
        self.models: list[str] = list(dict.fromkeys(r.model for r in rows))
        by_model = {m: {r.id: r for r in rows if r.model == m} for m in self.models}
        common = set.intersection(*(set(v) for v in by_model.values()))
        self.qids: list[str] = [q for q in dict.fromkeys(r.id for r in rows) if q in common]
        if len(self.models) < 3 or len(self.qids) < 2:
            raise InvalidInputError(
                "rows", "need at least three models answering at least two common questions"
            )
        self.index = {
            (m, q): i for i, (m, q) in enumerate((m, q) for m in self.models for q in self.qids)
        }
        self.texts = [by_model[m][q].response for m in self.models for q in self.qids]
        self.contradiction = {
            key: by_model[key[0]][key[1]].rate("Contradiction") for key in self.index
        }
        self.entailment = {key: by_model[key[0]][key[1]].rate("Entailment") for key in self.index}
        self.emb = np.asarray(embedder.embed(self.texts), dtype=np.float64)  # one encode call
        self.sim = self.emb @ self.emb.T

    def s(self, a: tuple[str, str], b: tuple[str, str]) -> float:
        return float(self.sim[self.index[a], self.index[b]])

    def proxy_vectors(self, proxy: str, evaluated: str) -> np.ndarray:
        """One unit vector per question standing in for its text, shape (Q, dim)."""
        members = [m for m in self.models if proxy == "all_mean" or m != evaluated]
        out = np.stack(
            [self.emb[[self.index[(m, q)] for m in members]].mean(axis=0) for q in self.qids]
        )
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def neighbours(
        self, proxy: str, evaluated: str, *, k: int, cutoff: float | None, mode: str, seed: int
    ) -> dict[str, list[str]]:
        """Neighbour questions of every question, for one evaluated model."""
        vecs = self.proxy_vectors(proxy, evaluated)
        sims = vecs @ vecs.T
        out: dict[str, list[str]] = {}
        for qi, q in enumerate(self.qids):
            order = [j for j in np.argsort(-sims[qi], kind="stable") if j != qi]
            allowed = [j for j in order if cutoff is None or sims[qi, j] <= cutoff]
            if mode == "random":
                allowed = random.Random(f"{seed}:{q}:{evaluated}").sample(allowed, len(allowed))
            out[q] = [self.qids[j] for j in allowed[:k]]
        return out


def _load_generator(spec: str) -> Any:
    from langchain_core.runnables import Runnable

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise InvalidInputError("generator", f"expected MODULE:ATTR, got {spec!r}")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise InvalidInputError("generator", f"cannot load {spec!r}: {e}") from e
    return obj if isinstance(obj, Runnable) else obj()


def _generate_pairs(
    panel: _Panel, generator: Any, n_pairs: int, min_pairs: int
) -> tuple[dict[str, tuple[list[str], list[str]]], dict[str, str]]:
    """IW/CO pairs per question, from one generator call each (all calls concurrent)."""
    from truthguard._sync import run_sync
    from truthguard.llm import LLMSession

    anchor = panel.models[0]
    stand_ins = {
        q: "(The question text is not available. One model answered it as follows: "
        f"{panel.texts[panel.index[(anchor, q)]]!s})"
        for q in panel.qids
    }
    session = LLMSession()

    async def one(q: str) -> tuple[str, Any]:
        try:
            text = await session.acall(
                generator, iwco_prompt(stand_ins[q], n_pairs), stage="fewl.iwco"
            )
            parsed = parse_iwco_pairs(text, limit=n_pairs, min_pairs=min_pairs)
            return q, (parsed.wrong, parsed.corrected)
        except (InvalidLLMOutput, LLMCallError) as e:
            return q, str(e)

    async def all_pairs() -> list[tuple[str, Any]]:
        return await session.gather(one(q) for q in panel.qids)

    pairs: dict[str, tuple[list[str], list[str]]] = {}
    failed: dict[str, str] = {}
    for q, value in run_sync(all_pairs()):
        if isinstance(value, str):
            failed[q] = value
        else:
            pairs[q] = value
    return pairs, failed


# -- evaluation -----------------------------------------------------------------------------------


def evaluate(
    rows: Sequence[Any],
    *,
    embedder: Any,
    setting: str = "",
    proxy: str = "panel_mean",
    neighbor_mode: str = "knn",
    k: int = 25,
    cutoff: float | None = 0.8,
    divergence: str = "tv",
    seed: int = 0,
    generator: Any = None,
    n_pairs: int = 25,
    min_pairs: int = 5,
    show_progress: bool = False,
) -> dict[str, Any]:
    """Run every ablation on RefChecker-style responses; returns the benchmark's JSON object."""
    from truthguard._progress import progress

    if proxy not in PROXIES:
        raise InvalidInputError("proxy", f"expected one of {sorted(PROXIES)}, got {proxy!r}")
    if k < 1:
        raise InvalidInputError("k", "must be at least 1")
    panel = _Panel(rows, embedder)
    iwco_emb: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # question -> (IW, CO) vectors
    iwco_failed: dict[str, str] = {}
    if generator is not None:
        iwco, iwco_failed = _generate_pairs(panel, generator, n_pairs, min_pairs)
        texts = [t for w, c in iwco.values() for t in (*w, *c)]
        vecs = np.asarray(embedder.embed(texts), dtype=np.float64) if texts else None
        start = 0
        for q, (wrong, corrected) in iwco.items():
            n_w, n_c = len(wrong), len(corrected)
            iwco_emb[q] = (vecs[start : start + n_w], vecs[start + n_w : start + n_w + n_c])
            start += n_w + n_c

    # scores[ablation][(reference or "", model, question)] = FEWL score
    scores: dict[str, dict[tuple[str, str, str], float]] = {name: {} for name in ABLATIONS}
    for m in progress(panel.models, desc="fewl", enabled=show_progress):
        nbrs = panel.neighbours(proxy, m, k=k, cutoff=cutoff, mode=neighbor_mode, seed=seed)
        refs = [r for r in panel.models if r != m]
        for q in panel.qids:
            y = (m, q)
            truth = np.array([panel.s(y, (r, q)) for r in refs])
            nb = np.array([[panel.s(y, (r, q2)) for q2 in nbrs[q]] for r in refs])
            has_nb = nb.shape[1] > 0
            for name, (refset, expertise, penalty) in ABLATIONS.items():
                if penalty and not has_nb:
                    continue
                if refset == "single":
                    for i, r in enumerate(refs):
                        b = fewl_formula(
                            truth[i : i + 1],
                            None,
                            None,
                            nb[i : i + 1] if penalty else None,
                            divergence=divergence,  # type: ignore[arg-type]
                            expertise="uniform",
                            penalty=penalty,
                        )
                        scores[name][(r, m, q)] = b.score
                    continue
                co_sim = iw_sim = None
                if expertise == "estimated":
                    if q not in iwco_emb:
                        continue  # the generator failed on this question (counted below)
                    ref_emb = panel.emb[[panel.index[(r, q)] for r in refs]]
                    iw_sim = ref_emb @ iwco_emb[q][0].T
                    co_sim = ref_emb @ iwco_emb[q][1].T
                b = fewl_formula(
                    truth,
                    co_sim,
                    iw_sim,
                    nb if penalty else None,
                    divergence=divergence,  # type: ignore[arg-type]
                    expertise=expertise,  # type: ignore[arg-type]
                    penalty=penalty,
                )
                scores[name][("", m, q)] = b.score

    ablations: dict[str, Any] = {}
    for name, (refset, expertise, _) in ABLATIONS.items():
        if expertise == "estimated" and generator is None:
            ablations[name] = {
                "pairwise_accuracy": None,
                "spearman_entailment": None,
                "spearman_contradiction": None,
                "skipped": "no generator model configured (no LLM offline; pass --generator); "
                "the data has no question texts, so IW/CO pairs would be generated from a "
                "stand-in built from one recorded response",
            }
            continue
        ablations[name] = _metrics(panel, scores[name], single=refset == "single")
        if expertise == "estimated":
            ablations[name]["iwco_failed_questions"] = len(iwco_failed)
    proxy_text = (
        f"{proxy}: {PROXIES[proxy]}; {neighbor_mode} neighbours, K={k}, cut-off {cutoff}, "
        f"divergence {divergence}"
    )
    return {
        "setting": setting,
        "n_questions": len(panel.qids),
        "proxy": proxy_text,
        "ablations": ablations,
    }


def _metrics(
    panel: _Panel, scores: dict[tuple[str, str, str], float], *, single: bool
) -> dict[str, Any]:
    labelled = {key for key, c in panel.contradiction.items() if c is not None}
    references = panel.models if single else [""]
    groups = []
    for r in references:
        for q in panel.qids:
            group = [
                (scores[(r, m, q)], panel.contradiction[(m, q)])
                for m in panel.models
                if (m, q) in labelled and (r, m, q) in scores
            ]
            groups.append(group)
    accuracy, n_pairs = pairwise_accuracy(groups)
    mean_score, entail, contra = [], [], []
    for m in panel.models:
        vals = [v for (r, mm, q), v in scores.items() if mm == m and (m, q) in labelled]
        keys = [(m, q) for q in panel.qids if (m, q) in labelled]
        if not vals or not keys:
            continue
        mean_score.append(float(np.mean(vals)))
        entail.append(float(np.mean([panel.entailment[key] for key in keys])))
        contra.append(-float(np.mean([panel.contradiction[key] for key in keys])))
    return {
        "pairwise_accuracy": accuracy,
        "spearman_entailment": spearman(mean_score, entail),
        "spearman_contradiction": spearman(mean_score, contra),
        "n_pairs": n_pairs,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    from truthguard.datasets import load_refchecker
    from truthguard.similarity import get_default_similarity

    rows = load_refchecker(args.setting, args.data)
    generator = _load_generator(args.generator) if args.generator else None
    return evaluate(
        rows,
        embedder=get_default_similarity(),
        setting=args.setting,
        proxy=args.proxy,
        neighbor_mode=args.neighbor_mode,
        k=args.k,
        cutoff=args.cutoff,
        divergence=args.divergence,
        seed=args.seed,
        generator=generator,
        show_progress=not args.no_progress,
    )


def _fmt(value: float | None, pct: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}" if pct else f"{value:+.3f}"


def format_table(result: dict[str, Any]) -> str:
    lines = [
        f"FEWL on RefChecker {result['setting']} ({result['n_questions']} questions, "
        "7 LLMs; panel = the other six)",
        f"neighbour proxy: {result['proxy']}",
        "",
        f"{'ablation':<26} {'pairwise acc %':>14} {'pairs':>6} {'rho(entail)':>12} "
        f"{'rho(-contra)':>13}",
    ]
    skipped = []
    for name, m in result["ablations"].items():
        if "skipped" in m:
            skipped.append(f"{name}: skipped ({m['skipped']})")
            continue
        lines.append(
            f"{name:<26} {_fmt(m['pairwise_accuracy'], True):>14} {m.get('n_pairs', 0):>6} "
            f"{_fmt(m['spearman_entailment']):>12} {_fmt(m['spearman_contradiction']):>13}"
        )
    return "\n".join([*lines, *(["", *skipped] if skipped else [])])
