"""The encode worker pool: the threads that run each loaded model's encode calls.

One :class:`_EncodeWorker` per loaded model and settings (see :func:`encode_worker`); requests
that arrive while its threads are busy share the next encode call, and every vector also goes
to the process-wide :func:`~truthguard.embedding.embedding_cache`.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from truthguard.embedding.cache import embedding_cache

__all__ = ["encode_worker", "parallel_encodes", "started_worker"]


def parallel_encodes(model: Any) -> int:
    """Encode calls worth running side by side: enough to fill the cores the model leaves idle.

    An ONNX session runs with as many threads as the load average left idle when it was loaded
    (often one on a shared machine); sentence-transformers (torch) already uses every core, and
    an OpenVINO model runs one call at a time on every core.
    """
    threads = getattr(model, "threads", None)
    if not threads or getattr(model, "serial", False):
        return 1
    return max(1, (os.cpu_count() or 1) // threads)


class _EncodeWorker:
    """The threads that run a loaded model's encode calls.

    Requests that arrive while they are busy are served together by the next encode call, so
    concurrent checks, and the concurrent branches of one check, share batches instead of
    competing for the cores. A text already queued or being encoded is not queued again: its
    second asker waits for the first encode. Every vector also goes to the process-wide
    :func:`embedding_cache`. There are as many threads as encode calls fit the cores side by
    side: one for a model that uses every core, two for a one-thread ONNX session on two cores.
    """

    TAKE = 256
    """Most texts one encode call takes from the queue when more are waiting (a queued piece is
    never split): big batches queued in chunks are spread over the threads."""
    SHARE = 16
    """Fewest texts per piece when one request is split over the threads."""

    def __init__(self, model: Any, cache_key: str, batch_size: int, parallel: int = 1) -> None:
        self.model = model
        self.cache_key = cache_key
        self.batch_size = batch_size
        self.parallel = max(1, parallel)
        self.calls = 0
        """Encode calls made so far (one per batch of requests)."""
        self._cond = threading.Condition()
        self._queue: list[tuple[list[str], _Vectors]] = []
        self._inflight: dict[str, _Vectors] = {}  # text -> the request that encodes it
        self._threads = 0
        self._idle = 0  # threads waiting for work
        self._starting = 0  # threads started that have not looked at the queue yet

    def submit(self, texts: Sequence[str]) -> _Vectors:
        """Queue texts; the future gives ``{text: vector}`` for each of them.

        Every caller gets a future of its own: cancelling it (a check that gave up) never
        cancels an encode that other callers wait for.
        """
        texts = list(dict.fromkeys(texts))
        requests: list[_Vectors] = []
        with self._cond:
            mine = [t for t in texts if t not in self._inflight]
            waits = {id(f): f for t in texts if (f := self._inflight.get(t)) is not None}
            # With several threads, a request big enough to share goes out in one piece per
            # thread, so a single check's burst of texts uses every core too.
            pieces = min(self.parallel, len(mine) // self.SHARE) or 1 if mine else 0
            for k in range(pieces):
                piece = mine[k::pieces]
                request: _Vectors = concurrent.futures.Future()
                for t in piece:
                    self._inflight[t] = request
                self._queue.append((piece, request))
                requests.append(request)
            # A thread for each queued piece no idle thread will take, up to `parallel`.
            while self._threads < self.parallel and len(self._queue) > self._idle + self._starting:
                self._threads += 1
                self._starting += 1
                threading.Thread(target=self._serve, name="truthguard-encoder", daemon=True).start()
            self._cond.notify_all()
        return _joined([*requests, *waits.values()], texts)

    def _serve(self) -> None:
        starting = True
        while True:
            with self._cond:
                if starting:
                    self._starting -= 1
                    starting = False
                while not self._queue:
                    self._idle += 1
                    self._cond.wait()
                    self._idle -= 1
                # Everything waiting, up to a fair share (at most TAKE texts): the rest is left
                # for another thread.
                queued = sum(len(ts) for ts, _ in self._queue)
                share = min(self.TAKE, -(-queued // self.parallel))
                size = taken = 0
                while taken < len(self._queue) and size < share:
                    size += len(self._queue[taken][0])
                    taken += 1
                batch, self._queue = self._queue[:taken], self._queue[taken:]
            texts = [t for ts, _ in batch for t in ts]  # disjoint: nothing is queued twice
            try:
                vectors = np.asarray(
                    self.model.encode(
                        texts,
                        batch_size=self.batch_size,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    ),
                    dtype=np.float32,
                )
                embedding_cache().put_many(self.cache_key, texts, vectors)
                table = dict(zip(texts, vectors, strict=True))
            except BaseException as e:  # the thread must outlive any failure: report it
                self._settle(batch, None, e)
            else:
                self._settle(batch, table, None)

    def _settle(
        self,
        batch: list[tuple[list[str], _Vectors]],
        table: dict[str, np.ndarray] | None,
        error: BaseException | None,
    ) -> None:
        with self._cond:
            self.calls += 1
            for ts, _ in batch:
                for t in ts:
                    self._inflight.pop(t, None)
        for ts, request in batch:
            if table is not None:
                request.set_result({t: table[t] for t in ts})
            else:
                request.set_exception(error or RuntimeError("encode failed"))


_Vectors = concurrent.futures.Future  # of dict[str, np.ndarray]


def _joined(parts: list[_Vectors], texts: list[str]) -> _Vectors:
    """A new future with the vectors of ``texts``, once every request in ``parts`` is done."""
    out: _Vectors = concurrent.futures.Future()
    if not parts:
        out.set_result({})
        return out
    lock = threading.Lock()
    left = [len(parts)]

    def one_done(_: Any) -> None:
        with lock:
            left[0] -= 1
            if left[0]:
                return
        if not out.set_running_or_notify_cancel():  # the caller cancelled its own future
            return
        try:
            merged: dict[str, np.ndarray] = {}
            for f in parts:
                merged.update(f.result())
            result = {t: merged[t] for t in texts}
        except BaseException as e:
            out.set_exception(e)
        else:
            out.set_result(result)

    for f in parts:
        f.add_done_callback(one_done)
    return out


_workers_lock = threading.Lock()
_WORKERS: dict[tuple[Any, ...], _EncodeWorker] = {}


def started_worker(key: tuple[Any, ...]) -> _EncodeWorker | None:
    """The worker of ``key`` if one was started in this process (never starts one)."""
    return _WORKERS.get(key)


def encode_worker(
    key: tuple[Any, ...], model: Callable[[], Any], cache_key: str, batch_size: int
) -> _EncodeWorker:
    """The worker of ``key``, started on first use with the encoder ``model()`` loads.

    Callers that share a model and a cache namespace pass the same key, and so share threads.
    """
    worker = _WORKERS.get(key)
    if worker is None:
        loaded = model()  # loads outside the workers lock: loading takes seconds
        with _workers_lock:
            worker = _WORKERS.get(key)
            if worker is None:
                worker = _WORKERS[key] = _EncodeWorker(
                    loaded, cache_key, batch_size, parallel_encodes(loaded)
                )
    return worker


def _forget_workers() -> None:
    # A forked child has none of its parent's threads: it starts its own on first use.
    global _workers_lock
    _workers_lock = threading.Lock()
    _WORKERS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)
