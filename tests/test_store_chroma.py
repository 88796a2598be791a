"""Chroma clients: server URLs, headers, tenants and databases."""

from __future__ import annotations

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
