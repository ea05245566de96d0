"""Subagent lineage: from a parent's spawn event to the child's log, and from a child back to its parent.

A DSH parent log records a spawn as a ``tool/call`` named ``subagent``; it does not name the child. The child's
header names its parent (``parentSession``), and its ``subagent/descriptor`` event carries a ``label``: the
``description`` argument of the spawn call that started it. A spawn is matched to the child whose label is its
description (the k-th spawn of a description to the k-th child of that label, children ordered by
``createdAt``); spawns and children left over are paired in order. All children are found under the sessions
root that holds the parent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from core.log.decoder import Consumer, LogDecoder
from core.log.layout import is_compressed, resolve_log_path
from core.log.sessions import SessionRef, discover_sessions
from core.shared.errors import LogFormatError
from core.shared.regular import open_regular

SPAWN_TOOL = "subagent"
DESCRIPTOR = "subagent/descriptor"
LABEL_ARG = "description"  # the spawn argument DSH copies into the child's descriptor label
LABEL_SCAN_BYTES = 1 << 20  # the descriptor is written before the child's first step: read no further
_READ = 1 << 16


def is_spawn(event: dict[str, Any] | None) -> bool:
    """Whether ``event`` is a subagent spawn: a ``tool/call`` of the ``subagent`` tool."""
    if not event or event.get("type") != "tool/call":
        return False
    data = event.get("data")
    return isinstance(data, dict) and data.get("name") == SPAWN_TOOL


def spawn_label(event: dict[str, Any]) -> str | None:
    """The ``description`` argument of a spawn call (arguments as an object or a JSON string), or None."""
    data = event.get("data")
    args = data.get("arguments") if isinstance(data, dict) else None
    if isinstance(args, str):
        try:
            args = orjson.loads(args)
        except orjson.JSONDecodeError:
            return None
    label = args.get(LABEL_ARG) if isinstance(args, dict) else None
    return label if isinstance(label, str) and label else None


def spawns(tool_calls: Iterable[tuple[int, dict[str, Any] | None]]) -> list[tuple[int, str | None]]:
    """``(seq, description)`` of every spawn among a log's ``(seq, event)`` tool calls, in seq order."""
    return [(at, spawn_label(event)) for at, event in tool_calls if event is not None and is_spawn(event)]


def match_spawns(spawn_labels: Sequence[str | None], child_labels: Sequence[str | None]) -> list[int | None]:
    """For each spawn (by its description), the index of its child (children oldest first), or None.

    The k-th spawn of a description gets the k-th child carrying that label; spawns without a labelled match
    then take the children left over, both in order. Each child is given to at most one spawn.
    """
    out: list[int | None] = [None] * len(spawn_labels)
    free = list(range(len(child_labels)))
    for i, label in enumerate(spawn_labels):
        hit = next((c for c in free if label is not None and child_labels[c] == label), None)
        if hit is not None:
            out[i] = hit
            free.remove(hit)
    for i in range(len(spawn_labels)):
        if out[i] is None and free:
            out[i] = free.pop(0)
    return out


def descriptor_label(log: Path) -> str | None:
    """The ``label`` of a child log's ``subagent/descriptor`` event (read from the log's head), or None."""
    try:
        path = resolve_log_path(log)
    except LogFormatError:
        return None
    decoder = LogDecoder(str(path), is_compressed(path), consumer=Consumer(packed_rows=True))
    read = 0
    try:
        with open_regular(path) as f:
            while read < LABEL_SCAN_BYTES and (chunk := f.read(_READ)):
                read += len(chunk)
                for event in decoder.feed(chunk).events:
                    if isinstance(event, dict) and event.get("type") == DESCRIPTOR:
                        label = (event.get("data") or {}).get("label")
                        return label if isinstance(label, str) and label else None
                if decoder.fatal:
                    return None
    except OSError:
        return None
    return None


def sessions_root_of(log: Path) -> Path:
    """The sessions root holding ``log`` in the DSH layout (``<root>/<project>/<session>/session.jsonl``)."""
    return Path(log).parent.parent.parent


def children_of(parent_id: str, root: Path, skipped: list[str] | None = None) -> list[SessionRef]:
    """The sessions under ``root`` whose header names ``parent_id`` as parent, oldest first (what could not be read
    there is noted in ``skipped`` when given: ``discover_sessions``)."""
    kids = [ref for ref in discover_sessions(root, skipped) if ref.parent == parent_id and ref.id != parent_id]
    return sorted(kids, key=lambda r: (r.created_at, str(r.path)))


def child_log(parent_log: Path, parent_id: str, spawn_list: Sequence[tuple[int, str | None]], seq: int,
              skipped: list[str] | None = None) -> Path | None:  # fmt: skip
    """The log of the child started by spawn ``seq`` (one of ``spawn_list``, from ``spawns``), None if not found
    (what the sessions root holds that could not be read is noted in ``skipped`` when given)."""
    at = next((i for i, (s, _) in enumerate(spawn_list) if s == seq), None)
    if at is None:
        return None
    kids = children_of(parent_id, sessions_root_of(parent_log), skipped)
    matched = match_spawns([label for _, label in spawn_list], [descriptor_label(k.path) for k in kids])[at]
    return None if matched is None else kids[matched].path


def parent_log(child_log_path: Path, parent_id: str, skipped: list[str] | None = None) -> Path | None:
    """The log of session ``parent_id`` under the sessions root holding the child, None if not found (what that
    root holds that could not be read is noted in ``skipped`` when given)."""
    for ref in discover_sessions(sessions_root_of(child_log_path), skipped):
        if ref.id == parent_id:
            return ref.path
    return None
