"""Calibration: curves, operating points, thresholds written back into the config."""

from __future__ import annotations

import json

import pytest

from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.evaluation.calibrate import auroc, calibrate, choose_threshold, sweep
from truthguard.evaluation.config import load_config, save_config

EXTRACT = "Break the answer below into"  # in the LLM extractor's prompt only
CHECK = "You compare one claim with reference passages"  # in the LLM checker's prompt only

# low scores are hallucinated, except one factual answer at 0.3 and one hallucinated at 0.7
SCORES = [0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9]
HALLU = [True, True, False, True, False, True, False, False]


def test_auroc_counts_ordered_pairs():
    assert auroc([0.1, 0.9], [True, False]) == 1.0
    assert auroc([0.9, 0.1], [True, False]) == 0.0
    assert auroc([0.5, 0.5], [True, False]) == 0.5
    assert auroc(SCORES, HALLU) == 0.8125  # 13 of 16 pairs ordered
    assert auroc([0.1], [True]) is None


def test_sweep_flags_scores_below_each_threshold():
    points = sweep(SCORES, HALLU)
    assert len(points) == len(SCORES) + 1
    first, last = points[0], points[-1]
    assert (first["tp"], first["fp"], first["precision"]) == (0, 0, None)
    assert (last["tp"], last["fp"], last["recall"]) == (4, 4, 1.0)
    at_04 = next(p for p in points if p["threshold"] == 0.4)  # flags 0.1, 0.2, 0.3
    assert (at_04["tp"], at_04["fp"], at_04["fn"], at_04["tn"]) == (2, 1, 2, 3)


def test_choose_threshold_for_precision_recall_and_f1():
    points = sweep(SCORES, HALLU)
    p = choose_threshold(points, "precision", 1.0)
    assert p["threshold"] == 0.3 and p["recall"] == 0.5
    r = choose_threshold(points, "recall", 1.0)
    assert r["threshold"] == 0.8 and r["precision"] == pytest.approx(4 / 6)
    f = choose_threshold(points, "f1")
    assert f["f1"] == max(q["f1"] for q in points)
    with pytest.raises(ConfigurationError, match="precision"):
        choose_threshold(sweep([0.1, 0.2], [False, True]), "precision", 0.9)
    with pytest.raises(InvalidInputError, match="value"):
        choose_threshold(points, "recall", 1.5)


def _results(scores, hallu):
    return [
        {
            "detector": "d",
            "score": s,
            "gold": "hallucinated" if h else "factual",
            "passing": None,
            "label": "factual",
        }
        for s, h in zip(scores, hallu, strict=True)
    ] + [{"detector": "d", "score": None, "gold": "factual", "label": "invalid"}]


def test_calibrate_writes_the_threshold_into_the_config(tmp_path):
    cfg_path = tmp_path / "c.toml"
    save_config(load_config({"detectors": {"d": {"type": "fake"}}}), cfg_path)
    out = calibrate(
        _results(SCORES, HALLU),
        target="precision",
        value=1.0,
        config=cfg_path,
        write_config=cfg_path,
    )
    entry = out["detectors"]["d"]
    assert entry["n"] == 8 and entry["skipped"] == 1 and entry["auroc"] == 0.8125
    assert entry["roc"][0] == (0.0, 0.0) and entry["roc"][-1] == (1.0, 1.0)
    cfg = load_config(cfg_path)
    assert cfg.detectors["d"].threshold == 0.3
    assert cfg.detectors["d"].calibration["precision"] == 1.0
    # the detector built from the calibrated config now flags below 0.3
    from truthguard.evaluation.config import build_detectors

    assert build_detectors(cfg)["d"].threshold == 0.3


def test_calibrate_needs_both_classes_and_known_detectors(tmp_path):
    with pytest.raises(InvalidInputError, match="label"):
        calibrate(_results([0.1, 0.2], [True, True]))
    with pytest.raises(InvalidInputError, match="detectors"):
        calibrate(_results(SCORES, HALLU), detectors=["other"])
    with pytest.raises(InvalidInputError, match="config"):
        calibrate(_results(SCORES, HALLU), write_config=tmp_path / "x.yaml")


# A local stage's scores, gold labels and verdicts (it passes from 0.35): wrong at 0.3, 0.4, 0.7
BAND_SCORES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
BAND_HALLU = [True, True, False, True, False, False, True, False, False, False]
BAND_PASSED = [s >= 0.35 for s in BAND_SCORES]


def test_the_band_for_a_coverage_is_the_most_accurate_that_decides_that_much():
    from truthguard.evaluation.band import band_table, choose_band

    table = band_table(BAND_SCORES, BAND_HALLU, BAND_PASSED)
    assert table.point(0)["band"] is None and table.point(0)["coverage"] == 1.0
    chosen = choose_band(table, coverage=0.8)
    assert chosen["band"] == [0.3, 0.4] and chosen["decided"] == 8
    assert chosen["balanced_accuracy"] == pytest.approx((2 / 3 + 1) / 2)
    assert chosen["target"] == {"coverage": 0.8}


def test_the_band_for_an_accuracy_decides_the_most_that_reach_it():
    from truthguard.evaluation.band import band_table, choose_band

    table = band_table(BAND_SCORES, BAND_HALLU, BAND_PASSED)
    chosen = choose_band(table, accuracy=1.0)
    # 0.3, 0.4 and 0.7 must go, and a band is one stretch of scores
    assert chosen["band"] == [0.3, 0.7] and chosen["coverage"] == 0.5
    assert chosen["accuracy"] == chosen["balanced_accuracy"] == 1.0
    forced = [s == 0.7 for s in BAND_SCORES]  # a signal escalates 0.7 whatever its score
    chosen = choose_band(
        band_table(BAND_SCORES, BAND_HALLU, BAND_PASSED, forced=forced), accuracy=1.0
    )
    assert chosen["band"] == [0.3, 0.4] and chosen["coverage"] == 0.7


def test_band_targets_out_of_reach_say_why():
    from truthguard.evaluation.band import band_table, choose_band

    forced = [s > 0.5 for s in BAND_SCORES]
    table = band_table(BAND_SCORES, BAND_HALLU, BAND_PASSED, forced=forced)
    with pytest.raises(ConfigurationError, match=r"at most 50.0% decided locally"):
        choose_band(table, coverage=0.7)
    with pytest.raises(InvalidInputError, match="coverage"):
        choose_band(table, coverage=0.7, accuracy=0.9)
    with pytest.raises(InvalidInputError, match="accuracy"):
        choose_band(table, accuracy=1.5)


def test_the_tradeoff_curve_rises_as_fewer_answers_are_decided_locally():
    from truthguard.evaluation.band import band_table, tradeoff_curve

    curve = tradeoff_curve(band_table(BAND_SCORES, BAND_HALLU, BAND_PASSED))
    coverage = [p["coverage"] for p in curve]
    accuracy = [p["balanced_accuracy"] for p in curve]
    assert coverage == sorted(coverage) and coverage[-1] == 1.0
    assert accuracy == sorted(accuracy, reverse=True) and accuracy[0] == 1.0


def _local_rows():
    """Result rows of a local RefChecker: rejections resting on a Neutral claim are wrong."""
    neutral = [{"label": "Neutral"}]
    contradiction = [{"label": "Contradiction"}]
    rows = []
    for i, score in enumerate(BAND_SCORES):
        rows.append(
            {
                "detector": "rc",
                "score": score,
                "gold": "hallucinated" if BAND_HALLU[i] else "factual",
                "label": "factual" if BAND_PASSED[i] else "hallucinated",
                "passing": BAND_PASSED[i],
                "details": {"claims": [{"label": "Entailment"}]},
            }
        )
    for _ in range(4):  # rejected on an unaligned paraphrase: factual, all at one score
        rows.append(
            {
                "detector": "rc",
                "score": 0.165,
                "gold": "factual",
                "label": "hallucinated",
                "passing": False,
                "details": {"claims": neutral},
            }
        )
        rows.append(
            {
                "detector": "rc",
                "score": 0.165,
                "gold": "hallucinated",
                "label": "hallucinated",
                "passing": False,
                "details": {"claims": contradiction},
            }
        )
    return rows


def test_calibrate_chooses_a_cascade_band_and_the_signals_that_help():
    from truthguard.evaluation.calibrate import format_calibration

    out = calibrate(_local_rows(), target="f1", cascade_accuracy=1.0)
    c = out["cascade"]["rc"]
    # the rejections resting on Neutral claims share a score with right ones: only the
    # undecided_claims signal tells them apart
    assert "undecided_claims" in c["escalate_on"] and c["balanced_accuracy"] == 1.0
    assert c["n"] == 18 and c["curve"]
    assert "CascadeChecker(band=(" in format_calibration(out)
    plain = calibrate(_local_rows(), target="f1", cascade_coverage=0.5)["cascade"]["rc"]
    assert plain["coverage"] >= 0.5


def test_calibrate_on_the_command_line_prints_the_band(tmp_path, capsys):
    from truthguard.cli import main
    from truthguard.evaluation.io import ResultWriter

    rows = [
        {**r, "id": f"r{i}", "index": i, "question": "Q?", "answer": "A."}
        for i, r in enumerate(_local_rows())
    ]
    ResultWriter(tmp_path / "results.jsonl").write(rows)
    cfg = tmp_path / "c.toml"
    save_config(load_config({"detectors": {"rc": {"type": "refchecker"}}}), cfg)
    assert (
        main(["calibrate", str(tmp_path), "-c", str(cfg), "--dry-run", "--cascade-coverage", "0.6"])
        == 0
    )
    assert "rc as a cascade's local stage:" in capsys.readouterr().out
    saved = json.loads((tmp_path / "calibration.json").read_text())
    assert saved["cascade"]["rc"]["coverage"] >= 0.6


def test_a_cascades_rows_are_read_as_its_local_stage():
    from truthguard.cascade import CascadeChecker
    from truthguard.evaluation.band import band_rows
    from truthguard.testing import FakeDetector

    local = FakeDetector(score=lambda inp: 0.4 if "maybe" in inp.answer else 0.9)
    cascade = CascadeChecker(local=local, escalate_to=FakeDetector(score=0.1), band=(0.3, 0.6))
    rows = []
    for answer, gold in (("It is maybe so.", "hallucinated"), ("It is so.", "factual")):
        r = cascade.check("Q?", answer, contexts=["C."])
        rows.append(
            {"detector": "cascade", "score": r.score, "label": r.label.value,
             "passing": r.passing, "details": r.details, "gold": gold}
        )  # fmt: skip
    results, gold = band_rows(rows)
    assert [r.score for r in results] == [0.4, 0.9]  # not the second stage's 0.1
    assert [r.passing for r in results] == [False, True] and gold == [True, False]
    assert results[0].details == {} and results[1].details["decided_by"] == "local"


def test_a_band_that_leaves_the_local_check_one_kind_only_has_no_balanced_accuracy():
    from truthguard.evaluation.band import band_table, choose_band

    # escalating 0.1 to 0.7 leaves three factual answers, all passed: no balanced accuracy of 100%
    table = band_table(BAND_SCORES, BAND_HALLU, BAND_PASSED)
    (i,) = [i for i in range(len(table.lo)) if table.point(i)["band"] == [0.1, 0.7]]
    point = table.point(i)
    assert point["accuracy"] == point["correct_passed"] == 1.0
    assert point["hallucinated_rejected"] is None and point["balanced_accuracy"] is None
    chosen = choose_band(table, accuracy=0.9)
    assert chosen["correct_passed"] is not None and chosen["hallucinated_rejected"] is not None


def test_fit_stages_fits_each_stage_on_what_the_stages_before_it_send_on():
    from truthguard.evaluation.band import fit_stages
    from truthguard.result import DetectionResult

    def result(score):
        return DetectionResult(detector="d", score=score, label="factual", passing=score >= 0.5)

    # stage 0 is wrong on the answers scored 0.5 and 0.6, stage 1 only on the one it scores 0.55
    first = [result(s) for s in (0.1, 0.2, 0.5, 0.6, 0.8, 0.9)]
    second = [result(s) for s in (0.1, 0.1, 0.2, 0.55, 0.9, 0.9)]
    hallucinated = [True, True, True, True, False, False]
    asked: list[tuple[int, list[int]]] = []

    def results(k, indices):
        asked.append((k, list(indices)))
        return [(first, second)[k][i] for i in indices]

    fitted = fit_stages(results, hallucinated, 3, coverage=[0.6, 0.5], try_signals=[])
    assert asked == [(0, [0, 1, 2, 3, 4, 5]), (1, [2, 3])]  # stage 1 sees only what 0 sends on
    assert fitted[0]["band"] == [0.5, 0.6] and fitted[0]["balanced_accuracy"] == 1.0
    assert (fitted[0]["reached"], fitted[0]["sent_on"]) == (6, 2)
    assert fitted[1]["band"] == [0.55, 0.55] and (fitted[1]["reached"], fitted[1]["sent_on"]) == (
        2,
        1,
    )
    # a target out of reach ends the fitting there: every band leaves a wrong end decided
    ends = [result(0.1), result(0.5), result(0.9)]  # rejected factual, right, passed hallucinated
    stopped = fit_stages(lambda k, idx: [ends[i] for i in idx], [False, False, True], 3,
                         accuracy=[1.0, 1.0])  # fmt: skip
    assert len(stopped) == 1 and stopped[0]["reached"] == 3 and "error" in stopped[0]
    with pytest.raises(InvalidInputError, match="at least two stages"):
        fit_stages(results, hallucinated, 1, coverage=[0.5])


def test_calibrate_chooses_every_band_of_a_three_stage_cascade_through_the_command_line(
    tmp_path, capsys
):
    """Local, a tiny MiniCheck and an LLM over OpenAIServer, each run on every answer by
    ``truthguard evaluate``; ``calibrate --cascade-stages`` chooses both bands and writes a
    cascade that, run by ``evaluate``, decides as calibrate said: the LLM only on what the
    open stage sends on."""
    from doubles import tiny_minicheck
    from truthguard.cli import main
    from truthguard.evaluation import read_results
    from truthguard.testing import OpenAIServer

    passages = [
        "The Marlow lighthouse was built in 1881 by the harbour board. It is 31 metres tall "
        "and painted white."
    ]
    answers = [
        "The Marlow lighthouse was built in 1881.",
        "It is 31 metres tall.",
        "The lighthouse is painted white.",
        "The harbour board built the Marlow lighthouse.",
        "The Marlow lighthouse was built in 1902.",
        "It is 45 metres tall.",
    ]
    question = "What do we know about the Marlow lighthouse?"
    folder = tiny_minicheck(tmp_path / "mc", "roberta", [*passages, *answers, question])
    local = {"type": "refchecker"}
    open_stage = {
        "type": "refchecker",
        "options": {"checker": f"minicheck:{folder}", "score": "mean_support"},
    }

    def run(name, detectors, labels=None):
        rows = [
            {"id": f"a{i}", "question": question, "answer": a, "contexts": passages}
            | ({} if labels is None else {"label": labels[i]})
            for i, a in enumerate(answers)
        ]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        save_config(load_config({"detectors": detectors}), tmp_path / f"{name}.toml")
        argv = ["evaluate", str(tmp_path / f"{name}.jsonl"), "-c", str(tmp_path / f"{name}.toml")]
        assert main([*argv, "--out", str(tmp_path / name), "--no-progress"]) == 0
        return {(r["id"], r["detector"]): r for r in read_results(tmp_path / name)}

    # the gold labels: the local verdict, but for the two passed answers it scores lowest
    # (next to each other in its scores): those are wrong, so its band must send them on
    probe = run("probe", {"local": local, "open": open_stage})
    scored = [probe[(f"a{i}", "local")] for i in range(len(answers))]
    passed = sorted((r["score"], i) for i, r in enumerate(scored) if r["passing"])
    assert len(passed) >= 3 and len(passed) < len(answers)  # both kinds stay decided locally
    x, y = passed[0][1], passed[1][1]
    labels = ["factual" if r["passing"] else "hallucinated" for r in scored]
    labels[x] = labels[y] = "hallucinated"
    # the open stage passes the one of the two it scores higher: wrong there, right on the other
    sx, sy = (probe[(f"a{i}", "open")]["score"] for i in (x, y))
    assert sx != sy  # random weights, two different answers
    wrong, right = (x, y) if sx > sy else (y, x)
    open_stage["threshold"] = (sx + sy) / 2
    replies = {EXTRACT: '("The lighthouse", "is painted", "white")', CHECK: "Contradiction"}
    with OpenAIServer(reply=replies) as server:
        model = {
            "provider": "openai",
            "kwargs": {"model": "gpt-test", "base_url": server.base_url, "api_key": "sk-test",
                       "max_retries": 0},
        }  # fmt: skip
        llm = {"type": "refchecker", "model": model}
        run("all", {"local": local, "open": open_stage, "llm": llm}, labels)
        config = tmp_path / "all.toml"
        argv = ["calibrate", str(tmp_path / "all"), "-c", str(config)]
        argv += ["--cascade-stages", "local,open,llm", "--cascade-coverage", "0.5"]
        assert main(argv) == 0
        printed = capsys.readouterr().out
        assert "cascade of local -> open -> llm on 6 labelled answers:" in printed
        assert "local: band " in printed and "decides 4 of the 6 answers" in printed
        assert "open: band " in printed and "decides 1 of the 2 answers" in printed
        # the LLM rejects the one answer it gets, rightly; every answer is decided rightly
        assert "llm: decides the rest (1 answers) at balanced accuracy 100.0%" in printed
        assert "the cascade: balanced accuracy 100.0% on these answers" in printed
        assert "CascadeChecker(stages=[CascadeStage(name='local'" in printed
        fitted = json.loads((tmp_path / "all" / "calibration.json").read_text())["stages"]
        local_fit, open_fit = fitted["fitted"]
        lo, hi = local_fit["band"]
        assert lo == scored[x]["score"] or lo == scored[y]["score"]
        assert {lo, hi} == {scored[x]["score"], scored[y]["score"]}
        assert local_fit["balanced_accuracy"] == 1.0 and open_fit["balanced_accuracy"] == 1.0
        # the written config holds a cascade of the three detectors with the chosen bands
        written = load_config(tmp_path / "all.calibrated.toml")
        stages = written.detectors["cascade"].options["stages"]
        assert [s["name"] for s in stages] == ["local", "open", "llm"]
        assert [s.get("band") for s in stages[:2]] == [local_fit["band"], open_fit["band"]]
        assert [s["llm"] for s in stages] == [False, False, True]
        assert stages[1]["options"]["threshold"] == open_stage["threshold"]
        # run as evaluate runs it, the cascade decides as calibrate said
        server.reset()
        cascade = {"cascade": written.detectors["cascade"].model_dump(exclude_none=True)}
        ran = run("cascade", cascade, labels)
        llm_answers = {
            r.prompt.split("Answer:")[-1] for r in server.requests if EXTRACT in r.prompt
        }
    decided = {i: ran[(f"a{i}", "cascade")]["details"]["decided_by"] for i in range(6)}
    assert decided[right] == "open" and decided[wrong] == "llm"
    assert [decided[i] for i in range(6) if i not in (x, y)] == ["local"] * 4
    assert len(server.requests) == 2  # one extraction and one check, for that answer only
    assert len(llm_answers) == 1 and answers[wrong] in llm_answers.pop()
    assert all(ran[(f"a{i}", "cascade")]["passing"] is (labels[i] == "factual") for i in range(6))
