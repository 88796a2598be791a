"""The Ray engine gives the local engine's results (one local Ray for the whole module)."""

from __future__ import annotations

import json

import pytest

ray = pytest.importorskip(
    "ray", reason="the Ray engine needs ray[data]: pip install 'truthguard[ray]'"
)

from truthguard.evaluation import evaluate, read_results  # noqa: E402

CONFIG = {
    "detectors": {
        "rv": {
            "type": "reverse_validation",
            "model": {
                "provider": "scripted",
                "kwargs": {"script": {"Generate": "Which island is this?"}, "default": "Hoy"},
            },
            "options": {"variant": "qg", "rebuild_leaks": False},
        },
        "fake": {"type": "fake", "options": {"score": 0.3}, "threshold": 0.5},
    },
    "ray": {"workers": 2, "batch_size": 2},
}


@pytest.fixture(scope="module")
def local_ray():
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


def _comparable(out):
    keep = ("id", "detector", "score", "label", "passing", "explanation", "details")
    rows = sorted(read_results(out), key=lambda r: (r["index"], r["detector"]))
    return [{k: r[k] for k in keep} | {"calls": r["usage"]["llm_calls"]} for r in rows]


def test_ray_engine_matches_the_local_engine_and_resumes(local_ray, tmp_path):
    entities = ["Hoy", "Ailanthus", "Basquiat", "Hoy Island", "Orkney"]
    rows = [
        {"question": f"Tell me about {e}.", "answer": f"{e} is a place.", "entity": e}
        for e in entities
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    local = evaluate(data, CONFIG, tmp_path / "local", progress=False)
    # Three rows done locally first: Ray resumes the same output and scores only the rest.
    evaluate(data, CONFIG, tmp_path / "ray", limit=3, progress=False)
    on_ray = evaluate(data, CONFIG, tmp_path / "ray", engine="ray", progress=False)
    assert on_ray["run"]["scored_now"] == 4 and on_ray["run"]["skipped"] == 6
    assert on_ray["run"]["engine"] == "ray"
    assert _comparable(tmp_path / "ray") == _comparable(tmp_path / "local")
    assert on_ray["detectors"]["rv"]["flagged"] == local["detectors"]["rv"]["flagged"] == 4


def test_workers_cannot_share_a_local_store_directory(local_ray, tmp_path):
    from truthguard.errors import ConfigurationError

    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"question": "Q?", "answer": "A"}) + "\n")
    config = {**CONFIG, "store": {"path": str(tmp_path / "store")}}
    with pytest.raises(ConfigurationError, match=r"store\.url"):
        evaluate(data, config, tmp_path / "out", engine="ray", progress=False)
