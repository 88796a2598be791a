"""What the guarded engine's attempt loop asks its driver to do: each operation runs sync or async.

The loop (a generator) yields an operation and receives its result; ``GuardedQueryEngine.query``
calls ``op.run()``, ``aquery`` awaits ``op.arun()``. Engine calls count their LLM usage.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import QueryBundle

from truthguard.guard.usage import UsageCollector
from truthguard.result import Usage
from truthguard.sync import run_sync
from truthguard_llamaindex._usage import collect_usage

__all__ = [
    "Answer",
    "Await",
    "EngineRunnable",
    "Invoke",
    "Loop",
    "Op",
    "Query",
    "RetrieveThenSynthesize",
]


class EngineRunnable(Runnable[Any, Any]):
    """A query engine seen as a Runnable (input: a question string or ``{"question": ...}``)."""

    def __init__(self, engine: BaseQueryEngine) -> None:
        self.engine = engine

    @staticmethod
    def _question(input: Any) -> str:
        return input["question"] if isinstance(input, Mapping) else str(input)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kw: Any) -> Any:
        return self.engine.query(self._question(input))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kw: Any) -> Any:
        return await self.engine.aquery(self._question(input))


@dataclass
class Answer:
    response: Response
    usage: Usage
    streamed: bool = False
    """The engine answered with a stream (read whole here, so it could be checked)."""


def _streams(output: Any) -> bool:
    return isinstance(output, StreamingResponse | AsyncStreamingResponse)


def _to_response(output: Any) -> Response:
    """A plain ``Response`` from whatever an engine or fallback runnable returned."""
    if isinstance(output, Response):
        return output
    if isinstance(output, PydanticResponse | StreamingResponse):
        return output.get_response()
    if isinstance(output, str):
        return Response(response=output)
    from truthguard.guard.extract import answer_of

    return Response(response=answer_of(output))


class Op:
    spent: Usage | None = None
    """LLM usage of the last run, kept also when the run raised (answering operations)."""

    def run(self) -> Any:
        raise NotImplementedError

    async def arun(self) -> Any:
        raise NotImplementedError


@contextmanager
def _counting(op: Op, langchain: UsageCollector | None = None) -> Iterator[None]:
    """Count the LLM calls of the block into ``op.spent``, whether it returns or raises."""
    with collect_usage() as usage:
        try:
            yield
        finally:
            op.spent = usage.usage() + (langchain.usage() if langchain else Usage())


async def _whole(out: Any) -> Response:
    if isinstance(out, AsyncStreamingResponse):
        out = await out.get_response()
    return _to_response(out)


@dataclass
class Query(Op):
    """Run a query engine on a bundle, counting the LLM usage of the call."""

    engine: BaseQueryEngine
    bundle: QueryBundle

    def run(self) -> Answer:
        with _counting(self):
            out = self.engine.query(self.bundle)
            response = _to_response(out)
        return Answer(response, self.spent or Usage(), _streams(out))

    async def arun(self) -> Answer:
        with _counting(self):
            out = await self.engine.aquery(self.bundle)
            response = await _whole(out)
        return Answer(response, self.spent or Usage(), _streams(out))


@dataclass
class RetrieveThenSynthesize(Op):
    """Retrieve with ``retriever`` on one query, synthesise on another (the engine's own steps)."""

    engine: RetrieverQueryEngine
    retriever: BaseRetriever
    retrieval: QueryBundle
    synthesis: QueryBundle

    def run(self) -> Answer:
        engine = self.engine.with_retriever(self.retriever)
        with _counting(self):
            nodes = engine.retrieve(self.retrieval)
            out = engine.synthesize(self.synthesis, nodes)
            response = _to_response(out)
        return Answer(response, self.spent or Usage(), _streams(out))

    async def arun(self) -> Answer:
        engine = self.engine.with_retriever(self.retriever)
        with _counting(self):
            nodes = await engine.aretrieve(self.retrieval)
            out = await engine.asynthesize(self.synthesis, nodes)
            response = await _whole(out)
        return Answer(response, self.spent or Usage(), _streams(out))


@dataclass
class Invoke(Op):
    """Invoke a LangChain runnable (a fallback chain) with the policy's input."""

    runnable: Runnable[Any, Any]
    input: Any
    config: RunnableConfig

    def run(self) -> Answer:
        usage = UsageCollector()
        with _counting(self, usage):
            out = self.runnable.invoke(self.input, {**self.config, "callbacks": [usage]})
            response = _to_response(out)
        return Answer(response, self.spent or Usage())

    async def arun(self) -> Answer:
        usage = UsageCollector()
        with _counting(self, usage):
            out = await self.runnable.ainvoke(self.input, {**self.config, "callbacks": [usage]})
            response = await _whole(out)
        return Answer(response, self.spent or Usage())


@dataclass
class Await(Op):
    """An async step of the core (a policy, the detectors): run on the sync portal or awaited."""

    make: Callable[[], Any]

    def run(self) -> Any:
        return run_sync(self.make())

    async def arun(self) -> Any:
        return await self.make()


Loop = Generator[Op, Any, Any]
