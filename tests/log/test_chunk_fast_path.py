"""A streaming load's fused ``assistant/chunk`` path projects exactly what the general path does.

``load_session`` hands a well-formed chunk event line straight from ``LogDecoder._chunk`` to
``Session.apply_chunk``, or, when no one observes or keeps chunk events, each run of such lines of one turn and
step but usage samples to ``Session.apply_deltas`` in one call; every other line, and a chunk event with anything unusual about it, takes the general
``LogDecoder._event`` → ``Session.apply`` path. Fed chunk events mutated in every way the fused path must
notice (missing or odd seqs, extra or missing envelope keys, non-integer time, bool or out-of-range turns,
invalid usage or finish data, a chunk that is no object …) among turns and steps that own them, a streaming
load (with and without observers, of every type or some; retaining events, reading them back from the file,
or neither) must end in the projection and diagnostics of a one-shot read projected event by event, and its
observers and its events must give the very events that read gives.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.log.reader import read_log
from core.log.records import PackedRow
from core.log.validate import readable
from core.read.load import load_session
from core.read.session import Session
from tests.log.helpers import HEADER, fresh

odd = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from([2**31, 2**31 - 1, 1.0, 0.5, "1"]), fresh([1]),
    fresh({"a": 1}),
)  # fmt: skip
bad_counter = st.one_of(st.sampled_from([-1, 0, 2**31, True, False, 1.0, None, "1"]), fresh([1]))
counter = st.one_of(st.just(1), st.just(2), bad_counter)
chunk_body = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["text-delta", "reasoning-delta"]), "index": st.just(0)},
                          optional={"text": st.one_of(st.text(max_size=3), odd)}),
    st.fixed_dictionaries({"type": st.just("tool-call-delta"), "index": st.just(0)},
                          optional={"argumentsDelta": st.one_of(st.text(max_size=3), odd), "text": st.text(max_size=2)}),
    st.fixed_dictionaries({"type": st.just("usage")},
                          optional={"usage": st.one_of(fresh({"inputTokens": 3, "outputTokens": 1}), odd)}),
    st.fixed_dictionaries({"type": st.just("finish")},
                          optional={"reason": st.one_of(st.one_of(fresh({"kind": "stop"}), fresh({"kind": "aborted"}), fresh({})), st.fixed_dictionaries(
                              {"kind": st.just("error")}, optional={"failure": st.one_of(fresh({"m": 1}), odd)}
                          ), odd)}),
    st.fixed_dictionaries({"type": st.sampled_from(["block-start", "block-end", None, 3, ["x"]])},
                          optional={"text": st.one_of(st.text(max_size=2), odd)}),
    odd,
)  # fmt: skip


@st.composite
def chunk_line(draw: st.DrawFn, seq: int) -> dict[str, Any]:
    """An ``assistant/chunk`` event at ``seq``, well-formed unless a mutation is drawn."""
    data: dict[str, Any] = {"turn": draw(counter), "step": draw(counter), "chunk": draw(chunk_body)}
    event: dict[str, Any] = {"type": "assistant/chunk", "seq": seq, "time": 5, "data": data}
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), max_size=1)):
        mutation(event, draw)
    return event


def _renumbered(key: str) -> Callable[[dict[str, Any], st.DrawFn], None]:
    """A mutation of a record's ``key`` (its seq): dropped, of another type or shifted."""

    def mutate(record: dict[str, Any], draw: st.DrawFn) -> None:
        choice = draw(st.sampled_from(["drop", "odd", "shift"]))
        if choice == "drop" or not isinstance(record.get(key), int):
            record.pop(key, None)
        elif choice == "odd":
            record[key] = draw(odd)
        else:
            record[key] += draw(st.integers(-2, 2))

    return mutate


_seq, _seq0 = _renumbered("seq"), _renumbered("seq0")


def _envelope(event: dict[str, Any], draw: st.DrawFn) -> None:
    key = draw(st.sampled_from(["surfaceOp", "sourceEventSeqs", "ignorable", "invalid", "extra"]))
    event[key] = draw(st.one_of(odd, st.just("append"), fresh([0])))


def _drop(event: dict[str, Any], draw: st.DrawFn) -> None:
    event.pop(draw(st.sampled_from(["time", "data", "type"])), None)


def _time(event: dict[str, Any], draw: st.DrawFn) -> None:
    event["time"] = draw(st.sampled_from([None, True, 1.5, "1", [1]]))


def _data(event: dict[str, Any], draw: st.DrawFn) -> None:
    if draw(st.booleans()) or not isinstance(event.get("data"), dict):
        event["data"] = draw(odd)
    else:
        event["data"].pop(draw(st.sampled_from(["turn", "step", "chunk"])), None)


MUTATIONS = [_seq, _seq, _envelope, _drop, _time, _data]


def _members(row: dict[str, Any], draw: st.DrawFn) -> None:
    key = draw(st.sampled_from(["texts", "dt", "turn", "index", "name"]))
    row["data"][key] = draw(st.one_of(odd, st.sampled_from([["a", 1], [], [True], [1.0], [1, 2]])))


ROW_MUTATIONS = [_seq0, _members]  # rows numbered otherwise or malformed go through ``LogDecoder._row``


@st.composite
def log_lines(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Turn 1 step 1 opened (sometimes not), then chunk events among step and turn boundaries."""
    lines: list[dict[str, Any]] = []
    if draw(st.booleans()):
        lines += [{"type": "turn/start", "seq": 0, "data": {"turn": 1}},
                  {"type": "step/start", "seq": 1, "data": {"turn": 1, "step": 1}}]  # fmt: skip
    for _ in range(draw(st.integers(1, 16))):
        kind = draw(st.sampled_from(["chunk"] * 6 + ["step/start", "step/end", "turn/end", "row"]))
        if kind == "chunk":
            lines.append(draw(chunk_line(len(lines))))
        elif kind == "row":
            row = {"type": "text-chunks", "seq0": len(lines), "data": {"turn": 1, "step": draw(counter),
                   "index": 0, "texts": ["a", "bc"], "dt": [1]}}  # fmt: skip
            for mutation in draw(st.lists(st.sampled_from(ROW_MUTATIONS), max_size=1)):
                mutation(row, draw)
            lines.append(row)
        else:
            lines.append({"type": kind, "seq": len(lines), "data": {"turn": 1, "step": draw(counter)}})
    return lines


def _one_shot(path: Path) -> tuple[Session, list[Any]]:
    data = read_log(path)
    session = Session(data.header, path=data.path)
    session.diagnostics.extend(data.diagnostics)
    for event in data.events:
        session.apply(event)
    return session, data.events


def _state(session: Session) -> dict[str, Any]:
    n = session.next_seq
    return {
        "next_seq": n,
        "counts": list(session.counts.items()),
        "turns": session.turns,
        "streams": list(session.streams),
        "usage": session.usage_total(),
        "turn_of": [session.turn_of(s) for s in range(n)],
        "in_turn": [session.in_turn(s) for s in range(n)],
        "surface": session.surface,
        "diagnostics": session.diagnostics,
        "aborted_finishes": session.aborted_finishes,  # what a step's finish tells: cut off, or a request again
        "context_samples": session.context_samples,
    }


def _chunk(seq: int | None = None, **data: Any) -> dict[str, Any]:
    event = {"type": "assistant/chunk", "time": 5, "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta"}}}
    event["data"].update(data)
    return event if seq is None else {**event, "seq": seq}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=log_lines(),
    observed=st.sampled_from([None, "all", "assistant/chunk", "step/start"]),
    store=st.sampled_from(["none", "retain", "readback"]),
)
@example(lines=[_chunk(0), _chunk()], observed=None, store="none")  # the first seq makes later ones required
@example(lines=[_chunk(0), _chunk(3), _chunk(2), _chunk(4)], observed=None, store="none")  # renumbered from a gap
@example(lines=[_chunk(0, turn=True), _chunk(1, step=-1), _chunk(2, step=2**31)], observed=None, store="none")
@example(
    lines=[{"type": "turn/start", "seq": 0, "data": {"turn": 1}}, {"type": "step/start", "seq": 1, "data": {"turn": 1, "step": 1}},
           _chunk(2, chunk={"type": "text-delta", "text": "ab"}), _chunk(3, chunk={"type": "tool-call-delta", "argumentsDelta": "c"}),
           _chunk(4, chunk={"type": "usage", "usage": {"inputTokens": 2}}), {"type": "turn/end", "seq": 5, "data": {"turn": 1}},
           _chunk(6, chunk={"type": "finish", "reason": {"kind": "error", "failure": {"message": "x"}}})],
    observed="all", store="retain",
)  # fmt: skip
@example(
    lines=[{"type": "turn/start", "seq": 0, "data": {"turn": 1}}, {"type": "step/start", "seq": 1, "data": {"turn": 1, "step": 1}},
           _chunk(2, chunk={"type": "finish", "reason": {"kind": "aborted"}}), _chunk(3, chunk={"type": "finish", "reason": {}})],
    observed=None, store="none",
)  # fmt: skip  # a step's finish that is no error takes the fused path: a cut-off stream is still told
@example(
    lines=[{"type": "turn/start", "seq": 0, "data": {"turn": 1}}, {"type": "step/start", "seq": 1, "data": {"turn": 1, "step": 1}},
           _chunk(2, chunk={"type": "usage", "usage": [1]}), _chunk(3, chunk={"type": "usage", "usage": {"outputTokens": 2}}),
           _chunk(4, chunk={"type": "usage"}), _chunk(5, chunk={"type": "finish", "reason": {"kind": "stop", "failure": 1}}),
           _chunk(6, chunk={"type": "finish", "reason": {"kind": "error"}}), _chunk(7, chunk={"type": "finish", "reason": 1}),
           _chunk(8, chunk={"type": "finish", "reason": {"kind": "stop"}})],
    observed=None, store="none",
)  # fmt: skip  # usage samples and finishes in the decoder's hot loop: only the ones ``_chunk`` would take
def test_the_fused_chunk_path_projects_as_the_general_path(
    tmp_path: Path, lines: list[dict[str, Any]], observed: str | None, store: str
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in [HEADER, *lines]))
    full, events = _one_shot(path)
    seen: list[Any] = []
    observe = (lambda s, item: seen.append(item.events() if type(item) is PackedRow else [item])) if observed else None
    types = None if observed in (None, "all") else {observed}
    fused = load_session(
        path, retain=store == "retain", readback=store == "readback", observe=observe, observe_types=types
    )
    assert _state(fused) == _state(full)
    if observed:  # every event of the types observed, in order (a packed row stands for its members), validated
        wanted = [readable(e) for e in events if not types or e["type"] in types]
        assert [event for batch in seen for event in batch] == wanted
    if store != "none":  # kept, or read back from where the decoder said each line is; served validated
        assert [fused.events.raw(seq) for seq in range(fused.next_seq)] == events
        assert [fused.events[seq] for seq in range(fused.next_seq)] == [readable(e) for e in events]
