"""``truthguard bench grounding``: AUROC, the table and its passage figures, an end-to-end run."""

from __future__ import annotations

import json
import re

import pytest

from truthguard.bench._perturbations import INVENTED, TYPES
from truthguard.bench.grounding import PASSAGES, auroc, format_table, tabulate
from truthguard.cli import main


def test_auroc_counts_ties_half():
    assert auroc([1.0, 1.0], [0.0, 1.0]) == pytest.approx(0.75)
    assert auroc([], [1.0]) is None


def _p(kind: str, variant: str) -> dict:
    return {
        "answer": f"{kind} {variant}",
        "reference": "r",
        "kind": kind,
        "variant": variant,
        "ref_id": 0,
        "replacement": None,
    }


# whether each kind was flagged, per variant: half of the copied and reworded substitutions are,
# one passage substitution of two and the passage control, one reordered substitution of two and
# the reordered control, two invented sentences of three (which have no controls of their own)
FLAGGED_BY_VARIANT = {
    "copied": {"year": False, "negation_added": True, "unchanged": False},
    "reworded": {"year": True, "negation_added": False, "reworded": False},
    "passage": {"year": True, "negation_added": False, "unchanged": True},
    "long_passage": {"year": False, "unchanged": False},
    "long_reworded": {"year": True, "reworded": False},
    "long_reordered": {"year": True, "content_noun": False, "reworded": True},
    "long_invented": {"year": True, "person": True, "place": False},
}
FLAGGED = [
    (_p(kind, variant), flagged)
    for variant, kinds in FLAGGED_BY_VARIANT.items()
    for kind, flagged in kinds.items()
]


def _result(perturbations: dict) -> dict:
    return {
        "config": {},
        "fixed_cases": [],
        "perturbations": perturbations,
        "ms_per_claim": 1.0,
        "cpu_ms_per_claim": 2.0,
        "claims": 9,
    }


def test_headline_and_all_column_leave_passages_out():
    t = tabulate([p for p, _ in FLAGGED], [f for _, f in FLAGGED])
    assert t["caught_overall"] == pytest.approx(50.0)  # 2 of 4 copied / reworded substitutions
    assert t["false_alarms"] == 0.0  # the passage control's alarm is not counted
    assert t["passage_caught"] == pytest.approx(50.0)  # 1 of 2 passage substitutions
    assert t["passage_false_alarms"] == pytest.approx(100.0)
    assert (t["n"], t["n_passage"], t["n_long_passage"], t["n_long_reworded"]) == (6, 3, 2, 2)
    assert (t["long_passage_caught"], t["long_passage_false_alarms"]) == (0.0, 0.0)
    assert (t["long_reworded_caught"], t["long_reworded_false_alarms"]) == (100.0, 0.0)
    assert (t["long_reordered_caught"], t["long_reordered_false_alarms"]) == (50.0, 100.0)
    assert (t["n_long_reordered"], t["n_long_invented"]) == (3, 3)
    assert t["long_invented_caught"] == pytest.approx(200 / 3)
    assert t["long_invented_false_alarms"] == 0.0  # the long passages' control
    year = t["rates"]["year"]
    assert year["all"] == {"flagged": 1, "n": 2, "rate": 50.0}
    assert year["passage"] == {"flagged": 1, "n": 1, "rate": 100.0}
    assert "passage" not in t["rates"]["reworded"]
    # without passages, the headline is the same and the passage figures are None
    rest = [(p, f) for p, f in FLAGGED if p["variant"] not in PASSAGES]
    t0 = tabulate([p for p, _ in rest], [f for _, f in rest])
    assert (t0["caught_overall"], t0["false_alarms"]) == (t["caught_overall"], t["false_alarms"])
    assert t0["passage_caught"] is None and t0["passage_false_alarms"] is None
    assert t0["n_passage"] == t0["n_long_passage"] == t0["n_long_reworded"] == 0
    assert t0["n_long_reordered"] == t0["n_long_invented"] == 0
    assert t0["long_invented_caught"] is None and t0["long_invented_false_alarms"] is None


def test_invented_sentences_take_the_false_alarms_of_the_long_passages():
    # the passages an invented sentence is put in, without it, are the long-passage controls
    flagged = [(_p("unchanged", "long_passage"), True), (_p("unchanged", "long_passage"), False)]
    flagged += [(_p("year", "long_invented"), False), (_p("unchanged", "long_reworded"), False)]
    t = tabulate([p for p, _ in flagged], [f for _, f in flagged])
    assert t["long_passage_false_alarms"] == t["long_invented_false_alarms"] == 50.0
    assert t["long_invented_caught"] == 0.0
    assert "long_invented" not in t["rates"]["unchanged"]


def test_table_has_a_passage_column_and_line():
    table = format_table(_result(tabulate([p for p, _ in FLAGGED], [f for _, f in FLAGGED])))
    lines = table.splitlines()
    assert lines[2].split() == [
        "perturbation",
        "copied",
        "reworded",
        "passage",
        "long",
        "long-reworded",
        "long-reordered",
        "long-invented",
        "all",
    ]
    year = next(line for line in lines if line.startswith("year "))
    # copied, reworded, passage, long, long-reworded, long-reordered, long-invented, all: the
    # passages' cells are not in "all"
    assert re.findall(r"[\d.]+% \(\s*\d+\)", year) == [
        "0.0% (  1)",
        "100.0% (  1)",
        "100.0% (  1)",
        "0.0% (  1)",
        "100.0% (  1)",
        "100.0% (  1)",
        "100.0% (  1)",
        "50.0% (  2)",
    ]
    person = next(line for line in lines if line.startswith("person "))
    assert person.split()[1:] == [*["-"] * 6, "100.0%", "(", "1)", "-"]
    control = next(line for line in lines if line.startswith("control:reworded"))
    assert control.split()[1:] == [
        *("-", "0.0%", "(", "1)", "-", "-"),
        *("0.0%", "(", "1)", "100.0%", "(", "1)", "-", "0.0%", "(", "1)"),
    ]
    headline = next(i for i, line in enumerate(lines) if "substitutions caught: 50.0%" in line)
    assert lines[headline + 1] == (
        "in a passage (the sentence between its neighbours): substitutions caught 50.0%   "
        "false alarms 100.0%"
    )
    assert lines[headline + 2] == (
        "in a long passage (up to two neighbours each side): substitutions caught 0.0%   "
        "false alarms 0.0%"
    )
    assert lines[headline + 3] == (
        "reworded, in a long passage: substitutions caught 100.0%   false alarms 0.0%"
    )
    assert lines[headline + 4] == (
        "reworded with clauses reordered, in a long passage: substitutions caught 50.0%   "
        "false alarms 100.0%"
    )
    assert lines[headline + 5] == (
        "an invented sentence put in a long passage (false alarms: the long passages): "
        "substitutions caught 66.7%   false alarms 0.0%"
    )
    rest = [(p, f) for p, f in FLAGGED if p["variant"] not in PASSAGES]
    table0 = format_table(_result(tabulate([p for p, _ in rest], [f for _, f in rest])))
    assert "in a passage" not in table0 and "long passage" not in table0


def test_bench_runs_end_to_end(data_dir, embedder, capsys):
    args = ["bench", "grounding", "--data", str(data_dir / "chale"), "--per-type", "1"]
    assert main([*args, "--limit", "2", "--json", "--no-progress"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["chale"]["n"] == 2 and set(result["chale"]["pass_rate"]) >= {"non_halu"}
    # "carved jade" for "baked clay" alone is a known limit of the support model (docs/detectors.md)
    passed = [c["passed"] for c in result["fixed_cases"]]
    assert [passed[0], passed[1], passed[3]] == [True, False, False]
    rates = result["perturbations"]["rates"]
    assert "unchanged" in rates and all(v["all"]["n"] >= 1 for v in rates.values())
    assert result["cpu_ms_per_claim"] > 0 and result["chale"]["cpu_ms_per_claim"] > 0
    p = result["perturbations"]
    assert result["config"]["passages"] is True and p["n_passage"] >= 1
    assert p["passage_caught"] is not None and p["passage_false_alarms"] is not None
    assert "passage" in rates["unchanged"]
    # the reordered passages, one per type at most; the invented sentences go into the long
    # passages' controls (with one copied control, there may be none), whose false alarms they take
    reordered = [c["long_reordered"] for c in rates.values() if "long_reordered" in c]
    assert p["n_long_reordered"] == sum(c["n"] for c in reordered) >= 1
    changed = [
        c["long_reordered"] for k, c in rates.items() if k in TYPES and "long_reordered" in c
    ]
    if changed:  # the caught rate is the changed ones' flagged share of that column
        flagged = sum(c["flagged"] for c in changed)
        assert p["long_reordered_caught"] == pytest.approx(
            100.0 * flagged / sum(c["n"] for c in changed)
        )
    else:
        assert p["long_reordered_caught"] is None
    assert "long_reordered" in rates["reworded"]
    n_long = rates["unchanged"].get("long_passage", {"n": 0})["n"]
    assert p["n_long_invented"] <= len(INVENTED) * n_long
    assert p["long_invented_false_alarms"] == p["long_passage_false_alarms"]
    for cols in rates.values():  # "all" counts copied and reworded answers only
        assert cols["all"]["n"] == sum(cols[v]["n"] for v in ("copied", "reworded") if v in cols)
    assert sum(c["all"]["n"] for c in rates.values()) == p["n"]
    assert main([*args, "--skip-chale", "--no-passages", "--json", "--no-progress"]) == 0
    alone = json.loads(capsys.readouterr().out)["perturbations"]
    assert alone["n_passage"] == alone["n_long_passage"] == 0
    assert alone["n_long_reordered"] == alone["n_long_invented"] == 0
    assert alone["passage_caught"] is None and alone["long_passage_caught"] is None
    assert alone["long_reordered_caught"] is None and alone["long_invented_false_alarms"] is None
    assert not any(set(PASSAGES) & set(cols) for cols in alone["rates"].values())
    # the headline is the same with or without passages
    assert (alone["caught_overall"], alone["false_alarms"]) == (
        p["caught_overall"],
        p["false_alarms"],
    )
    assert main([*args, "--skip-chale", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "CPU" in out.split("speed:", 1)[1].splitlines()[0]
    assert "in a passage (the sentence between its neighbours): substitutions caught" in out
    assert "reworded with clauses reordered, in a long passage: substitutions caught" in out
    assert "an invented sentence put in a long passage" in out


def test_a_saved_perturbation_set_is_checked_again_as_drawn(data_dir, embedder, capsys, tmp_path):
    args = ["bench", "grounding", "--data", str(data_dir / "chale"), "--per-type", "1"]
    args += ["--skip-chale", "--json", "--no-progress"]
    saved = tmp_path / "perturbations.jsonl"
    assert main([*args, "--save-perturbations", str(saved)]) == 0
    drawn = json.loads(capsys.readouterr().out)["perturbations"]
    lines = [json.loads(line) for line in saved.read_text().splitlines()]
    assert sum(p["variant"] not in PASSAGES for p in lines) == drawn["n"]
    assert sum(p["variant"] == "passage" for p in lines) == drawn["n_passage"]
    # another seed would draw another set; the saved one is read instead and decided the same
    assert main([*args, "--seed", "7", "--perturbations", str(saved)]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["perturbations"] == drawn and again["config"]["perturbations_from"] == str(saved)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**lines[0], "ref_id": 10_000}) + "\n")
    assert main([*args, "--perturbations", str(bad)]) == 2
    assert "line 1: ref_id 10000 is no CHALE question" in capsys.readouterr().err


def test_bench_asks_every_question_in_a_chat(data_dir, embedder, capsys, monkeypatch):
    from truthguard.bench import grounding

    seen: list[dict] = []
    run_all = grounding._run_all

    async def recording(detector, inputs, batch, show):
        seen.extend(inputs)
        assert detector.chat_replies == "grounded"
        return await run_all(detector, inputs, batch, show)

    monkeypatch.setattr(grounding, "_run_all", recording)
    args = ["bench", "grounding", "--data", str(data_dir / "chale"), "--per-type", "1"]
    assert main([*args, "--limit", "2", "--chat", "grounded", "--json", "--no-progress"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["config"]["chat"] == "grounded" and result["chale"]["n"] == 2
    assert seen and all(inp["history"] == [inp["question"]] for inp in seen)
    # held to the reference as an answer is, the fixed cases decide as without a chat
    # "carved jade" for "baked clay" alone is a known limit of the support model (docs/detectors.md)
    passed = [c["passed"] for c in result["fixed_cases"]]
    assert [passed[0], passed[1], passed[3]] == [True, False, False]
