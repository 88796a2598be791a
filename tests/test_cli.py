"""The command line."""

from __future__ import annotations

import pytest

from truthguard.cli import build_parser, main


def test_help_lists_demo_and_bench(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "demo" in out and "bench" in out


def test_unknown_benchmark_is_an_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["bench", "nonexistent"])
    assert info.value.code == 2


def test_every_registered_benchmark_has_json_and_data_flags():
    parser = build_parser()
    bench = next(a for a in parser._subparsers._group_actions[0].choices.items() if a[0] == "bench")
    subs = bench[1]._subparsers._group_actions[0].choices
    for name, sub in subs.items():
        flags = {opt for action in sub._actions for opt in action.option_strings}
        assert {"--json", "--data"} <= flags, name
