"""A followed log that disappears and comes back with the same content: its alerts are raised once."""

from __future__ import annotations

from pathlib import Path

from core.alerts.follow import AlertFollower, AlertWatch
from tests.alerts.test_fed_watch import CONFIG, _key, _log


def test_a_log_removed_and_recreated_with_the_same_content_raises_each_alert_once(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    data = path.read_bytes()
    watch = AlertWatch(path, CONFIG, live=False)
    first = watch.poll(0)
    assert [cause for cause, *_ in _key(first)] == ["loop", "error-streak"]
    path.unlink()
    assert watch.poll(0) == []
    path.write_bytes(data)
    assert watch.poll(0) == [] and watch.poll(0, final=True) == []


def test_a_follower_of_a_removed_and_recreated_log_prints_each_alert_once(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    data = path.read_bytes()
    follower = AlertFollower([path], CONFIG)
    raised = follower.poll(0)
    path.unlink()
    raised += follower.poll(0)
    path.write_bytes(data)
    raised += follower.poll(0)
    assert sorted(_key(raised)) == sorted(_key(AlertWatch(path, CONFIG, live=False).poll(0)))
