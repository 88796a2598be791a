"""Nearest-neighbour search over the in-memory copy of the questions."""

from __future__ import annotations

import pytest

from store_doubles import QUESTIONS, _brute_force, _CountingEmbedder
from truthguard.errors import InvalidInputError
from truthguard.store import ArtifactStore


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
