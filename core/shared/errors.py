"""Exception types shared across tapedeck's core."""

from __future__ import annotations

from collections.abc import Sequence

from core.shared.text import nearest, quoted, quoted_path


class TapedeckError(Exception):
    """Base class for errors that the CLI reports as a one-line message with exit code 2."""


def seq_not_in_log(seq: int, events: int) -> TapedeckError:
    """The error for ``seq`` asked of a log of ``events`` events (seqs 0 to ``events - 1``)."""
    held = f"its events are seq 0..{events - 1}" if events else "it has no events yet"
    return TapedeckError(f"seq {seq} is not in this log: {held}")


class LogFormatError(TapedeckError):
    """A session log cannot be opened at all (missing file, bad header, refused version)."""


def truncated_while_read(path: object, size: int, held: int) -> LogFormatError:
    """The error for a log another program cut to ``size`` bytes while a pass still read it, the file having held
    ``held`` bytes (what the pass had read, or more: its size when the pass saw it): what was read describes bytes
    the file no longer holds, or what is left of it ends where the cut fell, not where the log did."""
    return LogFormatError(
        f"{quoted_path(str(path))}: the log was truncated to {size:,} bytes while it was read (it held {held:,} before): another program "
        "cut or rewrote it; read it again"
    )


def replaced_while_read(path: object, how: str = "another file is at its path now") -> LogFormatError:
    """The error for a log another program replaced (``how``) while a pass still read it: what was read is not the
    file that is there now."""
    return LogFormatError(
        f"{quoted_path(str(path))}: the log was replaced while it was read ({how}): another program rewrote or moved it; read it again"
    )


def removed_while_read(path: object) -> LogFormatError:
    """The error for a log another program removed while a pass that reads it by its path still read it."""
    return LogFormatError(
        f"{quoted_path(str(path))}: the log was removed while it was read: another program deleted or moved it; read it again"
    )


class LogNotFoundError(LogFormatError):
    """The log file (or the session directory's log) does not exist (yet): a follower may wait for it."""


class NoLogInDirectoryError(LogNotFoundError):
    """A directory given for one session holds no log of its own (``directory``: it); where the refusal is shown
    (``core.log.sessions.told``) it is followed by what the directory holds instead (a sessions root, a project's
    directory) and what to pass, which lists the directory's subdirectories: a follower waiting for the log never
    asks it. A local directory's note is ``core.log.sessions.no_session_note``; one of another kind (``local``
    False, on another machine) says its own (``note``)."""

    local = True  # a directory of this machine (``core.log.sessions.no_session_note`` says what it holds)

    def __init__(self, message: str, directory: str) -> None:
        super().__init__(message, directory)
        self.directory = directory

    def __str__(self) -> str:
        return str(self.args[0])

    def note(self) -> str | None:
        """What a directory that is not ``local`` holds instead, and what to pass (None: nothing to add); a local
        one's is read by ``core.log.sessions.told`` (this layer lists no directory)."""
        return None


class LogIncompleteError(LogFormatError):
    """The log holds no complete first line or frame yet (empty, or its header still being written): a
    follower may wait for it."""


class ConfigError(TapedeckError):
    """A policy configuration value is invalid; the message names the key and what is wrong."""


def unknown_config_key(
    key: object, known: Sequence[str], where: str | None = None, also: Sequence[str] = ()
) -> ConfigError:
    """The one refusal of a config key that names nothing, wherever it was given (a config file, ``config.set``, a
    command's ``--set``): ``key`` of the table ``where`` (dotted, ``slice.fold``; None: a section name), the
    ``known`` keys listed, and the nearest of them (or of ``also``, names that are no longer keys but say why when
    given: a typo of one is still a typo) offered when one is close (``nearest``). For the slice section
    itself it is the seed's own wording: ``Unknown slice configuration key histroy. Did you mean history? Valid
    keys: …``."""
    near = nearest(str(key), [*known, *also])
    hint = f" Did you mean {near}?" if near else ""
    what, listed = (f"{where} configuration key", "keys") if where else ("configuration section", "sections")
    return ConfigError(f"Unknown {what} {quoted(key)}.{hint} Valid {listed}: {', '.join(known)}.")


class WriterLockedError(TapedeckError):
    """Another process already holds the session log's writer lock."""
