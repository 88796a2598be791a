"""check_node and route_on_verdict driving real LangGraph StateGraphs."""

from __future__ import annotations

import warnings
from typing import TypedDict

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from truthguard.errors import InvalidInputError
from truthguard.guard import Attempt
from truthguard.langgraph import GroundingKeys, check_node, feedback, route_on_verdict
from truthguard.refchecker import RefChecker
from truthguard.serde import checkpoint_serializer
from truthguard.testing import FakeDetector

QUESTION = "When was the Eiffel Tower completed?"
PASSAGE = "The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair."
GOOD = "The Eiffel Tower was completed in 1889."
BAD = "The Eiffel Tower was completed in 1925 by Gustave Flaubert."


class State(GroundingKeys):
    question: str
    answer: str
    documents: list[str]
    prompts: list[str]


def build(answers: list[str], *, max_attempts: int = 3, checkpointer=None, detector=None):
    """retrieve -> answer -> check -> (END | answer again with feedback | fallback)."""
    replies = iter(answers)

    def answer(state: State) -> dict:
        prompt = feedback(state) if state.get("truthguard") else state["question"]
        return {"answer": next(replies), "prompts": [*state.get("prompts", []), prompt]}

    g = StateGraph(State)
    g.add_node("retrieve", lambda s: {"documents": [PASSAGE]})
    g.add_node("answer", answer)
    g.add_node("check", check_node(detector or RefChecker()))
    g.add_node("fallback", lambda s: {"answer": "I am not sure."})
    g.add_edge(START, "retrieve")
    g.add_edge("retrieve", "answer")
    g.add_edge("answer", "check")
    router = route_on_verdict(
        passed=END, failed="answer", exhausted="fallback", max_attempts=max_attempts
    )
    g.add_conditional_edges("check", router, [END, "answer", "fallback"])
    g.add_edge("fallback", END)
    return g.compile(checkpointer=checkpointer)


def test_a_grounded_answer_passes_the_first_check():
    out = build([GOOD]).invoke({"question": QUESTION})
    check = out["truthguard"]
    assert isinstance(check, Attempt)
    assert (check.number, check.passing, check.contexts) == (1, True, [PASSAGE])
    assert out["answer"] == GOOD


async def test_a_failed_check_routes_back_with_the_checkers_notes():
    out = await build([BAD, GOOD]).ainvoke({"question": QUESTION})
    assert out["answer"] == GOOD
    assert (out["truthguard"].number, out["truthguard"].passing) == (2, True)
    notes = out["prompts"][1]
    assert BAD in notes and "fact-checker" in notes


def test_checks_run_out_into_the_fallback_node():
    out = build([BAD, BAD], max_attempts=2).invoke({"question": QUESTION})
    assert out["answer"] == "I am not sure."
    assert (out["truthguard"].number, out["truthguard"].passing) == (2, False)


def test_without_an_exhausted_node_the_graph_ends_on_the_passed_route():
    router = route_on_verdict(passed=END, failed="answer", max_attempts=1)
    failed = Attempt(number=1, answer="x", verdict=None)
    assert router({"truthguard": failed}) == END


def test_the_check_survives_a_checkpoint_without_warnings():
    saver = InMemorySaver(serde=checkpoint_serializer())
    graph = build([BAD, GOOD], checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        graph.invoke({"question": QUESTION}, config)
        restored = graph.get_state(config).values["truthguard"]
    assert isinstance(restored, Attempt)
    assert restored.verdict.passing and restored.results[0].detector == "refchecker"


def test_a_messages_graph_checks_the_last_ai_message_against_tool_results():
    class ChatState(MessagesState, GroundingKeys):
        pass

    g = StateGraph(ChatState)
    g.add_node("check", check_node(RefChecker()))
    g.add_edge(START, "check")
    g.add_edge("check", END)
    messages = [
        HumanMessage(QUESTION),
        AIMessage("", tool_calls=[{"name": "search", "args": {}, "id": "c1"}]),
        ToolMessage(PASSAGE, tool_call_id="c1", name="search"),
        AIMessage(BAD),
    ]
    out = g.compile().invoke({"messages": messages})
    assert out["truthguard"].contexts == [PASSAGE]
    assert out["truthguard"].answer == BAD and not out["truthguard"].passing


def test_the_turns_before_the_question_go_to_the_check_as_history():
    class ChatState(MessagesState, GroundingKeys):
        pass

    seen = []

    def score(inp):
        seen.append(inp.history)
        return 1.0

    def graph(**options):
        g = StateGraph(ChatState)
        g.add_node("check", check_node(FakeDetector(score=score), **options))
        g.add_edge(START, "check")
        g.add_edge("check", END)
        return g.compile()

    messages = [
        HumanMessage("I visited Lisbon in 2019."),
        AIMessage("Lovely! How can I help?"),
        HumanMessage(QUESTION),
        AIMessage("", tool_calls=[{"name": "search", "args": {}, "id": "c1"}]),
        ToolMessage(PASSAGE, tool_call_id="c1", name="search"),
        AIMessage(GOOD),
    ]
    graph().invoke({"messages": messages})
    graph(history_key="").invoke({"messages": messages})
    # the question's own turn, the tool call and its result, and the answer are not history
    assert seen == [["I visited Lisbon in 2019.", "Lovely! How can I help?"], []]
    with pytest.raises(InvalidInputError, match="chat_history"):
        graph(history_key="chat_history").invoke({"messages": messages})


def test_a_new_question_starts_the_count_over():
    graph = build([BAD, BAD, GOOD], max_attempts=2, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    assert graph.invoke({"question": QUESTION}, config)["truthguard"].number == 2
    out = graph.invoke({"question": QUESTION, "truthguard": None}, config)
    assert (out["truthguard"].number, out["answer"]) == (1, GOOD)


def test_bad_options_and_states_name_the_field():
    with pytest.raises(InvalidInputError) as e:
        check_node("refchecker")
    assert e.value.field == "detectors[0]"
    with pytest.raises(InvalidInputError) as e:
        check_node(FakeDetector(), colour="red")
    assert e.value.field == "colour"
    with pytest.raises(InvalidInputError) as e:
        check_node(FakeDetector(), score_ranges={"other": (0.0, 1.0)})
    assert e.value.field == "score_ranges"
    with pytest.raises(InvalidInputError) as e:
        route_on_verdict(passed=END, failed="a", max_attempts=0)
    assert e.value.field == "max_attempts"
    with pytest.raises(InvalidInputError) as e:
        route_on_verdict(passed=END, failed="a")({})
    assert e.value.field == "truthguard"

    class Bare(TypedDict, total=False):
        question: str
        truthguard: Attempt

    g = StateGraph(Bare)
    g.add_node("check", check_node(FakeDetector()))
    g.add_edge(START, "check")
    with pytest.raises(InvalidInputError) as e:
        g.compile().invoke({"question": QUESTION})
    assert e.value.field == "answer"


def test_a_hand_written_edge_on_result_passing_routes_the_default_checkers_verdicts():
    """A graph that calls the default RefChecker itself (no threshold) and routes with
    ``if result.passing``: grounded answers go on, contradicted ones go back."""

    class Plain(TypedDict, total=False):
        answer: str
        passing: bool | None
        route: str

    checker = RefChecker()

    def check(state: Plain) -> dict:
        result = checker.invoke(
            {"question": QUESTION, "answer": state["answer"], "contexts": [PASSAGE]}
        )
        return {"passing": result.passing}

    g = StateGraph(Plain)
    g.add_node("check", check)
    g.add_node("ok", lambda s: {"route": "ok"})
    g.add_node("retry", lambda s: {"route": "retry"})
    g.add_edge(START, "check")
    g.add_conditional_edges("check", lambda s: "ok" if s["passing"] else "retry", ["ok", "retry"])
    g.add_edge("ok", END)
    g.add_edge("retry", END)
    app = g.compile()
    assert app.invoke({"answer": GOOD}) == {"answer": GOOD, "passing": True, "route": "ok"}
    assert app.invoke({"answer": BAD})["route"] == "retry"
