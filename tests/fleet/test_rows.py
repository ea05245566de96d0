"""Fleet rows: the columns folded from each log's new bytes only, equal to reading the logs whole; the order
(attention first, children under their parent) and ``tapedeck sessions ROOT… --json``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.fleet.follow import Fleet
from core.fleet.row import COLUMNS, cells
from tests.alerts.crafted import HEADER, Log, config
from tests.conftest import FIXTURES

NOW = 1_800_000_100_000


def _crafted(failing: bool) -> Log:
    log = Log()
    log.header()
    log.turn(1)
    log.add("tapedeck/route", {"turn": 1, "step": 1, "phase": "work", "taskClass": "bugfix"})
    log.usage(1, 1, miss=3_000, hit=6_000, output=100)
    for n in range(3):
        log.call("bash", f'{{"command": "ls {n}"}}')
        log.result(error=failing)
    log.add("session/title", {"title": "Fix the flaky test"})
    log.usage(1, 2, miss=1_000, hit=8_000)
    return log


def _write(path: Path, header: dict[str, Any], events: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [header, *events]))
    return path


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    _write(root / "p" / "calm" / "session.jsonl", {**HEADER, "id": "calm"}, _crafted(False).events)
    _write(root / "p" / "failing" / "session.jsonl", {**HEADER, "id": "failing", "createdAt": 0},
           _crafted(True).events)  # fmt: skip
    child = {**HEADER, "id": "kid", "parentSession": "calm", "delegationDepth": 1, "createdAt": 5}
    _write(root / "p" / "kid" / "session.jsonl", child, _crafted(False).events[:4])
    return root


def test_columns_of_a_crafted_session_and_the_attention_order(tmp_path: Path) -> None:
    fleet = Fleet([_root(tmp_path)], config())
    fleet.poll(NOW, final=True)
    rows = fleet.rows(NOW)
    assert [r.ref.id for r in rows] == ["failing", "calm", "kid"]  # attention first, the child under its parent
    failing, calm, kid = (r.to_dict() for r in rows)
    assert failing["attention"][0] == {"cause": "error-streak", "seq": 9, "reason": "3 tool calls failed in a row"}
    assert [a["cause"] for a in failing["attention"]] == ["error-streak"]
    assert calm["attention"] == kid["attention"] == []
    assert calm["title"] == "Fix the flaky test" and kid["title"] is None
    assert (calm["turn"], calm["step"], calm["phase"], calm["class"]) == (1, 2, "work", "bugfix")
    assert calm["contextPct"] == 9.0  # 9,000 input tokens of a 100,000-token window
    assert calm["cachePct"] == pytest.approx(100 * 14_000 / 18_000, abs=0.1)
    # 4,000 misses at $10/M, 14,000 hits at $1/M, 100 outputs at $20/M
    assert calm["costUsd"] == pytest.approx(0.04 + 0.014 + 0.002)
    assert calm["children"] == ["kid"] and kid["nesting"] == 1
    assert calm["host"]["state"] == "none" and calm["where"] == "local"
    assert isinstance(calm["lastWriteAgeS"], float)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(min_value=1, max_value=10_000), min_size=1, max_size=6))
def test_following_in_torn_chunks_gives_the_rows_of_reading_whole_and_reads_each_byte_once(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int]
) -> None:
    tmp = tmp_path_factory.mktemp("torn")
    source = FIXTURES / "tool-call-turn.session.jsonl"
    data = source.read_bytes()
    whole = Fleet([_copy(source, tmp / "whole")], config())
    whole.poll(NOW, final=True)
    target = tmp / "live" / "p" / "s" / "session.jsonl"
    target.parent.mkdir(parents=True)
    live = Fleet([tmp / "live"], config())
    done = 0
    for cut in sorted({min(c, len(data)) for c in cuts} | {len(data)}):
        with open(target, "ab") as f:
            f.write(data[done:cut])
        done = cut
        live.poll(NOW)
        assert live.bytes_read <= done  # only what was appended, never a whole log again
    live.poll(NOW, final=True)
    assert live.bytes_read == len(data)
    ignore = ("path", "mtime", "size", "lastWriteAgeS")
    strip = [{k: v for k, v in r.to_dict().items() if k not in ignore} for r in live.rows(NOW)]
    assert strip == [{k: v for k, v in r.to_dict().items() if k not in ignore} for r in whole.rows(NOW)]


def _copy(source: Path, root: Path) -> Path:
    target = root / "p" / "s" / "session.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copy(source, target)
    return root


def test_sessions_json_takes_several_roots_and_gives_the_fleet_keys(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    other = _copy(FIXTURES / "multi-turn.session.jsonl", tmp_path / "other")
    assert main(["sessions", str(_root(tmp_path)), str(other), "--json"]) == 0
    rows = orjson.loads(capsys.readouterr().out)
    assert len(rows) == 4
    keys = {"id", "path", "where", "host", "turn", "step", "lastWriteAgeS", "contextPct", "cachePct", "costUsd",
            "usdPerHour", "children", "attention", "nesting", "cwd", "mtime", "size", "parent"}  # fmt: skip
    assert all(keys <= row.keys() for row in rows)
    assert {"state", "kind"} <= rows[0]["host"].keys()
    dsh = next(r for r in rows if r["path"].startswith(str(other)))
    assert dsh["host"]["kind"] == "dsh" and dsh["turn"] is not None


def test_each_row_says_how_its_last_turn_ended_so_an_aborted_session_differs_from_a_blocked_one(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    ends = {"done": "completed", "stopped": "aborted", "stuck": "blocked"}
    for sid, kind in ends.items():
        log = Log()
        log.header()
        log.turn(1)
        log.end(1)
        log.turn(2)
        log.end(2, kind)
        _write(root / "p" / sid / "session.jsonl", {**HEADER, "id": sid}, log.events)
    busy = Log()
    busy.header()
    busy.turn(1)
    busy.end(1)
    busy.turn(2)
    _write(root / "p" / "busy" / "session.jsonl", {**HEADER, "id": "busy"}, busy.events)
    fresh = Log()
    fresh.header()
    _write(root / "p" / "fresh" / "session.jsonl", {**HEADER, "id": "fresh"}, fresh.events)
    fleet = Fleet([root], config())
    fleet.poll(NOW, final=True)
    rows = {r.ref.id: r.to_dict() for r in fleet.rows(NOW)}
    assert {sid: (row["turn"], row["outcome"]) for sid, row in rows.items()} == {
        "done": (2, "completed"), "stopped": (2, "aborted"), "stuck": (2, "blocked"), "busy": (2, "turn open"),
        "fresh": (None, "-"),
    }  # fmt: skip
    assert {r.ref.id: cells(r)[COLUMNS.index("outcome")] for r in fleet.rows(NOW)}["stopped"] == "aborted"


def test_a_log_swapped_for_a_fifo_during_a_follower_poll_shows_on_its_row_and_the_others_are_polled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log replaced between its read and the read-back of its earlier events (a FIFO renamed over it) raised
    ``LogFormatError`` out of the follower's poll, so the sessions after it were not polled until the next tick;
    that session's row says why it cannot be read (``unreachable``) and the others are polled."""
    lines = (FIXTURES / "compaction-recovery.session.jsonl").read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    logs = [tmp_path / "root" / "p" / name / "session.jsonl" for name in ("a", "b")]
    for log in logs:
        log.parent.mkdir(parents=True)
        log.write_bytes(b"".join(lines[:half]))
    fleet = Fleet([tmp_path / "root"], config())
    fleet.poll(NOW)
    before = {row.key: row.step for row in fleet.rows(NOW)}
    for log in logs:
        with log.open("ab") as f:
            f.write(b"".join(lines[half:]))
    swapped, other = sorted(logs, key=lambda log: list(fleet.watches).index(str(log)))  # the first polled swaps
    tailer = fleet.watches[str(swapped)].tailer
    read = tailer.poll

    def read_then_swapped(*args: Any, **kwargs: Any) -> Any:
        update = read(*args, **kwargs)
        if update.events and swapped.is_file():
            os.mkfifo(swapped.with_name("swap.fifo"))
            os.replace(swapped.with_name("swap.fifo"), swapped)
        return update

    monkeypatch.setattr(tailer, "poll", read_then_swapped)
    assert fleet.poll(NOW) == 2
    rows = {row.key: row for row in fleet.rows(NOW)}
    assert rows[str(other)].step != before[str(other)]  # polled: its new steps show
    said = [(alert.cause, alert.reason) for alert in rows[str(swapped)].attention]
    assert ("unreachable", f"{swapped}: cannot read (not a regular file)") in said
    other.replace(swapped)  # a whole copy back in its place: read through, the row no longer says it
    fleet.poll(NOW)
    rows = {row.key: row for row in fleet.rows(NOW)}
    assert "unreachable" not in [alert.cause for alert in rows[str(swapped)].attention]


def test_a_dsh_session_whose_first_heartbeat_reads_stale_is_unknown_until_the_readings_say(tmp_path: Path) -> None:
    """A follower believes a stale heartbeat of a bridge whose process cannot be looked for (another machine's)
    only once the readings have said so for 5 s, and its first reading waits alike: meanwhile the row's host said
    none, of a tapedeck host, for a DSH session whose bridge the reading had found. It says unknown, with what the
    reading knows (a DSH session, its pid), then what the readings settle on."""
    import time

    from core.bridge.files import HEARTBEAT_FRESH_MS

    root = tmp_path / "root"
    log = _write(root / "p" / "s" / "session.jsonl", {**HEADER, "id": "s"}, _crafted(False).events)
    now = int(time.time() * 1000)
    bridge = {"kind": "dsh", "state": "idle", "pid": 4242, "procStart": "77", "bootId": "another-machine-boot",
              "since": now - 60_000, "heartbeat": now - HEARTBEAT_FRESH_MS - 1_000, "sessionId": "s"}  # fmt: skip
    (log.parent / "bridge.json").write_bytes(orjson.dumps(bridge))
    fleet = Fleet([root], config())
    fleet.poll(now)
    (row,) = fleet.rows(now)
    assert (row.host["state"], row.host.get("kind"), row.host.get("pid")) == ("unknown", "dsh", 4242), row.host
    assert cells(row)[1] == "DSH unknown"
    fleet.poll(now + HEARTBEAT_FRESH_MS)
    (row,) = fleet.rows(now + HEARTBEAT_FRESH_MS)
    assert (row.host["state"], cells(row)[1]) == ("exited", "DSH exited"), row.host


def test_a_remote_host_whose_first_reading_fails_is_unknown(tmp_path: Path) -> None:
    """A remote session whose host's files could not be read before any state was known (the machine lost between
    the log's poll and the read, a refused read): the row said none, of a tapedeck host, as of a log no host ever
    ran. Nothing is known of the host yet: the row says unknown, of no kind, as before a first reading, and the
    state is read again at the next tick."""
    from core.fleet.follow import RemoteSessionWatch
    from core.log.sessions import SessionRef
    from core.remote.link import Unreachable
    from core.remote.target import parse_remote

    class Lost:
        """A link whose machine stopped answering."""

        def stat_many(self, paths: Any, follow: bool = True, refused: Any = None) -> Any:
            raise Unreachable("testbox: connection lost", NOW)

    target = parse_remote("testbox:/far/p/s/session.jsonl")
    assert target is not None
    ref = SessionRef(Path(str(target)), "s", None, NOW, None, 0, None, 0, NOW / 1000)
    watch = RemoteSessionWatch(ref, config(), Lost(), target)  # type: ignore[arg-type]
    watch.tick(NOW)
    assert (watch.row(NOW).host["state"], watch.row(NOW).host["kind"]) == ("unknown", None), watch.row(NOW).host
    assert watch.host_due(NOW / 1000)


def test_an_attention_cell_of_several_causes_reads_them_apart(tmp_path: Path) -> None:
    """The attention cell joined its causes with a bare comma ("error-streak,stalled"), where every other list the
    fleet shows is comma and space."""
    import dataclasses

    fleet = Fleet([_root(tmp_path)], config())
    fleet.poll(NOW, final=True)
    failing = fleet.rows(NOW)[0]
    streak = failing.attention[0]
    row = dataclasses.replace(failing, attention=[streak, dataclasses.replace(streak, cause="stalled")])
    assert cells(row)[COLUMNS.index("attention")] == "error-streak, stalled"


def test_a_local_log_the_fleet_cannot_read_is_noted_as_a_remote_one_is(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A remote log the server will not let the fleet read is noted in ``skipped`` (``remote_refs``) and tried again
    at each poll; a local one (its permissions taken away) stayed pending without a word, as if it were still being
    born: ``session_ref`` read its header with ``read_header``, which takes every failure for 'no header yet'. It
    is noted in the same words now, and watched once it can be read, its note gone then (it lingered until the next
    listing, up to 5 s). (Root reads any file: the refusal is made.)"""
    from core.log import reader

    root = _root(tmp_path)
    locked = root / "p" / "kid" / "session.jsonl"
    opened = reader.open_regular

    def refusing(path: Any, **kwargs: Any) -> Any:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied")
        return opened(path, **kwargs)

    monkeypatch.setattr(reader, "open_regular", refusing)
    fleet = Fleet([root], config())
    fleet.poll(NOW, final=True)
    assert [r.ref.id for r in fleet.rows(NOW)] == ["failing", "calm"]
    assert fleet.skipped == [f"skipped {locked}: cannot read (Permission denied)"]
    monkeypatch.setattr(reader, "open_regular", opened)
    monkeypatch.setattr("core.fleet.follow.RESCAN_SECONDS", 3600.0)  # no listing in between, however slow the poll
    fleet.poll(NOW, final=True)
    assert [r.ref.id for r in fleet.rows(NOW)] == ["failing", "calm", "kid"]
    assert fleet.skipped == []
