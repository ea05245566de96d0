"""``stream_requests``: the requests of a log file from one streaming pass equal the in-memory pass's, while the
pass holds only the surface's events."""

from __future__ import annotations

import gc
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.gen_session import generate
from core.log.linestore import LineStore
from core.log.reader import read_log
from core.log.vocabulary import SURFACE_TYPES
from core.read.load import load_session
from core.read.session import Session
from core.rebuild.request import Point, Request, RequestPass, WireCache, iter_requests, stream_requests
from core.rebuild.request_diff import diff_base, diff_requests, prompt_bytes, prompt_parts
from tests.timetravel.conftest import FIXTURE_LOGS


def _streamed(path: Path) -> list[tuple[Request, int, int]]:
    """Each request (its messages read back) with how many events the pass kept and how many nodes the surface
    had when it came."""
    out = []

    def take(request: Request, session: Session) -> None:
        assert isinstance(session.events, LineStore)
        request.materialize()
        out.append((request, session.events.kept, len(session.surface)))

    stream_requests(path, take)
    return out


def _check(path: Path) -> None:
    data = read_log(path)
    streamed = _streamed(path)
    assert [r for r, _, _ in streamed] == list(iter_requests(data.header, data.events))
    host = any(e["type"] == "tapedeck/host" for e in data.events)
    # a DSH log's requests hold digests, not events; our host's keep the surface's events while they are on it
    assert all(kept == (nodes if host else 0) for _, kept, nodes in streamed)
    assert all((r.digest is None) == host for r, _, _ in streamed if r.kind == "agent")


def test_fixtures_generated_logs_and_a_host_session(generated_logs: list[Path], demo_log: Path) -> None:
    for path in [*FIXTURE_LOGS, *generated_logs, demo_log]:
        _check(path)


def test_emit_returning_true_ends_the_pass_there(generated_logs: list[Path]) -> None:
    path = generated_logs[0]
    seen: list[Request] = []
    session = stream_requests(path, lambda request, _: seen.append(request) or len(seen) == 3)
    assert len(seen) == 3
    assert seen[2].seq < session.next_seq < read_log(path).events[-1]["seq"]


def test_want_builds_only_the_requests_it_accepts(generated_logs: list[Path]) -> None:
    path = generated_logs[0]
    every = [r for r, _, _ in _streamed(path)]
    step = (every[len(every) // 2].turn, every[len(every) // 2].step)
    asked: list[tuple[int, int]] = []

    def want(point: Point) -> bool:
        asked.append((point.turn, point.step))
        return (point.turn, point.step) == step

    built: list[Request] = []
    stream_requests(path, lambda request, _: request.materialize() or built.append(request), want)
    assert len(asked) == len(every) and built == [r for r in every if (r.turn, r.step) == step]


@pytest.mark.parametrize("which", [0, 1], ids=["short-turns", "mixed-zstd"])
def test_a_pass_reads_and_converts_each_surface_message_about_once(generated_logs: list[Path], which: int) -> None:
    path = generated_logs[which]
    carried: list[int] = []
    requests = RequestPass(lambda request, _: carried.append(len(request.messages)), keep=True)
    session = load_session(path, retain=False, readback=True, before=requests.before, observe=requests.after)
    requests.finish(session)
    messages = sum(1 for e in read_log(path).events if e["type"] in SURFACE_TYPES)
    cache = requests.cache
    assert len(session.surface) <= cache.converted <= 2 * messages < sum(carried) // 3  # not per request
    assert len(session.surface) <= cache.derived <= 2 * messages


def _scratch(request: Request) -> Request:
    """A copy of ``request`` with its messages, rendered without the pass's ``WireCache`` or a ``Digest``."""
    if request.digest is None:
        return replace(request, cache=None, prompt=None)
    plain = replace(request, digest=replace(request.digest), body=dict(request.body))
    plain.materialize()
    plain.digest = None
    return plain


def _against_scratch(path: Path) -> int:
    """Check each request's prompt and cache break against the same rendered without the pass's ``WireCache``
    (a DSH log's: against the lean diff of its digests, before any message is read back); return how many
    prompts the pass did not render from the start (cut back in place, or a digest)."""
    last: list[Request] = []
    reused = 0

    def take(request: Request, session: Session) -> None:
        nonlocal reused
        plain = _scratch(request)
        if request.digest is not None:
            if last:
                ours, theirs = diff_requests(last[0], request, session), diff_requests(last[1], plain, session)
                assert ours.to_dict() == theirs.to_dict()
            assert request.digest.size == len(prompt_bytes(plain)) and not request.digest.done
            reused += 1
            last[:] = [diff_base(request), diff_base(plain)]
            return
        assert prompt_bytes(request) == prompt_bytes(plain) == b"".join(prompt_parts(request))
        assert request.cache is not None
        if last:
            ours, theirs = diff_requests(last[0], request, session), diff_requests(last[1], plain, session)
            assert (ours.prefix_bytes, ours.total_bytes, ours.broke, ours.cause, ours.cause_seq) == (
                theirs.prefix_bytes, theirs.total_bytes, theirs.broke, theirs.cause, theirs.cause_seq,
            )  # fmt: skip
            reused += request.cache.cut_from(last[0], request) is not None
        last[:] = [diff_base(request), diff_base(plain)]

    stream_requests(path, take, others=False)  # DSH's other calls are built apart, without the cache
    return reused


def test_prompts_and_cache_breaks_of_a_pass_are_those_rendered_from_scratch(
    generated_logs: list[Path], demo_log: Path
) -> None:
    for path in [demo_log, *FIXTURE_LOGS]:
        _against_scratch(path)
    assert all(_against_scratch(path) > 20 for path in generated_logs)


def test_a_pass_over_a_never_cut_surface_extends_one_digest_and_reads_nothing_back(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    generate(path, 1_500_000, seed=3, profile="dsh-plain")  # no compaction, no prune: each prompt extends the last
    held: list[Request] = []
    sizes: list[int] = []

    def take(request: Request, session: Session) -> None:
        diff = diff_requests(held[-1] if held else None, request, session)
        assert request.digest is not None and not (held and diff.broke)
        held.append(request)  # held, so that no two key lists can share an id
        sizes.append(diff.total_bytes)

    session = stream_requests(path, take, others=False)
    assert len(sizes) > 20 and sizes == sorted(sizes)
    # no request copies the nodes before it: one list of keys (and of prompt offsets), grown in place
    assert len({id(r.digest.keys) for r in held if r.digest}) == 1
    assert isinstance(session.events, LineStore) and session.events.decodes == 0 and session.events.kept == 0
    last = held[-1]
    assert last.digest is not None and last.digest.size == sizes[-1] == len(prompt_bytes(_scratch(last)))


def test_a_lean_pass_reads_the_surface_once_where_nothing_was_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each request takes only the nodes new to the surface: never a copy or comparison of the whole of it."""
    path = tmp_path / "plain.jsonl"
    generate(path, 1_500_000, seed=3, profile="dsh-plain")

    class Counted(list):  # type: ignore[type-arg]
        read = 0  # items of the surface read through slices

        def __getitem__(self, k: Any) -> Any:
            got = super().__getitem__(k)
            Counted.read += len(got) if isinstance(k, slice) else 0
            return got

    class CountedSession(Session):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.surface = Counted()

    monkeypatch.setattr("core.read.load.Session", CountedSession)
    requests = 0

    def take(request: Request, session: Session) -> None:
        nonlocal requests
        requests += 1

    session = stream_requests(path, take)
    assert requests > 20 and isinstance(session.surface, Counted)
    assert 0 < Counted.read <= len(session.surface)


def _size(value: Any) -> int:
    """The bytes ``value`` takes with what its lists, tuples and dicts hold (each ``sys.getsizeof``)."""
    if isinstance(value, list | tuple):
        return sys.getsizeof(value) + sum(map(_size, value))
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(_size(k) + _size(v) for k, v in value.items())
    return sys.getsizeof(value)


def test_a_lean_pass_holds_little_per_surface_node(tmp_path: Path) -> None:
    """A log that never compacts has tens of thousands of surface nodes, every one of them in every later
    request's ``Digest``: the pass keeps each node's numbers in arrays, not in a list of tuples of ints (about
    280 bytes a node before: 16 MB of the peak RSS of cost on a 500 MB log, near its 200 MB budget).

    What the pass's ``WireCache`` holds per node is measured object by object (traced allocations by file
    would count the session's dicts wherever the allocator's free lists handed out blocks the pass freed)."""
    path = tmp_path / "session.jsonl"
    generate(path, 20_000_000, seed=4, profile="dsh-plain")
    # Caches of earlier passes may still be alive (in a cycle not yet collected, or held by a test's objects):
    # they are kept here, so that the one this pass made is the only new one.
    earlier = [o for o in gc.get_objects() if isinstance(o, WireCache)]
    session = stream_requests(path, lambda request, _: None)
    (cache,) = [o for o in gc.get_objects() if isinstance(o, WireCache) and not any(o is e for e in earlier)]
    held = sum(map(_size, (cache.noted, cache.keys, cache.ends, cache.sums, cache.lean_nodes, cache.lean_counts)))
    nodes = len(session.surface)
    assert nodes > 1_000
    assert held / nodes <= 160


_HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 1_800_000_000_000, "cwd": "/w", "delegationDepth": 0}
_TOOLS = {"header": {"system": "s", "tools": [{"name": "read"}], "config": {"model": "deepseek-chat"}}}


@st.composite
def _stream_logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Steps whose outputs start with stream deltas (chunk events and packed rows), each followed by anything:
    a usage sample, a finish (a failed one too), a retry, a tool call or result, a user or assistant message, a
    step or turn end, another step, or the end of the log. Results and messages have DSH's shape or not (the
    decoder's fused paths take the former, the general path the latter)."""
    out: list[dict[str, Any]] = [{"type": "request/header", "data": _TOOLS}]
    turn = 0
    for _ in range(draw(st.integers(1, 6))):
        if turn == 0 or draw(st.booleans()):
            turn += 1
            out.append({"type": "turn/start", "data": {"turn": turn}})
        at = {"turn": turn, "step": draw(st.integers(1, 2))}
        if draw(st.integers(0, 4)):
            out.append({"type": "step/start", "data": at})
        for piece in draw(st.lists(st.sampled_from(["delta", "row"]), max_size=3)):
            if piece == "delta":
                out.append({"type": "assistant/chunk", "data": {**at, "chunk": {"type": "text-delta", "text": "x"}}})
            else:
                out.append({"type": "text-chunks", "data": {**at, "index": 0, "dt": [1], "texts": ["a", "b"]}})
        for kind in draw(st.lists(st.sampled_from(["usage", "finish", "error", "retry", "call", "result", "user",
                                                   "assistant", "step-end", "turn-end"]), max_size=3)):  # fmt: skip
            dsh = {"surfaceOp": "append"} if draw(st.booleans()) else {}
            if kind in ("usage", "finish", "error"):
                chunk = {"type": "usage", "usage": {"inputTokens": 10, "cacheReadTokens": 5, "outputTokens": 2}}
                if kind != "usage":
                    chunk = {"type": "finish", "reason": {"kind": "error" if kind == "error" else "stop"}}
                out.append({"type": "assistant/chunk", "data": {**at, "chunk": chunk}})
            elif kind == "retry":
                out.append({"type": "llm/retry", "data": at})
            elif kind == "call":
                out.append({"type": "tool/call", "data": {**at, "callId": "c", "name": "read", "arguments": "{}"}})
            elif kind == "result":
                message = {"role": "user", "content": [{"type": "tool-result", "toolCallId": "c",
                                                        "content": [{"type": "text", "text": "r"}]}]}  # fmt: skip
                if dsh:
                    message["source"] = {"kind": "tool", "callId": "c"}
                out.append({"type": "tool/result", "data": {**at, "callId": "c", "message": message}, **dsh})
            elif kind == "user":
                message = {"role": "user", "content": [{"type": "text", "text": "u"}]}
                if dsh:
                    message |= {"id": "u", "source": {"kind": "user"}}
                out.append({"type": "user/message", "data": message, **dsh})
            elif kind == "assistant":
                message = {"role": "assistant", "content": [{"type": "text", "text": "a"}]}
                out.append({"type": "assistant/message", "data": {**at, "message": message}, **dsh})
            elif kind == "step-end":
                out.append({"type": "step/end", "data": at})
            else:
                out.append({"type": "turn/end", "data": {"turn": turn, "reason": {"kind": "completed"}}})
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_stream_logs())
def test_a_pass_told_of_no_stream_delta_finds_the_requests_a_pass_told_of_every_event_finds(
    tmp_path: Path, events: list[dict[str, Any]]
) -> None:
    """``stream_requests`` is told of no stream delta (the decoder projects them a run at a time): a request
    whose first output is a delta goes out right before the first seq the pass was not told of, whatever comes
    after the deltas (an event ``before`` is not told of, another output, or the end of the log)."""
    path = tmp_path / "session.jsonl"
    seq, lines = 0, [orjson.dumps(_HEADER)]
    for event in events:
        if event["type"] == "text-chunks":
            lines.append(orjson.dumps({**event, "seq0": seq, "time0": 1_800_000_000_000 + seq}))
            seq += 2
        else:
            lines.append(orjson.dumps({**event, "seq": seq, "time": 1_800_000_000_000 + seq}))
            seq += 1
    path.write_bytes(b"\n".join(lines) + b"\n")
    told: list[Any] = []
    streamed: list[Request] = []

    def take(request: Request, _: Session) -> None:
        request.materialize()
        streamed.append(request)

    passes = RequestPass.__init__

    def counting(self: RequestPass, *args: Any, **kwargs: Any) -> None:
        passes(self, *args, **kwargs)
        before, after = self.before, self.after
        self.before = lambda s, item: told.append(item) or before(s, item)  # type: ignore[method-assign]
        self.after = lambda s, item: told.append(item) or after(s, item)  # type: ignore[method-assign]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RequestPass, "__init__", counting)
        session = stream_requests(path, take)
    data = read_log(path)
    assert streamed == list(iter_requests(data.header, data.events))
    plain = load_session(path, retain=False)  # the deltas projected a run at a time project as they always did
    assert (session.next_seq, session.surface, session.counts, session.diagnostics, session.context_samples) == (
        plain.next_seq, plain.surface, plain.counts, plain.diagnostics, plain.context_samples)  # fmt: skip
    deltas = [i for i in told if type(i) is not dict or (i["type"] == "assistant/chunk" and i["data"]["chunk"]["type"] == "text-delta")]
    assert deltas == []
