"""The reading commands through the persistent index print exactly what a full read prints, before and after
appends; ``cache info`` and ``cache clear`` list and remove the index files."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import orjson
import pytest

from bench.gen_session import generate
from core.cli import main
from core.read import index
from core.shared.text import shown
from tests.conftest import no_access_path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dsh"
# what reads a log through its index: the whole log (inspect, surface) or the events of some types
COMMANDS = [
    ["inspect"],
    ["inspect", "--json"],
    ["surface"],
    ["surface", "--json"],
    ["events", "--type", "tool/result"],
    ["events", "--type", "tool/,!tool/call", "--json"],
    ["events", "--type", "assistant/chunk", "--turn", "1"],
    ["events", "--type", "turn/", "--type", "session/title", "--json"],
    ["surface", "--at", "3"],
]
# what reads the projection at the log's end and events read back by seq: the index holds both
READ_BACK = [
    ["recall", "turn", "{log}", "1"],
    ["recall", "step", "{log}", "1", "1", "--json"],
    ["recall", "search", "{log}", "error"],
    ["expand", "{log}", "--turn", "1", "--step", "1"],
    ["status", "{log}", "--workspace", "{dir}", "--json"],
]


@pytest.fixture(autouse=True)
def _every_log_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")


def _out(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _argv(argv: list[str], log: Path) -> list[str]:
    """``argv`` with ``log`` in its ``{log}`` (else right after the command) and its directory in ``{dir}``."""
    if "{log}" not in argv:
        return [argv[0], str(log), *argv[1:]]
    return [a.format(log=log, dir=log.parent) for a in argv]


def _cold(argv: list[str], log: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """What the command prints with no index (and none left behind)."""
    main(["cache", "clear", str(log)])
    found = _out(_argv(argv, log), capsys)
    main(["cache", "clear", str(log)])
    return found


def _warm(argv: list[str], log: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return _out(_argv(argv, log), capsys)


def _logs(tmp: Path) -> list[Path]:
    logs = [Path(shutil.copy(p, tmp / p.name)) for p in sorted(FIXTURES.glob("*.jsonl"))]
    for profile, zstd in (("mixed", False), ("short-turns", False), ("dsh-plain", False), ("mixed", True)):
        path = tmp / f"gen-{profile}.jsonl{'.zstd' if zstd else ''}"
        generate(path, 120_000, seed=4, profile=profile, zstd=zstd)
        logs.append(path)
    lines = (
        (tmp / "gen-short-turns.jsonl").read_bytes().split(b"\n")
    )  # with a corrupt line, a non-object line, a bad row
    lines.insert(len(lines) // 3, b'{"type":"tool/result","data":{"turn":1,')
    lines.insert(len(lines) // 2, b"[1, 2, 3]")
    lines.insert(len(lines) * 2 // 3, b'{"type":"text-chunks","seq0":"x","data":{}}')
    damaged = tmp / "gen-damaged.jsonl"
    damaged.write_bytes(b"\n".join(lines))
    return [*logs, damaged]


def test_indexed_reads_print_what_full_reads_print(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for log in _logs(tmp_path):
        expected = {tuple(argv): _cold(argv, log, capsys) for argv in COMMANDS}
        main(["inspect", str(log)])  # writes the index
        assert index.index_path(log).is_file(), log.name
        for argv in COMMANDS:
            assert _warm(argv, log, capsys) == expected[tuple(argv)], (log.name, argv)


def test_reads_after_appends_print_what_full_reads_print(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = tmp_path / "full.jsonl"
    generate(full, 300_000, seed=8, profile="dsh-plain")
    data = full.read_bytes()
    log = tmp_path / "session.jsonl"
    cuts = [data.index(b"\n", int(len(data) * share)) + 1 for share in (0.3, 0.6)] + [len(data)]
    log.write_bytes(data[: cuts[0]])
    main(["inspect", str(log)])
    for cut in cuts[1:]:
        with open(log, "ab") as f:
            f.write(data[log.stat().st_size : cut])
        for argv in COMMANDS[:-1]:
            warm = _warm(argv, log, capsys)
            assert warm == _cold(argv, log, capsys), argv
            main(["inspect", str(log)])  # the index again, as the warm read left it (or wrote it anew)


@pytest.mark.parametrize(
    "argv", READ_BACK, ids=["recall turn", "recall step", "recall search", "expand", "status"]
)
def test_recall_expand_and_status_read_a_log_again_from_its_index(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    """What the recall and expand tools and the prolong status read of a log is its projection at the end and its
    events read back by seq, both of which its index holds: a second read prints what the first, full read
    printed, and decodes nothing of a log that did not grow (each read decoded all of it)."""
    log = tmp_path / "session.jsonl"
    generate(log, 300_000, seed=8, profile="dsh-plain")
    first = _warm(argv, log, capsys)
    assert index.index_path(log).is_file()
    fed = request.getfixturevalue("decoder_feeds")  # from here on
    assert _warm(argv, log, capsys) == first
    assert sum(fed) == 0, fed


def test_cache_info_and_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = []
    for name in ("a", "b"):
        log = tmp_path / name / "session.jsonl"
        log.parent.mkdir()
        generate(log, 60_000, seed=1, profile="mixed")
        main(["inspect", str(log.parent)])
        logs.append(log)
    code, out, _ = _out(["cache", "info", "--json"], capsys)
    info = orjson.loads(out)
    assert code == 0 and info["dir"] == str(tmp_path / "cache")
    assert {f["kind"] for f in info["files"]} == {"index"}
    assert sorted(f["log"] for f in info["files"]) == [os.path.realpath(p) for p in logs]
    assert {f["state"] for f in info["files"]} == {"valid"}
    assert info["bytes"] == sum(f["bytes"] for f in info["files"]) > 0
    with open(logs[0], "r+b") as f:  # rewritten where it was indexed
        f.write(b"[")
    code, out, _ = _out(["cache", "info"], capsys)
    assert "2 file(s)" in out
    assert "stale (the log was rewritten)" in out and " valid" in out
    code, out, _ = _out(["cache", "clear", str(logs[0].parent), "--json"], capsys)
    assert [r["file"] for r in orjson.loads(out)["removed"]] == [str(index.index_path(logs[0]))]
    code, out, _ = _out(["cache", "clear"], capsys)
    assert code == 0 and out.startswith("removed 1 file(s)")
    assert (
        _out(["cache", "info"], capsys)[1] == f"no index files or alert checkpoints in {tmp_path / 'cache'}\n"
    )
    assert _out(["cache", "clear"], capsys)[1] == "nothing to remove\n"


def test_an_unreadable_index_file_is_listed_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = tmp_path / "cache" / "index"
    where.mkdir(parents=True)
    (where / ("0" * 32 + index.SUFFIX)).write_bytes(b"junk")
    code, out, _ = _out(["cache", "info", "--json"], capsys)
    (row,) = orjson.loads(out)["files"]
    assert code == 0 and row["state"] == "unreadable" and row["reason"] == "not a tapedeck index"


@pytest.mark.parametrize("file", ["cache", "cache/index", "cache/alerts", "above"])
def test_cache_info_and_clear_say_when_the_cache_directory_is_no_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], file: str
) -> None:
    # a file there (or on the way there) was taken for an empty cache: 'no index files', 'nothing to remove', exit 0
    (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / file).write_text("not a directory")
    if file == "above":
        monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "above" / "cache"))
    log = Path(shutil.copy(FIXTURES / "multi-turn.session.jsonl", tmp_path / "session.jsonl"))
    for argv in (["info"], ["clear"], ["info", str(log)], ["clear", str(log), "--json"]):
        code, out, err = _out(["cache", *argv], capsys)
        assert (code, out) == (2, ""), argv
        assert err.startswith(f"tapedeck: {tmp_path / file} is not a directory"), err
    assert (tmp_path / file).read_text() == "not a directory"


def test_cache_info_and_clear_say_when_the_cache_directory_cannot_be_looked_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a cache directory under a place this user may not look at (another user's home, here a link to another
    # process's working directory, which not even root may follow) ended 'cache info' and 'cache clear' in a
    # PermissionError traceback (pathlib's is_dir raises it), exit 1
    hidden = no_access_path()
    (tmp_path / "away").symlink_to(hidden)
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "away" / "cache"))
    for argv in (["info"], ["clear"], ["info", "--json"]):
        code, out, err = _out(["cache", *argv], capsys)
        assert (code, out) == (2, ""), argv
        assert err == (
            f"tapedeck: {tmp_path / 'away'} cannot be looked at (Permission denied), so tapedeck's cache "
            f"directory {tmp_path / 'away' / 'cache'} (TAPEDECK_CACHE_DIR) can keep nothing\n"
        ), err


def test_cache_info_and_clear_of_a_path_that_is_no_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "gone" / "session.jsonl"
    for action in ("info", "clear"):
        code, out, err = _out(["cache", action, str(missing)], capsys)
        assert (code, out) == (2, ""), action
        assert f"{missing}: no such file or directory" in err and "nothing cached for it" in err, action
    code, _, err = _out(["cache", "clear", str(tmp_path)], capsys)  # a directory without a log
    assert code == 2 and "no session.jsonl or session.jsonl.zstd in this directory" in err


@pytest.mark.parametrize("special", ["/dev/null", "fifo"])
def test_cache_info_and_clear_refuse_a_device_or_fifo_as_inspect_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], special: str
) -> None:
    """Nothing tapedeck reads is ever cached for a device or a FIFO: naming one is a mistake, said as ``inspect``
    says it (the path and what it is), exit 2, not 'nothing to remove'."""
    path = special if special.startswith("/") else str(tmp_path / special)
    if not special.startswith("/"):
        os.mkfifo(path)
    code, _, refused = _out(["inspect", path], capsys)
    assert code == 2 and "not a session log file" in refused
    for action in ("info", "clear"):
        code, out, err = _out(["cache", action, path], capsys)
        assert (code, out) == (2, ""), action
        assert err.startswith(refused.rstrip("\n")) and "nothing cached for it" in err, action


def test_a_deleted_logs_index_is_listed_and_cleared_by_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, other = tmp_path / "a" / "session.jsonl", tmp_path / "b" / "session.jsonl"
    for path in (log, other):
        path.parent.mkdir()
        generate(path, 60_000, seed=1, profile="mixed")
        main(["inspect", str(path)])
    log.unlink()

    code, out, _ = _out(["cache", "info", str(log), "--json"], capsys)
    (row,) = orjson.loads(out)["files"]
    assert code == 0 and row["file"] == str(index.index_path(log)) and row["state"] == "stale"
    code, out, _ = _out(["cache", "clear", str(log)], capsys)
    assert code == 0 and out.startswith("removed 1 file(s)")
    assert _out(["cache", "clear", str(log)], capsys)[0] == 2
    code, out, _ = _out(["cache", "info", str(other.parent)], capsys)
    assert code == 0 and out.startswith("1 file(s)") and str(other) in out


def test_a_deleted_logs_files_are_cleared_by_its_session_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    generate(log, 60_000, seed=1, profile="mixed")
    main(["inspect", str(log)])
    log.unlink()  # the directory stays

    code, out, _ = _out(["cache", "clear", str(log.parent)], capsys)

    assert code == 0 and out.startswith("removed 1 file(s)")
    assert not index.index_path(log).exists()


def _in_time(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``_out`` on a thread: a command that blocks fails the test instead of hanging it."""
    found: list[tuple[int, str, str]] = []
    thread = threading.Thread(target=lambda: found.append(_out(argv, capsys)), daemon=True)
    thread.start()
    thread.join(60)
    assert found, f"{' '.join(argv[:2])} blocked"
    return found[0]


def test_a_fifo_or_a_link_where_the_index_should_be_is_never_waited_on_nor_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = Path(shutil.copy(FIXTURES / "multi-turn.session.jsonl", tmp_path / "session.jsonl"))
    full = _cold(["inspect"], log, capsys)
    idx = index.index_path(log)
    idx.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(idx)  # opened for reading, it would wait for a writer forever

    code, out, _ = _in_time(["cache", "info", "--json"], capsys)
    (row,) = orjson.loads(out)["files"]
    assert code == 0 and row["state"] == "unreadable", row
    assert _in_time(["inspect", str(log)], capsys) == full  # read in full; its index takes the FIFO's place

    real = idx.with_name("real" + index.SUFFIX)
    idx.rename(real)
    idx.symlink_to(real)  # a link there is no index tapedeck wrote: read in full, not through it
    code, out, _ = _in_time(["cache", "info", "--json"], capsys)
    linked = next(r for r in orjson.loads(out)["files"] if r["file"] == str(idx))
    assert linked["state"] == "unreadable", linked


@pytest.fixture
def cached_log(tmp_path: Path) -> Path:
    """A generated log that inspect and alerts have read: its index file and its alert checkpoint are in the cache."""
    log = tmp_path / "a" / "session.jsonl"
    log.parent.mkdir()
    generate(log, 60_000, seed=1, profile="mixed")
    main(["inspect", str(log)])
    main(["alerts", str(log)])
    return log


def test_a_deleted_logs_files_say_it_is_gone_in_one_phrase(
    cached_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """They read 'stale (the log cannot be read (No such file or directory))', a parenthesis in a parenthesis."""
    log = cached_log
    log.unlink()
    code, out, _ = _out(["cache", "info", str(log)], capsys)
    rows = out.splitlines()[1:]
    assert code == 0 and sorted(row.split()[0] for row in rows) == ["alerts", "index"], out
    assert all(row.endswith("  stale (the log is gone)") for row in rows), out


def test_the_cache_command_line_of_tapedeck_help_names_all_it_keeps() -> None:
    # it named the index files only, though cache info and clear list and remove the alert checkpoints too
    from core.cli import COMMANDS

    line = COMMANDS["cache"].help
    assert "index files" in line and "alert checkpoints" in line, line


@pytest.mark.parametrize("name", ["TAPEDECK_CACHE_DIR", "TAPEDECK_HOME"])
def test_a_relative_tapedeck_directory_is_refused_before_anything_is_written(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A relative TAPEDECK_CACHE_DIR was read from the working directory: each directory a command ran in got a
    cache (or sessions and notes) of its own, which a command run elsewhere never found."""
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv(name, "kept")
    code, out, err = _out(["inspect", str(FIXTURES / "tool-call-turn.session.jsonl")], capsys)
    assert (code, out) == (2, "")
    # the example path is quoted as every value in a message is, so a long temporary directory is clipped
    assert (
        err
        == f'tapedeck: {name} is a relative path ("kept"); give an absolute one (such as {shown(str(here / "kept"))})\n'
    )
    assert list(here.iterdir()) == []


@pytest.mark.parametrize("name", ["TAPEDECK_CACHE_DIR", "TAPEDECK_HOME"])
def test_a_long_relative_tapedeck_directory_is_quoted_cut(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A relative value was quoted whole twice (as given, and made absolute): 100,000 characters of a variable
    written back two times over, and an escape sequence in it reached the terminal as it was."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(name, "k" * 100_000 + "\x1b[2J")
    code, out, err = _out(["inspect", str(FIXTURES / "tool-call-turn.session.jsonl")], capsys)
    assert (code, out) == (2, "")
    assert len(err) < 400 and "\x1b" not in err and err.count(",0") == 2 and err.count(" characters)") == 2, (
        err
    )


def test_a_relative_xdg_cache_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The XDG base directory spec has a relative XDG_CACHE_HOME ignored: the cache is under ~/.cache then."""
    monkeypatch.delenv("TAPEDECK_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    assert index.cache_dir() == tmp_path / ".cache" / "tapedeck"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert index.cache_dir() == tmp_path / "xdg" / "tapedeck"


def test_the_help_says_the_cache_directory_is_an_absolute_path(capsys: pytest.CaptureFixture[str]) -> None:
    """``cache --help`` named $TAPEDECK_CACHE_DIR without saying that every command refuses a relative one."""
    with pytest.raises(SystemExit):
        main(["cache", "--help"])
    assert "an absolute path" in " ".join(capsys.readouterr().out.split())


def test_cache_info_names_a_log_and_the_cache_directory_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """cache info's lines named the log each index file describes, and the cache directory, as they are: a log under
    a directory whose name holds a newline and an escape sequence printed a forged line and the raw escape on
    stdout. They name them as the CLI names a path (core.shared.text.quoted_path)."""
    hostile = "w\x1b]0;t\x07\nforged"
    log = tmp_path / hostile / "session.jsonl"
    log.parent.mkdir()
    generate(log, 20_000, seed=1, profile="mixed")
    main(["inspect", str(log.parent)])
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / hostile / "cache"))
    assert (
        _out(["cache", "info"], capsys)[1]
        == f"no index files or alert checkpoints in {tmp_path}/w\\u001b]0;t\\u0007\\nforged/cache\n"
    )
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    code, out, _ = _out(["cache", "info"], capsys)
    named = os.path.realpath(log).replace("\x1b", "\\u001b").replace("\x07", "\\u0007").replace("\n", "\\n")
    assert code == 0 and f"  {named} " in out and "\x1b" not in out and "\nforged" not in out, out
    code, out, _ = _out(["cache", "clear"], capsys)
    assert out == f"removed 1 file(s), {out.split(', ')[1]}, from {tmp_path}/cache\n", out


def test_a_gone_log_is_said_gone_whatever_version_wrote_its_files(
    cached_log: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index line said 'written by another version of tapedeck' for a log that is gone (its version was looked
    at first) while the checkpoint line beside it said the log is gone: both say what matters most."""
    log = cached_log
    log.unlink()
    from core.alerts import checkpoint

    for module in (index, checkpoint):  # as another version of tapedeck reads the files
        monkeypatch.setattr(module, "code_fingerprint", lambda: "another version")
    code, out, _ = _out(["cache", "info", str(log)], capsys)
    rows = out.splitlines()[1:]
    assert code == 0 and sorted(row.split()[0] for row in rows) == ["alerts", "index"], out
    assert all(row.endswith("  stale (the log is gone)") for row in rows), out


@pytest.mark.parametrize("how", ["replaced", "truncated"])
def test_a_shorter_log_is_said_replaced_or_truncated_not_unreadable(
    cached_log: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    """A log replaced by a shorter file, or cut in place, read fine; the checkpoint's line said 'the log cannot be
    read: the log is shorter than indexed'. Both lines say what happened to it."""
    log = cached_log
    head = log.read_bytes()[:1000]
    if how == "replaced":
        new = log.with_name("new.jsonl")
        new.write_bytes(head)
        new.replace(log)
    else:
        with open(log, "r+b") as f:
            f.truncate(1000)
    code, out, _ = _out(["cache", "info", str(log)], capsys)
    rows = out.splitlines()[1:]
    said = "the log was replaced by another file" if how == "replaced" else "the log was truncated"
    assert code == 0 and sorted(row.split()[0] for row in rows) == ["alerts", "index"], out
    assert all(row.endswith(f"  stale ({said})") for row in rows), out
