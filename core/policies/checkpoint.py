"""Checkpoint marks: where an exploration starts, so that ``rewind`` can later fold it into a report.

A mark is a log-only ``tapedeck/checkpoint`` event (``"ignorable": true``) with data
``{markId, anchor, objective?, by, turn}``. ``markId`` counts up from 1 per session; ``anchor`` is the log length
when the mark was placed, which is also the seq the mark event itself receives. A mark is *active* until a
``tapedeck/rewind`` event completes it. A rewind to mark K folds everything after K's anchor, so its event
completes K and every later mark placed before it (their explorations are inside the folded region); marks
placed before K stay active and can be rewound to later. The seed keeps one mark in force (a fold may only
complete the latest); tapedeck lets the model and the operator rewind to any active mark. All of this is read
back from the log, so it survives host restarts.

A session run by the real DSH gets its marks through the bridge plugin instead: each applied ``td`` checkpoint
command (``core.bridge.commands``) is a mark whose outcome names the last surface node at that moment
(``detail.seq``), so its anchor is the seq after it; an applied ``td`` rewind completes marks the same way. Such
a mark is also inactive once its node has left the surface (a compaction or an expand replaced it), as the plugin
judges it: a rewind to it is rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.bridge.commands import td_commands
from core.log.vocabulary import CHECKPOINT_EVENT
from core.read.session import Session
from core.shared.arguments import loads_arguments
from core.shared.errors import TapedeckError
from core.shared.text import quoted, shown

REWIND_EVENT = "tapedeck/rewind"
CHECKPOINT_TOOL_NAME = "checkpoint"
PLACED_BY = ("model", "operator")


class CheckpointError(TapedeckError):
    """A checkpoint request is malformed (bad tool arguments, unknown author)."""


@dataclass(frozen=True, slots=True)
class Mark:
    """One checkpoint mark as reconstructed from the log."""

    mark_id: int
    anchor: int
    seq: int
    turn: int
    by: str
    objective: str | None = None
    folded_by: int | None = None  # seq of the ``tapedeck/rewind`` event that completed it
    bridged: bool = False  # placed through the DSH bridge (a ``td`` command), not by a tapedeck host
    replaced: bool = False  # bridged: its surface node was replaced since (a compaction took its history)

    @property
    def active(self) -> bool:
        """True until a fold completes the mark or, for a bridged one, its node leaves the surface."""
        return self.folded_by is None and not self.replaced


def _mark_of(seq: int, event: Mapping[str, Any]) -> Mark | None:
    data = event.get("data")
    if not isinstance(data, Mapping):
        return None
    mark_id, anchor, turn = data.get("markId"), data.get("anchor"), data.get("turn", 0)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (mark_id, anchor, turn)):
        return None
    objective = data.get("objective")
    by = data.get("by")
    return Mark(
        mark_id,
        anchor,
        seq,
        turn,
        by if by in PLACED_BY else "model",
        objective if isinstance(objective, str) and objective else None,
    )


def _folded_id(event: Mapping[str, Any]) -> int | None:
    data = event.get("data")
    mark_id = data.get("markId") if isinstance(data, Mapping) else None
    return mark_id if isinstance(mark_id, int) and not isinstance(mark_id, bool) else None


def _backwards(session: Session) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """Checkpoint and rewind events, newest first (the others are never decoded on a log read back
    from its file)."""
    events = session.events
    for seq in reversed(list(session.seqs_of((CHECKPOINT_EVENT, REWIND_EVENT)))):
        yield seq, events[seq]


def _completed(mark: Mark, folded_by: int) -> Mark:
    return replace(mark, folded_by=folded_by)


def _fold(found: list[Mark], target: int | None, seq: int) -> list[Mark]:
    """Complete mark ``target`` and every later active one (a fold of an unknown mark changes nothing)."""
    if target is None or not any(m.mark_id == target for m in found):
        return found
    return [_completed(m, seq) if m.active and m.mark_id >= target else m for m in found]


def bridge_marks(session: Session) -> list[Mark]:
    """The marks placed through the DSH bridge, in log order, each completed by a later applied rewind or marked
    ``replaced`` when its node is no longer on the surface."""
    found: list[Mark] = []
    for command in td_commands(session):
        if not command.applied:
            continue
        detail = command.detail
        mark_id = detail.get("markId")
        if not isinstance(mark_id, int) or isinstance(mark_id, bool):
            continue
        if command.op == "checkpoint":
            node = detail.get("seq")  # the surface node the mark follows; null: placed before any node
            if node is not None and (not isinstance(node, int) or isinstance(node, bool) or node < 0):
                continue
            objective = detail.get("objective")
            found.append(
                Mark(
                    mark_id,
                    0 if node is None else node + 1,
                    command.run_seq,
                    session.turn_of(command.run_seq),
                    "operator",
                    objective if isinstance(objective, str) and objective else None,
                    bridged=True,
                    replaced=node is not None and not session.on_surface(node),
                )
            )
        elif command.op == "rewind":
            found = _fold(found, mark_id, command.done_seq or command.run_seq)
    return found


def marks(session: Session) -> list[Mark]:
    """Every mark in log order, each with the seq of the fold that completed it (if any)."""
    found: list[Mark] = []
    if not session.counts.get(CHECKPOINT_EVENT):
        return bridge_marks(session)
    for seq in session.seqs_of((CHECKPOINT_EVENT, REWIND_EVENT)):
        event = session.events[seq]
        etype = event.get("type")
        if etype == CHECKPOINT_EVENT:
            mark = _mark_of(seq, event)
            if mark is not None:
                found.append(mark)
        elif etype == REWIND_EVENT:
            found = _fold(found, _folded_id(event), seq)
    return found


def find_mark(session: Session, mark_id: int) -> Mark | None:
    """The mark numbered ``mark_id`` (folded or not), or None when the log has no such mark."""
    return next((m for m in marks(session) if m.mark_id == mark_id), None)


def active_marks(session: Session) -> list[Mark]:
    """Every mark not yet completed by a fold, oldest first: each one can be rewound to."""
    return [m for m in marks(session) if m.active]


def latest_mark(session: Session) -> Mark | None:
    """The newest mark (folded or not), found by scanning back from the log's end."""
    if not session.counts.get(CHECKPOINT_EVENT):
        bridged = bridge_marks(session)
        return bridged[-1] if bridged else None
    folds_after = False
    for seq, event in _backwards(session):
        if event.get("type") == REWIND_EVENT:
            folds_after = folds_after or _folded_id(event) is not None
            continue
        mark = _mark_of(seq, event)
        if mark is None:
            continue
        if not folds_after:  # the common case: no fold since the newest mark, no full scan
            return mark
        return next((m for m in marks(session) if m.seq == seq), mark)
    return None


def active_mark(session: Session) -> Mark | None:
    """The latest mark while it has not been folded, else None (the seed's ``hasActive``, which the turn
    guard uses: an older mark left open under a folded newer one can still be rewound to, but is not nagged
    about)."""
    mark = latest_mark(session)
    return mark if mark is not None and mark.active else None


def plan_checkpoint(
    session: Session, objective: str | None = None, by: str = "model"
) -> list[dict[str, Any]]:
    """Plan the ``tapedeck/checkpoint`` event that places a new mark at the current log end."""
    if by not in PLACED_BY:
        raise CheckpointError(f"checkpoint: 'by' must be model or operator (got {by!r})")
    objective = _objective(objective)
    latest = latest_mark(session)
    turn = session.open_turn if session.open_turn is not None else (session.last_ended or 0)
    data: dict[str, Any] = {"markId": (latest.mark_id if latest else 0) + 1, "anchor": session.next_seq}
    if objective and objective.strip():
        data["objective"] = objective.strip()
    data.update(by=by, turn=turn)
    return [{"type": CHECKPOINT_EVENT, "data": data, "ignorable": True}]


# the model tool --------------------------------------------------------------------------------------------


def checkpoint_tool_schema(rewind_tool: str) -> dict[str, Any]:
    """The ``checkpoint`` tool schema (DSH ToolSchema: name, description, JSON-schema parameters); its description
    names the rewind tool by ``rewind_tool`` (``rewind.toolName``)."""
    return {
        "name": CHECKPOINT_TOOL_NAME,
        "description": (
            "Mark the start of an exploration (reading, searching, trying things out). "
            f"When the exploration is done, call `{rewind_tool}` to replace everything after this mark "
            "with a short report of what was learned."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "objective": {
                    "type": "string",
                    "description": "What the exploration is meant to find out; it guides the report.",
                }
            },
        },
    }


def optional_argument(tool: str, arguments: str, key: str, fail: Callable[[str], Exception]) -> Any:
    """The one optional argument ``key`` of a tool call's raw JSON arguments (None when absent).

    Raises ``fail(message)`` for arguments that are not a JSON object or that name any other key.
    """
    try:
        parsed = loads_arguments(arguments)
    except ValueError as exc:
        raise fail(f"{tool}: arguments are {exc}") from exc
    if not isinstance(parsed, dict):
        raise fail(f"{tool}: arguments must be a JSON object")
    extra = sorted(set(parsed) - {key})
    if extra:
        raise fail(f"{tool}: unknown argument '{quoted(extra[0])}' (only {key!r} is accepted)")
    return parsed.get(key)


def parse_checkpoint_arguments(arguments: str) -> str | None:
    """The ``objective`` from the raw JSON arguments string of a ``checkpoint`` call."""
    return _objective(optional_argument(CHECKPOINT_TOOL_NAME, arguments, "objective", CheckpointError))


def _objective(value: Any) -> str | None:
    """``value`` as a checkpoint's objective: a string or None; anything else a CheckpointError showing it."""
    if value is not None and not isinstance(value, str):
        raise CheckpointError(f"checkpoint: objective must be a string (got {shown(value)})")
    return value


def checkpoint_result(event: Mapping[str, Any]) -> dict[str, Any]:
    """The tool result for a planned checkpoint event: ``{markId, anchor, objective?}``."""
    data = event["data"]
    result = {"markId": data["markId"], "anchor": data["anchor"]}
    if "objective" in data:
        result["objective"] = data["objective"]
    return result


def render_checkpoint_result(result: Mapping[str, Any], rewind_tool: str = "rewind") -> str:
    """The model-visible text of a checkpoint result."""
    goal = f" Objective: {quoted(result['objective'])}." if result.get("objective") else ""  # the model's, cut
    return (
        f"Checkpoint {result['markId']} set at seq {result['anchor']}.{goal} "
        f"Explore as needed, then call `{rewind_tool}` to fold everything after this point into a report."
    )
