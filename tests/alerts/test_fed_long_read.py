"""The TUI's alert engine (``FedWatch``) reading the log's start itself (minutes of CPU on a 1 GB log, paced) never
holds up the view that hands it what it decodes: a view that hands over more than the engine may hold meanwhile
(``HELD_BYTES``) goes on at once, and the engine reads those bytes itself once it is done with the start. The
engine still raises what a full read of the file raises, once each."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from bench.gen_session import generate
from core.alerts import follow
from core.alerts.follow import FedWatch
from core.log.linestore import LineStore
from core.log.reader import read_log_header
from core.log.tail import Tailer
from tests.alerts.test_fed_checkpoint import NOW, _cold, _dated
from tests.alerts.test_fed_checkpoint import _cache as _cache  # noqa: F401 (autouse fixture)
from tests.alerts.test_replay import _eager

WAIT = 30.0  # seconds a thread of the test may take at most before the test fails instead of hanging


class _Gate:
    """A ``pace`` that stops the engine's long read at its first unit until the test opens the gate."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.open = threading.Event()

    def __call__(self) -> None:
        self.reached.set()
        assert self.open.wait(WAIT), "the test never opened the gate"


def _thread(target: object) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread


@pytest.mark.parametrize("restored", [False, True], ids=["no-checkpoint", "checkpoint"])
def test_a_view_handing_over_appends_during_the_engines_long_read_is_never_held_up(
    restored: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The view went on from its index, so the engine reads the log's start itself (or, restored from the
    checkpoint, reads it again once the log grows). Meanwhile the log grows and the view hands over more than
    ``HELD_BYTES``: before, its ``take`` waited for the engine's whole read (the view froze that long)."""
    whole = tmp_path / "whole.jsonl"
    generate(whole, 600_000, seed=2, profile="short-turns")
    lines = whole.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines[:half]))
    config = _eager()
    cold = _cold(whole, config, tmp_path, monkeypatch)
    if restored:  # a first view's engine keeps the first half's checkpoint
        first = FedWatch(config, live=False)
        reader = object()
        tailer = Tailer(path)
        first.begin(reader, path, read_log_header(path), LineStore(path, tailer))
        first.take(reader, tailer.poll().events)
        first.loaded(reader, path.stat().st_size)
        assert first.poll(NOW)
    gate = _Gate()
    fed, reader = FedWatch(config, live=False, pace=gate), object()
    tailer = Tailer(path)  # the view, whose index stood for the first half
    store = LineStore(path, tailer)
    tailer.poll()
    unread = path.stat().st_size
    fed.begin(reader, path, read_log_header(path), store, unread=unread)
    raised: list = []
    if restored:
        raised += fed.poll(NOW)  # the checkpoint answers for the first half: nothing read
        assert fed._restored is not None and not gate.reached.is_set()
    with path.open("ab") as f:
        f.write(b"".join(lines[half : half + (len(lines) - half) // 2]))
    fed.take(reader, tailer.poll().events, path.stat().st_size - unread, tailer.offset)
    polls = _thread(lambda: raised.extend(fed.poll(NOW)))  # the alert feed's thread: the long read starts
    assert gate.reached.wait(WAIT)
    monkeypatch.setattr(fed, "HELD_BYTES", 1)
    with path.open("ab") as f:
        f.write(b"".join(lines[half + (len(lines) - half) // 2 :]))
    before = tailer.offset
    appended = tailer.poll()
    taken = _thread(lambda: fed.take(reader, appended.events, tailer.offset - before, tailer.offset))
    taken.join(5.0)
    stuck = taken.is_alive()
    held = [len(batch) for batch, _, _ in list(fed._waiting) if type(batch) is list]
    gate.open.set()
    taken.join(WAIT)
    polls.join(WAIT)
    assert not stuck, "the view's hand-over waited for the engine's read of the log's start"
    assert not held, f"the engine holds {held} items it can read itself"
    fed.loaded(reader, path.stat().st_size)
    raised += fed.poll(NOW)
    assert _dated(raised) == _dated(cold)


class _Slow(_Gate):
    """A ``pace`` that stops the engine's long read at its first unit until the test opens the gate, then makes
    every unit slow: the read would take minutes."""

    def __call__(self) -> None:
        if not self.open.is_set():
            super().__call__()
        else:
            time.sleep(0.05)


@pytest.mark.parametrize("restored", [False, True], ids=["no-checkpoint", "checkpoint"])
def test_a_new_view_of_the_log_during_the_engines_long_read_is_never_held_up(
    restored: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The operator opens the log again (back from a child session) while the engine reads the log's start itself:
    the new view's ``begin`` stops that read instead of waiting minutes for it (the view showed "loading" that long),
    and the engine, going on with the new view, still raises what a full read raises, once each."""
    monkeypatch.setattr(FedWatch, "FOLD", 8)
    monkeypatch.setattr(follow, "SLICE", 1 << 14)  # a slice's fold stays short
    whole = tmp_path / "whole.jsonl"
    generate(whole, 600_000, seed=2, profile="short-turns")
    lines = whole.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines[:half]))
    config = _eager()
    cold = _cold(whole, config, tmp_path, monkeypatch)
    if restored:
        first = FedWatch(config, live=False)
        reader = object()
        tailer = Tailer(path)
        first.begin(reader, path, read_log_header(path), LineStore(path, tailer))
        first.take(reader, tailer.poll().events)
        first.loaded(reader, path.stat().st_size)
        assert first.poll(NOW)
    gate = _Slow()
    fed, reader = FedWatch(config, live=False, pace=gate), object()
    tailer = Tailer(path)
    tailer.poll()
    fed.begin(reader, path, read_log_header(path), LineStore(path, tailer), unread=path.stat().st_size)
    raised: list = []
    if restored:
        raised += fed.poll(NOW)
        with path.open("ab") as f:
            f.write(b"".join(lines[half:]))
        before = tailer.offset
        fed.take(reader, tailer.poll().events, tailer.offset - before, tailer.offset)
    polls = _thread(lambda: raised.extend(fed.poll(NOW)))
    assert gate.reached.wait(WAIT)
    gate.open.set()  # the read goes on, slowly
    if not restored:
        with path.open("ab") as f:
            f.write(b"".join(lines[half:]))
    again = Tailer(path)  # the new view, whose index stands for the whole log
    store = LineStore(path, again)
    again.poll()
    view = object()
    begun = _thread(lambda: fed.begin(view, path, read_log_header(path), store, unread=path.stat().st_size))
    begun.join(5.0)
    stuck = begun.is_alive()
    polls.join(WAIT * 4)
    begun.join(WAIT * 4)
    assert not stuck, "the new view's begin waited for the engine's read of the log's start"
    fed.pace = None
    fed.loaded(view, path.stat().st_size)
    raised += fed.poll(NOW)
    assert _dated(raised) == _dated(cold)
