"""LangGraph checkpoints keep truthguard results as their own types, without warnings."""

from __future__ import annotations

import logging
from typing import Any, TypedDict

import pytest

from truthguard.errors import InvalidInputError
from truthguard.guard import GuardResult, HallucinationGuard
from truthguard.result import DetectionResult, Label
from truthguard.serde import LANGGRAPH_ALLOWLIST, checkpoint_serializer
from truthguard.testing import FakeDetector, ScriptedChatModel


def test_results_round_trip_through_a_checkpointed_graph_without_warnings(caplog):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    guard = HallucinationGuard(
        chain=ScriptedChatModel(script=lambda p: "Paris."), detectors=FakeDetector(score=0.9)
    )

    class State(TypedDict, total=False):
        question: str
        check: DetectionResult
        guarded: GuardResult
        label: Label

    def node(state: State) -> dict[str, Any]:
        out = guard.invoke(state["question"])
        return {"check": out.attempts[0].results[0], "guarded": out, "label": Label.FACTUAL}

    graph = (
        StateGraph(State)
        .add_node("check", node)
        .add_edge(START, "check")
        .add_edge("check", END)
        .compile(checkpointer=InMemorySaver(serde=checkpoint_serializer()))
    )
    config = {"configurable": {"thread_id": "t1"}}
    with caplog.at_level(logging.WARNING):
        graph.invoke({"question": "Capital of France?"}, config)
        values = graph.get_state(config).values
    assert isinstance(values["check"], DetectionResult) and values["check"].score == 0.9
    assert isinstance(values["guarded"], GuardResult) and values["guarded"].answer == "Paris."
    assert values["label"] is Label.FACTUAL
    assert not [r for r in caplog.records if "unregistered" in r.getMessage()]
    assert not [r for r in caplog.records if "Blocked" in r.getMessage()]


def test_allowlist_names_real_classes_and_extra_is_checked():
    import importlib

    for module, name in LANGGRAPH_ALLOWLIST:
        assert hasattr(importlib.import_module(module), name)

    class Mine:
        pass

    checkpoint_serializer([Mine, ("my.module", "Thing")])
    with pytest.raises(InvalidInputError) as info:
        checkpoint_serializer(["nope"])  # type: ignore[list-item]
    assert info.value.field == "extra[0]"
