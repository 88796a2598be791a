"""The artifact store: artifacts, questions, input checks, pickling, sharing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from store_doubles import QUESTIONS, _CountingEmbedder
from truthguard.errors import InvalidInputError
from truthguard.store import ArtifactStore


def test_artifacts_round_trip_and_keys_are_distinct(store):
    store.put_artifact("Q?", "reference", "m1", "v1", {"answers": ["a", "b"]})
    assert store.get_artifact("Q?", "reference", "m1", "v1") == {"answers": ["a", "b"]}
    assert store.get_artifact("Q?", "reference", "m2", "v1") is None
    assert store.get_artifact("Q?", "reference", "m1", "v2") is None
    assert store.get_artifact("Q?", "reference", "m1", "v1", extra="sample-2") is None
    # whitespace does not make a new question
    assert store.get_artifact("  Q? ", "reference", "m1", "v1") == {"answers": ["a", "b"]}
    assert store.get_artifacts(["Q?", "other"], "reference", "m1", "v1") == [
        {"answers": ["a", "b"]},
        None,
    ]


def test_artifact_must_be_json(store):
    with pytest.raises(InvalidInputError, match="value"):
        store.put_artifact("Q?", "x", "m", "v", object())


def test_random_questions_are_seeded(store):
    store.add_questions(QUESTIONS)
    a = store.random_questions(3, exclude=QUESTIONS[0])
    b = store.random_questions(3, exclude=QUESTIONS[0])
    assert a == b and QUESTIONS[0] not in a and len(a) == 3


def test_store_persists_across_processes(tmp_path):
    path = tmp_path / "persist"
    script = textwrap.dedent(
        f"""
        from truthguard.store import ArtifactStore
        s = ArtifactStore({str(path)!r})
        s.add_questions(["Who wrote Hamlet?", "What is the capital of Peru?"])
        s.put_artifact("Who wrote Hamlet?", "reference", "m", "v1", "Shakespeare")
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=240)
    again = ArtifactStore(path)
    assert again.count_questions() == 2
    assert again.get_artifact("Who wrote Hamlet?", "reference", "m", "v1") == "Shakespeare"


def test_in_memory_stores_are_isolated(embedder):
    a = ArtifactStore.in_memory(embedder=embedder)
    b = ArtifactStore.in_memory(embedder=embedder)
    a.add_questions(["only in a"])
    assert a.count_questions() == 1 and b.count_questions() == 0


def test_add_questions_refuses_a_bare_string_and_blank_questions(store):
    with pytest.raises(InvalidInputError, match="questions"):
        store.add_questions("abc")
    with pytest.raises(InvalidInputError, match=r"questions\[1\]"):
        store.add_questions(["Q?", "   "])
    with pytest.raises(InvalidInputError, match=r"questions\[0\]"):
        store.add_questions([5])
    with pytest.raises(InvalidInputError, match="questions"):
        store.add_questions({"Q?": 1})
    assert store.count_questions() == 0
    assert store.add_questions([]) == []
    assert len(store.add_questions(q for q in ("A?", "B?"))) == 2  # any iterable of strings


def test_a_stored_none_reads_back_as_none_not_absent(store):
    store.put_artifact("Q?", "k", "m", "v", None)
    assert store.has_artifact("Q?", "k", "m", "v")
    assert store.get_artifact("Q?", "k", "m", "v", default="absent") is None
    assert store.get_artifact("Q?", "k", "m", "v2", default="absent") == "absent"
    assert not store.has_artifact("Q?", "k", "m", "v2")


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.put_artifact(5, "k", "m", "v", "x"), "question"),
        (lambda s: s.put_artifact("Q?", None, "m", "v", "x"), "kind"),
        (lambda s: s.put_artifact("Q?", "k", ["m"], "v", "x"), "model"),
        (lambda s: s.put_artifact("Q?", "k", "m", "v", float("nan")), "value"),
        (lambda s: s.get_artifact(None, "k", "m", "v"), "question"),
        (lambda s: s.nearest(None), "question"),
        (lambda s: s.nearest("Q?", k="3"), "k"),
        (lambda s: s.nearest("Q?", embedding=["a"]), "embedding"),
        (lambda s: s.random_questions("3"), "k"),
        (lambda s: s.has_question(b"Q?"), "question"),
        (lambda s: s.put_artifacts("abc"), "items"),
        (lambda s: s.put_artifacts([("Q?", "k")]), "items[0]"),
    ],
)
def test_wrong_types_raise_invalid_input_naming_the_field(store, call, field):
    with pytest.raises(InvalidInputError) as info:
        call(store)
    assert info.value.field == field


def test_constructor_options_are_checked(embedder, tmp_path):
    with pytest.raises(InvalidInputError, match="headers"):
        ArtifactStore(tmp_path, headers={"a": "b"}, embedder=embedder)
    with pytest.raises(InvalidInputError, match="headers"):
        ArtifactStore(url="http://127.0.0.1:1", headers={"a": 1}, embedder=embedder)
    with pytest.raises(InvalidInputError, match="lease_seconds"):
        ArtifactStore(tmp_path, lease_seconds=0, embedder=embedder)
    with pytest.raises(InvalidInputError, match="url"):
        ArtifactStore(url="ftp://host/x", embedder=embedder)


def test_add_questions_embeddings_are_checked():
    import numpy as np

    store = ArtifactStore.in_memory(embedder=_CountingEmbedder())
    with pytest.raises(InvalidInputError, match=r"embeddings.*one row per question"):
        store.add_questions(["a?", "b?"], embeddings=np.zeros((3, 8)))
    with pytest.raises(InvalidInputError, match=r"embeddings.*NaN"):
        store.add_questions(["a?"], embeddings=[[float("nan")] * 8])
    with pytest.raises(InvalidInputError, match="embeddings"):
        store.add_questions(["a?"], embeddings=[["x"] * 8])
    assert store.count_questions() == 0


def test_a_path_store_pickles_by_configuration(store):
    import pickle

    store.put_artifact("Q?", "k", "m", "v", "stored")
    again = pickle.loads(pickle.dumps(store))
    assert again.path == store.path and again.namespace == store.namespace
    assert again.get_artifact("Q?", "k", "m", "v") == "stored"
    assert again.embedder is store.embedder  # the process-wide default model


def test_an_in_memory_store_refuses_to_pickle(embedder):
    import pickle

    from truthguard.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="path= or url="):
        pickle.dumps(ArtifactStore.in_memory(embedder=embedder))


def test_two_processes_share_artifacts_through_a_chroma_server(chroma_server, tmp_path):
    """This process scores rows; a second one scores them again with 0 model calls."""
    import json

    from truthguard.evaluation import evaluate

    rows = [
        {
            "question": "Tell me about Ailanthus.",
            "answer": "Ailanthus is a tree.",
            "entity": "Ailanthus",
        },
        {"question": "Tell me about Hoy.", "answer": "Hoy is an island.", "entity": "Hoy"},
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def config(model_kwargs):
        return {
            "detectors": {
                "rv": {
                    "type": "reverse_validation",
                    "model": {
                        "provider": "scripted",
                        "kwargs": {"model_name": "m", **model_kwargs},
                    },
                    "options": {"variant": "qg", "rebuild_leaks": False},
                }
            },
            "store": {"url": chroma_server, "namespace": "twoproc"},
        }

    answering = {"script": {"Write one question": "Which tree is this?"}, "default": "Ailanthus"}
    first = evaluate(data, config(answering), tmp_path / "first", progress=False)
    assert first["detectors"]["rv"]["llm_calls"] == 4  # stage 1 and stage 2 of each row
    assert first["detectors"]["rv"]["invalid"] == 0

    # The second process's model fails every call: it can only answer from the server.
    failing = tmp_path / "failing.json"
    failing.write_text(json.dumps(config({"fail_first": 1000})))
    argv = ["evaluate", str(data), "-c", str(failing), "-o", str(tmp_path / "second")]
    done = subprocess.run(
        [sys.executable, "-m", "truthguard.cli", *argv, "--json", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    second = json.loads(done.stdout)["detectors"]["rv"]
    assert second["llm_calls"] == 0 and second["cached_calls"] == 4 and second["invalid"] == 0
    from truthguard.evaluation import read_results

    labels = lambda out: {r["id"]: r["label"] for r in read_results(out)}  # noqa: E731
    assert labels(tmp_path / "first") == labels(tmp_path / "second")
