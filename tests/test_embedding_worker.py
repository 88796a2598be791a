"""The encode worker pool: the threads that run a loaded model's encode calls."""

from __future__ import annotations

import threading

import numpy as np
import pytest


class _GatedModel:
    """An encoder whose first call waits for ``gate``: requests made meanwhile queue up."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.gate = threading.Event()
        self.started = threading.Event()
        self.fail = fail

    def encode(self, texts, **kw):
        self.calls.append(list(texts))
        self.started.set()
        assert self.gate.wait(10)
        if self.fail:
            raise RuntimeError("encoder broke")
        return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)


def _worker(model, key, parallel=1):
    from truthguard.embedding._worker import _EncodeWorker

    return _EncodeWorker(model, f"test:{key}", batch_size=8, parallel=parallel)


def test_encoder_thread_serves_every_waiting_request_with_one_call():
    model = _GatedModel()
    worker = _worker(model, "coalesce")
    first = worker.submit(["a"])
    assert model.started.wait(10)  # the first encode is running (and held)
    second, third = worker.submit(["bb", "ccc"]), worker.submit(["dddd"])
    model.gate.set()
    assert first.result(10)["a"][0] == 1
    assert set(second.result(10)) == {"bb", "ccc"} and third.result(10)["dddd"][0] == 4
    assert model.calls == [["a"], ["bb", "ccc", "dddd"]]
    assert worker.calls == 2


class _TwoAtOnce(_GatedModel):
    """The first encode call waits until a second one runs beside it."""

    def encode(self, texts, **kw):
        if len(self.calls) == 1:  # the second call opens the gate the first one waits on
            self.gate.set()
        return super().encode(texts, **kw)


def test_one_big_request_is_shared_by_the_encoder_threads():
    model = _TwoAtOnce()
    worker = _worker(model, "split", parallel=2)
    texts = [f"text number {i}" for i in range(40)]
    got = worker.submit(texts).result(10)
    assert list(got) == texts and got["text number 7"][0] == len("text number 7")
    assert sorted(map(len, model.calls)) == [20, 20]  # two pieces, encoded side by side
    small = _worker(_GatedModel(), "small", parallel=2)
    small.model.gate.set()
    small.submit(["a", "b", "c"]).result(10)
    assert small.model.calls == [["a", "b", "c"]]  # too small to share


def test_two_encoder_threads_encode_side_by_side():
    model = _TwoAtOnce()
    worker = _worker(model, "parallel", parallel=2)
    first = worker.submit(["a"])
    assert model.started.wait(10)
    second = worker.submit(["bb"])  # served by the second thread while the first is held
    assert first.result(10)["a"][0] == 1 and second.result(10)["bb"][0] == 2
    assert model.calls == [["a"], ["bb"]]


def test_a_text_being_encoded_is_not_encoded_again():
    model = _GatedModel()
    worker = _worker(model, "inflight")
    first = worker.submit(["x", "yy"])
    assert model.started.wait(10)
    second = worker.submit(["yy", "zzz"])  # "yy" is already being encoded
    model.gate.set()
    got = second.result(10)
    assert sorted(got) == ["yy", "zzz"] and got["yy"][0] == 2
    assert first.result(10)["x"][0] == 1
    assert model.calls == [["x", "yy"], ["zzz"]]


def test_a_waiter_that_gives_up_does_not_cancel_an_encode_others_wait_for():
    model = _GatedModel()
    worker = _worker(model, "cancel")
    blocker = worker.submit(["held"])
    assert model.started.wait(10)
    quitter, stayer = worker.submit(["shared"]), worker.submit(["shared"])
    assert quitter.cancel()
    model.gate.set()
    assert blocker.result(10)["held"][0] == 4
    assert stayer.result(10)["shared"][0] == 6


def test_an_encode_failure_reaches_every_waiter_and_the_thread_goes_on():
    model = _GatedModel(fail=True)
    worker = _worker(model, "fail")
    first = worker.submit(["p"])
    assert model.started.wait(10)
    second = worker.submit(["q"])
    model.gate.set()
    for future in (first, second):
        with pytest.raises(RuntimeError, match="encoder broke"):
            future.result(10)
    model.fail = False
    assert worker.submit(["r"]).result(10)["r"][0] == 1  # the thread survived


def test_parallel_encodes_fills_the_cores_the_model_leaves_idle(monkeypatch):
    from truthguard.embedding import parallel_encodes

    class Model:
        def __init__(self, threads=None):
            if threads is not None:
                self.threads = threads

    monkeypatch.setattr("os.cpu_count", lambda: 4)
    assert parallel_encodes(Model(1)) == 4
    assert parallel_encodes(Model(2)) == 2
    assert parallel_encodes(Model(8)) == 1
    assert parallel_encodes(Model()) == 1  # torch already uses every core


def test_queued_chunks_are_spread_over_the_encoder_threads(monkeypatch):
    from truthguard.embedding._worker import _EncodeWorker

    monkeypatch.setattr(_EncodeWorker, "TAKE", 2)
    model = _GatedModel()
    worker = _worker(model, "take")
    held = worker.submit(["held"])
    assert model.started.wait(10)
    chunks = [worker.submit([f"t{i}a", f"t{i}b"]) for i in range(3)]
    model.gate.set()
    for future in (held, *chunks):
        future.result(10)
    assert model.calls == [["held"], ["t0a", "t0b"], ["t1a", "t1b"], ["t2a", "t2b"]]
