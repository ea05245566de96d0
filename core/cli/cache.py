"""``cache info`` and ``cache clear``: the persistent index files of logs (``core.read.index``)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from core.cli import COMMANDS
from core.cli.common import emit, guarded
from core.log.layout import resolve_log_path
from core.read.index import SUFFIX, check, index_dir, index_path, read_meta
from core.read.summary import human_chars
from core.shared.errors import TapedeckError


def cache_info() -> dict[str, Any]:
    """Every index file: its size, the log it indexes, how much of it, and whether it still fits the log."""
    where = index_dir()
    files = []
    for path in sorted(where.glob("*" + SUFFIX)) if where.is_dir() else ():
        row: dict[str, Any] = {"file": str(path), "bytes": _size(path)}
        try:
            meta, _ = read_meta(path)
        except (OSError, ValueError) as exc:
            row.update({"log": None, "indexedBytes": None, "events": None, "state": "unreadable", "reason": str(exc)})
        else:
            reason = check(meta, Path(meta.log))
            row.update({"log": meta.log, "indexedBytes": meta.size, "events": meta.events,
                        "state": "valid" if reason is None else "stale", "reason": reason})  # fmt: skip
        files.append(row)
    return {"dir": str(where), "files": files, "bytes": sum(f["bytes"] for f in files)}


def cache_clear(log: str | None) -> dict[str, Any]:
    """Remove every index file (and any left half-written), or only ``log``'s."""
    where = index_dir()
    if log is not None:
        try:
            target = resolve_log_path(log)
        except TapedeckError:
            target = Path(log).expanduser()
        doomed = [index_path(target)]
    else:
        doomed = sorted(where.glob("*" + SUFFIX)) + sorted(where.glob(".tmp-*" + SUFFIX)) if where.is_dir() else []
    removed = []
    for path in doomed:
        size = _size(path)
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise TapedeckError(f"{path}: cannot remove ({exc.strerror or exc})") from exc
        removed.append({"file": str(path), "bytes": size})
    return {"dir": str(where), "removed": removed, "bytes": sum(r["bytes"] for r in removed)}


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _render_info(r: dict[str, Any]) -> str:
    files = r["files"]
    if not files:
        return f"no index files in {r['dir']}"
    lines = [f"{len(files)} index file(s) in {r['dir']}, {human_chars(r['bytes'])}B"]
    for f in files:
        what = f["state"] + (f" ({f['reason']})" if f["reason"] else "")
        indexed = "" if f["indexedBytes"] is None else f" {human_chars(f['indexedBytes'])}B, {f['events']} events"
        lines.append(f"  {Path(f['file']).name}  {human_chars(f['bytes'])}B  {f['log'] or '?'}{indexed}  {what}")
    return "\n".join(lines)


def _render_clear(r: dict[str, Any]) -> str:
    n = len(r["removed"])
    return f"removed {n} index file(s), {human_chars(r['bytes'])}B, from {r['dir']}" if n else "no index file to remove"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``cache info`` and ``cache clear``."""
    p = sub.add_parser(
        "cache",
        help=COMMANDS["cache"].help,
        description="tapedeck keeps an index of each log of 1 MiB or more it reads, in its cache directory "
        "($TAPEDECK_CACHE_DIR, else $XDG_CACHE_HOME/tapedeck, else ~/.cache/tapedeck), so that reading it again "
        "decodes only what was appended since. Index files are never needed: removing them costs one full read.",
    )
    what = p.add_subparsers(dest="what", metavar="ACTION", required=True)
    info = what.add_parser("info", help="list the index files: size, the log each indexes, valid or stale")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(handler=guarded(lambda a: emit(cache_info(), a.json, _render_info)))
    clear = what.add_parser("clear", help="remove every index file, or only LOG's")
    clear.add_argument("log", nargs="?", metavar="LOG", help="a session log or session directory")
    clear.add_argument("--json", action="store_true", help="print JSON")
    clear.set_defaults(handler=guarded(lambda a: emit(cache_clear(a.log), a.json, _render_clear)))
