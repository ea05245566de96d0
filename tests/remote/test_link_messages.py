"""What an SSH server says (an SFTP status's reason, a disconnect's reason, a command's stderr) reaches tapedeck's
messages quoted: cut, its controls and line breaks escaped, so a hostile server neither forges a line nor acts on the
terminal. No sshd is needed: the link's SFTP client and the inbox's link are stand-ins that fail as a server would."""

from __future__ import annotations

from typing import Any

import pytest

from core.control.inbox import ControlError
from core.remote import inbox
from core.remote.link import SshLink, Unreachable
from core.remote.target import RemoteTarget
from core.shared.errors import TapedeckError

SAID = "no\x1b[2J\nforged line" + "k" * 1000
ESCAPED = "no\\u001b[2J\\nforged linekkk"


def _link() -> SshLink:
    link = SshLink(RemoteTarget("me", "box", "/s/session.jsonl"))
    link._sftp = object()  # connected: call() hands it to the request as is
    return link


def _said(error: BaseException) -> str:
    said = str(error)
    assert "\x1b" not in said and "\n" not in said and len(said) < 300, said[:400]
    return said


@pytest.mark.parametrize("kind", [TapedeckError, Unreachable], ids=["sftp-status", "disconnect"])
def test_a_servers_reason_is_quoted_in_the_links_error(kind: type[Exception]) -> None:
    import asyncssh  # after core.remote.link, which quiets its import's warnings

    async def fails(_sftp: Any) -> None:
        if kind is Unreachable:
            raise asyncssh.DisconnectError(asyncssh.DISC_BY_APPLICATION, SAID)
        raise asyncssh.SFTPError(asyncssh.sftp.FX_FAILURE, SAID)  # a file's failure, not the link's

    link = _link()
    with pytest.raises(kind) as info:
        link.call(fails)
    assert ESCAPED in _said(info.value) and "k…" in str(info.value)


@pytest.mark.parametrize("status", [inbox._NOT_A_FILE, 1], ids=["not-a-file", "failed"])
def test_a_servers_stderr_is_quoted_in_controls_refusal(status: int) -> None:
    class Link:
        def run(self, command: str, stdin: bytes) -> tuple[int, str]:
            return status, SAID

    with pytest.raises(ControlError) as info:
        inbox._append(Link(), RemoteTarget("me", "box", "/s/session.jsonl"), {"op": "pause"}, False)  # type: ignore[arg-type]
    assert ESCAPED in _said(info.value) and "k…" in str(info.value)


@pytest.mark.parametrize("refusal", ["host-key", "config"])
def test_what_the_ssh_library_says_at_connect_is_quoted(monkeypatch: pytest.MonkeyPatch, refusal: str) -> None:
    """The host key refusal wrote asyncssh's reason as it came (it names the host, the key alias of the ssh config,
    what was wrong with the server's key): a newline and an escape sequence in it forged a line of the refusal and
    acted on the terminal. It is quoted, as a disconnect's reason is (and a config asyncssh cannot read: that one
    already was, as the link's Unreachable quotes it)."""
    import asyncssh

    from core.remote.link import HostKeyRefused

    async def connect(*_args: Any, **_kwargs: Any) -> None:
        raise asyncssh.HostKeyNotVerifiable(SAID) if refusal == "host-key" else ValueError(SAID)

    monkeypatch.setattr(asyncssh, "connect", connect)
    link = SshLink(RemoteTarget("me", "box", "/s/session.jsonl"))
    with pytest.raises(HostKeyRefused if refusal == "host-key" else Unreachable) as info:
        link.stat("/s")
    said = str(info.value)
    assert "\x1b" not in said and "\n" not in said and len(said) < 500, said[:600]
    assert ESCAPED in said and "k…" in said
    if refusal == "host-key":
        assert said.endswith("record it by running: ssh me@box true"), said


HOSTILE = "/srv/a\x1b]0;t\x07\nforged"  # a directory on the far side whose name forges a line and retitles a terminal
NAMED = "me@box:/srv/a\\u001b]0;t\\u0007\\nforged"


def test_a_remote_path_a_refusal_names_is_quoted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three refusals named a remote log or directory as it is (a sessions root where one log was wanted, a log gone
    between two looks, a host that exited as a request went out), where the others name one through quoted_path: a
    name holding a newline forged a line on stderr and its escape sequence went out raw."""
    import argparse

    from core.remote import copy, live
    from core.remote.inbox import _GONE

    class Machine:  # a sessions root of two sessions, no stat answers (the log is gone), a host that exits
        def listdir(self, path: str, skipped: list[str] | None = None) -> list[tuple[str, str]]:
            return [("p", "dir")]

        def listdir_many(self, paths: list[str], skipped: list[str] | None = None) -> list[list[tuple[str, str]]]:
            sessions = paths[0].endswith("/s1")
            return [[("session.jsonl", "file")] if sessions else [("s1", "dir"), ("s2", "dir")] for _ in paths]

        def stat_many(self, paths: list[str], follow: bool = True, refused: object = None) -> list[None]:
            return [None for _ in paths]

        def stat(self, path: str, follow: bool = True, own: bool = False) -> None:
            return None

        def run(self, command: str, stdin: bytes) -> tuple[int, str]:
            return _GONE, ""

    target = RemoteTarget("me", "box", HOSTILE)
    with pytest.raises(TapedeckError) as root:
        live.resolve_remote_log(Machine(), target)  # type: ignore[arg-type]
    with pytest.raises(ControlError) as exited:
        inbox._append(Machine(), target.join("s", "session.jsonl"), {"op": "pause"}, True)  # type: ignore[arg-type]
    monkeypatch.setattr("core.remote.link.link_for", lambda _target: Machine())
    monkeypatch.setattr(live, "resolve_remote_log", lambda _link, t: t)
    with pytest.raises(TapedeckError) as gone:
        copy.with_remote_copy(lambda _args: 0)(argparse.Namespace(path=f"me@box:{HOSTILE}/session.jsonl"))
    for refused, said in [(root, f"{NAMED}: no session.jsonl"), (exited, f"{NAMED}/s/session.jsonl: its host exited"),
                          (gone, f"{NAMED}/session.jsonl: no such file")]:  # fmt: skip
        text = str(refused.value)
        assert text.startswith(said) and not {"\x1b", "\x07", "\n"} & set(text), text


def test_an_inbox_that_is_no_file_is_named_quoted() -> None:
    """append refused an inbox that is no regular file naming it as the target prints, raw: a remote directory whose
    name forged a line and retitled the terminal did both. It is named through quoted_path, as the link's others."""
    import stat
    from types import SimpleNamespace

    class Sftp:
        async def lstat(self, path: str) -> SimpleNamespace:
            return SimpleNamespace(permissions=stat.S_IFDIR | 0o755)

    link = SshLink(RemoteTarget("me", "box", f"{HOSTILE}/session.jsonl"))
    link._sftp = Sftp()
    with pytest.raises(TapedeckError) as refused:
        link.append(f"{HOSTILE}/control.jsonl", b"{}\n", 0o600)
    text = str(refused.value)
    assert text.startswith(f"{NAMED}/control.jsonl: the control inbox is not a regular file (a dir)"), text
    assert not {"\x1b", "\x07", "\n"} & set(text), text


class _Refusing:
    """An SFTP client whose server refuses every file it is asked about with a status that is no lost link (as a
    permission it lacks, or a read of what is no file, refuses it)."""

    def __init__(self, absent: str | None = None) -> None:
        self.absent = absent  # a path that is not there (stat says so) rather than refused

    async def stat(self, path: str) -> None:
        import asyncssh

        if path == self.absent:
            raise asyncssh.SFTPNoSuchFile("no such file")
        raise asyncssh.SFTPError(asyncssh.sftp.FX_FAILURE, SAID)

    lstat = readdir = stat

    def open(self, *_args: Any, **_kwargs: Any) -> _Refusing:
        return self

    async def __aenter__(self) -> None:
        await self.stat("")

    async def __aexit__(self, *_exc: object) -> None:
        return None


@pytest.mark.parametrize(
    ("doing", "path", "ask"),
    [
        ("read", "/s/session.jsonl", lambda link: link.read("/s/session.jsonl", 0, 10)),
        ("read", "/s/host.json", lambda link: link.read_files(["/s/host.json"], 10)),
        ("stat", "/s/session.jsonl", lambda link: link.stat("/s/session.jsonl")),
        ("list", "/s", lambda link: link.listdir("/s")),
        ("append to", "/s/control.jsonl", lambda link: link.append("/s/control.jsonl", b"{}\n", 0o600)),
    ],
)
def test_a_file_the_server_refuses_is_named_with_what_was_being_done(doing: str, path: str, ask: Any) -> None:
    """A status the server gave for one file came out as the machine and the server's words only (`me@box: Failure`):
    the operator could not tell which file failed, nor at what. It names both, as a local file's failure does."""
    link = _link()
    link._sftp = _Refusing(absent=path if doing == "append to" else None)  # an inbox not made yet: created by the open
    with pytest.raises(TapedeckError) as refused:
        ask(link)
    assert not isinstance(refused.value, Unreachable)
    assert _said(refused.value).startswith(f"me@box:{path}: cannot {doing} ({ESCAPED}"), str(refused.value)
    assert str(refused.value).endswith("k…)")


def test_a_remote_log_that_is_no_regular_file_is_named_in_the_local_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """A FIFO where a remote log was named was `no such file` to inspect and `not a regular file` to watch (the
    header's read), where the same file here is `is a FIFO, not a session log file`."""
    import argparse
    import stat

    from core.remote import copy, live
    from core.remote.link import RemoteStat
    from core.remote.sessions import remote_header

    class Machine:  # the log's name on a FIFO
        def stat(self, path: str, follow: bool = True, own: bool = False) -> RemoteStat:
            return RemoteStat(0, 1_700_000_000_000, "other", stat.S_IFIFO)

    log = RemoteTarget("me", "box", f"{HOSTILE}/session.jsonl")
    monkeypatch.setattr("core.remote.link.link_for", lambda _target: Machine())
    monkeypatch.setattr(live, "resolve_remote_log", lambda _link, t: t)
    with pytest.raises(TapedeckError) as copied:
        copy.with_remote_copy(lambda _args: 0)(argparse.Namespace(path=str(log)))
    with pytest.raises(TapedeckError) as read:
        remote_header(Machine(), log)  # type: ignore[arg-type]
    said = f"{NAMED}/session.jsonl: is a FIFO, not a session log file"
    assert (str(copied.value), str(read.value)) == (said, said)


@pytest.mark.parametrize("refused", ["open", "session"])
def test_a_channel_the_machine_will_not_open_sends_over_sftp_and_says_why_when_that_fails_too(refused: str) -> None:
    """An SSH server may refuse the channel a command needs (sshd's MaxSessions reached by the link's SFTP session):
    ``run`` counted that as the append under way, so the request was reported as perhaps written (MaybeWritten)
    and the machine as unreachable, the connection dropped, though nothing had run. The line now goes over SFTP,
    as where flock is missing; when the server refuses that too, nothing was sent, and both refusals are said."""
    import asyncssh

    class Conn:
        async def run(self, *_args: Any, **_kwargs: Any) -> None:
            if refused == "open":
                raise asyncssh.ChannelOpenError(asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED, SAID)
            raise asyncssh.ChannelOpenError(asyncssh.OPEN_REQUEST_SESSION_FAILED, "Session request failed")

    class Sftp:
        async def lstat(self, path: str) -> None:
            raise asyncssh.SFTPPermissionDenied("Permission denied")

    link = _link()
    link._conn, link._sftp = Conn(), Sftp()
    with pytest.raises(ControlError) as info:
        inbox._append(link, link.target, {"id": "r1", "op": "pause"}, True)
    assert not isinstance(info.value, inbox.MaybeWritten)
    said = _said(info.value)
    assert said.startswith("me@box:/s/control.jsonl: the request was not sent: me@box would not open a channel "
                           "to run a command ("), said  # fmt: skip
    assert (ESCAPED if refused == "open" else "Session request failed") in said
    assert said.endswith("; over SFTP: me@box:/s/control.jsonl: cannot stat (Permission denied)"), said
    assert link.unreachable_since is None and link._conn is not None  # the connection stays, SFTP goes on


def test_a_remote_root_given_for_one_session_is_refused_from_one_listing_and_noted_only_when_told() -> None:
    """``resolve_remote_log`` on a directory with no log of its own listed its projects and sessions, then built the
    note on what it holds (several more round trips) whether or not anyone read it, and listed them without noting
    a refusal: a project the server would not list replaced the refusal with that project's 'cannot list'. It now
    lists the directory alone; the note, built where the refusal is shown (``told``), passes over a project it
    cannot list, as a local one's does."""
    from core.log.sessions import told
    from core.remote import live
    from core.shared.errors import NoLogInDirectoryError

    tree = {"/r": [("p", "dir"), ("q", "dir")], "/r/p": [("s", "dir")], "/r/p/s": [("session.jsonl", "file")]}

    class Root:  # a sessions root: project p holds session s; project q the server refuses to list
        def __init__(self) -> None:
            self.asked: list[list[str]] = []

        def listdir(self, path: str, skipped: list[str] | None = None) -> list[tuple[str, str]]:
            return self.listdir_many([path], skipped)[0]

        def listdir_many(self, paths: list[str], skipped: list[str] | None = None) -> list[list[tuple[str, str]]]:
            self.asked.append(list(paths))
            if "/r/q" in paths and skipped is None:
                raise TapedeckError('me@box:/r/q: cannot list ("Permission denied")')
            return [tree.get(path, []) for path in paths]

        def stat_many(self, paths: list[str], follow: bool = True, refused: object = None) -> list[None]:
            if paths:
                self.asked.append(list(paths))
            return [None for _ in paths]

        def readlinks(self, paths: list[str]) -> list[None]:
            return [None for _ in paths]

        def realpaths(self, paths: list[str]) -> list[str]:  # the note counts files by their real paths
            return list(paths)

    machine = Root()
    with pytest.raises(NoLogInDirectoryError) as refused:
        live.resolve_remote_log(machine, RemoteTarget("me", "box", "/r"))  # type: ignore[arg-type]
    assert str(refused.value) == "me@box:/r: no session.jsonl or session.jsonl.zstd in this directory"
    assert machine.asked == [["/r"]]  # one round trip: what the refusal needs
    assert told(refused.value) == (
        "me@box:/r: no session.jsonl or session.jsonl.zstd in this directory; it is a sessions root, holding 1 "
        "session: `tapedeck sessions me@box:/r` lists them; give one's session directory or log"
    )


def test_a_remote_log_the_server_will_not_let_us_read_is_noted_not_taken_for_absent() -> None:
    """``read_files`` gave None both for a file that is not there and for one the server refuses to open, so a
    session log that cannot be read was left out of a remote listing without a word, as if it were not there. A
    refused file is now told apart (``refused``, with the server's reason), and ``remote_refs`` notes it in the
    listing's words; a file that went meanwhile is still None and said nothing of."""
    import asyncssh

    from core.remote.sessions import remote_refs

    class Sftp:
        async def stat(self, path: str) -> Any:
            return asyncssh.SFTPAttrs(size=10, mtime=1, permissions=0o100600)

        lstat = stat  # a stat through links asks for the path's own kind too

        def open(self, path: str, mode: str) -> Any:
            if path.endswith("/denied/session.jsonl"):
                raise asyncssh.SFTPPermissionDenied("Permission denied")
            raise asyncssh.SFTPNoSuchFile("No such file")

    link = _link()
    link._sftp = Sftp()
    refused: dict[str, str] = {}
    assert link.read_files(["/s/denied/session.jsonl", "/s/gone/session.jsonl"], 64, refused) == [None, None]
    assert refused == {"/s/denied/session.jsonl": "Permission denied"}
    skipped: list[str] = []
    logs = [RemoteTarget("me", "box", f"/s/{name}/session.jsonl") for name in ("denied", "gone")]
    assert remote_refs(link, logs, skipped) == [None, None]
    assert skipped == ["skipped me@box:/s/denied/session.jsonl: cannot read (Permission denied)"]


def test_a_remote_note_is_warned_once_while_it_lasts_not_at_every_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    """``tapedeck alerts --follow`` on a remote root warned each note of the fleet's ``skipped`` (a directory the
    far side will not list, a log it will not let us read) at every poll, a line a second on stderr for as long as
    it lasted; only a machine's 'unreachable' was said once. Every note is now said once while it lasts, and again
    if it comes back after it went."""
    from core.control.config import validate_config
    from core.fleet.alerts import AlertSources

    warned: list[str] = []
    sources = AlertSources(["me@box:/r"], validate_config({}), warn=warned.append)
    assert sources.remote is not None
    listed = [["skipped me@box:/r/q: Permission denied"]] * 3 + [[]] + [["skipped me@box:/r/q: Permission denied"]]

    def poll(*_args: Any, **_kwargs: Any) -> int:
        sources.remote.skipped = list(listed.pop(0))  # type: ignore[union-attr]  # as each rescan lists it afresh
        return 0

    monkeypatch.setattr(sources.remote, "poll", poll)
    for _ in range(5):
        sources.poll(now=0)
    assert warned == ["skipped me@box:/r/q: Permission denied"] * 2


def test_a_remote_host_json_the_server_will_not_let_us_read_is_unknown_not_exited() -> None:
    """A remote tapedeck host's liveness rests on its ``host.json`` (no owner lock can be probed over SFTP); one
    the server refused to open read as no file at all, so the session was ``exited`` since its log's last write and
    ``control`` said 'no live host (it exited …)' of a host that may well run. It is now ``unknown`` with the
    server's reason, and ``control`` says so and sends nothing."""
    import asyncssh

    from core.cli.control import _check_host
    from core.control.host_state import UNKNOWN
    from core.remote.sessions import remote_host_state, remote_state_now

    class Sftp:
        async def lstat(self, path: str) -> Any:
            if path in ("/s/host.json", "/s/session.jsonl"):
                return asyncssh.SFTPAttrs(size=60, mtime=1_700_000_000, permissions=0o100600)
            raise asyncssh.SFTPNoSuchFile("No such file")

        stat = lstat

        def open(self, path: str, mode: str) -> Any:
            if path == "/s/host.json":
                raise asyncssh.SFTPPermissionDenied("Permission denied")
            raise asyncssh.SFTPNoSuchFile("No such file")

    link = _link()
    link._sftp = Sftp()
    log = RemoteTarget("me", "box", "/s/session.jsonl")
    state = remote_host_state(link, log, hosted=True)
    assert (state.state, state.since, state.live) == (UNKNOWN, None, False), state
    assert state.problem == "its host.json cannot be read (Permission denied)"
    assert remote_state_now(link, log)[0] == state
    with pytest.raises(ControlError) as refused:
        _check_host(log, '"x"', False, state)
    assert str(refused.value) == (
        'session "x": whether a host runs it is unknown: its host.json cannot be read (Permission denied); nothing '
        "was sent"
    )


def test_a_remote_outcomes_file_removed_after_its_stat_reads_as_none_yet_as_here() -> None:
    """The local outcome reader takes a ``control.outcomes.jsonl`` removed between its stat and its read for no
    bytes (``_read_range`` gives None) and reads it again at the next call; over SFTP the server's 'no such file'
    on the read was a TapedeckError out of ``read``, which ended a remote ``control --wait`` on a DSH session. It
    is None there too now; a read the server refuses for another reason still raises, as a local one does."""
    import asyncssh

    from core.remote.live import RemoteOutcomes

    class Sftp:
        refusal: Exception = asyncssh.SFTPNoSuchFile("No such file")

        async def lstat(self, path: str) -> Any:
            return asyncssh.SFTPAttrs(size=60, mtime=1_700_000_000, permissions=0o100600)

        stat = lstat  # the link makes sure a file is a regular one before it opens it

        def open(self, path: str, mode: str) -> Any:
            raise self.refusal

    link = _link()
    link._sftp = sftp = Sftp()
    outcomes = RemoteOutcomes(link, RemoteTarget("me", "box", "/s"))
    assert outcomes.read() == [] and outcomes.outcomes == {}
    sftp.refusal = asyncssh.SFTPPermissionDenied("Permission denied")
    with pytest.raises(TapedeckError, match=r"control\.outcomes\.jsonl: cannot read \(Permission denied\)"):
        outcomes.read()


def test_a_remote_log_removed_between_its_stat_and_its_read_is_not_found_as_here() -> None:
    """A log removed between ``remote_header``'s stat and its read gave the server's 'no such file' as a plain
    TapedeckError: the live view (``_wait_for_file``), which waits for a missing log while it follows, ended on its
    error screen instead, where a local log removed at that moment is waited for (``LogNotFoundError``). It is
    ``LogNotFoundError`` over SFTP too now."""
    import asyncssh

    from core.remote.sessions import remote_header
    from core.shared.errors import LogNotFoundError

    class Sftp:
        async def stat(self, path: str) -> Any:
            return asyncssh.SFTPAttrs(size=60, mtime=1_700_000_000, permissions=0o100600)

        lstat = stat  # a stat through links asks for the path's own kind too

        def open(self, path: str, mode: str) -> Any:
            raise asyncssh.SFTPNoSuchFile("No such file")

    link = _link()
    link._sftp = Sftp()
    with pytest.raises(LogNotFoundError, match=r"^me@box:/s/session\.jsonl: no such file$"):
        remote_header(link, RemoteTarget("me", "box", "/s/session.jsonl"))


@pytest.mark.parametrize("after", ["unknown", "unreachable", "exited"])
def test_a_remote_control_says_what_is_known_of_the_host_after_the_request_was_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], after: str
) -> None:
    """``control host:PATH`` looks at the host again once its request is written (a host that exited in between
    would never read it) and withdraws it when the host is not live. A host whose ``host.json`` could not be read
    then (``unknown``: it may well run, and may have applied the request already) was said to have 'exited just
    now' (exit 3); one whose machine stopped answering then gave only 'unreachable', not that a request was sent.
    Each now says what is known."""
    import time

    from core.cli import main
    from core.control.host_state import UNKNOWN, HostState
    from core.remote import live, sessions

    log = RemoteTarget("me", "box", "/s/session.jsonl")
    since = int(time.time() * 1000)
    withdrawn: list[str] = []

    def state_after(*_: Any) -> HostState:
        if after == "unreachable":
            raise Unreachable("box: unreachable since 2026-12-07 08:00:00 UTC (Connection lost)", since)
        return HostState(UNKNOWN, problem="its host.json cannot be read (Permission denied)") if after == "unknown" \
            else HostState("exited", 42, since)  # fmt: skip

    monkeypatch.setattr("core.remote.link.link_for", lambda target: object())
    monkeypatch.setattr(live, "resolve_remote_log", lambda link, target: log)
    monkeypatch.setattr(sessions, "remote_header", lambda link, target: {"type": "session", "id": "x"})
    monkeypatch.setattr(sessions, "remote_state_now", lambda link, target: (HostState("running", 42, since), True))
    monkeypatch.setattr(inbox, "append_remote_request", lambda *a, **k: {"id": "r1", "op": "pause"})
    monkeypatch.setattr(inbox, "withdraw_remote_request", lambda link, target, request_id: withdrawn.append(request_id))
    monkeypatch.setattr(sessions, "remote_host_state", state_after)
    code = main(["control", str(log), "pause"])
    err = capsys.readouterr().err
    assert "exited just now" not in err or after == "exited", err
    assert (code, withdrawn, err) == {
        "unknown": (2, ["r1"], 'tapedeck: session x: whether a host runs it became unknown once request r1 (pause) '
                    "was written: its host.json cannot be read (Permission denied); the request was withdrawn, so a "
                    "host that runs it cancels it unless it has applied it already\n"),
        "unreachable": (2, [], "tapedeck: box: unreachable since 2026-12-07 08:00:00 UTC (Connection lost); request r1 "
                        '(pause) was sent to session x, whose host could not be looked at again: it may be applied\n'),
        "exited": (3, ["r1"], 'tapedeck: session x: its host exited just now; the request was withdrawn\n'),
    }[after]
