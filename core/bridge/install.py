"""Installing the bridge plugin into a DSH home, taking it out again, and saying what is installed where.

A DSH profile loads user patches from ``$DSH_HOME/profiles/<profile>/cordis.patch.yml`` (a top-level YAML list,
watched while DSH runs). ``install`` copies the packaged plugin beside that file and appends one ``insert`` row,
between two marker comments, so that ``remove`` can take out exactly what it added. The file is edited line by
line, not parsed and re-dumped: a YAML round trip would drop the user's comments, quoting and ``!!js`` tags, and
adding or removing one item at the end of a block list needs no more than knowing where the top-level items
start. Anything else in the file is left byte for byte; a file that is not a block list is refused.

The row names the copy with its fingerprint as a query (``./tapedeck-bridge.mjs?v=<fingerprint>``): DSH re-imports
a plugin only when its row's name changes (the same name gives the module it already loaded), so an upgraded copy
changes the row and a running DSH loads the new plugin within seconds instead of running the old one on.

Every path below the home is opened without following symbolic links (``core.shared.beneath``), files are
replaced atomically, and a file whose content would not change is not written (a rewrite would make a running
DSH reload the plugin).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shlex
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.bridge.files import PLUGIN_FILE, newer_release, packaged_plugin, plugin_fingerprint, plugin_version
from core.shared.beneath import OPEN_DIR, LinkRefused, open_dir, open_file
from core.shared.errors import TapedeckError
from core.shared.fdwrite import name_file_at, unnamed_file, write_all
from core.shared.text import quoted, quoted_path

PATCH_FILE = "cordis.patch.yml"
DSH_CONFIG_FILE = "cordis.yml"  # the config DSH writes into a profile the first time it runs with it
ROW_ID = "tapedeck-bridge"
DEFAULT_PROFILE = "web"
BEGIN = "# >>> tapedeck-bridge (added by `tapedeck bridge install`; `tapedeck bridge remove` takes it out)"
END = "# <<< tapedeck-bridge"
NEW_FILE = " [new file]"  # the BEGIN marker's note that install created the patch file
ADDED_NEWLINE = " [newline added]"  # … that install ended the user's last line
NEW_DIRS = " [new directories]"  # … that install created profiles/<profile> (or profiles too)
WAS_EMPTY = (
    " [was []]"  # … that the block took the place of an empty flow list ``[]`` (how DSH seeds the file)
)
_PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_FOREIGN_ROW = re.compile(r"(^|[\s{,\[-])id\s*:\s*['\"]?" + re.escape(ROW_ID) + r"['\"]?\s*($|[,}#])")
MAX_PATCH_BYTES = 4 << 20
STAGED = ".tapedeck-new-"  # the name a directory install makes (profiles/, a profile's) has until it is whole


class BridgeInstallError(TapedeckError):
    """The bridge cannot be installed or removed here (a missing home, a link in the way, a bad patch file)."""


def installed_name(source: bytes) -> str:
    """The row's ``name`` for the profile's copy of ``source`` (the fingerprint makes DSH import it anew)."""
    return f"./{PLUGIN_FILE}?v={plugin_fingerprint(source)}"


def row_lines(name: str, indent: str = "") -> list[str]:
    """The ``insert`` item that loads the plugin from ``name`` (YAML, ``indent`` before every line)."""
    return [
        f"{indent}- insert:",
        f"{indent}    - id: {ROW_ID}",
        f"{indent}      name: {json.dumps(name)}",
        f"{indent}      config: {{}}",
    ]


def print_patch() -> str:
    """A ``--patch`` overlay that loads the packaged plugin by its absolute path (for headless runs)."""
    lines = [
        "# The tapedeck bridge as a DSH --patch overlay: dsh --patch THIS_FILE … (written by tapedeck bridge install "
        "--print-patch)",
        *row_lines(str(packaged_plugin().resolve())),
    ]
    return "\n".join(lines) + "\n"


# the patch file ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PatchScan:
    """Where things are in a patch file: the managed block (first and last line index), the top-level indent."""

    lines: list[str]
    indent: str
    block: tuple[int, int] | None
    notes: str  # the BEGIN marker's notes (NEW_FILE, ADDED_NEWLINE) when there is a block
    foreign: int | None  # the 1-based line of a tapedeck-bridge row the markers do not enclose
    empty_list: int | None = None  # the index of a lone ``[]`` line: the file holds an empty list, flow style


def _content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def scan_patch(text: str, where: str) -> PatchScan:
    """Check that ``text`` is a YAML block list tapedeck can append to; BridgeInstallError says why not."""
    lines = text.split("\n")
    begins = [i for i, line in enumerate(lines) if line.strip().startswith(BEGIN)]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    block = None
    if begins or ends:
        if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
            raise BridgeInstallError(
                f"{where}: the tapedeck-bridge block is damaged (its marker comments do not pair up); fix or "
                "delete those lines, then run the command again"
            )
        block = (begins[0], ends[0])
    content = [
        (i, line)
        for i, line in enumerate(lines)
        if _content(line) and not (block and block[0] <= i <= block[1])
    ]
    markers = [i for i, line in content if line.rstrip() in ("---", "...")]
    if markers and (markers != [content[0][0]] or content[0][1].rstrip() != "---"):
        raise BridgeInstallError(
            f"{where}:{markers[-1] + 1}: a YAML document marker after the start; DSH reads one list, so fix the "
            "file first"
        )
    content = [(i, line) for i, line in content if i not in markers]
    for i, line in content:
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise BridgeInstallError(
                f"{where}:{i + 1}: a tab in the indentation is not YAML; fix the file first"
            )
    indent = ""
    empty_list = None
    if len(content) == 1 and content[0][1] == "[]":
        # DSH seeds a profile's patch file with comments and `[]`, which remove puts back as it was; another
        # spelling (spaces around it) could not be, so it is refused as the flow-style list it is
        empty_list, content = content[0][0], []
    if content:
        first = content[0][1]
        if first.lstrip().startswith(("[", "{")):
            raise BridgeInstallError(
                f"{where}:{content[0][0] + 1}: the list is written in flow style ([…]); tapedeck adds its row "
                "only to a block list (one `- ` item per row) or an empty file"
            )
        indent = first[: len(first) - len(first.lstrip())]
        for i, line in content:
            depth = len(line) - len(line.lstrip())
            if depth < len(indent) or (depth == len(indent) and not re.match(r"-(\s|$)", line.lstrip())):
                raise BridgeInstallError(
                    f"{where}:{i + 1}: not a YAML list of patches (a top-level line that is no `- ` item); "
                    "DSH reads this file as a list, so fix it first"
                )
    foreign = next((i + 1 for i, line in content if _FOREIGN_ROW.search(line.split(" #")[0])), None)
    notes = lines[block[0]].strip()[len(BEGIN) :] if block else ""
    return PatchScan(lines, indent, block, notes, foreign, empty_list)


# files beneath the home --------------------------------------------------------------------------------------


def _home(dsh_home: str | os.PathLike[str]) -> Path:
    home = Path(dsh_home).expanduser()
    if not home.exists():
        raise BridgeInstallError(
            f"the DSH home {quoted_path(home)} does not exist; pass the directory DSH_HOME names (DSH creates it on its first run)"
        )
    if not home.is_dir():
        raise BridgeInstallError(f"the DSH home {quoted_path(home)} is not a directory")
    return home.resolve()


def _check_profile(profile: str) -> None:
    if not _PROFILE_NAME.fullmatch(profile):
        raise BridgeInstallError(
            f"profile {profile!r}: a profile name is letters, digits, '.', '_' and '-' (such as web or headless)"
        )


@contextlib.contextmanager
def _profile_dir(
    home: Path, profile: str, create: bool, parts: list[str] | None = None
) -> Iterator[int | None]:
    """A descriptor of ``home/profiles/<profile>`` (or of ``home/<parts>``) opened without following links (None:
    it does not exist)."""
    try:
        fd = open_dir(home, ["profiles", profile] if parts is None else parts, create=create)
    except LinkRefused as exc:
        raise BridgeInstallError(
            f"{quoted_path(home)}/profiles/{profile}: a symbolic link is in the way ({quoted_path(exc.filename)}); "
            "tapedeck does not "
            "write through links"
        ) from None
    except FileNotFoundError:
        if create:
            raise
        yield None
        return
    except PermissionError:
        raise BridgeInstallError(
            f"cannot open {quoted_path(home)}/profiles/{profile}: permission denied"
        ) from None
    except OSError as exc:
        raise BridgeInstallError(
            f"cannot open {quoted_path(home)}/profiles/{profile}: {exc.strerror or exc}"
        ) from None
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def _new_profile_dir(home: Path, profile: str, missing: list[str]) -> Iterator[int]:
    """A descriptor of ``home/profiles/<profile>`` to install into. The directories ``missing`` (``profiles``, the
    profile's) are built under a name of their own (``STAGED``), locked while this install runs, and named only
    once the body is done, so an install killed or failing meanwhile leaves none that a later one would take for
    the user's; one a killed install left is removed by the next install or remove (``_sweep_staged``)."""
    if not missing:
        with _profile_dir(home, profile, create=True) as fd:
            assert fd is not None
            yield fd
        return
    top, parent = missing[0], [] if missing[0] == "profiles" else ["profiles"]
    where = quoted_path(home.joinpath(*parent, top))
    with _profile_dir(home, profile, create=False, parts=parent) as parent_fd:
        if parent_fd is None:
            raise BridgeInstallError(
                f"{quoted_path(home.joinpath(*parent))} went away while install ran; run it again"
            )
        staged = f"{STAGED}{top}.{os.getpid()}"
        try:
            os.mkdir(staged, dir_fd=parent_fd)
            lock = os.open(staged, OPEN_DIR, dir_fd=parent_fd)
        except OSError as exc:
            raise BridgeInstallError(f"cannot make {where}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(
                lock, fcntl.LOCK_EX
            )  # a directory whose lock can be taken is one a killed install left
            if top == "profiles":
                os.mkdir(profile, dir_fd=lock)
            fd = os.open(profile, OPEN_DIR, dir_fd=lock) if top == "profiles" else os.dup(lock)
            try:
                yield fd
            finally:
                os.close(fd)
            try:
                os.rename(staged, top, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
            except OSError as exc:  # something took the name meanwhile (DSH made the profile)
                raise BridgeInstallError(
                    f"{where} was made while install ran ({exc.strerror or exc}); run it again"
                ) from None
        except BaseException:
            _remove_staged(parent_fd, staged)
            raise
        finally:
            os.close(lock)


def _sweep_staged(home: Path) -> None:
    """Remove the directories killed installs left being built in ``home`` or its ``profiles`` (``STAGED``: none
    holds its lock)."""
    for parts in ([], ["profiles"]):
        with contextlib.suppress(OSError, BridgeInstallError), _profile_dir(home, "", False, parts) as fd:
            if fd is not None:
                _sweep_staged_in(fd)


def _sweep_staged_in(dir_fd: int) -> None:
    """``_sweep_staged`` in one directory."""
    for name in os.listdir(dir_fd):
        if not name.startswith(STAGED):
            continue
        try:
            fd = os.open(name, OPEN_DIR, dir_fd=dir_fd)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # an install still builds it
        finally:
            os.close(fd)
        _remove_staged(dir_fd, name)


def _remove_staged(dir_fd: int, name: str) -> None:
    """Remove ``name`` in ``dir_fd``, a directory install built, and what it holds (its files, a profile's directory
    and its files), never through a link."""
    with contextlib.suppress(OSError):
        fd = os.open(name, OPEN_DIR, dir_fd=dir_fd)
        try:
            for entry in os.listdir(fd):
                try:
                    os.unlink(entry, dir_fd=fd)
                except IsADirectoryError:
                    _remove_staged(fd, entry)
        finally:
            os.close(fd)
        os.rmdir(name, dir_fd=dir_fd)


def _read(dir_fd: int, name: str, where: str) -> bytes | None:
    """The bytes of a regular file in ``dir_fd`` (None when absent); a link or a non-file is an error."""
    try:
        fd = open_file(dir_fd, name, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except LinkRefused:
        raise BridgeInstallError(
            f"{where} is a symbolic link; tapedeck does not read or write through links"
        ) from None
    except OSError as exc:
        raise BridgeInstallError(f"cannot read {where}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BridgeInstallError(f"{where} is not a regular file")
        if st.st_size > MAX_PATCH_BYTES:
            raise BridgeInstallError(f"{where} is larger than {MAX_PATCH_BYTES} bytes")
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _mode(dir_fd: int, name: str, default: int) -> int:
    try:
        return stat.S_IMODE(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return default


def _write(dir_fd: int, name: str, data: bytes, where: str, mode: int) -> None:
    """Replace ``name`` in ``dir_fd`` with ``data`` atomically: written into a file with no name where the file
    system makes one (an install killed meanwhile leaves nothing in the profile), named ``.NAME.PID.tmp`` once
    whole (from the start where it makes none) and renamed over ``name``."""
    tmp = f".{name}.{os.getpid()}.tmp"
    try:
        unnamed = unnamed_file(dir_fd, os.O_WRONLY, mode)
        fd = (
            open_file(dir_fd, tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode) if unnamed is None else unnamed
        )
        try:
            os.fchmod(fd, mode)
            write_all(fd, data)
            os.fsync(fd)
            if unnamed is not None:  # whole: named for the moment until it takes ``name``'s place
                with contextlib.suppress(FileNotFoundError):  # one an install with this pid left before
                    os.unlink(tmp, dir_fd=dir_fd)
                name_file_at(unnamed, dir_fd, tmp)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        os.fsync(dir_fd)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        reason = "permission denied" if exc.errno in (errno.EACCES, errno.EPERM) else exc.strerror or str(exc)
        raise BridgeInstallError(f"cannot write {where}: {reason}") from None


def _decode(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BridgeInstallError(f"{where} is not UTF-8 text; fix the file first") from None


# the commands ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """What install or remove did (or found already done), one line per file."""

    profile_dir: Path
    plugin: str  # "copied", "updated", "unchanged", "removed", "absent"
    patch: str  # "added", "updated", "unchanged", "removed", "absent"
    # install made the profile's directory, in a home where DSH ran these other profiles (a mistyped --profile?)
    others_ran: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` form (``othersRan``: what the text's note names, empty when it gives none)."""
        return {"profileDir": str(self.profile_dir), "plugin": self.plugin, "patch": self.patch,
                "othersRan": list(self.others_ran)}  # fmt: skip


def install(dsh_home: str | os.PathLike[str], profile: str = DEFAULT_PROFILE, force: bool = False) -> Change:
    """Copy the packaged plugin into the profile and add its row to the profile's patch file (idempotent). A copy
    of a newer version there (a newer tapedeck installed it) is refused, the home left untouched, unless ``force``."""
    _check_profile(profile)
    home = _home(dsh_home)
    _sweep_staged(home)
    source = packaged_plugin().read_bytes()
    where_dir = home / "profiles" / profile
    patch_where = quoted_path(where_dir / PATCH_FILE)
    created = [d.name for d in (home / "profiles", where_dir) if not os.path.lexists(d)]
    missing = list(created)  # what install makes (``created`` also names a profiles/ it shares: the notes')
    if created == [profile] and _profiles_made_by_install(home):
        created.insert(0, "profiles")  # whichever profile is removed last takes it with it
    with _new_profile_dir(home, profile, missing) as fd:
        raw = _read(fd, PATCH_FILE, patch_where)
        text = _decode(raw, patch_where) if raw is not None else ""
        scan = scan_patch(text, patch_where)
        if scan.foreign is not None:
            raise BridgeInstallError(
                f"{patch_where}:{scan.foreign}: a {ROW_ID} row that tapedeck did not add is already there; "
                "delete it (tapedeck then adds and manages its own)"
            )
        installed = _read(fd, PLUGIN_FILE, quoted_path(where_dir / PLUGIN_FILE))
        if installed is not None and not force:
            version, packaged = plugin_version(installed) or "unknown", plugin_version(source) or "unknown"
            if newer_release(version, packaged):
                raise BridgeInstallError(
                    f"{where_dir / PLUGIN_FILE} is a newer copy of the plugin ({quoted(version)}) than this tapedeck's "
                    f"({packaged}), installed by a newer tapedeck: nothing was changed; use that tapedeck, or "
                    "--force to put this older plugin in its place"
                )
        plugin = "unchanged" if installed == source else "copied" if installed is None else "updated"
        if plugin != "unchanged":
            _write(fd, PLUGIN_FILE, source, quoted_path(where_dir / PLUGIN_FILE), 0o644)
        block = row_lines(installed_name(source), scan.indent)
        if scan.block is not None:
            first, last = scan.block
            if scan.lines[first + 1 : last] == block:
                return Change(where_dir, plugin, "unchanged")
            lines = [
                *scan.lines[: first + 1],
                *block,
                *scan.lines[last:],
            ]  # an older row: bring it up to date
            _write(fd, PATCH_FILE, "\n".join(lines).encode(), patch_where, _mode(fd, PATCH_FILE, 0o644))
            return Change(where_dir, plugin, "updated")
        notes = (NEW_FILE if raw is None else "") + (
            NEW_DIRS.replace("]", f": {' '.join(created)}]") if created else ""
        )
        if scan.empty_list is not None:  # the block takes the place of `[]`: the list is no longer empty
            at = scan.empty_list
            before, after = scan.lines[:at], scan.lines[at + 1 :]
            notes += WAS_EMPTY
        else:
            before, after = text.removesuffix("\n").split("\n") if text else [], [""]
        if not after or (scan.empty_list is None and text and not text.endswith("\n")):
            after = [""]  # the block ends the file, whose last line had no newline
            notes += ADDED_NEWLINE
        lines = [*before, BEGIN + notes, *block, END, *after]
        _write(fd, PATCH_FILE, "\n".join(lines).encode(), patch_where, _mode(fd, PATCH_FILE, 0o644))
    return Change(where_dir, plugin, "added", _profiles_ran(home) if profile in created else ())


def _profiles_ran(home: Path) -> tuple[str, ...]:
    """The profiles DSH has run with in ``home``: those it wrote its ``cordis.yml`` into."""
    with contextlib.suppress(OSError):
        return tuple(sorted(d.name for d in (home / "profiles").iterdir() if (d / DSH_CONFIG_FILE).is_file()))
    return ()


def remove(dsh_home: str | os.PathLike[str], profile: str = DEFAULT_PROFILE) -> Change:
    """Take out what ``install`` added: its row (and the patch file if install created it) and the plugin copy."""
    _check_profile(profile)
    home = _home(dsh_home)
    _sweep_staged(home)
    where_dir = home / "profiles" / profile
    patch_where = quoted_path(where_dir / PATCH_FILE)
    with _profile_dir(home, profile, create=False) as fd:
        if fd is None:
            return Change(where_dir, "absent", "absent")
        raw = _read(fd, PATCH_FILE, patch_where)
        scan = scan_patch(_decode(raw, patch_where), patch_where) if raw is not None else None
        patch = "absent"
        gone = False
        if scan is not None and scan.block is not None:
            first, last = scan.block
            rest = scan.lines[:first] + scan.lines[last + 1 :]
            if WAS_EMPTY in scan.notes and not any(
                _content(line) and line.rstrip() != "---" for line in rest
            ):
                rest = [*scan.lines[:first], "[]", *scan.lines[last + 1 :]]  # the list is empty again
            text = "\n".join(rest)
            if ADDED_NEWLINE in scan.notes and text.endswith("\n"):
                text = text[:-1]
            if NEW_FILE in scan.notes and not text.strip():
                _unlink(fd, PATCH_FILE, patch_where)
            else:
                _write(fd, PATCH_FILE, text.encode(), patch_where, _mode(fd, PATCH_FILE, 0o644))
            patch = "removed"
            gone = NEW_FILE in scan.notes and not text.strip()
        plugin_where = quoted_path(where_dir / PLUGIN_FILE)
        plugin = "absent"
        if _read(fd, PLUGIN_FILE, plugin_where) is not None:
            _unlink(fd, PLUGIN_FILE, plugin_where)
            plugin = "removed"
    if gone and scan is not None and NEW_DIRS.rstrip("]") in scan.notes:
        _remove_created_dirs(home, profile, scan.notes)
    return Change(where_dir, plugin, patch)


def _created_dirs(notes: str) -> list[str]:
    """The directories a BEGIN marker's ``notes`` say install created (``profiles``, the profile's)."""
    head = NEW_DIRS.rstrip("]") + ":"
    return notes.split(head, 1)[1].split("]", 1)[0].split() if head in notes else []


def _profiles_made_by_install(home: Path) -> bool:
    """Whether another profile's managed block says its install created ``profiles/``, which this install then
    shares: each names it, so removing the profiles in any order leaves no empty ``profiles/`` behind."""
    profiles = home / "profiles"
    for entry in profiles.iterdir() if profiles.is_dir() and not profiles.is_symlink() else ():
        if not _PROFILE_NAME.fullmatch(entry.name):
            continue
        with (
            contextlib.suppress(BridgeInstallError, OSError),
            _profile_dir(home, entry.name, create=False) as fd,
        ):
            where = quoted_path(entry / PATCH_FILE)
            raw = _read(fd, PATCH_FILE, where) if fd is not None else None
            if raw is not None and "profiles" in _created_dirs(scan_patch(_decode(raw, where), where).notes):
                return True
    return False


def _remove_created_dirs(home: Path, profile: str, notes: str) -> None:
    """Remove the directories install created, when they are empty again (anything DSH put there stays)."""
    made = _created_dirs(notes)
    for name, path in ((profile, home / "profiles" / profile), ("profiles", home / "profiles")):
        if name in made:
            with contextlib.suppress(OSError):
                os.rmdir(path)


def _unlink(dir_fd: int, name: str, where: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise BridgeInstallError(f"cannot remove {where}: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class ProfileStatus:
    """What one profile of a DSH home holds of the bridge."""

    profile: str
    plugin: str | None  # the installed copy's version ("unknown" when it names none), None when absent
    current: bool | None  # whether the installed copy is the packaged one byte for byte
    row: str  # "managed", "foreign" (a tapedeck-bridge row tapedeck did not add), "none"
    problem: str | None = None
    fingerprint: str | None = None  # the installed copy's
    stale: str | None = None  # why a DSH with this profile runs another plugin than the packaged one
    newer: bool | None = None  # whether the installed copy is a newer release than the packaged one

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` form."""
        return {"profile": self.profile, "plugin": self.plugin, "fingerprint": self.fingerprint,
                "current": self.current, "newer": self.newer, "row": self.row, "stale": self.stale,
                "problem": self.problem}  # fmt: skip


def status(dsh_home: str | os.PathLike[str]) -> list[ProfileStatus]:
    """Every profile of the home that holds the plugin or a bridge row (or a patch file that cannot be read)."""
    home = _home(dsh_home)
    packaged = packaged_plugin().read_bytes()
    profiles = home / "profiles"
    names = (
        sorted(p.name for p in profiles.iterdir() if p.is_dir() and not p.is_symlink())
        if profiles.is_dir()
        else []
    )
    found = []
    for name in names:
        if not _PROFILE_NAME.fullmatch(name):
            continue
        try:
            found.append(_profile_status(home, name, packaged))
        except BridgeInstallError as exc:
            found.append(ProfileStatus(name, None, None, "none", str(exc)))
    found.append(_home_layer_status(home))
    return [s for s in found if s.plugin is not None or s.row != "none" or s.problem]


HOME_LAYER = "(home layer)"  # $DSH_HOME/cordis.patch.yml, which every profile loads


def _home_layer_status(home: Path) -> ProfileStatus:
    """Whether the home's own patch file (every profile reads it) has a tapedeck-bridge row."""
    where = quoted_path(home / PATCH_FILE)
    try:
        fd = open_dir(home, [])
        try:
            raw = _read(fd, PATCH_FILE, where)
        finally:
            os.close(fd)
        if raw is None:
            return ProfileStatus(HOME_LAYER, None, None, "none")
        scan = scan_patch(_decode(raw, where), where)
    except (BridgeInstallError, OSError) as exc:
        return ProfileStatus(HOME_LAYER, None, None, "none", str(exc))
    row = "managed" if scan.block is not None else "foreign" if scan.foreign is not None else "none"
    return ProfileStatus(HOME_LAYER, None, None, row)


def _profile_status(home: Path, profile: str, packaged: bytes) -> ProfileStatus:
    where_dir = home / "profiles" / profile
    with _profile_dir(home, profile, create=False) as fd:
        if fd is None:
            return ProfileStatus(profile, None, None, "none")
        installed = _read(fd, PLUGIN_FILE, quoted_path(where_dir / PLUGIN_FILE))
        raw = _read(fd, PATCH_FILE, quoted_path(where_dir / PATCH_FILE))
    row, loads_copy = "none", False
    if raw is not None:
        where = quoted_path(where_dir / PATCH_FILE)
        scan = scan_patch(_decode(raw, where), where)
        row = "managed" if scan.block is not None else "foreign" if scan.foreign is not None else "none"
        if scan.block is not None and installed is not None:
            first, last = scan.block
            loads_copy = scan.lines[first + 1 : last] == row_lines(installed_name(installed), scan.indent)
    named = shlex.quote(quoted_path(home))  # a command to paste: a home with a space is one word
    mend = f"`tapedeck bridge install {named} --profile {profile}`"
    if installed is None:
        problem = (
            f"the row loads ./{PLUGIN_FILE}, which is not there, so DSH does not start with this profile: {mend} "
            f"puts it back (`tapedeck bridge remove {named} --profile {profile}` takes the row out)"
        )
        return ProfileStatus(profile, None, None, row, problem if row == "managed" else None)
    upgrade = f"{mend} upgrades it in place"
    version, packaged_release = plugin_version(installed) or "unknown", plugin_version(packaged) or "unknown"
    stale = None
    if installed != packaged:
        stale = _other_copy(version, packaged_release, mend)
    elif row == "managed" and not loads_copy:
        stale = f"the row does not name this copy, so a DSH running since before it was copied keeps the older plugin: {upgrade}"
    return ProfileStatus(profile, version, installed == packaged, row, None, plugin_fingerprint(installed), stale,
                         newer_release(version, packaged_release))  # fmt: skip


def _other_copy(version: str, packaged: str, mend: str) -> str:
    """Why a profile's copy of the plugin, of ``version``, other than the packaged one (of ``packaged``), is stale:
    a newer version (a newer tapedeck installed it: install refuses to go back to the packaged one unless forced),
    else an older copy (an earlier build of the same version too)."""
    runs = "which a DSH with this profile runs"
    if newer_release(version, packaged):
        return (
            f"a newer copy ({quoted(version)}) than the packaged plugin ({packaged}), {runs}: {mend} refuses to put the "
            "older packaged one back unless --force"
        )
    return f"an older copy than the packaged plugin, {runs}: {mend} upgrades it in place"
