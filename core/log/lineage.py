"""Subagent lineage: from a parent's spawn event to the child's log, and from a child back to its parent.

A DSH parent log records a spawn as a ``tool/call`` named ``subagent``; it does not name the child. The child's
header names its parent (``parentSession``). So the Nth spawn call of a parent is matched to its Nth child,
children ordered by ``createdAt``, all found under the sessions root that holds the parent.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from core.log.layout import SessionRef, discover_sessions

SPAWN_TOOL = "subagent"


def is_spawn(event: dict[str, Any] | None) -> bool:
    """Whether ``event`` is a subagent spawn: a ``tool/call`` of the ``subagent`` tool."""
    if not event or event.get("type") != "tool/call":
        return False
    data = event.get("data")
    return isinstance(data, dict) and data.get("name") == SPAWN_TOOL


def spawn_index(tool_calls: Iterable[tuple[int, dict[str, Any] | None]], seq: int) -> int | None:
    """The 0-based ordinal of spawn ``seq`` among the log's spawns, given its ``(seq, event)`` tool calls in
    seq order; None when ``seq`` is not a spawn."""
    index = 0
    for at, event in tool_calls:
        if not is_spawn(event):
            continue
        if at == seq:
            return index
        index += 1
    return None


def sessions_root_of(log: Path) -> Path:
    """The sessions root holding ``log`` in the DSH layout (``<root>/<project>/<session>/session.jsonl``)."""
    return Path(log).parent.parent.parent


def children_of(parent_id: str, root: Path) -> list[SessionRef]:
    """The sessions under ``root`` whose header names ``parent_id`` as parent, oldest first."""
    kids = [ref for ref in discover_sessions(root) if ref.parent == parent_id and ref.id != parent_id]
    return sorted(kids, key=lambda r: (r.created_at, str(r.path)))


def child_log(parent_log: Path, parent_id: str, spawn_index: int) -> Path | None:
    """The log of the child started by the parent's ``spawn_index``-th spawn call (0-based), None if not found."""
    kids = children_of(parent_id, sessions_root_of(parent_log))
    return kids[spawn_index].path if 0 <= spawn_index < len(kids) else None


def parent_log(child_log_path: Path, parent_id: str) -> Path | None:
    """The log of session ``parent_id`` under the sessions root holding the child, None if not found."""
    for ref in discover_sessions(sessions_root_of(child_log_path)):
        if ref.id == parent_id:
            return ref.path
    return None
