"""What the review of the alert checkpoint (ceb6987, e95af53, 976aeb0) found: cases where a restored watch did
not give what a full read gives, each failing before the fix (a follower's clock alert raised again after an
append, an undated alert dated by the first read's clock, a code fingerprint without core/policies, and the
sessions and alerts checkpoints of one log overwriting each other); a fleet row's clock alert over a touch of a
restored log; and checkpoints a writer of the cache forged (a link to ``/dev/zero``, a raised alert of no rule's
cause or of another path), which must never hang or crash a reader."""

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

    assert fingerprint_follows(Path(phase_notes.__file__))


def fingerprint_follows(source: Path) -> bool:
    """Whether the checkpoints' code fingerprint changes when ``source`` does (its mtime moved a second on, then
    back)."""
    st = os.stat(source)
    checkpoint.code_fingerprint.cache_clear()
    before = checkpoint.code_fingerprint()
    try:
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        checkpoint.code_fingerprint.cache_clear()
        return checkpoint.code_fingerprint() != before
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


def _fleet_touched(root: Path, log: Path, config: PolicyConfig) -> list[dict[str, Any]]:
    """A fleet's rows after it followed ``root`` over a touch of ``log`` (its bytes unchanged)."""
    from core.fleet.follow import Fleet

    fleet = Fleet([root], config)
    fleet.poll(NOW)
    os.utime(log, ns=(NOW * 10**6, (NOW - 300_000) * 10**6))  # touched: its last write 5 min before NOW
    fleet.poll(NOW + 60_000)
    return [row.to_dict() for row in fleet.rows(NOW + 60_000)]


def test_a_restored_fleet_row_keeps_its_clock_alert_over_a_touch(tmp_path: Path) -> None:
    """An open turn nobody wrote to for long: ``stalled`` holds. Before the checkpoint the fleet's row kept the
    alert as it was raised (its reason says how long it had been quiet then) across a touch of the log; a restored
    watch reads the touched log from its start and raises a new ``stalled`` a minute later, with another reason."""
    from core.fleet.follow import Fleet

    events = [("turn/start", {"turn": 1}), ("step/start", {"turn": 1, "step": 1})]
    config = validate_config({"alerts": {"stalled": {"seconds": 60}}})
    cold_log = _log(tmp_path / "cold" / "--w--" / "s", events)
    os.utime(cold_log, ns=(NOW * 10**6, (NOW - 600_000) * 10**6))  # its last write 10 min before NOW
    cold = _fleet_touched(tmp_path / "cold", cold_log, config)  # no checkpoint: 8649b90's way
    assert [a["cause"] for a in cold[0]["attention"]] == ["stalled"]
    log = _log(tmp_path / "warm" / "--w--" / "s", events)
    os.utime(log, ns=(NOW * 10**6, (NOW - 600_000) * 10**6))
    # `tapedeck sessions` ran: a checkpoint is kept
    Fleet([tmp_path / "warm"], config).poll(NOW - 5000, final=True)
    warm = _fleet_touched(tmp_path / "warm", log, config)
    assert [row["attention"] for row in warm] == [row["attention"] for row in cold]


_UNBOUNDED = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (700 << 20, 700 << 20))
from core.alerts import checkpoint
from core.control.config import validate_config
log = Path(sys.argv[1])
assert checkpoint.read(log, "alerts", validate_config({}), {}) is None
with open("/proc/self/status") as status:  # this process's own peak (ru_maxrss keeps the forking parent's)
    print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
"""


def test_a_checkpoint_that_is_no_regular_file_is_not_read_without_end(tmp_path: Path) -> None:
    """``_load`` trusts ``st_size`` and then reads the whole file: a checkpoint that is a link to ``/dev/zero``
    (what someone who can write the cache can make) is read until memory runs out (here: until the limit of the
    child process, 700 MB), where at most ``MAX_BYTES`` should ever be read."""
    import subprocess
    import sys

    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    shutil.copy(FIXTURES / "multi-turn.session.jsonl", log)
    path = checkpoint.checkpoint_path(log, "alerts")
    path.parent.mkdir(parents=True)
    path.symlink_to("/dev/zero")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", _UNBOUNDED, str(log)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120, check=True)  # fmt: skip
    assert int(done.stdout) < 300_000  # KiB: the interpreter and tapedeck's modules, not the device's zeros


def test_a_forged_alert_of_an_unknown_cause_never_crashes_a_follower_that_acts(tmp_path: Path) -> None:
    """The alerts a checkpoint says the read raised are type-checked only: one whose cause is no rule's (a string
    all the same) is handed on as raised, and a follower that acts (``alerts --follow`` with an action configured,
    the fleet table) looks its rule up (``action_request``: ``config.rule(cause)``), a KeyError out of ``poll``
    while a live host runs the session."""
    import fcntl
    import hashlib

    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    shutil.copy(FIXTURES / "code-mode-turn.session.jsonl", log)
    config = validate_config({"alerts": {"budget": {"usd": 0.0001, "action": "pause"}}})
    assert [a.cause for a in AlertFollower([log], config).poll(NOW, final=True)] == ["budget"]
    path = checkpoint.checkpoint_path(log, "alerts")
    meta, state = orjson.loads(path.read_bytes()[len(checkpoint.MAGIC) + 32 :])
    raised = state[state.index("raised") + 1]
    alert = raised[1]
    assert alert[:2] == ["o", "Alert"] and alert[4] == "budget"
    alert[4] = "no-such-rule"
    body = orjson.dumps([meta, state])
    path.write_bytes(checkpoint.MAGIC + hashlib.blake2b(body, digest_size=32).digest() + body)
    warnings: list[str] = []
    with open(log, "rb") as held:  # a live host owns the log
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        found = AlertFollower([log], config, act=True, warn=warnings.append).poll(NOW, final=True)
    assert all(isinstance(a, Alert) for a in found)


def test_a_forged_alert_of_another_path_never_crashes_the_alert_board(tmp_path: Path) -> None:
    """Nor is a restored alert's path checked against the log it was kept for: one holding a NUL byte reaches the
    TUI's alert board, whose ``Path(alert.path).resolve()`` raises ValueError (a full read only ever dates an
    alert with the watched path)."""
    import hashlib

    from tui.alerts import AlertBoard

    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    shutil.copy(FIXTURES / "code-mode-turn.session.jsonl", log)
    config = validate_config({"alerts": {"budget": {"usd": 0.0001}}})
    AlertFollower([log], config).poll(NOW, final=True)
    path = checkpoint.checkpoint_path(log, "alerts")
    meta, state = orjson.loads(path.read_bytes()[len(checkpoint.MAGIC) + 32 :])
    alert = state[state.index("raised") + 1][1]
    assert alert[:2] == ["o", "Alert"] and alert[3] == str(log)
    alert[3] = "elsewhere\x00"
    body = orjson.dumps([meta, state])
    path.write_bytes(checkpoint.MAGIC + hashlib.blake2b(body, digest_size=32).digest() + body)
    board = AlertBoard()
    for found in AlertFollower([log], config).poll(NOW, final=True):
        board.add(found, found.path)
    assert board.alerts and all(a.path == str(log) for a in board.alerts)
