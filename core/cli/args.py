"""The arguments several commands share: ``--json``, a session log's path (here or over SSH), sessions roots with
the default root, a polling interval, and the checks and splits of their values."""

from __future__ import annotations

import argparse
import math
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from core.control.config_values import INT_RANGE
from core.log.layout import default_sessions_root, missing_path, not_a_log, stat_or_none
from core.remote.target import bracket_problem, parse_remote
from core.shared.errors import LogFormatError, LogNotFoundError, TapedeckError
from core.shared.text import nearest, path_text, quoted

LOG_PATH_HELP = "session log file or session directory"
REMOTE_HELP = ", here or [user@]host:PATH over SSH"


def check_utf8(what: str, text: str) -> None:
    """Refuse ``text`` (named ``what``) when it holds bytes that are no UTF-8 (the shell passes them through as lone
    surrogates): a log or an inbox, both JSON, could not record it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise TapedeckError(f"{what} is not valid UTF-8 (check the terminal's encoding)") from None


def check_utf8_path(option: str, path: Path) -> None:
    """Refuse ``path``, given with ``option``, when its name is not UTF-8 (a log records it), the path quoted as
    other refusals quote what they were given (``path_text``'s ``\\xNN`` for the bytes, cut, controls escaped)."""
    check_utf8(f"{option} {quoted(path_text(path))}", str(path))


def add_json(parser: argparse.ArgumentParser, help: str = "print JSON") -> None:
    """``--json``: print JSON instead of text."""
    parser.add_argument("--json", action="store_true", help=help)


def add_log_path(parser: argparse.ArgumentParser, *, remote: bool = False, metavar: str | None = None) -> None:
    """The positional ``path`` of one session log (``remote``: also ``[user@]host:PATH``; else such a path is
    refused with the commands that read one)."""
    parser.add_argument("path", metavar=metavar or "PATH", type=remote_path if remote else _local_path,
                        help=LOG_PATH_HELP + (REMOTE_HELP if remote else ""))  # fmt: skip


def path_argument(text: str) -> str:
    """``text``, unless it is empty: as a path it would be the working directory, which it does not name."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names nothing (the working directory is '.')")
    return text


def remote_path(text: str) -> str:
    """A path argument that may name another machine: ``text``, unless it is empty or a bracketed remote host
    written wrong (``me@[::1:logs``, ``[host:/path``)."""
    problem = bracket_problem(path_argument(text))
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def _local_path(text: str) -> str:
    """``text``, unless it is empty or names a path on another machine."""
    if parse_remote(path_argument(text)) is not None:
        raise argparse.ArgumentTypeError(
            f"{quoted(text)}: this command reads a log on this machine only; inspect, surface, events, control, sessions, "
            "alerts, fleet and watch take [user@]host:PATH (or copy the log here first)"
        )
    return text


_WHOLE = re.compile(r"-?[0-9]+")


def whole(text: str) -> int:
    """A whole-number option's value: ASCII digits, a leading ``-`` at most, within the 64 bits a log's JSON holds
    (``INT_RANGE``, as a config's whole numbers); ``int`` would also take other scripts' digits (``١٢``), ``_`` and
    spaces, and quote a value of thousands of digits whole in its error."""
    if _WHOLE.fullmatch(text) and len(text.lstrip("-").lstrip("0")) <= 20 and int(text) in INT_RANGE:
        return int(text)
    raise argparse.ArgumentTypeError(f"'{quoted(text)}' is not a whole number from -2**63 to 2**64-1 in ASCII digits")


_DECIMAL = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?(?:inf|infinity|nan)", re.IGNORECASE)


def decimal(text: str) -> float:
    """A number option's value (seconds, a speed) as Python writes a float, in ASCII only: ``float`` would also take
    other scripts' digits (``١``), ``_`` and spaces, and quote a value of thousands of characters whole in its
    error; the option's own check refuses what is out of its range (``check_seconds``)."""
    if len(text) <= 400 and _DECIMAL.fullmatch(text):
        return float(text)
    raise argparse.ArgumentTypeError(f"'{quoted(text)}' is not a number (ASCII digits, such as 2 or 0.5)")


def add_roots(parser: argparse.ArgumentParser) -> None:
    """The positional ``roots`` (any number, here or over SSH), the default sessions root when none is given."""
    default_root = str(default_sessions_root())
    parser.add_argument(
        "roots", nargs="*", default=[default_root], metavar="ROOT", type=remote_path,
        help=f"sessions root, session directory or log file, here or [user@]host:PATH (default: {default_root})",
    )  # fmt: skip


def add_interval(parser: argparse.ArgumentParser, default: float, help: str) -> None:
    """``--interval S``: how often something is polled, in seconds; its help ends with the ``default``."""
    parser.add_argument("--interval", type=decimal, default=default, metavar="S", help=f"{help} (default {default:g})")


MAX_SECONDS = 86_400  # the longest wait an option may ask for: a day (a sleep cannot last ~292 years, 2**63 ns)


def check_seconds(option: str, value: float, *, zero: bool = False, most: float = MAX_SECONDS) -> None:
    """Refuse a ``--<option>`` that is not a positive number of seconds (``zero``: a finite one, 0 or more, as a
    delay that may be left out), or that is longer than ``most`` (a wait: a day, ``MAX_SECONDS``)."""
    if zero and not (math.isfinite(value) and value >= 0):
        raise TapedeckError(f"--{option} must be a finite number of seconds, 0 or more, not {value:g}")
    if not zero and not (value > 0 and math.isfinite(value)):
        raise TapedeckError(f"--{option} must be a positive number of seconds, not {value:g}")
    if value > most:
        day = " (a day)" if most == MAX_SECONDS else ""
        raise TapedeckError(f"--{option} must be at most {most:,.0f} seconds{day}, not {value:g}")


def check_at_least(option: str, value: int | None, least: int, most: int | None = None) -> None:
    """Refuse a ``--<option>`` number below ``least`` (a turn, step or call counts from 1, a seq from 0), or above
    ``most`` when given (a config's count: a safe integer); ``None``, the option left out, passes."""
    if value is not None and (value < least or (most is not None and value > most)):
        upto = "" if most is None else f" to {most:,}"
        raise TapedeckError(f"--{option} must be a number from {least}{upto} (got {value})")


def check_types(values: Iterable[str] | None) -> None:
    """Refuse a ``--type`` value that names no event type (blank or only commas) or holds a ``!`` with no type
    after it: either would filter nothing, silently."""
    from core.read.type_select import TypeSelection  # here: only the commands that take --type check it

    for value in values or ():
        items = TypeSelection.parse(value).items
        if not items:
            raise TapedeckError(f"--type '{quoted(value)}' names no event type: give types, comma-separated (e.g. tool/,!tool/result)")
        if "!" in items:
            raise TapedeckError(f"--type '{quoted(value)}': a '!' leaves out the type written after it, and none is")
    for item in TypeSelection.parse(values or ()).items:
        _warn_unlogged_type(item.removeprefix("!"))


def _warn_unlogged_type(item: str) -> None:
    """Warn of a ``--type`` item (a type or a ``tool/``/``tool*`` family) that names nothing a DSH or tapedeck log
    holds, naming the nearest known one; it is kept, not refused, as a log may hold types tapedeck does not know."""
    from core.cli.common import warn
    from core.log.vocabulary import KNOWN_TYPES, PACKED_ROW_TYPES, TAPEDECK_TYPES, is_logged_type

    types = sorted({*KNOWN_TYPES, *PACKED_ROW_TYPES, *TAPEDECK_TYPES, "team/"})
    if item.endswith(("/", "*")):
        prefix, mark = item.removesuffix("*"), item[-1]
        if any(t.startswith(prefix) or prefix.startswith("team/") for t in types):
            return
        options = sorted({t.split("/")[0] + mark for t in types if "/" in t})
    elif is_logged_type(item):
        return
    else:
        options = types
    near = nearest(item, options)
    hint = f" (did you mean {near}?)" if near else ""
    warn(f"--type '{quoted(item)}' names no type a DSH or tapedeck log holds{hint}; it is kept, as a log may hold others")


def local_roots(roots: Iterable[str]) -> list[Path]:
    """The roots on this machine (``~`` expanded), the ``[user@]host:PATH`` ones left out."""
    return [Path(root).expanduser() for root in roots if parse_remote(root) is None]


def layout_notes(roots: Iterable[str], command: str) -> list[str]:
    """What each root given that holds no session in the sessions root layout holds instead, and the commands that
    read it (``core.log.sessions.layout_note``; over SSH ``core.remote.sessions.remote_layout_note``); a root that
    cannot be read has none, and is left to the listing's own notes."""
    from core.log.sessions import layout_note

    notes = []
    for root in roots:
        if (target := parse_remote(root)) is None:
            note = layout_note(Path(root).expanduser(), command)
        else:
            from core.remote.link import link_for
            from core.remote.sessions import remote_layout_note

            note = remote_layout_note(link_for(target), target, command)
        notes += [note] if note else []
    return notes


def check_local_roots(roots: Iterable[str]) -> None:
    """Refuse, naming it, the first root on this machine that is not there or cannot be looked at (a link loop, a
    denied directory: ``stat_or_none`` says why), or that is neither a directory nor a file (a FIFO, a device),
    before a command over sessions roots starts."""
    default = default_sessions_root()
    for root in local_roots(roots):
        st = stat_or_none(root)
        if st is None:
            example = f", e.g. {default}" if default.exists() else ""
            raise LogNotFoundError(
                f"{missing_path(root)} (give a sessions root, session directory or log{example})"
            )
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            raise LogFormatError(not_a_log(str(root), stat.S_IFMT(st.st_mode)))
