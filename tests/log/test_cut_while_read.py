"""A log cut short (truncated in place) while a reading command is still reading it: the command says so and fails,
instead of printing, with exit 0, a report of bytes the file no longer holds."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.gen_session import generate
from core.cli import main
from core.log.decoder import LogDecoder
from core.log.linestore import LineStore
from core.read.load import READ_CHUNK


def _log_changed_mid_read(path: Path, chunks: int, change: Callable[[], None], monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A generated log of about ``chunks`` reads at ``path``; ``change`` runs once, between the first and second read
    of the command's first pass that reads more than once (another writer at work; a header read before the pass
    reads once). Returns the sizes the decoders were fed, as the command reads."""
    generate(path, chunks * READ_CHUNK, seed=3, profile="mixed")
    feed, fed, seen, changed = LogDecoder.feed, [], {}, []

    def fed_then_changed(self: LogDecoder, data: bytes) -> object:
        fed.append(len(data))
        if id(self) in seen and not changed:
            changed.append(change())
        seen[id(self)] = self  # held, so that no later decoder gets a freed one's id and reads as fed before
        return feed(self, data)

    monkeypatch.setattr(LogDecoder, "feed", fed_then_changed)
    return fed


def _session_in_root(tmp_path: Path) -> tuple[Path, Path]:
    """A sessions root and the log of its one session, whose folder is made."""
    root = tmp_path / "sessions"
    log = root / "project" / "s1" / "session.jsonl"
    log.parent.mkdir(parents=True)
    return root, log


def _fails_saying(
    command: list[str], root: Path, log: Path, capsys: pytest.CaptureFixture[str], said: str
) -> None:
    """``command`` (``{log}`` and ``{root}`` filled in) exits 2 saying ``said`` and to read the log again, and
    prints no report of the log as if it were whole."""
    assert main([part.format(log=log, root=root) for part in command]) == 2
    out, err = capsys.readouterr()
    assert said in err and "read it again" in err, err
    assert out == ""


@pytest.mark.parametrize("command", [["inspect", "--json"], ["events", "--json"], ["surface", "--json"], ["cost"]])
def test_a_log_truncated_during_the_read_is_an_error(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "session.jsonl"
    fed = _log_changed_mid_read(log, 8, lambda: os.truncate(log, READ_CHUNK // 2), monkeypatch)
    assert main([command[0], str(log), *command[1:]]) != 0
    err = capsys.readouterr().err
    assert "truncated" in err and "while it was read" in err, err
    assert len(fed) >= 2  # the cut came mid-read


def test_a_log_that_grows_during_the_read_is_read_as_usual(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "session.jsonl"

    def append() -> None:
        with open(log, "ab") as f:
            f.write(b"\n")  # an append (a blank line): the readers take what is there

    _log_changed_mid_read(log, 4, append, monkeypatch)
    assert main(["inspect", str(log), "--json"]) == 0


@pytest.mark.parametrize(
    "command", [["recall", "turn", "{log}", "1"], ["seal", "{log}"], ["fold", "{log}"], ["status", "{log}"]]
)
def test_a_log_replaced_during_the_read_is_never_read_back_from_the_new_file(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the commands that read events back by seq after the pass reopened the path: a copy with the same lines where
    # they were (one task's letters swapped here) was printed as the log they had read, exit 0
    log, copy = tmp_path / "session.jsonl", tmp_path / "copy.jsonl"

    def replace() -> None:
        raw = log.read_bytes()
        task = json.loads(raw.split(b"\n")[5])["data"]["content"][0]["text"]
        copy.write_bytes(raw.replace(json.dumps(task)[1:-1].encode(), json.dumps(task.swapcase())[1:-1].encode(), 1))
        os.replace(copy, log)

    _log_changed_mid_read(log, 8, replace, monkeypatch)
    assert main([part.format(log=log) for part in command]) == 2
    out, err = capsys.readouterr()
    assert "the log was replaced while it was read" in err and "read it again" in err, err
    assert out == ""


@pytest.mark.parametrize("fmt", ["md", "json", "html"])
def test_an_export_of_a_log_truncated_during_the_read_fails_and_writes_nothing(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log, out = tmp_path / "session.jsonl", tmp_path / f"out.{fmt}"
    _log_changed_mid_read(log, 8, lambda: os.truncate(log, READ_CHUNK // 2), monkeypatch)
    assert main(["export", str(log), "--format", fmt, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "truncated" in err and "while it was read" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]  # no export, no temporary file


@pytest.mark.parametrize("command", [["alerts", "{log}"], ["alerts", "{log}", "--json"], ["sessions", "{root}"]])
def test_alerts_and_sessions_on_a_log_truncated_during_the_read_fail(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, log = _session_in_root(tmp_path)
    # the alert pass reads a slice at a time: cut below the first one
    _log_changed_mid_read(log, 8, lambda: os.truncate(log, 100_000), monkeypatch)
    _fails_saying(command, root, log, capsys, "the log was truncated to 100,000 bytes while it was read")


@pytest.mark.parametrize("command", [["alerts", "{log}"], ["sessions", "{root}"]])
def test_alerts_and_sessions_reading_back_a_line_cut_off_say_the_log_was_truncated(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the rules read lines back by seq (a request's messages): a cut between the read of a slice and the rules'
    # pass over its events said only 'the line at offset … no longer holds seq …'
    root, log = _session_in_root(tmp_path)
    generate(log, 8 * READ_CHUNK, seed=3, profile="mixed")
    raw = LineStore.raw

    def cut_then_read(self: LineStore, *args: Any, **kwargs: Any) -> Any:
        os.truncate(log, 1_000)
        return raw(self, *args, **kwargs)

    monkeypatch.setattr(LineStore, "raw", cut_then_read)
    _fails_saying(command, root, log, capsys, "the log was truncated to 1,000 bytes while it was read")


def _root_with_a_session_cut_mid_read(
    tmp_path: Path, fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, Path]:
    """A sessions root of two sessions, the first one's log cut while a command reads it: (root, its log, the
    other's log)."""
    root = tmp_path / "sessions"
    log, other = root / "project" / "s1" / "session.jsonl", root / "project" / "s2" / "session.jsonl"
    other.parent.mkdir(parents=True)
    log.parent.mkdir()
    other.write_bytes((fixtures_dir / "multi-turn.session.jsonl").read_bytes())
    _log_changed_mid_read(log, 8, lambda: os.truncate(log, 100_000), monkeypatch)
    return root, log, other


@pytest.mark.parametrize("command", [["sessions"], ["alerts", "--set", "alerts.budget.usd=0.0001"]])
def test_a_root_listing_goes_on_past_a_session_cut_during_the_read(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    fixtures_dir: Path,
) -> None:
    # one session's log cut while the listing read it stopped the whole listing, exit 2, the other sessions unlisted
    root, log, other = _root_with_a_session_cut_mid_read(tmp_path, fixtures_dir, monkeypatch)
    assert main([command[0], str(root), "--json", *command[1:]]) == 2  # a session unread: the listing is not whole
    out, err = capsys.readouterr()
    assert f"{log}: the log was truncated to 100,000 bytes while it was read" in err and "read it again" in err, err
    listed = json.loads(out)
    # the other session's row, or alert (its cost passes the budget), and nothing of the cut one
    assert [item["path"] for item in listed] == [str(other)], listed


def test_a_root_listing_past_a_cut_session_says_so_in_its_heading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fixtures_dir: Path
) -> None:
    root, _, _ = _root_with_a_session_cut_mid_read(tmp_path, fixtures_dir, monkeypatch)
    assert main(["sessions", str(root)]) == 2
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"1 session under {root} (1 more could not be read: see stderr)", out


def _replace(log: Path) -> None:
    """Put a copy of ``log`` in its place (another file, the same bytes), as an editor's save does."""
    copy = log.with_name("copy.jsonl")
    copy.write_bytes(log.read_bytes())
    os.replace(copy, log)


def _rewrite_in_place(log: Path) -> None:
    """Write other bytes over the log's start, in the same file."""
    with open(log, "r+b") as f:
        head = f.read(64)
        f.seek(0)
        f.write(head.swapcase())


@pytest.mark.parametrize("change", [_replace, _rewrite_in_place])
@pytest.mark.parametrize("command", [["alerts", "{log}"], ["alerts", "{log}", "--json"], ["sessions", "{root}"]])
def test_alerts_and_sessions_on_a_log_replaced_during_the_read_fail(
    command: list[str], change: Callable[[Path], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # their one-off read took the new file from its start, silently, and reported it as the log read (exit 0/1),
    # where the commands that read events back say the log was replaced while it was read
    root, log = _session_in_root(tmp_path)
    _log_changed_mid_read(log, 8, lambda: change(log), monkeypatch)
    _fails_saying(command, root, log, capsys, f"{log}: the log was replaced while it was read")


@pytest.mark.parametrize("command", [["alerts", "{log}"], ["alerts", "{log}", "--json"], ["sessions", "{root}"]])
def test_alerts_and_sessions_on_a_log_removed_during_the_read_fail(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # their one-off read stopped where the log went and reported what it had read as the whole log, exit 0/1 (the
    # other reading commands, holding the file open, read it whole)
    root, log = _session_in_root(tmp_path)
    _log_changed_mid_read(log, 8, log.unlink, monkeypatch)
    _fails_saying(command, root, log, capsys, f"{log}: the log was removed while it was read")


def test_sessions_of_named_logs_counts_one_removed_during_the_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fixtures_dir: Path
) -> None:
    # a named log that is gone was also taken for one whose header cannot be read: two errors for it, '2 more'
    root, log = _session_in_root(tmp_path)
    other = root / "project" / "s2" / "session.jsonl"
    other.parent.mkdir()
    other.write_bytes((fixtures_dir / "multi-turn.session.jsonl").read_bytes())
    _log_changed_mid_read(log, 8, log.unlink, monkeypatch)
    assert main(["sessions", str(other), str(log)]) == 2
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == f"1 session in {other}, {log} (1 more could not be read: see stderr)", out
    assert err == f"tapedeck: {log}: the log was removed while it was read: another program deleted or moved it; read it again\n"


@pytest.mark.parametrize(
    "command",
    [["inspect", "{log}"], ["inspect", "{log}", "--json"], ["events", "{log}"], ["events", "{log}", "--json"],
     ["surface", "{log}"], ["cost", "{log}"], ["seal", "{log}"], ["fold", "{log}"], ["status", "{log}"],
     ["recall", "turn", "{log}", "1"], ["alerts", "{log}"], ["sessions", "{root}"]],
)
def test_a_log_truncated_ahead_of_the_read_is_an_error_too(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # cut beyond what the pass had read, the log was read to its new end and its first part printed as the whole
    # log, exit 0 (its last line, cut in two, a torn-line warning at most)
    root, log = _session_in_root(tmp_path)
    _log_changed_mid_read(log, 8, lambda: os.truncate(log, 5 * READ_CHUNK), monkeypatch)
    assert main([part.format(log=log, root=root) for part in command]) == 2
    err = capsys.readouterr().err
    assert f"{log}: the log was truncated to {5 * READ_CHUNK:,} bytes while it was read" in err, err
    assert "read it again" in err, err


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="no procfs")
@pytest.mark.parametrize("command", [["inspect"], ["events", "--json"], ["cost"], ["seal"], ["alerts"]])
def test_a_file_whose_size_reads_0_though_it_holds_bytes_is_read_as_a_stream(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # a /proc file's size is 0 whatever it holds: once read, it was said to have been 'truncated to 0 bytes while it
    # was read' (read it again: the same); it is read to its end, and what it holds said as 'alerts' says it
    assert main([command[0], "/proc/self/status", *command[1:]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tapedeck: /proc/self/status: line 1 is not valid JSON") and err.count("\n") == 1, err
