"""``truthguard demo``: the machinery on the recorded benchmark data (offline).

The full guarded-chain demo arrives with the middleware; until then this shows the pieces that
exist, on real recorded data, and prints nothing it did not compute.
"""

from __future__ import annotations

import argparse
import time

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", default=None, help="data directory (default: $TRUTHGUARD_DATA_DIR)"
    )
    parser.add_argument(
        "--live", action="store_true", help="use a real model (needs OPENAI_API_KEY)"
    )


def run(args: argparse.Namespace) -> int:
    from truthguard.datasets import load_chale, load_phd, load_refchecker
    from truthguard.similarity import get_default_similarity
    from truthguard.store import ArtifactStore

    if args.live:
        print("Live mode is not available yet in this version; running the offline demo.")
    print("Mode: offline (recorded data, no LLM calls)\n")
    phd = load_phd(args.data)
    chale = load_chale(args.data)
    rc = load_refchecker("zero_context", args.data)
    print(f"PHD passages: {len(phd)} ({sum(p.is_hallucinated for p in phd)} non-factual)")
    print(f"CHALE questions: {len(chale)}")
    print(f"RefChecker zero-context responses: {len(rc)}\n")

    sim = get_default_similarity()
    items = chale[:5]
    t = time.perf_counter()
    refs = [i.long_answer for i in items]
    for name in ("non_halu", "mid_halu", "halu"):
        scores = sim.pairwise([getattr(i, name) for i in items], refs)
        print(f"cosine(answer, reference) for {name:9s}: " + " ".join(f"{s:.2f}" for s in scores))
    print(f"(5 CHALE questions, {time.perf_counter() - t:.2f}s including model load)\n")

    store = ArtifactStore.in_memory()
    store.add_questions([i.question for i in chale[:200]])
    q = chale[0].question
    print(f"Nearest stored questions to: {q!r}")
    for n in store.nearest(q, k=3):
        print(f"  {n.similarity:.2f}  {n.question}")
    return 0
