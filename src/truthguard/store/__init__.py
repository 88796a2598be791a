"""A Chroma-backed store of questions and of the artifacts LLMs produced for them.

Two collections per namespace:

* ``<ns>_questions``: each question once, embedded with the similarity model, for k-nearest-
  neighbour search (FEWL's laziness penalty, example selection).
* ``<ns>_artifacts``: JSON payloads keyed by (question, kind, model, prompt version, extra): the
  reference answers of each model, generated wrong / corrected answer sets, Reverse Validation
  stage outputs, extracted claims. A detector looks here before calling a model, so no artifact
  is generated twice.

By default the store is a ``chromadb.PersistentClient`` in ``$TRUTHGUARD_HOME/chroma``
(``~/.cache/truthguard/chroma`` when unset); pass ``url=`` (with ``headers``, ``tenant``,
``database``) for a Chroma server (``HttpClient``), ``client=`` for any client you built, or use
:meth:`ArtifactStore.in_memory`.

Sharing: a store made from ``path`` or ``url`` pickles as its configuration and reconnects in the
process that unpickles it, so detectors holding one can be shipped to worker processes. Within a
process, concurrent calls of :func:`cached_call` for the same artifact share one model call. Across
processes (several workers on one Chroma server) ``lease_seconds`` turns on a best-effort scheme:
the first worker to miss an artifact writes a short lease, and workers that see a fresh lease wait
for the artifact instead of calling the model themselves (see :meth:`ArtifactStore.claim`).

Writes are batched: artifacts written at the same time by several threads are embedded in one
encode call and upserted together (group commit), and a write returns only once it is stored.

Modules: :mod:`~truthguard.store.artifacts` (:class:`ArtifactStore`), :mod:`.index` (the
in-memory copy of the questions that :meth:`ArtifactStore.nearest` searches), :mod:`.writer`
(the writer thread), :mod:`.chroma` (Chroma clients, also used by
:class:`~truthguard.vectorstore.ChromaVectorStore`), :mod:`.call_cache` (:func:`cached_call`),
:mod:`.inflight` (calls in flight in this process) and :mod:`.leases` (leases across processes).
"""

from __future__ import annotations

from truthguard.store.artifacts import ArtifactStore
from truthguard.store.artifacts import _rebuild_store as _rebuild_store  # pickles before the split
from truthguard.store.call_cache import cached_call
from truthguard.store.chroma import default_store_path
from truthguard.store.index import Neighbor
from truthguard.store.keys import question_id

__all__ = ["ArtifactStore", "Neighbor", "cached_call", "default_store_path", "question_id"]
