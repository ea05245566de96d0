"""What telling a new title costs the alert feed: the sessions whose title changed, not every session with an alert.

The feed asks ``Titles`` for new titles after each poll (every 0.1 s); it looked up the watch of every session that had
raised an alert and read its title, so a fleet with many alerting sessions paid for all of them at every poll, as
the fleet's own polls (which read only the logs that changed) did not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from textual.message import Message

from core.alerts.engine import Alert
from core.alerts.follow import AlertWatch
from core.control.config import validate_config
from tests.alerts.crafted import HEADER, Log
from tui.alerts import AlertFeed, AlertRaised, SessionRenamed

ALERTS = validate_config({"alerts": {"bell": False, "notify": False, "errorStreak": {"count": 1}}})
FUTURE_MS = 4_000_000_000_000  # event times after the test's clock: no clock rule fires meanwhile
SESSIONS = 20


def _write(path: Path, events: list[dict[str, Any]], mode: str = "wb") -> None:
    with open(path, mode) as f:
        f.write(b"".join(orjson.dumps(e) + b"\n" for e in events))


def _failing() -> Log:
    """A turn whose tool call failed: an error streak of one."""
    log = Log(start_ms=FUTURE_MS)
    log.turn(1)
    log.result(True)
    return log


class _Feed(AlertFeed):
    """A feed whose polls come one after another, each ``step`` run between two, counting the follower's look-ups
    of an alert's watch during each poll."""

    def __init__(self, targets: list[Path], steps: list[Any]) -> None:
        self.posted: list[Message] = []
        super().__init__(targets, ALERTS, self.posted.append, follow=True)
        self.steps = steps
        self.looked_up: list[int] = [0]

    def follower(self) -> Any:
        follower = super().follower()
        look_up = follower.watch_for

        def counted(alert: Alert) -> AlertWatch | None:
            self.looked_up[-1] += 1
            return look_up(alert)

        follower.watch_for = counted
        return follower

    def pause(self) -> bool:
        if not self.steps:
            return True
        self.steps.pop(0)()
        self.looked_up.append(0)
        return False


def test_a_new_title_is_told_by_looking_at_its_session_alone(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    logs = []
    for k in range(SESSIONS):
        path = root / "p" / f"s-{k:02}" / "session.jsonl"
        path.parent.mkdir(parents=True)
        log = _failing()
        _write(path, [{**HEADER, "id": f"s-{k:02}"}, *log.events])
        logs.append((path, log))

    def rename() -> None:
        path, log = logs[7]
        log.add("session/title", {"title": "Fix the flaky parser"})
        _write(path, log.events[-1:], "ab")

    feed = _Feed([root], [lambda: None, rename, lambda: None])
    feed.run()
    raised = [m for m in feed.posted if isinstance(m, AlertRaised)]
    assert sorted(m.alert.session for m in raised) == [f"s-{k:02}" for k in range(SESSIONS)]
    renamed = [(m.path, m.session, m.title) for m in feed.posted if isinstance(m, SessionRenamed)]
    assert renamed == [(str(logs[7][0]), "s-07", "Fix the flaky parser")]
    first, *later = feed.looked_up
    assert first >= SESSIONS  # each alert raised: whether its log's history raised it, and its title
    assert max(later) <= 1, feed.looked_up  # the polls after: the renamed session's, if any
