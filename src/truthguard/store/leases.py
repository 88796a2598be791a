"""Cross-process leases on artifacts: best-effort notes that a process is producing one."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["Leases"]

_LEASE_KIND = "__lease__"


class Leases:
    """Lease records ``l-<artifact id>`` = ``(owner, expires)``, kept next to the artifacts.

    Chroma has no compare-and-set, so two processes that miss at the same instant can both
    win: the scheme only makes duplicate model calls rare.

    Args:
        collection: The artifacts collection.
        lock: The store's lock, held around every read and write of the collection.
    """

    def __init__(self, collection: Any, lock: threading.RLock) -> None:
        self._collection = collection
        self._lock = lock
        self.owner = uuid.uuid4().hex
        """Who writes this process's leases (one per store)."""

    def claim(self, aid: str, seconds: float, zero_vector: Callable[[], list[float]]) -> bool:
        """Write a lease on ``aid`` for ``seconds``; False while a peer holds a fresh one.

        ``zero_vector`` gives a vector of the collection's dimension (a lease is found by id
        only). It is passed per call so that nothing here refers back to the store, which is
        then freed as soon as it is unused.
        """
        lid = "l-" + aid
        now = time.time()
        with self._lock:
            res = self._collection.get(ids=[lid], include=["documents"])
            if res["ids"]:
                lease = json.loads(res["documents"][0])
                if lease["owner"] != self.owner and lease["expires"] > now:
                    return False
            doc = json.dumps({"owner": self.owner, "expires": now + seconds})
            self._collection.upsert(
                ids=[lid],
                documents=[doc],
                embeddings=[zero_vector()],
                metadatas=[{"kind": _LEASE_KIND, "created": now}],
            )
            # Last writer wins: read back, so a peer that wrote in between keeps its lease.
            back = self._collection.get(ids=[lid], include=["documents"])
        return bool(back["ids"]) and json.loads(back["documents"][0])["owner"] == self.owner

    def release(self, aid: str) -> None:
        """Drop the lease on ``aid``."""
        with self._lock:
            self._collection.delete(ids=["l-" + aid])

    def count(self) -> int:
        """How many lease records are stored (this process's and its peers')."""
        with self._lock:
            return len(self._collection.get(where={"kind": _LEASE_KIND}, include=[])["ids"])
