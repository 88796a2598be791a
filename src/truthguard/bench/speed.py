"""``truthguard bench speed``: how fast truthguard is from the first request.

Six measurements, each the median of ``--repeats`` runs (the warm grounding runs once):

* **cold start**: a fresh interpreter imports truthguard and checks one answer with the default
  (local) RefChecker; wall and CPU seconds, peak RSS, and whether torch was imported. The ONNX
  export is made beforehand (warm disk); ``sentence-transformers`` is timed once for comparison.
* **embedding throughput**: texts and tokens per second on CHALE answers and references, per
  backend, and the largest cosine gap between the ONNX and sentence-transformers vectors.
* **warm grounding**: the local RefChecker on ``bench grounding``'s perturbations
  (``--grounding-per-type``): ms per claim, wall and CPU, and per claim what the encoder did
  (texts, tokens, padding, runs, milliseconds in runs and their share of the CPU time).
* **KNN**: seconds per query question over 1k and 10k stored questions (random unit vectors:
  search time does not depend on content): ``ArtifactStore.nearest`` (an exact search over its
  in-memory copy of the questions), Chroma's HNSW query on the same collection and a bare
  numpy search, next to the FEWL paper's 2.25 / 2.51 ms; plus the batched embedding of a
  question.
* **single checks with scripted models** of fixed latency ``--latency``: FEWL with a cold store
  (every reference answer to ask), warm (neighbours' answers stored: the question's own calls
  only) and repeated (nothing to ask); RefChecker's LLM pipeline on a 10-claim answer; Reverse
  Validation. Each wall time is reported as a ratio to its physical floor, the number of
  sequential model stages times the latency: every independent call goes out at once, so the
  floor is one latency per stage whatever the number of calls.
* **peak RSS** of this process.

The machine may be shared: read ratios, and CPU seconds next to wall seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

from truthguard._sync import run_sync

__all__ = ["HELP", "add_arguments", "format_table", "run"]

HELP = "cold start, embedding throughput, KNN, and single-check wall vs its floor (scripted)"

PAPER_KNN_MS = {1000: 2.25, 10000: 2.51}
"""Per-question KNN times the FEWL paper reports for 1k and 10k stored questions."""

_COLD_SCRIPT = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import truthguard
from truthguard.refchecker import RefChecker
t1 = time.perf_counter()
r = RefChecker().invoke({"question": "Where is Dubai?", "answer": "Dubai is in the UAE.",
                         "references": ["Dubai is a city in the United Arab Emirates (UAE)."]})
t2 = time.perf_counter()
ru = resource.getrusage(resource.RUSAGE_SELF)
peak = ru.ru_maxrss / 1024  # on Linux this starts at the parent's peak: prefer VmHWM
try:
    with open("/proc/self/status") as f:
        peak = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
except (OSError, StopIteration):
    pass
print(json.dumps({"import_seconds": t1 - t0, "first_check_seconds": t2 - t1,
                  "seconds": t2 - t0, "cpu_seconds": ru.ru_utime + ru.ru_stime,
                  "peak_rss_mib": peak, "label": r.label.value,
                  "torch_imported": "torch" in sys.modules}))
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--latency", type=float, default=0.3, help="scripted seconds per call")
    parser.add_argument(
        "--skip-sentence-transformers",
        action="store_true",
        help="do not time the sentence-transformers backend (its import takes seconds)",
    )
    parser.add_argument("--texts", type=int, default=256, help="texts in the throughput test")
    parser.add_argument(
        "--grounding-per-type",
        type=int,
        default=100,
        help="perturbations per type and variant in the warm grounding test (default: bench "
        "grounding's; fewer answers share fewer references, so more is encoded per claim; "
        "0: skip it)",
    )
    parser.add_argument(
        "--references",
        type=int,
        default=10_000,
        help="memory: local RefChecker checks, each on a reference never seen before, with the "
        "process's RSS along the way (default 10,000, about 10 minutes on 2 cores; 0: skip)",
    )
    parser.add_argument(
        "--first-token",
        type=float,
        default=1 / 3,
        help="for the streamed FEWL rows: first token after this share of --latency, the rest "
        "of the reply spread evenly until --latency (negative: leave those rows out)",
    )


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _current_rss_mib() -> float:
    """The process's resident memory now (Linux ``/proc``), else its peak so far."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError, AttributeError):
        return _rss_mib()


# -- cold start ---------------------------------------------------------------------------------


def _cold_once(backend: str) -> dict[str, Any]:
    env = {**os.environ, "TRUTHGUARD_EMBEDDING_BACKEND": backend}
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _COLD_SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["process_seconds"] = time.perf_counter() - started  # interpreter start included
    return row


def _light_backends() -> tuple[str, ...]:
    """The torch-free encoders this environment can run: OpenVINO (if installed) and ONNX."""
    from truthguard.embedding import openvino_installed

    return ("openvino", "onnx") if openvino_installed() else ("onnx",)


def cold_start(repeats: int, *, with_st: bool) -> dict[str, Any]:
    """Fresh-process figures per backend (medians), the ONNX export made beforehand."""
    from truthguard.similarity import EmbeddingSimilarity

    for name in _light_backends():  # the export (and OpenVINO's compiled copy) exist beforehand
        EmbeddingSimilarity(backend=name).warm_up()  # type: ignore[arg-type]
    out: dict[str, Any] = {}
    plan = [(name, repeats) for name in _light_backends()]
    plan.append(("sentence-transformers", 1 if with_st else 0))
    for backend, n in plan:
        if not n:
            continue
        rows = [_cold_once(backend) for _ in range(n)]
        keys = ("process_seconds", "import_seconds", "first_check_seconds", "cpu_seconds")
        out[backend] = {k: _median([r[k] for r in rows]) for k in keys}
        out[backend]["peak_rss_mib"] = max(r["peak_rss_mib"] for r in rows)
        out[backend]["torch_imported"] = any(r["torch_imported"] for r in rows)
        out[backend]["runs"] = n
    return out


# -- embedding ----------------------------------------------------------------------------------


def _sample_texts(data: str | None, n: int) -> list[str]:
    from truthguard.datasets import load_chale

    texts: list[str] = []
    for item in load_chale(data):
        texts += [item.long_answer, item.non_halu, item.question]
        if len(texts) >= n:
            break
    return texts[:n]


def embedding_throughput(texts: list[str], repeats: int, *, with_st: bool) -> dict[str, Any]:
    """Texts and tokens per second of each backend's encoder (no cache), and how far each
    backend's vectors are from the reference's (sentence-transformers, else ONNX)."""
    from truthguard.similarity import EmbeddingSimilarity

    onnx = EmbeddingSimilarity(backend="onnx")
    tokens = sum(len(e.ids) for e in onnx.model.tokenizer.encode_batch(texts))
    out: dict[str, Any] = {"texts": len(texts), "tokens": tokens}
    vectors: dict[str, np.ndarray] = {}
    names = [*_light_backends(), "onnx-int8", *(["sentence-transformers"] if with_st else [])]
    for name in names:
        sim = EmbeddingSimilarity(backend=name)  # type: ignore[arg-type]
        sim.warm_up()
        walls, cpus = [], []
        for _ in range(repeats):
            c0, t0 = time.process_time(), time.perf_counter()
            vectors[name] = np.asarray(
                sim.model.encode(texts, batch_size=sim.batch_size, normalize_embeddings=True),
                dtype=np.float32,
            )
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        wall = _median(walls)
        out[name] = {
            "texts_per_second": len(texts) / wall,
            "tokens_per_second": tokens / wall,
            "cpu_ms_per_1k_tokens": 1000 * _median(cpus) / tokens * 1000,
            "threads": getattr(sim.model, "threads", None),
            "precision": getattr(sim.model, "precision", "i8" if name == "onnx-int8" else "f32"),
        }
    reference = "sentence-transformers" if with_st else "onnx"
    out["reference"] = reference
    for name in names:
        if name != reference:
            cos = np.einsum("ij,ij->i", vectors[name], vectors[reference])
            out[name]["max_cosine_gap"] = float(np.max(1.0 - cos))
    out["default"] = EmbeddingSimilarity().backend
    return out


# -- warm grounding ------------------------------------------------------------------------------


def grounding_speed(inputs: list[dict[str, Any]], *, batch: int = 64) -> dict[str, Any]:
    """The local RefChecker on ``inputs`` as ``bench grounding`` runs it (model loaded, vector
    cache as it is): ms per claim, wall and CPU, and what its encoder did per claim."""
    from truthguard.bench.grounding import _n_claims, _run_all
    from truthguard.refchecker import RefChecker
    from truthguard.similarity import get_default_similarity

    detector = RefChecker(batch_concurrency=2)
    model = get_default_similarity().model  # loaded outside the timing
    stats = getattr(model, "stats", None)
    before = dict(stats) if stats is not None else None
    started, cpu = time.perf_counter(), time.process_time()
    results = run_sync(_run_all(detector, inputs, batch, False))
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    claims = max(_n_claims(results), 1)
    out: dict[str, Any] = {
        "answers": len(inputs),
        "claims": claims,
        "ms_per_claim": 1000 * seconds / claims,
        "cpu_ms_per_claim": 1000 * cpu_seconds / claims,
        "threads": getattr(model, "threads", None),
    }
    if stats is not None and before is not None:
        d = {k: stats[k] - before[k] for k in before}
        out.update(
            texts_encoded_per_claim=d["texts"] / claims,
            tokens_per_claim=d["tokens"] / claims,
            padding_share=1 - d["tokens"] / max(d["padded_tokens"], 1),
            runs_per_claim=d["runs"] / claims,
            token_vectors_kept_per_claim=d["kept_hits"] / claims,
            encoder_ms_per_claim=1000 * d["run_seconds"] / claims,
            encoder_cpu_ms_per_claim=1000 * d["run_cpu_seconds"] / claims,
            # one session thread runs the whole graph on the calling thread: all its CPU time
            encoder_share_of_cpu=(
                d["run_cpu_seconds"] / max(cpu_seconds, 1e-9) if out["threads"] == 1 else None
            ),
        )
    return out


def _grounding_inputs(data: str | None, per_type: int) -> list[dict[str, Any]]:
    from truthguard.bench.grounding import build_perturbations, strip_html
    from truthguard.datasets import load_chale

    items = load_chale(data)
    references = [strip_html(it.long_answer) for it in items]
    return [
        {
            "question": items[p["ref_id"]].question,
            "answer": p["answer"],
            "references": [p["reference"]],
        }
        for p in build_perturbations(references, per_type=per_type, seed=0, passages=False)
    ]


# -- KNN ----------------------------------------------------------------------------------------


def _one_blas_thread() -> Any:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: timings are then whatever the BLAS decides
        return contextlib.nullcontext()
    return threadpool_limits(1)


def knn(sizes: tuple[int, ...] = (1000, 10000), queries: int = 50) -> dict[str, Any]:
    """Per-question search time over ``n`` stored questions: ``ArtifactStore.nearest`` (what
    FEWL calls), Chroma's own HNSW query on the same collection, and a bare numpy search."""
    from truthguard.similarity import get_default_similarity
    from truthguard.store import ArtifactStore

    rng = np.random.default_rng(0)
    dim = get_default_similarity().dimension
    out: dict[str, Any] = {}
    for n in sizes:
        vecs = rng.standard_normal((n, dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        qs = rng.standard_normal((queries, dim)).astype(np.float32)
        qs /= np.linalg.norm(qs, axis=1, keepdims=True)
        store = ArtifactStore.in_memory()
        # Our own vectors (search time does not depend on content): no model involved.
        store.add_questions([f"stored question {i}" for i in range(n)], embeddings=vecs)
        store.nearest("warm", 25, max_similarity=0.8, embedding=qs[0])  # loads the copy
        t0 = time.perf_counter()  # as users run it: numpy's default BLAS threads
        for q in qs:
            store.nearest("query", 25, max_similarity=0.8, embedding=q)
        nearest = (time.perf_counter() - t0) / queries
        with _one_blas_thread():  # a threaded BLAS on a busy machine waits for cores
            t0 = time.perf_counter()
            for q in qs:
                sims = vecs @ q
                top = np.argpartition(-sims, 25)[:25]
                top[np.argsort(-sims[top])]
            exact = (time.perf_counter() - t0) / queries
        collection = store.client.get_collection(f"{store.namespace}_questions")
        t0 = time.perf_counter()
        for q in qs:
            collection.query(query_embeddings=[q.tolist()], n_results=52, include=["distances"])
        chroma = (time.perf_counter() - t0) / queries
        out[str(n)] = {
            "store_ms": 1000 * nearest,
            "chroma_hnsw_ms": 1000 * chroma,
            "exact_numpy_ms": 1000 * exact,
            "paper_ms": PAPER_KNN_MS.get(n),
        }
        store.client.delete_collection(f"{store.namespace}_questions")
        store.client.delete_collection(f"{store.namespace}_artifacts")
    return out


def question_embedding_ms(questions: list[str]) -> float:
    """Batched embedding time per new question (cache bypassed)."""
    from truthguard.similarity import get_default_similarity

    model = get_default_similarity().model
    t0 = time.perf_counter()
    model.encode(questions, batch_size=32, normalize_embeddings=True)
    return 1000 * (time.perf_counter() - t0) / len(questions)


# -- single checks with scripted models ---------------------------------------------------------


def _pairs_text(question: str, n: int = 25) -> str:
    lines = []
    for i in range(1, n + 1):
        lines.append(
            f"{i}. Wrong: claim {i} about {question} names the wrong person, year {1800 + i}."
        )
        lines.append(f"{i}. Corrected: claim {i} about {question} holds for the year {1900 + i}.")
    return "\n".join(lines)


def _fewl_model(name: str, latency: float, first_token: float | None = None) -> Any:
    from truthguard.testing import ScriptedChatModel

    def script(prompt: str) -> str:
        question = prompt.rsplit("Question:", 1)[-1].strip().splitlines()[0]
        if "deliberately false" in prompt:
            return _pairs_text(question)
        return f"{name} says: the answer to '{question}' is in the record."

    return ScriptedChatModel(
        model_name=name, script=script, latency=latency, first_token_latency=first_token
    )


async def _fewl_checks(
    questions: list[str],
    latency: float,
    similarity: Any = None,
    *,
    first_token: float | None = None,
    suffix: str = "",
) -> dict[str, Any]:
    from truthguard.fewl import FEWL
    from truthguard.store import ArtifactStore

    store = ArtifactStore.in_memory()
    # K=25 neighbours out of 25 (then 26) stored questions: the warm check's neighbours are
    # exactly those the cold check asked about, so it makes only its own 4 calls.
    store.add_questions(questions[2:27])
    models = [_fewl_model(f"ref{i}", latency, first_token) for i in range(3)]
    extra = {"similarity": similarity} if similarity is not None else {}
    detector = FEWL(reference_models=models, store=store, max_neighbor_similarity=None, **extra)
    out: dict[str, Any] = {}
    for name, question, answer in (
        ("fewl_cold", questions[0], "It happened in the record."),
        ("fewl_warm", questions[1], "It is in the record."),
        ("fewl_repeat", questions[1], "The record shows it."),
    ):
        c0, t0 = time.process_time(), time.perf_counter()
        result = await detector.acheck(question, answer)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0  # scripted models sleep: this is truthguard's own work
        if result.usage.llm_calls and result.label.value == "invalid":
            raise RuntimeError(f"{name}: {result.explanation}")
        out[name + suffix] = {
            "seconds": wall,
            "calls": result.usage.llm_calls,
            "stages": 1 if result.usage.llm_calls else 0,
            "cpu_seconds": cpu,
        }
    if suffix:  # a repeated check makes no call: streaming changes nothing there
        del out["fewl_repeat" + suffix]
    store.client.delete_collection(f"{store.namespace}_questions")
    store.client.delete_collection(f"{store.namespace}_artifacts")
    return out


_CLAIMS = [
    ("Eiffel Tower", "located in", "Paris"),
    ("Eiffel Tower", "completed in", "1889"),
    ("Eiffel Tower", "designed by", "Gustave Eiffel's company"),
    ("Eiffel Tower", "height", "330 metres"),
    ("Eiffel Tower", "made of", "wrought iron"),
    ("Eiffel Tower", "built for", "the 1889 World's Fair"),
    ("Eiffel Tower", "nickname", "La Dame de Fer"),
    ("Eiffel Tower", "visited by", "millions of people each year"),
    ("Eiffel Tower", "stands on", "the Champ de Mars"),
    ("Eiffel Tower", "tallest structure until", "1930"),
]
_PASSAGE = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. It was "
    "designed and built by Gustave Eiffel's company for the 1889 World's Fair and completed in "
    "1889. It is 330 metres tall and was the tallest structure in the world until 1930. Nicknamed "
    "La Dame de Fer, it is visited by millions of people each year."
)


async def _refchecker_check(latency: float, *, joint: bool) -> dict[str, Any]:
    from truthguard.refchecker import LLMChecker, LLMExtractor, RefChecker
    from truthguard.testing import ScriptedChatModel

    triplets = "\n".join(f'("{s}", "{p}", "{o}")' for s, p, o in _CLAIMS)
    extractor = ScriptedChatModel(model_name="extractor", default=triplets, latency=latency)
    n = len(_CLAIMS)
    checker = ScriptedChatModel(
        model_name="checker",
        default="\n".join(f"{i}. Entailment" for i in range(1, n + 1)) if joint else "Entailment",
        latency=latency,
    )
    detector = RefChecker(
        extractor=LLMExtractor(model=extractor),
        checker=LLMChecker(model=checker, joint=joint, joint_size=n),
    )
    t0 = time.perf_counter()
    result = await detector.ainvoke(
        {
            "question": "Tell me about the Eiffel Tower.",
            "answer": "The Eiffel Tower is in Paris.",  # scripted: the extractor ignores it
            "references": [_PASSAGE],
        }
    )
    wall = time.perf_counter() - t0
    if result.label.value == "invalid":
        raise RuntimeError(f"refchecker: {result.explanation}")
    return {"seconds": wall, "calls": result.usage.llm_calls, "stages": 2}


async def _rv_check(latency: float) -> dict[str, Any]:
    from truthguard.rv import ReverseValidation
    from truthguard.testing import ScriptedChatModel

    model = ScriptedChatModel(
        script={
            "numbered list": "1. Genus of trees\n2. Simaroubaceae family\n3. Tree of heaven",
            "Which entity fits": "The entity is Ailanthus, which meets 100% of the requirements.",
        },
        latency=latency,
    )
    detector = ReverseValidation(model=model, variant="em")
    passage = "Ailanthus is a genus of trees in the family Simaroubaceae, the tree of heaven."
    t0 = time.perf_counter()
    result = await detector.ainvoke({"answer": passage, "entity": "Ailanthus"})
    wall = time.perf_counter() - t0
    if result.label.value == "invalid":
        raise RuntimeError(f"rv: {result.explanation}")
    return {"seconds": wall, "calls": result.usage.llm_calls, "stages": 2}


def single_checks(
    questions: list[str],
    latency: float,
    repeats: int,
    *,
    similarity: Any = None,
    first_token: float | None = None,
) -> dict[str, Any]:
    """Median wall of each single check and its ratio to the floor (stages x latency).

    FEWL runs twice: with models that send each reply whole after ``latency`` and, when
    ``first_token`` is given, with models that stream it from ``first_token`` until ``latency``
    (as generating models do; rows ``*_streamed``). ``similarity`` replaces FEWL's default
    (packaged MiniLM) backend, for quick runs.
    """
    # One unmeasured pass first: first-call costs (imports, prompt templates) are cold start.
    run_sync(_fewl_checks(questions[-30:], 0.0, similarity))
    run_sync(_refchecker_check(0.0, joint=False))
    run_sync(_rv_check(0.0))
    runs: dict[str, list[dict[str, Any]]] = {}
    for r in range(repeats):
        qs = questions[r * 30 : (r + 1) * 30]  # fresh questions per repeat: nothing stored yet
        for name, row in run_sync(_fewl_checks(qs, latency, similarity)).items():
            runs.setdefault(name, []).append(row)
        if first_token is not None:
            qs = questions[(repeats + r) * 30 : (repeats + r + 1) * 30]
            streamed = _fewl_checks(
                qs, latency, similarity, first_token=first_token, suffix="_streamed"
            )
            for name, row in run_sync(streamed).items():
                runs.setdefault(name, []).append(row)
        runs.setdefault("refchecker_llm", []).append(
            run_sync(_refchecker_check(latency, joint=False))
        )
        runs.setdefault("refchecker_llm_joint", []).append(
            run_sync(_refchecker_check(latency, joint=True))
        )
        runs.setdefault("rv_em", []).append(run_sync(_rv_check(latency)))
    out: dict[str, Any] = {}
    for name, rows in runs.items():
        wall = _median([r["seconds"] for r in rows])
        floor = rows[0]["stages"] * latency
        out[name] = {
            "seconds": wall,
            "calls": rows[0]["calls"],
            "stages": rows[0]["stages"],
            "ratio_to_floor": wall / floor if floor else None,
            "overhead_ms": 1000 * (wall - floor),
            "overhead_pct": 100 * (wall - floor) / floor if floor else None,
        }
        if "cpu_seconds" in rows[0]:
            out[name]["cpu_ms"] = 1000 * _median([r["cpu_seconds"] for r in rows])
    return out


# -- the benchmark ------------------------------------------------------------------------------


def _distinct_sentences(n_chars: int, salt: str) -> str:
    """Distinct factual sentences (nothing cached from an earlier size), ``n_chars`` long."""
    out, size, i = [], 0, 0
    while size < n_chars:
        s = f"The {salt} tower number {i} was finished in {1700 + i % 300} by builder {i * 7}."
        out.append(s)
        size += len(s) + 1
        i += 1
    return " ".join(out)


def size_scaling(
    answer_sizes: tuple[int, ...] = (5_000, 20_000, 50_000),
    context_sizes: tuple[int, ...] = (20_000, 50_000, 100_000),
) -> dict[str, Any]:
    """Seconds of one local RefChecker check against answer length (a short context) and
    against context length (a one-sentence answer; each context seen for the first time), and
    of an answer over ``max_answer_chars`` (``too_large``, no work)."""
    from truthguard.refchecker import RefChecker

    checker = RefChecker(max_answer_chars=None, max_context_chars=None).warm_up()
    short_ctx = [_distinct_sentences(2_000, "short")]
    rows: list[dict[str, Any]] = []

    def timed(kind: str, answer: str, contexts: list[str], detector: Any = checker) -> None:
        started, cpu = time.perf_counter(), time.process_time()
        r = detector.invoke({"question": "Which towers?", "answer": answer, "contexts": contexts})
        rows.append({
            "kind": kind, "answer_chars": len(answer),
            "context_chars": sum(len(c) for c in contexts),
            "seconds": time.perf_counter() - started, "cpu_seconds": time.process_time() - cpu,
            "claims": len(r.details.get("claims", [])), "reason": r.details.get("reason"),
        })  # fmt: skip

    timed("answer", _distinct_sentences(200, "warm"), short_ctx)  # first use out of the figures
    rows.clear()
    for n in answer_sizes:
        timed("answer", _distinct_sentences(n, f"a{n}"), short_ctx)
    for n in context_sizes:
        timed(
            "context", "The tower number 3 was finished in 1703.", [_distinct_sentences(n, f"c{n}")]
        )
    limited = RefChecker()
    timed(
        "over limit", _distinct_sentences(limited.max_answer_chars + 1, "big"), short_ctx, limited
    )  # type: ignore[operator]
    return {
        "max_answer_chars": limited.max_answer_chars,
        "max_context_chars": limited.max_context_chars,
        "rows": rows,
    }


def references_memory(n: int, *, points: int = 5) -> dict[str, Any]:
    """RSS while a local RefChecker checks ``n`` answers, each against a reference it has not
    seen (five sentences, the answer its first): what the process's caches grow to when nothing
    recurs. ``points`` readings after the first check (the models loaded) and at even steps,
    each with the bytes the caches of the memory budget hold (see :mod:`truthguard.memory`)."""
    from truthguard.memory import cache_usage, memory_budget
    from truthguard.refchecker import RefChecker

    checker = RefChecker()

    def one(i: int) -> None:
        reference = _distinct_sentences(400, f"ref{i}")
        answer = reference.split(". ")[0] + "."
        checker.invoke({"question": "Which towers?", "answer": answer, "contexts": [reference]})

    def caches_mib() -> float:
        return sum(row["bytes"] for row in cache_usage().values()) / 2**20

    def spacy_strings() -> int:  # what spaCy's vocabulary holds, its open memory zone included
        from truthguard.refchecker import structure

        return len(structure._pipeline().vocab.strings)

    one(-1)  # the models are loaded: the base the caches grow from
    rows = [
        {
            "checks": 0,
            "rss_mib": _current_rss_mib(),
            "caches_mib": caches_mib(),
            "spacy_strings": spacy_strings(),
            "ms_per_check": None,
        }
    ]
    step = max(1, n // max(1, points))
    started = time.perf_counter()
    for done in range(1, n + 1):
        one(done)
        if done % step == 0 or done == n:
            ms = 1000 * (time.perf_counter() - started) / done
            rows.append(
                {
                    "checks": done,
                    "rss_mib": _current_rss_mib(),
                    "caches_mib": caches_mib(),
                    "spacy_strings": spacy_strings(),
                    "ms_per_check": ms,
                }
            )
    grown = rows[-1]["rss_mib"] - rows[0]["rss_mib"]
    half = next(r for r in rows if r["checks"] >= n / 2)
    late = rows[-1]["rss_mib"] - half["rss_mib"]
    return {
        "references": n,
        "budget_mib": memory_budget(),
        "rows": rows,
        "kib_per_reference": 1024 * grown / max(1, n),
        "kib_per_reference_second_half": 1024 * late / max(1, n - half["checks"]),
        "caches": cache_usage(),
        "spacy_zones_closed": _spacy_zones_closed(),
    }


def _spacy_zones_closed() -> int:
    from truthguard.refchecker import structure

    return structure._parser().closed


def run(args: argparse.Namespace) -> dict[str, Any]:
    from truthguard.datasets import load_chale

    with_st = not args.skip_sentence_transformers
    repeats = max(1, args.repeats)
    result: dict[str, Any] = {
        "latency": args.latency,
        "repeats": repeats,
        "cores": os.cpu_count(),
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }
    result["cold_start"] = cold_start(repeats, with_st=with_st)
    texts = _sample_texts(args.data, args.texts)
    result["embedding"] = embedding_throughput(texts, repeats, with_st=with_st)
    per_type = getattr(args, "grounding_per_type", 100)
    if per_type > 0:
        result["grounding"] = grounding_speed(_grounding_inputs(args.data, per_type))
    questions = [it.question for it in load_chale(args.data)]
    result["question_embedding_ms"] = question_embedding_ms(questions[-200:])
    result["knn"] = knn()
    share = getattr(args, "first_token", 1 / 3)
    first_token = args.latency * share if share is not None and share >= 0 else None
    result["first_token"] = first_token
    result["checks"] = single_checks(questions, args.latency, repeats, first_token=first_token)
    result["size"] = size_scaling()
    references = getattr(args, "references", 0) or 0
    if references > 0:
        result["memory"] = references_memory(references)
    result["peak_rss_mib"] = _rss_mib()
    if hasattr(os, "getloadavg"):
        result["load_average_after"] = os.getloadavg()[0]
    return result


def format_table(result: dict[str, Any]) -> str:
    """The figures of :func:`run` as a few short tables."""
    lat = result["latency"]
    lines = [
        f"{result['cores']} cores, load average {result['load_average']:.1f} at start "
        f"(shared machine: read ratios and CPU seconds); medians of {result['repeats']} runs",
        "",
        "cold start (fresh process: import + first checked answer, local RefChecker)",
        f"  {'backend':<22} {'wall s':>7} {'import s':>9} {'check s':>8} {'cpu s':>6} "
        f"{'RSS MiB':>8} torch",
    ]
    for name, row in result["cold_start"].items():
        lines.append(
            f"  {name:<22} {row['process_seconds']:>7.2f} {row['import_seconds']:>9.2f} "
            f"{row['first_check_seconds']:>8.2f} {row['cpu_seconds']:>6.2f} "
            f"{row['peak_rss_mib']:>8.0f} {'yes' if row['torch_imported'] else 'no'}"
        )
    emb = result["embedding"]
    ref = emb.get("reference", "sentence-transformers")
    lines += [
        "",
        f"embedding throughput ({emb['texts']} CHALE texts, {emb['tokens']} tokens; gap = "
        f"largest 1 - cosine to {ref}; default backend: {emb.get('default', '-')})",
    ]
    for name in ("openvino", "onnx", "onnx-int8", "sentence-transformers"):
        if name in emb:
            row = emb[name]
            gap = f"{row['max_cosine_gap']:.1e}" if "max_cosine_gap" in row else "-"
            lines.append(
                f"  {name:<22} {row['texts_per_second']:>7.1f} texts/s "
                f"{row['tokens_per_second']:>8.0f} tokens/s "
                f"{row['cpu_ms_per_1k_tokens']:>6.0f} CPU ms per 1k tokens "
                f"{row.get('precision', 'f32'):>5} gap {gap}"
            )
    g = result.get("grounding")
    if g:
        lines += [
            "",
            f"warm grounding, local RefChecker ({g['answers']} perturbed CHALE answers, "
            f"{g['claims']} claims; encoder threads {g['threads']})",
            f"  {g['ms_per_claim']:.1f} ms/claim wall, {g['cpu_ms_per_claim']:.1f} CPU ms/claim",
        ]
        if "texts_encoded_per_claim" in g:
            share = g["encoder_share_of_cpu"]
            lines += [
                f"  encoder per claim: {g['texts_encoded_per_claim']:.2f} texts, "
                f"{g['tokens_per_claim']:.0f} tokens ({100 * g['padding_share']:.0f}% padding "
                f"on top), {g['runs_per_claim']:.2f} runs; "
                f"{g['token_vectors_kept_per_claim']:.2f} token-vector texts kept from encode",
                f"  in runs per claim: {g['encoder_ms_per_claim']:.1f} ms wall (summed over "
                f"encoder threads), {g['encoder_cpu_ms_per_claim']:.1f} CPU ms of their callers"
                + (f" ({100 * share:.0f}% of the CPU time)" if share is not None else ""),
            ]
    lines += [
        "",
        f"KNN per question (k=25; question embedding {result['question_embedding_ms']:.1f} ms "
        "batched)",
        "  store = ArtifactStore.nearest (exact, in-memory copy of the questions); chroma = its",
        "  HNSW query on the same collection; numpy = a bare matrix product and top-k",
        f"  {'stored':>7} {'store ms':>9} {'chroma ms':>10} {'numpy ms':>9} {'paper ms':>9}",
    ]
    for n, row in result["knn"].items():
        lines.append(
            f"  {n:>7} {row['store_ms']:>9.2f} {row['chroma_hnsw_ms']:>10.2f} "
            f"{row['exact_numpy_ms']:>9.2f} "
            f"{row['paper_ms'] if row['paper_ms'] is not None else '-':>9}"
        )
    first = result.get("first_token")
    lines += [
        "",
        f"single check, scripted models of {lat:g} s per call (floor = stages x latency)",
        "  (*_streamed: replies stream from "
        + (f"{first:g} s to {lat:g} s)" if first is not None else "- : not run)"),
        f"  {'check':<22} {'calls':>5} {'stages':>6} {'wall s':>7} {'x floor':>8} "
        f"{'extra ms':>9} {'extra %':>8} {'CPU ms':>7}",
    ]
    for name, row in result["checks"].items():
        ratio = f"{row['ratio_to_floor']:.2f}" if row["ratio_to_floor"] is not None else "-"
        pct = f"{row['overhead_pct']:.1f}" if row.get("overhead_pct") is not None else "-"
        cpu = f"{row['cpu_ms']:.0f}" if "cpu_ms" in row else "-"
        lines.append(
            f"  {name:<22} {row['calls']:>5} {row['stages']:>6} {row['seconds']:>7.3f} "
            f"{ratio:>8} {row['overhead_ms']:>9.0f} {pct:>8} {cpu:>7}"
        )
    size = result.get("size")
    if size:
        lines += [
            "",
            "local RefChecker, time per check against length (limits: max_answer_chars "
            f"{size['max_answer_chars']:,}, max_context_chars {size['max_context_chars']:,})",
            f"  {'varied':<22} {'answer chars':>12} {'context chars':>13} {'claims':>6} "
            f"{'wall s':>7} {'cpu s':>6} {'ms/1k chars':>11}",
        ]
        for row in size["rows"]:
            varied = row["answer_chars"] if row["kind"] == "answer" else row["context_chars"]
            per = f"{1000 * row['seconds'] / max(1, varied) * 1000:.1f}"
            kind = row["kind"] + (f" ({row['reason']})" if row.get("reason") else "")
            lines.append(
                f"  {kind:<22} {row['answer_chars']:>12,} {row['context_chars']:>13,} "
                f"{row['claims']:>6} {row['seconds']:>7.2f} {row['cpu_seconds']:>6.2f} {per:>11}"
            )
    memory = result.get("memory")
    if memory:
        lines += [
            "",
            f"local RefChecker on {memory['references']:,} references never seen before: RSS "
            f"(the first row after the models loaded), {memory['kib_per_reference']:.0f} KiB "
            f"more per reference ({memory['kib_per_reference_second_half']:.0f} over the second "
            f"half); caches: what the caches of the {memory['budget_mib']:.0f} MiB memory budget "
            "hold; spaCy strings: its vocabulary's, freed as its memory zones close "
            f"({memory.get('spacy_zones_closed', 0)} closed)",
            f"  {'checks':>8} {'RSS MiB':>8} {'caches MiB':>11} {'spaCy strings':>14} "
            f"{'ms/check':>9}",
        ]
        for row in memory["rows"]:
            ms = "-" if row["ms_per_check"] is None else f"{row['ms_per_check']:.1f}"
            lines.append(
                f"  {row['checks']:>8,} {row['rss_mib']:>8.0f} {row['caches_mib']:>11.1f} "
                f"{row.get('spacy_strings', 0):>14,} {ms:>9}"
            )
        for name, use in sorted(memory["caches"].items()):
            lines.append(
                f"  {name:<16} {use['entries']:>8,} entries {use['bytes'] / 2**20:>7.1f} MiB "
                f"of {use['max_bytes'] / 2**20:.1f}"
            )
    lines += ["", f"peak RSS of this process: {result['peak_rss_mib']:.0f} MiB"]
    return "\n".join(lines)
