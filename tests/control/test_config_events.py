"""``config_events``: the one gathering of a session's host and config events that ``status`` and ``control``
rebuild its config from."""

from __future__ import annotations

from pathlib import Path

from core.control.config import CONFIG_EVENT, config_events, logged_config, session_config
from core.log.vocabulary import HOST_EVENT
from core.log.writer import SessionWriter, make_header
from core.read.load import load_session


def test_the_host_and_config_events_in_log_order(tmp_path: Path) -> None:
    writer = SessionWriter.create(tmp_path / "sessions", make_header("sess-1", cwd=str(tmp_path)))
    change = {"slice.fold.pinSteps": {"old": 3, "new": 5}}
    writer.append(
        [
            {"type": "turn/start", "data": {"turn": 1}},
            {"type": HOST_EVENT, "data": {"config": {"prolong": {"logWindow": 3}}}, "ignorable": True},
            {"type": CONFIG_EVENT, "data": {"changes": change, "by": "operator"}, "ignorable": True},
        ]
    )
    writer.close()
    session = load_session(writer.path, retain=False, readback=True, index=True)
    events = config_events(session)
    assert [event["type"] for event in events] == [HOST_EVENT, CONFIG_EVENT]
    logged = logged_config(events)
    assert (
        logged is not None and logged.prolong.log_window == 3 and logged.raw["slice"]["fold"]["pinSteps"] == 5
    )
    assert session_config(events).raw == logged.raw
