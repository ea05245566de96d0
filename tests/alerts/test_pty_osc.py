"""What the terminal receives when an alert fires in ``tapedeck watch``, read from a real pseudo-terminal: the
bell, OSC 9 and OSC 777, wrapped for tmux's pass-through when ``$TMUX`` is set, none of them when turned off, and
none for the alerts of the log's history (read as the log opens: they are summed up in one quiet toast)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.alerts.crafted import HEADER, Log
from tests.conftest import Processes

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="needs a Linux pseudo-terminal")

NOTE = "tapedeck: error-streak"
OSC = re.compile(rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
CSI = re.compile(rb"\x1b\[[0-9;?<>=$ ]*[A-Za-z~]")
BODY = "crafted-: 1 tool call failed in a row"


def _lines(events: list[dict[str, object]]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def _drawn(out: bytes, text: bytes) -> bool:
    """Whether the screen drew ``text`` (cursor moves and colours taken out)."""
    return text in CSI.sub(b"", out)


def _toast(out: bytes) -> bool:
    """Whether the screen drew the live alert's toast."""
    return _drawn(out, b"Alert: error-streak")


def _read(master: int, out: bytes, done: Callable[[bytes], bool]) -> bytes:
    """``out`` and what the terminal receives until ``done`` holds (a minute at most)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not done(out):
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                out += os.read(master, 65536)
            except OSError:
                break
    return out


def _run_watch(processes: Processes, tmp_path: Path, alerts: dict[str, object], env: dict[str, str]) -> bytes:
    """Start ``tapedeck watch`` on a pty over a log whose history raised an alert; once its summary is drawn, append
    what raises one live, read what it writes until that alert's toast is drawn, then quit and read the rest of what
    it writes, up to its exit (a notification sent after the toast is in it, whatever the machine's load)."""
    log = Log()
    log.turn(1)
    log.result(True)
    path = tmp_path / "session.jsonl"
    path.write_text(_lines([HEADER, *log.events]))
    conf = tmp_path / "alerts.json"
    conf.write_text(json.dumps({"alerts": {"errorStreak": {"count": 1}, **alerts}}))
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    environ = {k: v for k, v in os.environ.items() if k != "TMUX"} | {"TERM": "xterm-256color", **env}
    environ["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    proc = processes.start(
        [sys.executable, "-m", "tui.cli", "watch", str(path), "--config", str(conf)],
        stdin=slave, stdout=slave, stderr=slave, env=environ, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    try:
        out = _read(master, b"", lambda out: _drawn(out, b"history:"))
        assert _drawn(out, b"history:") and not _toast(out) and b"]9;" not in out  # the history: no call back
        log.result(False)
        log.result(True)
        with open(path, "a") as f:
            f.write(_lines(log.events[-2:]))
        out = _read(master, out, _toast)
        os.write(master, b"q")
        out = _read(master, out, lambda _: proc.poll() is not None)  # what it writes up to its exit
        out = _read(master, out, lambda _: not select.select([master], [], [], 0)[0])  # and what is left unread
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return out


def test_an_alert_rings_and_notifies_through_osc_9_and_osc_777(tmp_path: Path, processes: Processes) -> None:
    out = _run_watch(processes, tmp_path, {}, {})
    assert f"\x1b]9;{NOTE}: {BODY}\x07".encode() in out
    assert f"\x1b]777;notify;{NOTE};{BODY}\x07".encode() in out
    assert b"\x07\x1b]9;" in out  # the bell, right before the notifications
    assert b"\x1bPtmux;" not in out


def test_inside_tmux_the_notifications_are_wrapped_for_pass_through(tmp_path: Path, processes: Processes) -> None:
    out = _run_watch(processes, tmp_path, {}, {"TMUX": "/tmp/tmux-0/default,1,0"})
    assert f"\x1bPtmux;\x1b\x1b]9;{NOTE}: {BODY}\x07\x1b\\".encode() in out
    assert f"\x1bPtmux;\x1b\x1b]777;notify;{NOTE};{BODY}\x07\x1b\\".encode() in out
    assert out.count(b"]9;") == out.count(b"\x1bPtmux;\x1b\x1b]9;")  # never bare


def test_bell_and_notifications_turned_off_send_none(tmp_path: Path, processes: Processes) -> None:
    out = _run_watch(processes, tmp_path, {"bell": False, "notify": False}, {})
    assert _toast(out)  # the toast still shows
    oscs = OSC.findall(out)
    assert not [o for o in oscs if o.startswith((b"\x1b]9;", b"\x1b]777;"))], oscs
    assert b"\x07" not in OSC.sub(b"", out)  # no bell (Textual ends its own OSC sequences with BEL)
