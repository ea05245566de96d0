"""The guard that every test closes the hosts it starts (``tests/conftest.py``) waits for a closed host's threads
to stop, however loaded the machine, and names one that runs on."""

from __future__ import annotations

import threading
import time

from tests.conftest import host_threads_left


def test_a_host_thread_slow_to_stop_is_waited_for_not_taken_for_a_leak() -> None:
    """A closed host's inbox watcher that takes 3 s to see the close, as on a machine at load 20: the guard's old
    2 s bound failed a test that had closed its host."""
    before = set(threading.enumerate())
    slow = threading.Thread(target=time.sleep, args=(3.0,), name="tapedeck-inbox-slow-to-stop")
    slow.start()
    assert host_threads_left(before) == []
    assert not slow.is_alive()


def test_a_host_thread_left_running_is_named() -> None:
    before = set(threading.enumerate())
    closed = threading.Event()
    left = threading.Thread(target=closed.wait, name="prolong-never-closed")
    left.start()
    try:
        assert host_threads_left(before, bound=0.0) == ["prolong-never-closed"]
        # one that ran before the test is not its leak
        assert host_threads_left({*before, left}, bound=0.0) == []
    finally:
        closed.set()
        left.join()
