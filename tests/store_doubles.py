"""Questions and embedders shared by the store tests (deterministic, no model)."""

from __future__ import annotations

QUESTIONS = [
    "What is the capital of France?",
    "Which city is the capital of France?",
    "Who wrote the play Hamlet?",
    "How many moons does Mars have?",
    "What is the boiling point of water at sea level?",
    "Who painted the Mona Lisa?",
]


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
