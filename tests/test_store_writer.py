"""The store's writer thread: group commit, durability, failures, idling."""

from __future__ import annotations

import subprocess
import sys

import pytest

from store_doubles import _CountingEmbedder, _GatedEmbedder
from truthguard.errors import InvalidInputError
from truthguard.store import ArtifactStore


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


_WRITER = """
import sys
sys.path.insert(0, {tests!r})
from store_doubles import _CountingEmbedder
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


def test_the_writer_thread_stops_when_idle(tmp_path, monkeypatch):
    import time

    from truthguard.store.writer import _Writer

    monkeypatch.setattr(_Writer, "IDLE_SECONDS", 0.05)
    store = ArtifactStore(tmp_path / "s", embedder=_CountingEmbedder())
    store.put_artifact("Q?", "k", "m", "v", 1)
    deadline = time.monotonic() + 10
    while store._writer._running and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not store._writer._running
    store.put_artifact("Q?", "k", "m", "v", 2)  # a new thread starts for the next write
    assert store.get_artifact("Q?", "k", "m", "v") == 2


def test_the_writer_lets_go_of_its_store_before_waking_the_waiters():
    import gc
    import threading
    import weakref

    from truthguard.store.writer import _PendingWrite, _Writer

    started, release = threading.Event(), threading.Event()

    class Store:
        def flush(self, writes):
            started.set()
            release.wait(5)  # the waiter drops its own reference meanwhile

    store = Store()
    dead = weakref.ref(store)
    future = _Writer(weakref.WeakMethod(store.flush)).submit([_PendingWrite("id", "Q?", "doc", {})])
    seen: list[bool] = []
    called = threading.Event()
    # done callbacks run in the writer thread as it settles the future: by then a waiter that
    # dropped the store must be able to see it collected (its private collections go with it)
    future.add_done_callback(lambda _: (gc.collect(), seen.append(dead() is None), called.set()))
    assert started.wait(5)
    del store
    release.set()
    future.result(timeout=5)
    assert called.wait(5)
    assert seen == [True]
