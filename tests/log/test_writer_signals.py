"""A signal that stops a run (SIGTERM, Ctrl-C) never lands between a batch written to the log and counted."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from core.log.writer import SessionWriter, make_header


class Stopped(Exception):
    """What the test's SIGTERM handler raises, as the CLI's raises ``Terminated``."""


def _stop(_signum: int, _frame: Any) -> None:
    raise Stopped


def test_a_sigterm_during_an_append_lands_once_the_batch_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `tapedeck run` takes SIGTERM (and Ctrl-C) as an exception raised wherever the main thread stands; raised
    # after a batch's bytes were written and before the writer counted them, the writer took its own batch for
    # bytes another program wrote, and the run ended 'grew by N bytes it did not write', exit 2, not 143
    _append_signalled(tmp_path, monkeypatch, lambda: os.kill(os.getpid(), signal.SIGTERM))


def test_a_sigterm_another_thread_takes_during_an_append_lands_once_the_batch_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the batch held SIGTERM in the main thread only: the kernel gave it to another thread of the host (the inbox
    # reader, a model stream), and Python still ran the handler in the main thread, mid-batch (the demo's host
    # ended so 'grew by N bytes it did not write', exit 2, in 3 of 4 runs of tests/host/test_demo_run.py)
    idle = threading.Event()
    other = threading.Thread(target=idle.wait)  # a thread that takes signals, as the host's inbox reader does
    other.start()
    try:
        _append_signalled(tmp_path, monkeypatch, lambda: os.kill(os.getpid(), signal.SIGTERM))
    finally:
        idle.set()
        other.join()


def _append_signalled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, send: Any) -> None:
    """Append a batch whose fsync ``send``s a SIGTERM; then the log is still the writer's to append to."""
    writer = SessionWriter.create(tmp_path, make_header("s", cwd="/w"))
    fsync = os.fsync

    def signalled(fd: int) -> None:
        send()
        fsync(fd)

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        monkeypatch.setattr(os, "fsync", signalled)
        with pytest.raises(Stopped):
            writer.append([{"type": "session/title", "data": {"title": "one"}}])
        monkeypatch.undo()
    finally:
        signal.signal(signal.SIGTERM, previous)
    writer.check_held()  # the batch is counted: the log is as the writer left it
    writer.append([{"type": "session/title", "data": {"title": "two"}}])
    writer.close()
