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
    assert "thresholds written" in capsys.readouterr().out
    assert "threshold:" in config.read_text()
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
