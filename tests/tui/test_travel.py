"""``tui.travel.TimeTravel`` without an app: what a worker reads while another worker's sync starts over."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from core.read.load import load_session
from core.read.session import Session
from tests.tui.logs import policy_log
from tui.travel import TimeTravel


class _Live:
    """The two parts of a live session time travel reads (its projection and the lock guarding it); once armed
    with ``reload``, the first time the lock is taken while no sync runs (when another worker's sync may come), the
    reload runs first."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._lock = threading.Lock()
        self.reload: Callable[[], None] | None = None
        self.syncing: Callable[[], bool] = lambda: False

    @property
    def lock(self) -> _Live:
        return self

    def __enter__(self) -> None:
        reload = self.reload
        if reload is not None and not self.syncing():
            self.reload = None
            reload()
        self._lock.acquire()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._lock.release()


@pytest.mark.parametrize("read", ["stop_at", "stop_at_request", "request"])
def test_a_sync_that_starts_over_leaves_a_read_under_way_whole(fixtures_dir: Path, tmp_path: Path, read: str) -> None:
    """``TimeTravel`` read ``points``, ``timeline`` and ``marks`` outside its sync lock, so a worker whose read came
    while another worker's sync started over on a replaced log (a shorter one) mixed the two logs: the old log's
    session with the new log's timeline (an IndexError past its end), or an index into the new log's requests.
    A read answers from the ``Moments`` its own sync saw."""
    old = load_session(policy_log().write(tmp_path / "session.jsonl"))  # six requests
    new = load_session(fixtures_dir / "compaction-recovery.session.jsonl")  # three, and fewer events
    seq = old.next_seq - 1
    reads: dict[str, Callable[[TimeTravel], Any]] = {
        "stop_at": lambda travel: travel.sync().stop_at(seq),
        "stop_at_request": lambda travel: travel.sync().stop_at_request(5),
        "request": lambda travel: travel.sync().request(5),
    }
    expected = reads[read](TimeTravel(_Live(old)))  # type: ignore[arg-type]

    live = _Live(old)
    travel = TimeTravel(live)  # type: ignore[arg-type]
    travel.sync()

    def reload() -> None:
        live.session = new
        travel.sync()

    live.syncing = travel._sync_lock.locked
    live.reload = reload
    got = reads[read](travel)
    assert live.reload is None, "the reload never came"
    if read == "request":
        assert (got.index, got.request.body) == (expected.index, expected.request.body)
    else:
        assert (got.moment, got.surface, got.point) == (expected.moment, expected.surface, expected.point)
