"""Shared fixtures. Everything here is offline and deterministic."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The ONNX export of the packaged MiniLM is made once per checkout, not once per test session.
os.environ.setdefault(
    "TRUTHGUARD_MODEL_CACHE", str(Path(__file__).resolve().parents[1] / ".truthguard" / "models")
)

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The recorded benchmark data (skips the test when it is not beside the repo)."""
    env = os.environ.get("TRUTHGUARD_DATA_DIR")
    path = Path(env) if env else SHARED_DATA
    if not (path / "phd").is_dir():
        pytest.skip(f"benchmark data not found at {path}")
    return path


@pytest.fixture(scope="session")
def embedder():
    """The packaged MiniLM, loaded once for the whole session."""
    from truthguard.similarity import get_default_similarity

    return get_default_similarity()


@pytest.fixture()
def store(embedder, tmp_path):
    """A fresh persistent store in a temporary directory."""
    from truthguard.store import ArtifactStore

    return ArtifactStore(tmp_path / "chroma", embedder=embedder)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    # Never touch ~/.cache from tests.
    monkeypatch.setenv("TRUTHGUARD_HOME", str(tmp_path_factory.getbasetemp() / "home"))


@pytest.fixture()
def embed_in_new_process(embedder):
    """Embed one text in a fresh interpreter: (backend used, the vector's norm, heavy modules
    it imported). The export is made here first, so the new process only loads it."""
    from doubles import fresh_interpreter

    embedder.warm_up()

    def run(backend: str = "auto") -> tuple[str, float, list[str]]:
        code = (
            "import json, sys\n"
            "from truthguard.similarity import EmbeddingSimilarity\n"
            f"s = EmbeddingSimilarity(backend={backend!r})\n"
            "v = s.embed(['Paris is the capital of France.'])\n"
            "heavy = ('torch', 'transformers', 'sentence_transformers', 'onnxruntime')\n"
            "print(json.dumps([s.backend, float(v[0] @ v[0]), "
            "sorted(m for m in heavy if m in sys.modules)]))\n"
        )
        backend_used, norm, heavy = fresh_interpreter(code)
        return backend_used, norm, heavy

    return run


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """A real ``chroma run`` on 127.0.0.1, an ephemeral port, a temporary directory (one for
    the session; tests keep apart by namespace)."""
    import shutil
    import socket
    import subprocess
    import sys
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
