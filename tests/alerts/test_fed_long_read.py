"""The TUI's alert engine (``FedWatch``) reading the log's start itself (minutes of CPU on a 1 GB log, paced) never
holds up the view that hands it what it decodes: a view that hands over more than the engine may hold meanwhile
(``HELD_BYTES``) goes on at once, and the engine reads those bytes itself once it is done with the start. The
engine still raises what a full read of the file raises, once each."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.alerts import follow
from core.alerts.engine import Alert
from core.alerts.follow import FedWatch
from core.control.config import PolicyConfig
from core.log.linestore import LineStore
from core.log.reader import read_log_header
from core.log.tail import Tailer
from tests.alerts.test_fed_checkpoint import NOW, _cold, _dated, _halves
from tests.alerts.test_fed_checkpoint import _cache as _cache  # noqa: F401 (autouse fixture)
from tests.alerts.test_replay import _eager

WAIT = 60.0  # seconds a thread of the test may take at most before the test fails instead of hanging


class _Gate:
    """A ``pace`` that stops the engine's long read at its first unit until the test opens the gate."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.open = threading.Event()

    def __call__(self) -> None:
        self.reached.set()
        assert self.open.wait(WAIT), "the test never opened the gate"


def _thread(target: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _log(tmp_path: Path, config: PolicyConfig, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[bytes], list]:
    """A log holding the first half of a generated one, the lines of the whole, and what a cold read of it raises."""
    whole, lines, path = _halves(tmp_path)
    return path, lines, _cold(whole, config, tmp_path, monkeypatch)


def _append(path: Path, lines: list[bytes]) -> None:
    with path.open("ab") as f:
        f.write(b"".join(lines))


def _read(tailer: Tailer) -> tuple[list[Any], int, int]:
    """What the view read of what was appended: its items, their bytes, and where it stands after them."""
    before = tailer.offset
    update = tailer.poll()
    return update.events, tailer.offset - before, tailer.offset


def _first_view(config: PolicyConfig, path: Path) -> None:
    """A first view's pass over the whole log at ``path``: its engine keeps the log's checkpoint."""
    first, reader = FedWatch(config, live=False), object()
    tailer = Tailer(path)
    first.begin(reader, path, read_log_header(path), LineStore(path, tailer))
    first.take(reader, tailer.poll().events)
    assert _ended(first, reader, path)


def _ended(fed: FedWatch, reader: object, path: Path) -> list[Alert]:
    """``reader``'s pass ended at the log's end: what the engine's next poll raises."""
    fed.loaded(reader, path.stat().st_size)
    return fed.poll(NOW)


@pytest.mark.parametrize("restored", [False, True], ids=["no-checkpoint", "checkpoint"])
def test_a_view_handing_over_appends_during_the_engines_long_read_is_never_held_up(
    restored: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The view went on from its index, so the engine reads the log's start itself (or, restored from the
    checkpoint, reads it again once the log grows). Meanwhile the log grows and the view hands over more than
    ``HELD_BYTES``: before, its ``take`` waited for the engine's whole read (the view froze that long)."""
    config = _eager()
    path, lines, cold = _log(tmp_path, config, monkeypatch)
    half = len(lines) // 2
    if restored:  # a first view's engine keeps the first half's checkpoint
        _first_view(config, path)
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
    _append(path, lines[half : half + (len(lines) - half) // 2])
    fed.take(reader, *_read(tailer))
    polls = _thread(lambda: raised.extend(fed.poll(NOW)))  # the alert feed's thread: the long read starts
    assert gate.reached.wait(WAIT)
    monkeypatch.setattr(fed, "HELD_BYTES", 1)
    _append(path, lines[half + (len(lines) - half) // 2 :])
    appended = _read(tailer)
    taken = _thread(lambda: fed.take(reader, *appended))
    taken.join(WAIT)
    stuck = taken.is_alive()
    held = [len(batch) for batch, _, _ in list(fed._waiting) if type(batch) is list]
    gate.open.set()
    taken.join(WAIT)
    polls.join(WAIT)
    assert not stuck, "the view's hand-over waited for the engine's read of the log's start"
    assert not held, f"the engine holds {held} items it can read itself"
    raised += _ended(fed, reader, path)
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
    config = _eager()
    path, lines, cold = _log(tmp_path, config, monkeypatch)
    half = len(lines) // 2
    if restored:
        _first_view(config, path)
    gate = _Slow()
    fed, reader = FedWatch(config, live=False, pace=gate), object()
    tailer = Tailer(path)
    tailer.poll()
    fed.begin(reader, path, read_log_header(path), LineStore(path, tailer), unread=path.stat().st_size)
    raised: list = []
    if restored:
        raised += fed.poll(NOW)
        _append(path, lines[half:])
        fed.take(reader, *_read(tailer))
    polls = _thread(lambda: raised.extend(fed.poll(NOW)))
    assert gate.reached.wait(WAIT)
    gate.open.set()  # the read goes on, slowly
    if not restored:
        _append(path, lines[half:])
    again = Tailer(path)  # the new view, whose index stands for the whole log
    store = LineStore(path, again)
    again.poll()
    view = object()
    begun = _thread(lambda: fed.begin(view, path, read_log_header(path), store, unread=path.stat().st_size))
    begun.join(WAIT)
    stuck = begun.is_alive()
    polls.join(WAIT * 4)
    begun.join(WAIT * 4)
    assert not stuck, "the new view's begin waited for the engine's read of the log's start"
    fed.pace = None
    raised += _ended(fed, view, path)
    assert _dated(raised) == _dated(cold)
