"""Notes: the sidecar beside the log (or in tapedeck's data directory), the note/notes commands, hostile sidecars
and concurrent writers."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import orjson
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.read.notes import NotesError, load_notes, parse_notes, set_note, sidecar_paths
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[2]


def test_note_add_edit_remove_and_list(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = log.read_bytes()
    assert main(["note", str(log), "--seq", "4", "why did it run echo?"]) == 0
    assert main(["note", str(log), "--seq", "65", "result looks fine"]) == 0
    assert main(["note", str(log), "--seq", "4", "edited"]) == 0
    capsys.readouterr()
    assert main(["notes", str(log), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(n["seq"], n["text"]) for n in listed] == [(4, "edited"), (65, "result looks fine")]
    assert main(["note", str(log), "--seq", "65", ""]) == 0
    assert list(load_notes(log)) == [4]
    assert log.read_bytes() == before  # never in the log
    assert sidecar_paths(log)[0].exists()


def test_notes_piped_draws_a_notes_controls_and_keeps_its_lines(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``notes`` wrote a note's text as the sidecar held it when stdout was no terminal: a sidecar beside a shared
    log (anyone's words) put its escape sequences raw into ``| less -R`` or a model reading the list, and a
    carriage return overwrote the line. Its controls are drawn (``printable``) as the event summaries draw theirs,
    piped or not; its line breaks still continue the note under its text (found walking the CLI piped)."""
    assert main(["note", str(log), "--seq", "4", "evil\x1b]52;c;QQ==\x07\rok\nsecond line"]) == 0
    capsys.readouterr()
    assert main(["notes", str(log)]) == 0
    assert capsys.readouterr().out == "     4  evil␛]52;c;QQ==␇␍ok\n        second line\n"


def test_a_log_opened_through_a_link_shares_its_notes(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A note made through a symbolic link to the log (``~/current -> …/session.jsonl``) is the log's: the real
    path and its session directory list it, and the sidecar sits beside the log, not beside the link."""
    link = tmp_path / "current.jsonl"
    link.symlink_to(log)
    assert main(["note", str(link), "--seq", "4", "through the link"]) == 0
    for path in (log, log.parent, link):
        assert [(seq, note.text) for seq, note in load_notes(path).items()] == [(4, "through the link")], path
    assert sidecar_paths(link)[0] == log.with_name(log.name + ".notes.json")
    assert not (tmp_path / "current.jsonl.notes.json").exists()


def test_a_note_of_several_lines_lists_its_lines_under_its_text(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``notes`` prints a note's later lines under its first, not at the start of a line where they read as seqs."""
    assert main(["note", str(log), "--seq", "4", "first\n12 is not a seq"]) == 0
    assert main(["note", str(log), "--seq", "65", "one line"]) == 0
    capsys.readouterr()
    assert main(["notes", str(log)]) == 0
    assert capsys.readouterr().out == "     4  first\n        12 is not a seq\n    65  one line\n"


def _texts(path: Path | str) -> dict[int, str]:
    return {seq: note.text for seq, note in load_notes(path).items()}


def test_notes_follow_a_log_that_is_moved_or_renamed(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log moved to another directory under another name (its sidecar left behind) keeps its notes: they are
    listed and exported there; its next note gives it a sidecar of its own holding them all, and the one left
    behind, whose log is gone, is removed. They were lost: notes were found by the log's path alone."""
    assert main(["note", str(log), "--seq", "4", "first"]) == 0
    moved = tmp_path / "elsewhere" / "renamed.jsonl"
    moved.parent.mkdir()
    log.rename(moved)
    assert _texts(moved) == {4: "first"}
    capsys.readouterr()
    assert main(["notes", str(moved)]) == 0
    said = capsys.readouterr()
    assert said.out == "     4  first\n" and f"these notes are in {log}.notes.json" in said.err
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["export", str(moved), "--format", "json"]) == 0
    assert [n["text"] for n in orjson.loads(out.getvalue())["notes"]] == ["first"]
    assert main(["note", str(moved), "--seq", "65", "second"]) == 0
    assert sidecar_paths(moved)[0].exists()
    assert sorted(p.name for p in log.parent.iterdir()) == []
    assert _texts(moved) == {4: "first", 65: "second"}
    capsys.readouterr()
    assert main(["notes", str(moved)]) == 0
    assert capsys.readouterr().err == ""  # its own now


def test_relative_paths_and_links_to_one_log_share_its_notes(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["note", "s/session.jsonl", "--seq", "4", "relative"]) == 0
    (tmp_path / "link").symlink_to(log.parent)
    for path in ("./s/../s/session.jsonl", str(log), "link/session.jsonl", "link"):
        assert _texts(path) == {4: "relative"}, path


def test_two_copies_of_a_log_each_keep_their_own_notes(log: Path, tmp_path: Path) -> None:
    """A copy with no sidecar of its own shows the notes last written for its session; its first note starts
    its own sidecar from them, and from then on each copy keeps its own: the original's are left as they were."""
    assert main(["note", str(log), "--seq", "4", "on the original"]) == 0
    copy = tmp_path / "backup.jsonl"
    shutil.copy(log, copy)
    assert _texts(copy) == {4: "on the original"}
    assert main(["note", str(copy), "--seq", "65", "on the copy"]) == 0
    assert _texts(copy) == {4: "on the original", 65: "on the copy"}
    assert _texts(log) == {4: "on the original"}
    assert main(["note", str(log), "--seq", "5", "later, on the original"]) == 0
    assert _texts(copy) == {4: "on the original", 65: "on the copy"}
    assert _texts(log) == {4: "on the original", 5: "later, on the original"}


def test_another_session_with_the_same_id_takes_no_notes(log: Path, tmp_path: Path) -> None:
    """Logs made from one template share an id (``{{sessionId}}``): the hash of the whole header tells them apart,
    so notes never follow into another session's log."""
    assert main(["note", str(log), "--seq", "4", "mine"]) == 0
    lines = log.read_bytes().split(b"\n")
    header = orjson.loads(lines[0])
    other = tmp_path / "other.jsonl"
    changed = orjson.dumps({**header, "createdAt": header["createdAt"] + 1})
    other.write_bytes(b"\n".join([changed, *lines[1:]]))
    assert _texts(other) == {}


def test_a_sidecar_written_before_sessions_were_recorded_is_read_and_kept(log: Path) -> None:
    """A sidecar of an older tapedeck (no ``session``) reads as before; the next note records the session."""
    sidecar = sidecar_paths(log)[0]
    sidecar.write_text('{"version": 1, "notes": {"4": {"text": "old", "time": 1}}}')
    assert _texts(log) == {4: "old"}
    assert main(["note", str(log), "--seq", "65", "new"]) == 0
    doc = orjson.loads(sidecar.read_bytes())
    assert doc["session"].startswith("e9421ff4-baae-4807-a7ea-fd8a65f2c897-")
    assert set(doc["notes"]) == {"4", "65"}


def test_removing_a_note_that_is_not_there_says_so_and_writes_nothing(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said 'removed the note at seq 5' and left an empty sidecar and its lock file beside the log."""
    assert main(["note", str(log), "--seq", "5", ""]) == 0
    assert capsys.readouterr().out == "no note at seq 5; nothing changed\n"
    assert sorted(p.name for p in log.parent.iterdir()) == ["session.jsonl"]


def test_a_seq_past_the_log_is_refused(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["note", str(log), "--seq", "100000", "x"]) == 2
    assert "is not in this log: its events are seq 0..103" in capsys.readouterr().err
    assert not sidecar_paths(log)[0].exists()


def test_a_note_left_past_the_end_of_a_replaced_log_can_be_removed(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log replaced under its notes by a shorter one of its session leaves notes on seqs it no longer has:
    ``notes`` lists them and ``note --seq N ''`` removes one (only adding a note needs the log to have the event)."""
    assert main(["note", str(log), "--seq", "90", "late"]) == 0
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:20]))  # seq 0..64
    capsys.readouterr()
    assert main(["note", str(log), "--seq", "90", ""]) == 0
    assert "removed the note at seq 90" in capsys.readouterr().out
    assert load_notes(log) == {}
    assert main(["note", str(log), "--seq", "90", "again"]) == 2


def test_a_log_replaced_by_another_session_shows_none_of_the_old_notes_and_keeps_them(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another session's log written where a noted log was (the old one moved away first) listed, exported and
    then wrote under the new session the old session's notes. It shows none of them and says in one line where
    they are; its first note starts its own and moves the old ones aside, where the old log still finds them."""
    assert main(["note", str(log), "--seq", "4", "on the first session"]) == 0
    old = tmp_path / "old.jsonl"
    log.rename(old)
    log.write_bytes((FIXTURES / "multi-turn.session.jsonl").read_bytes())
    sidecar = sidecar_paths(log)[0]
    capsys.readouterr()
    assert main(["notes", str(log)]) == 0
    said = capsys.readouterr()
    assert said.out == "no notes\n"
    assert said.err.count("\n") == 1 and f"{sidecar} holds the notes of another session" in said.err
    assert main(["export", str(log), "--format", "json", "-o", str(tmp_path / "e.json")]) == 0
    assert orjson.loads((tmp_path / "e.json").read_bytes())["notes"] == []
    assert f"{sidecar} holds the notes of another session" in capsys.readouterr().err
    assert main(["note", str(log), "--seq", "5", "on the second session"]) == 0
    said = capsys.readouterr()
    kept = [p for p in log.parent.iterdir() if p.name.startswith("session.jsonl.e9421ff4-")]
    assert len(kept) == 1 and kept[0].name.endswith(".notes.json") and str(kept[0]) in said.err
    assert _texts(log) == {5: "on the second session"}
    assert _texts(old) == {4: "on the first session"}  # through its session, from where it was set aside
    assert main(["note", str(old), "--seq", "65", "back on the first"]) == 0
    assert _texts(old) == {4: "on the first session", 65: "back on the first"}
    assert not kept[0].exists()  # taken up by the old log's own sidecar: its log is gone from beside it
    assert _texts(log) == {5: "on the second session"}


def test_a_session_that_comes_back_to_its_path_finds_its_notes_set_aside(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Session A, then B at the same path (noted: A's notes set aside), then A again: A shows its notes, and its
    next note moves B's aside in turn; no note of either is lost."""
    first = log.read_bytes()
    assert main(["note", str(log), "--seq", "4", "A"]) == 0
    log.write_bytes((FIXTURES / "multi-turn.session.jsonl").read_bytes())
    assert main(["note", str(log), "--seq", "5", "B"]) == 0
    second = log.read_bytes()
    log.write_bytes(first)
    assert _texts(log) == {4: "A"}
    assert main(["note", str(log), "--seq", "6", "A again"]) == 0
    assert _texts(log) == {4: "A", 6: "A again"}
    log.write_bytes(second)
    assert _texts(log) == {5: "B"}


@pytest.mark.parametrize("recorded", ["../elsewhere/x", "a\u0000b", "x" * 300, ".."])
def test_another_sessions_sidecar_naming_no_file_is_set_aside_under_a_name_of_its_own(
    log: Path, tmp_path: Path, recorded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sidecar at the log's place whose session no log could have (a path, a NUL, too long for a file name: written
    by hand or by something else) made the first note end in a traceback (ValueError: Invalid name), exit 1, as its
    session went into the name it was set aside under; that name is made of the session's safe characters now,
    beside the log, and the notes are kept."""
    sidecar = sidecar_paths(log)[0]
    sidecar.write_text(json.dumps({"version": 1, "session": recorded, "notes": {"3": {"text": "old", "time": 1}}}))
    assert main(["note", str(log), "--seq", "4", "mine"]) == 0
    kept = [p for p in log.parent.iterdir() if p.name.startswith("session.jsonl.") and p != sidecar
            and p.name.endswith(".notes.json")]  # fmt: skip
    assert len(kept) == 1 and str(kept[0]) in capsys.readouterr().err
    assert json.loads(kept[0].read_text())["notes"]["3"]["text"] == "old"
    assert _texts(log) == {4: "mine"}
    assert not (tmp_path / "elsewhere").exists()


def test_a_note_goes_on_a_log_compressed_whole_with_zstd(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fixture made into zstd by ``zstd`` (one frame holding the header and every event) takes a note on its last
    event and refuses one past it by its real range, not as a log with no events yet."""
    log = tmp_path / "s.session.jsonl.zstd"
    log.write_bytes(zstandard.ZstdCompressor().compress((FIXTURES / "tool-call-turn.session.jsonl").read_bytes()))
    assert main(["note", str(log), "--seq", "103", "last event"]) == 0
    assert main(["note", str(log), "--seq", "104", "past it"]) == 2
    assert "its events are seq 0..103" in capsys.readouterr().err
    assert list(load_notes(log)) == [103]


def _read_only_runner(directory: Path) -> list[str] | None:
    """The command prefix that runs a process which cannot write into ``directory``: for root (who writes through
    any mode bits) a bubblewrap mount namespace where it is a read-only bind mount, else nothing (mode 555 does);
    None when root has no bubblewrap that works."""
    if os.geteuid() != 0:
        return []
    bwrap = shutil.which("bwrap")
    if bwrap is None or subprocess.run([bwrap, "--dev-bind", "/", "/", "--", "true"], capture_output=True).returncode:
        return None
    return [bwrap, "--dev-bind", "/", "/", "--ro-bind", str(directory), str(directory), "--"]


def test_a_log_in_an_unwritable_directory_keeps_its_notes_in_the_data_dir(log: Path) -> None:
    runner = _read_only_runner(log.parent)
    if runner is None:
        pytest.skip("root writes to any directory, and bubblewrap cannot mount one read-only here (.ci/run installs it)")
    note = [*runner, sys.executable, "-c", "import sys; from core.cli import main; sys.exit(main(sys.argv[1:]))",
            "note", str(log), "--seq", "4", "kept elsewhere"]  # fmt: skip
    log.parent.chmod(0o555)
    try:
        done = subprocess.run(note, cwd=ROOT, capture_output=True, text=True, timeout=60)
    finally:
        log.parent.chmod(0o755)
    assert done.returncode == 0, done.stderr
    beside, kept = sidecar_paths(log)
    assert not beside.exists() and kept.is_relative_to(Path(os.environ["TAPEDECK_HOME"]))
    assert load_notes(log)[4].text == "kept elsewhere"


def test_the_data_dir_sidecar_is_keyed_by_the_log_identity(log: Path, tmp_path: Path) -> None:
    other = tmp_path / "t" / "session.jsonl"
    other.parent.mkdir()
    shutil.copy(log, other)
    kept_a, kept_b = sidecar_paths(log)[1], sidecar_paths(other)[1]
    assert kept_a != kept_b and kept_a.name.startswith("e9421ff4-baae-4807-a7ea-fd8a65f2c897-")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=JSON | st.dictionaries(st.sampled_from(["version", "notes"]), JSON, max_size=2)
       | st.builds(lambda d: {"notes": d}, st.dictionaries(st.text(max_size=5), JSON, max_size=3)),
       raw=st.binary(max_size=40), use_raw=st.booleans())  # fmt: skip
def test_a_hostile_sidecar_gets_a_clear_message(
    log: Path, capsys: pytest.CaptureFixture[str], doc: object, raw: bytes, use_raw: bool
) -> None:
    sidecar = sidecar_paths(log)[0]
    data = raw if use_raw else orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS) if _dumpable(doc) else b"{}"
    sidecar.write_bytes(data)
    try:
        parse_notes(data, "x")
        valid = True
    except NotesError:
        valid = False
    capsys.readouterr()
    assert main(["notes", str(log), "--json"]) == (0 if valid else 2)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if not valid:
        assert err.startswith(f"tapedeck: {sidecar}: ")
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["export", str(log), "--format", "json"]) == 0  # without the notes, saying so
    err = capsys.readouterr().err
    assert orjson.loads(out.getvalue())["notesUnread"] is not valid
    assert (f"tapedeck: the notes are left out of the export: {sidecar}: " in err) is not valid
    assert main(["note", str(log), "--seq", "4", "x"]) == (0 if valid else 2)


def test_a_sidecar_key_of_more_digits_than_python_converts_is_no_seq(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key of 5,000 digits is digits, but no seq any log holds: said as any other key that is no seq, where int()
    ended 'notes' in a ValueError traceback."""
    sidecar = sidecar_paths(log)[0]
    sidecar.write_bytes(orjson.dumps({"version": 1, "notes": {"9" * 5000: {"text": "x", "time": 1}}}))
    assert main(["notes", str(log)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tapedeck: {sidecar}: note key '9999") and "is not a seq" in err
    assert "Traceback" not in err


def _dumpable(doc: object) -> bool:
    try:
        orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        return False
    return True


def _writer(log: str, seq: int) -> None:
    os.environ["TAPEDECK_HOME"] = str(Path(log).parent / "home")
    for k in range(5):
        set_note(log, seq, f"note {seq} rev {k}")


def test_concurrent_writers_lose_no_note(log: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(log), seq)) for seq in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    notes = load_notes(log)
    assert {seq: n.text for seq, n in notes.items()} == {seq: f"note {seq} rev 4" for seq in range(8)}


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_a_sidecar_that_is_no_regular_file_is_refused_not_waited_on(log: Path, tmp_path: Path, kind: str) -> None:
    """A FIFO in the sidecar's place (opened, it waits for a writer for ever) or a symbolic link there (to notes
    anywhere) is refused with a message naming it, by every command that reads notes."""
    sidecar = sidecar_paths(log)[0]
    if kind == "fifo":
        os.mkfifo(sidecar)
    else:
        elsewhere = tmp_path / "elsewhere.json"
        elsewhere.write_text('{"version": 1, "notes": {"4": {"text": "planted"}}}')
        sidecar.symlink_to(elsewhere)
    refused = f"{sidecar}: not a regular file; notes are kept in one, so this is not read\n"
    for args in (["notes", str(log)], ["note", str(log), "--seq", "4", "x"], ["export", str(log), "--format", "md"]):
        done = subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)  # fmt: skip
        if args[0] != "export":
            assert (done.returncode, done.stderr) == (2, f"tapedeck: {refused}"), args
            continue
        # an export carries on without the notes, saying so on stderr and in the document
        assert done.returncode == 0 and done.stderr.endswith(f"tapedeck: the notes are left out of the export: {refused}")
        assert "planted" not in done.stdout and "The notes could not be read" in done.stdout
    assert sidecar.is_symlink() == (kind == "link")


def test_a_symbolic_link_at_the_lock_name_is_refused_not_followed(log: Path, tmp_path: Path) -> None:
    """The writers' lock was opened with ``open(.., "a+b")``, which follows a symbolic link at its name: a link
    planted there made ``note`` create (or open) its target, a file anywhere. It is refused now, naming the lock,
    and the target is never created."""
    sidecar = sidecar_paths(log)[0]
    lock = sidecar.with_name(sidecar.name + ".lock")
    target = tmp_path / "planted-target"
    lock.symlink_to(target)
    with pytest.raises(NotesError) as caught:
        set_note(log, 4, "x")
    assert str(caught.value) == f"{lock}: a symbolic link, not the notes' lock file; it is not followed (remove it)"
    assert not os.path.lexists(target) and not os.path.lexists(sidecar)


def test_a_note_that_is_not_utf8_is_refused_in_one_line(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bytes that are no UTF-8 (the shell passes them as lone surrogates) crashed writing the sidecar's JSON."""
    assert main(["note", str(log), "--seq", "4", "ab\udcffc"]) == 2
    err = capsys.readouterr().err
    assert err == "tapedeck: TEXT is not valid UTF-8 (check the terminal's encoding)\n"
    assert sorted(p.name for p in log.parent.iterdir()) == ["session.jsonl"]


@pytest.mark.parametrize("fmt", ["html", "md", "json"])
def test_an_export_with_a_damaged_sidecar_carries_on_without_the_notes_and_says_so(
    log: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    """The TUI shows a damaged sidecar's problem and goes on; an export did not: it ended with exit 2 and wrote
    nothing. It writes the document without notes now, a line there saying they could not be read (not why: the
    sidecar's path and content stay out of a shared file), and the warning on stderr names the file and what is
    wrong."""
    sidecar = sidecar_paths(log)[0]
    sidecar.write_text('{"version": 1, "notes": {"4": {"text": "Zq81xVb2 note"}}, "x": ')
    out = tmp_path / f"out.{fmt}"
    assert main(["export", str(log), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"tapedeck: the notes are left out of the export: {sidecar}: not JSON (" in err
    text = out.read_text()
    assert "Zq81xVb2" not in text and str(sidecar) not in text
    if fmt == "json":
        assert json.loads(text)["notesUnread"] is True
    else:
        assert text.count("The notes could not be read") == 1


@pytest.mark.parametrize(("content", "why"), [(b"hello world\n", "line 1 is not valid JSON"),
                                               (b"", "empty log (no session header)")])  # fmt: skip
def test_note_and_notes_on_a_file_that_is_no_session_log_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, content: bytes, why: str
) -> None:
    """``note`` on a text file said 'seq 0 is not in this log: it has no events yet' and ``notes`` 'no notes', exit
    0, where every reading command says the file is no session log and why; both say it now, and no sidecar is made."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    path = tmp_path / "todo.txt"
    path.write_bytes(content)
    assert main(["note", str(path), "--seq", "0", "hi"]) == 2
    assert why in capsys.readouterr().err
    assert main(["notes", str(path)]) == 2
    assert why in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["todo.txt"]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"[1]", "x: expected an object with a 'notes' object, found a list"),
        (b'"notes"', "x: expected an object with a 'notes' object, found a string"),
        (b'{"notes": []}', "x: 'notes' must be an object keyed by seq, found a list"),
        (b'{"notes": null}', "x: 'notes' must be an object keyed by seq, found null"),
        (b'{"version": "2"}', 'x: unknown notes version "2" (this tapedeck reads 1)'),
        pytest.param(b'{"notes": {"a\\u001b' + b"b" * 200 + b'": {"text": "t"}}}',
                     "x: note key 'a\\u001b" + "b" * 77 + "\u2026' is not a seq (a non-negative integer)",
                     id="a-long-key-with-a-control"),
    ],
)  # fmt: skip
def test_a_sidecar_of_another_shape_is_named_as_json_names_it(data: bytes, says: str) -> None:
    """A sidecar of another shape was refused by Python's type names ('found list', 'found NoneType') and its
    version as Python writes it ('2' for "2", None for null); a key that is no seq was cut at 40 characters with no
    mark, as Python writes a string, where every other message quotes one (``quoted``)."""
    with pytest.raises(NotesError) as info:
        parse_notes(data, "x")
    assert str(info.value) == says
