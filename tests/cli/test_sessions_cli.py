"""``tapedeck sessions``: children under their real parent, a missing root and unreadable project dirs."""

from __future__ import annotations

import glob
import json
import os
import shlex
import shutil
from pathlib import Path
from typing import cast

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from core.cli import main
from core.log.layout import resolve_log_path
from core.remote.link import RemoteStat, SshLink
from core.remote.sessions import remote_logs
from core.remote.target import RemoteTarget
from core.shared.text import printable
from tests.conftest import no_access_path, no_read_file
from tests.tui.logs import Log


def sessions_root(tmp_path: Path) -> Path:
    """parent-1 (oldest), its child child-1, and an unrelated other-2 written last."""
    root = tmp_path / "sessions"
    parent = Log({**Log().header, "id": "parent-1", "createdAt": 1786000000000})
    parent.turn(1, "delegate", "ok", tool="subagent")
    child = Log({**parent.header, "id": "child-1", "parentSession": "parent-1", "delegationDepth": 1})
    child.turn(1, "part", "ok")
    other = Log({**parent.header, "id": "other-2", "createdAt": 1786000100000})
    other.turn(1, "hello", "hi")
    for log, name, mtime in ((parent, "parent-1", 1), (child, "child-1", 2), (other, "other-2", 3)):
        path = log.write(root / "--w--" / name / "session.jsonl")
        os.utime(path, (1_786_000_000 + mtime, 1_786_000_000 + mtime))
    return root


def test_children_are_listed_under_their_parent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", str(sessions_root(tmp_path))]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:3] == ["session", "host", "attention"], lines
    rows = [(len(line) - len(line.lstrip()), line.lstrip(" └").split()[0]) for line in lines[2:]]
    assert rows[:3] == [(0, "other-2"), (0, "parent-1"), (2, "child-1")], lines


def test_missing_root_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_a_log_file_or_session_directory_is_a_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the fleet table takes them: a log file given directly is listed, not refused as no directory."""
    log = sessions_root(tmp_path) / "--w--" / "other-2" / "session.jsonl"
    for root in (log, log.parent):
        assert main(["sessions", str(root)]) == 0
        out = capsys.readouterr()
        head = f"1 session {'in' if root == log else 'under'} {root}\n"
        assert out.err == "" and out.out.startswith(head), out
        assert "other-2" in out.out


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every directory")
def test_unreadable_project_dir_is_skipped_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = sessions_root(tmp_path)
    locked = root / "--locked--"
    locked.mkdir()
    locked.chmod(0)
    try:
        assert main(["sessions", str(root)]) == 0
        out = capsys.readouterr()
    finally:
        locked.chmod(0o755)
    assert "parent-1" in out.out and "skipped" in out.err and "--locked--" in out.err


@pytest.mark.parametrize("where", ["--w--/linked", "--linked--"])
def test_a_link_into_a_place_not_to_be_looked_at_is_skipped_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    # a project or session directory that is a link into a place this user may not see ended the listing in a
    # PermissionError traceback (pathlib's is_dir raises it), exit 1
    root = sessions_root(tmp_path)
    (root / where).symlink_to(no_access_path())
    assert main(["sessions", str(root)]) == 0
    out = capsys.readouterr()
    assert "3 sessions under" in out.out
    assert out.err == f"tapedeck: skipped {root / where}: Permission denied\n", out.err


def test_a_log_that_cannot_be_read_is_named_by_alerts_watch_and_lineage_as_by_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sessions`` names a log under a root that it cannot read (``skipped PATH: cannot read (…)``), but
    ``discover_sessions`` took no note of one: ``alerts ROOT``, ``watch`` with no path (which then opened an older
    session) and the subagent links (``parent_log``, ``child_log``) left it out without a word. They name it now, in
    the listing's words."""
    from core.log.lineage import parent_log
    from core.log.sessions import discover_sessions
    from tui.cli_watch import watch_target

    unreadable = no_read_file()
    if unreadable is None:
        pytest.skip("this process may read /proc/1/environ")
    root = sessions_root(tmp_path)
    log = root / "--w--" / "parent-1" / "session.jsonl"
    log.unlink()
    log.symlink_to(unreadable)  # a regular file by its stat, refused when opened
    note = f"skipped {log}: cannot read (Permission denied)"
    assert main(["sessions", str(root)]) == 0
    assert capsys.readouterr().err == f"tapedeck: {note}\n"
    skipped: list[str] = []
    assert [ref.id for ref in discover_sessions(root, skipped)] == ["other-2", "child-1"] and skipped == [note]
    assert main(["alerts", str(root)]) in (0, 1)
    assert capsys.readouterr().err == f"tapedeck: {note}\n"
    skipped = []
    assert parent_log(root / "--w--" / "child-1" / "session.jsonl", "parent-1", skipped) is None and skipped == [note]
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path))
    assert watch_target(None) == root / "--w--" / "other-2" / "session.jsonl"
    assert capsys.readouterr().err == f"tapedeck: {note}\n"


def test_a_root_holding_only_such_a_link_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "proj").symlink_to(no_access_path())
    assert main(["sessions", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert out.err.startswith(f"tapedeck: skipped {tmp_path / 'proj'}: Permission denied\n"), out.err


def test_a_fifo_where_a_log_should_be_is_skipped_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # it was left out without a word, where an unreadable directory is named
    root = sessions_root(tmp_path)
    fifo = root / "--w--" / "piped" / "session.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    assert main(["sessions", str(root)]) == 0
    out = capsys.readouterr()
    assert "3 sessions under" in out.out and "piped" not in out.out
    assert out.err == f"tapedeck: skipped {fifo}: is a FIFO, not a session log file\n", out.err


@pytest.mark.parametrize("what", ["garbage", "a link to a file that is no log"])
def test_a_log_that_is_no_session_log_is_skipped_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str
) -> None:
    """A session directory whose session.jsonl is no session log (garbage, a link to /etc/passwd) was left out
    without a word, where a FIFO there is named: it is named with what its first line is; an empty log (a session
    being created, its header not written yet) still says nothing."""
    root = sessions_root(tmp_path)
    log = root / "--w--" / "odd" / "session.jsonl"
    log.parent.mkdir()
    if what == "garbage":
        log.write_bytes(b"garbage\n")
    else:
        other = tmp_path / "passwd"
        other.write_bytes(b"root:x:0:0:root:/root:/bin/bash\n")
        log.symlink_to(other)
    (root / "--w--" / "new").mkdir()
    (root / "--w--" / "new" / "session.jsonl").write_bytes(b"")
    assert main(["sessions", str(root)]) == 0
    out = capsys.readouterr()
    assert "3 sessions under" in out.out and "odd" not in out.out
    assert out.err == (
        f"tapedeck: skipped {log}: line 1 is not valid JSON (unexpected character, expected a JSON value: line 1 "
        "column 1 (char 0))\n"
    ), out.err


def test_a_session_directory_whose_log_is_a_fifo_is_named_not_just_no_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the directory itself (not one under a root) said 'no sessions' without a word on what it held
    fifo = tmp_path / "piped" / "session.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    assert main(["sessions", str(fifo.parent)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith(f"no sessions under {fifo.parent}")
    assert out.err == f"tapedeck: skipped {fifo}: is a FIFO, not a session log file\n", out.err


def test_a_link_to_nothing_where_a_log_should_be_is_named_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'sessions' left it out without a word, and 'inspect DIR' said the directory held no session.jsonl
    root = sessions_root(tmp_path)
    link = root / "--w--" / "moved" / "session.jsonl"
    link.parent.mkdir()
    link.symlink_to(tmp_path / "elsewhere" / "session.jsonl")
    said = f"{link}: a link to {tmp_path / 'elsewhere' / 'session.jsonl'}, which is not there"
    assert main(["sessions", str(root)]) == 0
    out = capsys.readouterr()
    assert "3 sessions under" in out.out and out.err == f"tapedeck: skipped {said}\n", out.err
    for path in (link.parent, link):
        assert main(["inspect", str(path)]) == 2
        assert capsys.readouterr().err == f"tapedeck: {said}\n"


@pytest.mark.parametrize("field", ["createdAt", "cwd", "parentSession", "origin", "delegationDepth"])
@pytest.mark.parametrize("value", [{"type": []}, [1], "soon", 1e308, True])
def test_a_header_field_of_the_wrong_type_is_listed_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object
) -> None:
    log = Log({"type": "session", "version": 0, "id": "odd", "createdAt": 1, "cwd": "/w", "delegationDepth": 0,
               field: value})  # fmt: skip
    log.turn(1, "hi", "ok")
    log.write(tmp_path / "root" / "--w--" / "odd" / "session.jsonl")
    for argv in (["sessions", str(tmp_path / "root")], ["sessions", str(tmp_path / "root"), "--json"]):
        assert main(argv) == 0
        assert "odd" in capsys.readouterr().out


def _suggested(note: str, command: str, nth: int = 0) -> list[str]:
    """The arguments of the ``nth`` `tapedeck COMMAND …` the note suggests, its globs expanded as a shell would."""
    words = shlex.split(note.split(f"`tapedeck {command} ")[nth + 1].split("`")[0])
    return [match for word in words for match in sorted(glob.glob(word)) or [word]]


def test_a_folder_of_log_files_says_what_a_root_holds_and_how_to_list_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder of logs lying loose (no session directories) held 'no sessions' and nothing more."""
    folder = tmp_path / "my logs"
    for name in ("a.session.jsonl", "b.session.jsonl"):
        log = Log({**Log().header, "id": name.split(".")[0]})
        log.turn(1, "hello", "hi")
        log.write(folder / name)
    (folder / "readme.txt").write_text("not a log\n")
    for argv in (["sessions", str(folder)], ["sessions", str(folder), "--json"]):
        assert main(argv) == 0
        out = capsys.readouterr()
        note = out.err.replace("\n", " ")
        assert "2 session logs" in note and "session directories" in note and "PROJECT/SESSION/session.jsonl" in note
        assert f"`tapedeck inspect {shlex.quote(str(folder / 'a.session.jsonl'))}`" in note
    assert main(["sessions", *_suggested(note, "sessions")]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith("2 sessions in ") and sorted(line.split()[0] for line in listed.splitlines()[2:]) == [
        "a", "b"], listed


def test_a_project_directory_says_it_is_one_and_how_to_list_its_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ROOT/PROJECT given for ROOT held 'no sessions' though its session directories were right there."""
    project = sessions_root(tmp_path) / "--w--"
    assert main(["sessions", str(project)]) == 0
    note = capsys.readouterr().err.replace("\n", " ")
    assert "one project's directory" in note and "3 session directories" in note, note
    for command in (_suggested(note, "sessions"), _suggested(note, "sessions", 1)):
        assert main(["sessions", *command]) == 0
        out = capsys.readouterr().out
        assert out.startswith("3 sessions under ") and "parent-1" in out and "other-2" in out, out


def test_the_commands_the_note_gives_for_a_relative_project_directory_run_as_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """DSH names a project's directory for its path (``--w--``): given relative, from the sessions root, the note
    said `tapedeck sessions --w--/*/`, which the command line took for an option it does not know."""
    monkeypatch.chdir(sessions_root(tmp_path))
    assert main(["sessions", "--", "--w--"]) == 0
    note = capsys.readouterr().err.replace("\n", " ")
    assert main(["sessions", *_suggested(note, "sessions")]) == 0
    assert capsys.readouterr().out.startswith("3 sessions under ")
    loose = Path("--loose--")
    loose.mkdir()
    shutil.copy("--w--/other-2/session.jsonl", loose / "-o.session.jsonl")
    assert main(["sessions", "--", str(loose)]) == 0
    note = capsys.readouterr().err.replace("\n", " ")
    for command in ("sessions", "inspect"):
        assert main([command, *_suggested(note, command)]) == 0
        assert "other-2" in capsys.readouterr().out


def test_an_empty_root_has_no_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "root" / "--w--").mkdir(parents=True)
    assert main(["sessions", str(tmp_path / "root")]) == 0
    out = capsys.readouterr()
    assert out.out == f"no sessions under {tmp_path / 'root'}\n" and out.err == ""



@pytest.mark.parametrize(
    ("content", "problem"),
    [(b"", "empty log"), (b'{"a": 1}\n', "not a session header"), (b"hello\n", "not valid JSON")],
)
def test_a_named_file_that_is_no_session_log_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, problem: str
) -> None:
    """A file named on the command line whose header cannot be read was passed over: 'no sessions', exit 0."""
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(content)
    good = sessions_root(tmp_path) / "--w--" / "other-2"
    for argv in (["sessions", str(odd)], ["sessions", str(good), str(odd), "--json"]):
        assert main(argv) == 2
        out = capsys.readouterr()
        assert f"tapedeck: {odd}: " in out.err and problem in out.err, out.err
    assert '"other-2"' in out.out  # the sessions that could be read are still listed
    assert main(["sessions", str(odd), str(good)]) == 2
    assert capsys.readouterr().out.startswith(f"1 session in {odd} and under {good} (1 more could not be read: see stderr)\n")


def test_a_default_root_a_file_keeps_from_being_made_is_no_fresh_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """TAPEDECK_HOME naming a file (or ~/.tapedeck a file): 'tapedeck sessions' said the root 'does not exist yet'
    and that run and demo keep their sessions there, which neither ever can; it says what is in the way, exit 2."""
    (tmp_path / "home").write_text("a file")
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    assert main(["sessions"]) == 2
    assert capsys.readouterr().err == (
        f"tapedeck: {tmp_path / 'home' / 'sessions'} cannot be made: {tmp_path / 'home'} is not a directory, so "
        "`tapedeck run` and `tapedeck demo` can keep no session there\n"
    )


@pytest.mark.parametrize("link", ["home/sessions", "home"])
def test_a_default_root_a_link_to_nothing_keeps_from_being_made_is_no_fresh_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, link: str
) -> None:
    """The root (or TAPEDECK_HOME) a symbolic link to nothing: 'tapedeck sessions' said the root 'does not exist
    yet', exit 0, though run cannot make a directory there; it names the link in the way, as the cache commands
    do (one check, core.shared.envdirs.in_the_way, for both)."""
    if link == "home/sessions":
        (tmp_path / "home").mkdir()
    (tmp_path / link).symlink_to(tmp_path / "gone")
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    assert main(["sessions"]) == 2
    assert capsys.readouterr().err == (
        f"tapedeck: {tmp_path / 'home' / 'sessions'} cannot be made: {tmp_path / link} is not a directory, so "
        "`tapedeck run` and `tapedeck demo` can keep no session there\n"
    )


def test_no_session_yet_under_the_default_root_is_no_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh install's 'tapedeck sessions' failed, exit 2, telling to give a root 'e.g.' the very one missing."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    root = tmp_path / "home" / "sessions"
    for argv, out in ((["sessions"], f"no sessions under {root}\n"), (["sessions", "--json"], "[]\n")):
        assert main(argv) == 0
        said = capsys.readouterr()
        assert said.out == out and said.err == (
            f"tapedeck: {root} does not exist yet: `tapedeck run` and `tapedeck demo` keep their sessions there\n"
        ), said
    assert not root.exists()
    assert main(["sessions", str(tmp_path / "nope")]) == 2  # a root that was named must be there
    assert f"e.g. {root})" not in capsys.readouterr().err  # not the one missing: the default is, the example not


def _both_logs(tmp_path: Path) -> Path:
    """A root whose one session directory holds its log twice: ``session.jsonl`` and the zstd copy of it."""
    root = sessions_root(tmp_path)
    raw = root / "--w--" / "other-2" / "session.jsonl"
    raw.with_name("session.jsonl.zstd").write_bytes(zstandard.ZstdCompressor().compress(raw.read_bytes()))
    return raw.parent


def test_a_session_directory_holding_both_logs_is_one_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Listed twice by sessions, fleet and alerts, while inspect and control read the zstd one."""
    sdir = _both_logs(tmp_path)
    capsys.readouterr()
    assert main(["sessions", str(sdir.parents[1]), "--json"]) == 0
    listed = [row["path"] for row in json.loads(capsys.readouterr().out) if row["id"] == "other-2"]
    assert listed == [str(resolve_log_path(sdir))] == [str(sdir / "session.jsonl.zstd")]


def one_stale_copy(tmp_path: Path, live: str) -> Path:
    """A session directory holding other-2's log twice, the ``live`` one (``session.jsonl`` or
    ``session.jsonl.zstd``) a turn ahead of the other and written after it (a copy made while the session ran)."""
    sdir = sessions_root(tmp_path) / "--w--" / "other-2"
    log = Log({**Log().header, "id": "other-2", "createdAt": 1786000100000})
    log.turn(1, "hello", "hi")
    stale = log.lines()
    log.turn(2, "more", "done")
    texts = {"session.jsonl": stale, "session.jsonl.zstd": stale, live: log.lines()}
    for name, text in texts.items():
        (sdir / name).write_bytes(zstandard.ZstdCompressor().compress(text) if name.endswith(".zstd") else text)
        written = 1_786_000_010 if name == live else 1_786_000_005
        os.utime(sdir / name, (written, written))
    return sdir


@pytest.mark.parametrize("live", ["session.jsonl", "session.jsonl.zstd"])
def test_a_session_directory_holding_both_logs_is_read_from_the_one_written_last(
    tmp_path: Path, live: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A raw log still growing beside a zstd copy of it made earlier (or a zstd log beside the raw one
    ``zstd -d`` left): sessions, inspect and every reader read the one the session writes, not the stale copy."""
    sdir = one_stale_copy(tmp_path, live)
    assert resolve_log_path(sdir) == sdir / live
    capsys.readouterr()
    assert main(["sessions", str(sdir.parents[1]), "--json"]) == 0
    rows = [row for row in json.loads(capsys.readouterr().out) if row["id"] == "other-2"]
    assert [(row["path"], row["turn"]) for row in rows] == [(str(sdir / live), 2)]
    assert main(["inspect", str(sdir), "--json"]) == 0
    inspected = json.loads(capsys.readouterr().out)
    assert (inspected["path"], len(inspected["turns"])) == (str(sdir / live), 2)


def test_both_logs_written_at_once_are_read_from_the_zstd_one(tmp_path: Path) -> None:
    """``zstd -o`` gives its copy the original's time: the two are one text, read from the zstd one."""
    sdir = _both_logs(tmp_path)
    raw = os.stat(sdir / "session.jsonl")
    os.utime(sdir / "session.jsonl.zstd", ns=(raw.st_atime_ns, raw.st_mtime_ns))
    assert resolve_log_path(sdir) == sdir / "session.jsonl.zstd"


class _LocalLink:
    """The listing calls of ``SshLink``, answered from this machine's files."""

    def stat(self, path: str) -> RemoteStat | None:
        return self.stat_many([path])[0]

    def stat_many(self, paths: list[str], refused: dict[str, str] | None = None) -> list[RemoteStat | None]:
        return [RemoteStat(st.st_size, st.st_mtime_ns // 1_000_000, "dir" if os.path.isdir(p) else "file")
                if (st := _stat(p)) else None for p in paths]  # fmt: skip

    def listdir(self, path: str, skipped: list[str] | None = None) -> list[tuple[str, str]]:
        return self.listdir_many([path], skipped)[0]

    def listdir_many(self, paths: list[str], skipped: list[str] | None = None) -> list[list[tuple[str, str]]]:
        return [[(e.name, "dir" if e.is_dir() else "file") for e in sorted(Path(p).iterdir())] for p in paths]


def test_a_remote_session_directory_holding_both_logs_is_one_session(tmp_path: Path) -> None:
    sdir = _both_logs(tmp_path)
    link = cast(SshLink, _LocalLink())
    for where in (sdir.parents[1], sdir):
        logs = remote_logs(link, RemoteTarget(None, "h", str(where)))
        assert [log.path for log in logs if "other-2" in log.path] == [str(sdir / "session.jsonl.zstd")]


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


@pytest.mark.parametrize("live", ["session.jsonl", "session.jsonl.zstd"])
def test_a_remote_session_directory_holding_both_logs_is_read_from_the_one_written_last(
    tmp_path: Path, live: str
) -> None:
    sdir = one_stale_copy(tmp_path, live)
    link = cast(SshLink, _LocalLink())
    for where in (sdir.parents[1], sdir):
        logs = remote_logs(link, RemoteTarget(None, "h", str(where)))
        assert [log.path for log in logs if "other-2" in log.path] == [str(sdir / live)]


def test_the_columns_line_up_in_terminal_cells(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A title of CJK characters or emoji takes two cells a character: padded by its length, it pushed every
    column after it out of line on a terminal (the fleet table's cells are measured so since af5ae93)."""
    root = tmp_path / "sessions"
    titles = {"wide": "修复解析器中不稳定的测试", "emoji": "🚀 Ship the 🐛 fix", "plain": "Fix the parser"}
    for sid, title in titles.items():
        log = Log({**Log().header, "id": sid})
        log.add({"type": "session/title", "data": {"title": title}})
        log.write(root / "p" / sid / "session.jsonl")
    assert main(["sessions", str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert len(lines) == 4, lines
    words = ["host", "none", "none", "none"]
    starts = {cell_len(line[: line.index(word)]) for line, word in zip(lines, words, strict=True)}
    assert len(starts) == 1, lines


def test_sessions_with_one_title_can_be_told_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two sessions titled alike read the same in the list, so which one to open could not be told; a title other
    rows share is followed by the head of each session's id, as the fleet table shows it (core.fleet.row.twin),
    and --json carries each id; a title of its own reads as it is."""
    root = tmp_path / "sessions"
    for sid, title in (("0f3e9a21-aaaa", "Fix the parser"), ("77c1d0e4-bbbb", "Fix the parser"), ("lone", "Other")):
        log = Log({**Log().header, "id": sid})
        log.add({"type": "session/title", "data": {"title": title}})
        log.write(root / "p" / sid / "session.jsonl")
    assert main(["sessions", str(root)]) == 0
    firsts = sorted(line.split("  ")[0] for line in capsys.readouterr().out.splitlines()[2:])
    assert firsts == ["Fix the parser (0f3e9a21)", "Fix the parser (77c1d0e4)", "Other"]
    assert main(["sessions", str(root), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted((row["title"], row["id"]) for row in rows) == [
        ("Fix the parser", "0f3e9a21-aaaa"), ("Fix the parser", "77c1d0e4-bbbb"), ("Other", "lone")
    ]


# pieces a terminal draws at a width other than one cell each: joined emoji (a family, a flag), an emoji made
# so by a variation selector, skin tones, combining and spacing marks, Hangul jamo, format characters, CJK, a
# control character (drawn as its picture)
AWKWARD = ["\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f1eb\U0001f1f7", "\u2600\ufe0f", "\u2600",
           "\U0001f44d\U0001f3fb", "e\u0301", "\u0915\u0903", "\u1100\u1161", "\u1160", "\u00ad", "\u0600",
           "\u200b", "\u2028", "\u4fee\u590d", "\uff21", "\u3000", "\x1b", "ok", "-"]  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(st.sampled_from(AWKWARD), min_size=1, max_size=6))
def test_sessions_lines_up_any_title_as_the_fleet_table_draws_it(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], pieces: list[str]
) -> None:
    """``sessions`` measured a title by a table of its own, the fleet table (and every TUI column) by the terminal
    renderer's: a joined emoji (six cells by the table, two drawn), a skin tone, a spacing mark or a jamo vowel put
    the title's row out of line with the others. The title's row and a plain one start their next column at the
    same cell, measured as the fleet table measures it."""
    from tui.cells import cut
    from tui.screens.fleet import WIDTHS

    title = "a" + "".join(pieces) + "z"
    root = tmp_path_factory.mktemp("sessions")
    for sid, said in (("odd", title), ("plain", "Fix the parser")):
        log = Log({**Log().header, "id": sid})
        log.add({"type": "session/title", "data": {"title": said}})
        log.write(root / "p" / sid / "session.jsonl")
    capsys.readouterr()
    assert main(["sessions", str(root)]) == 0
    lines = capsys.readouterr().out.split("\n")[2:-1]  # a terminal breaks lines at newlines alone
    label = printable(title)  # the row's label: a title as a terminal shows it
    starts = set()
    for line, cell in zip(sorted(lines, key=lambda line: not line.startswith("a")), (label, "Fix the parser"), strict=True):
        assert line.startswith(cell), (line, cell)
        rest = line[len(cell):]
        starts.add(cell_len(cell) + len(rest) - len(rest.lstrip(" ")))
    assert len(starts) == 1, lines
    assert cell_len(cut(label, WIDTHS["session"])) <= WIDTHS["session"]


def test_a_root_that_cannot_be_looked_at_is_named_for_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link to itself is there but cannot be followed: not 'no such file or directory'."""
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert main(["sessions", str(loop)]) == 2
    err = capsys.readouterr().err
    assert "Too many levels of symbolic links" in err and "no such file" not in err, err


def test_the_help_says_when_it_exits_2_and_what_it_skips(capsys: pytest.CaptureFixture[str]) -> None:
    """``sessions --help`` said nothing of its exit status 2 nor of the notes on stderr for what it skips."""
    with pytest.raises(SystemExit):
        main(["sessions", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for said in ("skipped with a note on stderr", "exit 2", "a root named that is not there", "could not be reached",
                 "no session log", "truncated, replaced or removed while it was read"):  # fmt: skip
        assert said in text, said


def test_dsh_sessions_with_one_title_are_told_apart_by_their_uuid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every DSH session id starts with ``session-``, so the head of the id that follows a title other rows share
    read ``(session-)`` on each DSH row and told none apart (found running two real DSH sessions in the fleet); it
    is the head of what follows that prefix, as the alerts name a session (core.shared.text.short_session)."""
    root = tmp_path / "sessions"
    for sid in ("session-ba99485a-9f98", "session-f67c5f17-795a"):
        log = Log({**Log().header, "id": sid})
        log.add({"type": "session/title", "data": {"title": "Bridge test"}})
        log.write(root / "p" / sid / "session.jsonl")
    assert main(["sessions", str(root)]) == 0
    firsts = sorted(line.split("  ")[0] for line in capsys.readouterr().out.splitlines()[2:])
    assert firsts == ["Bridge test (ba99485a)", "Bridge test (f67c5f17)"]


def test_inspect_and_control_on_a_root_or_project_say_what_it_is_and_what_to_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sessions root, a project's directory or a folder of loose logs given to inspect or control got only 'no
    session.jsonl … in this directory': the refusal now says what the directory is and what to pass."""
    root = sessions_root(tmp_path)
    for argv in (["inspect", str(root)], ["control", str(root), "checkpoint", "--queue"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.replace("\n", " ")
        assert "in this directory; it is a sessions root, holding 3 sessions: " in err, err
        assert f"`tapedeck sessions {shlex.quote(str(root))}` lists them" in err, err
    assert main(["inspect", str(root / "--w--")]) == 2
    err = capsys.readouterr().err.replace("\n", " ")
    assert "is one project's directory" in err and f"`tapedeck sessions {root / '--w--'}/*/` reads its 3" in err, err
    loose = tmp_path / "loose"
    loose.mkdir()
    shutil.copy(root / "--w--" / "other-2" / "session.jsonl", loose / "a.jsonl")
    assert main(["control", str(loose), "pause", "--queue"]) == 2
    err = capsys.readouterr().err.replace("\n", " ")
    assert "holds 1 session log of its own" in err and f"`tapedeck inspect {loose / 'a.jsonl'}` reads it" in err, err
    assert main(["inspect", str(tmp_path / "sessions" / "--w--" / "other-2" / "gone")]) == 2  # no directory: as before
    assert capsys.readouterr().err.count("\n") == 1
