"""Paths and special files: every reader answers with one accurate line and exit 2, and nothing blocks.

The CLI runs in a child process with a timeout, so a regression that blocks on a FIFO fails instead of hanging
the suite. Permission tests drop privileges for real: as root a forked child becomes ``nobody`` (mode 000 stops
everyone but root), otherwise it keeps the current user.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import pkgutil
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import zstandard

import core
import tui
from tests.log.helpers import HEADER, one_turn_with_tool, raw_log, zstd_log
from tui.cli import main
from tui.live import LiveSession

REPO = Path(__file__).resolve().parents[2]
COMMANDS = (["inspect"], ["surface"], ["events"], ["inspect", "--json"])


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *argv], capture_output=True, text=True, timeout=120, cwd=REPO, check=False
    )


def _one_line_exit_2(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("tapedeck: "), done.stderr
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in done.stderr


def _every_command(path: Path, *needles: str) -> None:
    for command in COMMANDS:
        _one_line_exit_2(_cli(command[0], str(path), *command[1:]), *needles)


def _watch_error(path: Path) -> str:
    """The error a LiveSession (the watch screen's loader) ends with, following as ``watch`` does."""
    live = LiveSession(path, follow=True, interval=0.01)
    thread = threading.Thread(target=live.run, daemon=True)
    thread.start()
    thread.join(60)
    if thread.is_alive():
        live.stop()
        thread.join(60)
        raise AssertionError(f"the loader did not stop: phase {live.phase}")
    assert live.phase == "error" and live.error
    return live.error


def test_fifo_path_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    _every_command(fifo, "is a FIFO")
    _every_command(tmp_path, "is a FIFO")  # the session directory's log is the FIFO
    assert "is a FIFO" in _watch_error(fifo)


def test_raw_log_named_zstd_says_so(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(raw_log(one_turn_with_tool()))
    _every_command(path, "uncompressed JSON lines")
    assert "uncompressed JSON lines" in _watch_error(path)


def test_byte_order_mark_is_named(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + raw_log(one_turn_with_tool()))
    _every_command(path, "byte order mark")
    assert "byte order mark" in _watch_error(path)


def test_reserved_bit_in_first_zstd_frame_is_named(tmp_path: Path) -> None:
    blob = bytearray(zstd_log(one_turn_with_tool()))
    blob[4] |= 0x08  # frame header descriptor: bit 3 is reserved and must be zero
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(bytes(blob))
    _every_command(path, "first zstd frame is unreadable", "reserved bit")
    assert "reserved bit" in _watch_error(path)


def test_reserved_bit_in_a_later_frame_is_a_diagnostic(tmp_path: Path) -> None:
    header = zstandard.ZstdCompressor(write_checksum=True).compress(raw_log([])[:-1] + b"\n")
    rest = bytearray(zstd_log(one_turn_with_tool())[len(header) :])
    rest[4] |= 0x08
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(header + bytes(rest))
    done = _cli("inspect", str(path))
    assert done.returncode == 0 and "corrupt-frame" in done.stdout and "reserved bit" in done.stdout


# --- permissions ----------------------------------------------------------------------------------------------


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A temporary directory an unprivileged child can enter (pytest's own tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="tapedeck-perm-"))
    path.chmod(0o755)
    yield path
    for sub in path.rglob("*"):
        if sub.is_dir():
            sub.chmod(0o755)
    shutil.rmtree(path)


def _unprivileged(fn: Callable[..., str], *args: str) -> str:
    """``fn(*args)`` in a forked child that can no longer read what mode 000 protects: as root it becomes ``nobody``.

    The child runs code this process already imported, so it needs no access to the interpreter or the checkout.
    """
    uid = gid = None
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam("nobody")
        except KeyError:
            pytest.skip("running as root and there is no 'nobody' user to drop privileges to")
        uid, gid = entry.pw_uid, entry.pw_gid
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop privileges, run, report, exit without running the parent's cleanup
        code = 0
        try:
            os.close(read_end)
            if uid is not None:
                os.setgroups([])
                os.setgid(gid)  # type: ignore[arg-type]
                os.setuid(uid)
            result = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent as the result
            result, code = f"child raised {type(exc).__name__}: {exc}", 1
        os.write(write_end, result.encode())
        os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        out = pipe.read().decode()
    os.waitpid(pid, 0)
    return out


def _main(*argv: str) -> str:
    """``core.cli.main(argv)`` as ``<exit code>|<stderr>``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as exc:  # argparse and the console entry point exit this way
            rc = exc.code
    return f"{rc}|{err.getvalue()}"


def _refused(result: str, *needles: str) -> None:
    rc, _, err = result.partition("|")
    assert rc == "2" and err.count("\n") == 1 and err.startswith("tapedeck: "), result
    for needle in needles:
        assert needle in err, result


@pytest.fixture(scope="module", autouse=True)
def _commands_imported() -> None:
    """Import every module of core and tui now: a child that dropped privileges may not read the checkout, and a
    command imports some of its modules only when it runs (``watch`` the fleet's), which an earlier test of the same
    process may or may not have done."""
    for package in (core, tui):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not module.name.endswith(".__main__"):  # ``python -m core.cli`` would run the CLI
                importlib.import_module(module.name)


def test_permission_denied_directory_is_one_line(shared_tmp: Path) -> None:
    session = shared_tmp / "locked"
    session.mkdir()
    (session / "session.jsonl").write_bytes(raw_log(one_turn_with_tool()))
    session.chmod(0o000)
    for target in (session, session / "session.jsonl"):
        for command in COMMANDS:
            _refused(_unprivileged(_main, command[0], str(target), *command[1:]), "Permission denied")


def test_unreadable_file_in_watch_says_it_cannot_be_read(shared_tmp: Path) -> None:
    path = shared_tmp / "session.jsonl"
    path.write_bytes(raw_log(one_turn_with_tool(), HEADER))
    path.chmod(0o000)
    _refused(_unprivileged(_main, "watch", str(path)), "cannot read", "Permission denied")

    def load() -> str:
        live = LiveSession(path, follow=True, interval=0.01)
        live.run()
        return f"{live.phase}|{live.error}"

    phase, _, error = _unprivileged(load).partition("|")
    assert phase == "error" and "cannot read" in error and "Permission denied" in error


def test_a_sessions_root_is_a_directory_without_a_session_log_of_its_own(tmp_path: Path) -> None:
    from core.log.layout import RAW_NAME, ZSTD_NAME, is_sessions_root

    session = tmp_path / "--w--" / "s1"
    session.mkdir(parents=True)
    (session / RAW_NAME).write_text("")
    packed = tmp_path / "--w--" / "s2"
    packed.mkdir()
    (packed / ZSTD_NAME).write_bytes(b"")
    assert is_sessions_root(tmp_path) and is_sessions_root(tmp_path / "--w--")
    assert not is_sessions_root(session) and not is_sessions_root(packed)
    assert not is_sessions_root(session / RAW_NAME) and not is_sessions_root(tmp_path / "missing")
    (tmp_path / "--w--" / "s3" / RAW_NAME).mkdir(parents=True)  # a directory by the log's name is no log
    assert is_sessions_root(tmp_path / "--w--" / "s3")


def _swapped_for_a_fifo(path: Path) -> None:
    """Put a FIFO where the log ``path`` is (as a rename over it does)."""
    fifo = path.with_name("swap.fifo")
    os.mkfifo(fifo)
    os.replace(fifo, path)


def _swapped_once_resolved(monkeypatch: pytest.MonkeyPatch, module: object) -> None:
    """Make ``module``'s ``resolve_log_path`` put a FIFO where the log it found is, right after finding it (a rename
    over the log between its check and its open)."""
    resolve = module.resolve_log_path  # type: ignore[attr-defined]

    def resolved_then_swapped(path: object) -> Path:
        found = resolve(path)
        _swapped_for_a_fifo(found)
        return found

    monkeypatch.setattr(module, "resolve_log_path", resolved_then_swapped)


def _returns(call: Callable[[], object], fifo: Path) -> object:
    """What ``call`` returns, run in a thread that must not block on the FIFO at ``fifo`` (if it does: opened for
    writing to let it go, and the test fails)."""
    found: list[object] = []
    worker = threading.Thread(target=lambda: found.append(call()), daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():
        with open(fifo, "wb"):
            pass
        worker.join(60)
        raise AssertionError(f"blocked opening the FIFO swapped in for {fifo}")
    return found[0] if found else None


def test_a_log_swapped_for_a_fifo_after_its_stat_is_never_opened_to_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Discovery (a new session's header, the fleet's and alerts' each new log) and a follower's poll check that a
    log is a regular file, then opened it by its path: a FIFO renamed over it in between was opened, and the open
    waited for a writer that never came, holding the fleet, ``alerts --follow`` or ``sessions`` for ever."""
    from core.log import reader
    from core.log.tail import Tailer

    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes(raw_log(one_turn_with_tool()))
    _swapped_once_resolved(monkeypatch, reader)
    assert _returns(lambda: reader.read_header(log), log) is None
    monkeypatch.undo()

    log.unlink()
    log.write_bytes(raw_log(one_turn_with_tool()))
    tailer = Tailer(log)
    assert tailer.poll().events
    with log.open("ab") as f:
        f.write(raw_log(one_turn_with_tool()).split(b"\n", 1)[1])
    stat_of = Tailer._stat

    def stat_then_swapped(self: Tailer) -> object:
        st = stat_of(self)
        if st is not None and st.regular:
            _swapped_for_a_fifo(log)
        return st

    monkeypatch.setattr(Tailer, "_stat", stat_then_swapped)
    update = _returns(tailer.poll, log)
    assert any("not a regular file" in d.message for d in update.diagnostics)  # type: ignore[attr-defined]


def test_a_log_swapped_for_a_fifo_before_an_event_is_read_back_is_a_replaced_log(tmp_path: Path) -> None:
    """The commands read events back from the log by seq after their pass (``sessions``' alert engine, ``fold``,
    ``request`` …, the TUI's list): a FIFO renamed over the log by then was opened to read from, and the open waited
    for a writer that never came; the read says the log is no longer a regular file."""
    from core.shared.errors import TapedeckError

    log = tmp_path / "session.jsonl"
    log.write_bytes(raw_log(one_turn_with_tool()))
    live = LiveSession(log, follow=False, retain_bytes=1)  # no event kept: each is read back
    live.run()
    _swapped_for_a_fifo(log)

    def read_back() -> object:
        try:
            return live.event(3)
        except TapedeckError as exc:
            return exc

    said = _returns(read_back, log)
    assert isinstance(said, TapedeckError) and "not a regular file" in str(said), said


def test_a_log_swapped_for_a_fifo_after_its_stat_is_not_waited_on_by_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reading command checks that the log it names is a regular file, then opened it by its path for its pass: a
    FIFO renamed over it in between was opened, and ``inspect`` waited for good (fz's root fuzz with files
    replaced mid-read); it says the log cannot be read, exit 2."""
    from core.cli import main as core_main
    from core.read import load

    log = tmp_path / "session.jsonl"
    log.write_bytes(raw_log(one_turn_with_tool()))
    _swapped_once_resolved(monkeypatch, load)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert _returns(lambda: core_main(["inspect", str(log)]), log) == 2
    assert "not a regular file" in err.getvalue()


def test_a_log_swapped_for_a_fifo_is_not_waited_on_by_the_tail_lineage_or_repair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tail preview (from the end, and decoded whole when the lines give no seqs), a child log's label read for
    the lineage and ``repair`` found the log, then opened it by its path: a FIFO renamed over it in between was
    opened, and the open waited for a writer that never came; each refuses what is no regular file without waiting."""
    from core.log import lineage, repair, tail
    from core.shared.errors import TapedeckError

    def caught(call: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            try:
                return call()
            except (OSError, TapedeckError) as exc:
                return exc

        return run

    log = tmp_path / "session.jsonl"
    data = raw_log(one_turn_with_tool())
    log.write_bytes(data)
    have = (len(data) - 3, data[-3:])  # the probe's end of the log: inside its last line, so earlier bytes are read
    _swapped_for_a_fifo(log)
    said = _returns(caught(lambda: tail.events_at_end(log, 5, have)), log)
    assert isinstance(said, OSError) and "not a regular file" in str(said), said

    log.unlink()
    log.write_bytes(raw_log([{k: v for k, v in e.items() if k != "seq"} for e in one_turn_with_tool()]))
    at_end = tail.events_at_end

    def at_end_then_swapped(path: Path, n: int) -> object:
        found = at_end(path, n)  # None: no seqs, so the log is decoded whole next
        _swapped_for_a_fifo(path)
        return found

    monkeypatch.setattr(tail, "events_at_end", at_end_then_swapped)
    said = _returns(caught(lambda: tail.tail_events(log, 5)), log)
    assert isinstance(said, TapedeckError) and "not a regular file" in str(said), said

    log.unlink()
    log.write_bytes(data)
    _swapped_once_resolved(monkeypatch, lineage)
    assert _returns(lambda: lineage.descriptor_label(log), log) is None

    log.unlink()
    log.write_bytes(data)
    header_of = repair.read_log_header

    def header_then_swapped(path: Path) -> object:
        found = header_of(path)
        _swapped_for_a_fifo(path)
        return found

    monkeypatch.setattr(repair, "read_log_header", header_then_swapped)
    said = _returns(caught(lambda: repair.repair_log(log)), log)
    assert isinstance(said, TapedeckError) and "not a regular file" in str(said), said


def test_a_log_swapped_for_a_fifo_is_not_waited_on_by_the_tuis_tail_probe_or_its_late_outcome_read(
    tmp_path: Path,
) -> None:
    """The TUI's own reads of the log by its path, siblings of the core readers above: the probe of a big log's end
    (is its tail dense enough to preview?) and the read of a request's outcome written after the view stopped
    reading opened a FIFO renamed over the log, and the open waited for a writer that never came (the list never
    filled, or the host check hung); the probe fails as the load's other reads do, and the outcome is not found."""
    from tui import live as live_module

    log = tmp_path / "session.jsonl"
    log.write_bytes(raw_log(one_turn_with_tool()))
    live = LiveSession(log, follow=False)
    live.run()
    _swapped_for_a_fifo(log)

    def probed() -> object:
        try:
            return live_module._dense_tail(log, 1 << 20)
        except OSError as exc:
            return exc

    said = _returns(probed, log)
    assert isinstance(said, OSError) and "not a regular file" in str(said), said
    assert _returns(lambda: live._late_outcome("r-1"), log) is None


def test_a_utf16_log_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A log saved as UTF-16 (an editor's or PowerShell's `>`) was refused as orjson words it: 'line 1 is not valid
    JSON (str is not valid UTF-8: surrogates not allowed: line 1 column 1 (char 0))'."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(raw_log(one_turn_with_tool()).decode().encode("utf-16"))
    assert main(["inspect", str(path)]) == 2
    assert capsys.readouterr().err == f"tapedeck: {path}: starts with a UTF-16 byte order mark; a DSH log is UTF-8\n"


@pytest.mark.parametrize("line", [0, 2], ids=["header", "event"])
def test_a_line_that_is_not_utf8_names_its_first_such_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: int
) -> None:
    """orjson says 'str is not valid UTF-8: surrogates not allowed: line 1 column 1 (char 0)' of any line that is
    not UTF-8, wherever the byte is and though no surrogate is in it: the line's first such byte is named."""
    lines = raw_log(one_turn_with_tool()).split(b"\n")
    lines[line] = lines[line].replace(b'"type"', b'"ty\xffpe"', 1)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(lines))
    said = "not UTF-8: its byte 4 (0xff) cannot be decoded"
    if line == 0:
        assert main(["inspect", str(path)]) == 2
        assert capsys.readouterr().err == f"tapedeck: {path}: line 1 is {said}\n"
    else:
        assert main(["inspect", str(path)]) == 0
        assert f"bad-json (seq 1, offset 147): line is {said}; {len(lines[line])} bytes skipped\n" in capsys.readouterr().out


@pytest.mark.parametrize(("packer", "name"), [("gzip", "gzip"), ("bz2", "bzip2"), ("lzma", "xz")])
def test_a_log_compressed_by_another_tool_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], packer: str, name: str
) -> None:
    """A log gzipped to keep it (`gzip session.jsonl`, renamed back) was refused as 'line 1 is not UTF-8: its byte 1
    (0x8b) cannot be decoded'; what compressed it is named, and the way to read it."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(importlib.import_module(packer).compress(raw_log(one_turn_with_tool())))
    assert main(["inspect", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"tapedeck: {path}: is {name}-compressed; tapedeck reads a log as it is or zstd-compressed: decompress it first\n"
    )
