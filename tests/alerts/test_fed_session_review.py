"""Review of this session's alert-engine commits (4a90957, 1ceb712, 1b2fb4d, 2fd3b33, 5ee5097): cases they left
out. Threads are driven by gates in the engine's ``pace`` or its locks, never by sleeps; each case compares what
the engine raised with a cold read of the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.alerts.follow import FedWatch, _ReadOn
from core.control.config import validate_config
from core.log.linestore import LineStore
from core.log.reader import read_log_header
from core.log.tail import Tailer
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
