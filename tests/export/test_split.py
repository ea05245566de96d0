"""A big log's export in two processes (``core.export.split``) writes the bytes of the export in one process, and
an export whose renderer dies, hangs or miscounts is done again in one process, whole, with no process left."""

from __future__ import annotations

import fcntl
import io
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bench.gen_session import generate
from core.cli import main
from core.export import split, write
from core.export.build import ExportOptions
from core.export.redact import Redactor
from core.export.write import export, export_to_file
from core.read.notes import sidecar_paths
from tests.conftest import FIXTURES, Processes, process_gone
from tests.export.planted import plant

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ("html", "md", "json")
VARIANTS: dict[str, dict[str, Any]] = {"end": {}, "turn": {"turn": 2}, "step": {"turn": 1, "step": 1}}


@pytest.fixture(autouse=True)
def _own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TAPEDECK_TEST_SECRET", "ENVSECRET-93xk2-value")
    if threading.active_count() > 1:  # a thread an earlier test left idle: the renderer uses none of its locks
        monkeypatch.setattr(split, "active_count", lambda: 1)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("split")
    logs = []
    for profile, size in (("dsh-plain", 1_500_000), ("mixed", 1_000_000), ("read-heavy", 600_000)):
        logs.append(root / f"{profile}.jsonl")
        generate(logs[-1], size, seed=3, profile=profile)
    logs.append(root / "mixed.jsonl.zstd")
    generate(logs[-1], 800_000, seed=5, profile="mixed", zstd=True)
    return logs


def _logs(generated: list[Path], tmp_path: Path) -> list[Path]:
    """The generated logs, DSH fixtures, a log with planted secrets, and a copy of one with notes."""
    planted = plant(tmp_path / "planted.jsonl", "my key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123", "password=hunter22",
                    "home /root/notes and ENVSECRET-93xk2-value")  # fmt: skip
    noted = Path(shutil.copy(generated[1], tmp_path / "noted.jsonl"))
    for seq in (3, 40, 41, 42):
        assert main(["note", str(noted), "--seq", str(seq), f"seen at {seq}: password=hunter22 /root/x"]) == 0
    unread = Path(shutil.copy(generated[0], tmp_path / "unread.jsonl"))  # its notes' sidecar is damaged
    sidecar_paths(unread)[0].write_text('{"version": 1, "notes": {"3": {"text": "lost"}}, ')
    fixtures = [FIXTURES / name for name in ("compaction-recovery.session.jsonl", "subagent-spawn-in-process.session.jsonl",
                                             "tool-call-turn.session.jsonl", "multi-turn.session.jsonl")]  # fmt: skip
    return [*generated, *fixtures, planted, noted, unread]


def _export(log: Path, fmt: str, jobs: str, monkeypatch: pytest.MonkeyPatch, redact: bool = True,
            **moment: Any) -> tuple[bytes, dict[str, Any] | str]:  # fmt: skip
    """The export's bytes and what it said of them (or the error it raised), with ``TAPEDECK_EXPORT_JOBS=jobs``."""
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", jobs)
    out = io.BytesIO()
    try:
        doc = export(log, out, fmt, ExportOptions(redactor=Redactor() if redact else None, **moment))
    except Exception as exc:  # noqa: BLE001 - the error is part of what is compared
        return out.getvalue(), f"{type(exc).__name__}: {exc}"
    return out.getvalue(), {key: doc[key] for key in ("rows", "shown", "redaction", "marks", "notes", "notesUnread", "session")}


@pytest.fixture
def forked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pid of each renderer forked."""
    pids: list[int] = []
    real = split._Renderer.__init__

    def init(self: split._Renderer, pid: int, fd: int) -> None:
        pids.append(pid)
        real(self, pid, fd)

    monkeypatch.setattr(split._Renderer, "__init__", init)
    return pids


def _no_child(pids: list[int]) -> None:
    """Every renderer forked (``pids``, some) has ended and was reaped."""
    assert pids
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.fixture
def splits_seen(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each split export finished in two processes (True) or was done again in one."""
    seen: list[bool] = []
    real = split.split_export

    def spy(*args: Any, **kwargs: Any) -> dict[str, Any] | None:
        doc = real(*args, **kwargs)
        seen.append(doc is not None)
        return doc

    monkeypatch.setattr(write, "split_export", spy)
    return seen


@pytest.mark.parametrize("fmt", FORMATS)
def test_two_processes_write_the_bytes_of_one(fmt: str, generated: list[Path], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch, splits_seen: list[bool], forked: list[int]) -> None:  # fmt: skip
    compared = 0
    for log in _logs(generated, tmp_path):
        for name, moment in VARIANTS.items():
            for redact in (True, False):
                one = _export(log, fmt, "1", monkeypatch, redact, **moment)
                two = _export(log, fmt, "2", monkeypatch, redact, **moment)
                assert one[0] == two[0], f"{log.name} {fmt} {name} redact={redact}"
                assert one[1] == two[1], f"{log.name} {fmt} {name} redact={redact}"
                compared += isinstance(one[1], dict)
    assert compared > 40
    assert splits_seen.count(True) == compared  # each failing export was done again in one process
    _no_child(forked)


def test_a_file_export_in_two_processes_is_the_file_of_one(generated: list[Path], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch, forked: list[int]) -> None:  # fmt: skip
    for fmt in FORMATS:
        files = []
        for jobs in ("1", "2"):
            monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", jobs)
            files.append(tmp_path / f"{jobs}.{fmt}")
            export_to_file(generated[0], files[-1], fmt, ExportOptions(redactor=Redactor()))
        assert files[0].read_bytes() == files[1].read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == sorted(f"{j}.{f}" for j in "12" for f in FORMATS)
    _no_child(forked)


def _one_process(log: Path, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", "1")
    export_to_file(log, tmp_path / f"one.{fmt}", fmt, ExportOptions(redactor=Redactor()))
    return (tmp_path / f"one.{fmt}").read_bytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_renderer_killed_mid_export_leaves_the_export_whole(fmt: str, generated: list[Path], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch, splits_seen: list[bool], forked: list[int]) -> None:  # fmt: skip
    want = _one_process(generated[0], fmt, tmp_path, monkeypatch)
    monkeypatch.setattr(split, "BATCH", 1 << 12)  # many batches: the renderer dies after the third
    sends = []
    real = split._Renderer.flush

    def flush(self: split._Renderer) -> None:
        sends.append(self.pid)
        if len(sends) == 3:
            os.kill(self.pid, signal.SIGKILL)
            os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)  # dead, its pipe closed (reaped by the export)
        real(self)

    monkeypatch.setattr(split._Renderer, "flush", flush)
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", "2")
    doc = export_to_file(generated[0], tmp_path / f"two.{fmt}", fmt, ExportOptions(redactor=Redactor()))
    assert len(sends) == 3 and splits_seen == [False]  # of some hundred batches: the pass stopped at the third
    assert (tmp_path / f"two.{fmt}").read_bytes() == want
    assert doc["rows"] > 0
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]
    _no_child(forked)


def test_a_renderer_that_hangs_is_given_up_on(generated: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             splits_seen: list[bool], forked: list[int]) -> None:  # fmt: skip
    want = _one_process(generated[1], "html", tmp_path, monkeypatch)
    monkeypatch.setattr(split, "WAIT", 0.5)
    monkeypatch.setattr(split, "_render", lambda *args: time.sleep(3600))  # the forked renderer takes nothing
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", "2")
    export_to_file(generated[1], tmp_path / "two.html", "html", ExportOptions(redactor=Redactor()))
    assert splits_seen == [False]
    assert (tmp_path / "two.html").read_bytes() == want
    _no_child(forked)


def test_a_renderer_whose_count_is_wrong_is_not_believed(generated: list[Path], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch, splits_seen: list[bool], forked: list[int]) -> None:  # fmt: skip
    want = _one_process(generated[0], "json", tmp_path, monkeypatch)
    real = split._Renderer.finish

    def finish(self: split._Renderer) -> None:
        real(self)
        self.sent += 1  # a row the renderer did not account for

    monkeypatch.setattr(split._Renderer, "finish", finish)
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", "2")
    export_to_file(generated[0], tmp_path / "two.json", "json", ExportOptions(redactor=Redactor()))
    assert splits_seen == [False]
    assert (tmp_path / "two.json").read_bytes() == want
    _no_child(forked)


def test_an_export_that_cannot_fork_is_done_in_one_process(generated: list[Path], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    want = _one_process(generated[2], "md", tmp_path, monkeypatch)

    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", "2")
    export_to_file(generated[2], tmp_path / "two.md", "md", ExportOptions(redactor=Redactor()))
    assert (tmp_path / "two.md").read_bytes() == want


def test_a_failing_export_in_two_processes_fails_as_in_one(generated: list[Path], capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch, forked: list[int]) -> None:  # fmt: skip
    said = []
    for jobs in ("1", "2"):
        monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", jobs)
        code = main(["export", str(generated[0]), "--format", "json", "--turn", "999", "--redact"])
        said.append((code, capsys.readouterr()))
    assert said[0] == said[1] and said[0][0] != 0
    _no_child(forked)


def test_who_splits(generated: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    log = generated[0]
    monkeypatch.delenv("TAPEDECK_EXPORT_JOBS", raising=False)
    assert not split.splits(log, ExportOptions())  # a small log
    monkeypatch.setattr(split, "SPLIT_BYTES", 1000)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (1.2, 3.0, 3.0))
    assert split.splits(log, ExportOptions())
    monkeypatch.setattr(os, "getloadavg", lambda: (1.6, 0.5, 0.5))  # busy: the two would share a core
    assert not split.splits(log, ExportOptions())
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.5, 0.5))
    assert not split.splits(log, ExportOptions(at=40))
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", "1")
    assert not split.splits(log, ExportOptions())
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", "")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert not split.splits(log, ExportOptions())


@pytest.mark.parametrize(("jobs", "split_it"), [("²", False), ("٣", False), ("9" * 5000, True), ("01", False),
                                                 ("0", False), (" 2 ", True)],
                         ids=["superscript", "arabic-indic", "5000-digits", "leading-zero", "zero", "spaces"])  # fmt: skip
def test_a_jobs_count_python_will_not_convert_is_read_as_written(
    generated: list[Path], monkeypatch: pytest.MonkeyPatch, jobs: str, split_it: bool
) -> None:
    """TAPEDECK_EXPORT_JOBS took what str.isdigit takes, which int() refuses for a superscript digit and for more
    than 4,300 digits: 'export' ended in a ValueError traceback; and '01' was read as 1 but compared as text, so
    it split the export it says to keep in one process. A count is ASCII digits, of any length."""
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 9.0, 9.0))  # busy: only the variable can split it
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", jobs)
    assert split.splits(generated[0], ExportOptions()) is split_it


def test_a_machine_without_cpu_affinity_or_load_average_still_exports(
    generated: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, splits_seen: list[bool]
) -> None:
    """os.sched_getaffinity is Linux's (macOS has none) and os.getloadavg may fail: asking them failed every export
    that was not at a moment or filtered, whatever its size; the CPUs are then counted as os.cpu_count() counts
    them, and a load that cannot be read keeps the export in one process."""
    monkeypatch.delenv("TAPEDECK_EXPORT_JOBS", raising=False)
    monkeypatch.delattr(os, "sched_getaffinity")
    assert export_to_file(generated[2], tmp_path / "x.md", "md", ExportOptions())["rows"] > 0
    monkeypatch.setattr(split, "SPLIT_BYTES", 1000)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.5, 0.5))
    assert split.splits(generated[2], ExportOptions())

    def no_load() -> tuple[float, float, float]:
        raise OSError("load average unobtainable")

    monkeypatch.setattr(os, "getloadavg", no_load)
    assert not split.splits(generated[2], ExportOptions())
    monkeypatch.delattr(fcntl, "F_SETPIPE_SZ")  # nor can every system size a pipe: two processes all the same
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", "2")
    assert export_to_file(generated[2], tmp_path / "y.md", "md", ExportOptions()) is not None
    assert (tmp_path / "y.md").read_bytes() == (tmp_path / "x.md").read_bytes() and splits_seen == [True]


def test_an_export_from_a_thread_stays_in_one_process(generated: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", "2")
    monkeypatch.setattr(split, "active_count", threading.active_count)
    answers: list[bool] = []
    worker = threading.Thread(target=lambda: answers.append(split.splits(generated[0], ExportOptions())))
    worker.start()
    worker.join()
    assert answers == [False]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_a_renderer_ends_when_the_export_is_killed(generated: list[Path], tmp_path: Path, processes: Processes) -> None:
    env = {**os.environ, "TAPEDECK_EXPORT_JOBS": "2"}
    cli = processes.start([sys.executable, "-m", "tui.cli", "export", str(generated[0]), "-o", str(tmp_path / "x.html")],
                          env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    children = Path(f"/proc/{cli.pid}/task/{cli.pid}/children")
    renderer = None
    while renderer is None and cli.poll() is None:  # the renderer is forked once the imports are done
        found = children.read_text().split() if children.exists() else []
        renderer = int(found[0]) if found else None
        time.sleep(0.002)
    if renderer is None:
        pytest.skip("the export ended before its renderer was seen")
    cli.kill()
    cli.wait()
    deadline = time.monotonic() + 60  # the renderer reads the end of its pipe and leaves (reaped by whoever adopted it)
    while not process_gone(renderer) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert process_gone(renderer)


@pytest.mark.parametrize(("fmt", "jobs", "built"), [("html", "2", False), ("json", "2", False), ("md", "2", False),
                                                    ("md", "1", False), ("html", "1", True), ("json", "1", True)])  # fmt: skip
def test_only_the_process_that_makes_the_nodes_pieces_builds_their_wire_messages(
    fmt: str, jobs: str, built: bool, generated: list[Path], monkeypatch: pytest.MonkeyPatch, splits_seen: list[bool]
) -> None:
    """The request pass measures each surface node's share of a prompt; where the export keeps each node's
    pieces it also builds the node's wire messages, which the pieces are made of. The pass of a split export
    (whose renderer makes the pieces, building them again) and a Markdown export (no pieces: no messages
    shown) built them for nothing (about 5 ms a 20 MB dsh-plain log: ``wired_digest`` 15 ms, the
    measure alone 10 ms). The bytes stay the same."""
    from core.rebuild import request

    wired, measured = [], []
    real_wired, real_measured = request.wired_digest, request.node_digest
    monkeypatch.setattr(request, "wired_digest", lambda event: wired.append(1) or real_wired(event))
    monkeypatch.setattr(request, "node_digest", lambda event: measured.append(1) or real_measured(event))
    data, doc = _export(generated[0], fmt, jobs, monkeypatch)
    assert isinstance(doc, dict) and splits_seen == ([True] if jobs == "2" else [])
    assert (len(wired) > 50, len(measured) > 50) == ((True, False) if built else (False, True))
    monkeypatch.setattr(request, "wired_digest", real_wired)
    monkeypatch.setattr(request, "node_digest", real_measured)
    assert _export(generated[0], fmt, "1", monkeypatch) == (data, doc)
