"""The model interface the host, the rewind report writer and the providers agree on.

Messages and content blocks are in DSH shape (see ``spec/dsh-session-format.md`` §2.2); each provider converts
them to its wire format. Streamed pieces are reported as DSH ``StreamChunk`` dicts so the host can log them as
``assistant/chunk`` events verbatim.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.shared.model_specs import Limits

ChunkSink = Callable[[dict[str, Any]], None]


@dataclass
class ModelRequest:
    """One chat-completions request in DSH vocabulary."""

    messages: list[dict[str, Any]]
    system: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    temperature: float | None = None  # sampling a DSH header may log; the host sends neither
    stop: str | list[str] | None = None
    # ``"none"`` forbids tool calls while the schemas still go out (the finalization phase): dropping the
    # schemas instead would change the request head and cost the whole prefix cache twice.
    tool_choice: str | None = None


@dataclass
class Completion:
    """The outcome of one model call.

    ``finish`` is a DSH finish kind: ``stop``, ``tool-calls``, ``max-tokens``, ``aborted`` or ``error``.
    ``content`` holds DSH content blocks (``text``, ``reasoning``, ``tool-call``) in stream order.
    ``error`` is an ``LlmFailure``-shaped dict (``message``, ``code``, ``status``?) when ``finish == "error"``.
    """

    content: list[dict[str, Any]]
    finish: str
    usage: dict[str, int] | None = None
    error: dict[str, Any] | None = None
    replay_state: dict[str, Any] | None = None  # provider state to store in ``source.replayState``

    @property
    def text(self) -> str:
        """Concatenated text blocks."""
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The ``tool-call`` blocks, in order."""
        return [b for b in self.content if b.get("type") == "tool-call"]


class ChatModel(Protocol):
    """A model the host can call. Implementations: the OpenAI-compatible provider and the scripted one."""

    provider: str
    model: str
    on_retry: Callable[[Any], None] | None  # told of each retry of a failed call before it is tried again
    writes_reports: bool  # a real model: it may write the rewind report (the scripted one may not)
    limits: Limits | None  # its context window and output limit, when it knows them
    # A client for another provider/model (``for_route(provider, model, *, base_url=, api_key=)``), or None when
    # it cannot build one (the scripted model).
    for_route: Callable[..., ChatModel] | None

    def complete(self, request: ModelRequest, on_chunk: ChunkSink | None = None) -> Completion:
        """Run one request, reporting stream chunks to ``on_chunk`` as they arrive."""
        ...

    def abort(self) -> None:
        """End the call in flight now, from another thread (nothing to do for a model that answers at once)."""
        ...

    def restore(self, state: Mapping[str, Any]) -> None:
        """Go on from the ``replayState`` of the last assistant message it produced, on a resumed session
        (nothing to do for a model that keeps no such state)."""
        ...

    def reasoning_efforts(self) -> list[str]:
        """Reasoning effort ids the route declares (may be empty when unknown)."""
        ...
