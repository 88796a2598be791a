"""``truthguard bench speed``: the scripted single checks, KNN, the table (no timing asserts)."""

from __future__ import annotations

from truthguard.bench import available
from truthguard.bench.speed import format_table, knn, single_checks
from truthguard.similarity import LexicalSimilarity

TOPICS = ["rivers", "poets", "planets", "bridges", "operas", "volcanoes", "chess", "glaciers"]
QUESTIONS = [
    f"Which of the {t} is number {i} on list {i * 7 + 3}?" for i in range(8) for t in TOPICS
]


def test_registered():
    assert "speed" in available() and not isinstance(available()["speed"], Exception)


def test_single_checks_make_the_expected_calls(embedder):
    checks = single_checks(
        QUESTIONS, latency=0.01, repeats=1, similarity=LexicalSimilarity(), first_token=0.003
    )
    calls = {name: row["calls"] for name, row in checks.items()}
    assert calls == {
        "fewl_cold": 3 * (1 + 25) + 1,  # every reference answer to ask
        "fewl_warm": 3 + 1,  # neighbours' answers stored: only the question's own calls
        "fewl_repeat": 0,
        "fewl_cold_streamed": 3 * (1 + 25) + 1,  # the same calls, with replies streamed
        "fewl_warm_streamed": 3 + 1,
        "refchecker_llm": 1 + 10,
        "refchecker_llm_joint": 1 + 1,
        "rv_em": 2,
    }
    assert checks["fewl_cold"]["stages"] == 1 and checks["rv_em"]["stages"] == 2
    assert checks["fewl_repeat"]["ratio_to_floor"] is None
    assert checks["fewl_warm"]["cpu_ms"] > 0 and checks["fewl_warm"]["overhead_pct"] is not None
    for row in checks.values():
        assert row["seconds"] > 0


def test_knn_reports_both_searches():
    out = knn(sizes=(300,), queries=3)
    assert set(out["300"]) == {"store_ms", "chroma_hnsw_ms", "exact_numpy_ms", "paper_ms"}
    assert out["300"]["paper_ms"] is None and out["300"]["store_ms"] > 0


def test_table_shows_every_section():
    result = {
        "latency": 0.3,
        "repeats": 3,
        "cores": 2,
        "load_average": 7.5,
        "cold_start": {
            "onnx": {
                "process_seconds": 1.9,
                "import_seconds": 1.1,
                "first_check_seconds": 0.5,
                "cpu_seconds": 1.6,
                "peak_rss_mib": 250.0,
                "torch_imported": False,
                "runs": 3,
            }
        },
        "embedding": {
            "texts": 10,
            "tokens": 300,
            "openvino": {
                "texts_per_second": 90.0,
                "tokens_per_second": 2700.0,
                "cpu_ms_per_1k_tokens": 230.0,
                "threads": 2,
                "precision": "bf16",
                "max_cosine_gap": 4.4e-5,
            },
            "onnx": {
                "texts_per_second": 50.0,
                "tokens_per_second": 1500.0,
                "cpu_ms_per_1k_tokens": 420.0,
                "threads": 1,
                "precision": "f32",
            },
            "reference": "onnx",
            "default": "openvino",
        },
        "question_embedding_ms": 5.0,
        "knn": {
            "1000": {
                "store_ms": 0.2,
                "chroma_hnsw_ms": 3.0,
                "exact_numpy_ms": 0.1,
                "paper_ms": 2.25,
            }
        },
        "checks": {
            "rv_em": {
                "seconds": 0.61,
                "calls": 2,
                "stages": 2,
                "ratio_to_floor": 1.02,
                "overhead_ms": 10.0,
            },
        },
        "peak_rss_mib": 600.0,
    }
    table = format_table(result)
    for needle in ("cold start", "onnx", "torch", "KNN", "2.25", "rv_em", "1.02", "600 MiB"):
        assert needle in table
    assert "bf16 gap 4.4e-05" in table and "default backend: openvino" in table


def test_throughput_compares_every_light_backend_with_onnx(embedder):
    from truthguard.bench.speed import _light_backends, embedding_throughput

    texts = ["Paris is the capital of France.", "a cat", "The tower was finished in 1889."]
    out = embedding_throughput(texts, 1, with_st=False)
    assert out["reference"] == "onnx" and out["default"] == embedder.backend
    assert out["tokens"] > len(texts) and "max_cosine_gap" not in out["onnx"]
    for name in _light_backends():
        assert out[name]["texts_per_second"] > 0
        if name != "onnx":
            assert 0 <= out[name]["max_cosine_gap"] < 1e-3
    int8 = out["onnx-int8"]  # opt-in int8 weights: timed, and further from float32
    assert int8["precision"] == "i8" and 1e-5 < int8["max_cosine_gap"] < 0.05


def test_size_scaling_reports_time_against_answer_and_context_length(embedder):
    from truthguard.bench.speed import size_scaling

    out = size_scaling(answer_sizes=(500, 1_500), context_sizes=(3_000,))
    kinds = [(r["kind"], r["reason"]) for r in out["rows"]]
    assert kinds == [
        ("answer", None),
        ("answer", None),
        ("context", None),
        ("over limit", "too_large"),
    ]
    answers = [r for r in out["rows"] if r["kind"] == "answer"]
    assert answers[0]["claims"] < answers[1]["claims"]  # longer answer, more claims checked
    assert (
        out["rows"][-1]["claims"] == 0 and out["rows"][-1]["answer_chars"] > out["max_answer_chars"]
    )
    table = format_table({**_minimal_result(), "size": out})
    assert "time per check against length" in table and "over limit (too_large)" in table


def _minimal_result() -> dict:
    return {
        "latency": 0.3, "repeats": 1, "cores": 2, "load_average": 1.0, "cold_start": {},
        "embedding": {"texts": 1, "tokens": 1}, "question_embedding_ms": 1.0, "knn": {},
        "checks": {}, "peak_rss_mib": 1.0,
    }  # fmt: skip


def test_grounding_speed_reports_what_the_encoder_did_per_claim(embedder):
    from truthguard.bench.speed import grounding_speed

    ref = "The bridge opened in 1932. It spans the harbour. Its arch is 503 metres long."
    answers = ["The bridge opened in 1932.", "The bridge opened in 1947.", "Its arch is long."]
    inputs = [{"question": "When?", "answer": a, "references": [ref]} for a in answers]
    embedder.model.forget_hidden_states()
    out = grounding_speed(inputs, batch=2)
    assert out["answers"] == 3 and out["claims"] == 3
    assert out["ms_per_claim"] > 0 and out["cpu_ms_per_claim"] > 0
    assert 0 <= out["texts_encoded_per_claim"] <= 2  # 3 claims + 3 sentences at most
    assert out["tokens_per_claim"] >= out["texts_encoded_per_claim"]
    assert 0 <= out["padding_share"] < 1 and out["encoder_cpu_ms_per_claim"] >= 0
    table = format_table({**_minimal_result(), "grounding": out})
    assert "warm grounding" in table and "texts," in table


def test_references_memory_reports_rss_as_references_accumulate(embedder):
    from truthguard.bench.speed import references_memory

    out = references_memory(6, points=3)
    assert [r["checks"] for r in out["rows"]] == [0, 2, 4, 6]
    assert all(r["rss_mib"] > 0 for r in out["rows"]) and out["rows"][0]["ms_per_check"] is None
    assert all(r["ms_per_check"] > 0 for r in out["rows"][1:])
    assert all(0 < r["caches_mib"] <= out["budget_mib"] for r in out["rows"])
    assert out["caches"]["parses"]["bytes"] > 0
    assert all(r["spacy_strings"] > 0 for r in out["rows"]) and out["spacy_zones_closed"] >= 0
    table = format_table({**_minimal_result(), "memory": out})
    assert "spaCy strings" in table and "memory zones close" in table
    assert "on 6 references never seen before" in table and "KiB more per reference" in table
    assert f"{out['budget_mib']:.0f} MiB memory budget" in table and "encoder states" in table
