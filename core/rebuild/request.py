"""Every model request of a session, rebuilt from its log.

A request goes out once a step's inputs are logged and before the step's first model output: after
``step/start`` and whatever follows it (on a turn's first step DSH logs the user message and the runtime
context there, our host its seal, fold and route events and the request header), right before the first
``assistant/chunk`` or ``assistant/message`` of the step. A failed attempt (a ``finish`` chunk of kind
``error``, or an ``llm/retry``) opens the next attempt, which goes out before its own first output, so a
compaction between two attempts shows in the second one.

- DSH logs: the latest ``request/header`` (system prompt, tools, model and every sampling field its ``config``
  logs: ``maxTokens``, ``temperature``, ``stop``, ``reasoningEffort``) plus the surface's messages, serialized
  as DSH's DeepSeek adapter does (``core.shared.dsh_wire``: its message rules and key order, byte for byte). A field
  the header does not log is left out (the adapter's or provider's default applied; it is not known here);
  ``Request.sources`` says which fields came from the log, the adapter's defaults or the route.
- DSH's other model calls are requests of their own ``kind``: the session-title call (``title``: everything it
  sent is in its ``session/title-llm-request`` event; DSH logs no usage for it) and each compaction summary call
  (``compaction``: the latest header's system prompt and tools, the derived messages of the nodes its
  ``compaction/summary`` shadowed, that event's model, cap and usage; DSH's instruction, appended as the last
  user message, is not in the log, which ``Request.unlogged`` says). They go out at their ``session/title-llm-request``
  and ``compaction/start`` events and are listed in seq order among the agent's requests.
- Our host's logs (a ``tapedeck/host`` event): exactly what the host sent. The messages come from
  ``core.policies.phase_notes.request_messages`` (the phase notes pinned in place), the output cap and
  ``tool_choice`` from the step's ``tapedeck/route`` event, and the body from the provider's own
  ``request_body``. A route's reasoning-effort extras are not logged and so are not rebuilt (the CLI's
  ``openai`` provider declares none).

``RequestPass`` finds and builds them in one forward pass over the events: ``stream_requests`` runs it over a log
file in one streaming pass whose DSH requests are lean (the CLI's path): each holds a ``Digest`` of its prompt
(its message nodes and their sizes), not its messages, which are read back from the file only where output needs
them, so memory follows the number of surface nodes, not their bytes; ``iter_requests`` runs it over events in
memory. ``request_points`` and ``request_at`` answer the same from
a session that is already projected, with a ``core.read.timetravel.SurfaceTimeline`` (the TUI's path). All use one
``RequestClock`` and one ``build_request``.
"""

from __future__ import annotations

import bisect
import os
from array import array
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import field
from itertools import islice
from typing import TYPE_CHECKING, Any

import orjson

from core.log.records import PackedRow
from core.log.store import KeepingEvents
from core.log.vocabulary import HOST_EVENT, ROUTE_EVENT, SURFACE_TYPES
from core.read.load import PassEnded, load_session
from core.read.session import Session, ToolCall, derive_message, surface_view
from core.shared.dsh_wire import (
    IMAGE_NOTE,
    DshMessages,
    dsh_body,
    dsh_wire,
    has_image,
    thinking_fields,
    wire_digest,
)
from core.shared.records import record
from core.shared.text import cp_len
from core.shared.values import int_or_none, str_or_none
from core.shared.wire import OpenAIMessages, request_body

if TYPE_CHECKING:
    from core.read.timetravel import SurfaceTimeline

CHUNK = "assistant/chunk"
OUTPUT_TYPES = frozenset({CHUNK, "assistant/message"})
_CHUNK_NEWS = frozenset({"finish", "usage"})  # the chunks a request pass reads
TITLE_CALL, COMPACTION_START, COMPACTION_SUMMARY = "session/title-llm-request", "compaction/start", "compaction/summary"
AGENT, TITLE, COMPACTION = "agent", "title", "compaction"  # Request.kind
INSTRUCTION_NOTE = "the summary instruction DSH appends as the last user message (its own text)"
Wired = tuple[list[dict[str, Any]], bytes]  # a surface node's wire messages (``node_wire``) and their JSON


@record()
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
    sources: dict[str, str] = field(default_factory=dict)  # per setting (maxTokens, temperature, stop, reasoningEffort, toolChoice): where its value came from
    prompt: bytes | bytearray | None = field(default=None, repr=False, compare=False)  # request_diff.prompt_bytes
    cache: WireCache | None = field(default=None, repr=False, compare=False)  # of the pass that built it
    kind: str = AGENT  # agent, or DSH's title or compaction call
    unlogged: list[str] = field(default_factory=list)  # what went out but is not in the log (so not rebuilt)
    digest: Digest | None = field(default=None, repr=False, compare=False)  # a lean request's prompt, see ``Digest``
    unfinished: bool = False  # in flight as the log ends: no answer logged (its host was killed, or waits)

    @property
    def wire(self) -> list[dict[str, Any]]:
        """The chat-completions messages (a lean request reads its messages back first: ``materialize``)."""
        self.materialize()
        return self.body["messages"]

    def materialize(self) -> None:
        """Give a lean request (one with a ``digest`` and no messages yet) its keys, messages and wire messages,
        read back by seq from its session's events; a no-op for any other."""
        digest = self.digest
        if digest is None or digest.done:
            return
        self.keys = digest.keys[: digest.count]
        events = digest.events
        self.messages = [m for seq in self.keys if (m := derive_message(surface_view(events[seq])))]
        self.body["messages"] = convert(self.system, self.messages, DshMessages)
        digest.done = True

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools the request offered."""
        return [str(t.get("name")) for t in self.tools]

    @property
    def chars(self) -> int:
        """Code points of the wire messages' text, tool-call arguments and reasoning."""
        return sum(wire_chars(m) for m in self.wire)

    def wire_stats(self) -> tuple[int, int]:
        """How many wire messages and ``chars``, without reading a lean request's messages back."""
        digest = self.digest
        if digest is None or digest.done:
            return len(self.wire), self.chars
        _, pieces, chars = digest.totals()
        if not self.system:
            return pieces, chars
        return pieces + 1, chars + wire_chars({"role": "system", "content": self.system})  # as ``DshMessages`` starts

    def iter_wire(self) -> Iterator[dict[str, Any]]:
        """The chat-completions messages one at a time: a lean request's read back one node at a time (none is
        kept), any other's from ``wire``."""
        for _, read in self.wire_nodes():
            yield from read()

    def wire_nodes(self) -> Iterator[tuple[int | None, Callable[[], list[dict[str, Any]]]]]:
        """``iter_wire`` in pieces, each read only when its reader is called: a lean request's surface nodes as
        ``(seq, reader of its wire messages)``, read back from the log; the system message and every message of
        any other request as ``(None, reader of that one message)``."""
        digest = self.digest
        if digest is None or digest.done:
            for message in self.wire:
                yield None, lambda message=message: [message]  # type: ignore[misc]
            return
        if self.system:  # as ``DshMessages`` starts
            yield None, lambda: [{"role": "system", "content": self.system}]
        events = digest.events
        for seq in islice(digest.keys, digest.count):
            yield seq, lambda seq=seq: node_wire(events[seq])  # type: ignore[misc]

    def to_dict(self, body: bool = False, shallow: bool = False) -> dict[str, Any]:
        """The ``request --json`` object (with ``body``: the whole chat-completions body too); ``shallow`` leaves
        its messages out (``[]`` in their place, also in ``body``) and counts ``chars`` from ``iter_wire``, for a
        printer that writes them one at a time."""
        if shallow:
            messages: list[dict[str, Any]] = []
            chars = self.wire_stats()[1]
        else:
            messages, chars = self.wire, self.chars
        out = {
            "kind": self.kind,
            "turn": self.turn,
            "step": self.step,
            "attempt": self.attempt,
            "seq": self.seq,
            "host": "tapedeck" if self.host else "dsh",
            "provider": self.provider,
            "model": self.model,
            "maxTokens": self.body.get("max_tokens"),
            "reasoningEffort": self.reasoning_effort,
            "temperature": self.body.get("temperature"),
            "stop": self.body.get("stop"),
            "toolChoice": self.body.get("tool_choice"),
            "fieldSources": self.sources,
            "tools": self.tool_names,
            "messages": messages,
            "chars": chars,
            "usage": self.usage,
            "unlogged": self.unlogged,
            "unfinished": self.unfinished,
        }
        if body:
            out["body"] = {**self.body, "messages": []} if shallow else self.body
        return out


FROM_LOG, FROM_ADAPTER, NOT_LOGGED = "log", "log (adapter default)", "not logged"
FROM_ROUTE, NOT_SENT = "route", "not sent"


def _dsh_settings(header: dict[str, Any], config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The sampling settings a DSH header logs (``dsh_body`` keywords) and where each setting came from."""
    cap, temperature, stop = config.get("maxTokens"), config.get("temperature"), config.get("stop")
    effort = config.get("reasoningEffort")
    number = isinstance(temperature, int | float) and not isinstance(temperature, bool)
    words = isinstance(stop, str) or (isinstance(stop, list) and all(isinstance(x, str) for x in stop))
    found = {
        "maxTokens": cap if isinstance(cap, int) and not isinstance(cap, bool) else None,
        "temperature": temperature if number else None,
        "stop": stop if words else None,
        "reasoningEffort": effort if isinstance(effort, str) else None,
    }
    defaults = header.get("adapterDefaults") if isinstance(header.get("adapterDefaults"), dict) else {}
    sources = {
        key: NOT_LOGGED if value is None else FROM_ADAPTER if defaults.get(key) is True else FROM_LOG
        for key, value in found.items()
    }
    sources["toolChoice"] = NOT_LOGGED
    keywords = {"max_tokens": found["maxTokens"], "temperature": found["temperature"], "stop": found["stop"]}
    return keywords, sources


def wire_chars(message: dict[str, Any]) -> int:
    """Code points of one chat-completions message's content, reasoning and tool-call arguments."""
    total = cp_len(message.get("content") or "") + cp_len(message.get("reasoning_content") or "")
    for call in message.get("tool_calls") or ():
        arguments = call["function"].get("arguments")  # a DSH call's as logged: it may be missing or not text
        total += cp_len(arguments) if isinstance(arguments, str) else 0
    return total


def _list(value: Any) -> list[dict[str, Any]]:
    return [t for t in value if isinstance(t, dict)] if isinstance(value, list) else []


UNFINISHED = "unfinished: the log ends before its answer"  # how reports mark a request the log ends in


@record(frozen=True, slots=True)
class Point:
    """When a request went out: its step, its attempt and the last event logged before it."""

    turn: int
    step: int
    attempt: int
    seq: int
    unfinished: bool = False  # in flight as the log ends, no answer logged (``RequestClock.in_flight``)


class RequestClock:
    """Tells when requests go out, from event types alone plus the data of a few events.

    ``after`` reads the data only of ``step/start``, ``llm/retry`` and chunks: a caller that cannot afford to
    decode every chunk may give ``{}`` for all but the last chunk of each run, since a failed attempt's ``finish``
    is always its last chunk.
    """

    TYPES = frozenset({*OUTPUT_TYPES, "step/start", "step/end", "turn/end", "llm/retry"})
    NEWS = TYPES - {"assistant/message"}  # the types ``after`` reads (a message only sends a request out)

    def __init__(self) -> None:
        self.step: tuple[int, int] | None = None
        self.armed: tuple[int, int, int] | None = None
        self.attempts: dict[tuple[int, int], int] = {}

    def before(self, seq: int, etype: str) -> Point | None:
        """Called before the event at ``seq`` is projected: the request that goes out now, if any."""
        if self.armed is None or etype not in OUTPUT_TYPES:
            return None
        turn, step, attempt = self.armed
        self.armed = None
        return Point(turn, step, attempt, seq - 1)

    def in_flight(self, end: int) -> Point | None:
        """The request in flight when the log ends before seq ``end``, if any: one due to go out (a step
        started, a retry armed) with nothing logged after, so it went out after the last event and no answer
        is logged. It leaves the clock as it is, so a growing log goes on from there."""
        if self.armed is None:
            return None
        turn, step, attempt = self.armed
        return Point(turn, step, attempt, end - 1, unfinished=True)

    def after(self, etype: str, data: dict[str, Any]) -> None:
        """Called once the event (whose ``data`` object is given) is projected."""
        if etype == "step/start":
            key = (data.get("turn"), data.get("step"))
            if (key[0].__class__ is int and key[1].__class__ is int) or all(int_or_none(k) is not None for k in key):
                self.step = key  # type: ignore[assignment]
                self._arm()
        elif etype in ("step/end", "turn/end"):
            self.step = self.armed = None
        elif etype == "llm/retry" and self.armed is None and self.step is not None:
            if (data.get("turn"), data.get("step")) == self.step:
                self._arm()
        elif etype == "assistant/chunk" and self.step is not None:
            chunk = data.get("chunk")
            reason = chunk.get("reason") if isinstance(chunk, dict) and chunk.get("type") == "finish" else None
            if isinstance(reason, dict) and reason.get("kind") == "error":
                self._arm()

    def _arm(self) -> None:
        key = self.step
        assert key is not None
        self.attempts[key] = self.attempts.get(key, 0) + 1
        self.armed = (key[0], key[1], self.attempts[key])


def _data(event: dict[str, Any]) -> dict[str, Any]:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def request_points(
    session: Session, start: int = 0, stop: int | None = None, clock: RequestClock | None = None
) -> list[Point]:
    """The requests of a projected session that went out in seqs ``start``..``stop-1``, found through its type
    column (``Session.seqs_of``).

    Only step bookkeeping, retries and the last chunk of each run of chunks are decoded, so a session of a
    huge log read back from its file answers without reading its chunks. Matches the agent requests of ``iter_requests``
    point for point (DSH's title and compaction calls are not among them). To take in a growing log piece by
    piece, pass the same ``clock`` each time with ``start`` = the last ``stop``.
    """
    end = session.next_seq if stop is None else stop
    items: list[tuple[int, str | None, bool]] = []  # (seq, type when known, decode it)
    prev = -2
    for seq in session.seqs_of((CHUNK,), start):
        if seq >= end:
            break
        if seq != prev + 1:
            if prev >= 0:
                items.append((prev, CHUNK, True))
            items.append((seq, CHUNK, False))
        prev = seq
    if prev >= 0:
        items.append((prev, CHUNK, True))
    items.extend((seq, "assistant/message", False) for seq in session.seqs_of(("assistant/message",), start))
    items.extend((seq, None, True) for seq in session.seqs_of(RequestClock.TYPES - OUTPUT_TYPES, start))
    items.sort(key=lambda item: (item[0], item[2]))
    clock = RequestClock() if clock is None else clock
    points = []
    events = session.events
    for seq, etype, decode in items:
        if seq >= end:
            break
        event = events[seq] if decode else {}
        etype = etype or str(event.get("type"))
        point = clock.before(seq, etype)
        if point is not None:
            points.append(point)
        if decode:
            clock.after(etype, _data(event))
    return points


def prompt_head(request: Request) -> list[bytes]:
    """The start of ``prompt_parts``: the system message (when the request has one) and the tools."""
    if request.digest is not None:
        return request.digest.head
    system = [m for m in request.wire[:1] if m.get("role") == "system"]
    return [*map(orjson.dumps, system), orjson.dumps(request.body.get("tools") or [])]


def _iter_parts(request: Request) -> Iterator[bytes]:
    head = prompt_head(request)
    yield from head
    yield from map(orjson.dumps, request.wire[len(head) - 1 :])


def prompt_parts(request: Request) -> list[bytes]:
    """The request as the provider renders it, in order: the system message, the tools, the other messages."""
    return list(_iter_parts(request))


def prompt_bytes(request: Request) -> bytes | bytearray:
    """``prompt_parts`` joined: what ``request_diff``'s break offset counts in (rendered once per request, part
    by part, then kept on it)."""
    if request.prompt is None:
        if request.cache is not None:
            request.prompt = request.cache.prompt(request)
        else:
            prompt = bytearray()
            for part in _iter_parts(request):
                prompt += part
            request.prompt = prompt
    return request.prompt


@record(slots=True)
class Digest:
    """What a lean request (built by a ``RequestPass`` with ``lean``) holds of its prompt instead of its messages:
    the prompt's head (``prompt_head``), its surface nodes that project a message (the first ``count`` of
    ``keys``) and where each one's wire messages end in the prompt after the head (``ends``, in bytes).

    ``keys``, ``ends`` and ``sums`` are the pass's own lists (the numbers in arrays: a log never cut has tens of
    thousands of nodes), shared by the requests of a surface that only grows (a cut gives the next request new
    ones), so a request costs what its new nodes cost. Messages are read back by seq from ``events`` only where
    output needs them."""

    head: list[bytes]
    keys: list[int]
    ends: array[int]
    count: int
    events: Any  # the session's event store, which reads any of ``keys`` back
    sums: array[int]  # three per node: images, wire messages and ``wire_chars`` of it and those before it
    done: bool = False  # materialized

    def totals(self) -> tuple[int, int, int]:
        """Of its message nodes: how many hold an image, their wire messages and their ``wire_chars``."""
        at, sums = 3 * self.count, self.sums
        return (sums[at - 3], sums[at - 2], sums[at - 1]) if at else (0, 0, 0)

    @property
    def size(self) -> int:
        """The prompt's length in bytes (``len(prompt_bytes(request))``)."""
        return sum(map(len, self.head)) + (self.ends[self.count - 1] if self.count else 0)

    def message_parts(self, start: int = 0) -> Iterator[bytes]:
        """The rendered wire messages of nodes ``start``.. of the prompt, each node's read back and rendered."""
        for seq in islice(self.keys, start, self.count):
            yield b"".join(map(orjson.dumps, node_wire(self.events[seq])))


def node_wire(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The wire messages of a DSH surface node read back (none when it projects no message)."""
    message = derive_message(surface_view(event))
    return dsh_wire(message) if message else []


def node_digest(event: dict[str, Any]) -> tuple[int, int, int, int] | None:
    """A DSH surface node's share of a prompt: the bytes of its wire messages, whether it holds an image (1 or 0),
    how many wire messages it gives and their ``wire_chars`` (None: it projects no message). Measured without
    building the wire messages (``wire_digest``): what ``wired_digest`` gives beside them."""
    message = derive_message(event)
    return wire_digest(message) if message else None


def wired_digest(event: dict[str, Any]) -> tuple[tuple[int, int, int, int] | None, Wired | None]:
    """``node_digest``, and the node's wire messages (``node_wire``) with their JSON when it has any."""
    message = derive_message(event)
    if not message:
        return None, None
    wire = dsh_wire(message)
    if not wire:
        return (0, int(has_image((message,))), 0, 0), None
    dump = orjson.dumps(wire)
    size = len(dump) - len(wire) - 1  # each message's own: less the list's brackets and commas
    return (size, int(has_image((message,))), len(wire), sum(map(wire_chars, wire))), (wire, dump)


Mark = tuple[int, tuple[str, ...], tuple[dict[str, Any], ...]]
Conversion = type[OpenAIMessages] | type[DshMessages]
Address = tuple[str, int, int, int, int]  # a request's kind, seq, turn, step and attempt
# a prompt, where each wire message after its head ends, its head's bytes, and whose prompt it is
Rendered = tuple[bytearray, list[int], int, Address]
# the buffer, the addresses of the request it held and of the one it holds now, the cut, what was cut off, old size
Cut = tuple[bytearray | None, Address | None, Address | None, int, bytes, int]


_UNNOTED = object()  # a node ``WireCache.noted`` has no digest of (noted None: it projects no message)


def _address(request: Request) -> Address:
    return request.kind, request.seq, request.turn, request.step, request.attempt


class WireCache:
    """What a pass that builds request after request keeps from the last one, so that each surface message is
    converted and rendered about once, not once per request that carries it.

    ``convert`` resumes the chat-completions conversion after the longest run of messages the last request
    shares with this one (the same message objects: a pass that keeps the surface's events hands out the same
    ones); ``prompt`` renders the last converted request's prompt in the buffer of the one before it, cut back
    to the wire messages they share, and ``cut_from`` tells ``request_diff`` what the earlier prompt was.
    Each gives exactly what the plain conversion and rendering give.
    """

    def __init__(self) -> None:
        self.system: str | None = None
        self.conversion: Conversion = OpenAIMessages  # our host's rules or DSH's
        self.messages: list[dict[str, Any]] = []  # the last request's messages
        self.marks: list[Mark] = []  # where its conversion stood after each of them
        self.images: list[int] = []  # per message: how many of it and those before it hold an image
        self.out: list[dict[str, Any]] = []  # its conversion before the unanswered calls were settled
        self.wire: list[dict[str, Any]] | None = None  # its wire messages
        self.shared = 0  # how many of them start the wire of the request converted before it
        self.base: Rendered | None = None  # the prompt of the request before it, if it was rendered
        self.rendered: Rendered | None = None  # its own prompt, once rendered
        self.cut: Cut = (None, None, None, 0, b"", 0)  # the last prompt cut back in place: see ``cut_from``
        self.nodes: list[int] = []  # the last DSH request's surface
        self.seqs: list[int] = []  # its nodes that project a message
        self.node_messages: list[dict[str, Any]] = []  # and their messages
        self.kept = 0  # how many of those the request before it carried too
        self.counts: list[int] = []  # per node of it: how many messages it and the nodes before it project
        self.derived = self.converted = 0  # surface nodes read and messages converted, over every request
        # a lean pass's: each surface node's digest (``node_digest``), noted as it was applied and held until a
        # request takes it in (or a cut gives it back), and the last
        # DSH request's message nodes, where their wire messages end and how many hold an image (see ``Digest``)
        self.noted: dict[int, tuple[int, int, int, int] | None] = {}
        self.keys: list[int] = []
        self.ends = array("q")
        self.sums = array("q")  # see ``Digest``
        self.lean_nodes: list[int] = []  # the last DSH request's surface
        self.lean_counts = array("q")  # per node of it: how many of it and the nodes before it are in ``keys``
        self.lean_cuts = 0  # the session's cuts when it was taken
        self.lean_parts: tuple[Any, LeanParts] | None = None  # the request header and what a lean request makes of it

    def digest(self, view: Any, head: list[bytes]) -> tuple[Digest, bool]:
        """The lean ``Digest`` of the DSH request ``view`` makes (with ``head``) and whether it holds an image:
        the last request's, extended by the nodes new to the surface (their digests as noted, or read).

        ``view`` is a ``Session``, whose surface changes only by appends and by replacements, each of which adds a
        ``Cut``: while no cut came, the last request's nodes start the surface and nothing is compared."""
        surface, nodes, counts = view.surface, self.lean_nodes, self.lean_counts
        shared = len(nodes)
        if len(view.cuts) != self.lean_cuts or len(surface) < shared or (shared and surface[shared - 1] != nodes[-1]):
            shared = next((i for i, (a, b) in enumerate(zip(nodes, surface, strict=False)) if a != b), shared)
            shared = min(shared, len(surface))
            del nodes[shared:], counts[shared:]
            self.lean_cuts = len(view.cuts)
        kept = counts[shared - 1] if shared else 0
        events, noted = view.events, self.noted
        if kept < len(self.keys):  # cut: new lists, so that the requests that hold the old ones keep them whole
            old_keys, old_ends, old_sums = self.keys, self.ends, self.sums
            self.keys, self.ends, self.sums = old_keys[:kept], old_ends[:kept], old_sums[: 3 * kept]
            for i in range(kept, len(old_keys)):  # the nodes after the cut still on the surface: noted again
                if view.on_surface(seq := old_keys[i]):
                    now = (old_ends[i], *old_sums[3 * i : 3 * i + 3])
                    before = (old_ends[i - 1], *old_sums[3 * i - 3 : 3 * i]) if i else (0, 0, 0, 0)
                    noted[seq] = tuple(a - b for a, b in zip(now, before, strict=True))  # type: ignore[assignment]
        keys, ends, sums = self.keys, self.ends, self.sums
        new = surface[shared:]
        self.derived += len(new)
        end, images, pieces, chars = (ends[-1], sums[-3], sums[-2], sums[-1]) if keys else (0, 0, 0, 0)  # totals
        count = len(keys)
        for seq in new:
            found = noted.pop(seq, _UNNOTED)
            if found is _UNNOTED:
                found = node_digest(events[seq])
            if found is not None:
                keys.append(seq)
                end += found[0]
                images += found[1]
                pieces += found[2]
                chars += found[3]
                ends.append(end)
                sums.extend((images, pieces, chars))
                count += 1
            counts.append(count)
        nodes += new
        digest = Digest(head, keys, ends, len(keys), events, sums)
        return digest, bool(images)

    def lean_request(self, view: Any, point: Point) -> Request:
        """The lean DSH request at ``point`` (``build_request`` with ``lean``): what it takes of the request header
        is made once per header (its rendered head most of all: the system prompt and every tool schema), and each
        request gets its own copies of the containers."""
        header = view.request_header()
        if self.lean_parts is None or self.lean_parts[0] is not header:
            self.lean_parts = (header, _lean_parts(header or {}))
        parts = self.lean_parts[1]
        digest, images = self.digest(view, list(parts.head))
        return Request(point.turn, point.step, point.attempt, point.seq, False, parts.provider, parts.model,
                       view.request_header_seq, parts.system, list(parts.tools), [], [], dict(parts.body),
                       parts.effort, sources=dict(parts.sources), unlogged=[IMAGE_NOTE] if images else [],
                       digest=digest)  # fmt: skip

    def surface_messages(self, view: Any) -> tuple[list[int], list[dict[str, Any]]]:
        """The seqs and ``derive_message``s of every surface node of ``view`` that projects a message: the last
        request's, up to the nodes the two surfaces share (a node's message never changes); ``kept`` says how
        many of them are the last request's own objects."""
        surface = view.surface
        shared = len(self.nodes)
        if surface[:shared] != self.nodes:  # not only grown since
            shared = next((i for i, (a, b) in enumerate(zip(self.nodes, surface, strict=False)) if a != b), shared)
            shared = min(shared, len(surface))
        self.kept = self.counts[shared - 1] if shared else 0
        seqs, messages, counts = self.seqs[: self.kept], self.node_messages[: self.kept], self.counts[:shared]
        events = view.events
        self.derived += len(surface) - shared
        for seq in surface[shared:]:
            message = derive_message(events[seq])
            if message:
                seqs.append(seq)
                messages.append(message)
            counts.append(len(seqs))
        self.nodes, self.seqs, self.node_messages, self.counts = list(surface), seqs, messages, counts
        return seqs, messages  # never changed afterwards: the next request's lists are new ones

    def convert(
        self, system: str | None, messages: list[dict[str, Any]], kind: Conversion = OpenAIMessages, known: int = 0
    ) -> list[dict[str, Any]]:
        """``convert(system, messages, kind)``: our host's wire messages, or DSH's with ``DshMessages``; the first
        ``known`` of ``messages`` are known to be the last request's own."""
        same = 0
        if system == self.system and kind is self.conversion:
            same = min(known, len(self.messages), len(messages))
            for old, new in zip(islice(self.messages, same, None), islice(messages, same, None), strict=False):
                if old is not new:
                    break
                same += 1
        if same:
            conversion, marks = kind.resume(self.out, self.marks[same - 1]), self.marks[:same]
        else:
            conversion, marks = kind(system), []
        images = self.images[:same]
        self.shared = len(conversion.out)
        for message in messages[same:]:
            conversion.add(message)
            marks.append(conversion.mark())
            images.append((images[-1] if images else 0) + has_image((message,)))
        self.converted += len(messages) - same
        self.system, self.messages, self.marks, self.out = system, list(messages), marks, conversion.out
        self.conversion, self.images = kind, images
        self.wire = conversion.result()
        self.base, self.rendered = self.rendered, None
        return self.wire

    def prompt(self, request: Request) -> bytearray:
        """``prompt_bytes`` of ``request``. When ``request`` is the last one converted and the one before it was
        rendered, its prompt is that one's buffer, cut back in place to the wire messages the two share and grown
        from there (so a pass costs what it renders, not the shared prefix again per request): the earlier
        request's prompt then is this one, and ``cut_from`` tells ``request_diff`` what it was."""
        head = prompt_head(request)
        skip = len(head) - 1  # wire messages in the head: the system message, if any
        head_bytes = sum(map(len, head))
        latest = request.wire is self.wire
        base = self.base if latest else None
        if latest:
            self.base = None  # its buffer becomes this prompt
        prompt: bytearray | None = None
        if base is not None and self.shared > skip:
            old, old_ends, old_head, address = base
            if old_head == head_bytes and old.startswith(b"".join(head)):
                at = old_ends[self.shared - skip - 1]
                self.cut = (old, address, _address(request), at, old[at:], len(old))
                del old[at:]
                del old_ends[self.shared - skip :]
                prompt, ends, start = old, old_ends, self.shared
        if prompt is None:
            prompt, ends, start = bytearray().join(head), [], skip
        for message in request.wire[start:]:
            prompt += orjson.dumps(message)
            ends.append(len(prompt))
        if latest:
            self.rendered = (prompt, ends, head_bytes, _address(request))
        return prompt

    def cut_from(self, before: Request, after: Request) -> tuple[int, bytes, int] | None:
        """When ``after``'s prompt was cut back from ``before``'s in place (the two are one buffer now): where it
        was cut, the bytes of ``before``'s that were cut off, and ``before``'s length; else None."""
        buffer, was, now, at, tail, size = self.cut
        if buffer is after.prompt and was == _address(before) and now == _address(after):
            return at, tail, size
        return None

    @property
    def has_image(self) -> bool:
        """True when a message of the last converted request holds an image."""
        return bool(self.images and self.images[-1])


@record(frozen=True, slots=True)
class LeanParts:
    """What a lean DSH request takes of its request header (``WireCache.lean_request``)."""

    provider: str | None
    model: str | None
    system: str | None
    tools: list[dict[str, Any]]
    effort: str | None
    sources: dict[str, str]
    body: dict[str, Any]  # without messages
    head: list[bytes]  # ``prompt_head``


def _header_fields(header: dict[str, Any]) -> tuple[dict[str, Any], str | None, list[dict[str, Any]], str | None]:
    """A request header's config, system prompt, tools and model, each as its type allows."""
    config = header.get("config") if isinstance(header.get("config"), dict) else {}
    system = header.get("system") if isinstance(header.get("system"), str) else None
    model = config.get("model") if isinstance(config.get("model"), str) else None
    return config, system, _list(header.get("tools")), model


def _lean_parts(header: dict[str, Any]) -> LeanParts:
    config, system, tools, model = _header_fields(header)
    settings, sources = _dsh_settings(header, config)
    effort = config.get("reasoningEffort") if sources["reasoningEffort"] != NOT_LOGGED else None
    body = dsh_body(model or "", [], tools, thinking_fields(effort), **settings)
    system_part = [orjson.dumps({"role": "system", "content": system})] if system else []
    provider = config.get("provider") if isinstance(config.get("provider"), str) else None
    head = [*system_part, orjson.dumps(body.get("tools") or [])]
    return LeanParts(provider, model, system, tools, effort, sources, body, head)


def convert(system: str | None, messages: list[dict[str, Any]], kind: Conversion) -> list[dict[str, Any]]:
    """The wire messages of a system prompt and DSH messages, by our host's rules or (``DshMessages``) DSH's."""
    conversion = kind(system)
    for message in messages:
        conversion.add(message)
    return conversion.result()


def build_request(
    view: Any,
    point: Point,
    host: bool,
    route: dict[str, Any] | None,
    cache: WireCache | None = None,
    lean: bool = False,
) -> Request:
    """The request at ``point`` from ``view``, a session as it stood then (a ``Session`` or ``SessionAt``).

    ``host`` says our host wrote the log; ``route`` is the step's latest ``tapedeck/route`` data; ``cache``
    the ``WireCache`` of a pass that builds the requests of a log in order; with it, ``lean`` builds a DSH
    request without its messages (a ``Digest``; ``Request.materialize`` reads them back from ``view.events``).
    """
    if lean and cache is not None and not host:
        return cache.lean_request(view, point)
    header = view.request_header() or {}
    config, system, tools, model = _header_fields(header)
    effort = None
    unlogged: list[str] = []
    if host:
        from core.policies import phase_notes  # our host's logs alone: its import is the policies'
        from core.policies.adaptive import FINALIZATION
        from core.shared.chat import ModelRequest

        keyed = phase_notes.keyed_request_messages(view)
        keys: list[int | str] = [k for k, _ in keyed]
        caps = route.get("caps") if route and isinstance(route.get("caps"), dict) else {}
        cap = caps.get("maxTokens")
        wanted = ModelRequest(
            messages=[m for _, m in keyed],
            system=system,
            tools=tools,
            max_tokens=cap,
            tool_choice="none" if route and route.get("phase") == FINALIZATION else None,
        )
        sources = {
            "maxTokens": FROM_ROUTE if cap is not None else NOT_SENT,
            "temperature": NOT_SENT,
            "stop": NOT_SENT,
            "reasoningEffort": NOT_LOGGED,
            "toolChoice": FROM_ROUTE if route else NOT_SENT,
        }
        messages = wanted.messages
        wire = None if cache is None else cache.convert(system, messages)
        body = request_body(model or "", wanted, wire)
    else:
        settings, sources = _dsh_settings(header, config)
        effort = config.get("reasoningEffort") if sources["reasoningEffort"] != NOT_LOGGED else None
        if cache is None:
            keyed = [(seq, m) for seq in view.surface if (m := derive_message(view.events[seq]))]
            keys, messages = [k for k, _ in keyed], [m for _, m in keyed]
        else:
            nodes, messages = cache.surface_messages(view)
            keys = nodes  # type: ignore[assignment]
        if cache is None:
            wire, images = convert(system, messages, DshMessages), has_image(messages)
        else:
            wire, images = cache.convert(system, messages, DshMessages, cache.kept), cache.has_image
        body = dsh_body(model or "", wire, tools, thinking_fields(effort), **settings)
        unlogged = [IMAGE_NOTE] if images else []
    return Request(
        turn=point.turn,
        step=point.step,
        attempt=point.attempt,
        seq=point.seq,
        host=host,
        provider=config.get("provider") if isinstance(config.get("provider"), str) else None,
        model=model,
        header_seq=view.request_header_seq,
        system=system,
        tools=tools,
        messages=messages,
        keys=keys,
        body=body,
        reasoning_effort=effort,
        sources=sources,
        cache=cache,
        unlogged=unlogged,
    )


def title_request(data: dict[str, Any], point: Point) -> Request:
    """DSH's session-title call, from its ``session/title-llm-request`` event (logged right before it went out):
    its system prompt and messages, no tools, thinking off and its output cap."""
    route = data.get("route") if isinstance(data.get("route"), dict) else {}
    system, model, cap = str_or_none(data.get("system")), str_or_none(route.get("model")), int_or_none(data.get("maxTokens"))
    messages = _list(data.get("messages"))
    body = dsh_body(model or "", convert(system, messages, DshMessages), [], thinking_fields(None, title=True), cap)
    sources = {"maxTokens": FROM_LOG if cap is not None else NOT_LOGGED, "temperature": NOT_SENT, "stop": NOT_SENT,
               "reasoningEffort": NOT_SENT, "toolChoice": NOT_SENT}  # fmt: skip
    return Request(point.turn, point.step, 1, point.seq, False, str_or_none(route.get("provider")), model, None, system,
                   [], messages, [f"title:{point.seq}"] * len(messages), body, sources=sources, kind=TITLE,
                   unlogged=[IMAGE_NOTE] if has_image(messages) else [])  # fmt: skip


def compaction_request(session: Session, data: dict[str, Any], point: Point) -> Request:
    """DSH's compaction summary call, from its ``compaction/summary`` event and the session as it stands there
    (the shadowed nodes are still on the surface): the latest header's system prompt and tools, the nodes'
    messages, the event's model, cap and usage. The effort is the header's when it was the adapter's default
    for that same model (the call asks for none, so the adapter's default applies), otherwise not known."""
    header = session.request_header() or {}
    config = header.get("config") if isinstance(header.get("config"), dict) else {}
    system, tools = str_or_none(header.get("system")), _list(header.get("tools"))
    model, provider, cap = str_or_none(data.get("model")), str_or_none(data.get("provider")), int_or_none(data.get("maxTokens"))
    seqs = data.get("shadowedSeqs")
    shadowed = [s for s in seqs if int_or_none(s) is not None and 0 <= s < session.next_seq] if isinstance(seqs, list) else []
    keyed = [(seq, m) for seq in shadowed if (m := derive_message(session.events[seq]))]
    messages = [m for _, m in keyed]
    defaults = header.get("adapterDefaults") if isinstance(header.get("adapterDefaults"), dict) else {}
    same = (config.get("provider"), config.get("model")) == (provider, model) and defaults.get("reasoningEffort") is True
    effort = str_or_none(config.get("reasoningEffort")) if same else None
    body = dsh_body(model or "", convert(system, messages, DshMessages), tools, thinking_fields(effort), cap)
    sources = {"maxTokens": FROM_LOG if cap is not None else NOT_LOGGED, "temperature": NOT_SENT, "stop": NOT_SENT,
               "reasoningEffort": FROM_ADAPTER if effort is not None else NOT_LOGGED, "toolChoice": NOT_SENT}  # fmt: skip
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
    return Request(point.turn, point.step, 1, point.seq, False, provider, model, session.request_header_seq, system,
                   tools, messages, [k for k, _ in keyed], body, effort, usage, sources, kind=COMPACTION,
                   unlogged=[INSTRUCTION_NOTE, *([IMAGE_NOTE] if has_image(messages) else [])])  # fmt: skip


Emit = Callable[[Request, Session], bool | None]
_CLOCK_NEWS = RequestClock.NEWS
_PASS_TYPES = frozenset({HOST_EVENT, ROUTE_EVENT, CHUNK, "assistant/message", TITLE_CALL, COMPACTION_START,
                         COMPACTION_SUMMARY})  # the types ``RequestPass._note`` reads  # fmt: skip
Observer = Callable[[Session, dict[str, Any]], None]


class PassProjection(Session):
    """The projection a request pass alone reads (the alert engine's, beside a view with a projection of its own):
    a ``Session`` that keeps nothing per event (``per_event=False``), files no tool call, so pairs no result
    (``tool_calls`` and ``results_by_step`` stay empty), and takes no context sample per request: building a
    request reads none of them, and on a 500 MB ``dsh-plain`` log they were 25,612 calls and 19,343 samples."""

    def __init__(self, header: dict[str, Any], events: Any, *, retain: bool = True) -> None:
        super().__init__(header, events, retain=retain, per_event=False)

    def _register_call(self, call_id: str, name: str, arguments: Any, turn: int, step: Any) -> ToolCall:
        return ToolCall(call_id, name, "", turn, step if isinstance(step, int) else 0)  # filed nowhere

    def _on_result_pairing(self, seq: int, event: dict[str, Any], data: dict[str, Any]) -> None:
        """No call is filed: nothing to pair."""

    def _request_out(self, seq: int) -> None:
        """The request went out: no sample of it is kept."""
        self._request_due = False


class RequestPass:
    """Finds and builds every model request while a log is projected: call ``before`` and ``after`` around
    each item the session applies (an event dict or a ``PackedRow``), and ``finish`` at the end.

    Each request goes to ``emit(request, session)`` once its attempt is over (the next request goes out, or the
    log ends), with the usage logged for it, right before the session applies the event that ended it; ``emit``
    returning True raises ``PassEnded`` (``stream_requests`` ends its pass so). With ``want``, only the agent
    requests whose ``Point`` it accepts are built and emitted; with ``others`` DSH's title and compaction calls
    are built too, each emitted in seq order among them. Only the requests in flight and each step's route are
    held. With ``keep`` the session's store (a ``LineStore`` or ``KeptEvents``) keeps the
    surface's events in memory while they are on the surface (and no longer), since every request reads all
    of them. With ``lean`` (a store that reads any seq back) DSH requests are built without their messages
    (``Digest``): the pass notes each surface node's size as it is applied and keeps no DSH event; with ``wired``
    too, it keeps the last node's wire messages and their JSON (``wired``) for its caller, who then need not make
    them again.
    ``observe(session, event)`` is told of the events of ``observe_types`` once the pass has taken them in (of
    the chunks, only the usage samples and finishes): another fold riding on the pass.

    The pass need not be told of stream deltas (packed rows, and chunk events that are no usage sample or
    finish), which change nothing it reads: where it was told of none since a request was due, the request went
    out right before the first seq it was not told of. Nor need ``before`` be told of ``NEUTRAL`` events, nor of
    an event ``quiet`` answers for.
    """

    # Events that change nothing a request is built from: the pass may be told of them only once applied.
    NEUTRAL = frozenset({"step/start", "step/end", "tool/call"})

    def __init__(
        self,
        emit: Emit,
        keep: bool = False,
        want: Callable[[Point], bool] | None = None,
        others: bool = True,
        lean: bool = False,
        observe: Observer | None = None,
        observe_types: Container[str] = (),
        wired: bool = False,
    ) -> None:
        self.emit = emit
        self.keep = keep
        self.lean = lean
        self.keep_wired = wired
        self.want = want
        self.others = others
        self.observe = observe
        self.observe_types = observe_types
        self.side: list[Request] = []  # DSH's other calls that went out while ``open`` was in flight
        self.compactions: dict[str, Point] = {}  # by compaction id: when its summary call went out
        self.cache = WireCache()
        self.clock = RequestClock()
        self.host = False
        self.routes: dict[tuple[Any, Any], dict[str, Any]] = {}
        self.open: Request | None = None
        self.seen = -1  # the last seq the pass was told of
        # a lean DSH pass's: the last surface node it noted, and its wire messages with their JSON (if any)
        self.wired: tuple[int, Wired | None] | None = None

    def before(self, session: Session, item: dict[str, Any] | PackedRow) -> None:
        """Called right before ``session`` applies ``item``."""
        seq, unseen = session.next_seq, self.seen + 1
        self.seen = seq + item.count - 1 if item.__class__ is PackedRow else seq  # type: ignore[union-attr]
        if self.clock.armed is None:  # no request about to go out
            return
        if unseen < seq:  # after stream deltas the pass was not told of: the request went out before the first
            self._went_out(session, self.clock.before(unseen, CHUNK))
        else:
            etype = CHUNK if type(item) is PackedRow else str(item.get("type"))  # type: ignore[union-attr]
            self._went_out(session, self.clock.before(seq, etype))

    def quiet(self, etype: str, seq: int) -> bool:
        """Whether ``before`` may be left untold of the event of type ``etype`` about to be applied at ``seq``
        (``after`` is told of it): no request is about to go out, or this event is no output and the pass was
        told of the one before it, so no request goes out before it."""
        return self.clock.armed is None or (self.seen == seq - 1 and etype not in OUTPUT_TYPES)

    def _went_out(self, session: Session, point: Point | None) -> None:
        """The request at ``point`` (if any) went out: the one before it is over, and it is built."""
        if point is None:
            return
        done, self.open = self.open, None
        if done is not None:  # before the next is built: one is held at a time
            self._emit(done, session)
        del done
        self._flush(session, point.seq)
        if self.want is None:
            route = self.routes.get((point.turn, point.step))
            self.open = build_request(session, point, self.host, route, self.cache, self.lean)
        elif self.want(point):  # one of a few, lean: its surface read back (only the nodes a retry adds, again)
            route = self.routes.get((point.turn, point.step))
            self.open = build_request(session, point, self.host, route, self.cache, lean=True)
        if self.open is not None:
            self.open.unfinished = point.unfinished

    def after(self, session: Session, item: dict[str, Any] | PackedRow) -> None:
        """Called right after ``session`` applied ``item``."""
        end = session.next_seq - 1
        if self.seen != end:  # a ``NEUTRAL`` event, told of only now
            if self.seen < end - 1 and self.clock.armed is not None:  # after deltas the pass was not told of
                self._went_out(session, self.clock.before(self.seen + 1, CHUNK))
            self.seen = end
        if item.__class__ is PackedRow:  # chunk deltas: no step bookkeeping, usage or surface node among them
            return
        event: dict[str, Any] = item  # type: ignore[assignment]
        etype = event.get("type")
        data = event.get("data")
        if data.__class__ is not dict:
            data = {}
        if etype == CHUNK:  # a delta (nearly every chunk) neither ends an attempt nor carries usage
            chunk = data.get("chunk")
            if chunk.__class__ is not dict or (kind := chunk.get("type")).__class__ is not str or kind not in _CHUNK_NEWS:
                return
        elif etype.__class__ is not str:
            etype = str(etype)
        if etype in _CLOCK_NEWS:
            self.clock.after(etype, data)
        if etype in _PASS_TYPES:
            self._note(session, etype, data)
        if self.observe is not None and etype in self.observe_types:
            self.observe(session, event)
        if etype not in SURFACE_TYPES:
            return
        if self.lean and not self.host:  # a DSH node's digest, noted while its event is at hand
            seq, noted = end, self.cache.noted
            if session.on_surface(seq):
                if self.keep_wired:  # the caller takes its wire messages too
                    noted[seq], wired = wired_digest(event)
                    self.wired = (seq, wired)
                else:
                    noted[seq] = node_digest(event)
            for gone in session.shadowed.get(seq, ()):
                noted.pop(gone, None)
        elif self.keep and isinstance(store := session.events, KeepingEvents):
            seq = session.next_seq - 1
            if session.on_surface(seq):
                store.keep(seq, surface_view(event))
            for gone in session.shadowed.get(seq, ()):
                store.forget(gone)

    def _note(self, session: Session, etype: str, data: dict[str, Any]) -> None:
        """What an event of ``_PASS_TYPES`` tells the pass: our host, a step's route, the open request's usage, or
        one of DSH's other calls."""
        if etype == CHUNK or etype == "assistant/message":  # the open request's usage, when it is the step's
            request = self.open
            if request is None or (request.turn, request.step) != (data.get("turn"), data.get("step")):
                return
            if etype == CHUNK:
                chunk = data.get("chunk")
                if isinstance(chunk, dict) and chunk.get("type") == "usage" and isinstance(chunk.get("usage"), dict):
                    request.usage = chunk["usage"]
            elif request.usage is None:
                usage = data.get("usage")
                request.usage = usage if isinstance(usage, dict) else None
        elif etype == HOST_EVENT:
            self.host = True
        elif etype == ROUTE_EVENT:
            self.routes[(data.get("turn"), data.get("step"))] = data
        elif self.others and not self.host and etype in (TITLE_CALL, COMPACTION_START, COMPACTION_SUMMARY):
            self._other_call(session, etype, data)

    def finish(self, session: Session) -> None:
        """The log ended: the requests in flight are over, and one due to go out (a step started, a retry armed,
        and nothing after) is the one in flight when the log was read, built as it went out and marked
        ``unfinished``."""
        if self.clock.armed is not None and self.seen < session.next_seq - 1:  # it ended on untold deltas
            self._went_out(session, self.clock.before(self.seen + 1, CHUNK))
        point = self.clock.in_flight(session.next_seq)
        if point is not None:
            self.clock.armed = None
            self._went_out(session, point)
        done, self.open = self.open, None
        if done is not None:
            self._emit(done, session)
        self._flush(session)

    def _emit(self, request: Request, session: Session) -> None:
        if self.emit(request, session):
            raise PassEnded(session)

    def _flush(self, session: Session, before: int | None = None) -> None:
        """Emit the other calls held back (those that went out before seq ``before``, when given)."""
        if not self.side:  # nearly always: one is held only while an agent request is in flight
            return
        side = [r for r in self.side if before is None or r.seq < before]
        self.side = [r for r in self.side if before is not None and r.seq >= before]
        for request in side:
            self._emit(request, session)

    def _other_call(self, session: Session, etype: str, data: dict[str, Any]) -> None:
        """A DSH title or compaction event was just applied: note or build its call."""
        seq = session.next_seq - 1
        turn = session.turn_of(seq)
        step = self.clock.step[1] if self.clock.step is not None and self.clock.step[0] == turn else 0
        here = Point(turn, step, 1, seq)
        if etype == COMPACTION_START:
            self.compactions[str(data.get("compactionId"))] = here
            return
        if etype == TITLE_CALL:
            request = title_request(data, here)
        elif data.get("llmStreamCall") is True:  # a summary a model call wrote (else no call went out)
            request = compaction_request(session, data, self.compactions.pop(str(data.get("compactionId")), here))
        else:
            return
        # A call made while an agent request is in flight, or about to go out (DSH starts the title call when
        # the step's request goes out, and may log it before that request's first output), is listed after it.
        if self.clock.armed is not None or (self.open is not None and self.open.seq <= request.seq):
            self.side.append(request)
        else:
            self._emit(request, session)


def iter_requests(
    header: dict[str, Any], events: Iterable[dict[str, Any]], session: Session | None = None, others: bool = True
) -> Iterator[Request]:
    """Every model request of a log in order, retries included, each with the usage logged for it (without DSH's
    title and compaction calls when ``others`` is False).

    A request is yielded once its attempt is over (the next request went out, or the log ended). Pass an
    empty ``session`` to look at the projection as the pass goes (it is past each request when it is yielded).
    """
    session = Session(header) if session is None else session
    done: list[Request] = []
    requests = RequestPass(lambda request, _: done.append(request), others=others)
    for event in events:
        requests.before(session, event)
        yield from done
        done.clear()
        session.apply(event)
        requests.after(session, event)
    requests.finish(session)
    yield from done


def stream_requests(
    path: str | os.PathLike[str],
    emit: Emit,
    want: Callable[[Point], bool] | None = None,
    others: bool = True,
    observe: Observer | None = None,
    observe_types: Container[str] = (),
) -> Session:
    """Every model request of the log at ``path`` (or the agent requests ``want`` accepts, the only ones built,
    and DSH's other calls unless ``others`` is False), in one streaming pass that keeps no DSH event (lean
    requests: ``Request.materialize`` reads a request's messages back; a host log's surface events are kept).
    With ``want`` nothing is kept nor noted: each request it accepts is built from its surface, read back (its
    attempts share the messages they carry).

    ``emit(request, session)`` gets each request as ``RequestPass`` says; returning True ends the pass there.
    ``observe(session, event)`` sees the events of ``observe_types`` as ``RequestPass`` says (the same pass folding
    something else). Returns the projection: of the whole log, or as it stood when ``emit`` ended the pass.
    """
    chosen = want is not None  # a few requests, each built from the surface read back: nothing to carry
    requests = RequestPass(emit, keep=not chosen, want=want, others=others, lean=not chosen, observe=observe,
                           observe_types=observe_types)  # fmt: skip
    try:
        session = load_session(path, retain=False, readback=True, before=requests.before, observe=requests.after,
                               before_optional=RequestPass.NEUTRAL, skip_before=requests.quiet,
                               skip_deltas=True)  # fmt: skip
        requests.finish(session)
    except PassEnded as ended:
        return ended.session
    return session


MARK_TYPES = ("request/header", HOST_EVENT, ROUTE_EVENT)


def request_marks(session: Session, start: int = 0) -> dict[str, list[int]]:
    """The seqs from ``start`` on of the events ``request_at`` looks up, by type (extend them as a log grows)."""
    return {etype: list(session.seqs_of((etype,), start)) for etype in MARK_TYPES}


def request_at(
    session: Session, timeline: SurfaceTimeline, point: Point, marks: dict[str, list[int]] | None = None
) -> Request:
    """The request at ``point`` of a fully projected session, rebuilt from the moment it went out.

    With ``marks`` (``request_marks`` of the session) it costs one surface lookup plus the request's own
    messages, whatever the log's size; without, three scans of the session's types.
    """
    from core.read.timetravel import SessionAt  # the TUI's path: a streaming pass never needs it

    marks = request_marks(session) if marks is None else marks
    view = SessionAt(session, timeline, point.seq, marks["request/header"])
    host = bool(marks[HOST_EVENT]) and marks[HOST_EVENT][0] <= point.seq
    route = None
    routes = marks[ROUTE_EVENT]
    for i in range(bisect.bisect_right(routes, point.seq) - 1, -1, -1):  # back from the request, never a copy
        data = _data(session.events[routes[i]])
        if data.get("turn") == point.turn and data.get("step") == point.step:
            route = data
            break
        if data.get("turn") != point.turn:
            break
    request = build_request(view, point, host, route)
    request.unfinished = point.unfinished
    return request
