"""The inbox watcher's start cut short by a signal's exception (Ctrl-C or SIGTERM the moment ``run`` says it is
running, which ``tests/host/test_demo_run.py`` hit under load): the host must still close, and a watcher thread
that comes up afterwards must read nothing."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from core.control.config import validate_config
from core.control.host_state import state_path
from core.control.inbox import append_request, inbox_path
from core.host.loop import AgentHost, HostOptions
from core.host.providers.scripted import ScriptedModel


def test_a_host_whose_watcher_start_was_cut_short_still_closes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ws").mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "done"}]}))
    host = AgentHost.create(tmp_path / "root", ScriptedModel(script), validate_config({}),
                            HostOptions(workspace=tmp_path / "ws"), tasks=["say done"])  # fmt: skip
    real_start = threading.Thread.start
    cut: list[threading.Thread] = []

    def interrupted(thread: threading.Thread) -> None:
        if thread.name != "tapedeck-inbox":
            real_start(thread)
            return
        cut.append(thread)
        raise KeyboardInterrupt  # as the signal's handler raises it while start() waits for the thread to run

    monkeypatch.setattr(threading.Thread, "start", interrupted)
    with pytest.raises(KeyboardInterrupt):
        host.run()
    monkeypatch.undo()
    host.close()  # RuntimeError: cannot join thread before it is started
    log = host.writer.path
    append_request(inbox_path(log), "checkpoint")
    before = (log.read_bytes(), state_path(log).read_bytes())
    (late,) = cut
    late.start()  # the thread the cut start() had launched comes up after the close
    late.join(60)
    assert not late.is_alive()
    assert (log.read_bytes(), state_path(log).read_bytes()) == before  # it read and answered nothing
