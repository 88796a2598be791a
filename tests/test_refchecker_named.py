"""Checkers by name and by command-line spec: which class each name, kind or folder gives."""

from __future__ import annotations

import json

import pytest

from truthguard.errors import ConfigurationError
from truthguard.refchecker import (
    AlignScoreChecker,
    HHEMChecker,
    LettuceDetectChecker,
    MiniCheckChecker,
    NLIChecker,
    RefChecker,
)
from truthguard.refchecker.named import CHECKER_NAMES, checker_from_spec, named_checker


def test_every_name_builds_its_checker_without_loading_it():
    assert CHECKER_NAMES == (
        "hhem-2.1-open",
        "minicheck-roberta-large",
        "minicheck-deberta-v3-large",
        "minicheck-flan-t5-large",
        "lettucedetect",
        "lettucedetect-large",
        "alignscore-base",
        "alignscore-large",
    )
    for name in CHECKER_NAMES:
        checker = named_checker(name)
        assert checker.model == name
        kinds = {
            "hhem": HHEMChecker,
            "mini": MiniCheckChecker,
            "lett": LettuceDetectChecker,
            "alig": AlignScoreChecker,
        }
        assert isinstance(checker, kinds[name[:4]])
        assert type(RefChecker(checker=name).checker) is type(checker)
    with pytest.raises(ConfigurationError, match="unknown checker 'alignscore'"):
        RefChecker(checker="alignscore")
    assert type(RefChecker(checker="local").checker).__name__ == "LocalChecker"
    pair = checker_from_spec("alignscore:./AlignScore-large.ckpt,./roberta-large")
    assert isinstance(pair, AlignScoreChecker)
    assert (pair.model, pair.base) == ("./AlignScore-large.ckpt", "./roberta-large")


def _folder(path, config):
    path.mkdir()
    (path / "config.json").write_text(json.dumps(config))
    return str(path)


def test_a_spec_names_a_kind_or_a_folder_read_by_its_config(tmp_path):
    assert checker_from_spec("local") is None
    assert isinstance(checker_from_spec("nli:cross-encoder/nli-deberta-v3-small"), NLIChecker)
    assert checker_from_spec("minicheck:lytang/MiniCheck-Flan-T5-Large").model == (
        "lytang/MiniCheck-Flan-T5-Large"
    )
    assert isinstance(checker_from_spec("hhem:./hhem"), HHEMChecker)
    assert isinstance(checker_from_spec("minicheck-flan-t5-large"), MiniCheckChecker)
    hhem = _folder(tmp_path / "h", {"model_type": "HHEMv2", "foundation": "google/flan-t5-base"})
    t5 = _folder(tmp_path / "t", {"model_type": "t5"})
    two = _folder(tmp_path / "r", {"model_type": "roberta", "id2label": {"0": "LABEL_0"}})
    nli = _folder(tmp_path / "n", {"model_type": "deberta-v2", "id2label": {"0": "contradiction"}})
    lettuce = _folder(
        tmp_path / "m",
        {"model_type": "modernbert", "architectures": ["ModernBertForTokenClassification"]},
    )
    assert isinstance(checker_from_spec(f"lettucedetect:{lettuce}"), LettuceDetectChecker)
    assert [type(checker_from_spec(f)) for f in (hhem, lettuce, t5, two, nli)] == [
        HHEMChecker,
        LettuceDetectChecker,
        MiniCheckChecker,
        MiniCheckChecker,
        NLIChecker,
    ]
    (tmp_path / "e").mkdir()
    with pytest.raises(ConfigurationError, match="no readable config"):
        checker_from_spec(str(tmp_path / "e"))
    with pytest.raises(ConfigurationError, match="give the model after minicheck:"):
        checker_from_spec("minicheck:")
    with pytest.raises(ConfigurationError, match="unknown checker 'deberta'"):
        checker_from_spec("deberta")
