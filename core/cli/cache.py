"""``cache info`` and ``cache clear``: what tapedeck keeps of logs in its cache, the index files of logs
(``core.read.index``) and the alert engine's checkpoints (``core.alerts.checkpoint``)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from zstandard import ZstdError

from core.alerts import checkpoint
from core.cli import COMMANDS
from core.cli.args import path_argument
from core.cli.common import emit, guarded
from core.log.layout import RAW_NAME, ZSTD_NAME, resolve_log_path
from core.read.index import (
    CHECKPOINT_SUFFIX,
    SUFFIX,
    TEMPORARY,
    cache_dir,
    check,
    checkpoint_dir,
    checkpoint_paths,
    index_dir,
    index_path,
    read_body,
    read_meta,
)
from core.shared.envdirs import in_the_way
from core.shared.errors import TapedeckError
from core.shared.text import quoted_path


def cache_info(log: str | None = None) -> dict[str, Any]:
    """Every index file and alert checkpoint (or only ``log``'s, see ``_kept_for``): its kind, size, the log it
    describes, how much of it, and whether it still fits the log."""
    _check_dirs()
    files = []
    for kind, path in _kept() if log is None else _kept_for(log):
        row: dict[str, Any] = {"file": str(path), "kind": kind, "bytes": _size(path)}
        try:
            if kind == "index":
                meta, start = read_meta(path)
                read_body(path, meta, start)
                log, size, events, reason = meta.log, meta.size, meta.events, check(meta, Path(meta.log))
                if reason is None and index_path(Path(log)) != path:
                    reason = "it is not named for its log, so no read uses it"
            else:
                found, reason = checkpoint.describe(path)
                log, size, events = found["log"], found["size"], None
        except (OSError, ValueError, ZstdError) as exc:
            row.update({"log": None, "indexedBytes": None, "events": None, "state": "unreadable", "reason": str(exc)})
        else:
            row.update({"log": log, "indexedBytes": size, "events": events,
                        "state": "valid" if reason is None else "stale", "reason": reason})  # fmt: skip
        files.append(row)
    found = {"dir": str(cache_dir()), "files": files, "bytes": sum(f["bytes"] for f in files)}
    return found if log is None else {**found, "for": log}


def _check_dirs() -> None:
    """A TapedeckError when a file stands where the cache directory, or that of its index files or alert
    checkpoints, should be (or on the way there): nothing can be kept there, so there is nothing to list or remove,
    and saying so would hide why every read is a full one."""
    top = cache_dir()
    origin = " (TAPEDECK_CACHE_DIR)" if os.environ.get("TAPEDECK_CACHE_DIR") else ""
    for where, what in ((top, "nothing"), (index_dir(), "no index files"), (checkpoint_dir(), "no alert checkpoints")):
        if blocked := in_the_way(where):
            raise TapedeckError(f"{blocked[0]} {blocked[1]}, so tapedeck's cache directory {quoted_path(top)}{origin} can keep {what}")


def _kinds() -> list[tuple[str, Path, str]]:
    """Each kind of file kept in the cache: its name, directory and suffix."""
    return [("index", index_dir(), SUFFIX), ("alerts", checkpoint_dir(), CHECKPOINT_SUFFIX)]


def _kept(prefix: str = "") -> list[tuple[str, Path]]:
    """Every index file and alert checkpoint in the cache (those named ``prefix``…), with its kind."""
    found: list[tuple[str, Path]] = []
    for kind, where, suffix in _kinds():
        found += [(kind, path) for path in sorted(where.glob(prefix + "*" + suffix))] if where.is_dir() else []
    return found


def _kept_for(log: str) -> list[tuple[str, Path]]:
    """The index file and alert checkpoints kept of ``log`` (a log or its session directory), with their kind. A
    path where no log is (or none that can be read: a device, a FIFO) keeps its files until they are cleared; with
    none, it is a TapedeckError saying why it is no log, as every command that reads one says it."""
    given = Path(log).expanduser()
    try:
        targets, missing = [resolve_log_path(log)], None
    except TapedeckError as exc:  # a session directory names the log that was in it
        targets, missing = [given / RAW_NAME, given / ZSTD_NAME] if given.is_dir() else [given], exc
    found = [("index", path) for path in map(index_path, targets) if path.exists()]
    found += [("alerts", path) for target in targets for path in checkpoint_paths(target)]
    if not found and missing is not None:
        raise TapedeckError(f"{missing}; nothing cached for it")
    return found


def cache_clear(log: str | None) -> dict[str, Any]:
    """Remove every index file and alert checkpoint (and any left half-written), or only ``log``'s."""
    _check_dirs()
    doomed = [path for _, path in (_kept() + _kept(TEMPORARY) if log is None else _kept_for(log))]
    removed = []
    for path in doomed:
        size = _size(path)
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise TapedeckError(f"{quoted_path(path)}: cannot remove ({exc.strerror or exc})") from exc
        removed.append({"file": str(path), "bytes": size})
    return {"dir": str(cache_dir()), "removed": removed, "bytes": sum(r["bytes"] for r in removed)}


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def binary_size(n: int) -> str:
    """A size in bytes in binary units, as the README writes sizes: ``812 B``, ``4.1 KiB``, ``81 KiB``, ``3.0 MiB``,
    ``5.0 GiB`` (cut, never rounded up: one place below 10 of a unit, whole units from 10 on, never past GiB)."""
    if n < 1024:
        return f"{n} B"
    value, unit = n / 1024, "KiB"
    for bigger in ("MiB", "GiB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{int(value * 10) / 10:.1f} {unit}" if value < 10 else f"{int(value)} {unit}"


def _render_info(r: dict[str, Any]) -> str:
    files = r["files"]
    if not files:
        which = f" for {quoted_path(r['for'])}" if "for" in r else ""
        return f"no index files or alert checkpoints in {quoted_path(r['dir'])}{which}"
    lines = [f"{len(files)} file(s) in {quoted_path(r['dir'])}, {binary_size(r['bytes'])}"]
    for f in files:
        what = f["state"] + (f" ({f['reason']})" if f["reason"] else "")
        events = "" if f["events"] is None else f", {f['events']} events"
        indexed = "" if f["indexedBytes"] is None else f" {binary_size(f['indexedBytes'])}{events}"
        name = Path(f["file"]).name
        log = quoted_path(f["log"]) if f["log"] else "?"
        lines.append(f"  {f['kind']:<6} {name}  {binary_size(f['bytes'])}  {log}{indexed}  {what}")
    return "\n".join(lines)


def _render_clear(r: dict[str, Any]) -> str:
    n = len(r["removed"])
    return f"removed {n} file(s), {binary_size(r['bytes'])}, from {quoted_path(r['dir'])}" if n else "nothing to remove"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``cache info`` and ``cache clear``."""
    p = sub.add_parser(
        "cache",
        help=COMMANDS["cache"].help,
        description="tapedeck keeps an index of each log of 1 MiB or more it reads, in its cache directory "
        "($TAPEDECK_CACHE_DIR, which must be an absolute path, else $XDG_CACHE_HOME/tapedeck, else "
        "~/.cache/tapedeck), so that reading it again "
        "decodes only what was appended since, and the alert engine's state at the end of each such log that "
        "'sessions' or 'alerts' read whole, so that they do not read it again while it is unchanged. Neither is "
        "ever needed: removing them costs one full read.",
    )
    what = p.add_subparsers(dest="what", metavar="ACTION", required=True)
    info = what.add_parser(
        "info",
        help="list the index files and alert checkpoints, or only LOG's: size, the log of each, valid or stale",
        description="List what tapedeck keeps in its cache directory for logs it read: each index file and alert "
        "checkpoint with its size, the log it describes, how much of that log it covers, and whether it is still "
        "valid for the log as it is now (stale, and why, when not). With LOG, only that log's files.",
    )
    info.add_argument("log", nargs="?", metavar="LOG", type=path_argument, help="a session log or session directory")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(handler=guarded(lambda a: emit(cache_info(a.log), a.json, _render_info)))
    clear = what.add_parser(
        "clear",
        help="remove every index file and alert checkpoint, or only LOG's",
        description="Remove the index files and alert checkpoints from tapedeck's cache directory (with LOG, only "
        "that log's, even when the log itself is gone). Logs are never touched; the next read of each is a full "
        "one.",
    )
    clear.add_argument("log", nargs="?", metavar="LOG", type=path_argument, help="a session log or session directory")
    clear.add_argument("--json", action="store_true", help="print JSON")
    clear.set_defaults(handler=guarded(lambda a: emit(cache_clear(a.log), a.json, _render_clear)))
