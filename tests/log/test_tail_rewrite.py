"""A followed file rewritten in place on the same inode is re-read from the start, never merged with the old one.

``cat B > log`` truncates and writes on the same inode; between two polls the file may come back longer than
what was read. The tailer notices that the bytes it already consumed changed and resets with ``log-reset``.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.log.reader import read_log
from core.log.tail import Tailer
from tests.log.helpers import HEADER, number, one_turn_with_tool, raw_log, user, zstd_log


def _session(session_id: str, texts: list[str]) -> dict:
    events = one_turn_with_tool(f"output of {session_id}")
    events += number([user(text) for text in texts], start_time=5000)
    for i, event in enumerate(events):
        event["seq"] = i
    return {"header": {**HEADER, "id": session_id}, "events": events}


def _blob(session: dict, compressed: bool) -> bytes:
    make = zstd_log if compressed else raw_log
    return make(session["events"], header=session["header"])


def _rewrite(path: Path, blob: bytes, same_fd: bool) -> None:
    """Rewrite ``path`` on the same inode: ``cat B > path`` (O_TRUNC), or truncate-and-regrow through one fd."""
    inode = path.stat().st_ino
    if same_fd:
        with open(path, "r+b") as f:
            f.truncate(0)
            f.write(blob)
    else:
        with open(path, "wb") as f:
            f.write(blob)
    assert path.stat().st_ino == inode


@settings(max_examples=40, deadline=None)
@given(
    first=st.lists(st.text(min_size=1, max_size=30), max_size=6),
    second=st.lists(st.text(min_size=1, max_size=300), max_size=12),
    same_session=st.booleans(),
    same_fd=st.booleans(),
    compressed=st.booleans(),
)
def test_same_inode_rewrite_resets_instead_of_merging(
    tmp_path_factory, first: list[str], second: list[str], same_session: bool, same_fd: bool, compressed: bool
) -> None:
    path = tmp_path_factory.mktemp("rw") / ("session.jsonl.zstd" if compressed else "session.jsonl")
    a = _session("a", first)
    b = _session("a" if same_session else "b", ["rewritten: " + t for t in second])
    old, new = _blob(a, compressed), _blob(b, compressed)
    path.write_bytes(old)
    tailer = Tailer(path)
    seen = tailer.poll().events
    assert len(seen) == len(a["events"])
    _rewrite(path, new, same_fd)
    os.utime(path, ns=(1, 1))  # mtime may not tick between two writes on a coarse clock; size or mtime must move
    update = tailer.poll()
    events = update.events + tailer.finish().events
    expected = read_log(path)
    if new.startswith(old):  # indistinguishable from an append, and reading on is exactly right
        assert not update.reset and seen + events == expected.events
        return
    assert update.reset and [d.code for d in update.diagnostics] == ["log-reset"]
    assert events == expected.events and update.header == expected.header


def test_cat_other_session_over_followed_log_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(raw_log(_session("a", ["x"])["events"], header={**HEADER, "id": "a"}))
    tailer = Tailer(path)
    tailer.poll()
    b = _session("b", ["y" * 500])
    _rewrite(path, raw_log(b["events"], header=b["header"]), same_fd=False)
    update = tailer.poll()
    assert update.reset and update.header["id"] == "b"
    assert "rewritten in place" in update.diagnostics[0].message


def test_plain_appends_and_touches_are_not_rewrites(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    events = one_turn_with_tool()
    blob = raw_log(events)
    path.write_bytes(blob[: len(blob) // 2])
    tailer = Tailer(path)
    got = tailer.poll().events
    os.utime(path, ns=(2, 2))
    assert not tailer.poll()
    with open(path, "ab") as f:
        f.write(blob[len(blob) // 2 :])
    update = tailer.poll()
    assert not update.reset and got + update.events == read_log(path).events
