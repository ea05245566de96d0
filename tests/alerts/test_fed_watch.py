"""``FedWatch``: the alert engine of a log another reader reads (the TUI's view). What it is handed raises what a
watch reading the file raises; the same file handed over again by a new reader raises nothing twice; a new file
(a reset) starts a new engine, which raises only what was not raised before; only the reader that began last is
listened to."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.alerts.follow import AlertWatch, FedWatch
from core.log.store import EventStore
from tests.alerts.crafted import HEADER, Log, config

CONFIG = config({"errorStreak": {"count": 2}, "loop": {"count": 2}})


def _log(tmp_path: Path) -> tuple[Path, Log]:
    log = Log()
    log.header()
    log.turn(1)
    for _ in range(2):
        log.call("read_file", '{"path": "a.py"}')
        log.result(True)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *log.events]))
    return path, log


def _store(events: list[dict[str, Any]]) -> EventStore:
    """The store of a reader that holds ``events``."""
    store = EventStore()
    for event in events:
        store.append(event)
    return store


def _key(alerts: list) -> list[tuple[str, int, str]]:  # type: ignore[type-arg]
    return [(a.cause, a.seq, a.reason) for a in alerts]


def _dated(alerts: list) -> list[tuple[str, int, str, int | None]]:  # type: ignore[type-arg]
    return [(a.cause, a.seq, a.reason, a.at) for a in alerts]


def test_what_it_is_handed_raises_what_reading_the_file_raises(tmp_path: Path) -> None:
    path, log = _log(tmp_path)
    read = AlertWatch(path, CONFIG, live=False).poll(0, final=True)
    fed = FedWatch(CONFIG, live=False)
    reader = object()
    fed.begin(reader, path, HEADER, _store(log.events))
    for event in log.events:  # one at a time, as a follower hands them over
        fed.take(reader, [event])
    assert _key(fed.poll(0)) == _key(read) and len(read) == 2
    assert fed.poll(0) == []


def test_it_tells_the_alerts_of_the_history_it_loaded_from_those_raised_live_and_which_are_over(tmp_path: Path) -> None:
    log = Log()
    log.turn(1)
    log.result(True)
    log.result(False)
    log.add("tapedeck/state", {"state": "paused"})
    log.add("tapedeck/state", {"state": "running"})  # resumed: the paused alert is over
    log.add("tapedeck/state", {"state": "paused"})  # paused again: it holds
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *log.events]))
    fed = FedWatch(config({"errorStreak": {"count": 1}}), live=False)
    reader = object()
    fed.begin(reader, path, HEADER, _store(log.events))
    fed.take(reader, log.events)
    assert fed.loading  # the pass goes on: no tick yet
    history = fed.poll(0)
    fed.loaded(reader, None)
    history += fed.poll(0)
    assert not fed.loading and [(a.cause, a.seq) for a in history] == [("error-streak", 1), ("waiting", 3),
                                                                        ("waiting", 5)]  # fmt: skip
    assert all(map(fed.replayed, history))
    assert [(a.cause, a.seq) for a in fed.recalled(history)] == [("error-streak", 1), ("waiting", 5)]
    log.result(True)
    fed.take(reader, log.events[-1:])
    live = fed.poll(0)
    assert [(a.cause, a.seq) for a in live] == [("error-streak", 6)] and not fed.replayed(live[0])


def test_a_new_reader_of_the_same_file_raises_nothing_twice_and_a_reset_starts_over(tmp_path: Path) -> None:
    path, log = _log(tmp_path)
    fed = FedWatch(CONFIG, live=False)
    first, second = object(), object()
    events = _store(log.events)
    fed.begin(first, path, HEADER, events)
    fed.take(first, log.events[:5])
    assert _key(fed.poll(0)) == [("loop", 4, "read_file called 2 times with the same arguments in this turn")]
    fed.begin(second, path, HEADER, events)  # the view reopened the log: it hands everything over again
    fed.take(first, log.events[5:])  # the reader it replaced is no longer listened to
    assert fed.poll(0) == []
    fed.take(second, log.events)
    assert _key(fed.poll(0)) == [("error-streak", 5, "2 tool calls failed in a row")]
    fed.begin(first, path, HEADER, events, reset=True)  # the file was replaced by the same log: nothing fires twice
    fed.take(first, log.events)
    assert fed.poll(0) == []
    fed.begin(second, path, {**HEADER, "id": "crafted-2"}, events, reset=True)  # another session in its place
    fed.take(second, log.events)
    assert [a.cause for a in fed.poll(0)] == ["loop", "error-streak"]


def _view_fed(path: Path, cfg: Any) -> list:  # type: ignore[type-arg]
    """The alerts of ``path`` as the TUI's view hands it over: its load pass, packed rows unexpanded."""
    from tui.live import LiveSession

    fed = FedWatch(cfg, live=False)
    LiveSession(path, follow=False, alerts=fed).run()
    assert fed.done.is_set()
    return fed.poll(0)


class MemberWatch(AlertWatch):
    """A watch that folds more from the events it sees, so its engine gets packed rows as their members."""

    def seen(self, events: list[dict[str, Any]]) -> None:
        assert all(isinstance(event, dict) for event in events)


def test_a_watch_reading_the_file_folds_every_packed_row_as_a_row_and_raises_what_its_members_raise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench.gen_session import generate
    from core.log.reader import read_log
    from core.log.records import PackedRow
    from tests.alerts.test_replay import _eager

    generated = tmp_path / "generated.jsonl"
    generate(generated, 400_000, seed=3, profile="dsh-plain")
    cfg = _eager()
    members = MemberWatch(generated, cfg, live=False).poll(0, final=True)
    expanded = 0
    every = PackedRow.events

    def counted(row: PackedRow) -> list[dict[str, Any]]:
        nonlocal expanded
        expanded += 1
        return every(row)

    monkeypatch.setattr(PackedRow, "events", counted)
    read = AlertWatch(generated, cfg, live=False).poll(0, final=True)
    assert members and _dated(read) == _dated(members)
    rows = [row for row in read_log(generated, packed_rows=True).events if type(row) is PackedRow]
    back = sum(1 for row in rows if any(b < a for a, b in zip(row.times(), row.times()[1:], strict=False)))
    assert back and expanded == 0  # a row whose clock goes back is folded as a row too, its times one by one


def test_a_view_handing_over_packed_rows_raises_what_reading_member_by_member_does(tmp_path: Path) -> None:
    from bench.gen_session import generate
    from tests.alerts.test_replay import _eager
    from tests.conftest import FIXTURES

    generated = tmp_path / "generated.jsonl"
    generate(generated, 400_000, seed=3, profile="short-turns")  # packed rows with real times, priced steps
    cfg = _eager()
    for path in [*sorted(FIXTURES.glob("*.jsonl")), generated]:
        read = MemberWatch(path, cfg, live=False).poll(0, final=True)
        assert _dated(_view_fed(path, cfg)) == _dated(read), path.name
        assert _dated(AlertWatch(path, cfg, live=False).poll(0, final=True)) == _dated(read), path.name
    assert {a.cause for a in MemberWatch(generated, cfg, live=False).poll(0, final=True)} >= {"budget", "run-rate"}
    brisk = config({"runRate": {"usdPerHour": 0.1, "windowMinutes": 1}})  # the rate falls in pauses and comes back
    read = MemberWatch(generated, brisk, live=False).poll(0, final=True)
    assert [a.cause for a in read].count("run-rate") > 3
    assert _dated(_view_fed(generated, brisk)) == _dated(read)


@settings(max_examples=60, deadline=None)
@given(
    gaps=st.lists(st.integers(min_value=-5_000, max_value=200_000), min_size=0, max_size=12),
    start=st.sampled_from([5_000, 1_800_000_000_000]),  # offsets from 0 (a log without times) or clock times
    spent_ago=st.integers(min_value=0, max_value=400_000),
)
def test_a_packed_row_folds_as_its_members_one_by_one(gaps: list[int], start: int, spent_ago: int) -> None:
    from core.alerts.engine import AlertEngine
    from core.log.records import PackedRow

    cfg = config({"runRate": {"usdPerHour": 1, "windowMinutes": 1}, "errorStreak": {"count": 1}})
    log = Log(start_ms=start - spent_ago - 2_000)
    log.header()
    log.turn(1)
    log.usage(1, 1, miss=300_000)  # $3 just before the deltas
    row = {"type": "text-chunks", "data": {"turn": 1, "step": 1, "index": 0, "texts": ["x"] * (len(gaps) + 1),
                                           "dt": gaps}}  # fmt: skip
    packed = PackedRow(row, len(log.events), start)
    after = {"type": "tool/result", "seq": packed.seq0 + packed.count, "time": max(packed.times()) + 1,
             "data": {"turn": 1, "step": 1, "message": {"role": "tool", "content": []}}}  # fmt: skip
    engines = [AlertEngine(cfg.alerts, cfg.model), AlertEngine(cfg.alerts, cfg.model)]
    for engine in engines:
        engine.start(HEADER)
        engine.feed(log.events, 0)
    rowwise = engines[0].feed([packed], 0)
    memberwise = engines[1].feed(packed.events(), 0)
    one, other = engines[0].signals, engines[1].signals
    assert (one.seq, one.last_time, one.first_time, list(one.spend)) == (other.seq, other.last_time, other.first_time,
                                                                         list(other.spend))  # fmt: skip
    assert engines[0].transitions == engines[1].transitions
    rowwise += engines[0].feed([after], 0)
    memberwise += engines[1].feed([after], 0)
    assert _dated(rowwise) == _dated(memberwise)
    assert engines[0].transitions == engines[1].transitions


def test_a_view_that_goes_on_from_its_index_leaves_the_engine_to_read_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench.gen_session import generate
    from core.read import index
    from tests.alerts.test_replay import _eager
    from tui.live import LiveSession

    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")
    path = tmp_path / "session.jsonl"
    generate(path, 300_000, seed=5, profile="short-turns")
    LiveSession(path, follow=False, retain_bytes=1).run()  # a first open writes the index
    assert index.index_path(path).is_file()
    cfg = _eager()
    fed = FedWatch(cfg, live=False)
    LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()  # decodes only what the index did not hold
    read = AlertWatch(path, cfg, live=False).poll(0, final=True)
    assert read and _dated(fed.poll(0)) == _dated(read)


def test_the_start_it_reads_back_itself_is_folded_in_paced_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a view restored its index the engine reads the log's start itself, in the alert feed's thread: it
    folds ``FOLD`` items at a time and calls ``pace`` after each unit (a UI thread takes the GIL there instead of
    waiting minutes of CPU out in 5 ms turns), raising what reading the whole file raises."""
    from bench.gen_session import generate
    from core.log.decoder import Consumer
    from core.log.linestore import LineStore
    from core.log.reader import read_log_header
    from core.log.tail import Tailer
    from tests.alerts.test_replay import _eager

    monkeypatch.setattr(FedWatch, "FOLD", 64)
    path = tmp_path / "session.jsonl"
    generate(path, 300_000, seed=5, profile="short-turns")
    tailer = Tailer(path)
    lines = LineStore(path, tailer)  # the store of the view whose index stood for the whole log
    update = tailer.poll()
    items = len(Tailer(path, consumer=Consumer(packed_rows=True)).poll().events)  # what the engine reads: rows as rows
    cfg = _eager()
    paced: list[int] = []
    fed = FedWatch(cfg, live=False, pace=lambda: paced.append(fed._next))
    fed.begin(object(), path, read_log_header(path), lines, unread=path.stat().st_size)  # the index stood for it all
    raised = fed.poll(0)
    read = AlertWatch(path, cfg, live=False).poll(0, final=True)
    assert read and _dated(raised) == _dated(read)
    assert len(paced) >= items // 64 and paced == sorted(paced)  # a call after every unit, as the fold moves on
    reader = object()
    calm = FedWatch(cfg, live=False, pace=lambda: paced.append(-1))
    calm.begin(reader, path, read_log_header(path), lines)
    calm.take(reader, update.events)  # the reader's own thread, when too much waits: never paced
    calm.HELD = 0
    calm.take(reader, update.events[:1])
    assert -1 not in paced


def _held_after_view(path: Path, cfg: Any) -> tuple[int, list]:  # type: ignore[type-arg]
    """Bytes the engine holds once a view that reads ``path`` back from the file handed it over and went away
    (what it still reaches of the view: its line table), and the alerts it raised."""
    import gc
    import tracemalloc

    from tui.live import LiveSession

    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fed = FedWatch(cfg, live=False)
        LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()
        raised = fed.poll(0)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - base, raised
    finally:
        tracemalloc.stop()


def test_what_it_holds_does_not_follow_a_surface_that_is_never_cut(tmp_path: Path) -> None:
    """On a log that never compacts the cache-break watcher's surface grows with the log. The engine reads the
    surface back through the view's store instead of keeping it decoded: three times the log holds about the
    same (before: 3.6 and 9.0 MiB for 1 and 3 MB of ``dsh-plain``), and raises what reading the file raises."""
    from bench.gen_session import generate
    from tests.alerts.test_replay import _eager

    cfg = _eager()
    held = []
    for size in (1_000_000, 3_000_000):
        path = tmp_path / f"{size}.jsonl"
        generate(path, size, seed=1, profile="dsh-plain")
        nbytes, raised = _held_after_view(path, cfg)
        held.append(nbytes)
        assert _dated(raised) == _dated(AlertWatch(path, cfg, live=False).poll(0, final=True))
    assert held[1] - held[0] < 1 << 20, held


def test_what_waits_to_be_fed_stays_near_one_slice_of_the_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The view hands over what it decoded a slice (``LOAD_SLICE`` bytes of the log) at a time; the engine's thread
    feeds it when it polls. A view that reads faster than the engine folds feeds the engine itself once more than
    ``HELD_BYTES`` of the log wait decoded, whatever their number of items: on a log of big tool results a few
    thousand items are megabytes (before, the whole 3 MB log below waited, 4,092 items)."""
    from bench.gen_session import generate
    from tui.live import LOAD_SLICE, LiveSession

    path = tmp_path / "session.jsonl"
    generate(path, 3_000_000, seed=1, profile="dsh-plain")
    fed = FedWatch(config({}), live=False)
    waiting: list[int] = []  # bytes of the log whose items wait, after each hand-over
    take = FedWatch.take

    def counted(self: FedWatch, reader: object, items: list[Any], nbytes: int = 0, end: int | None = None) -> None:
        take(self, reader, items, nbytes, end)
        waiting.append(sum(n for _, n, _ in self._waiting))

    monkeypatch.setattr(FedWatch, "take", counted)
    LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()  # nothing polls: only the view feeds it
    assert len(waiting) >= 3 and 0 < max(waiting) <= 2 * LOAD_SLICE < path.stat().st_size, waiting


def test_an_index_of_the_start_leaves_the_rest_to_the_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A view restored from an index of the log's first part hands over the part appended since: the engine reads
    only what the index stood for itself (so it never reads back a seq the view's line table does not hold yet),
    and raises what reading the whole file raises."""
    from bench.gen_session import generate
    from core.read import index
    from tests.alerts.test_replay import _eager
    from tui.live import LiveSession

    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")
    whole = tmp_path / "whole.jsonl"
    generate(whole, 600_000, seed=2, profile="short-turns")  # a cache break among its alerts
    lines = whole.read_bytes().splitlines(keepends=True)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines[: len(lines) // 2]))
    LiveSession(path, follow=False, retain_bytes=1).run()  # a first open indexes the first half
    assert index.index_path(path).is_file()
    with path.open("ab") as f:
        f.write(b"".join(lines[len(lines) // 2 :]))
    cfg = _eager()
    fed = FedWatch(cfg, live=False)
    LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()
    read = AlertWatch(path, cfg, live=False).poll(0, final=True)
    assert {"cache-break"} <= {a.cause for a in read}
    assert _dated(fed.poll(0)) == _dated(read)


def _held_by_engine(add: Callable[[Log], Any], times: int) -> int:
    """Bytes an engine with the cache-break rule on holds after ``times`` events made by ``add``, in a step."""
    import gc
    import tracemalloc

    from core.alerts.engine import AlertEngine
    from tests.alerts.test_replay import _eager

    log = Log()
    log.header()
    log.turn(1)
    log.add("step/start", {"turn": 1, "step": 1})
    head = len(log.events)
    for _ in range(times):
        add(log)
    cfg = _eager()
    engine = AlertEngine(cfg.alerts, cfg.model)
    engine.start(HEADER)
    engine.feed(log.events[:head])
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        engine.feed(log.events[head:])
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert engine._requests is not None and engine._requests.session.next_seq == len(log.events)
    return held


def test_the_cache_break_pass_keeps_nothing_per_stream_delta() -> None:
    """The engine's own projection (the cache-break rule's request pass) asks no event's turn, so it keeps no
    per-event column: 200,000 stream deltas left 1 MB of turn numbers behind (a 500 MB ``dsh-plain`` log has
    5.5 million events, 26 MiB)."""
    delta = {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}
    held = _held_by_engine(lambda log: log.add("assistant/chunk", delta), 200_000)
    assert held < 64 << 10, held


def test_the_cache_break_pass_files_no_tool_call() -> None:
    """Nor does it file tool calls (``tool_calls``), which building a request never reads: 20,000 calls left
    5 MB behind (25,612 on a 500 MB ``dsh-plain`` log)."""
    held = _held_by_engine(lambda log: log.call("read_file", '{"path": "a.py"}'), 20_000)
    assert held < 256 << 10, held


def test_alerts_raised_but_not_yet_told_before_a_reset_are_told_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The view fed the engine itself (too much waited) and the file was then replaced by the same log before the
    alert feed polled: the new engine raises the same alerts reading it, and each is told once, not twice."""
    path, log = _log(tmp_path)
    fed, reader = FedWatch(CONFIG, live=False), object()
    events = _store(log.events)
    monkeypatch.setattr(fed, "HELD", 0)  # every take is fed at once, in the view's thread
    fed.begin(reader, path, HEADER, events)
    fed.take(reader, log.events)
    fed.begin(reader, path, HEADER, events, reset=True)
    fed.take(reader, log.events)
    assert [a.cause for a in fed.poll(0)] == ["loop", "error-streak"]
    assert fed.poll(0) == []


def test_a_log_replaced_while_one_poll_reads_it_tells_each_alert_once(tmp_path: Path) -> None:
    """The file is replaced by the same log while a poll reads it (between two of its slices, where ``pace`` runs):
    the alerts read from the old file are told, and reading the new one from its start tells none of them again."""
    path, _ = _log(tmp_path)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(path.read_bytes())

    def pace() -> None:  # after the slice that read the whole file: the next slice finds another file
        if watch.tailer.offset == path.stat().st_size and copy.exists():
            os.replace(copy, path)

    watch = AlertWatch(path, CONFIG, live=False, pace=pace)
    assert [a.cause for a in watch.poll(0)] == ["loop", "error-streak"]
    assert not copy.exists(), "the file was replaced during the poll"
    assert watch.poll(0) == []


def test_a_host_that_exited_after_ending_its_turn_is_not_taken_for_dead_before_the_view_reads_the_end(
    tmp_path: Path,
) -> None:
    """The host logs the end of its turn, then exits and says so in host.json. A tick between the two reads (the
    view has not read the turn's end yet) must not raise host-died for a turn that did end: the reading waits
    while the log holds bytes the engine has not taken in (up to ``EXIT_WAIT_MS``)."""
    from core.control.host_state import write_state

    log = Log()
    log.add("tapedeck/host", {"model": "crafted-model"})
    log.add("tapedeck/state", {"state": "running"})
    log.turn(1)
    log.call("read_file", '{"path": "a.py"}')
    head = [HEADER, *log.events]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in head))
    fed = FedWatch(config({"hostDied": {}}), live=True)
    reader = object()
    fed.begin(reader, path, HEADER, _store(log.events))
    fed.take(reader, list(log.events), end=path.stat().st_size)
    fed.loaded(reader, path.stat().st_size)  # the view's first pass is over: the clock rules run
    assert fed.poll(log.time) == []
    n = len(log.events)
    log.add("tapedeck/control", {"op": "stop", "requestId": "r1", "outcome": "applied"})
    log.end(1, "aborted")
    log.add("tapedeck/state", {"state": "exited"})
    with open(path, "a") as f:
        f.write("".join(json.dumps(e) + "\n" for e in log.events[n:]))
    write_state(path, "exited", os.getpid() + 1_000_000, log.time)
    assert fed.poll(log.time) == [] and "host-died" not in fed.engine.active  # the view is behind: the reading waits
    fed.take(reader, log.events[n:], end=path.stat().st_size)
    assert fed.poll(log.time + 1_000) == []
    assert [a.cause for a in fed.engine.fired] == []


def test_a_host_that_died_mid_turn_is_still_told_when_the_log_ends_in_a_torn_line(tmp_path: Path) -> None:
    """A host killed mid-write leaves a torn last line the view never hands over: the exited reading waits for it
    only so long, then host-died is raised."""
    from core.alerts.follow import EXIT_WAIT_MS

    log = Log()
    log.add("tapedeck/host", {"model": "crafted-model"})
    log.turn(1)
    path = tmp_path / "session.jsonl"
    # as a host writes it (no spaces): the log's head names its host, whose host.json is gone
    path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in [HEADER, *log.events]))
    fed = FedWatch(config({"hostDied": {}}), live=True)
    reader = object()
    fed.begin(reader, path, HEADER, _store(log.events))
    fed.take(reader, list(log.events), end=path.stat().st_size)
    fed.loaded(reader, path.stat().st_size)  # the view's first pass is over: the clock rules run
    with open(path, "a") as f:
        f.write('{"type":"tool/call","seq":3,"da')  # no host.json, no lock: a host that died without a word
    # its last write was its dying one, on the clock its events were written by (the log's, not this machine's)
    os.utime(path, ns=((log.time + 500) * 1_000_000,) * 2)
    now = log.time + 1_000
    assert fed.poll(now) == []
    (alert,) = fed.poll(now + EXIT_WAIT_MS)
    assert (alert.cause, alert.reason) == ("host-died", "the host exited in the middle of turn 1")


def _beat(path: Path, heartbeat: int) -> None:
    """The bridge.json a DSH bridge of another machine writes (a boot id not this one's: no pid to check here)."""
    bridge = {"kind": "dsh", "state": "running", "pid": 4242, "procStart": "77", "bootId": "another-machine-boot",
              "since": heartbeat - 60_000, "heartbeat": heartbeat, "sessionId": "x", "plugin": "tapedeck-bridge/0.1.0"}  # fmt: skip
    (path.parent / "bridge.json").write_text(json.dumps(bridge))


def _fed_mid_turn(tmp_path: Path, now: int, heartbeat: int) -> tuple[FedWatch, Path]:
    """A FedWatch (host-died on) of a log whose turn 1 is open, run by another machine's DSH whose bridge.json says
    ``heartbeat``; and the log's path."""
    log = Log(start_ms=now - 10_000)
    log.turn(1)
    log.call("read_file", '{"path": "a.py"}')
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *log.events]))
    _beat(path, heartbeat)
    fed = FedWatch(config({"hostDied": {}}), live=True)
    reader = object()
    fed.begin(reader, path, HEADER, _store(log.events))
    fed.take(reader, list(log.events), end=path.stat().st_size)
    fed.loaded(reader, path.stat().st_size)
    return fed, path


def test_one_stale_heartbeat_read_between_fresh_ones_raises_no_host_died(tmp_path: Path) -> None:
    """A bridge another machine writes (a shared or NFS directory) is live by its heartbeat alone; NFS attribute
    caching can serve a read of bridge.json a few seconds behind, whose heartbeat looks stale: one such read between
    fresh ones raised host-died (critical) for a DSH that never stopped. A stale heartbeat is believed once the
    readings over ``HEARTBEAT_FRESH_MS`` say so; a DSH that did stop is then told, as before."""
    import time

    from core.bridge.files import HEARTBEAT_FRESH_MS

    now = int(time.time() * 1000)
    fed, path = _fed_mid_turn(tmp_path, now, now)
    assert fed.poll(now) == [] and fed.host is not None and fed.host.state == "running"
    _beat(path, now - HEARTBEAT_FRESH_MS - 1_000)  # a read served from a cache: the heartbeat of seconds ago
    assert fed.poll(now + 1_000) == [] and "host-died" not in fed.engine.active
    _beat(path, int(time.time() * 1000))  # the next read is fresh
    assert fed.poll(now + 2_000) == []
    _beat(path, now - HEARTBEAT_FRESH_MS - 1_000)  # DSH stopped: its heartbeat stays old
    assert fed.poll(now + 3_000) == []
    assert fed.poll(now + 3_000 + HEARTBEAT_FRESH_MS - 1) == []
    (alert,) = fed.poll(now + 3_000 + HEARTBEAT_FRESH_MS)
    assert (alert.cause, alert.reason) == ("host-died", "DSH exited in the middle of turn 1")
    assert [a.cause for a in fed.engine.fired] == ["host-died"]


def test_a_stale_heartbeat_at_a_followers_first_reading_waits_as_any_other(tmp_path: Path) -> None:
    """The wait for readings to confirm a stale heartbeat began only after a live reading: a follower whose very
    first reading was one a cache served seconds late took it at once, and raised host-died (critical) on that one
    read for a DSH that never stopped. A follower's first reading waits as any other (the host's state is unknown
    meanwhile); a one-off report (``final``), which has no later reading, still takes it as it is."""
    import time

    from core.bridge.files import HEARTBEAT_FRESH_MS

    now = int(time.time() * 1000)
    fed, path = _fed_mid_turn(tmp_path, now, now - HEARTBEAT_FRESH_MS - 1_000)  # its first read served from a cache
    assert fed.poll(now) == [] and "host-died" not in fed.engine.active
    _beat(path, int(time.time() * 1000))  # the next read is fresh
    assert fed.poll(now + 1_000) == [] and fed.host is not None and fed.host.live
    _beat(path, now - HEARTBEAT_FRESH_MS - 1_000)  # DSH stopped
    assert fed.poll(now + 2_000) == []
    (alert,) = fed.poll(now + 2_000 + HEARTBEAT_FRESH_MS)
    assert alert.cause == "host-died"
    once = AlertWatch(path, config({"hostDied": {}}))
    assert [a.cause for a in once.poll(now, final=True)] == ["host-died"]
