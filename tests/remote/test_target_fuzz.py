"""``[user@]host:PATH`` as the command line, a fleet's roots or a session's link give it: whatever the text,
``parse_remote`` answers a target or None (a local path), never an exception, and every command that takes a path
refuses what it cannot use with one line on stderr. No ssh server: nothing here connects."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.remote.target import bracket_problem, parse_remote

# the characters the grammar turns on, and a few it does not
PARTS = st.text(st.sampled_from("ab@:/~.- []\x00é\udcff\n"), max_size=12)
# a name longer than this machine's paths: a component past NAME_MAX (255), a path past PATH_MAX (4,096)
LONG = st.builds(lambda n, host, sep: host + ":" + sep.join(["a" * n] * 2), st.integers(250, 5000),
                 st.sampled_from(["h", "me@box", "a" * 300]), st.sampled_from(["", "/"]))  # fmt: skip


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(PARTS, LONG, st.text(max_size=30)))
@example(text="h:" + "a" * 5000)  # ENAMETOOLONG out of the "a local file of that name?" check before
@example(text="a" * 300 + ":p")
@example(text="me@[::1]:logs")
@example(text="me@[::1:logs")
def test_any_text_is_a_target_or_a_local_path_never_an_exception(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no local file of any of these names
    target = parse_remote(text)
    problem = bracket_problem(text)
    assert target is None or problem is None
    if target is not None:
        assert target.host and "/" not in target.host, target
        assert ":" not in target.host or text.partition(":")[0].endswith("[")  # only an address in brackets
        assert parse_remote(str(target)) == target  # what the fleet's rows and messages name reads back the same
    if problem is not None:
        assert "[ADDRESS]:PATH" in problem and len(problem) < 300


@pytest.mark.parametrize(("text", "where", "path"), [
    ("me@[::1]:logs", "me@[::1]", "logs"), ("[::1]:/var/a", "[::1]", "/var/a"),
    ("[fe80::1%eth0]:~/x", "[fe80::1%eth0]", "x"), ("a@b@[2001:db8::2]:", "a@b@[2001:db8::2]", "."),
    ("[box]:p", "box", "p"),
])  # fmt: skip
def test_an_address_in_brackets_is_the_host_as_scp_reads_it(text: str, where: str, path: str) -> None:
    """``me@[::1]:logs`` was read as host ``[`` and path ``:1]:logs``: a name no lookup finds."""
    target = parse_remote(text)
    assert target is not None and (target.where, target.path) == (where, path)
    assert "[" not in target.host


@pytest.mark.parametrize("text", ["me@[::1:logs", "[::1]/x", "@[::1]:p", "[::1]x:p", "me@[a@b]:p", "[host:/path",
                                  "user@[::1/path"])  # fmt: skip
@pytest.mark.parametrize("command", ["inspect", "sessions", "alerts", "fleet", "watch"])
def test_a_bracketed_host_written_wrong_is_refused_saying_how_to_write_it(
    text: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It reached ssh as host ``[`` (or ``me@[``): 'Name or service not known', nothing on how to write it; and
    the commands that take roots or several paths (sessions, alerts, fleet, watch) said only 'no such file'."""
    from tui.cli import main as tapedeck  # the command line with the TUI's commands (fleet, watch)

    monkeypatch.chdir(tmp_path)
    assert parse_remote(text) is None
    with pytest.raises(SystemExit) as exited:
        tapedeck([command, text])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "[ADDRESS]:PATH" in err and "Traceback" not in err, err


@pytest.mark.parametrize("argv", [["export", "{t}"], ["notes", "{t}"], ["note", "{t}", "--seq", "1", "x"],
                                  ["export", "{t}", "--format", "md"]])  # fmt: skip
def test_a_local_only_command_refuses_an_over_long_remote_path_in_one_line(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``host:PATH`` longer than a local file's name can be: OSError (File name too long) and a traceback out of
    the argument's check before; now the command's refusal, naming the text cut."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main([word.format(t="h:" + "a" * 5000) for word in argv])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert "reads a log on this machine only" in err and "Traceback" not in err and len(err) < 1000, err[:300]


@pytest.mark.parametrize("host", ["a" * 64, "a..b", ".", "é" * 70, "\udcff", "x" * 300],
                         ids=["label64", "empty-label", "dot", "idna-long", "surrogate", "long"])
def test_a_host_name_no_lookup_can_encode_is_unreachable_not_a_crash(
    host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A label past DNS's 63 bytes, an empty one, a byte no encoding takes (a non-UTF-8 argument): the name lookup
    raised UnicodeError (ValueError) out of the link, a traceback out of inspect and the fleet; it is a machine
    that cannot be reached, as a name DNS does not know is (no network is used: the lookup fails before it)."""
    monkeypatch.chdir(tmp_path)
    assert main(["inspect", f"{host}:p"]) == 2
    err = capsys.readouterr().err
    assert "unreachable since" in err and "no host name" in err and "Traceback" not in err, err


def test_a_remote_command_run_afresh_says_one_line_on_stderr(tmp_path: Path) -> None:
    """Importing asyncssh under cryptography 48 warned five times that DSA is deprecated: ten lines on stderr
    before the answer of every command given a remote path, in a real run (this process imported it long ago)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "core.cli", "inspect", "a..b:p"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=60)  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "unreachable since" in done.stderr, done.stderr


@pytest.mark.parametrize("root", ["x:" + "x" * 300, "a" * 300, "a/" + "b" * 300])
def test_a_root_longer_than_a_local_name_is_no_sessions_root_and_has_no_layout_note(
    root: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tapedeck fleet x:<300 x's>`` (a target after 63ee059) or a local root of a name too long: the fleet screen
    asked is_sessions_root, and Path.is_dir raised OSError (File name too long) out of its mount: a traceback, and
    exit status 0. Such a name holds no directory here."""
    from core.log.layout import is_sessions_root
    from core.log.sessions import layout_note

    monkeypatch.chdir(tmp_path)
    assert is_sessions_root(Path(root)) is False
    assert layout_note(Path(root), "fleet") is None


def test_the_tui_crashing_exits_1_not_0(tmp_path: Path) -> None:
    """An exception out of the app (its traceback printed as Textual prints it) ended ``watch`` and ``fleet`` with
    exit status 0, as a quit does: a script or a service manager took a crash for a clean end."""
    from tests.tui.pilot import NO_KEYMAP
    from tui.app import TapedeckApp

    class Crashing(TapedeckApp):
        def on_mount(self) -> None:
            raise RuntimeError("boom")

        def run(self, **kwargs: object) -> object:
            return super().run(headless=True, **kwargs)  # type: ignore[arg-type]

    log = tmp_path / "session.jsonl"
    log.write_bytes(b'{"type":"session","version":0,"id":"x"}\n')
    assert Crashing(log, keymap_file=NO_KEYMAP).run_until_quit() == 1
