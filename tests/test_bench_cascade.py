"""``truthguard bench cascade``: disjoint fitting and bench rows, the local part, the LLM part."""

from __future__ import annotations

import json

import pytest

from truthguard.bench.cascade import format_table, load_rag_answers, task_rows
from truthguard.cli import main
from truthguard.errors import ConfigurationError, DatasetNotFoundError, InvalidInputError
from truthguard.testing import OpenAIServer

YEARS = [1881, 1894, 1903, 1911, 1925, 1938, 1947, 1952, 1966, 1979]
PLACES = ["Marlow", "Kell", "Dunmore", "Ashby", "Penrith", "Tarbet", "Wick", "Alnmouth"]


def _qa_rows() -> list[dict]:
    rows = []
    for i, year in enumerate(YEARS):
        place = PLACES[i % len(PLACES)]
        rows.append(
            {
                "knowledge": f"The {place} lighthouse was built in {year} by the harbour board.",
                "question": f"When was the {place} lighthouse built?",
                "right_answer": f"The {place} lighthouse was built in {year}.",
                "hallucinated_answer": f"The {place} lighthouse was built in {year + 21} by the "
                "navy.",
            }
        )
    return rows


def _rag_rows() -> list[dict]:
    rows = []
    for q, place in enumerate(PLACES[:4]):
        context = f"The {place} bridge opened in 1932. It has three arches of red sandstone."
        answers = {
            "correct": (f"The {place} bridge opened in 1932.", "factual"),
            # rejected on a claim the local check cannot align (Neutral): an undecided claim
            "correct_joined": (
                f"The {place} bridge, opened in 1932, is built of red sandstone.",
                "factual",
            ),
            "hedge": ("It opened in 1932; the passage does not say who built it.", "factual"),
            "reworded_wrong": (f"The {place} bridge opened in 1958.", "hallucinated"),
            "invented": (
                f"The {place} bridge opened in 1932. It was painted blue in 1990.",
                "hallucinated",
            ),
        }
        for kind, (answer, label) in answers.items():
            rows.append(
                {
                    "id": f"chale-{q:04d}-{kind}",
                    "question": f"When did the {place} bridge open?",
                    "contexts": [context],
                    "answer": answer,
                    "kind": kind,
                    "label": label,
                    "note": "",
                }
            )
    return rows


@pytest.fixture()
def folder(tmp_path):
    (tmp_path / "halueval").mkdir()
    (tmp_path / "halueval" / "qa.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in _qa_rows())
    )
    (tmp_path / "rag_answers").mkdir()
    (tmp_path / "rag_answers" / "dev.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in _rag_rows())
    )
    return tmp_path


def test_fitting_and_bench_rows_are_disjoint(folder):
    fit, bench = task_rows("qa", str(folder), n=4, fit_n=4)
    fit_ids, bench_ids = {r[0] for r in fit}, {r[0] for r in bench}
    assert not fit_ids & bench_ids and len(fit) == len(bench) == 8  # two answers per row
    # bench rows spread through the file (as bench halueval --spread), fitting rows the first others
    assert {i.split("-")[1] for i in bench_ids} == {"0", "2", "5", "7"}
    assert {i.split("-")[1] for i in fit_ids} == {"1", "3", "4", "6"}
    assert sum(g for *_, g in bench) == 4
    fit, bench = task_rows("rag", str(folder), n=100, fit_n=100)
    questions = lambda rows: {r[0].rsplit("-", 1)[0] for r in rows}  # noqa: E731
    assert questions(fit) == {"chale-0000", "chale-0002"}
    assert questions(bench) == {"chale-0001", "chale-0003"}
    assert len(fit) == len(bench) == 10


def test_rag_answers_are_read_from_the_data_folder(folder, tmp_path, monkeypatch):
    monkeypatch.setenv("TRUTHGUARD_DATA_DIR", str(folder))
    assert len(load_rag_answers()) == 20
    monkeypatch.delenv("TRUTHGUARD_DATA_DIR")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetNotFoundError, match="rag_answers"):
        load_rag_answers(empty)
    # read as `bench rag-answers` reads it: a row without a field the bench needs is named
    bad = tmp_path / "bad" / "rag_answers"
    bad.mkdir(parents=True)
    (bad / "dev.jsonl").write_text('{"id": "x-0", "question": "Q?", "label": "factual"}\n')
    with pytest.raises(InvalidInputError, match=r"dev\.jsonl line 1.*answer"):
        load_rag_answers(bad.parent)


def test_without_an_llm_the_bench_reports_the_local_part_and_says_so(folder, capsys):
    args = ["bench", "cascade", "--data", str(folder), "--tasks", "qa", "rag", "--n", "4"]
    args += ["--fit-n", "4", "--coverage", "0.5", "--no-progress", "--json"]
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["second_stage"] is None and result["target"] == {"coverage": 0.5}
    for task in ("qa", "rag"):
        row = result["tasks"][task]
        assert row["on_fitting_rows"]["decided_locally"] >= 50.0
        assert row["bench_rows"] == (8 if task == "qa" else 10)
        assert row["curve_on_bench_rows"][-1]["decided_locally"] <= 100.0
        assert "cascade" not in row
    table = format_table(result)
    assert "No LLM configured" in table and "| qa |" in table and "| rag |" in table


def test_with_an_llm_the_whole_cascade_is_measured_over_http(folder, monkeypatch, capsys):
    replies = {
        "Break the answer below into": '("The bridge", "opened in", "1932")',
        "You compare one claim with reference passages": "Entailment",
    }
    with OpenAIServer(reply=replies) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        args = ["bench", "cascade", "--data", str(folder), "--tasks", "rag", "--fit-n", "4"]
        args += ["--coverage", "0.5", "--llm", "openai:gpt-test", "--no-progress", "--json"]
        args += ["--escalate-on", "band", "no_evidence", "undecided_claims", "invalid"]
        assert main(args) == 0
        sent = len(server.requests)
    result = json.loads(capsys.readouterr().out)
    cascade = result["tasks"]["rag"]["cascade"]
    decided = cascade["decided_by"]
    assert sum(decided.values()) == 10 and set(decided) <= {"local", "llm"}
    assert decided["llm"] >= 2  # the two joined answers at least
    # one extraction and one check per escalated answer (one claim each)
    assert sent == 2 * decided.get("llm", 0)
    assert cascade["llm_calls_per_answer"] == pytest.approx(sent / 10, abs=0.01)
    assert cascade["ms_per_answer"] > 0 and cascade["balanced_accuracy"] is not None
    assert "Whole cascade on the bench rows" in format_table(result)


def test_the_cache_is_reused_and_keyed_by_the_local_checks_code(folder, tmp_path, monkeypatch):
    from truthguard.bench import cascade as bench

    cache = tmp_path / "local.jsonl"
    args = ["bench", "cascade", "--data", str(folder), "--tasks", "rag", "--coverage", "0.5"]
    args += ["--no-progress", "--json", "--cache", str(cache)]
    assert main(args) == 0
    entries = cache.read_text().splitlines()
    assert len(entries) == 20  # every rag answer, fitting and bench rows
    calls = []
    real = bench._local_results

    def counting(rows, detector, cached, **kw):
        calls.append(sum(bench._key(inp) not in cached for _, inp, _ in rows))
        return real(rows, detector, cached, **kw)

    monkeypatch.setattr(bench, "_local_results", counting)
    assert main(args) == 0
    assert calls == [0, 0]  # both halves from the cache
    monkeypatch.setattr(bench, "_code_digest", lambda: "another local check")
    calls.clear()
    assert main(args) == 0
    assert calls == [10, 10]  # a changed local check is run afresh


def test_a_band_fitted_on_one_answer_set_is_reported_on_another(folder, tmp_path, capsys):
    rows = _rag_rows()
    fit_file, bench_file = tmp_path / "fit.jsonl", tmp_path / "kept.jsonl"
    fit_file.write_text("".join(json.dumps(r) + "\n" for r in rows[:10]))
    bench_file.write_text("".join(json.dumps(r) + "\n" for r in rows[10:]))
    fit, bench = task_rows(
        "rag", str(folder), n=1, fit_n=1, rag_fit=[str(fit_file)], rag_bench=[str(bench_file)]
    )
    assert [i["answer"] for _, i, _ in fit] == [r["answer"] for r in rows[:10]]
    assert [g for *_, g in bench] == [r["label"] == "hallucinated" for r in rows[10:]]
    # without --rag-fit the band is fitted on all of dev.jsonl, which holds the bench answers
    with pytest.raises(ConfigurationError, match="shares 10 answers"):
        task_rows("rag", str(folder), n=1, fit_n=1, rag_bench=[str(bench_file)])
    args = ["bench", "cascade", "--data", str(folder), "--tasks", "rag", "--coverage", "0.5"]
    args += ["--rag-fit", str(fit_file), "--rag-bench", str(bench_file), "--no-progress"]
    assert main([*args, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["tasks"]["rag"]["fit_rows"] == result["tasks"]["rag"]["bench_rows"] == 10
    assert str(bench_file) in result["rows"]["rag"] and str(fit_file) in result["rows"]["rag"]
    with pytest.raises(SystemExit, match="--rag-fit needs --rag-bench"):
        main(["bench", "cascade", "--data", str(folder), "--rag-fit", str(fit_file)])


def test_a_cascade_of_any_stages_is_fitted_stage_by_stage_and_says_who_decided(
    folder, tmp_path, monkeypatch, capsys
):
    from doubles import tiny_minicheck

    texts = [t for r in _rag_rows() for t in (r["question"], r["answer"], *r["contexts"])]
    weights = tiny_minicheck(tmp_path / "mc", "roberta", texts)
    replies = {
        "Break the answer below into": '("The bridge", "opened in", "1932")',
        "You compare one claim with reference passages": "Contradiction",
    }
    signals = ["--escalate-on", "band", "no_evidence", "undecided_claims", "invalid"]
    base = ["bench", "cascade", "--data", str(folder), "--tasks", "rag", "--coverage", "0.5"]
    base += [*signals, "--no-progress", "--json"]

    def bench(stages, server):
        server.reset()
        assert main([*base, "--stages", stages, "--llm", "openai:gpt-test"]) == 0
        return json.loads(capsys.readouterr().out), [r.prompt for r in server.requests]

    with OpenAIServer(reply=replies) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        result, prompts = bench(f"local,minicheck:{weights},llm", server)
        assert result["stages"] == ["local", "mc", "llm"]
        row = result["tasks"]["rag"]
        local, open_stage = row["fitted"]
        assert [local["stage"], open_stage["stage"]] == ["local", "mc"]
        # the open stage is fitted on what the local stage sends on (the answers it rejects on
        # claims it cannot decide), and decides half of them at least
        assert local["reached"] == 10 and open_stage["reached"] == local["sent_on"] > 0
        assert open_stage["reached"] - open_stage["sent_on"] >= open_stage["reached"] / 2
        cascade = row["cascade"]
        decided = cascade["decided_by"]
        assert sum(decided.values()) == 10 and decided["local"] > 0 and decided["mc"] > 0
        assert {k: v["answers"] for k, v in cascade["by_stage"].items()} == decided
        # the LLM saw only the answers the open stage sent on: one extraction and one check each
        assert len(prompts) == 2 * decided.get("llm", 0)
        table = format_table(result)
        assert "Cascade local -> mc -> llm" in table and "| rag | mc |" in table
        # two stages the same way: the LLM decides what the local stage sends on, and only that
        result, prompts = bench("local,llm", server)
        cascade = result["tasks"]["rag"]["cascade"]
        assert cascade["decided_by"]["llm"] > 0 and set(cascade["decided_by"]) == {"local", "llm"}
        assert len(prompts) == 2 * cascade["decided_by"]["llm"]
        assert cascade["by_stage"]["llm"]["answers"] == cascade["decided_by"]["llm"]
        # one target per stage: the open stage must decide all that reaches it
        each = [*base[:6], "--coverage", "0.5,1.0", *base[8:], "--llm", "openai:gpt-test"]
        assert main([*each, "--stages", f"local,minicheck:{weights},llm"]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["target"] == {"coverage": [0.5, 1.0]}
        local, open_stage = result["tasks"]["rag"]["fitted"]
        assert open_stage["reached"] > 0 and open_stage["sent_on"] == 0
        assert "llm" not in result["tasks"]["rag"]["cascade"]["decided_by"]
        with pytest.raises(SystemExit, match="one for each of the 2 stages"):
            main([*each[:7], "0.5,0.5,0.5", *each[8:], "--stages", f"local,{weights},llm"])
    # without an LLM stage the whole cascade runs here; naming one without --llm is refused
    assert main([*base, "--stages", f"local,{weights}"]) == 0
    offline = json.loads(capsys.readouterr().out)["tasks"]["rag"]["cascade"]
    assert set(offline["decided_by"]) == {"local", "mc"} and offline["llm_calls_per_answer"] == 0
    with pytest.raises(SystemExit, match="--llm"):
        main([*base, "--stages", "local,llm"])
    with pytest.raises(SystemExit, match="needs --stages"):
        main([*base[:7], "0.5,0.5", *base[8:]])
