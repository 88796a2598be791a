"""The command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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


# -- evaluate -> calibrate -> report ---------------------------------------------------------------


def test_convert_writes_rows(tmp_path, data_dir, capsys):
    import json

    assert main(["convert", "phd", "--out", str(tmp_path / "phd.jsonl"), "--limit", "3"]) == 0
    assert main(["convert", "chale", "-o", str(tmp_path / "c.jsonl"), "--limit", "2"]) == 0
    phd = [json.loads(x) for x in (tmp_path / "phd.jsonl").read_text().splitlines()]
    chale = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert len(phd) == 3 and {"question", "answer", "label", "entity"} <= set(phd[0])
    assert len(chale) == 6 and [r["label"] for r in chale[:3]] == [
        "factual",
        "hallucinated",
        "hallucinated",
    ]
    assert chale[0]["contexts"] and chale[0]["group"] == chale[2]["group"]


def test_evaluate_calibrate_report_loop(tmp_path, capsys):
    import json

    rows = [
        {"question": f"Q{i}?", "answer": f"A{i}", "label": "factual" if i % 2 else "hallucinated"}
        for i in range(6)
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = tmp_path / "c.yaml"
    config.write_text("detectors:\n  fake:\n    type: fake\n    options: {score: 0.4}\n")
    out = str(tmp_path / "out")
    assert main(["evaluate", str(data), "-c", str(config), "-o", out, "--no-progress"]) == 0
    assert "fake" in capsys.readouterr().out
    assert main(["evaluate", str(data), "-c", str(config), "-o", out, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["run"]["skipped"] == 6 and summary["detectors"]["fake"]["n"] == 6

    assert main(["calibrate", out, "-c", str(config), "--target", "recall=1.0"]) == 0
    assert "calibrated config written to" in capsys.readouterr().out
    assert "threshold:" in (tmp_path / "c.calibrated.yaml").read_text()
    assert (tmp_path / "out" / "calibration.json").exists()

    assert main(["report", out]) == 0
    assert capsys.readouterr().out.strip().endswith("report.html")


def test_evaluation_commands_report_bad_input_with_exit_code_2(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("detectors:\n  fake:\n    type: nope\n")
    data = tmp_path / "rows.jsonl"
    data.write_text('{"question": "Q?", "answer": "A"}\n')
    assert main(["evaluate", str(data), "-c", str(config), "-o", str(tmp_path / "o")]) == 2
    assert "detectors.fake.type" in capsys.readouterr().err
    assert main(["calibrate", str(tmp_path), "-c", str(config), "--target", "precision"]) == 2
    assert "--target" in capsys.readouterr().err


# -- bad files and paths: one line naming the file, row or field, exit code 2 ----------------------

_CONFIG = "detectors:\n  fake:\n    type: fake\n    options: {score: 0.4}\n"
_ROWS = [
    {"question": "Q1?", "answer": "A1", "label": "factual"},
    {"question": "Q2?", "answer": "A2", "label": "hallucinated"},
]


def _truthguard(*argv: str, cwd) -> subprocess.CompletedProcess:
    script = Path(sys.executable).with_name("truthguard")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "truthguard.cli"]
    return subprocess.run(
        [*cmd, *argv], cwd=cwd, capture_output=True, text=True, timeout=300, env=_OFFLINE_ENV
    )


# No provider credentials: a config that needs them must say so in one line.
_OFFLINE_ENV = {
    k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY")
}


@pytest.fixture()
def run_dir(tmp_path):
    """A folder with a config, good rows, a plain file and an evaluate run of the rows."""
    (tmp_path / "c.yaml").write_text(_CONFIG)
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _ROWS))
    (tmp_path / "afile").write_text("not a directory")
    argv = ["evaluate", str(tmp_path / "rows.jsonl"), "-c", str(tmp_path / "c.yaml")]
    argv += ["-o", str(tmp_path / "run")]
    assert main([*argv, "--no-progress"]) == 0
    return tmp_path


def _write_bytes(name: str, data: bytes):
    return lambda d: (d / name).write_bytes(data)


def _corrupt_results(d):
    lines = (d / "run" / "results.jsonl").read_text().splitlines(keepends=True)
    lines.insert(1, '{"id": "x", "detector": \n')
    (d / "run" / "results.jsonl").write_text("".join(lines))


_FEWL_CONFIG = """\
detectors:
  fewl:
    type: fewl
    reference_models:
      - {provider: openai, kwargs: {model: gpt-4o-mini, temperature: 0}}
    options: {mode: single, expertise: uniform, penalty: false}
store: {path: runs/fewl-store}
"""

_GOOD = json.dumps(_ROWS[0]).encode() + b"\n"
_BAD_INPUT = {
    "raw bytes": (
        _write_bytes("in.jsonl", _GOOD + b'{"question": "Q?", "answer": "A\xff\xfe"}\n'),
        ["evaluate", "in.jsonl", "-c", "c.yaml", "-o", "out"],
        ["in.jsonl line 2", "not UTF-8"],
    ),
    "question 42": (
        _write_bytes("in.jsonl", _GOOD + b'{"question": 42, "answer": "A"}\n'),
        ["evaluate", "in.jsonl", "-c", "c.yaml", "-o", "out"],
        ["in.jsonl line 2.question", "expected a string, got int"],
    ),
    "json list of non-objects": (
        _write_bytes("in.json", b'[{"question": "Q?", "answer": "A"}, 7]'),
        ["evaluate", "in.json", "-c", "c.yaml", "-o", "out"],
        ["in.json row 2", "expected a JSON object, got int"],
    ),
    "csv bytes": (
        _write_bytes("in.csv", b"question,answer\nQ?,A\nQ2?,B\xff\n"),
        ["evaluate", "in.csv", "-c", "c.yaml", "-o", "out"],
        ["in.csv line 3", "not UTF-8"],
    ),
    "openai model without an API key": (
        _write_bytes("fewl.yaml", _FEWL_CONFIG.encode()),
        ["evaluate", "rows.jsonl", "-c", "fewl.yaml", "-o", "runs/fewl", "--limit", "20"],
        ["detectors.fewl.reference_models[0]", "could not be built", "OPENAI_API_KEY"],
    ),
    "config not utf-8": (
        _write_bytes("latin.yaml", b"# caf\xe9\n" + _CONFIG.encode()),
        ["evaluate", "rows.jsonl", "-c", "latin.yaml", "-o", "out"],
        ["config", "latin.yaml", "not UTF-8"],
    ),
    "out is a file": (
        None,
        ["evaluate", "rows.jsonl", "-c", "c.yaml", "-o", "afile"],
        ["afile is not a directory"],
    ),
    "out is /dev/null": (
        None,
        ["evaluate", "rows.jsonl", "-c", "c.yaml", "-o", "/dev/null"],
        ["/dev/null is not a directory"],
    ),
    "out cannot be made": (
        None,
        ["evaluate", "rows.jsonl", "-c", "c.yaml", "-o", "afile/out"],
        ["cannot create the directory afile/out"],
    ),
    "corrupt results for evaluate": (
        _corrupt_results,
        ["evaluate", "rows.jsonl", "-c", "c.yaml", "-o", "run"],
        ["results.jsonl line 2", "corrupt result row", "--restart"],
    ),
    "corrupt results for report": (
        _corrupt_results,
        ["report", "run"],
        ["results.jsonl line 2", "corrupt result row"],
    ),
    "report -o unwritable": (
        None,
        ["report", "run", "-o", "afile/report.html"],
        ["afile"],
    ),
    "calibrate --write unwritable": (
        None,
        ["calibrate", "run", "-c", "c.yaml", "--write", "afile/calibrated.yaml"],
        ["afile"],
    ),
    "demo output unwritable": (
        None,
        ["demo", "--data", "nowhere", "--out", "afile/demo"],
        ["afile"],
    ),
}


@pytest.mark.parametrize("case", list(_BAD_INPUT))
def test_bad_files_and_paths_give_one_line_and_exit_code_2(run_dir, case):
    setup, argv, expected = _BAD_INPUT[case]
    if setup is not None:
        setup(run_dir)
    done = _truthguard(*argv, cwd=run_dir)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    for text in expected:
        assert text in done.stderr


def test_a_lone_surrogate_escape_is_cleaned_as_the_python_api_does(run_dir):
    (run_dir / "in.jsonl").write_text('{"question": "Q\\ud800?", "answer": "A\\udfff"}\n')
    done = _truthguard("evaluate", "in.jsonl", "-c", "c.yaml", "-o", "out", cwd=run_dir)
    assert done.returncode == 0, done.stderr
    row = json.loads((run_dir / "out" / "results.jsonl").read_text())
    assert (row["question"], row["answer"]) == ("Q\ufffd?", "A\ufffd")


def test_calibrate_leaves_the_config_alone_and_says_where_it_wrote(run_dir):
    config = run_dir / "c.yaml"
    original = "# thresholds for the nightly run\n" + _CONFIG
    config.write_text(original)
    done = _truthguard("calibrate", "run", "-c", "c.yaml", "--target", "recall=1.0", cwd=run_dir)
    assert done.returncode == 0, done.stderr
    assert config.read_text() == original  # comments and all
    calibrated = run_dir / "c.calibrated.yaml"
    assert "threshold:" in calibrated.read_text()
    assert f"calibrated config written to {calibrated.name} (c.yaml is unchanged)" in done.stdout
    # in place only when asked, and then the old file is kept
    done = _truthguard("calibrate", "run", "-c", "c.yaml", "--write", "c.yaml", cwd=run_dir)
    assert done.returncode == 0, done.stderr
    assert "threshold:" in config.read_text()
    assert (run_dir / "c.yaml.bak").read_text() == original
    assert "the previous version is kept in c.yaml.bak" in done.stdout


def test_export_sft_prints_the_factual_share_without_json(tmp_path, capsys):
    rows = [
        {"question": "Capital of France?", "answer": "Lyon is the capital.", "label": 1},
        {"question": "Capital of France?", "answer": "Paris is the capital.", "label": 0},
    ]
    reference = {"provider": "scripted", "kwargs": {"script": ["Paris is the capital."] * 9}}
    fewl = {"type": "fewl", "reference_models": [reference], "threshold": 0.0}
    fewl["options"] = {"expertise": "uniform", "penalty": False}
    data, config = tmp_path / "rows.jsonl", tmp_path / "fewl.json"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config.write_text(json.dumps({"detectors": {"fewl": fewl}}))
    out = str(tmp_path / "sft.jsonl")
    assert main(["export-sft", str(data), "-c", str(config), "-o", out]) == 0
    out = capsys.readouterr().out
    assert "100.0% of the chosen answers are factual by the gold labels" in out
