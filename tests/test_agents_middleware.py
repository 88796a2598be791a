"""GroundingMiddleware in a real ``create_agent`` over HTTP.

The agent's model is ``ChatOpenAI`` talking to :class:`~truthguard.testing.OpenAIServer` on
127.0.0.1; the server plays the model, tool calls included. The tool is a retriever tool over
one passage; the detector is the default zero-LLM ``RefChecker()``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")

from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import create_retriever_tool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from doubles import prompt_exit, time_to_exit
from truthguard.agents import (
    DEFAULT_FALLBACK,
    EndRun,
    GroundingMiddleware,
    HumanReview,
)
from truthguard.errors import GuardRejected, InvalidInputError
from truthguard.guard import Fallback, Raise, Regenerate, ReRetrieve
from truthguard.refchecker import RefChecker
from truthguard.serde import checkpoint_serializer
from truthguard.testing import FakeDetector, Fault, OpenAIServer, ToolCall

QUESTION = "When was the Eiffel Tower completed?"
PASSAGE = "The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair."
GOOD = "The Eiffel Tower was completed in 1889."
BAD = "The Eiffel Tower was completed in 1925 by Gustave Flaubert."
BAD_WORDS = ("1925", "Flaubert")


class _Docs(BaseRetriever):
    def _get_relevant_documents(self, query: str, *, run_manager) -> list[Document]:
        return [Document(page_content=PASSAGE)]


SEARCH = create_retriever_tool(_Docs(), "search", "Search the encyclopedia.")


def _role(messages: list[dict], i: int = -1) -> str:
    return messages[i]["role"]


def _is_feedback(messages: list[dict]) -> bool:
    return _role(messages) == "user" and "fact-checker" in (messages[-1]["content"] or "")


def script(first: str, regenerated: str = GOOD):
    """The model: search first, answer ``first`` from the result, ``regenerated`` when told."""

    def reply(messages: list[dict]):
        if _is_feedback(messages):
            return regenerated
        if _role(messages) == "tool":
            return first
        return ToolCall("search", {"query": "Eiffel Tower"})

    return reply


@pytest.fixture()
def server():
    with OpenAIServer(reply=script(GOOD)) as s:
        yield s


def agent_for(server, *, streaming: bool = False, checkpointer=None, **options):
    model = server.chat_model(max_retries=0, timeout=10, streaming=streaming)
    return create_agent(
        model,
        tools=[SEARCH],
        middleware=[GroundingMiddleware(**options)],
        checkpointer=checkpointer,
    )


def ask() -> dict:
    return {"messages": [("user", QUESTION)]}


def texts(messages) -> str:
    return "\n".join(str(m.content) for m in messages)


# -- the three outcomes, sync and async ---------------------------------------------------------


def test_a_grounded_answer_passes_with_one_check(server):
    out = agent_for(server).invoke(ask())
    assert out["messages"][-1].content == GOOD
    result = out["truthguard"]
    assert (result.status, result.n_attempts, result.passing) == ("passed", 1, True)
    assert result.attempts[0].contexts == [PASSAGE]  # the retriever tool's document
    assert len(server.requests) == 2  # the tool call and the answer, nothing more


async def test_a_contradicting_answer_is_regenerated_then_passes(server):
    server.reply = script(BAD)
    out = await agent_for(server).ainvoke(ask())
    assert out["messages"][-1].content == GOOD
    assert not any(w in texts(out["messages"]) for w in BAD_WORDS)
    result = out["truthguard"]
    assert [a.policy for a in result.attempts] == [None, "regenerate"]
    assert [a.passing for a in result.attempts] == [False, True]
    assert result.attempts[0].answer == BAD  # kept for the record, never released
    regen = server.requests[-1]
    assert _is_feedback(regen.messages) and BAD in regen.messages[-1]["content"]
    assert regen.params["tool_choice"] == "none"  # answer from the evidence already found


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_persistently_wrong_answer_falls_back(server, mode):
    server.reply = script(BAD, regenerated=BAD)
    agent = agent_for(server)
    out = agent.invoke(ask()) if mode == "sync" else await agent.ainvoke(ask())
    assert out["messages"][-1].content == DEFAULT_FALLBACK
    assert not any(w in texts(out["messages"]) for w in BAD_WORDS)
    result = out["truthguard"]
    assert result.status == "fallback"
    assert [a.policy for a in result.attempts] == [None, "regenerate", "fallback"]


def test_end_run_ends_without_an_answer(server):
    server.reply = script(BAD, regenerated=BAD)
    out = agent_for(server, policies=[Regenerate(), EndRun()]).invoke(ask())
    assert isinstance(out["messages"][-1], ToolMessage)  # no answer was added
    assert not any(w in texts(out["messages"]) for w in BAD_WORDS)
    assert out["truthguard"].status == "rejected"
    assert out["truthguard"].last_answer == BAD  # the last answer is kept in the result
    assert len(server.requests) == 3


def test_raise_carries_every_attempt(server):
    server.reply = script(BAD, regenerated=BAD)
    with pytest.raises(GuardRejected) as e:
        agent_for(server, policies=[Regenerate(), Raise()]).invoke(ask())
    assert [a.answer for a in e.value.attempts] == [BAD, BAD]


def test_no_policy_releases_the_answer_marked_rejected(server):
    server.reply = script(BAD)
    out = agent_for(server, policies=[]).invoke(ask())
    assert out["messages"][-1].content == BAD
    assert out["truthguard"].status == "rejected"


def test_a_regenerated_reply_that_calls_tools_is_a_failed_attempt(server):
    def reply(messages):
        if _is_feedback(messages) or _role(messages) != "tool":
            return ToolCall("search", {"query": "again"})
        return BAD

    server.reply = reply
    out = agent_for(server).invoke(ask())
    assert out["messages"][-1].content == DEFAULT_FALLBACK
    assert out["truthguard"].attempts[1].error == "the model called tools when asked to answer"


def test_a_fallback_runnable_answers_from_the_messages(server):
    server.reply = script(BAD, regenerated=BAD)
    from langchain_core.runnables import RunnableLambda

    seen = []

    def fallback(messages):
        seen.append(messages)
        return AIMessage(content=GOOD)

    policies = [Fallback(runnable=RunnableLambda(fallback), check=True)]
    out = agent_for(server, policies=policies).invoke(ask())
    assert out["messages"][-1].content == GOOD
    assert out["truthguard"].status == "passed"
    assert seen[0][0].content == QUESTION


# -- zero tokens of a rejected answer reach a stream --------------------------------------------


@pytest.mark.parametrize("streaming", [False, True])
def test_stream_messages_carries_no_token_of_a_rejected_answer(server, streaming):
    server.reply = script(BAD)
    agent = agent_for(server, streaming=streaming)
    chunks = [m for m, _ in agent.stream(ask(), stream_mode="messages")]
    assert not any(w in texts(chunks) for w in BAD_WORDS)
    assert chunks[-1].content == GOOD  # the released answer, whole
    assert any(q.stream for q in server.requests) is streaming


@pytest.mark.parametrize("streaming", [False, True])
async def test_astream_messages_carries_no_token_of_a_rejected_answer(server, streaming):
    server.reply = script(BAD)
    agent = agent_for(server, streaming=streaming)
    chunks = [m async for m, _ in agent.astream(ask(), stream_mode="messages")]
    assert not any(w in texts(chunks) for w in BAD_WORDS)
    assert chunks[-1].content == GOOD


async def test_astream_events_carries_no_token_of_a_rejected_answer(server):
    server.reply = script(BAD)
    agent = agent_for(server, streaming=True)
    tokens, verdicts = [], []
    async for ev in agent.astream_events(ask(), version="v2"):
        if ev["event"] == "on_chat_model_stream":
            tokens.append(ev["data"]["chunk"])
        if ev["event"] == "on_custom_event" and ev["name"] == "truthguard_verdict":
            verdicts.append(ev["data"]["verdict"]["passing"])
    assert not any(w in texts(tokens) for w in BAD_WORDS)
    assert verdicts == [False, True]


@pytest.mark.parametrize("opt_in", [False, True])
async def test_verdict_events_carry_a_rejected_answer_only_when_asked(server, opt_in):
    server.reply = script(BAD)
    agent = agent_for(server, rejected_text_in_events=opt_in)
    answers = [
        ev["data"]["answer"]
        async for ev in agent.astream_events(ask(), version="v2")
        if ev["event"] == "on_custom_event" and ev["name"] == "truthguard_verdict"
    ]
    assert answers == [BAD if opt_in else None, GOOD]


def test_without_the_middleware_the_stream_carries_the_wrong_tokens(server):
    # The failure the middleware prevents: tokens stream before any after_model hook runs.
    server.reply = script(BAD)
    model = server.chat_model(max_retries=0, timeout=10, streaming=True)
    agent = create_agent(model, tools=[SEARCH])
    chunks = [m for m, _ in agent.stream(ask(), stream_mode="messages")]
    assert "1925" in texts(chunks)


def test_custom_stream_shows_the_check_while_it_runs(server):
    server.reply = script(BAD)
    updates = [c for c in agent_for(server).stream(ask(), stream_mode="custom")]
    stages = [(u["truthguard"]["stage"], u["truthguard"]["attempt"]) for u in updates]
    assert stages == [("checking", 1), ("verdict", 1), ("checking", 2), ("verdict", 2)]
    assert [u["truthguard"].get("passing") for u in updates[1::2]] == [False, True]


# -- human review -------------------------------------------------------------------------------


def _review_agent(server, **review):
    saver = InMemorySaver(serde=checkpoint_serializer())
    agent = agent_for(server, policies=[HumanReview(**review)], checkpointer=saver)
    return agent


@pytest.mark.parametrize(
    ("decision", "released"),
    [
        ({"action": "approve"}, BAD),
        ({"action": "edit", "answer": "Completed in 1889."}, "Completed in 1889."),
        ({"action": "reject"}, "Not sure."),
    ],
)
def test_human_review_interrupts_and_resumes(server, decision, released):
    server.reply = script(BAD)
    agent = _review_agent(server, reject_answer="Not sure.")
    config = {"configurable": {"thread_id": "t1"}}
    paused = agent.invoke(ask(), config)
    (pending,) = paused["__interrupt__"]
    assert pending.value["answer"] == BAD
    assert pending.value["evidence"] == [PASSAGE]
    assert pending.value["verdict"]["passing"] is False
    assert not any(isinstance(m, AIMessage) and m.content == BAD for m in paused["messages"])
    calls = len(server.requests)
    out = agent.invoke(Command(resume=decision), config)
    assert out["messages"][-1].content == released
    assert len(server.requests) == calls  # resuming never calls the model again
    result = out["truthguard"]
    assert (result.status, result.attempts[-1].policy) == ("fallback", "human_review")


async def test_human_review_reject_without_an_answer_ends_the_run(server):
    server.reply = script(BAD)
    agent = _review_agent(server)
    config = {"configurable": {"thread_id": "t2"}}
    await agent.ainvoke(ask(), config)
    out = await agent.ainvoke(Command(resume={"action": "reject"}), config)
    assert isinstance(out["messages"][-1], ToolMessage)
    assert out["truthguard"].status == "rejected"


def test_a_malformed_resume_names_the_field(server):
    server.reply = script(BAD)
    agent = _review_agent(server)
    config = {"configurable": {"thread_id": "t3"}}
    agent.invoke(ask(), config)
    with pytest.raises(InvalidInputError, match=r"resume\.action"):
        agent.invoke(Command(resume={"action": "maybe"}), config)


# -- evidence and options -----------------------------------------------------------------------


def test_an_answer_without_evidence_is_checked_or_passed(server):
    server.reply = "Hello! Ask me about the Eiffel Tower."
    out = agent_for(server).invoke(ask())  # RefChecker has no reference: no verdict, closed
    assert out["messages"][-1].content == DEFAULT_FALLBACK
    server.reset()
    out = agent_for(server, no_evidence="pass").invoke(ask())
    assert out["messages"][-1].content == "Hello! Ask me about the Eiffel Tower."
    assert "truthguard" not in out
    assert len(server.requests) == 1


def test_evidence_tools_limits_what_counts(server):
    detector = FakeDetector(score=0.9)
    out = agent_for(server, detectors=[detector], evidence_tools=["other"]).invoke(ask())
    assert out["truthguard"].attempts[0].contexts == []


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_tool_checks_refuse_an_unsupported_claim_before_the_tool_runs(server, mode):
    sent: list[str] = []

    @tool
    def send_email(body: str) -> str:
        """Send an email to the customer."""
        sent.append(body)
        return "sent"

    def reply(messages):
        last = messages[-1]
        if last["role"] == "tool" and last["content"].startswith("Not run"):
            return ToolCall("send_email", {"body": GOOD})
        if last["role"] == "tool" and last["content"] == "sent":
            return "Done: I emailed the customer."
        if last["role"] == "tool":
            return ToolCall("send_email", {"body": BAD})
        return ToolCall("search", {"query": "Eiffel Tower"})

    server.reply = reply
    model = server.chat_model(max_retries=0, timeout=10)
    mw = GroundingMiddleware(tool_checks={"send_email": "body"}, no_evidence="pass")
    agent = create_agent(model, tools=[SEARCH, send_email], middleware=[mw])
    out = agent.invoke(ask()) if mode == "sync" else await agent.ainvoke(ask())
    assert sent == [GOOD]  # the unsupported body never left
    refused = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert len(refused) == 1 and "'body'" in refused[0].content


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"colour": "red"}, "colour"),
        ({"detectors": ["refchecker"]}, "detectors[0]"),
        ({"policies": [ReRetrieve()]}, "policies[0]"),
        ({"max_attempts": 1}, "max_attempts"),
        ({"thresholds": {"fewl": 0.5}}, "thresholds"),
        ({"score_ranges": {"refchecker": (1.0, 0.0)}}, "score_ranges.refchecker"),
    ],
)
def test_bad_options_name_the_field(options, field):
    with pytest.raises(InvalidInputError) as e:
        GroundingMiddleware(**options)
    assert e.value.field == field


def test_an_interrupt_inside_a_policy_pauses_the_run_instead_of_failing_it(server):
    from langchain_core.runnables import RunnableLambda
    from langgraph.types import interrupt

    server.reply = script(BAD)
    ask_a_person = RunnableLambda(lambda messages: interrupt("Which answer should I give?"))
    saver = InMemorySaver(serde=checkpoint_serializer())
    agent = agent_for(server, policies=[Fallback(runnable=ask_a_person)], checkpointer=saver)
    config = {"configurable": {"thread_id": "t4"}}
    paused = agent.invoke(ask(), config)
    assert paused["__interrupt__"][0].value == "Which answer should I give?"
    out = agent.invoke(Command(resume=GOOD), config)
    assert out["messages"][-1].content == GOOD
    assert out["truthguard"].status == "fallback"


@pytest.mark.parametrize(("answer", "passed"), [(GOOD, True), (BAD, False)])
def test_json_rows_from_a_tool_are_evidence(server, answer, passed):
    @tool
    def towers(name: str) -> list:
        """Look a tower up in the database."""
        return [{"name": "Eiffel Tower", "completed": 1889, "city": "Paris"}]

    def reply(messages):
        if _role(messages) == "tool":
            return answer
        return ToolCall("towers", {"name": "Eiffel"})

    server.reply = reply
    model = server.chat_model(max_retries=0, timeout=10)
    agent = create_agent(model, tools=[towers], middleware=[GroundingMiddleware(policies=[])])
    first = agent.invoke(ask())["truthguard"].attempts[0]
    assert first.contexts == ["name: Eiffel Tower; completed: 1889; city: Paris"]
    assert first.passing is passed


# -- the conversation: earlier turns are the detectors' history ---------------------------------

TRIP = "I visited Paris in 2019 with my sister."
RESTATED = "You visited Paris in 2019 with your sister. The Eiffel Tower was completed in 1889."


def two_turns(server, **options) -> tuple[dict, list]:
    """Tell the agent of the trip, then ask QUESTION in the same thread; the detectors' inputs."""
    seen: list = []
    recorder = FakeDetector(score=lambda i: seen.append(i) or 1.0)

    def reply(messages: list[dict]):
        if _role(messages) == "tool":
            return RESTATED
        if messages[-1]["content"] == QUESTION:
            return ToolCall("search", {"query": "Eiffel Tower"})
        return "Lovely! How can I help?"

    server.reply = reply
    agent = agent_for(
        server,
        checkpointer=InMemorySaver(),
        detectors=[RefChecker(threshold=0.5), recorder],
        no_evidence="pass",  # the first turn's reply has no evidence to check
        **options,
    )
    config = {"configurable": {"thread_id": "trip"}}
    agent.invoke({"messages": [("user", TRIP)]}, config)
    return agent.invoke({"messages": [("user", QUESTION)]}, config), seen


def test_the_earlier_turns_are_the_history_and_the_question_is_not_in_it(server):
    out, seen = two_turns(server)
    assert out["messages"][-1].content == RESTATED and out["truthguard"].passing
    (inp,) = seen
    assert inp.question == QUESTION and inp.contexts == [PASSAGE]
    assert inp.history == [TRIP, "Lovely! How can I help?"]  # no tool call, no tool result
    claims = out["truthguard"].attempts[0].results[0].details["claims"]
    assert [c["evidence"]["source"] for c in claims] == ["history", "reference"]


def test_pass_history_off_checks_against_the_evidence_only(server):
    out, seen = two_turns(server, pass_history=False, policies=[])
    assert [i.history for i in seen] == [[]]
    result = out["truthguard"]
    claims = result.attempts[0].results[0].details["claims"]
    assert [c["evidence"]["source"] for c in claims] == ["reference", "reference"]
    assert result.status == "rejected"  # the trip is in no passage


EXIT_SCRIPT = """
import sys
from langchain.agents import create_agent
from langchain_openai import ChatOpenAI
from truthguard.agents import GroundingMiddleware
from truthguard.guard import Fallback
from truthguard.testing import FakeDetector

url = sys.argv[1]
model = ChatOpenAI(base_url=url, api_key="test", model="gpt-test", max_retries=0, timeout=60)
checker = FakeDetector(score=1.0, model=model)
mw = GroundingMiddleware(
    detectors=[checker], check_timeout=0.3, policies=[Fallback(answer="none")], no_evidence="check"
)
out = create_agent(model, tools=[], middleware=[mw]).invoke({"messages": [("user", "Hi?")]})
result = out["truthguard"]
print(result.status, result.attempts[0].verdict.errors.get("fake"), flush=True)
"""


def test_a_process_exits_at_once_after_a_sync_check_timed_out():
    with (
        OpenAIServer(
            reply="The sun shines.", faults=[Fault("stall", match="sun shines", stall_seconds=60)]
        ) as server,
        OpenAIServer(reply="The sun shines.") as healthy,
    ):
        line, hooks, exited, bound = prompt_exit(
            lambda: time_to_exit(EXIT_SCRIPT, server.base_url),
            lambda: time_to_exit(EXIT_SCRIPT, healthy.base_url),
        )
    assert line.startswith("fallback check timed out"), line
    # nothing at exit waits for the abandoned request; the teardown after it is the
    # interpreter's own (0.5-0.8 s for these imports on a loaded 2-core machine)
    assert hooks < 0.5, f"exit hooks ended {hooks:.2f}s after the result"
    assert exited < bound, f"exited {exited:.2f}s after its result (bound {bound:.2f}s)"
