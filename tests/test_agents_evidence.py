"""What an agent saw: evidence from tool results and state, the question, the answer text."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain.agents")

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from truthguard.agents import evidence_of, last_question
from truthguard.agents._evidence import answer_text, final_message
from truthguard.errors import InvalidInputError


def tool(content, name="search", status="success", artifact=None) -> ToolMessage:
    return ToolMessage(
        content=content, tool_call_id="c1", name=name, status=status, artifact=artifact
    )


def test_tool_results_are_evidence_once_each_in_order():
    messages = [
        HumanMessage("Q?"),
        tool("Paris is in France."),
        tool("Rome is in Italy.", name="lookup"),
        tool("Paris is in France."),
    ]
    assert evidence_of(messages) == ["Paris is in France.", "Rome is in Italy."]
    assert evidence_of(messages, tools=["lookup"]) == ["Rome is in Italy."]


def test_failed_tool_calls_and_blank_results_are_not_evidence():
    messages = [tool("Error: timeout", status="error"), tool("   ")]
    assert evidence_of(messages) == []


def test_a_retriever_artifact_gives_one_passage_per_document():
    docs = [Document(page_content="First."), Document(page_content="Second.")]
    assert evidence_of([tool("First.\n\nSecond.", artifact=docs)]) == ["First.", "Second."]
    # An artifact that is not documents leaves the text as it is.
    assert evidence_of([tool("rows: 3", artifact=[{"id": 1}])]) == ["rows: 3"]


def test_documents_in_state_are_evidence():
    state = {"documents": [Document(page_content="A."), "B."], "note": "C."}
    assert evidence_of([], state, state_keys=["documents", "note", "missing"]) == [
        "A.",
        "B.",
        "C.",
    ]
    with pytest.raises(InvalidInputError) as e:
        evidence_of([], {"documents": 5}, state_keys=["documents"])
    assert e.value.field == "documents"


def test_the_question_is_the_last_human_message_with_text():
    messages = [HumanMessage("First?"), AIMessage("A."), HumanMessage("Second?"), tool("x")]
    assert last_question(messages) == "Second?"
    with pytest.raises(InvalidInputError) as e:
        last_question([AIMessage("A."), HumanMessage("  ")])
    assert e.value.field == "messages"


def test_answer_text_joins_content_blocks_and_final_message_skips_tool_messages():
    message = AIMessage(content=[{"type": "text", "text": "Paris"}, {"type": "text", "text": "."}])
    assert answer_text(message) == "Paris."
    assert final_message([message, tool("structured")]) is message
    assert final_message([tool("x")]) is None


def test_json_tool_output_is_read_as_text():
    rows = '[{"name": "Eiffel Tower", "completed": 1889}, {"name": "Big Ben", "completed": 1859}]'
    assert evidence_of([tool(rows)]) == [
        "name: Eiffel Tower; completed: 1889",
        "name: Big Ben; completed: 1859",
    ]
    record = '{"city": "Paris", "tower": {"height_m": 330, "architect": null}, "tags": ["iron"]}'
    assert evidence_of([tool(record)]) == [
        "city: Paris\ntower.height_m: 330\ntower.architect: null\ntags: iron"
    ]
    # Not JSON, or JSON that is no object or array: the text as it is.
    assert evidence_of([tool("[1889] was the year.")]) == ["[1889] was the year."]
    assert evidence_of([tool('"just a string"')]) == ['"just a string"']
