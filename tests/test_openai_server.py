"""Every detector, the callback handler and the FEWL selector over real HTTP.

``ChatOpenAI`` talks to :class:`~truthguard.testing.OpenAIServer` on 127.0.0.1, so the client's
own retries, time-outs, connection pool and SSE parser all run. Under every fault the user's
answer survives in an explicit result, the number of HTTP requests is the documented one, time
limits hold within 10 % (+0.2 s), and token usage equals what the server reported.
"""

from __future__ import annotations

import asyncio
import re
import time

import pytest

pytest.importorskip("langchain_openai")

from truthguard.fewl import FEWL
from truthguard.llm import LLMSettings
from truthguard.refchecker import LLMChecker, LLMExtractor, RefChecker
from truthguard.result import Label
from truthguard.rv import ReverseValidation
from truthguard.similarity import LexicalSimilarity
from truthguard.testing import Fault, OpenAIServer

PASSAGE = (
    "Ailanthus is a genus of trees in the Simaroubaceae family. The best-known species is the "
    "tree of heaven."
)
EIFFEL_Q = "Tell me about the Eiffel Tower."
EIFFEL_A = "The Eiffel Tower is in Paris. It was finished in 1925."
EIFFEL_REF = "The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair."
APP_Q, APP_A = "Which genus is the tree of heaven in?", "The tree of heaven is an Ailanthus."
HAMLET_Q = "Who wrote the play Hamlet?"
NEIGHBORS = ["Who painted the Mona Lisa?", "What is the capital city of Peru?"]
PAIRS = (
    "1. Wrong: Christopher Marlowe wrote Hamlet.\n"
    "1. Corrected: Hamlet was written by Shakespeare, not by Marlowe.\n"
    "2. Wrong: Charles Dickens wrote Hamlet in 1850.\n"
    "2. Corrected: Dickens had no part in Hamlet; Shakespeare wrote it about 1600."
)
ANSWERS = {
    HAMLET_Q: "William Shakespeare wrote Hamlet around 1600.",
    NEIGHBORS[0]: "Leonardo da Vinci painted the Mona Lisa.",
    NEIGHBORS[1]: "Lima is the capital city of Peru.",
}


def reply(messages: list[dict]) -> str:
    """GPT-style answers to each detector prompt, routed on the prompt's wording."""
    p = messages[-1]["content"]
    if p == APP_Q:
        return APP_A
    if "numbered list" in p:
        return (
            "Here are the features:\n1. Genus of trees\n2. Simaroubaceae family\n3. Tree of heaven"
        )
    if "Which entity fits" in p:
        return "The entity is Ailanthus, which meets 100% of the requirements."
    if "Write one question" in p:
        return "Question: Which tree genus is called the tree of heaven?"
    if "Answer the question" in p:
        return "That would be Ailanthus."
    if "which single entity" in p:
        return "Ailanthus"
    if "Triplets:" in p:
        return '("Eiffel Tower", "located in", "Paris")\n("Eiffel Tower", "completed in", "1925")'
    if "exactly one word" in p:
        return "Entailment" if '"Paris"' in p else "Contradiction"
    if "deliberately false" in p:
        return PAIRS
    return ANSWERS[re.search(r"<question-\w+>\n(.*)\n</question-", p).group(1).strip()]


# The stage each fault targets: a substring of that stage's prompt.
STAGE = {
    "rv-em": "numbered list",
    "rv-qg": "Answer the question",
    "refchecker": "exactly one word",
    "fewl": "deliberately false",
}
KINDS = ["429", "500", "stall", "bad_json", "empty_choices", "null_content", "stream_cut"]
# Client without retries of its own: the session is the one retry layer (3 attempts), and calls
# of a check run one at a time, so a failure never cancels a sibling half-way.
FAST = LLMSettings(backoff_initial=0.0, backoff_max=0.0, max_concurrency=1)
STALL_TIMEOUT = 0.4  # client time-out when the fault is a stall


def timeout_for(kind: str) -> float:
    return STALL_TIMEOUT if kind == "stall" else 5.0


@pytest.fixture()
def server():
    # One server per test: a call abandoned by a cancelled sync check reaches (at most) the
    # closed server of its own test, never the next test's request log.
    with OpenAIServer(reply=reply) as s:
        yield s


def build(name: str, model, embedder, store_factory, settings: LLMSettings = FAST):
    """A detector of each kind over ``model`` and an input it checks."""
    if name == "rv-em":
        det = ReverseValidation(model=model, variant="em", llm_settings=settings)
        return det, {"answer": PASSAGE, "entity": "Ailanthus"}
    if name == "rv-qg":
        det = ReverseValidation(model=model, variant="qg", llm_settings=settings)
        return det, {"answer": PASSAGE}  # the entity is extracted by the model
    if name == "refchecker":
        embedder.matrix(["warm"], ["up"])  # load MiniLM now, not inside a timed check
        det = RefChecker(
            extractor=LLMExtractor(model=model),
            checker=LLMChecker(model=model),
            similarity=embedder,
            llm_settings=settings,
        )
        return det, {"question": EIFFEL_Q, "answer": EIFFEL_A, "references": [EIFFEL_REF]}
    store = store_factory()
    store.add_questions(NEIGHBORS)
    det = FEWL(
        reference_models=[model],
        mode="single",
        expertise="uniform",
        store=store,
        similarity=LexicalSimilarity(),
        k_neighbors=2,
        min_pairs=2,
        max_neighbor_similarity=None,
        llm_settings=settings,
    )
    return det, {"question": HAMLET_Q, "answer": "Hamlet was written by Shakespeare."}


@pytest.fixture()
def stores(embedder, tmp_path):
    from truthguard.store import ArtifactStore

    count = iter(range(100))
    return lambda: ArtifactStore(tmp_path / f"chroma{next(count)}", embedder=embedder)


def delivered_usage(server) -> tuple[int, int]:
    """Tokens of the replies the client could read (not those of a JSON body without choices,
    which ``ChatOpenAI`` fails on before it reads the usage)."""
    rs = [
        r
        for r in server.requests
        if r.usage is not None and not (r.fault == "empty_choices" and not r.stream)
    ]
    return sum(r.usage.prompt_tokens for r in rs), sum(r.usage.completion_tokens for r in rs)


DETECTORS = ["rv-em", "rv-qg", "refchecker", "fewl"]


@pytest.mark.parametrize("name", DETECTORS)
@pytest.mark.parametrize("mode", ["sync", "async-stream"])
async def test_every_detector_over_http_counts_what_the_server_reports(
    server, embedder, stores, name, mode
):
    streaming = mode == "async-stream"
    model = server.chat_model(max_retries=0, timeout=5, streaming=streaming)
    det, inp = build(name, model, embedder, stores, settings=LLMSettings())
    r = await det.ainvoke(inp) if mode.startswith("async") else det.invoke(inp)
    assert r.label is not Label.INVALID, r.invalid_reason
    assert len(server.requests) == r.usage.llm_calls > 0
    assert all(q.stream is streaming and q.status == 200 for q in server.requests)
    total = server.usage_total
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (
        total.prompt_tokens,
        total.completion_tokens,
    )
    assert not r.usage.estimated_tokens


# Requests the failing call makes under a fault that never clears: 3 attempts of the session,
# except a reply with null content, which is a (parseable) empty answer and is not retried.
REQUESTS = {kind: 3 for kind in KINDS} | {"null_content": 1}
# Streamed, "no choices" is an empty reply (the stream itself completed): not retried either.
STREAMED_REQUESTS = REQUESTS | {"empty_choices": 1}


@pytest.mark.parametrize("name", DETECTORS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_fault_that_never_clears_keeps_the_answer_in_an_invalid_result(
    server, embedder, stores, name, kind
):
    model = server.chat_model(max_retries=0, timeout=timeout_for(kind))
    det, inp = build(name, model, embedder, stores)
    server.faults = [Fault(kind, match=STAGE[name], stall_seconds=5)]
    started = time.perf_counter()
    r = det.invoke(inp)
    assert r.label is Label.INVALID and r.invalid_reason
    assert r.answer == inp["answer"]  # nothing the user had is lost
    assert r.details["stage"]
    faulted = [q for q in server.requests if q.fault == kind]
    assert len(faulted) == REQUESTS[kind]
    assert len({q.prompt for q in faulted}) == 1  # one call, retried; no sibling started
    if kind == "stall":
        assert time.perf_counter() - started < 3 * STALL_TIMEOUT * 1.1 + 0.5
    server.wait_idle()
    if kind == "stall":
        assert all(q.status == 499 for q in faulted)  # the client hung up before any answer
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == delivered_usage(server), [
        (q.status, q.fault, q.prompt[:30], q.usage) for q in server.requests
    ]


@pytest.mark.parametrize("kind", KINDS)
async def test_streamed_faults_that_never_clear(server, embedder, stores, kind):
    model = server.chat_model(max_retries=0, timeout=timeout_for(kind), streaming=True)
    det, inp = build("rv-qg", model, embedder, stores)
    server.faults = [Fault(kind, match=STAGE["rv-qg"], stall_seconds=5)]
    r = await det.ainvoke(inp)
    assert r.label is Label.INVALID and r.answer == inp["answer"]
    assert len([q for q in server.requests if q.fault == kind]) == STREAMED_REQUESTS[kind]
    if kind == "stream_cut":
        # A stream that stops without a finish reason is never taken as the whole answer.
        assert "finish reason" in r.invalid_reason
        assert r.details.get("answer_stage2") is None
        assert r.usage.estimated_tokens  # the cut replies sent no usage: counted with tiktoken
        return
    server.wait_idle()
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == delivered_usage(server), [
        (q.status, q.fault, q.prompt[:30], q.usage) for q in server.requests
    ]


@pytest.mark.parametrize(
    ("kind", "streaming"),
    [(k, False) for k in KINDS if k != "null_content"] + [("stream_cut", True)],
)
def test_a_transient_fault_is_retried_once(server, embedder, stores, kind, streaming):
    model = server.chat_model(max_retries=0, timeout=timeout_for(kind), streaming=streaming)
    det, inp = build("rv-em", model, embedder, stores)
    server.faults = [Fault(kind, match=STAGE["rv-em"], times=1, stall_seconds=5)]
    r = det.invoke(inp)
    assert r.label is Label.FACTUAL, r.invalid_reason
    assert len(server.requests) == r.usage.llm_calls + 1
    server.wait_idle()
    prompt, completion = delivered_usage(server)
    if kind == "stream_cut" and streaming:
        # The discarded half-reply still counts (estimated: the cut stream carried no usage).
        assert r.usage.estimated_tokens and r.usage.completion_tokens > completion
    else:
        assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (prompt, completion)


def test_one_retry_layer_by_default(server, embedder, stores):
    # ChatOpenAI retries 429s itself (max_retries=2 by default): the session makes those retries
    # instead, with the client's own turned off, so a failing call still sends 3 requests.
    model = server.chat_model(timeout=5)
    det, inp = build("rv-em", model, embedder, stores, settings=LLMSettings())
    server.faults = [Fault("429", match=STAGE["rv-em"], retry_after=0.01)]
    r = det.invoke(inp)
    assert r.label is Label.INVALID and r.answer == PASSAGE
    assert [q.status for q in server.requests] == [429, 429, 429]
    # LLMSettings.max_retries sets the count, whatever the client's own: 1 + 1 requests.
    server.reset()
    both = server.chat_model(timeout=5, max_retries=3)
    det, inp = build(
        "rv-em", both, embedder, stores, settings=FAST.model_copy(update={"max_retries": 1})
    )
    det.invoke(inp)
    assert [q.status for q in server.requests] == [429] * 2


T = 1.0
LIMIT = 1.1 * T + 0.2


@pytest.mark.parametrize(("name", "mode"), [(n, "async") for n in DETECTORS] + [("rv-em", "sync")])
async def test_total_timeout_holds_against_a_stalled_server(server, embedder, stores, name, mode):
    # Async: the client alone would wait 3 x 10 s. Sync entry points call the model's sync API
    # on a worker thread, which cannot be interrupted: the check returns on time and the
    # abandoned request ends at the client's own time-out (kept short here).
    own = {"max_retries": 2, "timeout": 10} if mode == "async" else {"max_retries": 0, "timeout": 2}
    model = server.chat_model(**own)
    det, inp = build(name, model, embedder, stores, settings=LLMSettings(total_timeout=T))
    server.faults = [Fault("stall", match=STAGE[name], stall_seconds=20)]
    started = time.perf_counter()
    r = det.invoke(inp) if mode == "sync" else await det.ainvoke(inp)
    assert time.perf_counter() - started < LIMIT
    assert r.label is Label.INVALID and "total_timeout" in r.invalid_reason
    assert r.answer == inp["answer"]
    stalled = [q for q in server.requests if q.fault == "stall"]
    assert len(stalled) >= 1 and len(stalled) == len(
        {q.prompt for q in stalled}
    )  # one per call, no retry


@pytest.mark.parametrize("name", ["rv-qg", "refchecker"])
async def test_wait_for_cancels_the_check_without_retrying(server, embedder, stores, name):
    model = server.chat_model(max_retries=0, timeout=10)
    det, inp = build(name, model, embedder, stores, settings=LLMSettings(max_concurrency=8))
    server.faults = [Fault("stall", match=STAGE[name], stall_seconds=20)]
    started = time.perf_counter()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(det.ainvoke(inp), T)
    assert time.perf_counter() - started < LIMIT
    await asyncio.sleep(0.3)
    stalled = [q for q in server.requests if q.fault == "stall"]
    assert len(stalled) in (1, 2)  # one per claim in flight; never a retry after the cancel
    assert len({q.prompt for q in stalled}) == len(stalled)


def test_callback_handler_over_http_records_every_answer(server, embedder, stores):
    from truthguard.callbacks import TruthGuardCallbackHandler

    records = []
    checker = server.chat_model(max_retries=0, timeout=5)
    det, _ = build("rv-qg", checker, embedder, stores)
    handler = TruthGuardCallbackHandler(det, sinks=records.append, timeout=5)
    app = server.chat_model(max_retries=0, timeout=5)
    server.faults = [Fault("500", match=STAGE["rv-qg"], times=3)]  # the first check fails
    for _ in range(2):
        assert app.invoke(APP_Q, config={"callbacks": [handler]}).content == APP_A
        handler.flush(timeout=10)
    assert handler.close(timeout=10)
    assert [rec.answer for rec in records] == [APP_A, APP_A]  # the outage lost nothing
    first, second = records
    assert first.status == "failed" or first.label == "invalid"
    assert second.status == "scored" and second.label == "factual"


def test_fewl_selector_over_http(server, embedder):
    from langchain_core.vectorstores import InMemoryVectorStore

    from truthguard.embeddings import SimilarityEmbeddings
    from truthguard.selectors import FEWLExampleSelector

    ref = server.chat_model(max_retries=0, timeout=5)
    fewl = FEWL(
        reference_models=[ref],
        mode="single",
        expertise="uniform",
        penalty=False,
        threshold=0.0,
        similarity=embedder,
    )
    pool = [{"question": HAMLET_Q, "answers": ["Charles Dickens.", ANSWERS[HAMLET_Q]]}]
    selector = FEWLExampleSelector.from_examples(
        pool,
        SimilarityEmbeddings(embedder),
        scorer=fewl,
        vectorstore_cls=InMemoryVectorStore,
        k=1,
    )
    picked = selector.select_examples({"question": "Who is the author of Hamlet?"})
    assert picked[0]["answer"] == ANSWERS[HAMLET_Q]
    assert len(server.requests) == 1  # both candidates ranked on one reference answer


# -- tool calls ---------------------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [False, True])
def test_a_reply_can_call_tools(streaming):
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool

    from truthguard.testing import ToolCall

    @tool
    def search(query: str) -> str:
        """Search."""
        return "Ailanthus"

    def reply(messages: list[dict]):
        if messages[-1]["role"] == "tool":
            return "It is an Ailanthus."
        return [ToolCall("search", {"query": "tree of heaven"}), ToolCall("search", {"query": "x"})]

    with OpenAIServer(reply=reply) as server:
        model = server.chat_model(max_retries=0, timeout=5, streaming=streaming).bind_tools(
            [search]
        )
        first = model.invoke(APP_Q)
        assert [c["args"] for c in first.tool_calls] == [
            {"query": "tree of heaven"},
            {"query": "x"},
        ]
        assert first.response_metadata["finish_reason"] == "tool_calls"
        results = [ToolMessage(content="Ailanthus", tool_call_id=c["id"]) for c in first.tool_calls]
        second = model.invoke([("user", APP_Q), first, *results])
        assert second.content == "It is an Ailanthus." and not second.tool_calls
        sent, answered = server.requests
        assert [c.id for c in sent.tool_calls] == [c["id"] for c in first.tool_calls]
        assert sent.params["tools"][0]["function"]["name"] == "search"
        assert answered.messages[1]["tool_calls"][0]["function"]["name"] == "search"
        assert first.usage_metadata["output_tokens"] == sent.usage.completion_tokens > 0


def test_a_tool_call_needs_a_name_and_mapping_arguments():
    from truthguard.errors import InvalidInputError
    from truthguard.testing import ToolCall

    with pytest.raises(InvalidInputError, match="name"):
        ToolCall("")
    with pytest.raises(InvalidInputError, match="arguments"):
        ToolCall("search", ["q"])  # type: ignore[arg-type]


@pytest.mark.parametrize("stream", [False, True])
def test_a_cut_reply_tells_the_client_the_connection_closes(stream):
    # A keep-alive client would otherwise hand the next request (the retry) a socket the server
    # is closing; whether that retry fails then depends on timing.
    import httpx

    with OpenAIServer(reply="one two three four", faults=[Fault("stream_cut")]) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "go"}], "stream": stream}
        with httpx.Client() as client:
            try:
                r = client.post(f"{server.base_url}/chat/completions", json=body)
                headers = r.headers
            except httpx.HTTPError:  # the plain body stops short of its Content-Length
                with client.stream("POST", f"{server.base_url}/chat/completions", json=body) as r:
                    headers = r.headers
    assert headers.get("connection") == "close"
