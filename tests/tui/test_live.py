"""LiveSession: loading (in memory, read back from the file, with a tail preview), following, resets, read-only, control."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
import zstandard
from textual.message import Message

import tui.live as live_module
from bench.gen_session import generate
from core.read.facts import is_error_event
from core.read.load import load_session
from core.read.session import Session
from core.shared.text import quoted_path
from tests.log.helpers import zstd_log
from tests.tui.logs import Log, append, policy_log
from tui.live import READ_ONLY_DSH, LiveSession, LoadProgress, SessionUpdated


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll ``predicate`` until it holds (the test fails after ``timeout``; nothing asserts on time)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.01)


def load(path: Path, **kw: object) -> tuple[LiveSession, list[Message]]:
    messages: list[Message] = []
    live = LiveSession(path, messages.append, follow=False, **kw)  # type: ignore[arg-type]
    live.run()
    return live, messages


def test_fixture_loads_with_the_engine_projection(fixtures_dir: Path) -> None:
    path = fixtures_dir / "compaction-recovery.session.jsonl"
    live, messages = load(path)
    expected = load_session(path)
    assert live.ready and live.error is None
    assert live.session.surface == expected.surface == [21, 13, 15, 28]
    assert live.read_only_reason == READ_ONLY_DSH
    assert isinstance(messages[-2], SessionUpdated) and messages[-2].reset
    assert isinstance(messages[-1], LoadProgress) and messages[-1].phase == "ready"
    assert live.facts.errors == [18]  # the CONTEXT_WINDOW_EXCEEDED finish chunk


def test_host_log_is_controllable_and_sends_requests(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "s" / "session.jsonl")
    live, _ = load(path)
    assert live.read_only_reason is None
    assert live.facts.route == {"turn": 3, "step": 1, "taskClass": "small", "phase": "explore", "risk": {}}
    request = live.send("checkpoint", {"objective": "probe"})
    line = orjson.loads(live.inbox_path.read_bytes())
    assert line["id"] == request["id"] and line["op"] == "checkpoint"
    assert live.outcome_for(request["id"]) is None


def test_read_only_log_refuses_to_send(fixtures_dir: Path) -> None:
    live, _ = load(fixtures_dir / "multi-turn.session.jsonl")
    with pytest.raises(Exception, match="DeepSeek Harness"):
        live.send("checkpoint", {})


def test_outcomes_and_facts_are_collected(tmp_path: Path) -> None:
    log = policy_log()
    log.add(
        {
            "type": "tapedeck/control",
            "data": {"requestId": "r1", "op": "stop", "outcome": "rejected", "error": "nope"},
            "ignorable": True,
        }
    )
    live, _ = load(log.write(tmp_path / "session.jsonl"))
    assert live.outcome_for("r1") == {"requestId": "r1", "op": "stop", "outcome": "rejected", "error": "nope"}
    facts = live.facts
    assert [live.session.events[s]["type"] for s in facts.turn_starts] == ["turn/start"] * 3
    assert len(facts.step_starts) == 6 and (facts.turn, facts.step) == (3, 2)
    assert [live.session.events[s]["type"] for s in facts.errors] == ["tool/result", "tapedeck/control"]


def test_read_back_session_matches_in_memory(tmp_path: Path) -> None:
    path = policy_log().write(tmp_path / "session.jsonl")
    small, _ = load(path)
    big, _ = load(path, retain_bytes=1)
    assert not isinstance(big.session.events, list) and big.lines is not None
    assert big.session.surface == small.session.surface
    assert [big.event(n) for n in range(big.count)] == [small.event(n) for n in range(small.count)]
    assert list(big.iter_events(3, 30)) == list(small.iter_events(3, 30))


def test_the_policy_screens_find_each_type_alike_in_memory_and_read_back(tmp_path: Path) -> None:
    from tui.screens.policy_screen import logged

    path = policy_log().write(tmp_path / "session.jsonl")
    small, _ = load(path)
    big, _ = load(path, retain_bytes=1)
    assert big.lines is not None
    for event_type in (*small.session.counts, "no/such-type"):
        found = list(logged(big.session, event_type))
        assert found == list(logged(small.session, event_type))
        assert all(event["type"] == event_type for _, event in found)


@pytest.mark.parametrize("retain_bytes", [None, 1], ids=["in-memory", "read-back"])
def test_the_loader_projects_and_gathers_facts_as_the_engine_does(tmp_path: Path, retain_bytes: int | None) -> None:
    path = tmp_path / "session.jsonl"
    generate(path, 2_000_000, seed=5, profile="mixed")  # chunk events, packed rows, one failed stream
    expected = load_session(path)
    live, _ = load(path, retain_bytes=retain_bytes)
    session = live.session
    assert (session.next_seq, session.surface, session.counts) == (
        expected.next_seq, expected.surface, expected.counts,
    )  # fmt: skip
    assert [session.turn_of(n) for n in range(session.next_seq)] == [expected.turn_of(n) for n in range(expected.next_seq)]
    streams, want = session.streams, expected.streams
    assert (streams.starts, streams.ends, streams.chars) == (want.starts, want.ends, want.chars)
    assert session.usage_total() == expected.usage_total()
    errors = [e["seq"] for e in expected.events if is_error_event(e)]
    assert live.facts.errors == errors and any(expected.events[s]["type"] == "assistant/chunk" for s in errors)
    assert live.facts.turn_starts == [e["seq"] for e in expected.events if e["type"] == "turn/start"]


def _bytes_read() -> int:
    """Bytes this process has read through read(2) so far (Linux ``/proc/self/io``)."""
    with open("/proc/self/io", "rb") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(b"rchar:"))


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io")
def test_a_big_log_is_read_once_while_loading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_module, "PREVIEW_BYTES", 1 << 30)  # no tail preview: only the loading pass
    log = policy_log(host=False)
    for turn in range(4, 1600):
        log.turn(turn, f"prompt {turn}", f"result {turn} " * 40)
    path = log.write(tmp_path / "session.jsonl")
    size = path.stat().st_size
    at_ready: list[int] = []  # what was read once the list is usable (the index is written after that)

    def post(message: object) -> None:
        if isinstance(message, LoadProgress) and message.phase == "ready":
            at_ready.append(_bytes_read())

    live = LiveSession(path, post, follow=False, retain_bytes=1)
    before = _bytes_read()
    live.run()
    read = at_ready[0] - before
    assert live.ready and live.lines is not None and live.count == len(log.events)
    # one pass, plus the header's read and the host check's look at the head (a few hundred KB at most)
    assert read < size * 1.25, f"read {read} bytes of a {size}-byte log"


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io")
def test_the_tail_preview_decodes_the_bytes_its_probe_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the tail preview of a big raw log, a probe reads its end to see that it holds enough lines, and the
    preview then read the end of the file again to decode it; it now decodes the bytes the probe read: by the
    first screen, the header's read and the probe's alone."""
    monkeypatch.setattr(live_module, "PREVIEW_BYTES", 1 << 16)
    monkeypatch.setattr(live_module, "READ_CHUNK", 1 << 16)  # the probe's slice
    monkeypatch.setattr(live_module, "PREVIEW_EVENTS", 5)  # as many as the probe's lines hold
    monkeypatch.setattr(LiveSession, "check_host", lambda self: self.host)  # its look at the log's head: not counted
    path = tmp_path / "session.jsonl"
    generate(path, 2_000_000, seed=3, profile="mixed")
    at_preview: list[int] = []

    def post(message: object) -> None:
        if isinstance(message, LoadProgress) and message.phase == "preview":
            at_preview.append(_bytes_read())

    LiveSession(path, follow=False).run()  # what the load imports is read before the count starts
    live = LiveSession(path, post, follow=False)
    before = _bytes_read()
    live.run()
    assert live.ready and at_preview
    read = at_preview[0] - before
    data, start, lines = path.read_bytes(), path.stat().st_size, 0
    while lines < live_module.PROBE_LINES:  # the slices the probe reads from the end
        lines += data[max(0, start - (1 << 16)) : start].count(b"\n")
        start = max(0, start - (1 << 16))
    probe = len(data) - start
    # the header's read (64 KiB) and the probe's slices
    assert read < (1 << 16) + probe + (1 << 14), f"read {read} bytes before the preview, the probe {probe}"


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io")
@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_a_big_log_whose_lines_give_no_seqs_is_read_once_while_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zstd: bool
) -> None:
    """A log whose lines carry no seq (DSH writes none) can be numbered only by reading it from its start: its tail
    preview decoded the whole log, and the projection then read it all again, so the first screen came after two
    passes (a 50 MB log: 105.8 MB read); such a log now has no preview and is read once."""
    monkeypatch.setattr(live_module, "PREVIEW_BYTES", 1 << 16)
    monkeypatch.setattr(live_module, "READ_CHUNK", 1 << 16)  # the tail's probe: a slice as small as the log is
    path = tmp_path / ("session.jsonl.zst" if zstd else "session.jsonl")
    generate(path, 4_000_000, seed=3, profile="dsh-plain", zstd=zstd, explicit_envelope=False)
    size = path.stat().st_size
    assert size > live_module.PREVIEW_BYTES
    at_ready: list[int] = []
    phases: list[str] = []

    def post(message: object) -> None:
        if isinstance(message, LoadProgress):
            phases.append(message.phase)
            if message.phase == "ready":
                at_ready.append(_bytes_read())

    live = LiveSession(path, post, follow=False)
    before = _bytes_read()
    live.run()
    read = at_ready[0] - before
    assert live.ready and live.count == load_session(path).next_seq
    assert read < size * 1.25, f"read {read} bytes of a {size}-byte log"
    assert "preview" not in phases


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io")
@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_a_long_range_of_a_read_back_session_is_read_from_the_line_that_holds_its_start(
    tmp_path: Path, zstd: bool
) -> None:
    log = policy_log(host=False)
    for turn in range(4, 1600):
        log.turn(turn, f"prompt {turn}", f"result {turn} " * 40)
    path = log.write(tmp_path / "session.jsonl")
    if zstd:
        path = tmp_path / "session.jsonl.zst"
        path.write_bytes(zstd_log(log.events, batch=3, header=log.header))
    size = path.stat().st_size
    small, _ = load(path)
    big, _ = load(path, retain_bytes=1)
    assert big.lines is not None
    start, stop = big.count * 9 // 10, big.count - 5  # the last tenth: thousands of events
    before = _bytes_read()
    got = list(big.iter_events(start, stop))
    read = _bytes_read() - before
    assert got == list(small.iter_events(start, stop)) and [e["seq"] for e in got] == list(range(start, stop))
    # about the tenth of the log the range spans (the turns are all alike), plus a block: never from byte 0
    assert read < size * 0.3, f"read {read} bytes of a {size}-byte log for its last tenth"


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io")
def test_the_host_check_of_a_loaded_log_does_not_read_its_head_again(tmp_path: Path) -> None:
    """The app checks who runs the session every half second; for a log with no host file (DSH's, without the
    bridge) each check read the log's first 256 KiB again to look for a tapedeck/host event, 512 KiB a second for
    as long as the view was open, though the load had seen every event; a loaded log's own facts now answer."""
    path = tmp_path / "session.jsonl"
    generate(path, 1_000_000, seed=3, profile="dsh-plain", explicit_envelope=False)
    live, _ = load(path)
    assert live.ready and live.facts.host is None
    live.check_host()  # what a check imports is read before the count starts
    before = _bytes_read()
    for _ in range(10):
        assert live.check_host().state == "none"
    read = _bytes_read() - before
    assert read < 1 << 16, f"10 host checks read {read} bytes"


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io")
def test_the_alert_engine_of_a_loaded_log_does_not_read_its_head_at_each_tick(tmp_path: Path) -> None:
    """The view's alert engine ticks its clock rules at every poll of the alert feed (ten a second) and asked the
    host's state each time, which for a log with no host file (DSH's, without the bridge) read the log's first
    256 KiB again: 2.6 MB a second of reads while the TUI sat idle on such a log; the events the engine was fed
    now say whether a tapedeck host ever ran it."""
    from core.alerts.follow import FedWatch
    from tests.tui.pilot import QUIET

    path = tmp_path / "session.jsonl"
    generate(path, 1_000_000, seed=3, profile="dsh-plain", explicit_envelope=False)
    fed = FedWatch(QUIET)
    live = LiveSession(path, follow=False, alerts=fed)
    live.run()
    assert live.ready
    fed.poll(int(time.time() * 1000))  # the pass's end taken in, and what a tick imports read
    before = _bytes_read()
    for k in range(10):
        fed.poll(int(time.time() * 1000) + k)
    read = _bytes_read() - before
    assert fed.host is not None and fed.host.state == "none"
    assert read < 1 << 16, f"10 ticks read {read} bytes"


def test_a_big_log_is_listed_from_its_head_while_it_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_module, "LOAD_SLICE", 1 << 14)
    log = policy_log(host=False)
    for turn in range(4, 200):
        log.turn(turn, f"prompt {turn}", f"result {turn} " * 40)
    path = log.write(tmp_path / "session.jsonl")
    grown: list[tuple[int, int, str]] = []

    def post(message: Message) -> None:  # the loader thread: read back what the update says is listed
        if isinstance(message, SessionUpdated) and not message.reset:
            event = live.event(message.end - 1)
            grown.append((message.start, message.end, event["type"] if event else "missing"))

    live = LiveSession(path, post, follow=False, retain_bytes=1)
    live.run()
    assert len(grown) > 10 and live.ready  # the list grew many times before the load was done
    assert all(start < end for start, end, _ in grown) and [g[0] for g in grown[1:]] == [g[1] for g in grown[:-1]]
    assert all(etype == log.events[end - 1]["type"] for _, end, etype in grown)
    assert grown[-1][1] <= len(log.events)


def test_reads_from_other_threads_while_loading_and_following_get_the_right_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_module, "LOAD_SLICE", 1 << 12)
    log = policy_log(host=False)
    for turn in range(4, 120):
        log.turn(turn, f"prompt {turn}", f"result {turn} " * 30)
    first = len(log.events)
    for turn in range(120, 160):
        log.turn(turn, f"later {turn}", "appended " * 20)
    path = tmp_path / "session.jsonl"
    path.write_bytes(log.lines([log.header, *log.events[:first]]))
    live = LiveSession(path, follow=True, interval=0.01, use_watchfiles=False, retain_bytes=1)
    wrong: list[tuple[int, object]] = []
    done = threading.Event()

    def reader(salt: int) -> None:  # what the list's and the detail pane's workers do, as fast as they can
        n = salt
        while not done.is_set():
            count = live.count
            if count:
                seq = (n * 7919) % count
                try:
                    event = live.event(seq)
                except Exception as exc:  # noqa: BLE001 (a failed read is what this test looks for)
                    wrong.append((seq, exc))
                    continue
                if event is not None and event != log.events[seq]:
                    wrong.append((seq, event))
            n += 1

    threads = [threading.Thread(target=live.run, daemon=True)]
    threads += [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(3)]
    for thread in threads:
        thread.start()
    wait_for(lambda: live.ready)
    append(path, log, first)
    wait_for(lambda: live.session.next_seq == len(log.events))
    done.set()
    live.stop()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert not wrong, wrong[:3]
    assert [live.event(n) for n in range(len(log.events))] == log.events


def test_big_raw_log_shows_a_tail_preview_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_module, "PREVIEW_BYTES", 100)
    monkeypatch.setattr(live_module, "PREVIEW_EVENTS", 5)
    monkeypatch.setattr(live_module, "PROBE_LINES", 5)
    log = policy_log()
    path = log.write(tmp_path / "session.jsonl")
    seen: list[tuple[str, int, list[int]]] = []

    def post(message: Message) -> None:
        if isinstance(message, SessionUpdated):
            seen.append((live.phase, live.count, [e["seq"] for e in live.preview]))

    live = LiveSession(path, post, follow=False)
    live.run()
    n = len(log.events)
    assert seen[0] == ("preview", n, list(range(n - 5, n)))  # painted from the tail before the projection
    assert live.event(n - 1) == log.events[-1]
    assert seen[-1] == ("ready", n, [])  # then the full projection replaces it
    assert live.epoch == 0  # the same file throughout: rows computed from the preview stay valid


def test_a_tail_of_huge_lines_skips_the_preview(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_module, "PREVIEW_BYTES", 100)
    monkeypatch.setattr(live_module, "PROBE_LINES", 10_000)  # more lines than the tail holds: "huge lines"
    path = policy_log().write(tmp_path / "session.jsonl")
    phases: list[str] = []
    live = LiveSession(path, lambda m: phases.append(getattr(m, "phase", "update")), follow=False)
    live.run()
    assert "preview" not in phases and live.ready


def test_bad_inputs_become_errors_not_crashes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"session","version":7,"id":"x","createdAt":0,"delegationDepth":0}\n')
    live, messages = load(bad)
    assert live.phase == "error" and "v7" in (live.error or "")
    assert isinstance(messages[-1], LoadProgress) and messages[-1].phase == "error"
    assert live.read_only_reason and "cannot be read" in live.read_only_reason
    missing, _ = load(tmp_path / "nope.jsonl")
    assert missing.phase == "error" and "no such file" in (missing.error or "")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\x00\x01not json\n")
    junk, _ = load(garbage)
    assert junk.phase == "error" and junk.error


class Follower:
    """A LiveSession running in a thread, with the messages it posted."""

    def __init__(self, path: Path) -> None:
        self.messages: list[Message] = []
        self.live = LiveSession(path, self.messages.append, interval=0.02, use_watchfiles=False)
        self.thread = threading.Thread(target=self.live.run, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.live.stop()
        self.thread.join(60)  # a loaded machine's follower may take its time to see the stop
        assert not self.thread.is_alive()


def test_follow_appends_and_resyncs_after_truncation_and_replacement(tmp_path: Path) -> None:
    log = policy_log()
    path = tmp_path / "session.jsonl"
    path.write_bytes(log.lines([log.header, *log.events[:10]]))
    follower = Follower(path)
    live = follower.live
    try:
        wait_for(lambda: live.phase == "following" and live.session.next_seq == 10)
        generation = live.generation
        append(path, log, 10)
        wait_for(lambda: live.session.next_seq == len(log.events))
        assert live.generation > generation
        update = [m for m in follower.messages if isinstance(m, SessionUpdated)][-1]
        assert (update.reset, update.start, update.end) == (False, 10, len(log.events))
        assert live.session.surface == Session.from_events(log.header, log.events).surface
        assert live.epoch == 0

        path.write_bytes(log.lines([log.header, *log.events[:4]]))  # truncated
        wait_for(lambda: live.session.next_seq == 4 and live.phase == "following")
        assert "truncated" in live.notices[-1].message and live.epoch == 1
        assert [m.epoch for m in follower.messages if isinstance(m, SessionUpdated)][-1] == 1
        assert any(isinstance(m, LoadProgress) and m.phase == "reset" for m in follower.messages)

        other = Log()
        other.turn(1, "new file", "x")
        replacement = tmp_path / "new.jsonl"
        other.write(replacement)
        os.replace(replacement, path)  # replaced (new inode)
        wait_for(lambda: live.session.next_seq == len(other.events) and live.phase == "following")
        assert "replaced" in live.notices[-1].message and live.epoch == 2
        assert live.event(2) == other.events[2]
    finally:
        follower.stop()


def test_a_reset_is_no_longer_ready_when_its_notice_is_posted(tmp_path: Path) -> None:
    """On a reset the follower posted its notice (``LoadProgress("reset")``) while the phase still read
    ``following``: until the reload began to project, ``ready`` held for the old session and the header said
    ``index ready · loaded``, never its ``re-reading`` (a TUI test that waited for the notice and then for the app
    to settle read the old rows under load, tests/tui/test_flows.py)."""
    from tui.widgets.header import load_state

    log = policy_log()
    path = tmp_path / "session.jsonl"
    path.write_bytes(log.lines([log.header, *log.events[:10]]))
    seen: list[tuple[bool, str, int]] = []
    follower = Follower(path)
    live = follower.live
    post = follower.messages.append

    def noted(message: Message) -> None:
        if isinstance(message, LoadProgress) and message.phase == "reset":
            seen.append((live.ready, load_state(live), len(live.notices)))
        post(message)

    live._post = noted
    try:
        wait_for(lambda: live.phase == "following" and live.session.next_seq == 10)
        path.write_bytes(log.lines([log.header, *log.events[:4]]))  # truncated
        wait_for(lambda: live.session.next_seq == 4 and live.phase == "following")
        assert seen == [(False, "re-reading", 1)]
    finally:
        follower.stop()


@pytest.mark.parametrize("gone", ["emptied", "removed"])
def test_a_log_emptied_or_removed_while_followed_takes_its_rows_with_it(gone: str, tmp_path: Path) -> None:
    """The view waits for a log again (emptied, or removed): the old session's rows are no longer shown under
    "waiting for the log to appear", as if they were the log's; the log written again is read afresh."""
    log = policy_log()
    path = tmp_path / "session.jsonl"
    log.write(path)
    follower = Follower(path)
    live = follower.live
    try:
        wait_for(lambda: live.phase == "following" and live.session.next_seq == len(log.events))
        if gone == "emptied":
            path.write_bytes(b"")
        else:
            path.unlink()
        wait_for(lambda: live.phase == ("incomplete" if gone == "emptied" else "waiting"))
        wait_for(lambda: live.session.next_seq == 0)
        update = [m for m in follower.messages if isinstance(m, SessionUpdated)][-1]
        assert (update.reset, update.end) == (True, 0) and update.epoch == live.epoch
        path.write_bytes(log.lines([log.header, *log.events]))  # written again
        wait_for(lambda: live.phase == "following" and live.session.next_seq == len(log.events))
    finally:
        follower.stop()


def test_waits_for_a_log_that_does_not_exist_yet(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    follower = Follower(path)
    try:
        wait_for(lambda: follower.live.phase == "waiting")
        policy_log().write(path)
        wait_for(lambda: follower.live.ready and follower.live.session.next_seq == len(policy_log().events))
    finally:
        follower.stop()


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "error"}}}, True),
        ({"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}}, False),
        ({"type": "llm/retry", "data": {}}, True),
        ({"type": "compaction/end", "data": {"error": "x"}}, True),
        (
            {"type": "assistant/chunk", "data": {"chunk": {"type": "finish", "reason": {"kind": "error"}}}},
            True,
        ),
        ({"type": "tapedeck/control", "data": {"outcome": "applied"}}, False),
        ({"type": "session/title", "data": "not a dict"}, False),
    ],
)
def test_is_error_event(event: dict[str, object], expected: bool) -> None:
    assert is_error_event(event) is expected


@pytest.mark.parametrize("retain_bytes", [None, 1])
def test_zstd_logs_load_and_follow(tmp_path: Path, retain_bytes: int | None) -> None:
    log = policy_log()
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(zstd_log(log.events[:20], header=log.header))
    messages: list[Message] = []
    live = LiveSession(path, messages.append, interval=0.02, use_watchfiles=False, retain_bytes=retain_bytes)
    thread = threading.Thread(target=live.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: live.phase == "following" and live.session.next_seq == 20)
        assert live.session.compressed and (live.lines is not None) == (retain_bytes == 1)
        with open(path, "ab") as f:  # one more frame, as a DSH writer appends a batch
            f.write(zstandard.ZstdCompressor(write_checksum=True).compress(log.lines(log.events[20:])))
        wait_for(lambda: live.session.next_seq == len(log.events))
        assert live.session.surface == Session.from_events(log.header, log.events).surface
        assert live.event(len(log.events) - 1) == log.events[-1]
    finally:
        live.stop()
        thread.join(5)


@pytest.mark.parametrize("born", ["empty", "half-line", "half-frame"])
def test_waits_for_a_log_being_born(tmp_path: Path, born: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log whose first line (or first zstd frame) is still being written is waited for, as an empty one is."""
    looks: list[object] = []  # each time the follower read the header of the log being born
    read = live_module.read_log_header
    monkeypatch.setattr(live_module, "read_log_header", lambda *args: (looks.append(args), read(*args))[1])
    log = policy_log()
    whole = log.lines([log.header, *log.events])
    path = tmp_path / ("session.jsonl.zstd" if born == "half-frame" else "session.jsonl")
    if born == "half-frame":
        frames = [zstandard.ZstdCompressor(write_checksum=True).compress(line + b"\n") for line in whole.splitlines()]
        whole = b"".join(frames)
        start = frames[0][: len(frames[0]) // 2]
    else:
        start = b"" if born == "empty" else whole[:20]
    path.write_bytes(start)
    follower = Follower(path)
    try:
        wait_for(lambda: follower.live.phase == "incomplete" or follower.live.phase == "error")
        seen = len(looks)  # it looks twice more at what is there, and still waits
        wait_for(lambda: len(looks) >= seen + 2 or follower.live.phase == "error")
        assert follower.live.phase == "incomplete", follower.live.error
        with open(path, "ab") as f:
            f.write(whole[len(start) :])
        wait_for(lambda: follower.live.ready and follower.live.session.next_seq == len(log.events))
        assert follower.live.error is None
    finally:
        follower.stop()


def test_a_rewrite_in_place_of_an_empty_log_is_read(tmp_path: Path) -> None:
    """``cat other > session.jsonl`` under a watch: the same inode, emptied then filled with another session."""
    first = policy_log()
    other = Log({**first.header, "id": "another-session"})
    other.turn(1, "another session", "x")
    path = tmp_path / "session.jsonl"
    path.write_bytes(first.lines([first.header, *first.events]))
    follower = Follower(path)
    live = follower.live
    try:
        wait_for(lambda: live.phase == "following" and live.session.next_seq == len(first.events))
        inode = path.stat().st_ino
        with open(path, "wb") as f:  # the shell truncates, then the copy writes
            f.flush()
            wait_for(lambda: live.phase == "incomplete")  # the follower saw it empty
            f.write(other.lines([other.header, *other.events]))
        assert path.stat().st_ino == inode
        wait_for(lambda: live.session.id == other.header["id"] and live.session.next_seq == len(other.events))
        assert live.phase == "following" and any(n.code == "log-reset" for n in live.notices)
    finally:
        follower.stop()


@pytest.mark.parametrize("failure", [OSError(5, "Input/output error"), KeyError("x")], ids=["os-error", "bug"])
def test_a_read_that_fails_names_the_log_as_every_message_names_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    """A read that stopped on an I/O error (a disk, a network mount) or on a reader bug named the log as it was, in
    the error the header and every refused action show: a directory holding ESC ] 2 or a newline was written raw
    there, where the readers' own errors name it through quoted_path."""
    path = policy_log().write(tmp_path / "lo\x1b]2;x\x07\ngs" / "session.jsonl")

    def failing(_self: LiveSession) -> None:
        raise failure

    monkeypatch.setattr(LiveSession, "_load", failing)
    live, _ = load(path)
    assert live.phase == "error" and live.error is not None
    assert live.error.startswith(f"{quoted_path(path)}: "), live.error


def test_a_session_is_built_without_touching_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app builds a LiveSession on its own thread as it opens a log (the fleet's Enter, a subagent's J), where
    the UI thread does no I/O: the constructor looked at the disk to place the DSH bridge's outcome file (a stat of
    the path). The loader's worker places it, as it reads the log."""
    path = policy_log().write(tmp_path / "session.jsonl")

    def no_disk(*_: object, **__: object) -> None:
        raise AssertionError("the disk was touched")

    with monkeypatch.context() as patched:
        patched.setattr(os, "stat", no_disk)
        patched.setattr(os, "lstat", no_disk)
        live = LiveSession(path, follow=False)
    live.run()
    assert live.ready and live.outcome_for("none") is None


def test_a_live_session_is_made_without_looking_at_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet view opens a session on the UI thread: making its LiveSession told a remote path from a local one
    there (``RemoteLog.of`` looks for a local file of that name), a system call on the thread that does no I/O."""
    asked: list[bool] = []
    real = live_module.RemoteLog.of

    def of(path: object) -> object:
        asked.append(threading.current_thread() is threading.main_thread())
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(live_module.RemoteLog, "of", of)
    path = policy_log(host=False).write(tmp_path / "session.jsonl")
    live = LiveSession(path, follow=False)
    assert asked == []
    worker = threading.Thread(target=live.run)
    worker.start()
    worker.join()
    assert live.ready and live.remote is None and asked == [False]


def _host_json_reads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each read of a host.json from here on: whether the main thread (the UI's, in the app) made it."""
    import core.control.host_state as host_state

    reads: list[bool] = []
    real = host_state.read_regular

    def read(path: Path, *args: object, **kwargs: object) -> bytes:
        if Path(path).name == host_state.STATE_FILE:
            reads.append(threading.current_thread() is threading.main_thread())
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(host_state, "read_regular", read)
    return reads


def test_the_host_poll_reads_host_json_once_and_not_again_after_the_host_exited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check of the host read host.json twice once the host ran no more, and the app's poll went on reading it
    twice a second after the host had exited for good; ``how_host_ended`` read it (on the UI thread) when asked
    with a state the last check had not read it for. A host resumed on the log is still noticed: it writes to it."""
    from core.control.host_state import HostState, write_state
    from tests.tui.logs import hold_host, release_hosts

    path = policy_log().write(tmp_path / "session.jsonl")  # its host holds the log
    write_state(path, "running", os.getpid(), 1)
    live = LiveSession(path, follow=True, interval=0.01)
    follower = threading.Thread(target=live.run)
    follower.start()
    try:
        wait_for(lambda: live.ready)
        reads = _host_json_reads(monkeypatch)
        assert live.check_host().state == "running" and len(reads) == 1
        live.how_host_ended(HostState("exited", since=1))  # asked before a check saw the exit: nothing is read
        assert len(reads) == 1
        release_hosts()
        write_state(path, "exited", os.getpid(), 2)
        assert live.poll_host().state == "exited" and len(reads) == 2
        for _ in range(5):  # the log stands still: nobody runs it
            assert live.poll_host().state == "exited"
        assert len(reads) == 2
        hold_host(path)  # resumed: the new host writes its state and logs it
        write_state(path, "running", os.getpid(), 3)
        seen = live.session.next_seq
        with path.open("ab") as f:
            f.write(orjson.dumps({"type": "tapedeck/state", "seq": seen, "time": 3, "data": {"state": "running"}}) + b"\n")
        wait_for(lambda: live.session.next_seq != seen)
        assert live.poll_host().state == "running" and len(reads) == 3
    finally:
        live.stop()
        follower.join()
        release_hosts()
