"""Review of 27ed3cc (``FedWatch``: the engine's own read of a log never holds up the view): cases it left out. The
threads are driven by gates in the engine's ``pace`` (or in a step a subclass gates), never by sleeps; each case
compares what the engine raised with a cold read of the file."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.alerts import follow
from core.alerts.engine import Alert
from core.alerts.follow import FedWatch, _ReadOn
from core.log.linestore import LineStore
from core.log.reader import read_log_header
from core.log.tail import Tailer
from tests.alerts.test_fed_checkpoint import NOW, _cold, _dated
from tests.alerts.test_fed_checkpoint import _cache as _cache  # noqa: F401 (autouse fixture)
from tests.alerts.test_fed_long_read import WAIT, _append, _ended, _first_view, _log, _read, _thread
from tests.alerts.test_replay import _eager


def _taken_meanwhile(
    fed: FedWatch,
    reader: object,
    tailer: Tailer,
    path: Path,
    monkeypatch: pytest.MonkeyPatch,
    feed: Callable[[], list[Alert]],
    reached: threading.Event,
    go: threading.Event,
) -> list[Alert]:
    """Run ``feed`` (the alert feed's poll) in a thread; once it ``reached`` its gate, the view hands over the rest of
    the log with no more than a byte let wait, and ``go`` lets the engine on: what it raised, then at the pass's end."""
    raised: list[Alert] = []
    polls = _thread(lambda: raised.extend(feed()))
    assert reached.wait(WAIT)
    monkeypatch.setattr(fed, "HELD_BYTES", 1)
    fed.take(reader, *_read(tailer))
    go.set()
    polls.join(WAIT)
    assert not polls.is_alive()
    return raised + _ended(fed, reader, path)


class _Stops:
    """A ``pace`` that stops the engine at the first call where each condition holds, in turn, until the test opens
    that stop (then it goes on unstopped)."""

    def __init__(self, *when: Callable[[], bool]) -> None:
        self.when = list(when)
        self.reached = [threading.Event() for _ in when]
        self.open = [threading.Event() for _ in when]
        self.k = 0

    def __call__(self) -> None:
        if self.k < len(self.when) and self.when[self.k]():
            k, self.k = self.k, self.k + 1
            self.reached[k].set()
            assert self.open[k].wait(WAIT), "the test never opened the stop"


class _Asked:
    """``fed``'s engine lock, which says when a thread asks for it while another holds it (a ``begin`` waiting for
    the engine's read to stop)."""

    def __init__(self, fed: FedWatch) -> None:
        self.lock = fed._feeding
        self.asked = threading.Event()
        fed._feeding = self  # type: ignore[assignment]

    def __enter__(self) -> None:
        if self.lock.locked():
            self.asked.set()
        self.lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def test_a_view_ahead_of_the_feeds_first_poll_never_reads_the_logs_start_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The view went on from its index and hands over more than ``HELD_BYTES`` before the alert feed's thread polled
    (it polls every 0.1 s; the view hands over 1 MiB a slice). Before, the view's ``take`` fed what waited itself, and
    so read the log's start first, in the view's thread and unpaced: minutes of a frozen view on a 1 GB log."""
    config = _eager()
    path, lines, cold = _log(tmp_path, config, monkeypatch)
    half = len(lines) // 2
    fed, reader = FedWatch(config, live=False), object()
    tailer = Tailer(path)  # the view, whose index stood for the first half
    store = LineStore(path, tailer)
    tailer.poll()
    fed.begin(reader, path, read_log_header(path), store, unread=path.stat().st_size)
    monkeypatch.setattr(fed, "HELD_BYTES", 1)
    _append(path, lines[half:])
    fed.take(reader, *_read(tailer))
    assert fed.start_bytes == 0, "the view's thread read the log's start for the engine"
    fed.loaded(reader, path.stat().st_size)
    raised = fed.poll(NOW)  # the feed's thread reads the start, then on over what the view handed over
    assert fed.start_bytes > 0
    assert _dated(raised) == _dated(cold)


def test_a_view_waiting_for_a_plain_feed_is_not_held_up_by_the_read_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine read the log's start, and a hand-over whose end the view did not tell waits, then bytes dropped
    meanwhile (``_ReadOn``). While the engine feeds the first, not reading, the view hands over too much: before, its
    ``take`` waited for the engine, which went on to read the dropped bytes from the file: the view froze that long."""
    config = _eager()
    path, lines, cold = _log(tmp_path, config, monkeypatch)
    half, quarter = len(lines) // 2, (len(lines) - len(lines) // 2) // 3
    reader = object()
    stops = _Stops(
        lambda: fed._reading,  # the engine reads the log's start
        lambda: not fed._reading and any(type(b) is _ReadOn for b, _, _ in list(fed._waiting)),  # it feeds, plainly
        lambda: fed._reading,  # it reads the dropped bytes
    )
    fed = FedWatch(config, live=False, pace=stops)
    tailer = Tailer(path)  # the view, whose index stood for the first half
    store = LineStore(path, tailer)
    tailer.poll()
    fed.begin(reader, path, read_log_header(path), store, unread=path.stat().st_size)
    _append(path, lines[half : half + quarter])
    fed.take(reader, tailer.poll().events)  # its end not told: it cannot be read again in its place
    raised: list[Any] = []
    polls = _thread(lambda: raised.extend(fed.poll(NOW)))
    assert stops.reached[0].wait(WAIT)
    monkeypatch.setattr(fed, "HELD_BYTES", 1)
    _append(path, lines[half + quarter : half + 2 * quarter])
    fed.take(reader, *_read(tailer))  # dropped: the engine reads these bytes itself later
    stops.open[0].set()
    assert stops.reached[1].wait(WAIT)
    _append(path, lines[half + 2 * quarter :])
    appended = _read(tailer)
    taken = _thread(lambda: fed.take(reader, *appended))
    stops.open[1].set()
    assert stops.reached[2].wait(WAIT)
    taken.join(WAIT)
    stuck = taken.is_alive()
    stops.open[2].set()
    taken.join(WAIT)
    polls.join(WAIT)
    assert not stuck, "the view's hand-over waited for the engine's read of the bytes dropped before"
    raised += _ended(fed, reader, path)
    assert _dated(raised) == _dated(cold)


def test_bytes_dropped_while_the_engine_restores_a_checkpoint_that_stands_for_them_are_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reopened view goes on from an index older than the log's checkpoint: it hands over bytes the checkpoint
    stands for. Dropped while the engine restored that checkpoint, they were 'read on' by rebuilding the engine from
    the whole log (minutes on a 1 GB log), though nothing in them was new."""
    config = _eager()
    path, lines, _ = _log(tmp_path, config, monkeypatch)
    _append(path, lines[len(lines) // 2 :])
    cold = _cold(path, config, tmp_path, monkeypatch)
    _first_view(config, path)  # a first view keeps the whole log's checkpoint

    restoring, restore = threading.Event(), threading.Event()

    class Gated(FedWatch):
        def _checkpoint(self, now: int, least: int = 0) -> Any:
            restoring.set()
            assert restore.wait(WAIT), "the test never let the restore go on"
            return super()._checkpoint(now, least)

    fed, reader = Gated(config, live=False), object()
    tailer = Tailer(path)
    store = LineStore(path, tailer)
    update = tailer.poll(max_bytes=path.stat().st_size // 2)  # the view's index stood for these bytes
    unread = tailer.offset
    fed.begin(reader, path, read_log_header(path), store, unread=unread)
    # the rest of the log, which the checkpoint stands for too, handed over while the engine restores it
    raised = _taken_meanwhile(fed, reader, tailer, path, monkeypatch, lambda: fed.poll(NOW), restoring, restore)
    assert update.events
    assert fed.start_bytes == 0, f"the engine read {fed.start_bytes} bytes a checkpoint stood for"
    assert _dated(raised) == _dated(cold)


def test_bytes_dropped_while_a_new_view_finds_the_start_taken_in_are_read_on_from_where_the_engine_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine took in the whole log from a first view's hand-overs; the log grows and a new view goes on from an
    index of the old end. The engine has nothing of the start to read, yet it counted as reading while it found so:
    a hand-over dropped then was read on with a reader of the engine's own from the log's first byte (minutes on a
    1 GB log), there being no reader of its own where it stood."""
    config = _eager()
    path, lines, cold = _log(tmp_path, config, monkeypatch)
    checking, check = threading.Event(), threading.Event()

    class Gated(FedWatch):
        def _take_start(self, now: int, pace: Callable[[], None] | None) -> None:
            checking.set()
            assert check.wait(WAIT), "the test never let the engine go on"
            super()._take_start(now, pace)

    fed, reader = Gated(config, live=False), object()
    tailer = Tailer(path)
    fed.begin(reader, path, read_log_header(path), LineStore(path, tailer))  # no index: all handed over
    with monkeypatch.context() as m:
        m.setattr(fed, "HELD", 0)  # the view feeds it all itself (a poll would tick the clock rules mid-log)
        fed.take(reader, *_read(tailer))
    assert not fed._waiting
    _append(path, lines[len(lines) // 2 :])
    view = object()
    tailer = Tailer(path)  # a new view, whose index stands for the log as the engine took it in
    store = LineStore(path, tailer)
    tailer.poll(max_bytes=path.stat().st_size - sum(map(len, lines[len(lines) // 2 :])))
    fed.begin(view, path, read_log_header(path), store, unread=tailer.offset)

    def feed() -> list[Alert]:
        raised = fed.poll(NOW)
        checking.set()  # the engine had nothing to read: the view hands over after this poll
        return raised

    raised = _taken_meanwhile(fed, view, tailer, path, monkeypatch, feed, checking, check)
    assert fed.start_bytes == 0, f"the engine read {fed.start_bytes} bytes of the log again"
    assert _dated(raised) == _dated(cold)


def test_what_waits_is_counted_right_once_dropped_bytes_are_read_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bytes dropped while the engine reads stand as one ``_ReadOn`` among what waits, counted as no item; taking it
    off the queue took one item off the count (a ``_ReadOn`` is a tuple of one), so the count went below what waits
    by one for each, and the limit on what the view leaves waiting rose as much."""
    config = _eager()
    path, lines, cold = _log(tmp_path, config, monkeypatch)
    fed, reader = FedWatch(config, live=False), object()
    tailer = Tailer(path)
    store = LineStore(path, tailer)
    tailer.poll()
    fed.begin(reader, path, read_log_header(path), store, unread=path.stat().st_size)
    monkeypatch.setattr(fed, "HELD_BYTES", 1)
    _append(path, lines[len(lines) // 2 :])
    fed.take(reader, *_read(tailer))
    assert any(type(batch) is _ReadOn for batch, _, _ in fed._waiting)
    fed.loaded(reader, path.stat().st_size)
    raised = fed.poll(NOW)
    assert not fed._waiting and (fed._held, fed._held_bytes) == (0, 0)
    assert _dated(raised) == _dated(cold)


def test_a_read_stopped_by_a_new_view_goes_on_from_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine reads the log's start itself and a new view of the log (the operator back from a child session)
    stops it halfway: the next poll goes on from there. Before, it read the log from byte 0 again (on a 1 GB log,
    every hop to a child and back cost the minutes already spent)."""
    monkeypatch.setattr(FedWatch, "FOLD", 8)
    monkeypatch.setattr(follow, "SLICE", 1 << 14)
    config = _eager()
    path, _, _ = _log(tmp_path, config, monkeypatch)
    cold = _cold(path, config, tmp_path, monkeypatch)
    size = path.stat().st_size
    stops = _Stops(lambda: fed._own is not None and fed._own.offset >= size // 2)  # halfway through the start
    fed, reader = FedWatch(config, live=False, pace=stops), object()
    feeding = _Asked(fed)
    tailer = Tailer(path)  # the view, whose index stood for the whole log
    store = LineStore(path, tailer)  # made before the view reads: it notes where each line is
    tailer.poll()
    fed.begin(reader, path, read_log_header(path), store, unread=size)
    raised: list[Any] = []
    polls = _thread(lambda: raised.extend(fed.poll(NOW)))
    assert stops.reached[0].wait(WAIT)
    again = Tailer(path)  # the new view
    store = LineStore(path, again)
    again.poll()
    view = object()
    begun = _thread(lambda: fed.begin(view, path, read_log_header(path), store, unread=size))
    assert feeding.asked.wait(WAIT)  # begin asked the read to stop (at its next unit), then waits for the engine
    assert fed._stop
    stops.open[0].set()
    polls.join(WAIT)
    begun.join(WAIT)
    raised += _ended(fed, view, path)
    assert fed.start_bytes == size, f"the engine read {fed.start_bytes:,} bytes of a {size:,}-byte start"
    assert _dated(raised) == _dated(cold)
