"""refchecker._lemmas: lemminflect's lemma table read by word, the same mapping as its own."""

from __future__ import annotations

import gzip

import pytest

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
