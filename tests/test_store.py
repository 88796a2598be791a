"""The Chroma-backed artifact store."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from truthguard import DetectionResult, Label
from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import InvalidInputError
from truthguard.store import ArtifactStore, cached_call
from truthguard.testing import ScriptedChatModel

QUESTIONS = [
    "What is the capital of France?",
    "Which city is the capital of France?",
    "Who wrote the play Hamlet?",
    "How many moons does Mars have?",
    "What is the boiling point of water at sea level?",
    "Who painted the Mona Lisa?",
]


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


def test_nearest_skips_self_and_near_duplicates(store):
    store.add_questions(QUESTIONS)
    store.add_questions(QUESTIONS[:2])  # idempotent
    assert store.count_questions() == len(QUESTIONS)
    near = store.nearest(QUESTIONS[0], k=3, max_similarity=0.8)
    texts = [n.question for n in near]
    assert QUESTIONS[0] not in texts
    assert QUESTIONS[1] not in texts  # a paraphrase, above the cut-off
    assert len(near) == 3
    assert all(n.similarity <= 0.8 for n in near)
    assert [n.similarity for n in near] == sorted((n.similarity for n in near), reverse=True)
    with_dup = store.nearest(QUESTIONS[0], k=1, max_similarity=None)
    assert with_dup[0].question == QUESTIONS[1]


def test_nearest_on_empty_store_and_bad_k(store):
    assert store.nearest("anything", k=5) == []
    with pytest.raises(InvalidInputError, match="k"):
        store.nearest("anything", k=0)


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


class _Caching(BaseDetector):
    """Asks three models for reference answers, through the store."""

    detector_name = "caching"
    models: list[ScriptedChatModel]
    store: ArtifactStore

    async def _acheck(self, inp: DetectorInput, session) -> DetectionResult:
        refs = await session.gather(
            cached_call(
                session,
                m,
                inp.question,
                store=self.store,
                question=inp.question,
                kind="reference",
                prompt_version="t1",
                stage="caching.reference",
            )
            for m in self.models
        )
        score = sum(r == inp.answer for r in refs) / len(refs)
        return DetectionResult(detector="caching", score=score, label=Label.FACTUAL)


def test_second_check_of_same_question_makes_no_llm_call(store):
    models = [ScriptedChatModel(model_name=f"m{i}", script=lambda p: "Paris") for i in range(3)]
    det = _Caching(models=models, store=store)
    first = det.invoke({"question": QUESTIONS[0], "answer": "Paris"})
    second = det.invoke({"question": QUESTIONS[0], "answer": "Lyon"})
    assert first.usage.llm_calls == 3 and first.usage.cached_calls == 0
    assert second.usage.llm_calls == 0 and second.usage.cached_calls == 3
    assert sum(m.call_count for m in models) == 3
    assert (first.score, second.score) == (1.0, 0.0)


def test_in_memory_stores_are_isolated(embedder):
    a = ArtifactStore.in_memory(embedder=embedder)
    b = ArtifactStore.in_memory(embedder=embedder)
    a.add_questions(["only in a"])
    assert a.count_questions() == 1 and b.count_questions() == 0


def test_bad_url_names_the_field(embedder):
    with pytest.raises(InvalidInputError, match="url"):
        ArtifactStore(url="not a url", embedder=embedder)


async def test_cached_call_stores_only_validated_outputs(store):
    from truthguard.errors import InvalidLLMOutput
    from truthguard.llm import LLMSession

    replies = iter(["garbage", "42"])
    model = ScriptedChatModel(script=lambda p: next(replies))

    def must_be_number(text: str) -> int:
        if not text.isdigit():
            raise InvalidLLMOutput("not a number", raw=text, stage="t")
        return int(text)

    kwargs = dict(store=store, question="Q?", kind="n", prompt_version="v", stage="t")
    session = LLMSession()
    with pytest.raises(InvalidLLMOutput):
        await cached_call(session, model, "x", validate=must_be_number, **kwargs)
    assert store.get_artifact("Q?", "n", "ScriptedChatModel:scripted", "v") is None
    assert await cached_call(session, model, "x", validate=must_be_number, **kwargs) == "42"
    assert await cached_call(session, model, "x", validate=must_be_number, **kwargs) == "42"
    assert model.call_count == 2 and session.usage().cached_calls == 1


async def test_cached_call_replaces_a_stored_output_the_parser_now_rejects(store):
    from truthguard.errors import InvalidLLMOutput
    from truthguard.llm import LLMSession, model_id

    model = ScriptedChatModel(script=lambda p: "42")
    store.put_artifact("Q?", "n", model_id(model), "v", "old garbage")

    def must_be_number(text: str) -> int:
        if not text.isdigit():
            raise InvalidLLMOutput("not a number", raw=text, stage="t")
        return int(text)

    session = LLMSession()
    kwargs = dict(store=store, question="Q?", kind="n", prompt_version="v", stage="t")
    assert await cached_call(session, model, "x", validate=must_be_number, **kwargs) == "42"
    assert model.call_count == 1
    assert store.get_artifact("Q?", "n", model_id(model), "v") == "42"


# -- input checks ---------------------------------------------------------------------------------


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


# -- batched embedding ----------------------------------------------------------------------------


class _CountingEmbedder:
    """Deterministic 8-dim vectors; counts encode calls and can be slow."""

    def __init__(self, delay: float = 0.0) -> None:
        import threading

        self.calls: list[int] = []
        self.delay = delay
        self._lock = threading.Lock()

    def embed(self, texts):
        import hashlib
        import time

        import numpy as np

        with self._lock:
            self.calls.append(len(texts))
        time.sleep(self.delay)
        out = []
        for t in texts:
            v = np.frombuffer(hashlib.sha256(t.encode()).digest()[:32], dtype=np.uint8)[:8]
            v = v.astype(np.float32) + 1.0
            out.append(v / np.linalg.norm(v))
        return np.stack(out) if out else np.zeros((0, 8), dtype=np.float32)


def test_put_artifacts_embeds_all_questions_in_one_call(tmp_path):
    emb = _CountingEmbedder()
    store = ArtifactStore(tmp_path / "s", embedder=emb)
    items = [(f"Q{i}?", "k", "m", "v", i) for i in range(10)] + [("Q0?", "k2", "m", "v", "x")]
    store.put_artifacts(items)
    assert emb.calls == [10]  # ten distinct questions, one encode call
    assert store.get_artifacts([f"Q{i}?" for i in range(10)], "k", "m", "v") == list(range(10))


def test_concurrent_writes_share_embedding_calls(tmp_path):
    import threading

    emb = _CountingEmbedder(delay=0.05)
    store = ArtifactStore(tmp_path / "s", embedder=emb)
    barrier = threading.Barrier(16)

    def write(i: int) -> None:
        barrier.wait()
        store.put_artifact(f"Question {i}?", "k", "m", "v", i)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(emb.calls) == 16 and len(emb.calls) < 8  # group commit, not one call per write
    # every write was stored before put_artifact returned
    assert store.get_artifacts([f"Question {i}?" for i in range(16)], "k", "m", "v") == list(
        range(16)
    )


# -- durability -----------------------------------------------------------------------------------

_WRITER = """
import sys
sys.path.insert(0, {tests!r})
from test_store import _CountingEmbedder
from truthguard.store import ArtifactStore
store = ArtifactStore({path!r}, embedder=_CountingEmbedder())
i = 0
while True:
    store.put_artifact(f"Question {{i}}?", "k", "m", "v", i)
    print(i, flush=True)  # acknowledged: put_artifact returned
    i += 1
"""


def test_acknowledged_writes_survive_sigkill(tmp_path):
    import os
    import signal
    from pathlib import Path

    path = tmp_path / "s"
    script = _WRITER.format(tests=str(Path(__file__).parent), path=str(path))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    acked = []
    try:
        for line in proc.stdout:
            acked.append(int(line))
            if len(acked) >= 25:
                break
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert len(acked) >= 25, "the writer died before acknowledging any write"
    store = ArtifactStore(path, embedder=_CountingEmbedder())
    got = store.get_artifacts([f"Question {i}?" for i in acked], "k", "m", "v")
    assert got == acked


# -- in-flight de-duplication ---------------------------------------------------------------------


async def test_concurrent_checks_of_one_question_share_one_model_call(store):
    import asyncio

    from truthguard.llm import LLMSession

    model = ScriptedChatModel(model_name="slow", script=lambda p: "Paris", latency=0.2)
    sessions = [LLMSession() for _ in range(4)]
    kwargs = dict(store=store, question="Capital of France?", kind="ref", prompt_version="v")
    outs = await asyncio.gather(
        *(cached_call(s, model, "p", stage="t", **kwargs) for s in sessions)
    )
    assert outs == ["Paris"] * 4
    assert model.call_count == 1
    usages = [s.usage() for s in sessions]
    assert sum(u.llm_calls for u in usages) == 1 and sum(u.cached_calls for u in usages) == 3


async def test_a_failed_shared_call_lets_the_others_try_themselves(store):
    import asyncio

    from truthguard.errors import LLMCallError
    from truthguard.llm import LLMSession, LLMSettings

    model = ScriptedChatModel(script=lambda p: "ok", latency=0.1, fail_first=1)
    settings = LLMSettings(max_retries=0)
    kwargs = dict(store=store, question="Q?", kind="ref", prompt_version="v", stage="t")
    first, second = await asyncio.gather(
        cached_call(LLMSession(settings), model, "p", **kwargs),
        cached_call(LLMSession(settings), model, "p", **kwargs),
        return_exceptions=True,
    )
    assert isinstance(first, LLMCallError) and second == "ok"
    assert model.call_count == 2


async def test_leases_make_a_second_store_wait_for_the_first(tmp_path):
    import asyncio

    from truthguard.llm import LLMSession

    emb = _CountingEmbedder()
    a = ArtifactStore(tmp_path / "s", embedder=emb, lease_seconds=10)
    b = ArtifactStore(tmp_path / "s", embedder=emb, lease_seconds=10)  # like another process
    model = ScriptedChatModel(model_name="m", script=lambda p: "Paris", latency=0.5)
    kwargs = dict(question="Capital?", kind="ref", prompt_version="v", stage="t")
    sa, sb = LLMSession(), LLMSession()

    async def late():
        await asyncio.sleep(0.2)  # the peer has claimed the artifact by now
        return await cached_call(sb, model, "p", store=b, **kwargs)

    outs = await asyncio.gather(cached_call(sa, model, "p", store=a, **kwargs), late())
    assert outs == ["Paris", "Paris"] and model.call_count == 1
    assert sb.usage().cached_calls == 1 and sb.usage().llm_calls == 0
    assert a.count_leases() == 0  # released once the artifact was stored


# -- pickling and a shared Chroma server ----------------------------------------------------------


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


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """A real ``chroma run`` on 127.0.0.1, an ephemeral port, a temporary directory."""
    import shutil
    import socket
    import time
    import urllib.request
    from pathlib import Path

    exe = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    if exe is None:
        pytest.skip("the chroma CLI (pip install chromadb) is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen(
        [exe, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"chroma run did not come up on {url}")
            time.sleep(0.2)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_a_store_url_with_headers_tenant_and_database(chroma_server, embedder):
    store = ArtifactStore(
        url=chroma_server,
        headers={"X-Request-Source": "truthguard-test"},
        tenant="default_tenant",
        database="default_database",
        namespace="headers",
        embedder=embedder,
    )
    store.put_artifact("Q?", "k", "m", "v", "via server")
    assert store.get_artifact("Q?", "k", "m", "v") == "via server"
    assert store.describe()["url"] == chroma_server
    from truthguard.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="Chroma server"):
        ArtifactStore(url=chroma_server, tenant="no_such_tenant", embedder=embedder)


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

    answering = {"script": {"Generate": "Which tree is this?"}, "default": "Ailanthus"}
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


# -- the writer thread and deferred writes --------------------------------------------------------


class _GatedEmbedder(_CountingEmbedder):
    """Holds every embed call until ``gate`` is set (the writer then looks busy)."""

    def __init__(self) -> None:
        import threading

        super().__init__()
        self.gate = threading.Event()
        self.entered = threading.Event()

    def embed(self, texts):
        self.entered.set()
        assert self.gate.wait(10)
        return super().embed(texts)


def test_put_artifacts_nowait_queues_and_checks_items_at_once(tmp_path):
    emb = _GatedEmbedder()
    store = ArtifactStore(tmp_path / "s", embedder=emb)
    with pytest.raises(InvalidInputError, match="value"):
        store.put_artifacts_nowait([("Q?", "k", "m", "v", {1, 2})])  # not JSON: refused here
    first = store.put_artifacts_nowait([("Q1?", "k", "m", "v", 1)])
    assert emb.entered.wait(10) and not first.done()  # the writer holds it
    later = [store.put_artifacts_nowait([(f"Q{i}?", "k", "m", "v", i)]) for i in range(2, 6)]
    emb.gate.set()
    for future in (first, *later):
        assert future.result(10) is None
    assert emb.calls == [1, 4]  # the four writes queued meanwhile went in one batch
    assert store.get_artifacts([f"Q{i}?" for i in range(1, 6)], "k", "m", "v") == [1, 2, 3, 4, 5]


def test_a_failed_write_reaches_its_waiters_and_the_writer_goes_on(tmp_path):
    class Broken(_CountingEmbedder):
        fail = True

        def embed(self, texts):
            if self.fail:
                raise RuntimeError("embedder down")
            return super().embed(texts)

    emb = Broken()
    store = ArtifactStore(tmp_path / "s", embedder=emb)
    with pytest.raises(RuntimeError, match="embedder down"):
        store.put_artifact("Q?", "k", "m", "v", 1)
    emb.fail = False
    store.put_artifact("Q?", "k", "m", "v", 2)
    assert store.get_artifact("Q?", "k", "m", "v") == 2


async def test_deferred_writes_let_the_call_return_before_the_answer_is_stored(tmp_path):
    import asyncio

    from truthguard.llm import LLMSession, model_id

    emb = _GatedEmbedder()
    store = ArtifactStore(tmp_path / "s", embedder=emb)
    model = ScriptedChatModel(default="42")
    name = model_id(model)
    key = {"store": store, "question": "Q?", "kind": "k", "prompt_version": "v", "stage": "s"}
    session = LLMSession(defer_writes=True)
    assert await cached_call(session, model, "x", **key) == "42"  # the write is still held
    assert await asyncio.to_thread(emb.entered.wait, 10)
    assert store.get_artifact("Q?", "k", name, "v") is None
    # A check starting meanwhile shares the answer in flight: no second model call.
    other = LLMSession(defer_writes=True)
    assert await cached_call(other, model, "x", **key) == "42"
    assert model.call_count == 1 and other.usage().cached_calls == 1
    emb.gate.set()
    await session.drain()
    assert store.get_artifact("Q?", "k", name, "v") == "42"
    # Without deferral the write is done when the call returns.
    plain = LLMSession()
    assert await cached_call(plain, model, "y", **{**key, "question": "Q2?"}) == "42"
    assert store.get_artifact("Q2?", "k", name, "v") == "42"


async def test_lookup_false_skips_the_store_read(store):
    from truthguard.llm import LLMSession, model_id

    model = ScriptedChatModel(default="fresh")
    store.put_artifact("Q?", "k", model_id(model), "v", "stored")
    key = {"store": store, "question": "Q?", "kind": "k", "prompt_version": "v", "stage": "s"}
    assert await cached_call(LLMSession(), model, "x", **key) == "stored"
    assert await cached_call(LLMSession(), model, "x", lookup=False, **key) == "fresh"
    assert model.call_count == 1


def test_the_writer_thread_stops_when_idle(tmp_path, monkeypatch):
    import time

    from truthguard.store import _Writer

    monkeypatch.setattr(_Writer, "IDLE_SECONDS", 0.05)
    store = ArtifactStore(tmp_path / "s", embedder=_CountingEmbedder())
    store.put_artifact("Q?", "k", "m", "v", 1)
    deadline = time.monotonic() + 10
    while store._writer._running and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not store._writer._running
    store.put_artifact("Q?", "k", "m", "v", 2)  # a new thread starts for the next write
    assert store.get_artifact("Q?", "k", "m", "v") == 2


# -- nearest: an exact search over an in-memory copy of the questions -----------------------------


def _brute_force(vectors, query, k, max_similarity, exclude=None):
    import numpy as np

    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = unit @ (query / np.linalg.norm(query))
    rows = [
        i
        for i in range(len(sims))
        if (max_similarity is None or sims[i] <= max_similarity) and i != exclude
    ]
    rows.sort(key=lambda i: (-sims[i], i))
    return [(i, float(sims[i])) for i in rows[:k]]


def test_nearest_is_the_exact_top_k_of_the_stored_vectors(tmp_path):
    import numpy as np

    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((300, 8)).astype(np.float32)
    vectors[41] = vectors[40]  # a tie: the earlier stored comes first
    questions = [f"Stored question number {i}?" for i in range(300)]
    store = ArtifactStore(tmp_path / "s", embedder=_CountingEmbedder())
    store.add_questions(questions, embeddings=vectors)
    for q in (rng.standard_normal(8), vectors[40] + 0.01, vectors[7]):
        for k, cut in ((5, None), (25, 0.3), (300, None)):
            got = store.nearest("any", k, max_similarity=cut, embedding=q)
            want = _brute_force(vectors, q, k, cut)
            assert [n.question for n in got] == [questions[i] for i, _ in want]
            np.testing.assert_allclose([n.similarity for n in got], [s for _, s in want], atol=1e-5)
    own = store.nearest(questions[7], 3, max_similarity=None, embedding=vectors[7])
    assert questions[7] not in [n.question for n in own]  # exclude_self
    assert [n.question for n in own] == [
        questions[i] for i, _ in _brute_force(vectors, vectors[7], 3, None, exclude=7)
    ]
    with_self = store.nearest(
        questions[7], 1, max_similarity=None, exclude_self=False, embedding=vectors[7]
    )
    assert with_self[0].question == questions[7] and with_self[0].similarity == pytest.approx(1.0)


def test_a_second_store_sees_questions_added_after_it_loaded(tmp_path):
    import numpy as np

    first = ArtifactStore(tmp_path / "s", embedder=_CountingEmbedder())
    second = ArtifactStore(tmp_path / "s", embedder=_CountingEmbedder(), refresh_seconds=0)
    first.add_questions(["Where is Lima?"], embeddings=np.array([[1.0, 0, 0, 0, 0, 0, 0, 0]]))
    probe = np.array([0.9, 0.1, 0, 0, 0, 0, 0, 0], dtype=np.float32)
    assert [n.question for n in second.nearest("q", 5, max_similarity=None, embedding=probe)] == [
        "Where is Lima?"
    ]
    first.add_questions(["Where is Quito?"], embeddings=np.array([[0.9, 0.1, 0, 0, 0, 0, 0, 0]]))
    got = second.nearest("q", 5, max_similarity=None, embedding=probe)  # reloaded: count changed
    assert [n.question for n in got] == ["Where is Quito?", "Where is Lima?"]
    assert second.all_questions() == first.all_questions() == ["Where is Lima?", "Where is Quito?"]
    # With the default refresh_seconds a copy looks again only once its last look is a second old.
    lagging = ArtifactStore(tmp_path / "s", embedder=_CountingEmbedder())
    assert len(lagging.nearest("q", 5, max_similarity=None, embedding=probe)) == 2
    first.add_questions(["Where is Bogota?"], embeddings=np.array([[0, 1.0, 0, 0, 0, 0, 0, 0]]))
    assert len(lagging.nearest("q", 5, max_similarity=None, embedding=probe)) == 2
    lagging._index._checked -= 1.0  # as if a second had passed
    assert len(lagging.nearest("q", 5, max_similarity=None, embedding=probe)) == 3
    with pytest.raises(InvalidInputError, match="refresh_seconds"):
        ArtifactStore(tmp_path / "s", refresh_seconds=-1)


def test_all_questions_keeps_the_collections_order(store):
    store.add_questions(QUESTIONS[:3])
    store.nearest(QUESTIONS[0], 2)  # the in-memory copy is loaded now
    store.add_questions(QUESTIONS[3:])
    raw = store._questions.get(include=["documents"])["documents"]
    assert store.all_questions() == raw == [q.strip() for q in QUESTIONS]


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


def test_concurrent_adds_and_searches_agree_with_the_collection(tmp_path):
    import threading

    import numpy as np

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((200, 8)).astype(np.float32)
    store = ArtifactStore(tmp_path / "s", embedder=_CountingEmbedder())
    errors: list[BaseException] = []

    def add(part: int) -> None:
        try:
            for i in range(part, 200, 4):
                store.add_questions([f"Q{i}?"], embeddings=vectors[i : i + 1])
        except BaseException as e:
            errors.append(e)

    def search() -> None:
        try:
            for _ in range(50):
                store.nearest("x", 10, max_similarity=None, embedding=vectors[0])
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=add, args=(p,)) for p in range(4)]
    threads += [threading.Thread(target=search) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    got = store.nearest("x", 10, max_similarity=None, embedding=vectors[0])
    want = _brute_force(vectors, vectors[0], 10, None)
    assert [n.question for n in got] == [f"Q{i}?" for i, _ in want]


def test_nearest_through_a_chroma_server_sees_another_clients_questions(chroma_server):
    import numpy as np

    a = ArtifactStore(
        url=chroma_server, namespace="knn", embedder=_CountingEmbedder(), refresh_seconds=0
    )
    b = ArtifactStore(
        url=chroma_server, namespace="knn", embedder=_CountingEmbedder(), refresh_seconds=0
    )
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((40, 8)).astype(np.float32)
    a.add_questions([f"Server question {i}?" for i in range(20)], embeddings=vectors[:20])
    assert len(b.nearest("x", 50, max_similarity=None, embedding=vectors[0])) == 20
    b.add_questions([f"Server question {i}?" for i in range(20, 40)], embeddings=vectors[20:])
    got = a.nearest("x", 5, max_similarity=0.5, embedding=vectors[3])
    want = _brute_force(vectors, vectors[3], 5, 0.5)
    assert [n.question for n in got] == [f"Server question {i}?" for i, _ in want]
