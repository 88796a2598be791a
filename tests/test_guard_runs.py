"""How the guard runs an attempt (guard/_runs.py): attempt tags, hidden streams, contexts from
retriever runs, the feedback slot in the model prompt."""

from __future__ import annotations

from doubles import (
    ListRetriever,
    Recorder,
    moon_detector,
    moon_then_sun,
    rag_chain,
    scripted_chain,
    sun_after_feedback,
    textbook_chain,
)
from truthguard.guard import (
    VERDICT_EVENT,
    HallucinationGuard,
    Regenerate,
)
from truthguard.testing import FakeDetector, ScriptedChatModel


def test_attempts_are_child_runs_tagged_and_verdicts_dispatched():
    chain, _ = scripted_chain(["moon", "sun"])
    rec = Recorder()
    guard = HallucinationGuard(chain=chain, detectors=moon_detector(), policies=[Regenerate()])
    guard.invoke({"question": "Q?"}, {"callbacks": [rec]})
    guard_run = next(r for r in rec.starts if r[2] is None)[3]
    children = [r for r in rec.starts if r[2] == guard_run]
    tags = [t for _, ts, _, _ in children for t in ts if t.startswith("guard:attempt:")]
    assert "guard:attempt:1" in tags and "guard:attempt:2" in tags
    verdicts = [d for name, d, _ in rec.events if name == VERDICT_EVENT]
    assert [(d["attempt"], d["verdict"]["passing"]) for d in verdicts] == [(1, False), (2, True)]
    assert all(run_id == guard_run for name, _, run_id in rec.events)


def test_regenerate_on_a_string_input_puts_the_feedback_in_the_model_prompt():
    model = ScriptedChatModel(script=lambda p: "the sun" if "fact-checker" in p else "the moon")
    guard = HallucinationGuard(chain=model, detectors=moon_detector(), policies=[Regenerate()])
    out = guard.invoke("What shines by day?")
    assert out.passing and out.answer == "the sun"
    assert model.calls[1].startswith("What shines by day?\n\nA fact-checker")


async def test_astream_events_carry_no_unchecked_answer():
    chain, _ = rag_chain(sun_after_feedback)
    guard = HallucinationGuard(chain=chain, detectors=moon_detector(), policies=[Regenerate()])
    events = [e async for e in guard.astream_events({"question": "What shines?"}, version="v2")]
    leaked = [
        e
        for e in events
        # Verdicts are labelled; the guard's own result keeps every attempt, labelled too.
        if "moon" in str(e["data"]) and e["name"] not in (VERDICT_EVENT, "HallucinationGuard")
    ]
    assert leaked == []
    assert not any(e["event"] == "on_chat_model_stream" for e in events)
    verdicts = [e["data"]["verdict"]["passing"] for e in events if e["name"] == VERDICT_EVENT]
    assert verdicts == [False, True]
    assert events[-1]["event"] == "on_chain_end"
    assert events[-1]["data"]["output"].answer == "The sun shines."


async def test_stream_nested_opt_in_tags_every_nested_run_of_an_attempt():
    chain, _ = rag_chain(sun_after_feedback)
    guard = HallucinationGuard(
        chain=chain, detectors=moon_detector(), policies=[Regenerate()], stream_nested=True
    )
    q = {"question": "What shines?"}
    every = [e async for e in guard.astream_events(q, version="v2")]
    tokens = "".join(
        e["data"]["chunk"].content for e in every if e["event"] == "on_chat_model_stream"
    )
    assert "moon" in tokens and "sun" in tokens  # the opt-in shows every attempt
    nested = [e for e in every if e["parent_ids"] and e["name"] != VERDICT_EVENT]
    assert all(any(t.startswith("guard:attempt:") for t in e["tags"]) for e in nested)
    kept = [
        e
        async for e in guard.astream_events(q, version="v2", exclude_tags=["guard:attempt:1"])
        if e["event"] == "on_chat_model_stream"
    ]
    assert "".join(e["data"]["chunk"].content for e in kept) == "The sun shines."


async def test_langgraph_messages_mode_streams_no_unchecked_answer():
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    chain, _ = rag_chain(sun_after_feedback)
    guard = HallucinationGuard(chain=chain, detectors=moon_detector(), policies=[Regenerate()])

    class State(TypedDict, total=False):
        question: str
        answer: str

    async def guarded(state: State) -> State:
        result = await guard.ainvoke({"question": state["question"]})
        return {"answer": result.answer}

    graph = (
        StateGraph(State)
        .add_node("guarded", guarded)
        .add_edge(START, "guarded")
        .add_edge("guarded", END)
        .compile()
    )
    streamed = [
        m async for m, _ in graph.astream({"question": "What shines?"}, stream_mode="messages")
    ]
    assert not any("moon" in str(getattr(m, "content", m)) for m in streamed)
    final = await graph.ainvoke({"question": "What shines?"})
    assert final["answer"] == "The sun shines."


def test_textbook_chain_gets_contexts_from_its_retriever_and_feedback_in_the_prompt():
    retriever = ListRetriever(passages=["The sun shines by day."])
    model = moon_then_sun()
    seen: list[list[str]] = []
    grounded = FakeDetector(
        score=lambda i: (seen.append(list(i.contexts)), 0.0 if "moon" in i.answer else 1.0)[1],
        threshold=0.5,
    )
    guard = HallucinationGuard(
        chain=textbook_chain(model, retriever), detectors=grounded, policies=[Regenerate()]
    )
    out = guard.invoke("What shines by day?")
    assert out.passing and out.answer == "The sun shines by day."
    assert seen == [["The sun shines by day."]] * 2  # contexts taken from the retriever runs
    assert retriever.queries == ["What shines by day?"] * 2  # feedback never became the query
    assert "fact-checker" in model.calls[1] and "The moon shines." in model.calls[1]


def test_the_feedback_slot_runs_only_in_attempts_that_carry_feedback():
    model = moon_then_sun()
    retriever = ListRetriever(passages=["The sun shines by day."])
    rec = Recorder()
    guard = HallucinationGuard(
        chain=textbook_chain(model, retriever), detectors=moon_detector(), policies=[Regenerate()]
    )
    out = guard.invoke("What shines by day?", {"callbacks": [rec]})
    assert out.passing and out.n_attempts == 2
    slots = [tags for name, tags, _, _ in rec.starts if name == "guard_feedback"]
    # the first attempt runs the user's own chain; only the regenerated one passes the slot
    assert len(slots) == 1 and "guard:attempt:2" in slots[0]
    assert "fact-checker" not in model.calls[0] and "fact-checker" in model.calls[1]


def test_the_guards_own_handlers_ignore_the_events_they_do_not_read():
    from truthguard.guard._runs import RetrieverCapture
    from truthguard.guard.usage import UsageCollector

    usage, capture = UsageCollector(), RetrieverCapture()
    assert usage.ignore_chain and usage.ignore_retriever and usage.ignore_custom_event
    assert not usage.ignore_llm and not usage.ignore_chat_model
    assert capture.ignore_chain and capture.ignore_llm and capture.ignore_chat_model
    assert not capture.ignore_retriever
