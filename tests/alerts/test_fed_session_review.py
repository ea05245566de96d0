"""Review of this session's alert-engine commits (4a90957, 1ceb712, 1b2fb4d, 2fd3b33, 5ee5097): cases they left
out. Threads are driven by gates in the engine's ``pace`` or its locks, never by sleeps; each case compares what
the engine raised with a cold read of the file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.alerts import follow
from core.alerts.follow import FedWatch, _ReadOn
from core.control.config import validate_config
from core.log.linestore import LineStore
from core.log.reader import read_log_header
from core.log.tail import Tailer
from tests.alerts.crafted import HEADER, Log, config
from tests.alerts.test_fed_checkpoint import NOW, _cold, _dated
from tests.alerts.test_fed_checkpoint import _cache as _cache  # noqa: F401 (autouse fixture)
from tests.alerts.test_fed_long_read import _append, _ended, _first_view, _log, _read
from tests.alerts.test_replay import EAGER

NO_BREAKS = validate_config({"alerts": {**EAGER, "cacheBreak": {"enabled": False}}})


def test_a_restored_engine_without_the_cache_break_rule_lets_the_view_feed_what_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the cache-break rule off a restored engine has no projection to rebuild (1ceb712), yet a view that
    handed over more than ``HELD_BYTES`` had them dropped (a restored engine counted as one about to read the log
    itself), and the engine read them back through a reader of its own from the log's first byte: the whole start
    read again, what 1ceb712 says no longer happens."""
    path, lines, _ = _log(tmp_path, NO_BREAKS, monkeypatch)
    _first_view(NO_BREAKS, path)  # the log's checkpoint
    fed, reader = FedWatch(NO_BREAKS, live=False), object()
    tailer = Tailer(path)  # the reopened view, whose index stands for the whole log
    store = LineStore(path, tailer)
    tailer.poll()
    fed.begin(reader, path, read_log_header(path), store, unread=tailer.offset)
    raised = fed.poll(NOW)
    assert fed._restored is not None and fed.start_bytes == 0
    _append(path, lines[len(lines) // 2 :])
    cold = _cold(path, NO_BREAKS, tmp_path, monkeypatch)
    monkeypatch.setattr(fed, "HELD_BYTES", 1)
    fed.take(reader, *_read(tailer))  # more than the engine may hold: the view feeds it itself
    assert not any(type(batch) is _ReadOn for batch, _, _ in fed._waiting)
    raised += _ended(fed, reader, path)
    assert fed.start_bytes == 0, f"the engine read {fed.start_bytes:,} bytes of the log again"
    assert _dated(raised) == _dated(cold)


def test_a_log_replaced_while_the_engine_reads_its_start_is_not_folded_into_the_old_files_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log is replaced while the engine reads its start itself (its reader's next slice finds another file):
    the new file's first slice was fed to the old file's engine from the seq that engine had reached, the two
    files' events folded as one session (here one call of each makes a loop neither file has), and the reader
    kept to read on in the new file. Nothing of the new file reaches the old engine now: the view's reset pass
    reads it with a new engine."""
    monkeypatch.setattr(follow, "SLICE", 2000)  # the old file's first slice: its turn, its call and one pad
    rules = config({"loop": {"count": 2}})
    old, new = Log(), Log()
    old.turn(1)
    old.call("read_file", '{"path": "a.py"}')
    for _ in range(6):
        old.add("x/pad", {"pad": "p" * 1500}, ignorable=True)
    new.turn(1)
    for k in range(2):
        new.call("list", f'{{"n": {k}}}')
        new.result(False)
    # in the new file's first slice, past the seq the old engine reached
    new.call("read_file", '{"path": "a.py"}')
    new.result(False)
    path, other = tmp_path / "session.jsonl", tmp_path / "other.jsonl"
    for file, log in ((path, old), (other, new)):
        file.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *log.events]))
    cold = [_dated(_cold(file, rules, tmp_path, monkeypatch)) for file in (path, other)]

    def pace() -> None:  # after the engine's first slice: the next one finds another file
        if other.exists():
            os.replace(other, path)

    fed, reader = FedWatch(rules, live=False, pace=pace), object()
    tailer = Tailer(path)  # the view, whose index stood for the whole old file
    store = LineStore(path, tailer)
    tailer.poll()
    fed.begin(reader, path, read_log_header(path), store, unread=tailer.offset)
    raised = fed.poll(NOW)
    assert not other.exists()
    view = object()  # the view finds the file replaced: its pass over the new one begins
    tailer = Tailer(path)
    fed.begin(view, path, read_log_header(path), LineStore(path, tailer), reset=True)
    fed.take(view, tailer.poll().events)
    fed.loaded(view, path.stat().st_size)
    raised += fed.poll(NOW)
    assert [a for a in _dated(raised) if not any(a in alerts for alerts in cold)] == []
