"""A control request appended to the inbox of a session on another machine, as ``core.control.inbox`` appends a
local one: validated for the host's kind, one whole line written with one append (a torn last line left by a
crashed writer gets a newline first), mode 0600, never through a symbolic link, flushed before returning.

The append runs on the far side, as one short shell command over the SSH connection (``SEND``), so that it takes
the inbox's ``flock`` as a local sender does: a request for a live tapedeck host is refused there, nothing written,
once that host no longer holds its log (an exiting host holds the inbox's lock from its last read of it until it
has let go of the log), so it is read or never sent. Without ``flock(1)`` perl takes the lock; SFTP cannot: a
machine with neither, or one that will not open a channel for the command (sshd's ``MaxSessions`` taken by the
link's SFTP session), gets the append over SFTP, checked only before and after it, and the sender is warned."""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable, Mapping
from typing import Any, Unpack

from core.bridge.files import (
    BRIDGE_FILE,
    HOSTNAME_FILE,
    MACHINE_ID_FILES,
    MAX_BRIDGE_BYTES,
    addressed,
    machine_id,
    parse_bridge,
)
from core.control.host_state import KIND_DSH
from core.control.inbox import (
    INBOX_MODE,
    INBOX_NAME,
    ControlError,
    RequestOptions,
    inbox_line,
    make_request,
    withdrawal,
)
from core.remote.link import ChannelRefused, LostUnderWay, SshLink, Unreachable
from core.remote.target import RemoteTarget
from core.shared.errors import TapedeckError
from core.shared.text import quoted, quoted_path

# $1 the inbox, $2 the log, $3 "1" when the request needs the live tapedeck host that holds the log; the line on
# stdin. Exit 0 once written and synced, 3 when that host no longer holds the log (nothing written), 4 when the
# inbox is no regular file, 5 when it cannot be written, 100 when the machine has neither flock(1) nor perl. Where
# flock(1) is missing (macOS) perl's flock takes the same locks: on fd 9, the shell's open inbox, the lock belongs
# to the open file and outlives the perl that took it, as flock(1)'s does. The shell cannot
# open with O_NOFOLLOW, so a link swapped in after the first look is caught after the open, before any write: the
# inbox is created with O_EXCL (never through a link), opened read-only (creating nothing), and written only when
# the path itself, not followed (stat without -L), is the file opened; the writes go through /dev/fd/9, that file.
# GNU stat reads device and inode with -c, BSD's (macOS) with -f; where neither answers nothing is written.
SEND = """if command -v flock >/dev/null 2>&1; then
  lock() { flock -x 9; }
  unheld() { flock -n -s "$1" true; }
elif command -v perl >/dev/null 2>&1; then
  lock() { perl -MFcntl=:flock -e 'open(my $f, "<&=", 9) or exit 1; flock($f, LOCK_EX) or exit 1'; }
  unheld() { perl -MFcntl=:flock -e 'open(my $f, "<", $ARGV[0]) or exit 1; flock($f, LOCK_SH | LOCK_NB) or exit 1' "$1"; }
else exit 100; fi
refuse() { echo "the control inbox is not a regular file; refusing to write through it" >&2; exit 4; }
if [ -L "$1" ] || { [ -e "$1" ] && [ ! -f "$1" ]; }; then refuse; fi
umask 077
(set -C; : >"$1") 2>/dev/null
command exec 9<"$1" || exit 5
ino() { stat -c %d:%i "$@" 2>/dev/null || stat -f %d:%i "$@" 2>/dev/null; }
here=$(ino -- "$1"); opened=$(ino -L /dev/fd/9)
if [ -z "$here" ]; then echo "cannot read the control inbox's device and inode here (stat); refusing to write" >&2; exit 4; fi
if [ ! -f /dev/fd/9 ] || [ "$here" != "$opened" ]; then refuse; fi
lock || exit 5
if [ "$3" = 1 ] && { [ ! -f "$2" ] || unheld "$2"; }; then exit 3; fi
command exec 8>>/dev/fd/9 || exit 5
if [ -n "$(tail -c 1 <&9)" ]; then printf '\\n' >&8 || exit 5; fi
cat >&8 || exit 5
sync -- /dev/fd/8 2>/dev/null || :"""
_GONE, _NOT_A_FILE, _NO_FLOCK = 3, 4, 100
UNLOCKED = ("{why}, so the request went over SFTP without the control inbox's lock: one sent just as the host exits "
            "may never be read (the host was checked only before and after)")
NO_FLOCK = "{where} has neither flock(1) nor perl"


class RemoteHostExited(ControlError):
    """The tapedeck host on the far side let go of its log before the request could be written: nothing was."""


class MaybeWritten(ControlError):
    """The append's fate was lost midway: the line may be in the far inbox, and its request may still be applied.

    ``request_id`` is the request's id (``None`` for a withdrawal), so a caller can keep watching for its outcome.
    """

    def __init__(self, message: str, request_id: str | None) -> None:
        super().__init__(message)
        self.request_id = request_id


def append_remote_request(
    link: SshLink,
    log: RemoteTarget,
    op: str,
    args: Mapping[str, Any] | None = None,
    *,
    live: bool = False,
    warn: Callable[[str], None] = lambda message: None,
    **options: Unpack[RequestOptions],
) -> dict[str, Any]:
    """Append ``op`` (``make_request``) to the inbox beside the remote log ``log``; returns the request. With
    ``live`` (the request is for the live host, not queued), one for a tapedeck host is refused (``RemoteHostExited``)
    unless that host still holds its log once the inbox's lock is taken; ``warn`` is told (``UNLOCKED``) when the
    machine could not take that lock."""
    if options.get("kind") == KIND_DSH:
        options["to"] = _served_dir(link, log)
    request = make_request(op, args, **options)
    if (why := _append(link, log, request, live and options.get("kind") != KIND_DSH)) is not None:
        warn(UNLOCKED.format(why=why))
    return request


def _served_dir(link: SshLink, log: RemoteTarget) -> str | None:
    """The identity of the directory the bridge beside the remote log serves, by the rule of
    ``core.bridge.files.served_dir`` (the machine's id read there too, in the same round trip)."""
    path = posixpath.join(posixpath.dirname(log.path), BRIDGE_FILE)
    raw, *ids, name = link.read_files([path, *MACHINE_ID_FILES, HOSTNAME_FILE], MAX_BRIDGE_BYTES)
    return addressed(parse_bridge(raw, path)[0] if raw is not None else None, machine_id(ids, name))


def withdraw_remote_request(link: SshLink, log: RemoteTarget, request_id: str) -> None:
    """Withdraw a request: the host answers it ``cancelled`` unless it already has a final outcome."""
    _append(link, log, withdrawal(request_id), False)


def _append(link: SshLink, log: RemoteTarget, obj: Mapping[str, Any], live: bool) -> str | None:
    """Append ``obj``'s line; why the inbox's lock could not be taken when a ``live`` request went without it (over
    SFTP), else None."""
    directory = posixpath.dirname(log.path) or "."
    if not directory.startswith("/"):  # under the login directory, where SFTP starts: made absolute as SFTP sees it
        directory = link.realpaths([directory])[0] or f"./{directory}"
    inbox, log_path = (posixpath.join(directory, name) for name in (INBOX_NAME, posixpath.basename(log.path)))
    data = inbox_line(obj)
    command = shlex.join(["sh", "-c", SEND, "sh", inbox, log_path, "1" if live else "0"])
    where = quoted_path(str(log.at(inbox)))
    try:
        try:
            status, err = link.run(command, data)
        except ChannelRefused as exc:  # no command runs there: the line goes over SFTP, as where flock is missing
            try:
                link.append(inbox, data, INBOX_MODE)
            except (LostUnderWay, Unreachable):
                raise
            except TapedeckError as sftp:
                raise ControlError(f"{where}: the request was not sent: {exc}; over SFTP: {sftp}") from None
            return str(exc) if live else None
        if status == _NO_FLOCK:
            link.append(inbox, data, INBOX_MODE)
            return NO_FLOCK.format(where=log.where) if live else None
    except LostUnderWay as exc:  # the line was on its way: it may be there
        raise _maybe_written(where, obj, f"the machine stopped answering with the append under way ({exc})") from None
    if status == 0:
        return None
    if status == _GONE:
        raise RemoteHostExited(f"{quoted_path(str(log))}: its host exited just now; nothing was sent")
    if status is None:  # the connection went, or the command was killed, before it said how the append ended
        raise _maybe_written(where, obj, "the append gave no exit status (the connection was lost or the command "
                                         "killed)")  # fmt: skip
    err = quoted(err, 200)  # the machine's stderr: its words
    if status == _NOT_A_FILE:
        raise ControlError(f"{where}: {err}")
    raise ControlError(f"{where}: the request could not be written (exit {status}{': ' + err if err else ''})")


def _maybe_written(where: str, obj: Mapping[str, Any], why: str) -> MaybeWritten:
    """The refusal for ``obj``'s line, appended to the inbox at ``where`` when ``why`` left unknown whether it was
    written: it may have been, and may still be applied."""
    line = f"request {obj['id']} ({obj['op']})" if "id" in obj else f"the withdrawal of request {obj['withdraw']}"
    message = (f"{where}: {why}, so {line} may have been written and may still be applied: once the machine answers "
               "again, look for its id in that file")  # fmt: skip
    return MaybeWritten(message, str(obj["id"]) if "id" in obj else None)
