"""Every model request of a session, rebuilt from its log.

A request goes out once a step's inputs are logged and before the step's first model output: after
``step/start`` and whatever follows it (on a turn's first step DSH logs the user message and the runtime
context there, our host its seal, fold and route events and the request header), right before the first
``assistant/chunk`` or ``assistant/message`` of the step. A failed attempt (a ``finish`` chunk of kind
``error``, or an ``llm/retry``) opens the next attempt, which goes out before its own first output, so a
compaction between two attempts shows in the second one.

- DSH logs: the latest ``request/header`` (system prompt, tools, model, reasoning effort, max tokens) plus the
  surface's messages, as chat-completions messages: one ``system`` message, then ``user``, ``assistant`` (with
  its tool calls) and ``tool`` messages, each tool result its own ``tool`` message, in surface order.
- Our host's logs (a ``tapedeck/host`` event): exactly what the host sent. The messages come from
  ``core.policies.phase_notes.request_messages`` (the phase notes pinned in place), the output cap and
  ``tool_choice`` from the step's ``tapedeck/route`` event, and the body from the provider's own
  ``request_body``. A route's reasoning-effort extras are not logged and so are not rebuilt (the CLI's
  ``openai`` provider declares none).

Requests are produced in one forward pass over the events, so ``--all`` on a long log costs one projection.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from core.host.providers.convert import request_body
from core.model import ModelRequest
from core.policies import phase_notes
from core.policies.adaptive import FINALIZATION, ROUTE_EVENT
from core.session import Session, derive_message
from core.text import cp_len

HOST_EVENT = "tapedeck/host"
OUTPUT_TYPES = frozenset({"assistant/chunk", "assistant/message"})


@dataclass
class Request:
    """One model request as it went out."""

    turn: int
    step: int
    attempt: int  # 1 for the step's first call, then one more per retry
    seq: int  # the last event logged before it went out: the surface it carried is the one at this seq
    host: bool  # written by our host (else a DSH log)
    provider: str | None
    model: str | None
    header_seq: int | None
    system: str | None
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]]  # DSH messages in request order, phase notes included
    keys: list[int | str]  # per message: its surface node seq, or ``note:<anchor seq>``
    body: dict[str, Any]  # the chat-completions body
    reasoning_effort: str | None = None
    usage: dict[str, int] | None = None  # what the log recorded for this attempt
    output_seq: int = -1  # the first model output of the attempt
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def wire(self) -> list[dict[str, Any]]:
        """The chat-completions messages."""
        return self.body["messages"]

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools the request offered."""
        return [str(t.get("name")) for t in self.tools]

    @property
    def chars(self) -> int:
        """Code points of the wire messages' text, tool-call arguments and reasoning."""
        return sum(wire_chars(m) for m in self.wire)

    def to_dict(self) -> dict[str, Any]:
        """The ``request --json`` object."""
        return {
            "turn": self.turn,
            "step": self.step,
            "attempt": self.attempt,
            "seq": self.seq,
            "host": "tapedeck" if self.host else "dsh",
            "provider": self.provider,
            "model": self.model,
            "maxTokens": self.body.get("max_tokens"),
            "reasoningEffort": self.reasoning_effort,
            "toolChoice": self.body.get("tool_choice"),
            "tools": self.tool_names,
            "messages": self.wire,
            "chars": self.chars,
            "usage": self.usage,
        }


def wire_chars(message: dict[str, Any]) -> int:
    """Code points of one chat-completions message's content, reasoning and tool-call arguments."""
    total = cp_len(message.get("content") or "") + cp_len(message.get("reasoning_content") or "")
    for call in message.get("tool_calls") or ():
        total += cp_len(call["function"]["arguments"])
    return total


def _list(value: Any) -> list[dict[str, Any]]:
    return [t for t in value if isinstance(t, dict)] if isinstance(value, list) else []


class _Pass:
    """The state of one forward pass: which attempt is armed, the route of each step, the open request."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.host = False
        self.armed: tuple[int, int, int] | None = None
        self.attempts: dict[tuple[int, int], int] = {}
        self.routes: dict[tuple[int, int], dict[str, Any]] = {}
        self.open: Request | None = None

    def before(self, event: dict[str, Any]) -> Request | None:
        """Called before ``event`` is projected: the request that goes out now, if any."""
        if self.armed is None or event.get("type") not in OUTPUT_TYPES:
            return None
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        turn, step, attempt = self.armed
        if (data.get("turn"), data.get("step")) != (turn, step):
            return None
        self.armed = None
        request = self.build(turn, step, attempt)
        request.output_seq = int(event.get("seq", self.session.next_seq))
        return request

    def after(self, event: dict[str, Any]) -> None:
        """Called once ``event`` is projected."""
        etype = event.get("type")
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        key = (data.get("turn"), data.get("step"))
        if etype == HOST_EVENT:
            self.host = True
        elif etype == "step/start" and all(isinstance(k, int) for k in key):
            self.arm(key)  # type: ignore[arg-type]
        elif etype == ROUTE_EVENT:
            self.routes[key] = data  # type: ignore[index]
        elif etype == "llm/retry" and self.armed is None and self.attempts.get(key):  # type: ignore[arg-type]
            self.arm(key)  # type: ignore[arg-type]
        elif etype == "assistant/chunk":
            chunk = data.get("chunk") if isinstance(data.get("chunk"), dict) else {}
            if chunk.get("type") == "usage" and self._open_for(key) and isinstance(chunk.get("usage"), dict):
                self.open.usage = chunk["usage"]  # type: ignore[union-attr]
            elif chunk.get("type") == "finish" and (chunk.get("reason") or {}).get("kind") == "error":
                self.arm(key)  # type: ignore[arg-type]
        elif etype == "assistant/message" and self._open_for(key) and self.open.usage is None:  # type: ignore[union-attr]
            usage = data.get("usage")
            self.open.usage = usage if isinstance(usage, dict) else None  # type: ignore[union-attr]

    def arm(self, key: tuple[int, int]) -> None:
        self.attempts[key] = self.attempts.get(key, 0) + 1
        self.armed = (key[0], key[1], self.attempts[key])

    def _open_for(self, key: tuple[Any, Any]) -> bool:
        return self.open is not None and (self.open.turn, self.open.step) == key

    def build(self, turn: int, step: int, attempt: int) -> Request:
        """The request of that attempt from the session as it stands now."""
        session = self.session
        header = session.request_header() or {}
        config = header.get("config") if isinstance(header.get("config"), dict) else {}
        system = header.get("system") if isinstance(header.get("system"), str) else None
        tools = _list(header.get("tools"))
        model = config.get("model") if isinstance(config.get("model"), str) else None
        if self.host:
            route = self.routes.get((turn, step)) or {}
            keyed = phase_notes.keyed_request_messages(session)
            keys, messages = [k for k, _ in keyed], [m for _, m in keyed]
            caps = route.get("caps") if isinstance(route.get("caps"), dict) else {}
            wanted = ModelRequest(
                messages=messages,
                system=system,
                tools=tools,
                max_tokens=caps.get("maxTokens"),
                tool_choice="none" if route.get("phase") == FINALIZATION else None,
            )
            effort = None
        else:
            keyed = [(seq, m) for seq in session.surface if (m := derive_message(session.events[seq]))]
            keys, messages = [k for k, _ in keyed], [m for _, m in keyed]
            cap = config.get("maxTokens")
            wanted = ModelRequest(messages=messages, system=system, tools=tools,
                                  max_tokens=cap if isinstance(cap, int) else None)  # fmt: skip
            effort = config.get("reasoningEffort") if isinstance(config.get("reasoningEffort"), str) else None
        return Request(
            turn=turn,
            step=step,
            attempt=attempt,
            seq=session.next_seq - 1,
            host=self.host,
            provider=config.get("provider") if isinstance(config.get("provider"), str) else None,
            model=model,
            header_seq=session.request_header_seq,
            system=system,
            tools=tools,
            messages=messages,
            keys=keys,
            body=request_body(model or "", wanted),
            reasoning_effort=effort,
        )


def iter_requests(
    header: dict[str, Any], events: Iterable[dict[str, Any]], session: Session | None = None
) -> Iterator[Request]:
    """Every model request of a log in order, retries included, each with the usage logged for it.

    A request is yielded once its attempt is over (the next request went out, or the log ended). Pass an
    empty ``session`` to look at the projection as the pass goes (it is past each request when it is yielded).
    """
    state = _Pass(Session(header) if session is None else session)
    for event in events:
        request = state.before(event)
        if request is not None:
            if state.open is not None:
                yield state.open
            state.open = request
        state.session.apply(event)
        state.after(event)
    if state.open is not None:
        yield state.open
