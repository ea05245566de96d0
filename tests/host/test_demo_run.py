"""The reference host end to end: the bundled demo scenario, control requests while it runs, crash + resume."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from core.cli.log import inspect_report
from core.control import inbox as control
from core.control.config import load_config
from core.control.host_state import state_path
from core.host.demo_scenario import TASKS, write_script
from core.host.demo_workspace import create_demo_workspace
from core.host.loop import AgentHost, HostOptions
from core.host.providers import make_provider
from core.log.reader import read_log
from core.read.load import load_session
from core.read.session import Session
from tests.conftest import Processes, process_gone
from tests.lines import Lines

ROOT = Path(__file__).resolve().parents[2]


def _demo(tmp_path: Path) -> tuple[Path, Path]:
    workspace = create_demo_workspace(tmp_path / "ws")
    return workspace, write_script(tmp_path / "script.json")


def _wait_for(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for the host"
        time.sleep(0.02)


def _assert_one_outcome_per_request(session: Session, inbox: Path) -> Counter[str]:
    outcomes = Counter(
        e["data"]["requestId"]
        for e in session.events
        if e["type"] == "tapedeck/control" and e["data"]["outcome"] in control.FINAL
    )
    sent = [json.loads(line)["id"] for line in inbox.read_text().splitlines() if line.strip()]
    assert sorted(outcomes) == sorted(sent)
    assert set(outcomes.values()) == {1}
    return outcomes


def test_demo_scenario_exercises_every_policy_and_obeys_the_inbox(tmp_path: Path) -> None:
    workspace, script = _demo(tmp_path)
    host = AgentHost.create(
        tmp_path / "root", make_provider(f"scripted:{script}"), load_config(None),
        HostOptions(workspace=workspace, linger=True, linger_poll=0.02), tasks=TASKS,
    )  # fmt: skip
    inbox = control.inbox_path(host.writer.path)
    sent: dict[str, str] = {}

    def operator() -> None:
        _wait_for(lambda: host.session.next_seq > 30)
        for op, args in [
            ("config.set", {"key": "slice.history.keepRecentTurns", "value": 1}),
            ("config.set", {"key": "slice.history.keepRecentTurns", "value": -3}),
            ("message", {"text": "Operator: keep answers short.", "kind": "steer"}),
            ("expand", {"seq": 10**6}),
        ]:
            sent[op + str(len(sent))] = control.append_request(inbox, op, args)["id"]
        _wait_for(lambda: len(host.session.turns) == 6 and host.session.open_turn is None, 120)
        sent["checkpoint"] = control.append_request(inbox, "checkpoint", {"objective": "operator mark"})["id"]
        sent["rewind"] = control.append_request(inbox, "rewind", {})["id"]
        _wait_for(lambda: len(control.answered_ids(host.session.events)) >= 6)
        sent["stop"] = control.append_request(inbox, "stop", {})["id"]

    thread = threading.Thread(target=operator, daemon=True)
    thread.start()
    outcomes = host.run()
    host.close()
    thread.join(60)

    assert [o.reason["kind"] for o in outcomes] == ["completed"] * 6
    session = load_session(host.writer.path)
    assert inspect_report(session)["diagnostics"] == []
    kinds = Counter(c.kind for c in session.cuts)
    assert kinds["tape"] >= 1 and kinds["fold"] >= 1 and kinds["prune"] >= 1 and kinds["rewind"] >= 2
    types = session.counts
    assert (
        types["tapedeck/checkpoint"] >= 3 and types["tapedeck/route"] >= 30 and types["compaction/prune"] >= 1
    )
    assert len([c for c in session.tool_calls.values()]) >= 40
    _assert_one_outcome_per_request(session, inbox)
    by_id = {e["data"]["requestId"]: e["data"] for e in session.events if e["type"] == "tapedeck/control"}
    assert by_id[sent["config.set0"]]["outcome"] == "applied"
    assert "slice.history.keepRecentTurns must be from 0 to 10,000" in by_id[sent["config.set1"]]["error"]
    assert by_id[sent["expand3"]]["outcome"] == "rejected"
    assert by_id[sent["checkpoint"]]["outcome"] == "applied"
    assert by_id[sent["stop"]]["outcome"] == "applied"
    steer = [e for e in session.events if e["type"] == "user/message" and e["data"]["source"].get("via")]
    assert [e["data"]["content"][0]["text"] for e in steer] == ["Operator: keep answers short."]
    log_txt = (workspace / "log.txt").read_text()
    assert "type=tool/call tool=bash" in log_txt and "python3 -m unittest -q" in log_txt
    assert (workspace / "CHANGELOG.md").exists() and not (workspace.parent / "CHANGELOG.md").exists()


def _run_cli(processes: Processes, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return processes.start([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def _recorded_state(log: Path) -> str | None:
    """The state the host last wrote to host.json (None before its first)."""
    with contextlib.suppress(FileNotFoundError):
        return json.loads(state_path(log).read_text())["state"]
    return None


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_demo_without_the_tui_takes_its_host_with_it_however_it_dies(
    tmp_path: Path, processes: Processes, sig: signal.Signals
) -> None:
    """As with the TUI: the host never outlives the demo (it played on alone, its session 'running' in every listing,
    with nobody watching), and a demo told to end (SIGTERM, or Ctrl-C in its terminal) stops its host as `tapedeck run`
    stops on one (it was SIGKILLed, its host.json left 'running') and removes its throw-away workspace."""
    demo = processes.start([sys.executable, "-m", "tui.cli", "demo", "--no-tui", "--speed", "0.2", "--sessions-root",
                            str(tmp_path / "root")], cwd=ROOT, stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert demo.stdout is not None
    out = Lines(demo.stdout)
    workspace = Path(out.next().split(" ", 1)[1].strip())
    assert out.next().startswith("session ")  # the host's first lines name the session and its log
    log = Path(out.next().split(" ", 1)[1].strip())
    children = Path(f"/proc/{demo.pid}/task/{demo.pid}/children")
    _wait_for(lambda: log.exists() and children.read_text().split())
    (host,) = map(int, children.read_text().split())
    _wait_for(lambda: _recorded_state(log) == "running")
    if sig == signal.SIGINT:
        os.killpg(demo.pid, sig)  # as the terminal sends it, to the whole foreground group
    else:
        os.kill(demo.pid, sig)
    code = demo.wait(60)
    _wait_for(lambda: process_gone(host))  # 60 s: its close (a tool stopped, the log let go) is slow under load
    if sig != signal.SIGKILL:
        assert code == 128 + sig
        assert _recorded_state(log) == "exited"
        assert not workspace.exists()
        # the host's last line names `tapedeck run --resume … --provider scripted:SCRIPT`, a script the demo removes
        assert "so the `tapedeck run --resume` above cannot continue it" in out.rest()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
def test_a_demo_without_the_tui_whose_host_is_killed_exits_as_a_shell_reports_it(
    tmp_path: Path, processes: Processes
) -> None:
    # the demo passed the host's exit status on as Python gives it, -9, so it exited 247
    demo = processes.start([sys.executable, "-m", "tui.cli", "demo", "--no-tui", "--speed", "0.2", "--sessions-root",
                            str(tmp_path / "root")], cwd=ROOT, stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert demo.stdout is not None
    out = Lines(demo.stdout)
    out.next()
    assert out.next().startswith("session ")  # the host's first lines name the session and its log
    log = Path(out.next().split(" ", 1)[1].strip())
    children = Path(f"/proc/{demo.pid}/task/{demo.pid}/children")
    _wait_for(lambda: log.exists() and children.read_text().split())
    (host,) = map(int, children.read_text().split())
    os.kill(host, signal.SIGKILL)
    assert demo.wait(60) == 128 + signal.SIGKILL


@pytest.mark.parametrize("compressed", [False, True])
def test_sigkill_mid_step_then_resume_completes_without_loss_or_duplicates(
    tmp_path: Path, compressed: bool, processes: Processes
) -> None:
    workspace, script = _demo(tmp_path)
    root = tmp_path / "root"
    args = ["run", *TASKS, "--provider", f"scripted:{script}", "--workspace", str(workspace),
            "--sessions-root", str(root), "--session-id", "crash-1", "--pace", "0.02", "--chunk-delay", "0.002"]  # fmt: skip
    if compressed:
        args.append("--zstd")
    proc = _run_cli(processes, *args)
    log = (
        root
        / f"--{str(workspace).strip('/').replace('/', '-')}--"
        / "crash-1"
        / ("session.jsonl.zstd" if compressed else "session.jsonl")
    )
    _wait_for(lambda: log.exists())
    inbox = control.inbox_path(log)
    first = control.append_request(inbox, "checkpoint", {"objective": "before the crash"})["id"]

    def mid_turn_two() -> bool:
        data = read_log(log)
        return any(e["type"] == "turn/start" and e["data"]["turn"] == 2 for e in data.events) and any(
            e["type"] == "assistant/chunk" for e in data.events[-3:]
        )

    _wait_for(mid_turn_two)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(60)
    before = read_log(log).events
    second = control.append_request(inbox, "config.set", {"key": "rewind.reportLanguage", "value": "zh"})[
        "id"
    ]

    resumed = _run_cli(processes, "run", "--resume", "crash-1", "--provider", f"scripted:{script}",
                       "--workspace", str(workspace), "--sessions-root", str(root))  # fmt: skip
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, out + err
    session = load_session(log)
    assert session.diagnostics == []
    assert session.events[: len(before)] == before  # nothing that was durable was rewritten or lost
    assert [t.status for t in session.turns.values()] == ["completed"] * 6
    results = Counter(c.result_seq is not None for c in session.tool_calls.values())
    assert results[False] == 0
    per_call = Counter(
        e["data"]["message"]["source"]["callId"] for e in session.events
        if e["type"] == "tool/result" and session.is_original(e["seq"])
    )  # fmt: skip
    assert set(per_call.values()) == {1}
    outcomes = _assert_one_outcome_per_request(session, inbox)
    assert first in outcomes and second in outcomes
    assert sum(1 for e in session.events if e["type"] == "tapedeck/host") == 2


@pytest.mark.parametrize("cut", ["after-assistant-message", "after-tool-call", "mid-stream"])
def test_resume_settles_the_open_step_deterministically(tmp_path: Path, cut: str) -> None:
    workspace, script = _demo(tmp_path)
    model = make_provider(f"scripted:{script}")
    host = AgentHost.create(
        tmp_path / "root", model, load_config(None), HostOptions(workspace=workspace), tasks=TASKS
    )
    host.run()
    host.close()
    log = host.writer.path
    events = read_log(log).events
    # the turn-2 edit that fixes the bug: its assistant message, its tool/call
    message = next(e for e in events if e["type"] == "assistant/message" and e["data"]["turn"] == 2
                   and any(b.get("name") == "edit_file" for b in e["data"]["message"]["content"]))  # fmt: skip
    keep = {"after-assistant-message": message["seq"], "after-tool-call": message["seq"] + 1,
            "mid-stream": message["seq"] - 2}[cut]  # fmt: skip
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[: keep + 2]))  # header + events 0..keep
    create_demo_workspace(workspace)  # the workspace as it was before the fix
    (workspace / "log.txt").unlink()
    resumed = AgentHost.resume(
        log, make_provider(f"scripted:{script}"), load_config(None), HostOptions(workspace=workspace)
    )
    outcomes = resumed.run()
    resumed.close()
    session = load_session(log)
    assert session.diagnostics == []
    assert [t.status for t in session.turns.values()] == ["completed"] * 6
    assert [o.turn for o in outcomes] == [2, 3, 4, 5, 6]
    fixed = "total += int" in (workspace / "timeparse" / "duration.py").read_text()
    unknown = [
        e
        for e in session.events
        if e["type"] == "tool/result" and (e["data"].get("error") or {}).get("code") == "TOOL_OUTCOME_UNKNOWN"
    ]
    # Never dispatched, never produced, or cut off before the file changed (the workspace is as before the
    # fix): run now, exactly once. An edit that did land is never run twice (tests/host/test_resume_turns.py).
    assert unknown == [] and fixed


def test_the_help_says_which_way_speed_goes_and_how_the_demo_ends(capsys: pytest.CaptureFixture[str]) -> None:
    """``--speed`` was a 'pace multiplier', which reads as 2 doubling the pauses, where it halves them; and the help
    said nothing of the host living only as long as the demo, its exit status, or what is kept."""
    from tui.cli import main as tui_main

    with pytest.raises(SystemExit):
        tui_main(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for said in ("2 plays twice as fast", "exit 143", "the run's exit status", "The log is kept"):
        assert said in text, said
    assert "pace multiplier" not in text


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
def test_a_demo_killed_with_sigkill_leaves_its_workspace_to_the_next_demo_to_remove(
    tmp_path: Path, processes: Processes
) -> None:
    # a SIGKILL leaves the demo no time to remove its temporary workspace, and no later demo did: one a kill
    scratch_root = tmp_path / "tmp"
    scratch_root.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch_root)}
    kept = scratch_root / "tapedeck-demo-kept"  # a --keep demo's: no owner lock, kept
    kept.mkdir()
    demo = processes.start([sys.executable, "-m", "tui.cli", "demo", "--no-tui", "--speed", "0.2", "--sessions-root",
                            str(tmp_path / "root")], cwd=ROOT, stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip
    assert demo.stdout is not None
    workspace = Path(Lines(demo.stdout).next().split(" ", 1)[1].strip())
    demo.kill()
    demo.wait(60)
    assert workspace.exists()
    second = subprocess.run([sys.executable, "-m", "tui.cli", "demo", "--no-tui", "--speed", "0", "--sessions-root",
                             str(tmp_path / "root")], cwd=ROOT, capture_output=True, text=True, env=env,
                            timeout=300, check=False)  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert not workspace.parent.exists()
    assert [p.name for p in scratch_root.iterdir()] == ["tapedeck-demo-kept"]


def test_a_demo_starting_while_another_takes_its_owner_lock_leaves_that_ones_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # make_scratch created its owner lock and then locked it: a demo starting in between found the lock there,
    # held by nobody, and removed the workspace of a demo that was only starting
    import fcntl
    import tempfile
    import types

    from core.host import demo_workspace

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    looked: list[Path] = []

    def flock(fd: int, operation: int) -> None:
        if not looked:  # the first lock taken is the new demo's own: another demo starts right then
            looked.extend(tmp_path.glob(demo_workspace.SCRATCH_PREFIX + "*"))
            for other in looked:
                demo_workspace._remove_if_abandoned(other)
        fcntl.flock(fd, operation)

    monkeypatch.setattr(demo_workspace, "fcntl", types.SimpleNamespace(
        flock=flock, LOCK_EX=fcntl.LOCK_EX, LOCK_NB=fcntl.LOCK_NB))  # fmt: skip
    scratch = demo_workspace.make_scratch(keep=False)
    assert looked == [scratch]
    assert scratch.is_dir()
    assert [p.name for p in scratch.iterdir()] == [demo_workspace.OWNER_LOCK]


def test_a_demo_names_the_demo_directories_no_demo_removes(tmp_path: Path) -> None:
    """A demo killed before demos locked their directory (fe32865) left one without a lock, as --keep does on
    purpose: no demo removes either, and nothing said they were there. The demo's closing lines name them."""
    scratch_root = tmp_path / "tmp"
    for n in range(5):  # more than the closing lines name: the rest are counted
        (scratch_root / f"tapedeck-demo-old{n}" / "workspace").mkdir(parents=True)
        (scratch_root / f"tapedeck-demo-old{n}" / "demo-script.json").write_text("{}")
    done = subprocess.run([sys.executable, "-m", "tui.cli", "demo", "--no-tui", "--speed", "0", "--sessions-root",
                           str(tmp_path / "root")], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(scratch_root)}, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "demo directories no demo removes (kept with --keep, or left by a demo killed before demos locked theirs; "
        f"rm -r them when done): {', '.join(str(scratch_root / f'tapedeck-demo-old{n}') for n in range(3))}, and 2 "
        "more"
    )
    assert sorted(p.name for p in scratch_root.iterdir()) == [f"tapedeck-demo-old{n}" for n in range(5)]
