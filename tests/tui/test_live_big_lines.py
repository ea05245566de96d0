"""LiveSession on lines longer than its load slice: the projection is complete before ``loaded``; pacing."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from textual.message import Message

import tui.live as live_module
from core.log.pace import Pacer
from core.read.load import load_session
from tests.log.helpers import one_turn_with_tool, raw_log
from tui.live import LiveSession, LoadProgress


@pytest.mark.parametrize("retain_bytes", [None, 1])
@pytest.mark.parametrize("follow", [False, True])
def test_lines_longer_than_a_slice_are_all_projected_before_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retain_bytes: int | None, follow: bool
) -> None:
    monkeypatch.setattr(live_module, "LOAD_SLICE", 64)
    events = one_turn_with_tool("x" * 5000)
    path = tmp_path / "session.jsonl"
    path.write_bytes(raw_log(events))
    at_ready: list[int] = []
    done = threading.Event()

    def post(message: Message) -> None:
        if isinstance(message, LoadProgress) and message.phase in ("ready", "following"):
            at_ready.append(live.session.next_seq)
            done.set()

    live = LiveSession(path, post, follow=follow, retain_bytes=retain_bytes)
    thread = threading.Thread(target=live.run)
    thread.start()
    assert done.wait(60)
    live.stop()
    thread.join(60)
    assert at_ready == [len(events)]  # a slice inside the long result did not end the load early
    assert live.session.surface == load_session(path).surface
    assert live.session.node_chars(5) == 5000


def test_pacer_naps_between_units_of_work_and_not_after_idling() -> None:
    done = threading.Event()
    other = threading.Thread(target=done.wait)  # a thread that could want the GIL (it waits, using no CPU)
    other.start()
    try:
        pace = Pacer(every=0.0, nap=0.0, late=1.0, idle=60.0)
        for _ in range(5):
            pace()
        assert pace.naps == 5  # every call after work naps once (the other thread used no CPU meanwhile)
        idle = Pacer(every=0.0, nap=0.0, idle=-1.0)  # every call comes "after idling"
        for _ in range(5):
            idle()
        assert idle.naps == 0  # each call starts a new stretch of work: a lone follower read never waits
    finally:
        done.set()
        other.join()


def test_pacer_never_naps_without_another_thread() -> None:
    # A fresh interpreter: threads that earlier tests leave behind (watchers, pools) would count as "another".
    script = (
        "from core.log.pace import Pacer\n"
        "alone = Pacer(every=0.0, nap=0.0, late=1.0, idle=60.0)\n"
        "for _ in range(5):\n"
        "    alone()\n"
        "print(alone.naps)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]
    )
    assert done.stdout.strip() == "0"  # nobody could take the GIL during a nap


def test_pacer_naps_on_while_another_thread_is_busy() -> None:
    stop = threading.Event()

    def spin() -> None:  # a busy UI thread: it uses the CPU whenever the loader naps
        while not stop.is_set():
            sum(range(1000))

    busy = threading.Thread(target=spin)
    busy.start()
    try:
        pace = Pacer(every=0.0, nap=0.001, late=0.0001, patience=0.05, idle=60.0)
        pace()
        pace()
        assert pace.naps > 1  # one call napped on while the other thread worked
    finally:
        stop.set()
        busy.join()
