"""``truthguard bench halueval``: inputs per task, decisions, the table and the JSON object."""

from __future__ import annotations

import json

import pytest

from truthguard.bench.halueval import PAPER_JUDGE, _turns, item_inputs
from truthguard.cli import main
from truthguard.datasets import load_halueval

ROWS = {
    "qa": {
        "knowledge": "The Marlow lighthouse was built in 1881 by the harbour board.",
        "question": "When was the Marlow lighthouse built?",
        "right_answer": "1881",
        "hallucinated_answer": "The Marlow lighthouse was built in 1902 by the navy.",
    },
    "dialogue": {
        "knowledge": "Ann Lee wrote Blue Harbour. Blue Harbour was released 1994",
        "dialogue_history": "[Human]: Who wrote Blue Harbour? [Assistant]: Ann Lee did. "
        "[Human]: When did it come out? ",
        "right_response": "Blue Harbour was released in 1994.",
        "hallucinated_response": "Blue Harbour was released in 2007.",
    },
    "summarization": {
        "document": "The council closed the Kell bridge for repairs on Monday. Engineers found "
        "cracks in two of its supports. The bridge will reopen in May.",
        "right_summary": "The Kell bridge closed for repairs after cracks were found.",
        "hallucinated_summary": "The Kell bridge closed after a lorry crash killed three people.",
    },
}


@pytest.fixture()
def folder(tmp_path):
    root = tmp_path / "halueval"
    root.mkdir()
    for task, row in ROWS.items():
        (root / f"{task}.jsonl").write_text(json.dumps(row) + "\n")
    return tmp_path


def test_inputs_carry_the_question_the_chat_and_the_reference(folder):
    [(kind, qa), (_, wrong)] = item_inputs(load_halueval("qa", folder)[0])
    assert kind == "right" and qa["question"].startswith("When") and qa["answer"] == "1881"
    assert wrong["contexts"] == qa["contexts"] and wrong["answer"].endswith("navy.")
    [(_, chat), _] = item_inputs(load_halueval("dialogue", folder)[0])
    assert chat["history"] == ["Who wrote Blue Harbour?", "Ann Lee did.", "When did it come out?"]
    assert chat["question"] == "When did it come out?"
    [(_, summary), _] = item_inputs(load_halueval("summarization", folder)[0])
    assert "history" not in summary and summary["contexts"][0].startswith("The council")


def test_a_row_asked_in_a_chat_has_its_question_as_the_history(folder):
    [(_, qa), _] = item_inputs(load_halueval("qa", folder)[0], in_chat=True)
    assert qa["history"] == [qa["question"]] and qa["question"].startswith("When")
    [(_, chat), _] = item_inputs(load_halueval("dialogue", folder)[0], in_chat=True)
    assert chat["history"] == ["Who wrote Blue Harbour?", "Ann Lee did.", "When did it come out?"]
    [(_, summary), _] = item_inputs(load_halueval("summarization", folder)[0], in_chat=True)
    assert summary["history"] == ["Summarize the article."]


def test_bench_asks_in_a_chat_and_holds_replies_to_the_sources(tmp_path, embedder, capsys):
    root = tmp_path / "halueval"
    root.mkdir()
    row = {
        "knowledge": "The Marlow lighthouse was built in 1881 by the harbour board.",
        "question": "Who built the Marlow lighthouse?",
        "right_answer": "The harbour board.",
        "hallucinated_answer": "Thomas Stevenson.",
    }
    (root / "qa.jsonl").write_text(json.dumps(row) + "\n")
    argv = ["bench", "halueval", "--data", str(tmp_path), "--n", "1", "--tasks", "qa"]

    def rejected(*extra):
        assert main([*argv, "--no-baseline", "--json", *extra]) == 0
        result = json.loads(capsys.readouterr().out)
        return result, result["tasks"]["qa"]["hallucinated_rejected"]

    result, alone = rejected()
    assert alone == 100.0 and result["in_chat"] is False and result["chat_replies"] == "open"
    # asked in an open chat, a short reply naming someone no source holds is weighed, and passes
    assert rejected("--in-chat")[1] == 0.0
    result, grounded = rejected("--in-chat", "--chat-replies", "grounded")
    assert grounded == 100.0 and result["in_chat"] and result["chat_replies"] == "grounded"
    assert main([*argv, "--no-baseline", "--in-chat", "--chat-replies", "grounded"]) == 0
    assert "chat_replies='grounded', every row asked in a chat" in capsys.readouterr().out


def test_turns_of_an_unmarked_history():
    assert _turns("just text") == ["just text"] and _turns("  ") == []


def test_bench_runs_end_to_end(folder, embedder, capsys):
    assert main(["bench", "halueval", "--data", str(folder), "--n", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["tasks"]) == set(ROWS)
    for task, row in result["tasks"].items():
        assert row["rows"] == 1 and row["paper_chatgpt_judge_accuracy"] == PAPER_JUDGE[task]
        assert row["balanced_accuracy"] == pytest.approx(
            (row["correct_passed"] + row["hallucinated_rejected"]) / 2, abs=0.06
        )
        assert row["ms_per_answer"] > 0 and "auroc" in row["cosine_baseline"]
    # each hallucinated output here changes a year or invents an event: every one is rejected
    assert all(r["hallucinated_rejected"] == 100.0 for r in result["tasks"].values())
    assert main(["bench", "halueval", "--data", str(folder), "--n", "1", "--tasks", "qa"]) == 0
    table = capsys.readouterr().out
    assert "| qa |" in table and "| dialogue |" not in table


def test_bench_measures_an_nli_checker(folder, embedder, capsys, tmp_path):
    from doubles import tiny_nli

    model = tmp_path / "nli"
    model.mkdir()
    tiny_nli(model, "entailment")
    argv = ["bench", "halueval", "--data", str(folder), "--n", "1", "--no-baseline"]
    assert main([*argv, "--tasks", "qa", "--checker", f"nli:{model}", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["checker"] == f"nli:{model}"
    # the model entails everything; the fact check still rejects the changed year
    assert result["tasks"]["qa"]["hallucinated_rejected"] == 100.0
    assert main([*argv, "--tasks", "qa", "--checker", f"nli:{model}"]) == 0
    assert f"checker nli:{model}" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="--checker"):
        main([*argv, "--checker", "deberta"])


def test_spread_rows_are_evenly_spaced_through_the_file(folder, embedder, capsys):
    from truthguard.bench.halueval import select_rows, spread_rows

    assert spread_rows(10, 4) == [0, 2, 5, 7]
    assert spread_rows(3, 5) == [0, 1, 2]
    assert [x for x in select_rows(list("abcdefghij"), 2, spread=True)] == ["a", "f"]
    assert select_rows(list("abcdefghij"), 2, spread=False) == ["a", "b"]
    args = ["bench", "halueval", "--data", str(folder), "--n", "1", "--spread", "--tasks", "qa"]
    assert main([*args, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["rows"] == "spread" and result["tasks"]["qa"]["rows"] == 1
    assert main(args) == 0
    assert "1 rows spread through each file" in capsys.readouterr().out
