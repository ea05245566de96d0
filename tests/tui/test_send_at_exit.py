"""Requests the TUI sends while a real host process exits: each is answered, or refused and never written."""

from __future__ import annotations

import threading
from pathlib import Path

import orjson

from core.control import inbox as control
from core.log.reader import read_log
from core.shared.errors import TapedeckError
from tests.host.test_control_at_exit import _host
from tui.live import LiveSession


def test_a_request_the_tui_sends_as_the_host_exits_is_answered_or_not_sent(tmp_path: Path) -> None:
    proc, log = _host(tmp_path)
    while not log.exists() and proc.poll() is None:
        pass
    live = LiveSession(log, follow=True, interval=0.01)
    reader = threading.Thread(target=live.run, daemon=True)
    reader.start()
    sent, refused = [], 0
    try:
        while proc.poll() is None:
            if not live.ready:
                continue
            try:
                sent.append(live.send("message", {"text": "still there?", "kind": "note"})["id"])
            except TapedeckError as exc:
                assert str(exc).startswith("not sent: the host exited"), exc
                refused += 1
    finally:
        live.stop()
        reader.join(10)
    _, err = proc.communicate()
    assert proc.returncode == 0 and sent, err
    final = control.answered_ids(read_log(log).events)
    assert [rid for rid in sent if rid not in final] == []
    written = [orjson.loads(line) for line in control.inbox_path(log).read_bytes().splitlines()]
    assert [r["id"] for r in written if r["id"] not in final] == []
