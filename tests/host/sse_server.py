"""A loopback chat-completions endpoint for provider tests.

``ChatServer`` listens on 127.0.0.1 (port 0), answers each ``POST .../chat/completions`` with the next queued
``Reply`` (a streamed SSE body or an HTTP error), or with the reply an ``answer`` function picks for the request,
and records every request it received (raw bytes too). The helpers build the ``chat.completion.chunk`` objects an
OpenAI-compatible server streams.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer: ``status`` 200 streams ``chunks``; anything else sends ``body`` as JSON."""

    chunks: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    done: bool = True
    delay: float = 0.0  # seconds to hold the stream after its first chunk (a slow model); ends when the server closes


@dataclass
class Received:
    """A request the server got."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes = b""  # the body exactly as posted


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A ``chat.completion.chunk``; with only ``usage`` it is the final usage chunk (no choices)."""
    out: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
    }
    has_choice = delta is not None or finish is not None
    out["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}] if has_choice else []
    if usage is not None:
        out["usage"] = usage
    return out


def tool_delta(
    index: int, arguments: str, call_id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    """A delta carrying one piece of a tool call (``id``/``name`` only on its first piece, as servers do)."""
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
        call["type"] = "function"
    if name is not None:
        call["function"]["name"] = name
    return {"tool_calls": [call]}


def text_reply(*pieces: str, usage: dict[str, Any] | None = None, finish: str = "stop") -> Reply:
    """A streamed answer made of text pieces, then a finish chunk and a usage chunk."""
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": p}) for p in pieces]
    chunks.append(chunk(finish=finish))
    chunks.append(
        chunk(usage=usage or {"prompt_tokens": 10, "completion_tokens": len(pieces), "total_tokens": 0})
    )
    return Reply(chunks)


def error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    """An HTTP error with an OpenAI-style error body."""
    return Reply(status=status, body={"error": {"message": message, "type": "error"}}, headers=headers or {})


class ChatServer:
    """A threaded HTTP server on 127.0.0.1 playing queued replies; use as a context manager.

    With ``answer``, each request is answered by ``answer(request)`` once the queue is empty.
    """

    def __init__(self, answer: Callable[[Received], Reply] | None = None) -> None:
        self.replies: deque[Reply] = deque()
        self.answer = answer
        self.received: list[Received] = []
        self.closing = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                return

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                received = Received(self.path, headers, json.loads(raw or b"{}"), raw)
                server.received.append(received)
                if server.replies:
                    reply = server.replies.popleft()
                elif server.answer is not None:
                    reply = server.answer(received)
                else:
                    reply = error_reply(500, "no reply queued")
                if reply.status != 200:
                    payload = json.dumps(reply.body or {}).encode()
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                for i, item in enumerate(reply.chunks):
                    if i == 1 and reply.delay and server.closing.wait(reply.delay):
                        return
                    self.wfile.write(f"data: {json.dumps(item)}\n\n".encode())
                    self.wfile.flush()
                if reply.done:
                    self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The ``base_url`` to give an OpenAI client."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def push(self, *replies: Reply) -> None:
        """Queue replies, answered in order."""
        self.replies.extend(replies)

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()
