"""Chroma clients and collections, made one way for the artifact store and the vector store."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.store.keys import require_text

__all__ = [
    "chromadb_module",
    "cosine_collection",
    "default_store_path",
    "ephemeral_client",
    "http_client",
    "persistent_client",
]

_LOCK = threading.Lock()
"""Held while a client is made: Chroma registers a path's system before starting it, and a
client made meanwhile fails on it half started and stops it under the first."""


def default_store_path() -> Path:
    """``$TRUTHGUARD_HOME/chroma``, or ``~/.cache/truthguard/chroma``."""
    home = os.environ.get("TRUTHGUARD_HOME")
    base = Path(home) if home else Path.home() / ".cache" / "truthguard"
    return base / "chroma"


def chromadb_module(user: str) -> Any:
    """``chromadb``, or a ConfigurationError with the install hint that names ``user``."""
    try:
        import chromadb
    except ImportError as e:
        raise ConfigurationError(f"{user} needs chromadb: pip install 'truthguard[chroma]'") from e
    return chromadb


def _settings() -> Any:
    # Chroma's default settings (read from its environment variables), as ``chromadb.Client()``
    # and langchain-chroma use: Chroma keeps one system per process for in-memory clients (one
    # per path for persistent ones) and refuses a second client whose settings differ.
    from chromadb.config import Settings

    return Settings()


def _shared(make: Any, settings: Any) -> Any:
    """``make(settings)``; if Chroma already runs this system with other settings, with those."""
    with _LOCK:
        try:
            return make(settings)
        except ValueError as e:
            if "different settings" not in str(e):
                raise
            from chromadb.api.shared_system_client import SharedSystemClient

            ours = SharedSystemClient._get_identifier_from_settings(settings)
            system = SharedSystemClient._identifier_to_system.get(ours)
            if system is None:  # pragma: no cover - Chroma changed how it keys its systems
                raise ConfigurationError(f"Chroma refused a client: {e}") from e
            return make(system.settings)


def ephemeral_client(user: str) -> Any:
    """An in-memory client (in the process's one in-memory Chroma system)."""
    chromadb = chromadb_module(user)
    return _shared(lambda settings: chromadb.EphemeralClient(settings=settings), _settings())


def persistent_client(path: str | Path, user: str) -> Any:
    """A client on the directory ``path`` (created if missing)."""
    chromadb = chromadb_module(user)
    Path(path).mkdir(parents=True, exist_ok=True)
    settings = _settings()
    settings.is_persistent, settings.persist_directory = True, str(path)
    return _shared(
        lambda settings: chromadb.PersistentClient(path=str(path), settings=settings), settings
    )


def http_client(
    url: str,
    user: str,
    *,
    headers: dict[str, str] | None = None,
    tenant: str | None = None,
    database: str | None = None,
) -> Any:
    """A client of the Chroma server at ``url``.

    Raises:
        InvalidInputError: ``url`` is not an http(s) URL with a host.
        ConfigurationError: The server is unreachable, refuses the headers, or has no such
            tenant or database.
    """
    chromadb = chromadb_module(user)
    require_text(url, "url")
    parsed = urlparse(url)
    if not parsed.hostname or parsed.scheme not in ("http", "https"):
        raise InvalidInputError("url", f"not an http(s) URL with a host: {url!r}")
    kwargs: dict[str, Any] = {}
    if tenant is not None:
        kwargs["tenant"] = tenant
    if database is not None:
        kwargs["database"] = database
    try:
        return chromadb.HttpClient(
            host=parsed.hostname,
            port=parsed.port or (443 if parsed.scheme == "https" else 8000),
            ssl=parsed.scheme == "https",
            headers=headers,
            settings=_settings(),
            **kwargs,
        )
    except Exception as e:  # unknown tenant / database, server unreachable, auth
        raise ConfigurationError(f"cannot use the Chroma server at {url}: {e}") from e


def cosine_collection(client: Any, name: str) -> Any:
    """The collection ``name`` (created if missing), searched by cosine distance."""
    # embedding_function=None: we always pass our own vectors (Chroma's default would
    # download an ONNX model).
    return client.get_or_create_collection(
        name, embedding_function=None, metadata={"hnsw:space": "cosine"}
    )
