"""An OpenAI-compatible chat-completions server on 127.0.0.1, for tests (stdlib only).

:class:`OpenAIServer` answers ``POST /v1/chat/completions`` the way the OpenAI API does: JSON or
SSE streaming (``stream=True``, with ``stream_options.include_usage``), ``usage`` counted with
tiktoken, and faults injected by rule (:class:`Fault`). Point ``langchain_openai.ChatOpenAI`` (or
any OpenAI client) at ``server.base_url`` and the whole HTTP path runs for real: the client's own
retries, time-outs, connection pool and streaming parser. A reply may call tools
(:class:`ToolCall`), so an agent's whole tool loop runs over HTTP too.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from truthguard.errors import InvalidInputError
from truthguard.llm import count_tokens

__all__ = ["Fault", "OpenAIServer", "ServerRequest", "ServerUsage", "ToolCall"]

FaultKind = Literal[
    "429", "500", "stall", "bad_json", "empty_choices", "null_content", "stream_cut"
]
FAULT_KINDS: tuple[str, ...] = (
    "429",
    "500",
    "stall",
    "bad_json",
    "empty_choices",
    "null_content",
    "stream_cut",
)

Reply = str | Mapping[str, Any] | Callable[[list[dict[str, Any]]], Any] | Any


@dataclass
class ToolCall:
    """A tool call the assistant makes instead of (or beside) answering in text.

    A reply (the string, a mapping value, or what a reply callable returns) may be a
    ``ToolCall`` or a list of them; the server answers with OpenAI ``tool_calls`` (streamed as
    ``delta.tool_calls`` pieces) and ``finish_reason="tool_calls"``.

    Example:
        >>> ToolCall("search", {"query": "tree of heaven"}).arguments
        {'query': 'tree of heaven'}
    """

    name: str
    """The tool's name."""
    arguments: dict[str, Any] = field(default_factory=dict)
    """The call's arguments (sent as a JSON string, as OpenAI does)."""
    id: str | None = None
    """The call id (default: a fresh ``call_...`` id)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidInputError("name", "must be a non-empty string")
        if not isinstance(self.arguments, Mapping):
            raise InvalidInputError("arguments", "must be a mapping")
        if self.id is None:
            self.id = f"call_{uuid.uuid4().hex[:24]}"

    def wire(self, index: int) -> dict[str, Any]:
        """The call as an OpenAI ``tool_calls`` entry."""
        return {
            "index": index,
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments)},
        }


def _tool_calls(out: Any) -> list[ToolCall] | None:
    """The tool calls a reply makes, or None when it is not a tool-call reply."""
    if isinstance(out, ToolCall):
        return [out]
    if isinstance(out, list | tuple) and out and all(isinstance(c, ToolCall) for c in out):
        return list(out)
    return None


@dataclass
class Fault:
    """A rule that makes matching requests fail in one way.

    Kinds: ``"429"`` (rate limited, with ``Retry-After``), ``"500"`` (server error), ``"stall"``
    (no answer for ``stall_seconds``, then a normal one), ``"bad_json"`` (a body or SSE event that
    is not JSON), ``"empty_choices"`` (``choices: []``), ``"null_content"`` (``content: null``),
    ``"stream_cut"`` (a stream that ends after half the reply, with no finish reason and no
    ``[DONE]``; a non-streamed response whose connection drops halfway through the body).

    Example:
        >>> Fault("429", match="extract", times=2).kind
        '429'
    """

    kind: FaultKind
    """Which failure to inject."""
    match: str | None = None
    """Only requests whose messages contain this substring; None matches every request."""
    times: int | None = None
    """How many matching requests fail; None for all of them."""
    retry_after: float = 0.05
    """Seconds sent in ``Retry-After`` / ``retry-after-ms`` with a 429."""
    stall_seconds: float = 30.0
    """How long a ``"stall"`` keeps the client waiting (ended early when the server closes)."""
    streaming: bool | None = None
    """Only streamed (True) or only non-streamed (False) requests; None for both."""

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise InvalidInputError("kind", f"expected one of {', '.join(FAULT_KINDS)}")
        if self.times is not None and self.times < 0:
            raise InvalidInputError("times", "must be >= 0 or None")


@dataclass
class ServerUsage:
    """Tokens the server reported in ``usage`` fields."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class ServerRequest:
    """One chat-completions request as the server saw it, and what it returned."""

    messages: list[dict[str, Any]]
    """The request's messages (``role`` / ``content`` dicts)."""
    model: str
    """The ``model`` the client asked for."""
    stream: bool
    """Whether the client asked for SSE streaming."""
    include_usage: bool
    """Whether a streaming client asked for a final usage chunk."""
    params: dict[str, Any] = field(default_factory=dict)
    """Every other request field (temperature, max_tokens, ...)."""
    status: int = 0
    """HTTP status returned (200 for faults that break the body instead; 499 when the client
    hung up before the answer was ready, so nothing was sent)."""
    fault: str | None = None
    """The fault injected, if any."""
    reply: str | None = None
    """The reply text the server produced (before any fault mangled it)."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    """The tool calls the reply made (empty for a text reply)."""
    usage: ServerUsage | None = None
    """Usage the server sent to the client; None when it sent none."""
    received_at: float = 0.0
    """``time.monotonic()`` when the request arrived."""
    ended_at: float = 0.0
    """``time.monotonic()`` when the server stopped answering it (0.0 while it still is)."""
    hung_up: bool = False
    """The client closed the connection before the whole answer was sent."""

    @property
    def prompt(self) -> str:
        """Text of the last user message."""
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return _content_text(m.get("content"))
        return ""

    @property
    def text(self) -> str:
        """Text of every message, joined by newlines."""
        return "\n".join(_content_text(m.get("content")) for m in self.messages)


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))


def _prompt_tokens(messages: Sequence[Mapping[str, Any]], encoding: str) -> int:
    # OpenAI's chat accounting: a few tokens of framing per message plus the reply's priming.
    total = 3
    for m in messages:
        total += 3 + count_tokens(_content_text(m.get("content")), encoding)
        total += count_tokens(str(m.get("role", "")), encoding)
        if m.get("name"):
            total += 1 + count_tokens(str(m["name"]), encoding)
    return total


def _chunks(text: str) -> Iterator[str]:
    words = text.split(" ")
    for i, word in enumerate(words):
        yield word if i == 0 else " " + word


class _NoReply(Exception):
    """The reply script has nothing for this request (answered with a 400)."""


class OpenAIServer:
    """A real OpenAI-compatible HTTP server on 127.0.0.1 (ephemeral port, background thread).

    ``reply`` says what the assistant answers: a string; a mapping from a substring of the last
    user message to a reply (first match in insertion order wins, ``default`` otherwise); a
    callable ``messages -> str``; or a chat model such as
    :class:`~truthguard.testing.ScriptedChatModel` (its sync ``invoke`` is called with the
    messages). Any of them may give a :class:`ToolCall` (or a list of them) instead of text: the
    reply then calls tools. A request nothing answers gets a 400, which OpenAI clients do not
    retry.

    ``faults`` are checked in order; the first that matches a request and has ``times`` left
    applies. ``latency`` delays every answer, ``chunk_delay`` each streamed chunk after the
    first (a model generating as it streams). Every request is logged in :attr:`requests`, and
    :attr:`usage_total` sums the ``usage`` the server reported to clients.

    Example:
        >>> with OpenAIServer(reply={"capital": "Paris."}, default="I don't know.") as server:
        ...     model = server.chat_model(max_retries=0, timeout=5)
        ...     model.invoke("What is the capital of France?").content
        'Paris.'
    """

    def __init__(
        self,
        reply: Reply = "OK.",
        *,
        faults: Sequence[Fault] = (),
        latency: float = 0.0,
        chunk_delay: float = 0.0,
        default: str | None = None,
        model: str = "gpt-test",
        token_encoding: str = "cl100k_base",
    ) -> None:
        if latency < 0:
            raise InvalidInputError("latency", "must be >= 0")
        if chunk_delay < 0:
            raise InvalidInputError("chunk_delay", "must be >= 0")
        self.chunk_delay = chunk_delay
        self.reply = reply
        self.default = default
        self.latency = latency
        self.model = model
        self.token_encoding = token_encoding
        self._lock = threading.Lock()
        self._faults: list[Fault] = list(faults)
        self._fired: list[int] = [0] * len(self._faults)
        self._requests: list[ServerRequest] = []
        self._closing = threading.Event()
        # The HTTP clients chat_model() made: closed with the server, so no socket is left open.
        self._clients: list[Any] = []
        self._idle = threading.Condition()
        self._in_flight = 0
        self._received = 0  # requests ever received (reset() keeps counting)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- configuration --------------------------------------------------------------------------

    @property
    def faults(self) -> list[Fault]:
        """The fault rules (assign a new list to change them; their counters restart)."""
        with self._lock:
            return list(self._faults)

    @faults.setter
    def faults(self, faults: Sequence[Fault]) -> None:
        with self._lock:
            self._faults = list(faults)
            self._fired = [0] * len(self._faults)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until no request is being answered (abandoned calls finish in the background)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout)

    def wait_quiet(self, quiet: float = 0.3, timeout: float = 10.0) -> bool:
        """Wait until no request is in flight and none has arrived for ``quiet`` seconds.

        A cancelled sync check can leave a call on a worker thread that reaches the server only
        after the check returned; tests that compare per-test request logs wait for quiet first.
        """
        deadline = time.monotonic() + timeout
        while True:
            seen = self._received
            if not self.wait_idle(max(0.0, deadline - time.monotonic())):
                return False
            time.sleep(quiet)
            if self._received == seen and self._in_flight == 0:
                return True
            if time.monotonic() >= deadline:
                return False

    def reset(self) -> None:
        """Forget logged requests and restart every fault's counter."""
        with self._lock:
            self._requests.clear()
            self._fired = [0] * len(self._faults)

    # -- what clients see -----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, for ``ChatOpenAI(base_url=...)``."""
        if self._httpd is None:
            raise RuntimeError("OpenAIServer is not running; use it as a context manager")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def requests(self) -> list[ServerRequest]:
        """Chat-completions requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def usage_total(self) -> ServerUsage:
        """Sum of the ``usage`` the server reported to clients."""
        total = ServerUsage()
        for r in self.requests:
            if r.usage is not None:
                total.prompt_tokens += r.usage.prompt_tokens
                total.completion_tokens += r.usage.completion_tokens
        return total

    def chat_model(self, **kwargs: Any) -> Any:
        """A ``langchain_openai.ChatOpenAI`` pointed at this server.

        Keyword arguments go to ``ChatOpenAI`` (``max_retries``, ``timeout``, ``streaming``, ...);
        streamed replies ask for usage unless ``stream_usage=False`` is given. Each model gets its
        own HTTP clients (unless you pass ``http_client`` / ``http_async_client``):
        ``langchain-openai`` otherwise shares one async client per base URL across the process,
        and its pooled connections belong to the first event loop that used them, so a model
        used in one test's loop would break the next test's.
        """
        try:
            from langchain_openai import ChatOpenAI
        except ImportError as e:  # pragma: no cover - depends on the install
            raise ImportError(
                "OpenAIServer.chat_model needs langchain-openai: pip install 'truthguard[openai]'"
            ) from e
        kwargs.setdefault("model", self.model)
        kwargs.setdefault("api_key", "test")
        kwargs.setdefault("stream_usage", True)
        if "http_client" not in kwargs and "http_async_client" not in kwargs:
            import httpx

            kwargs["http_client"] = httpx.Client()
            kwargs["http_async_client"] = httpx.AsyncClient()
            with self._lock:
                self._clients += [kwargs["http_client"], kwargs["http_async_client"]]
        return ChatOpenAI(base_url=self.base_url, **kwargs)

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> OpenAIServer:
        """Bind an ephemeral port on 127.0.0.1 and serve from a daemon thread."""
        if self._httpd is not None:
            return self
        self._closing.clear()
        httpd = _QuietServer(("127.0.0.1", 0), _make_handler(self))
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="truthguard-openai-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; stalled requests are released at once. The sync HTTP clients that
        :meth:`chat_model` made are closed; the async ones are closed by ``async with`` (their
        connections belong to the event loop that opened them)."""
        with self._lock:
            clients, self._clients = self._clients, [c for c in self._clients if _is_async(c)]
        for client in clients:
            if not _is_async(client):
                client.close()
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._closing.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> OpenAIServer:
        return self.start()

    async def __aexit__(self, *exc: Any) -> None:
        with self._lock:
            clients, self._clients = self._clients, [c for c in self._clients if not _is_async(c)]
        for client in clients:
            if _is_async(client):
                await client.aclose()
        await asyncio.to_thread(self.close)

    # -- request handling (server threads) ------------------------------------------------------

    def _pick_fault(self, req: ServerRequest) -> Fault | None:
        text = req.text
        with self._lock:
            for i, f in enumerate(self._faults):
                if f.match is not None and f.match not in text:
                    continue
                if f.streaming is not None and f.streaming != req.stream:
                    continue
                if f.times is not None and self._fired[i] >= f.times:
                    continue
                self._fired[i] += 1
                return f
        return None

    def _log(self, req: ServerRequest) -> None:
        with self._lock:
            self._requests.append(req)

    def _answer(self, messages: list[dict[str, Any]]) -> str | list[ToolCall]:
        out = self._script(messages)
        calls = _tool_calls(out)
        if calls is not None:
            return calls
        if not isinstance(out, str):
            raise TypeError(f"reply returned {type(out).__name__}, not str or ToolCall")
        return out

    def _script(self, messages: list[dict[str, Any]]) -> Any:
        reply = self.reply
        if isinstance(reply, str) or _tool_calls(reply) is not None:
            return reply
        if isinstance(reply, Mapping):
            prompt = ServerRequest(messages, "", False, False).prompt
            for needle, answer in reply.items():
                if needle in prompt:
                    return answer
            if self.default is None:
                raise _NoReply(f"no scripted reply for: {prompt[:200]!r}")
            return self.default
        invoke = getattr(reply, "invoke", None)
        if callable(invoke):  # a chat model: ask it with the same messages
            from langchain_core.messages import convert_to_messages

            out = invoke(
                convert_to_messages(
                    [(m.get("role", "user"), _content_text(m.get("content"))) for m in messages]
                )
            )
            calls = getattr(out, "tool_calls", None)
            if calls:
                return [ToolCall(c["name"], dict(c.get("args") or {}), c.get("id")) for c in calls]
            content = getattr(out, "content", out)
            return content if isinstance(content, str) else _content_text(content)
        if callable(reply):
            return reply(messages)
        raise TypeError(f"unsupported reply: {type(reply).__name__}")

    def _usage(
        self, messages: list[dict[str, Any]], text: str, calls: Sequence[ToolCall] = ()
    ) -> ServerUsage:
        # A tool call costs the tokens of its name and JSON arguments.
        produced = text + "".join(c.name + json.dumps(c.arguments) for c in calls)
        return ServerUsage(
            prompt_tokens=_prompt_tokens(messages, self.token_encoding),
            completion_tokens=count_tokens(produced, self.token_encoding),
        )

    def _wait(self, seconds: float) -> bool:
        """Sleep ``seconds``; False when the server closed meanwhile."""
        return not self._closing.wait(seconds) if seconds > 0 else True


class _QuietServer(ThreadingHTTPServer):
    request_queue_size = 1024  # a burst of hundreds of clients connects at once (listen backlog)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up (time-out, cancelled call) is routine here, not an error.
        return


def _make_handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        owner = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    owner: OpenAIServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the OpenAI client's pool expects

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read .requests
        return

    # -- plumbing -------------------------------------------------------------------------------

    def _send_json(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str, **headers: str) -> None:
        self._send_json(
            status, {"error": {"message": message, "type": kind, "code": kind}}, headers
        )

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(
                200,
                {"object": "list", "data": [{"id": self.owner.model, "object": "model"}]},
            )
            return
        self._error(404, f"no route {self.path}", "not_found")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"no route {self.path}", "not_found")
            return
        try:
            body = json.loads(raw)
            messages = list(body.pop("messages"))
        except (ValueError, KeyError, TypeError):
            self._error(400, "body must be JSON with 'messages'", "invalid_request_error")
            return
        stream = bool(body.pop("stream", False))
        options = body.pop("stream_options", None) or {}
        req = ServerRequest(
            messages=messages,
            model=str(body.pop("model", "")),
            stream=stream,
            include_usage=bool(options.get("include_usage")),
            params=body,
            received_at=time.monotonic(),
        )
        self.owner._log(req)
        with self.owner._idle:
            self.owner._in_flight += 1
            self.owner._received += 1
        try:
            self._serve(req)
        finally:
            with self.owner._idle:
                self.owner._in_flight -= 1
                self.owner._idle.notify_all()

    def _stall(self, seconds: float) -> bool:
        """Keep the client waiting; False as soon as it hangs up or the server closes."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if not self.owner._wait(min(0.05, left)) or self._client_gone():
                return False
        return not self._client_gone()

    def _client_gone(self) -> bool:
        """True when the client closed its end (it timed out or cancelled while we waited)."""
        sock = self.connection
        try:
            sock.setblocking(False)
            try:
                return sock.recv(1, socket.MSG_PEEK) == b""
            finally:
                sock.setblocking(True)
        except BlockingIOError:
            return False
        except OSError:
            return True

    # -- one chat completion --------------------------------------------------------------------

    def _serve(self, req: ServerRequest) -> None:
        owner = self.owner
        fault = owner._pick_fault(req)
        req.fault = fault.kind if fault else None
        if owner.latency and not owner._wait(owner.latency):
            return
        if owner.latency and self._client_gone():
            req.status = 499  # nginx's "client closed request": nothing was delivered
            return
        if fault is not None and fault.kind == "429":
            req.status = 429
            self._error(
                429,
                "Rate limit reached (injected)",
                "rate_limit_exceeded",
                **{
                    "Retry-After": f"{fault.retry_after:g}",
                    "retry-after-ms": str(int(fault.retry_after * 1000)),
                },
            )
            return
        if fault is not None and fault.kind == "500":
            req.status = 500
            self._error(500, "The server had an error (injected)", "server_error")
            return
        if fault is not None and fault.kind == "stall" and not self._stall(fault.stall_seconds):
            req.status = 499  # the client gave up (or the server is closing)
            return
        try:
            answer = owner._answer(req.messages)
        except _NoReply as e:
            req.status = 400
            self._error(400, str(e), "invalid_request_error")
            return
        except Exception as e:  # the script itself failed: a 500 the test can see
            req.status = 500
            self._error(500, f"reply script failed: {type(e).__name__}: {e}", "server_error")
            return
        if isinstance(answer, str):
            text = req.reply = answer
        else:
            text, req.tool_calls = "", answer
        if self._client_gone():  # it timed out while we worked: nothing to deliver
            req.status = 499
            return
        kind = fault.kind if fault is not None else None
        try:
            if req.stream:
                self._stream(req, text, kind)
            else:
                self._complete(req, text, kind)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up
            req.hung_up = True
        finally:
            req.ended_at = time.monotonic()

    def _base(self, obj: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": obj,
            "created": int(time.time()),
            "model": self.owner.model,
            "system_fingerprint": "fp_truthguard",
        }

    def _complete(self, req: ServerRequest, text: str, kind: str | None) -> None:
        usage = self.owner._usage(req.messages, text, req.tool_calls)
        usage_body = {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        }
        content: str | None = None if kind == "null_content" else text
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        if req.tool_calls:
            message["content"] = text or None
            message["tool_calls"] = [
                {k: v for k, v in c.wire(i).items() if k != "index"}
                for i, c in enumerate(req.tool_calls)
            ]
        choices = [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if req.tool_calls else "stop",
            }
        ]
        body = {**self._base("chat.completion"), "choices": choices, "usage": usage_body}
        if kind == "empty_choices":
            body["choices"] = []
        req.status = 200
        if kind == "bad_json":
            data = b'{"id": "chatcmpl-broken", "choices": [{"index": 0, "message": '
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if kind == "stream_cut":  # the connection drops halfway through the body
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if kind != "null_content":
            req.usage = usage
        else:  # the reply had no content: report the prompt only
            req.usage = ServerUsage(usage.prompt_tokens, 0)
            usage_body.update(completion_tokens=0, total_tokens=usage.prompt_tokens)
        self._send_json(200, body)

    def _event(self, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self._chunk(b"data: " + data + b"\n\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _stream(self, req: ServerRequest, text: str, kind: str | None) -> None:
        req.status = 200
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        if kind == "stream_cut":
            # Say the connection ends with this body, so that no client reuses a socket this
            # server is about to close (a retry would otherwise race the close and fail twice).
            self.send_header("Connection", "close")
        self.end_headers()
        base = self._base("chat.completion.chunk")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            out: dict[str, Any] = {
                **base,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }
            if req.include_usage:
                out["usage"] = None
            return out

        if kind == "bad_json":
            self._event(b"{this is not json")
            self._chunk(b"")
            return
        if kind == "empty_choices":
            self._event({**base, "choices": []})
            if req.include_usage:
                usage = self.owner._usage(req.messages, "")
                req.usage = usage
                self._event(
                    {
                        **base,
                        "choices": [],
                        "usage": {
                            "prompt_tokens": usage.prompt_tokens,
                            "completion_tokens": 0,
                            "total_tokens": usage.prompt_tokens,
                        },
                    }
                )
            self._event(b"[DONE]")
            self._chunk(b"")
            return
        self._event(chunk({"role": "assistant", "content": "", "refusal": None}))
        pieces = list(_chunks(text))
        if kind == "stream_cut":  # half the reply, then a clean end: no finish, no [DONE]
            for piece in pieces[: max(1, len(pieces) // 2)]:
                self._event(chunk({"content": piece}))
            self._chunk(b"")
            self.close_connection = True
            return
        if kind == "null_content":
            self._event(chunk({"content": None}))
            text = ""
        elif req.tool_calls:
            for i, call in enumerate(req.tool_calls):  # name first, then the arguments in pieces
                head = call.wire(i)
                arguments = head["function"]["arguments"]
                head["function"]["arguments"] = ""
                self._event(chunk({"tool_calls": [head]}))
                for j in range(0, len(arguments), 8):
                    part = {"index": i, "function": {"arguments": arguments[j : j + 8]}}
                    self._event(chunk({"tool_calls": [part]}))
        else:
            for i, piece in enumerate(pieces):
                if i and self.owner.chunk_delay and not self.owner._wait(self.owner.chunk_delay):
                    return  # the server is closing
                self._event(chunk({"content": piece}))
        self._event(chunk({}, "tool_calls" if req.tool_calls else "stop"))
        if req.include_usage:
            usage = self.owner._usage(req.messages, text, req.tool_calls)
            req.usage = usage
            self._event(
                {
                    **base,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": usage.prompt_tokens,
                        "completion_tokens": usage.completion_tokens,
                        "total_tokens": usage.total_tokens,
                    },
                }
            )
        self._event(b"[DONE]")
        self._chunk(b"")


def _is_async(client: Any) -> bool:
    return hasattr(client, "aclose")
