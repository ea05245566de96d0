"""The control inbox protocol: request validation, locked appends, incremental tolerant reading, outcomes."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from core.control.inbox import (
    CONTROL_EVENT,
    MAX_LINE_BYTES,
    OPS,
    ControlError,
    InboxReader,
    answered_ids,
    append_request,
    inbox_line,
    inbox_path,
    make_request,
    outcome_event,
    validate_request,
)

VALID_OPS = "checkpoint, rewind, expand, config.set, pause, resume, message, stop"


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    return tmp_path / "control.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_append_writes_one_line_per_request_with_mode_0600(inbox: Path) -> None:
    old = os.umask(0)
    try:
        first = append_request(inbox, "checkpoint", {"objective": "find the flaky test"})
        second = append_request(inbox, "rewind")
    finally:
        os.umask(old)
    assert stat.S_IMODE(inbox.stat().st_mode) == 0o600
    assert _lines(inbox) == [first, second]
    assert set(first) == {"id", "op", "args", "at"}
    assert first["op"] == "checkpoint" and first["args"] == {"objective": "find the flaky test"}
    assert second["args"] == {}
    assert first["id"] != second["id"]
    assert isinstance(first["at"], int) and first["at"] > 1_600_000_000_000


def test_every_op_accepts_its_documented_arguments(inbox: Path) -> None:
    examples = {
        "checkpoint": {},
        "rewind": {},
        "expand": {"seq": 12},
        "config.set": {"key": "slice.history.keepRecentTurns", "value": None},
        "pause": {},
        "resume": {},
        "message": {"text": "focus on the parser", "kind": "note"},
        "stop": {"reason": "done for today"},
    }
    assert list(examples) == list(OPS)
    for op, args in examples.items():
        assert append_request(inbox, op, args)["args"] == args
    assert [r["op"] for r in _lines(inbox)] == list(OPS)


@pytest.mark.parametrize(
    ("op", "args", "message"),
    [
        ("explode", {}, f'unknown control op "explode"; valid ops: {VALID_OPS}'),
        (None, {}, f"the request names no op; valid ops: {VALID_OPS}"),  # an inbox line without "op"
        ("pause", {"force": True}, 'pause: unknown argument "force" (it takes no arguments)'),
        ("expand", {}, "expand needs the argument 'seq'"),
        ("expand", {"seq": "12"}, "expand: 'seq' must be a non-negative integer (got \"12\")"),
        ("expand", {"seq": -1}, "expand: 'seq' must be a non-negative integer"),
        ("expand", {"seq": True}, "expand: 'seq' must be a non-negative integer"),
        # 2.0, which JSON writes 2: 'got 2' said nothing of why 2 was refused
        ("expand", {"seq": 2.0}, "expand: 'seq' must be a non-negative integer (got 2, written with a fraction or an"),
        ("message", {"text": "  "}, "message: 'text' must not be empty"),
        ("message", {"text": "hi", "kind": "shout"}, "message: 'kind' must be one of steer, note"),
        ("checkpoint", {"objective": 3}, "checkpoint: 'objective' must be a string (got 3)"),
        (
            "config.set",
            {"key": "history.x", "value": 1},
            "config.set: Unknown configuration section history. Valid sections: slice, rewind",
        ),
        (
            "config.set",
            {"key": "slce.fold.minChars", "value": 1},
            "Unknown configuration section slce. Did you mean slice?",
        ),
        (
            "config.set",
            {"key": "slice.", "value": 1},
            'config.set: key "slice." must be <section>.<key>, such as slice.<key>',
        ),
        ("config.set", {"key": "slice..x", "value": 1}, 'config.set: key "slice..x" must be <section>.<key>'),
        ("config.set", {"key": "slice.fold.minChars"}, "config.set needs the argument 'value'"),
        ("stop", ["now"], 'stop: args must be a JSON object (got ["now"])'),
    ],
)
def test_invalid_requests_are_refused_and_nothing_is_written(
    inbox: Path, op: Any, args: Any, message: str
) -> None:
    with pytest.raises(ControlError) as info:
        append_request(inbox, op, args)
    assert message in str(info.value)
    assert not inbox.exists()


def test_concurrent_appends_never_interleave(inbox: Path) -> None:
    text = "x" * 5000

    def writer(n: int) -> None:
        for i in range(25):
            append_request(inbox, "message", {"text": f"{n}-{i}-{text}"})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    requests = _lines(inbox)
    assert len(requests) == 150
    assert len({r["id"] for r in requests}) == 150
    assert all(r["args"]["text"].endswith(text) for r in requests)


def test_a_torn_tail_does_not_swallow_the_next_request(inbox: Path) -> None:
    inbox.write_text('{"id":"torn","op":"pau')
    request = append_request(inbox, "pause")
    entries = InboxReader(inbox).read()
    assert [e.line for e in entries] == [1, 2]
    assert entries[0].request and entries[0].request["id"] == "torn"  # its id is readable: it gets rejected
    assert entries[0].error and "not valid JSON" in entries[0].error
    assert entries[1].request == request and entries[1].error is None


def test_reader_is_incremental_and_waits_for_whole_lines(inbox: Path) -> None:
    reader = InboxReader(inbox)
    assert reader.read() == []
    first = append_request(inbox, "checkpoint")
    [entry] = reader.read()
    assert entry.request == first and entry.line == 1 and entry.offset == 0
    assert reader.read() == []
    line = json.dumps({"id": "hand-1", "op": "stop", "args": {}, "at": 1}) + "\n"
    with open(inbox, "a") as f:
        f.write(line[:10])
    assert reader.read() == []
    with open(inbox, "a") as f:
        f.write(line[10:] + "\n")
    [entry] = reader.read()
    assert entry.request == {"id": "hand-1", "op": "stop", "args": {}, "at": 1}
    assert (
        entry.line == 2
        and entry.offset == len(json.dumps(first, separators=(",", ":"), ensure_ascii=False)) + 1
    )


def test_reader_reports_bad_lines_without_stopping(inbox: Path) -> None:
    lines = [
        "not json at all",
        "[1, 2]",
        json.dumps({"op": "pause"}),
        json.dumps({"id": "r-unknown", "op": "explode", "args": {}}),
        json.dumps({"id": "r-badargs", "op": "expand", "args": {"seq": "x"}}),
        json.dumps({"id": "r-ok", "op": "resume"}),
    ]
    inbox.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\xfe\n")
    entries = InboxReader(inbox).read()
    assert [e.line for e in entries] == [1, 2, 3, 4, 5, 6, 7]
    assert [e.request is None for e in entries] == [True, True, True, False, False, False, True]
    assert "line 2 is not a JSON object" in (entries[1].error or "")
    assert "line 3 has no request id" in (entries[2].error or "")
    assert entries[3].request and entries[3].request["op"] == "explode"
    assert entries[3].error and entries[3].error.startswith('unknown control op "explode"')
    assert entries[4].error and "'seq' must be a non-negative integer" in entries[4].error
    assert entries[5].error is None and entries[5].request == {
        "id": "r-ok",
        "op": "resume",
        "args": {},
        "at": None,
    }
    assert entries[6].error == "control inbox line 7 is not UTF-8: its byte 0 (0xff) cannot be decoded; skipped"


def test_overlong_line_is_reported_and_skipped(inbox: Path) -> None:
    reader = InboxReader(inbox)
    with open(inbox, "wb") as f:
        f.write(b"{" + b"x" * (MAX_LINE_BYTES + 10))
    assert reader.read() == []
    with open(inbox, "ab") as f:
        f.write(b"yyy\n")
    [entry] = reader.read()
    assert entry.request is None and entry.error and "longer than" in entry.error and entry.line == 1
    request = append_request(inbox, "pause")
    [entry] = reader.read()
    assert entry.request == request and entry.line == 2


def test_replaced_inbox_is_read_again_from_the_start(inbox: Path) -> None:
    reader = InboxReader(inbox)
    append_request(inbox, "pause")
    append_request(inbox, "resume")
    assert len(reader.read()) == 2
    inbox.unlink()
    assert reader.read() == []
    again = append_request(inbox, "stop")
    assert [e.request for e in reader.read()] == [again]


def test_a_missing_inbox_is_a_steady_state_and_one_made_later_is_read_from_its_start(inbox: Path) -> None:
    """Each read of a missing inbox started the reader over, its generation (which names the file an offset is
    in) growing with every poll, 20 a second: nothing changes while the inbox stays missing, once it never was
    and once it is gone, and the file made next is read from its start."""
    reader = InboxReader(inbox)
    polls = [(reader.read(), reader.generation, reader.position) for _ in range(3)]
    assert polls == [([], polls[0][1], None)] * 3
    first = append_request(inbox, "pause")
    assert [e.request for e in reader.read()] == [first]
    inbox.unlink()
    polls = [(reader.read(), reader.generation, reader.position) for _ in range(3)]
    assert polls == [([], polls[0][1], None)] * 3
    again = append_request(inbox, "stop")
    assert [e.request for e in reader.read()] == [again]


def test_an_inbox_made_again_with_the_old_inode_number_is_read_from_its_start(inbox: Path, tmp_path: Path) -> None:
    # a file system hands a freed inode number out again at once: here the old file itself, kept through a hard link
    # while its name is gone and written anew (blank lines make it no shorter than what was read of the old one)
    reader = InboxReader(inbox)
    append_request(inbox, "pause")
    assert len(reader.read()) == 1
    aside = tmp_path / "aside"
    os.link(inbox, aside)
    inbox.unlink()
    assert reader.read() == []
    request = {"id": "again-1", "op": "stop", "args": {}, "at": 1}
    aside.write_bytes(json.dumps(request).encode() + b"\n" * (aside.stat().st_size + 1))
    aside.rename(inbox)
    assert [e.request["id"] for e in reader.read() if e.request] == ["again-1"]


def _rewrite_in_place(path: Path, *requests: dict[str, Any]) -> None:
    """Truncate ``path`` and write ``requests`` into it: the same file, the same inode, new lines."""
    with open(path, "r+b") as f:
        f.truncate(0)
        f.write(b"".join(map(inbox_line, requests)))


@pytest.mark.parametrize("longer", [False, True])
def test_an_inbox_rewritten_in_place_between_reads_is_read_from_its_start(inbox: Path, longer: bool) -> None:
    """A file truncated and written again between two reads, as long as what was read of it or longer, kept its
    inode: the reader went on from its old offset and never saw the new file's first requests."""
    reader = InboxReader(inbox)
    first = append_request(inbox, "pause")
    assert [e.request for e in reader.read()] == [first]
    inode = inbox.stat().st_ino
    fresh = [make_request("pause"), *([make_request("resume")] if longer else [])]  # as long as `first`, or longer
    _rewrite_in_place(inbox, *fresh)
    assert inbox.stat().st_ino == inode
    assert [e.request for e in reader.read()] == fresh
    later = append_request(inbox, "checkpoint")
    assert [e.request for e in reader.read()] == [later]


def test_outcome_events() -> None:
    request = {"id": "req-1", "op": "expand", "args": {"seq": 4}, "at": 0}
    assert outcome_event(request, "applied", detail={"seq": 40}) == {
        "type": CONTROL_EVENT,
        "data": {"requestId": "req-1", "op": "expand", "outcome": "applied", "detail": {"seq": 40}},
        "ignorable": True,
    }
    rejected = outcome_event(request, "rejected", error="the tool result at seq 4 is not folded")
    assert rejected["data"] == {
        "requestId": "req-1",
        "op": "expand",
        "outcome": "rejected",
        "error": "the tool result at seq 4 is not folded",
    }
    with pytest.raises(ValueError, match="outcome must be one of pending, applied, rejected, cancelled, expired"):
        outcome_event(request, "maybe")


def test_a_restarted_host_answers_each_request_exactly_once(inbox: Path) -> None:
    log: list[dict[str, Any]] = [{"type": "turn/start", "data": {"turn": 1}}]
    ids = [append_request(inbox, "pause")["id"], append_request(inbox, "resume")["id"]]

    def run_host() -> None:
        done = answered_ids(log)
        for entry in InboxReader(inbox).read():
            if entry.request is None or entry.request["id"] in done:
                continue
            log.append(outcome_event(entry.request, "applied"))

    run_host()
    ids.append(append_request(inbox, "stop")["id"])
    run_host()
    answered = [e["data"]["requestId"] for e in log if e["type"] == CONTROL_EVENT]
    assert answered == ids
    assert answered_ids(log) == set(ids)


def test_inbox_sits_beside_the_log(tmp_path: Path) -> None:
    session_dir = tmp_path / "s"
    session_dir.mkdir()
    (session_dir / "session.jsonl").write_text("{}\n")
    assert inbox_path(session_dir) == session_dir / "control.jsonl"
    assert inbox_path(session_dir / "session.jsonl") == session_dir / "control.jsonl"


def test_validate_returns_a_copy() -> None:
    args = {"seq": 3}
    checked = validate_request("expand", args)
    assert checked == args and checked is not args


@pytest.mark.parametrize(
    ("op", "args", "kind"),
    [
        ("expand", {"seq": "k" * 100_000}, "tapedeck"),
        ("message", {"text": "hi", "kind": "k" * 100_000}, "tapedeck"),
        ("pause", {"k" * 100_000: 1}, "tapedeck"),
        ("k" * 100_000, {}, "tapedeck"),
        ("config.set", {"key": "k" * 100_000, "value": 1}, "tapedeck"),
        ("config.set", {"key": "k" * 100_000, "value": 1}, "dsh"),
        ("config.set", {"key": "model", "value": ["k" * 100_000]}, "dsh"),
    ],
)
def test_a_refused_value_is_quoted_cut(op: Any, args: Any, kind: str) -> None:
    """The message names a refused value of 100,000 characters by its first ones, the cut marked: the host
    writes the message into the log's outcome event."""
    with pytest.raises(ControlError) as info:
        validate_request(op, args, kind)
    assert len(str(info.value)) < 400 and "kkk…" in str(info.value)


def test_every_op_has_one_handler_on_the_host() -> None:
    from core.host.hooks import PolicyHooks
    from core.host.operator import Operator

    def handlers(cls: type) -> set[str]:
        return {name for name in vars(cls) if name.startswith("op_")}

    ours, policies = handlers(Operator), handlers(PolicyHooks)
    assert not ours & policies
    assert ours | policies == {"op_" + op.replace(".", "_") for op in OPS}
