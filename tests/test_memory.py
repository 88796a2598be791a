"""truthguard.memory: one budget in bytes for the process-wide caches."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from truthguard.errors import InvalidInputError
from truthguard.memory import (
    SHARES,
    SizedCache,
    cache_usage,
    memoised,
    memory_budget,
    set_memory_budget,
)


@pytest.fixture()
def budget():
    """Restore the budget a test changes."""
    before = memory_budget()
    yield
    set_memory_budget(before)


def test_a_sized_cache_evicts_the_least_recently_used_past_its_bytes():
    cache: SizedCache[str, str] = SizedCache("example", max_bytes=1_000)
    cache.put("a", "A", 200)  # each counts 200 + a fixed overhead of 200: two fit
    cache.put("b", "B", 200)
    assert cache.get("a") == "A"  # now the most recent
    cache.put("c", "C", 200)
    assert "b" not in cache and cache.get("a") == "A" and cache.get("c") == "C"
    assert cache.nbytes == 800 and len(cache) == 2
    cache.put("a", "A2", 400)  # a replaced entry is counted once, at its new size
    assert cache.get("a") == "A2" and cache.nbytes == 600 + 400 and len(cache) == 2
    cache.put("d", "D", 200)  # "c" is now the least recent
    assert "c" not in cache and cache.nbytes == 1_000 and len(cache) == 2
    cache.put("huge", "H", 5_000)  # larger than the whole bound: not kept, nothing evicted
    assert "huge" not in cache and cache.get("a") == "A2" and "d" in cache
    assert (cache.hits, cache.misses) == (5, 0)
    assert cache.get("b") is None and cache.misses == 1


def test_a_sized_cache_discards_resizes_and_bounds_entries():
    cache: SizedCache[tuple[int, str], int] = SizedCache("example", max_bytes=10_000)
    for i in range(6):
        cache.put((i % 2, str(i)), i, 100)
    cache.discard(lambda key: key[0] == 0)
    assert sorted(k for k, _ in (list(cache._data))) == [0, 0, 0]
    assert cache.nbytes == 3 * 300
    cache.resize(max_entries=1)
    assert list(cache._data) == [(0, "4")] and cache.nbytes == 300
    cache.resize(0)
    assert len(cache) == 0 and cache.nbytes == 0
    with pytest.raises(InvalidInputError, match="max_bytes"):
        cache.resize(-1)
    with pytest.raises(InvalidInputError, match="name"):
        SizedCache("no such share")


def test_shared_caches_take_their_share_of_the_budget_and_follow_it(budget):
    from truthguard.embedding import _onnx
    from truthguard.embedding.cache import embedding_cache
    from truthguard.refchecker import (
        _analysis,
        detector,
        grounding,
        retrieval,
        softmatch,
        structure,
    )

    assert sum(SHARES.values()) == pytest.approx(1.0)
    set_memory_budget(100)
    shared = {
        "vectors": embedding_cache()._data,
        "encoder states": _onnx.KEPT,
        "analyses": _analysis._cache,
        "token vectors": softmatch.TOKEN_VECTORS,
    }
    for name, cache in shared.items():
        assert cache.max_bytes == int(SHARES[name] * 100 * 2**20), name
    # the references' memos split their share, and so do the parses and what is read from them
    split = {
        "references": [detector._segmented, retrieval._where, grounding._pool_of],
        "parses": [structure.parse, structure.counted, structure._value_contexts],
    }
    for name, memos in split.items():
        parts = [m.cache for m in memos]
        assert all(c.name == name for c in parts)
        whole = SHARES[name] * 100 * 2**20
        assert sum(c.max_bytes for c in parts) == pytest.approx(whole, abs=3)
        assert cache_usage()[name]["max_bytes"] == pytest.approx(whole, abs=3)
    _analysis.analyse("The bridge opened in 1932 and spans the harbour.")
    assert len(_analysis._cache) >= 1
    set_memory_budget(0)  # shrinking evicts at once
    assert len(_analysis._cache) == 0 and _analysis._cache.nbytes == 0
    _analysis.analyse("The bridge opened in 1932 and spans the harbour.")
    assert len(_analysis._cache) == 0  # with no budget nothing is kept
    usage = cache_usage()
    assert set(SHARES) <= set(usage)
    assert all(usage[name]["bytes"] == usage[name]["max_bytes"] == 0 for name in SHARES)
    with pytest.raises(InvalidInputError, match="mb"):
        set_memory_budget(-1)


def test_memoised_keeps_results_within_its_share(budget):
    calls: list[str] = []

    @memoised("analyses", lambda value: len(value) * 1_000)
    def shout(text: str) -> str:
        """Upper case."""
        calls.append(text)
        return text.upper()

    set_memory_budget(1)  # the analyses' share: 15% of 1 MiB, about 157 KB
    assert shout("abc") == "ABC" and shout("abc") == "ABC" and calls == ["abc"]
    assert shout.__doc__ == "Upper case." and shout.cache.nbytes == 3_200
    for i in range(100):
        shout(f"text {i:03d}")  # 8 KB each: only the newest stay
    assert shout.cache.nbytes <= shout.cache.max_bytes
    assert "text 099" in shout.cache and "abc" not in shout.cache


def test_memoised_keys_several_arguments_by_their_tuple_and_takes_part_of_a_share(budget):
    calls: list[tuple[str, int]] = []

    @memoised("references", lambda value: 10_000, part=0.25)
    def cut(text: str, size: int) -> tuple[str, ...]:
        calls.append((text, size))
        return tuple(text[i : i + size] for i in range(0, len(text), size))

    set_memory_budget(1)  # a quarter of the references' 10% of 1 MiB: about 26 KB, 2 entries
    assert cut.cache.max_bytes == int(SHARES["references"] * 0.25 * 2**20)
    assert cut("abcdef", 2) == ("ab", "cd", "ef") and cut("abcdef", 2) == ("ab", "cd", "ef")
    assert cut("abcdef", 3) == ("abc", "def") and calls == [("abcdef", 2), ("abcdef", 3)]
    assert ("abcdef", 2) in cut.cache
    cut("ghijkl", 2)  # a third entry of 10 KB: the least recently used goes
    assert len(cut.cache) == 2 and ("abcdef", 2) not in cut.cache
    cut.cache_clear()
    assert len(cut.cache) == 0
    with pytest.raises(InvalidInputError, match="part"):
        SizedCache("references", part=0)


def test_the_word_memos_are_counted_and_emptied_past_their_share(budget):
    from truthguard.memory import WORD_ENTRY_BYTES, word_memos
    from truthguard.refchecker import _lemmas, _tokens

    memos = word_memos()
    assert _tokens.stem in memos and _lemmas.lemmas in memos
    assert all(m.cache_parameters()["maxsize"] >= 1024 for m in memos)
    set_memory_budget(64)  # empties nothing it holds: far below the share
    _tokens.stem("towering")
    assert _tokens.stem.cache_info().currsize >= 1
    usage = cache_usage()["words"]
    assert usage["bytes"] == usage["entries"] * WORD_ENTRY_BYTES
    assert usage["max_bytes"] == int(SHARES["words"] * 64 * 2**20)

    set_memory_budget(1)  # the words' share: 5% of 1 MiB, 227 entries at 230 bytes
    share = cache_usage()["words"]["max_bytes"]
    assert share // WORD_ENTRY_BYTES == 227
    for i in range(400):  # new words, as a new text brings them
        _tokens.stem(f"builder{i}s")
    assert cache_usage()["words"]["bytes"] > share
    # they are counted as new texts enter the budget's caches
    texts: SizedCache[int, str] = SizedCache("example", max_bytes=1_000_000)
    for i in range(64):
        texts.put(i, "text", 10)
    assert cache_usage()["words"]["bytes"] <= share
    assert _tokens.stem.cache_info().currsize < 227
    assert _tokens.stem("builders") == _tokens.stem("builders")  # emptied, still memoising


def test_the_budget_is_read_from_the_environment():
    code = (
        "import json\n"
        "from truthguard.memory import memory_budget, cache_usage\n"
        "from truthguard.embedding.cache import embedding_cache\n"
        "print(json.dumps([memory_budget(), embedding_cache().max_bytes]))\n"
    )
    env = {**os.environ, "TRUTHGUARD_MEMORY_BUDGET_MB": "10"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [10.0, int(SHARES["vectors"] * 10 * 2**20)]
    env["TRUTHGUARD_MEMORY_BUDGET_MB"] = "lots"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "TRUTHGUARD_MEMORY_BUDGET_MB" in out.stderr


def test_a_local_check_keeps_every_cache_within_its_share(embedder, budget):
    from truthguard.refchecker import LocalChecker, RefChecker

    set_memory_budget(2)  # small enough that distinct references fill every share
    checker = RefChecker(checker=LocalChecker(similarity=embedder))
    for i in range(12):
        reference = " ".join(
            f"The tower number {i}{k} was finished in {1700 + 13 * i + k} by builder {i * 7 + k}."
            for k in range(5)
        )
        answer = reference.split(". ")[0] + " and it is not tall."
        checker.invoke({"question": "Which tower?", "answer": answer, "references": [reference]})
    usage = cache_usage()
    for name in SHARES:
        row = usage[name]
        assert 0 < row["bytes"] <= row["max_bytes"], (name, row)
