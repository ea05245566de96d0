"""``tui.travel.TimeTravel`` without an app: what a worker reads while another worker's sync starts over."""

from __future__ import annotations

import bisect
import dataclasses
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.read.load import load_session
from core.read.session import Session
from core.rebuild.request import Point
from tests.conftest import allocated_peak
from tests.log.helpers import HEADER, assistant, number, user
from tests.tui.logs import policy_log
from tui.travel import Moments, Seen, TimeTravel


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

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._lock.release()


@pytest.mark.parametrize("read", ["stop_at", "stop_at_request", "request"])
def test_a_sync_that_starts_over_leaves_a_read_under_way_whole(
    fixtures_dir: Path, tmp_path: Path, read: str
) -> None:
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


@st.composite
def _requests(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[int]]:
    """A log of turns of steps whose requests go out once or again (a retry, a failed stream), cut anywhere (the
    last request then in flight), and the counts of events after which a sync comes."""
    body: list[dict[str, Any]] = [
        {"type": "request/header", "data": {"header": {"system": "s", "config": {}}}}
    ]
    for turn in range(1, draw(st.integers(1, 4)) + 1):
        body.append({"type": "turn/start", "data": {"turn": turn}})
        for step in range(1, draw(st.integers(1, 3)) + 1):
            at = {"turn": turn, "step": step}
            body.append({"type": "step/start", "data": at})
            if step == 1:
                body.append(user(f"task {turn}"))
            for again in draw(st.lists(st.sampled_from(["retry", "failed"]), max_size=2)):
                body.append(
                    {"type": "assistant/chunk", "data": {**at, "chunk": {"type": "text-delta", "text": "x"}}}
                )
                if again == "retry":
                    body.append({"type": "llm/retry", "data": at})
                else:
                    failed = {"type": "finish", "reason": {"kind": "error"}}
                    body.append({"type": "assistant/chunk", "data": {**at, "chunk": failed}})
            body.append(assistant(turn, step, f"answer {turn}.{step}"))
            body.append({"type": "step/end", "data": at})
        body.append({"type": "turn/end", "data": {"turn": turn, "reason": {"kind": "completed"}}})
    events = number(body[: draw(st.integers(1, len(body)))])
    syncs = sorted(draw(st.lists(st.integers(1, len(events)), max_size=5)))
    return events, [*syncs, len(events)]


class _Unread(Sequence[Point]):
    """Requests no read may touch: any read fails the test."""

    def __len__(self) -> int:
        raise AssertionError("the requests were read")

    def __getitem__(self, index: Any) -> Any:
        raise AssertionError("the requests were read")


def _synced(case: tuple[list[dict[str, Any]], list[int]]) -> Iterator[Moments]:
    """What ``TimeTravel.sync`` gives after each piece of ``case``'s log (its events, the counts synced at) is
    applied to one session."""
    events, syncs = case
    session = Session.from_events(HEADER, [])
    travel = TimeTravel(_Live(session))  # type: ignore[arg-type]
    fed = 0
    for upto in syncs:
        for event in events[fed:upto]:
            session.apply(event)
        fed = upto
        yield travel.sync()


@settings(max_examples=100, deadline=None)
@given(_requests())
def test_the_request_at_a_seq_is_found_without_listing_every_request_again(
    case: tuple[list[dict[str, Any]], list[int]],
) -> None:
    """``Moments.point_at`` listed the seq of every request the log held on each key press (``,``/``.``, ``T``,
    ``R``, a click on the chart) to bisect it: O(requests) per key. ``TimeTravel.sync`` now keeps that list as
    requests arrive (``Moments.seqs``) and a key press only bisects it, never reading a request. Its answers are the
    old ones at every seq of a log synced piece by piece (the request in flight as the log ends among them), and
    what a sync saw stays as it was while later syncs take in more."""
    synced = []
    for moments in _synced(case):
        listed = [p.seq for p in moments.points]
        assert list(moments.seqs) == listed
        blind = dataclasses.replace(moments, points=_Unread())
        for seq in range(-1, moments.seen + 1):
            old = bisect.bisect_right(listed, seq) - 1
            assert blind.point_at(seq) == (old if old >= 0 else None), seq
        synced.append((moments, list(moments.points), listed))
    for moments, points, listed in synced:
        assert (list(moments.points), list(moments.seqs)) == (points, listed)


@settings(max_examples=100, deadline=None)
@given(_requests())
def test_a_step_s_first_request_is_the_one_a_scan_of_every_request_finds(
    case: tuple[list[dict[str, Any]], list[int]],
) -> None:
    """``Moments.step_request`` (the Router's pick) answers from the first request of each step kept as requests
    arrive, as the scan of every request it replaces did: for every step of a log synced piece by piece (the
    request in flight as the log ends among them, retries too), and still for what an earlier sync saw once later
    ones took in more."""
    synced = list(_synced(case))
    for moments in synced:
        steps = {(turn, step) for turn in range(6) for step in range(5)}
        for turn, step in steps:
            scanned = next(
                (i for i, p in enumerate(moments.points) if (p.turn, p.step) == (turn, step)), None
            )
            assert moments.step_request(turn, step) == scanned, (turn, step)


def _long_log(requests: int) -> list[dict[str, Any]]:
    """A log of ``requests`` one-step turns, then a turn whose request went out, and last the first two deltas of
    its answer."""
    body: list[dict[str, Any]] = [
        {"type": "request/header", "data": {"header": {"system": "s", "config": {}}}}
    ]
    for turn in range(1, requests + 2):
        at = {"turn": turn, "step": 1}
        body += [
            {"type": "turn/start", "data": {"turn": turn}},
            {"type": "step/start", "data": at},
            user(f"t{turn}"),
        ]
        if turn <= requests:
            body += [assistant(turn, 1, "ok"), {"type": "step/end", "data": at}]
            body.append({"type": "turn/end", "data": {"turn": turn, "reason": {"kind": "completed"}}})
    delta = {
        "type": "assistant/chunk",
        "data": {"turn": requests + 1, "step": 1, "chunk": {"type": "text-delta"}},
    }
    return number([*body, delta, delta])


def test_a_key_press_copies_none_of_the_requests_of_a_live_log() -> None:
    """Each ``,``/``.``, ``T``, ``R`` or chart click syncs first, and the sync copied the list of every request
    found and of their seqs whenever one was in flight or any event had come since the last key, as on a live log
    they mostly have: O(requests) a key (0.43 ms a sync at 20,000 requests, 24 µs at 1,000). It now hands out
    views of the lists it appends to, so a key costs what came since the last one, and a ``Moments`` read later
    still answers from what its own sync saw."""
    requests = 5000
    events = _long_log(requests)
    session = Session.from_events(HEADER, events[:-2])
    travel = TimeTravel(_Live(session))  # type: ignore[arg-type]
    before = travel.sync()
    assert len(before.points) == requests + 1 and before.points[-1].unfinished
    one_list = sys.getsizeof([0] * requests)  # what a copy of the requests' seqs alone takes

    in_flight = allocated_peak(lambda: travel.sync().point_at(3))  # nothing new, a request in flight
    assert in_flight < one_list / 4, (in_flight, one_list)

    session.apply(events[-2])  # its answer starts: the request in flight is one the log holds now
    travel.sync()
    session.apply(events[-1])
    streaming = allocated_peak(lambda: travel.sync().point_at(3))  # one new event, no new request
    assert streaming < one_list / 4, (streaming, one_list)

    after = travel.sync()
    assert [p.seq for p in after.points] == [p.seq for p in before.points]
    assert not after.points[-1].unfinished and before.points[-1].unfinished
    assert (len(before.points), before.point_at(after.seen), before.seen) == (
        requests + 1,
        requests,
        after.seen - 2,
    )
    assert {etype: list(seqs) for etype, seqs in before.marks.items()} == {"request/header": [0]} | {
        etype: [] for etype in before.marks if etype != "request/header"
    }


def _python_calls(call: Callable[[], Any]) -> int:
    """How many Python frames ``call`` ran or resumed (``sys.setprofile``), its own call aside."""
    calls = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        call()
    finally:
        sys.setprofile(None)
    return calls


@settings(max_examples=100, deadline=None)
@given(
    items=st.lists(st.integers(), max_size=30),
    data=st.data(),
    last=st.none() | st.integers(),
    start=st.none() | st.integers(-40, 40),
    stop=st.none() | st.integers(-40, 40),
    step=st.none() | st.integers(-3, 3).filter(bool),
)
def test_a_view_of_what_a_sync_saw_reads_as_that_list(
    items: list[int],
    data: st.DataObject,
    last: int | None,
    start: int | None,
    stop: int | None,
    step: int | None,
) -> None:
    """``Seen`` (the first ``count`` items, then the request in flight) indexes, slices and iterates as the list it
    stands for, whatever was appended to its list after it was made."""
    count = data.draw(st.integers(0, len(items)))
    view = Seen(items, count, last)
    expected = items[:count] + ([] if last is None else [last])
    items.append(99)  # a later sync's
    assert list(view) == expected and len(view) == len(expected)
    assert view[start:stop:step] == expected[start:stop:step]
    for at in range(-len(expected), len(expected)):
        assert view[at] == expected[at]
    with pytest.raises(IndexError):
        view[len(expected)]


def test_a_slice_of_a_view_is_copied_as_a_list_s_is() -> None:
    """Not one Python step an item: the marks ``request_at`` slices for each request it rebuilds (``R``) went
    through the view's iterator (5.4 ms for 15,000, against 0.4 ms)."""
    big = Seen(list(range(15000)), 14000, -1)
    assert _python_calls(lambda: big[:12000]) < 10
    assert big[13999:] == [13999, -1]
