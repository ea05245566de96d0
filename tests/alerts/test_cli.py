"""``tapedeck alerts``: a report with an exit code a script can gate on, and ``--follow`` streaming JSON lines
as logs grow, with ``--exec`` hooks that never stop the stream."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from tests.alerts.crafted import HEADER, Log
from tests.conftest import FIXTURES, Processes
from tests.lines import Lines


def _line(event: dict[str, Any]) -> str:
    return json.dumps(event) + "\n"


def _failing_log() -> Log:
    log = Log()
    log.turn(1)
    for _ in range(3):
        log.result(True)
    return log


def test_a_report_exits_1_when_an_alert_fired_and_0_when_none_did(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "session.jsonl"
    path.write_text(_line(HEADER) + "".join(_line(e) for e in _failing_log().events))
    assert main(["alerts", str(path), "--json"]) == 1
    (alert,) = json.loads(capsys.readouterr().out)
    assert (alert["cause"], alert["seq"], alert["session"], alert["path"]) == (
        "error-streak",
        3,
        "crafted-1",
        str(path),
    )
    assert main(["alerts", str(path), "--set", "alerts.errorStreak.enabled=false"]) == 0
    assert capsys.readouterr().out == "no alerts\n"
    assert main(["alerts", str(FIXTURES / "multi-turn.session.jsonl")]) == 0


def test_bad_arguments_get_one_clear_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["alerts", str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl" in capsys.readouterr().err
    log = FIXTURES / "multi-turn.session.jsonl"
    assert main(["alerts", str(log), "--set", "alerts.loop.count=1"]) == 2
    assert "alerts.loop.count must be from 2 to 1,000,000 (got 1)" in capsys.readouterr().err  # not 1e+06
    assert main(["alerts", str(log), "--set", "alerts.budget.usd=-1"]) == 2
    assert "alerts.budget.usd must be from 0 to 1,000,000,000 (got -1)" in capsys.readouterr().err
    assert main(["alerts", str(log), "--set", "alerts.cacheBreak.usd=-0.5"]) == 2
    assert "alerts.cacheBreak.usd must be from 0 to 1,000,000,000 (got -0.5)" in capsys.readouterr().err
    assert main(["alerts", str(log), "--set", "alerts.budget"]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "problem"),
    [(b"", "empty log"), (b'{"a": 1}\n', "not a session header"), (b"hello\n", "not valid JSON")],
)
def test_a_named_file_that_is_no_session_log_is_no_clean_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, problem: str
) -> None:
    """A log named on the command line whose header cannot be read got 'no alerts' and exit 0, a pass for a CI
    gate; it is named on stderr and the exit status is 2, the other logs still reported."""
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(content)
    good = tmp_path / "session.jsonl"
    good.write_text(_line(HEADER) + "".join(_line(e) for e in _failing_log().events))
    assert main(["alerts", str(odd)]) == 2
    assert f"{odd}: " in capsys.readouterr().err
    assert main(["alerts", str(odd), str(good), "--json"]) == 2
    out = capsys.readouterr()
    assert out.err.count(f"{odd}: ") == 1 and problem in out.err, out.err
    assert [alert["cause"] for alert in json.loads(out.out)] == ["error-streak"]


def test_a_project_directory_given_for_a_root_is_named_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ROOT/PROJECT given for ROOT read no session and said only 'no alerts'; stderr now says what it is and the
    commands that read it, as `tapedeck sessions` does."""
    root = tmp_path / "sessions"
    path = root / "--w--" / "s-1" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(_line(HEADER) + "".join(_line(e) for e in _failing_log().events))
    assert main(["alerts", str(root / "--w--")]) == 0
    out = capsys.readouterr()
    assert (
        out.out == f"no alerts: no sessions under {root / '--w--'}\n" and "one project's directory" in out.err
    ), out.err
    assert f"`tapedeck alerts {root / '--w--'}/*/`" in out.err.replace("\n", " ")
    assert main(["alerts", str(root)]) == 1


def test_a_directory_with_no_session_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An existing but empty directory got a bare 'no alerts', exit 0, as if its sessions had been read and were
    quiet; it now says no session was found there, in the words of `tapedeck sessions`."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["sessions", str(empty)]) == 0
    listed = capsys.readouterr().out.strip()
    assert main(["alerts", str(empty)]) == 0
    assert capsys.readouterr().out == f"no alerts: {listed}\n" == f"no alerts: no sessions under {empty}\n"
    assert main(["alerts", str(empty), "--json"]) == 0
    assert capsys.readouterr().out == "[]\n"


def _read_lines(lines: Lines, count: int) -> list[dict[str, Any]]:
    """The next ``count`` alerts the follower printed, each waited for up to 60 s."""
    read = [lines.next() for _ in range(count)]
    assert all(read), f"the follower's output ended: {read}"
    return [json.loads(line) for line in read]


@pytest.fixture
def follower(processes: Processes) -> Any:
    """Start ``tapedeck alerts --follow --json`` (killed when the test ends, with the --exec commands it runs)."""

    def start(*args: str) -> subprocess.Popen[str]:
        return processes.start([sys.executable, "-m", "core.cli", "alerts", *args, "--follow", "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip

    return start


def test_follow_streams_alerts_as_a_log_grows_and_as_sessions_appear_under_a_root(
    tmp_path: Path, follower: Any
) -> None:
    root = tmp_path / "root"
    first = root / "--w--" / "s1" / "session.jsonl"
    first.parent.mkdir(parents=True)
    first.write_text(_line(HEADER))
    out = Lines(follower(str(root), "--set", "alerts.errorStreak.count=2").stdout)
    log = _failing_log()
    with open(first, "a") as f:
        for event in log.events[:2]:
            f.write(_line(event))
    time.sleep(0.5)
    with open(first, "a") as f:
        f.write(_line(log.events[2])[:20])  # a torn line: nothing yet
        f.flush()
        time.sleep(0.3)
        f.write(_line(log.events[2])[20:])
    (alert,) = _read_lines(out, 1)
    assert (alert["cause"], alert["seq"], alert["path"]) == ("error-streak", 2, str(first))
    second = root / "--w--" / "s2" / "session.jsonl"
    second.parent.mkdir()
    shutil.copy(first, second)
    (alert,) = _read_lines(out, 1)
    assert (alert["cause"], alert["path"]) == ("error-streak", str(second))


def test_follow_prints_the_alert_of_a_session_under_a_directory_that_is_not_utf8(
    tmp_path: Path, follower: Any
) -> None:
    """orjson refused the alert's path (read with surrogate escapes), so ``--follow --json`` ended in a TypeError
    traceback at the first alert of such a session; the path is written as every JSON output writes it."""
    project = os.path.join(os.fsencode(tmp_path / "root"), b"proj\xff")
    log = Path(os.fsdecode(project)) / "s1" / "session.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(_line(HEADER) + "".join(_line(e) for e in _failing_log().events))
    proc = follower(str(tmp_path / "root"))
    (alert,) = _read_lines(Lines(proc.stdout), 1)
    assert (alert["cause"], alert["path"]) == ("error-streak", f"{tmp_path}/root/proj\\xff/s1/session.jsonl")


def _error_alerts(path: Path, errors: int, out: Lines) -> list[dict[str, Any]]:
    """Append a turn of results to ``path``, failed and not in turn, ``errors`` of them failed, as the follower
    whose output is ``out`` reads it; with an error streak of 1, one alert for each, at seq 1, 3, 5..., returned. Each
    failure is appended once the alert of the one before it is printed: the follower has read up to there, so each
    alert is raised by a poll of its own, as a log that grows raises them, however slow the follower."""
    log = Log()
    log.turn(1)
    alerts: list[dict[str, Any]] = []
    written = 0
    with open(path, "a") as f:
        for n in range(errors):
            if n:
                log.result(False)
            log.result(True)
            f.write("".join(_line(event) for event in log.events[written:]))
            f.flush()
            written = len(log.events)
            alerts += _read_lines(out, 1)
    return alerts


def _following(follower: Any, path: Path, *args: str) -> tuple[subprocess.Popen[str], Lines]:
    """Start a follower of ``path`` and of a log beside it with one past alert, and wait (up to 60 s) for that
    alert: the first look at both logs is over, so what is appended to ``path`` from here on is new (``--exec``
    runs for it)."""
    past = path.parent / "past.jsonl"
    past.write_text(_line(HEADER) + "".join(_line(e) for e in _failing_log().events))
    proc = follower(str(path), str(past), *args)
    out = Lines(proc.stdout)
    assert [a["path"] for a in _read_lines(out, 1)] == [str(past)]
    return proc, out


def test_exec_runs_per_alert_with_the_json_on_stdin_and_its_failures_never_stop_the_stream(
    tmp_path: Path, follower: Any
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(_line(HEADER))
    seen = tmp_path / "seen"
    hook = f"cat >> {seen}; case $(grep -c . {seen}) in 1) exit 7;; esac"
    # a limit no hook here comes near, however loaded the machine (the limit itself: the test after this one)
    proc, out = _following(
        follower, path, "--set", "alerts.errorStreak.count=1", "--exec", hook, "--exec-timeout", "60"
    )
    streamed = _error_alerts(path, 3, out)
    assert [a["seq"] for a in streamed] == [1, 3, 5]
    deadline = time.monotonic() + 60
    while (not seen.exists() or len(seen.read_text().splitlines()) < 3) and time.monotonic() < deadline:
        time.sleep(0.05)
    hooked = [json.loads(line) for line in seen.read_text().splitlines() if line]
    assert hooked == streamed
    proc.terminate()
    _, err = proc.communicate(timeout=60)
    assert "--exec for the error-streak alert of crafted-1: exit status 7" in err


def test_exec_runs_only_for_alerts_raised_after_the_follow_began(tmp_path: Path, follower: Any) -> None:
    """``--follow --exec`` ran the hook for every alert the log's history raised, at each start (a root of old
    sessions: dozens of desktop notifications); the past alerts are still printed, the hook runs for new ones only."""
    log = Log()
    log.turn(1)
    for n in range(3):
        log.result(n % 2 == 0)  # failed at seq 1 and 3: two alerts of the log's history
    path = tmp_path / "session.jsonl"
    path.write_text(_line(HEADER) + "".join(_line(e) for e in log.events))
    seen = tmp_path / "seen"
    proc = follower(str(path), "--set", "alerts.errorStreak.count=1", "--exec", f"cat >> {seen}; echo >> {seen}",
                    "--exec-timeout", "60")  # fmt: skip
    out = Lines(proc.stdout)
    assert [a["seq"] for a in _read_lines(out, 2)] == [1, 3]  # the history is still listed
    log.result(False)
    seq = log.result(True)  # appended while the follow runs: the hook's one alert
    with open(path, "a") as f:
        f.write("".join(_line(e) for e in log.events[-2:]))
    (live,) = _read_lines(out, 1)
    assert live["seq"] == seq == 5
    deadline = (
        time.monotonic() + 60
    )  # the hooks run one at a time in order: a past one would come before this one
    while (not seen.exists() or not seen.read_text().endswith("\n")) and time.monotonic() < deadline:
        time.sleep(0.05)
    hooked = [json.loads(line) for line in seen.read_text().splitlines() if line]
    assert hooked == [live]
    proc.terminate()
    proc.communicate(timeout=60)


def test_exec_stops_a_hook_that_never_ends_at_its_time_limit_and_runs_the_next(
    tmp_path: Path, follower: Any
) -> None:
    """Each hook never ends, so each is stopped by the limit however loaded the machine: the second one's stop
    says the first one's did not hold the stream or the hooks after it."""
    path = tmp_path / "session.jsonl"
    path.write_text(_line(HEADER))
    proc, out = _following(follower, path, "--set", "alerts.errorStreak.count=1", "--exec", "exec sleep 3600",
                           "--exec-timeout", "0.5")  # fmt: skip
    assert [a["seq"] for a in _error_alerts(path, 2, out)] == [1, 3]
    stopped = "tapedeck: --exec for the error-streak alert of crafted-1: stopped after the 0.5 s time limit\n"
    errors = Lines(proc.stderr)
    said = [errors.next(), errors.next()]  # each written as its hook is stopped
    assert said == [stopped, stopped]
    proc.terminate()
    proc.communicate(timeout=60)


@pytest.mark.parametrize("fixture", ["compaction-recovery", "tool-outcome-unknown"])
def test_a_cache_break_alert_says_where_the_cache_broke_as_diff_says_it(fixture: str, capsys) -> None:  # type: ignore[no-untyped-def]
    """The alert names the byte where the request's prefix cache broke and the cut (or change) that broke it,
    worded as ``tapedeck diff`` words that request's break, not only what the break re-billed."""
    log = str(next(FIXTURES.glob(f"{fixture}.session*.jsonl")))
    assert main(["alerts", log, "--json", "--set", "alerts.cacheBreak.tokens=1"]) == 1
    breaks = [a for a in json.loads(capsys.readouterr().out) if a["cause"] == "cache-break"]
    assert breaks
    assert main(["request", log, "--all", "--json"]) == 0
    requests = {r["seq"]: r for r in json.loads(capsys.readouterr().out) if r["kind"] == "agent"}
    for alert in breaks:
        r = requests[alert["seq"]]
        argv = ["diff", log, *(f"--{k}={r[k]}" for k in ("turn", "step", "attempt"))]
        assert main([*argv, "--json"]) == 0
        d = json.loads(capsys.readouterr().out)
        cause = d["cause"] + (f" at seq {d['causeSeq']}" if d["causeSeq"] is not None else "")
        where = f"cache broke at byte {d['prefixBytes']} of {d['totalBytes']}: {cause}"
        assert main(argv) == 0
        assert where in capsys.readouterr().out
        assert alert["reason"].startswith(where + "; "), alert["reason"]
        assert "input tokens re-billed" in alert["reason"]


@pytest.mark.parametrize("at", [-5_000, 2**63 - 1])
def test_an_alert_time_no_clock_gives_is_said_so_as_the_tui_says_it(at: int) -> None:
    """An alert's time is its event's, which a forged or broken log may put before 1970 or past the year 9999: the
    text report printed 1969-12-31 23:59:55 (or a year no clock reaches) where the TUI's Alerts screen says the time
    is implausible (core.shared.clock.utc_time, the one rule); it says so too, in the column's width."""
    from core.alerts.engine import Alert
    from core.cli.alerts import render_alert
    from core.shared.clock import IMPLAUSIBLE

    line = render_alert(Alert("s-1", "/x/session.jsonl", "stuck", 3, "warning", "no progress", at))
    assert line.startswith(f"{IMPLAUSIBLE}  warning "), line
    assert render_alert(Alert("s-1", "/x/session.jsonl", "stuck", 3, "warning", "no progress", 0)).startswith(
        "-" * 19
    )


def test_an_alert_line_writes_a_logs_controls_as_escapes_and_its_names_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tapedeck alerts`` wrote the session id and the looping tool's name as the log holds them: ESC ] 2 in either
    retitled the operator's terminal, and a tool name of 5,000 characters came back whole in the line and the JSON
    (the notifications already cleaned both)."""
    log = Log()
    log.turn(1)
    name = "x\x1b]2;pwn\x07" + "n" * 5000
    for _ in range(3):
        log.call(name, "{}")
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [{**HEADER, "id": "a\x1b]2;t\x07b"}, *log.events]))
    argv = ["alerts", str(path), "--set", "alerts.loop.count=3"]
    assert main(argv) == 1
    line = capsys.readouterr().out
    assert "\x1b" not in line and "\x07" not in line and len(line) < 300, line
    assert "a\\u001b]2;t\\u0007b" in line and "x\\u001b]2;pwn\\u0007nnn" in line and "n…" in line, line
    assert main([*argv, "--json"]) == 1
    (alert,) = json.loads(capsys.readouterr().out)
    assert alert["reason"].startswith("x\\u001b]2;pwn\\u0007nnn") and len(alert["reason"]) < 200, alert[
        "reason"
    ]


# A SIGTERM sent from inside the command, at the moment named: before the follow begins (the config is being read)
# or once it polls the logs.
_SIGTERM_AT = """
import os, signal, sys
import core.cli.alerts as alerts
from core.fleet.alerts import AlertSources
from core.cli import main
where = sys.argv[1]
def kill(real):
    def killed(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)
    return killed
if where == "config":
    alerts.alerts_config = kill(alerts.alerts_config)
else:
    AlertSources.poll = kill(AlertSources.poll)
sys.exit(main(["alerts", sys.argv[2], "--follow", "--interval", "0.05"]))
"""


@pytest.mark.parametrize("where", ["config", "poll"])
def test_a_sigterm_ends_a_follow_at_any_point_with_143_and_a_line(tmp_path: Path, where: str) -> None:
    """The follow put its SIGTERM handler in place only as it began following: a SIGTERM while the config was read
    (or a remote log was reached) took the default action, exit -15 with no word. From its first step on it ends
    the command as ``run``'s does: 'tapedeck: terminated', exit 143."""
    path = tmp_path / "session.jsonl"
    path.write_text(_line(HEADER))
    done = subprocess.run([sys.executable, "-c", _SIGTERM_AT, where, str(path)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=60)  # fmt: skip
    assert (done.returncode, done.stderr) == (143, "tapedeck: terminated\n")
