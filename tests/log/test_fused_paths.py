"""A streaming load's fused paths project exactly what the general path does.

``load_session`` hands an event line of the types most lines of a log are (``Session.typed_sinks``: tool results,
assistant and user messages, tool calls, step and turn starts and ends, inbox splices) straight from the decoder's
hot loop to a sink that validates and projects it in one step; the sink declines anything but the shape it knows, which then takes the
general ``LogDecoder._event`` → ``Session.apply`` path. Fed such events mutated in every way a sink must notice
(seqs missing, odd or out of order, times missing or odd, extra envelope keys, odd counters, messages, roles,
content blocks, sources, surface ops and provenance, legacy shapes, unknown steps and calls …), numbered or not
as DSH writes them, a streaming load (with and without observers before and after, of every type or some;
retaining events, reading them back from the file, or neither; gathering facts for the index or not) must end
in the projection state, diagnostics and facts of a one-shot read projected event by event, and its observers
and events must give the very events that read gives.
"""

from __future__ import annotations

from itertools import count
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.log.decoder import Consumer
from core.log.layout import is_compressed
from core.log.reader import read_log
from core.log.records import PackedRow
from core.log.validate import readable
from core.read.facts import FACT_TYPES, SessionFacts
from core.read.index import restore
from core.read.load import load_session
from core.read.session import Session
from core.read.session_state import encode
from tests.log.helpers import HEADER, fresh
from tests.log.test_chunk_fast_path import _seq, _time  # the same envelope mutations

odd = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from([2**31, 2**31 - 1, 1.0, "1", "c1"]), fresh([1]),
    fresh({"a": 1}),
)  # fmt: skip
counter = st.one_of(st.just(1), st.just(1), st.just(2), odd)
call_id = st.one_of(st.sampled_from(["c1", "c2"]), odd)
text_block = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "reasoning"])}, optional={"text": st.one_of(st.text(max_size=3), odd)}
)
call_block = st.fixed_dictionaries(
    {"type": st.just("tool-call"), "id": call_id, "name": st.sampled_from(["bash", "read"])},
    optional={"arguments": st.one_of(st.just("{}"), odd)},
)
result_block = st.fixed_dictionaries(
    {"type": st.just("tool-result"), "toolCallId": call_id,
     "content": st.one_of(st.lists(st.one_of(text_block, odd), max_size=2), odd)},
    optional={"isError": st.one_of(st.booleans(), odd)},
)  # fmt: skip
turn_end_reason = st.one_of(
    fresh({"kind": "completed"}), fresh({"kind": "aborted", "reason": {"kind": "user"}}), fresh({"kind": "aborted"}),
    fresh({"kind": "aborted", "reason": None}), fresh({"kind": "error", "error": {"message": "m", "code": "E"}}),
    fresh({"kind": "error", "failure": {"message": "m"}}), fresh({"kind": "disposed"}), st.just("completed"),
    fresh({"kind": 3}), fresh({"kind": "aborted", "reason": "x"}), fresh({"kind": "error", "error": [1]}), odd,
)  # the shapes DSH writes, the legacy ones to upgrade and some odd ones
block = st.one_of(text_block, text_block, call_block, result_block, fresh({"type": "image"}), odd)
content = st.one_of(st.lists(block, max_size=3), odd)
source = st.one_of(
    st.fixed_dictionaries({"kind": st.sampled_from(["user", "tool", "model"])}, optional={"callId": call_id}), odd
)


def _message(draw: st.DrawFn, role: str, blocks: Any, call: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"id": "m", "role": role, "content": blocks}
    message["source"] = {"kind": "tool", "callId": call} if call is not None else {"kind": "model"}
    for key, values in (("role", odd), ("content", content), ("source", source), ("id", odd)):
        if draw(st.integers(0, 6)) == 0:
            if draw(st.booleans()):
                message.pop(key)
            else:
                message[key] = draw(values)
    return message


@st.composite
def event_of(draw: st.DrawFn, kind: str, seq: int) -> dict[str, Any]:
    """A ``kind`` event at ``seq`` in turn 1 step 1 (or thereabouts), well-formed unless a mutation is drawn."""
    turn, step = draw(counter), draw(counter)
    if kind in ("step/start", "step/end", "turn/start", "turn/end"):
        data: dict[str, Any] = {"turn": turn} if kind.startswith("turn") else {"turn": turn, "step": step}
        if kind == "turn/end" and draw(st.integers(0, 4)):
            data["reason"] = draw(turn_end_reason)
        elif kind == "turn/start" and draw(st.integers(0, 4)) == 0:  # the legacy shape
            data["trigger"] = draw(st.one_of(st.just("user"), odd))
        if kind.startswith("turn") and draw(st.integers(0, 4)) == 0:
            data["step"] = step
    elif kind == "agent/inbox/spliced":
        inserted = draw(st.one_of(st.lists(fresh({"id": "u"}), max_size=1), odd))
        data = {"target": "next-turn", "start": 0, "inserted": inserted}
        if draw(st.integers(0, 3)) == 0:
            data[draw(st.sampled_from(["turn", "step"]))] = draw(counter)
    elif kind == "tool/call":
        data = {"turn": turn, "step": step, "callId": draw(call_id), "name": draw(st.one_of(st.just("bash"), odd)),
                "arguments": draw(st.one_of(st.just("{}"), odd))}  # fmt: skip
    elif kind == "assistant/message":
        blocks = draw(st.lists(st.one_of(text_block, call_block), max_size=3))
        data = {"turn": turn, "step": step, "message": _message(draw, "assistant", blocks)}
        if draw(st.booleans()):
            data["usage"] = draw(st.one_of(fresh({"inputTokens": 5, "outputTokens": 2}), odd))
    elif kind == "tool/result":
        cid = draw(call_id)
        blocks = [{"type": "tool-result", "toolCallId": cid, "content": [{"type": "text", "text": "ok"}]}]
        if draw(st.booleans()):
            blocks = draw(st.lists(st.one_of(result_block, text_block), max_size=2))
        data = {"turn": turn, "step": step, "message": _message(draw, "user", blocks, cid)}
        if draw(st.integers(0, 5)) == 0:  # the legacy shape, or a not-started tool
            data = draw(st.sampled_from([{"turn": turn, "step": step, "callId": cid, "content": []},
                                         {**data, "error": {"code": "TOOL_NOT_STARTED"}}]))  # fmt: skip
    else:  # user/message: the message is the data
        data = _message(draw, "user", draw(st.lists(text_block, max_size=2)))
        if draw(st.integers(0, 4)) == 0:
            data[draw(st.sampled_from(["turn", "step"]))] = draw(counter)
    event: dict[str, Any] = {"type": kind, "seq": seq, "time": 5, "data": data}
    if kind in ("assistant/message", "tool/result", "user/message"):
        event["surfaceOp"] = "append"
        if draw(st.booleans()):
            event["sourceEventSeqs"] = [max(0, seq - 1)] if seq else []
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), max_size=2)):
        mutation(event, draw)
    return event


def _envelope(event: dict[str, Any], draw: st.DrawFn) -> None:
    key = draw(st.sampled_from(["surfaceOp", "sourceEventSeqs", "ignorable", "invalid", "extra"]))
    event[key] = draw(st.one_of(odd, st.just("append"), fresh([0]), fresh([9]), fresh({"op": "replace"})))


def _drop(event: dict[str, Any], draw: st.DrawFn) -> None:
    event.pop(draw(st.sampled_from(["time", "data", "type", "surfaceOp"])), None)


def _data(event: dict[str, Any], draw: st.DrawFn) -> None:
    if draw(st.booleans()) or not isinstance(event.get("data"), dict):
        event["data"] = draw(odd)
    elif event["data"]:
        key = draw(st.sampled_from(sorted(event["data"])))
        event["data"][key] = draw(st.one_of(odd, counter, st.just(2**31)))


MUTATIONS = [_seq, _envelope, _drop, _time, _data, _data]
KINDS = ["step/start", "tool/call", "assistant/message", "tool/result", "user/message", "step/end", "agent/inbox/spliced"]


@st.composite
def log_lines(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Turn 1 opened (sometimes not), then events of the fused types among others, numbered or not as DSH
    writes them (no seq and no time)."""
    lines: list[dict[str, Any]] = []
    if draw(st.booleans()):
        lines.append({"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}})
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(KINDS * 3 + ["turn/end", "turn/end", "turn/start", "chunk"]))
        if kind == "chunk":
            lines.append({"type": "assistant/chunk", "seq": len(lines), "time": 5,
                          "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": "ab"}}})  # fmt: skip
        else:
            lines.append(draw(event_of(kind, len(lines))))
    if draw(st.integers(0, 2)) == 0:  # as DSH writes: unnumbered, untimed
        for line in lines:
            line.pop("seq", None)
            line.pop("time", None)
    return lines


def _one_shot(path: Path) -> tuple[Session, list[Any], SessionFacts]:
    data = read_log(path)
    session = Session(data.header, path=data.path)
    session.diagnostics.extend(data.diagnostics)
    facts = SessionFacts.empty()
    for event in data.events:
        session.apply(event)
        if event["type"] in FACT_TYPES:
            facts.observe(event)
    return session, data.events, facts


def _state(session: Session) -> Any:
    tree, columns = encode(session)  # the whole projection, as the persistent index keeps it
    return orjson.dumps(tree, option=orjson.OPT_NON_STR_KEYS), columns, list(session.counts.items())


def _base(seq: int, **data: Any) -> dict[str, Any]:
    return {"type": "step/start", "seq": seq, "time": 1, "data": {"turn": 1, "step": 1, **data}}


CALL = {"type": "tool/call", "seq": 2, "time": 1, "data": {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}}
RESULT = {"type": "tool/result", "seq": 3, "time": 1, "surfaceOp": "append", "sourceEventSeqs": [2],
          "data": {"turn": 1, "step": 1, "message": {"id": "r", "role": "user", "source": {"kind": "tool", "callId": "c1"},
                   "content": [{"type": "text", "text": "x"}, {"type": "tool-result", "toolCallId": "c1", "isError": True,
                                "content": [{"type": "text", "text": "boom"}]}]}}}  # fmt: skip
TURN = {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}
ANSWER = {"type": "assistant/message", "seq": 2, "time": 1, "surfaceOp": "append",
          "data": {"turn": 1, "step": 1, "usage": {"inputTokens": 5, "outputTokens": 2},
                   "message": {"id": "a", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}}}  # fmt: skip
SPLICE = {"type": "agent/inbox/spliced", "seq": 1, "time": 1, "data": {"target": "next-turn", "start": 0, "inserted": []}}


def _end(seq: int, reason: Any, turn: int = 1) -> dict[str, Any]:
    return {"type": "turn/end", "seq": seq, "time": 1, "data": {"turn": turn, "reason": reason}}


NAMES = count()


@pytest.fixture(autouse=True)
def _indexed(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")  # every log gets an index, and with it its facts


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=log_lines(),
    observed=st.sampled_from([None, "all", "tool/result", "step/start", "assistant/chunk"]),
    before=st.booleans(),
    store=st.sampled_from(["none", "retain", "readback", "index"]),
)
@example(lines=[TURN, _base(1), CALL, RESULT], observed=None, before=False, store="index")  # an error result's facts
@example(lines=[TURN, _base(1), CALL, RESULT], observed="all", before=True, store="retain")
@example(lines=[TURN, _base(1), {**CALL, "extra": 1}, {**RESULT, "invalid": "x"}], observed=None, before=False,
         store="none")  # envelope keys DSH does not write: warned of (a stale flag is dropped)
@example(lines=[TURN, _base(1), ANSWER, _base(3)], observed=None, before=False, store="none")  # a step started again
@example(lines=[TURN, {**_base(1), "seq": True}, {**CALL, "seq": 2.0}], observed=None, before=False, store="retain")
@example(lines=[{k: v for k, v in e.items() if k not in ("seq", "time")} for e in (TURN, _base(1), CALL, RESULT)],
         observed="all", before=False, store="readback")  # fmt: skip
@example(lines=[TURN, SPLICE, _end(2, {"kind": "completed"}), {**SPLICE, "seq": 3}, {**TURN, "seq": 4, "data": {"turn": 2}},
                {**SPLICE, "seq": 5}], observed="all", before=False, store="index")  # splices in turns and between them
@example(lines=[TURN, _end(1, {"kind": "aborted"})], observed=None, before=False, store="none")  # legacy turn ends
@example(lines=[TURN, _end(1, {"kind": "disposed"})], observed=None, before=False, store="none")
@example(lines=[TURN, _end(1, {"kind": "error", "failure": {"message": "m"}})], observed=None, before=False, store="none")
@example(lines=[TURN, _end(1, "completed")], observed=None, before=False, store="none")
@example(lines=[{**TURN, "data": {"turn": 1, "trigger": "user"}}], observed=None, before=False, store="retain")
def test_the_fused_paths_project_as_the_general_path(
    tmp_path: Path, lines: list[dict[str, Any]], observed: str | None, before: bool, store: str
) -> None:
    path = tmp_path / f"s{next(NAMES)}.jsonl"  # a log of its own: an earlier example's index never answers
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in [HEADER, *lines]))
    full, events, facts = _one_shot(path)
    seen: list[Any] = []
    ahead: list[Any] = []
    observe = (lambda s, item: seen.append(item.events() if type(item) is PackedRow else [item])) if observed else None
    first = (lambda s, item: ahead.append(s.next_seq)) if before else None
    types = None if observed in (None, "all") else {observed}
    fused = load_session(
        path, retain=store == "retain", readback=store == "readback", observe=observe, before=first,
        observe_types=types, index=store == "index",
    )  # fmt: skip
    assert _state(fused) == _state(full)
    assert fused.diagnostics == full.diagnostics
    if observed:  # every event of the types observed, in order (a packed row stands for its members), validated
        wanted = [readable(e) for e in events if not types or e["type"] in types]
        assert [event for batch in seen for event in batch] == wanted
    if before:  # told of each item of the types observed right before it is projected
        assert ahead == [e["seq"] for e in events if not types or e["type"] in types]
    if store in ("retain", "readback"):  # kept, or read back from where the decoder said each line is
        assert [fused.events.raw(seq) for seq in range(fused.next_seq)] == events
        assert [fused.events[seq] for seq in range(fused.next_seq)] == [readable(e) for e in events]
    if store == "index":  # the facts gathered for the index are those of every event, as the general path gives
        back = restore(path, is_compressed(path), Consumer())
        assert back is not None
        assert back.facts == facts
        assert _state(back.session) == _state(full)
