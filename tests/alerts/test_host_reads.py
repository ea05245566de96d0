"""What a watch reads to learn the host's state at each tick: ``tapedeck alerts --follow`` ticks every 0.1 s and
the fleet reads a grown log's host state at each poll, so for a log with no host file (DSH's, without the bridge)
the log's start must not be read again each time: the events the engine was fed say whether a tapedeck host ever
ran it (as ``FedWatch`` does for the TUI's view, ``tests/tui/test_live.py``)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bench.gen_session import generate
from core.alerts.follow import AlertWatch
from core.fleet.follow import Fleet
from tests.tui.pilot import QUIET

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io")


def _bytes_read() -> int:
    """Bytes this process has read through read(2) so far (Linux ``/proc/self/io``)."""
    with open("/proc/self/io", "rb") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(b"rchar:"))


def _dsh_log(tmp_path: Path) -> Path:
    path = tmp_path / "proj" / "sess" / "session.jsonl"
    path.parent.mkdir(parents=True)
    generate(path, 1_000_000, seed=3, profile="dsh-plain", explicit_envelope=False)
    return path


def test_an_alert_watch_does_not_read_the_log_head_at_each_tick(tmp_path: Path) -> None:
    path = _dsh_log(tmp_path)
    watch = AlertWatch(path, QUIET)
    now = int(time.time() * 1000)
    watch.poll(now)  # the whole log read, and what a tick imports
    before = _bytes_read()
    for k in range(10):
        watch.poll(now + k)
    read = _bytes_read() - before
    assert watch.host is not None and watch.host.state == "none"
    assert read < 1 << 16, f"10 ticks read {read} bytes"


def test_a_growing_log_in_the_fleet_does_not_have_its_head_read_at_each_poll(tmp_path: Path) -> None:
    path = _dsh_log(tmp_path)
    fleet = Fleet([tmp_path], QUIET)
    fleet.poll()
    before = _bytes_read()
    with open(path, "ab") as f:
        for k in range(10):
            f.write(b'{"type":"session/title","data":{"title":"t%d"}}\n' % k)
            f.flush()
            fleet.poll()
    read = _bytes_read() - before
    assert [row.host["state"] for row in fleet.rows()] == ["none"]
    assert read < 1 << 17, f"10 polls of a log that grew read {read} bytes"
