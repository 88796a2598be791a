"""refchecker._lemmas: lemminflect's lemma table read by word, the same mapping as its own."""

from __future__ import annotations

import gzip

import pytest

from doubles import fresh_interpreter
from truthguard.refchecker._lemmas import LemmaTable, _lemminflect, lemmas


def _table(tmp_path, lines):
    path = tmp_path / "lemma_lu.csv.gz"
    with gzip.open(path, "wb") as f:
        f.write("".join(f"{line}\n" for line in lines).encode())
    return LemmaTable(str(path))


def test_the_table_is_lemminflects_own_for_every_word():
    from lemminflect.codecs.LemmaLUCodec import LemmaLUCodec

    path = _lemminflect().Lemmatizer().lemma_lu_fn
    expected = LemmaLUCodec.load(path)
    table = LemmaTable(path)
    assert len(table) == len(expected) > 50_000
    assert list(table) == list(expected)
    for word, entry in expected.items():
        got = table[word]
        assert got == entry and list(got) == list(entry), word  # parts of speech in file order


def test_a_words_lines_are_found_between_longer_words_and_the_last_line_wins(tmp_path):
    table = _table(
        tmp_path,
        ["ab,noun,x", "ab-c,verb,y", "ab,modal,z/zz", "ab,noun,w", "abc,adj,v", "b,adv,u"],
    )
    assert table["ab"] == {"NOUN": ("w",), "AUX": ("z", "zz")}
    assert list(table["ab"]) == ["NOUN", "AUX"]
    assert table["ab-c"] == {"VERB": ("y",)} and table["abc"] == {"ADJ": ("v",)}
    assert table.get("a") is None and table.get("ab,") is None and table.get("") is None
    with pytest.raises(KeyError):
        table["abcd"]
    assert list(table) == ["ab", "ab-c", "abc", "b"] and len(table) == 4


def test_lemmas_look_words_up_in_the_table_read_by_word():
    lemmatizer = _lemminflect().Lemmatizer()
    assert dict(lemmas("wrote")) == {"VERB": ("write",)}
    assert dict(lemmas("Geese")) == {"NOUN": ("Goose",)}  # the word's capitals kept
    assert isinstance(lemmatizer.lemma_dict, LemmaTable)


def test_the_first_look_ups_of_concurrent_checks_read_the_table_once():
    # A batch's checks start together, so their first look-ups race to read the table: each
    # would read one (a tenth of a second and 10 MiB apiece). The table is read slowly here so
    # that both threads reach it before either has read it.
    code = (
        "import json, threading, time\n"
        "from truthguard.refchecker import _lemmas\n"
        "made = []\n"
        "init = _lemmas.LemmaTable.__init__\n"
        "def slow(self, *a, **k):\n"
        "    made.append(1)\n"
        "    time.sleep(0.3)\n"
        "    init(self, *a, **k)\n"
        "_lemmas.LemmaTable.__init__ = slow\n"
        "words = ['wrote', 'children']\n"
        "found = {}\n"
        "def go(w):\n"
        "    found[w] = dict(_lemmas.lemmas(w))\n"
        "threads = [threading.Thread(target=go, args=(w,)) for w in words]\n"
        "for t in threads: t.start()\n"
        "for t in threads: t.join()\n"
        "print(json.dumps([len(made), [found.get(w) for w in words]]))\n"
    )
    made, found = fresh_interpreter(code)
    assert made == 1
    assert found == [{"VERB": ["write"]}, {"NOUN": ["child"]}]
