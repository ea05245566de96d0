"""The writer: DSH layout, round trips (raw and zstd) with zero diagnostics, locking, torn-tail repair."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from core.log.frames import FrameStream
from core.log.layout import encode_segment, project_key
from core.log.reader import read_log
from core.log.sessions import discover_sessions
from core.log.tail import tail_events
from core.log.writer import SessionWriter, make_header
from core.read.load import load_session
from core.shared.errors import LogFormatError, WriterLockedError
from tests.log.helpers import one_turn_with_tool


def _bodies(events: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if k not in ("seq", "time")} for e in events]


@pytest.mark.parametrize("compressed", [False, True])
def test_round_trip_reads_back_with_zero_diagnostics(tmp_path: Path, compressed: bool) -> None:
    header = make_header("py-demo-1", cwd="/work/demo", created_at=5)
    bodies = _bodies(one_turn_with_tool())
    with SessionWriter.create(tmp_path, header, compressed=compressed) as writer:
        writer.append(bodies[:4])
        writer.append(bodies[4:] + [{"type": "tapedeck/route", "data": {"turn": 1}}])
    path = (
        tmp_path / "--work-demo--" / "py-demo-1" / ("session.jsonl.zstd" if compressed else "session.jsonl")
    )
    assert writer.path == path
    data = read_log(path)
    assert data.diagnostics == []
    assert list(data.header) == ["type", "version", "id", "createdAt", "cwd", "delegationDepth"]
    assert [e["seq"] for e in data.events] == list(range(12))
    assert data.events[-1]["ignorable"] is True
    assert "ignorable" not in data.events[0]
    times = [e["time"] for e in data.events]
    assert times == sorted(times) and all(isinstance(t, int) for t in times)
    assert load_session(path).surface == [2, 3, 5, 8]
    store = load_session(path, retain=False, readback=True).events
    assert [store[n] for n in range(len(store))] == data.events
    assert tail_events(path, 5) == data.events[-5:] and tail_events(path, 500) == data.events
    if compressed:  # header frame + one frame per batch
        assert [frame.offset for frame in FrameStream().feed(path.read_bytes())][:1] == [0]
        assert len(list(FrameStream().feed(path.read_bytes()))) == 3
    else:
        assert all(
            list(orjson.loads(line))[:4] == ["type", "seq", "time", "data"]
            for line in path.read_bytes().splitlines()[1:]
        )


def test_second_writer_fails_clearly(tmp_path: Path) -> None:
    writer = SessionWriter.create(tmp_path, make_header("s", cwd="/a"))
    with pytest.raises(WriterLockedError, match="already open for writing by another process"):
        SessionWriter.resume(writer.path)
    writer.close()
    again, _ = SessionWriter.resume(writer.path)
    again.close()


@pytest.mark.parametrize("compressed", [False, True])
def test_resume_cuts_a_torn_tail_and_continues_the_seq(tmp_path: Path, compressed: bool) -> None:
    bodies = _bodies(one_turn_with_tool())
    writer = SessionWriter.create(tmp_path, make_header("s", cwd="/a"), compressed=compressed)
    writer.append(bodies[:5])
    writer.close()
    with open(writer.path, "ab") as f:
        f.write(b"\x28\xb5\x2f\xfd\x00\x01" if compressed else b'{"type":"step/end","seq":5,"ti')
    resumed, data = SessionWriter.resume(writer.path)
    assert len(data.events) == 5 and data.diagnostics == []
    resumed.append(bodies[5:])
    resumed.close()
    final = read_log(writer.path)
    assert final.diagnostics == [] and len(final.events) == len(bodies)


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize(("change", "said"), [("cut", "was truncated from "), ("grown", "grew by 6 bytes")])
def test_a_log_another_program_cut_or_wrote_to_is_never_appended_to(
    tmp_path: Path, compressed: bool, change: str, said: str
) -> None:
    # a truncated log took the next batch at its new end: events numbered after ones it no longer held
    bodies = _bodies(one_turn_with_tool())
    writer = SessionWriter.create(tmp_path, make_header("s", cwd="/a"), compressed=compressed)
    writer.append(bodies[:5])
    if change == "cut":
        os.truncate(writer.path, writer.path.stat().st_size // 2)
    else:
        with open(writer.path, "ab") as f:
            f.write(b"{oops\n")
    before = writer.path.read_bytes()
    with pytest.raises(LogFormatError, match=f"{said}.* while this writer held it; nothing more is appended"):
        writer.append(bodies[5:])
    with pytest.raises(LogFormatError, match=said):
        writer.check_held()
    assert writer.path.read_bytes() == before
    writer.close()


def test_writer_rejects_malformed_events(tmp_path: Path) -> None:
    with SessionWriter.create(tmp_path, make_header("s", cwd="/a")) as writer:
        with pytest.raises(ValueError, match="non-envelope"):
            writer.append([{"type": "turn/start", "data": {}, "extra": 1}])
        with pytest.raises(ValueError, match="needs a surfaceOp"):
            writer.append([{"type": "user/message", "data": {}}])
        with pytest.raises(ValueError, match="log-only"):
            writer.append([{"type": "turn/start", "data": {}, "surfaceOp": "append"}])
        assert writer.next_seq == 0


def test_layout_matches_dsh_rules(tmp_path: Path) -> None:
    assert project_key("/home/u/proj") == "--home-u-proj--"
    assert project_key("/a//b:c\\d") == "--a-b-c-d--"
    assert project_key("/x/~me") == "--x-~007Eme--"
    assert project_key(None) == "_no-cwd"
    assert encode_segment("..") == "~002E~002E" and encode_segment("a/b") == "a~002Fb"
    with pytest.raises(ValueError):
        encode_segment("")
    parent = SessionWriter.create(tmp_path, make_header("p", cwd="/w"))
    child = SessionWriter.create(
        tmp_path,
        make_header("c", cwd="/w", parent_session="p", origin="subagent", delegation_depth=1),
        compressed=True,
    )
    parent.close()
    child.close()
    os.utime(child.path, (1, 1))
    refs = discover_sessions(tmp_path)
    assert [(r.id, r.parent, r.depth) for r in refs] == [("p", None, 0), ("c", "p", 1)]
