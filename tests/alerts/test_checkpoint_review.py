"""What the review of the alert checkpoint (ceb6987, e95af53, 976aeb0) found: cases where a restored watch did
not give what a full read gives, each failing before the fix (a follower's clock alert raised again after an
append, an undated alert dated by the first read's clock, a code fingerprint without core/policies, and the
sessions and alerts checkpoints of one log overwriting each other)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.alerts import checkpoint
from core.alerts.engine import Alert
from core.alerts.follow import AlertFollower
from core.control.config import PolicyConfig, validate_config
from tests.conftest import FIXTURES

NOW = 1_900_000_000_000
T0 = 1_780_000_000_000


@pytest.fixture(autouse=True)
def _every_log_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")


def _line(value: dict[str, Any]) -> bytes:
    return orjson.dumps(value) + b"\n"


def _log(where: Path, events: list[tuple[str, dict[str, Any]]], times: bool = True) -> Path:
    """A session log of ``events`` (with a time each, unless not ``times``)."""
    log = where / "session.jsonl"
    log.parent.mkdir(parents=True)
    lines = [_line({"type": "session", "version": 0, "id": "s1", "cwd": "/x", "delegationDepth": 0})]
    for k, (etype, data) in enumerate(events, start=1):
        lines.append(_line({"type": etype, "data": data, **({"time": T0 + k * 1000} if times else {})}))
    log.write_bytes(b"".join(lines))
    return log


def _keys(alerts: list[Alert]) -> list[tuple[str, int]]:
    return [(a.cause, a.seq) for a in alerts]


def _follow_with_append(log: Path, config: PolicyConfig) -> list[Alert]:
    """A follower's alerts over two polls, a line appended to the log between them."""
    follower = AlertFollower([log], config)
    raised = follower.poll(NOW)
    with open(log, "ab") as f:
        f.write(_line({"type": "session/title", "data": {"title": "renamed"}, "time": T0 + 99_000}))
    raised += follower.poll(NOW + 1000)
    return raised


def test_a_restored_follower_does_not_raise_a_held_clock_alert_again_after_an_append(tmp_path: Path) -> None:
    """A crashed host (a tapedeck/host event, nobody holds the log) left its turn open: ``host-died`` holds, its
    finding dated by the newest seq. Before the checkpoint a follower raised it once and an append (which leaves
    the turn open) kept it active; a follower that restored a checkpoint reads the log from its start after the
    append, and the fresh engine raises ``host-died`` again at the new seq, which ``once`` does not recognise."""
    events = [("tapedeck/host", {"model": "m"}), ("tapedeck/state", {"state": "running"}),
              ("turn/start", {"turn": 1}), ("step/start", {"turn": 1, "step": 1})]  # fmt: skip
    config = validate_config({"alerts": {"hostDied": {}}})
    cold_log = _log(tmp_path / "cold", events)
    cold = _follow_with_append(cold_log, config)  # no checkpoint yet: read, then followed (8649b90's way)
    assert _keys(cold) == [("host-died", 3)]
    log = _log(tmp_path / "warm", events)
    # `tapedeck alerts` ran once: a checkpoint is kept
    AlertFollower([log], config).poll(NOW - 5000, final=True)
    assert checkpoint.read(log, "alerts", config, {}) is not None
    assert _keys(_follow_with_append(log, config)) == _keys(cold)


def test_a_restored_alert_is_dated_as_a_full_read_dates_it_when_the_log_has_no_times(tmp_path: Path) -> None:
    """DSH logs carry no event times: an alert raised by an event is dated by the read's ``now``. A full read at a
    later time dates it then; the restored one keeps the time of the read that wrote the checkpoint."""
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    shutil.copy(FIXTURES / "cancel-tool-calls.session.jsonl", log)
    config = validate_config({"alerts": {"errorStreak": {"count": 1}}})
    first = AlertFollower([log], config).poll(NOW, final=True)
    assert [a.at for a in first if a.cause == "error-streak"] == [NOW]
    again = AlertFollower([log], config).poll(NOW + 5000, final=True)
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)
    full = AlertFollower([log], config).poll(NOW + 5000, final=True)
    assert [a.at for a in full if a.cause == "error-streak"] == [NOW + 5000]
    assert [a.to_dict() for a in again] == [a.to_dict() for a in full]


def test_the_code_fingerprint_covers_the_request_rebuild_of_our_hosts_logs() -> None:
    """The cache-break rule rebuilds each request of our host's logs with ``core.policies.phase_notes`` (and
    ``core.policies.adaptive``): a change there changes what a replay yields, so a checkpoint written before it
    must not be used; ``_CODE_DIRS`` leaves ``policies`` (and ``host``, whose ``host_config`` a replay imports) out."""
    from core.policies import phase_notes

    source = Path(phase_notes.__file__)
    st = os.stat(source)
    checkpoint.code_fingerprint.cache_clear()
    before = checkpoint.code_fingerprint()
    try:
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        checkpoint.code_fingerprint.cache_clear()
        assert checkpoint.code_fingerprint() != before
    finally:
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
        checkpoint.code_fingerprint.cache_clear()


def test_sessions_and_alerts_do_not_spoil_each_others_checkpoint(tmp_path: Path) -> None:
    """``tapedeck sessions`` (a fleet's ``SessionWatch``, which keeps the row's own columns) and ``tapedeck alerts``
    (an ``AlertWatch``, which keeps none) write the same file for a log, and each refuses the other's (its fold
    has other keys) and then overwrites it: run one after the other on an unchanged log, neither ever restores."""
    from core.fleet.follow import Fleet

    root = tmp_path / "sessions"
    log = root / "--w--" / "s0" / "session.jsonl"
    log.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "multi-turn.session.jsonl", log)
    config = validate_config({"alerts": {"errorStreak": {"count": 1}}})
    Fleet([root], config).poll(NOW, final=True)  # tapedeck sessions: kept
    AlertFollower([root], config).poll(NOW, final=True)  # tapedeck alerts
    fleet = Fleet([root], config)
    fleet.poll(NOW, final=True)  # tapedeck sessions again, on the same unchanged log
    assert fleet.watches[str(log)]._restored is not None
