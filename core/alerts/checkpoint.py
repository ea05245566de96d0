"""The alert engine's state at the end of a log, kept in tapedeck's cache so that reading the log again is not needed.

``tapedeck sessions``, ``tapedeck alerts`` and the fleet table replay every log they are given through the alert
engine: seconds for a log of a hundred MB, every time, though most logs under a sessions root have long stopped
growing. After the first read of a local log (``AlertWatch.poll``, from the log's start to its end) that ends at a
line's end, the watch's state as the read left it, before the clock rules run, is written here: the engine's
signals and alerts, the fleet row's own fold, the alerts the read raised and the problems it met. The next first
read of the same, unchanged log restores it instead of reading the log, then ticks the clock rules at its own
time, so both give the same answer; a watch that follows the log reads it from its start once it changes. The
TUI's engine (``FedWatch``) keeps one after its view's first pass and takes it when the view reopens the log.

A checkpoint is used only for the very file it describes: same real path and watch path, device, inode, size,
modification time and hashes of its first and last ``core.read.index.HASH_BYTES`` (a log that grew, was rewritten
or replaced is read in full again, and its checkpoint written anew); the same alert and model settings; the same
code (a fingerprint of the packages whose code decides what a replay yields). A digest catches damage; every
value is type-checked against the fields it restores, every alert must be one this log's engine could raise. Any
problem means a full read, silently; a log under ``core.read.index_size.min_log_bytes`` gets none. Files:
``<cache>/alerts/<hash of the real path>.<kind>.ack``, one per kind of watch (``fleet``, which keeps the row's
columns too, and ``alerts``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import types
import typing
from collections import deque
from pathlib import Path
from typing import Any

import orjson

from core.alerts.engine import Alert
from core.alerts.rules import SEVERITY, CacheBreak, Signals
from core.read.index import CHECKPOINT_SUFFIX as SUFFIX
from core.read.index import TEMPORARY, checkpoint_path, ends, log_unreadable, source_fingerprint
from core.read.index_size import min_log_bytes
from core.shared.fdwrite import replace_file
from core.shared.regular import read_regular

FORMAT = 1
MAGIC = b"tapedeck-alerts\n"
MAX_BYTES = 64 << 20  # a checkpoint bigger than this is not read
# the packages whose code decides what a replay yields, and the TUI's, whose view says when its engine keeps one
_CORE = ("alerts", "control", "fleet", "host", "log", "policies", "read", "rebuild", "shared")
_CODE_DIRS = (*(f"core/{name}" for name in _CORE), "tui")
_CLASSES: dict[str, type] = {cls.__name__: cls for cls in (Signals, CacheBreak, Alert)}


@dataclasses.dataclass
class WatchState:
    """What a one-shot read of a whole log leaves in its watch before the clock rules run."""

    offset: int  # bytes of the log read
    session: str  # the engine's session id
    signals: Signals
    active: dict[str, Alert]
    fired: list[Alert]
    undated: list[int]  # which of ``fired`` an event raised before any event had a time (dated by the read's clock)
    transitions: list[tuple[str, bool]]
    host_guards: frozenset[str]
    raised: list[Alert]  # what the read raised (the poll's answer before the tick's)
    problems: list[str]
    fold: dict[str, Any]  # a subclass's own columns (``AlertWatch.fold_state``), checked by ``FOLD_TYPES``


def holds(log: Path, stamp: tuple[int, int, int, int], kept: tuple[str, str]) -> bool:
    """Whether ``log`` still begins with the bytes a checkpoint stood for: the same device and inode, at least
    ``stamp``'s size, the same hashes ``kept`` of its first and last ``core.read.index.HASH_BYTES`` of them."""
    try:
        st = os.stat(log)
        return (st.st_dev, st.st_ino) == stamp[2:] and st.st_size >= stamp[0] and ends(log, stamp[0]) == kept
    except OSError:
        return False


@functools.cache
def code_fingerprint() -> str:
    """A fingerprint of the code that decides what a replay yields: a checkpoint written by other code is unused."""
    return source_fingerprint(Path(__file__).resolve().parents[2], _CODE_DIRS) + f".{FORMAT}"


def _settings(config: Any) -> str:
    """A hash of the alert and model settings of a ``PolicyConfig`` (AttributeError: it has no such sections)."""
    body = orjson.dumps({"alerts": config.alerts.to_dict(), "model": config.model.to_dict()},
                        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)  # fmt: skip
    return hashlib.blake2b(body, digest_size=16).hexdigest()


def _identity(log: Path, watched: str, size: int, settings: str) -> dict[str, Any]:
    st = os.stat(log)
    head, tail = ends(log, size)
    return {"log": os.path.realpath(log), "watched": watched, "size": size, "dev": st.st_dev, "ino": st.st_ino,
            "mtime": st.st_mtime_ns, "head": head, "tail": tail, "code": code_fingerprint(),
            "settings": settings}  # fmt: skip


def write(
    log: Path,
    kind: str,
    config: Any,
    state: WatchState,
    fold_types: dict[str, Any],
    seen: tuple[tuple[int, int, int, int], tuple[str, str]] | None = None,
) -> bool:
    """Write ``state`` as the checkpoint of ``log`` read whole by a watch of ``kind`` under the ``PolicyConfig``
    ``config``; False (and no file) when the log is too small, changed under the read (or since ``seen``: the
    log's stamp and ends when its read ended), or the state cannot be written."""
    try:
        settings = _settings(config)
        if state.offset < max(min_log_bytes(), 1) or os.stat(log).st_size != state.offset:
            return False
        _check_fold(state.fold, fold_types)  # what cannot be read back is not written
        meta = _identity(log, str(log), state.offset, settings)
        if seen is not None and ((meta["size"], meta["mtime"], meta["dev"], meta["ino"]), (meta["head"], meta["tail"])) != seen:
            return False
        fields = {f.name: getattr(state, f.name) for f in dataclasses.fields(WatchState)}
        body = orjson.dumps([meta, _encode(fields)])
        path = checkpoint_path(log, kind)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        replace_file(
            path, [MAGIC, hashlib.blake2b(body, digest_size=32).digest(), body], prefix=TEMPORARY, suffix=SUFFIX
        )
        return True
    except (OSError, ValueError, TypeError, AttributeError, OverflowError, RuntimeError, orjson.JSONEncodeError):
        return False


def _load(path: Path) -> tuple[dict[str, Any], Any]:
    """A checkpoint file's identity and its tagged state (ValueError/OSError when it is not one, or damaged)."""
    data = read_regular(path, MAX_BYTES, follow=False)  # a device says it holds 0 bytes, and never ends
    if len(data) > MAX_BYTES:
        raise ValueError("too big for a checkpoint")
    if not data.startswith(MAGIC):
        raise ValueError("not a tapedeck alert checkpoint")
    digest, body = data[len(MAGIC) : len(MAGIC) + 32], data[len(MAGIC) + 32 :]
    if hashlib.blake2b(body, digest_size=32).digest() != digest:
        raise ValueError("damaged (its digest does not match)")
    found = orjson.loads(body)
    if type(found) is not list or len(found) != 2:
        raise ValueError("it holds no identity and state")
    meta, raw = found
    if type(meta) is not dict or type(meta.get("size")) is not int or meta["size"] < 0 or type(meta.get("log")) is not str:
        raise ValueError("its identity is not an object with a log and a size")
    return meta, raw


def describe(path: Path) -> tuple[dict[str, Any], str | None]:
    """A checkpoint file's identity, and why it no longer fits its log (None: it does, for the settings it was
    written under); ValueError/OSError when it is not a checkpoint."""
    meta, _ = _load(path)
    log = Path(meta["log"])
    try:
        st = os.stat(log)
        if meta.get("code") != code_fingerprint():
            return meta, "written by another version of tapedeck"
        if (st.st_dev, st.st_ino) != (meta.get("dev"), meta.get("ino")):
            return meta, "the log was replaced by another file"
        if st.st_size < meta["size"]:
            return meta, "the log was truncated"
        now = _identity(log, meta.get("watched", ""), meta["size"], meta.get("settings", ""))
    except OSError as exc:
        return meta, log_unreadable(exc)
    if (st.st_size, now["mtime"], now["head"], now["tail"]) != (
        meta["size"], meta.get("mtime"), meta.get("head"), meta.get("tail")
    ):  # fmt: skip
        return meta, "the log changed"
    return meta, None


def read(log: Path, kind: str, config: Any, fold_types: dict[str, Any]) -> tuple[WatchState, tuple[str, str]] | None:
    """The checkpoint a watch of ``kind`` kept of ``log`` when it describes the file as it is now, under the
    ``PolicyConfig`` ``config``, with the hashes of the log's ends it holds; None otherwise (see the module
    docstring)."""
    try:
        settings = _settings(config)
        meta, raw = _load(checkpoint_path(log, kind))
        if meta != _identity(log, str(log), meta["size"], settings) or os.stat(log).st_size != meta["size"]:
            return None
        fields = _decode(raw)
        if type(fields) is not dict or set(fields) != {f.name for f in dataclasses.fields(WatchState)}:
            return None
        state = WatchState(**fields)
        if not _typed(state, WatchState) or state.offset != meta["size"]:
            return None
        if not all(0 <= k < len(state.fired) for k in state.undated) or not _own(state, str(log)):
            return None
        _check_fold(state.fold, fold_types)
        return state, (meta["head"], meta["tail"])
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, RecursionError,
            RuntimeError, MemoryError):  # fmt: skip  (RuntimeError: no home directory for the cache)
        return None


def _own(state: WatchState, path: str) -> bool:
    """Whether every alert ``state`` holds is one the engine of the watch of ``path`` could have raised: a known
    cause at its severity, this log's path, the session's id (the rest of the app reads them as such)."""
    alerts = [*state.raised, *state.fired, *state.active.values()]
    return all(cause == alert.cause for cause, alert in state.active.items()) and all(
        alert.cause in SEVERITY and alert.severity == SEVERITY[alert.cause] and alert.path == path
        and alert.session == state.session for alert in alerts
    )  # fmt: skip


def _check_fold(fold: dict[str, Any], fold_types: dict[str, Any]) -> None:
    """ValueError unless ``fold`` holds exactly the keys of ``fold_types``, each of its type."""
    if set(fold) != set(fold_types) or not all(_is(fold[key], hint) for key, hint in fold_types.items()):
        raise ValueError("the watch's own columns are not what it keeps")


# A tagged JSON form that keeps containers' kinds: every JSON array is ``[tag, ...]``; scalars stay as they are.
def _encode(value: Any) -> Any:
    kind = type(value)
    if value is None or kind in (str, bool, int):
        return value
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("a number JSON cannot hold")
        return value
    if kind is list:
        return ["l", *map(_encode, value)]
    if kind is tuple:
        return ["t", *map(_encode, value)]
    if kind is deque:
        return ["q", *map(_encode, value)]
    if kind is frozenset or kind is set:
        return ["f" if kind is frozenset else "s", *map(_encode, sorted(value, key=repr))]
    if kind is dict:
        return ["d", *(_encode(item) for pair in value.items() for item in pair)]
    if kind in _CLASSES.values():
        names = [f.name for f in dataclasses.fields(value)]
        if hasattr(value, "__dict__") and set(vars(value)) != set(names):
            raise ValueError(f"{kind.__name__} holds more than its fields")
        return ["o", kind.__name__, *(_encode(getattr(value, name)) for name in names)]
    raise ValueError(f"cannot keep a {kind.__name__}")


def _decode(value: Any) -> Any:
    if type(value) is not list:
        return value
    tag, items = value[0], value[1:]
    if tag == "o":
        cls = _CLASSES[items[0]]
        names = [f.name for f in dataclasses.fields(cls)]
        if len(items) != len(names) + 1:
            raise ValueError(f"a {items[0]} with {len(items) - 1} fields")
        obj = cls(**dict(zip(names, map(_decode, items[1:]), strict=True)))
        if not _typed(obj, cls):
            raise ValueError(f"a {items[0]} of the wrong types")
        return obj
    decoded = list(map(_decode, items))
    if tag == "d":
        if len(decoded) % 2:
            raise ValueError("a map with a key and no value")
        return dict(zip(decoded[::2], decoded[1::2], strict=True))
    kinds = {"l": list, "t": tuple, "q": deque, "f": frozenset, "s": set}
    return kinds[tag](decoded)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _typed(obj: Any, cls: type) -> bool:
    """Whether every field of the dataclass instance ``obj`` holds a value of its declared type."""
    return all(_is(getattr(obj, name), hint) for name, hint in _hints(cls).items())


def _is(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of the type ``hint`` (the types a checkpoint holds; anything else: False)."""
    if hint is Any:
        return True
    if hint is None or hint is type(None):
        return value is None
    if hint is float:
        return type(value) is float or type(value) is int
    if hint in (int, str, bool):
        return type(value) is hint
    if dataclasses.is_dataclass(hint):
        return type(value) is hint  # its own fields were checked when it was decoded
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_is(value, arg) for arg in args)
    if origin is tuple:
        if type(value) is not tuple:
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_is(item, args[0]) for item in value)
        return len(value) == len(args) and all(_is(item, arg) for item, arg in zip(value, args, strict=True))
    if origin in (list, deque, frozenset, set):
        return type(value) is origin and all(_is(item, args[0]) for item in value)
    if origin is dict:
        return type(value) is dict and all(_is(k, args[0]) and _is(v, args[1]) for k, v in value.items())
    return False
