"""Chroma clients: server URLs, headers, tenants and databases; sharing a process with others."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from truthguard.errors import InvalidInputError
from truthguard.store import ArtifactStore


def test_bad_url_names_the_field(embedder):
    with pytest.raises(InvalidInputError, match="url"):
        ArtifactStore(url="not a url", embedder=embedder)


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


_SHARE_ONE_PROCESS = """
import sys

from langchain_chroma import Chroma

from truthguard.embeddings import SimilarityEmbeddings
from truthguard.rag import chroma_retriever
from truthguard.selectors import FEWLExampleSelector
from truthguard.similarity import get_default_similarity
from truthguard.store import ArtifactStore
from truthguard.testing import FakeDetector

embeddings = SimilarityEmbeddings()


def users():
    db = Chroma(collection_name="users", embedding_function=embeddings)
    db.add_texts(["Mars has two small moons.", "Saturn has bright rings."])
    assert db.similarity_search("moons of Mars", k=1)[0].page_content.startswith("Mars")


def ours():
    store = ArtifactStore.in_memory(embedder=get_default_similarity())
    store.put_artifact("Q?", "kind", "model", "v1", "stored")
    assert store.get_artifact("Q?", "kind", "model", "v1") == "stored"
    retriever = chroma_retriever(["Mars has two small moons.", "Saturn has rings."], k=1)
    assert retriever.invoke("moons")[0].page_content.startswith("Mars")
    pool = [{"question": "Capital of France?", "answers": ["Lyon.", "Paris."]}]
    selector = FEWLExampleSelector.from_examples(pool, embeddings, scorer=FakeDetector(), k=1)
    assert selector.select_examples({"question": "France?"})[0]["answer"] == "Lyon."


for step in sys.argv[1:]:
    {"users": users, "ours": ours}[step]()
print("ok")
"""


@pytest.mark.parametrize("order", [("users", "ours"), ("ours", "users"), ("ours", "users", "ours")])
def test_shares_a_process_with_langchain_chroma_in_either_order(embedder, order):
    pytest.importorskip("langchain_chroma")
    embedder.warm_up()  # the ONNX export exists before the new process loads it
    env = {k: v for k, v in os.environ.items() if k != "ANONYMIZED_TELEMETRY"}  # a user's env
    done = subprocess.run(
        [sys.executable, "-c", _SHARE_ONE_PROCESS, *order],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")


def test_an_in_memory_client_made_first_with_other_settings_is_shared(embedder):
    code = (
        "import chromadb\n"
        "from chromadb.config import Settings\n"
        "from truthguard.store import ArtifactStore\n"
        "from truthguard.similarity import get_default_similarity\n"
        "mine = chromadb.EphemeralClient(settings=Settings(allow_reset=True))\n"
        "mine.get_or_create_collection('mine')\n"
        "store = ArtifactStore.in_memory(embedder=get_default_similarity())\n"
        "store.put_artifact('Q?', 'kind', 'model', 'v1', 'stored')\n"
        "assert store.get_artifact('Q?', 'kind', 'model', 'v1') == 'stored'\n"
        "assert 'mine' in [c.name for c in mine.list_collections()]\n"
        "print('ok')\n"
    )
    embedder.warm_up()
    done = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_first_clients_of_a_path_made_at_once_share_one_started_system(tmp_path, monkeypatch):
    import threading
    import time

    from chromadb.config import System

    from truthguard.store import chroma

    # Chroma keeps one system per path and registers it before starting it: a second client
    # made meanwhile used the system half started, failed, and stopped it under the first. The
    # start is made slow here so that the second client comes while the first is starting.
    start = System.start

    def slow(self):
        time.sleep(0.3)
        start(self)

    monkeypatch.setattr(System, "start", slow)
    clients, errors = [], []

    def make():
        try:
            client = chroma.persistent_client(tmp_path / "chroma", "the test")
            chroma.cosine_collection(client, "seen").add(ids=["a"], embeddings=[[1.0, 0.0]])
            clients.append(client)
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=make) for _ in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(clients) == 2
    assert clients[0].get_collection("seen").count() == 1
