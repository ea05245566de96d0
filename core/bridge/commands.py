"""The bridge's ops as DSH logged them: ``td`` ``command/run`` / ``command/done`` pairs in a session log.

The plugin runs every request as the slash command ``td``; DSH logs ``command/run`` ``{commandId, name: "td",
args: "<the request JSON>"}`` before it and ``command/done`` ``{commandId, kind, text: "<the outcome JSON>"}``
after it. ``td_commands`` pairs them by ``commandId``; a run without its done yet has ``outcome`` None, and one
whose done is an error with no outcome JSON (DSH cancelled it, or refused it before the handler) ``not run``. Lines a
hostile or broken writer left (args or text that are no JSON object) pair as far as they can and never raise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from core.read.session import Session

TD_COMMAND = "td"
RUN, DONE = "command/run", "command/done"
# the outcome of a td command DSH settled as an error in words of its own: the plugin's handler never ran it
NOT_RUN = "not run"


@dataclass(frozen=True, slots=True)
class TdCommand:
    """One bridge op in the log: the request as the plugin ran it and, once logged, its outcome data."""

    run_seq: int
    request: Mapping[str, Any]
    done_seq: int | None = None
    outcome: Mapping[str, Any] | None = None

    @property
    def op(self) -> str | None:
        """The request's op."""
        op = self.request.get("op")
        return op if isinstance(op, str) else None

    @property
    def applied(self) -> bool:
        """Whether the op's logged outcome is ``applied``."""
        return self.outcome is not None and self.outcome.get("outcome") == "applied"

    @property
    def detail(self) -> Mapping[str, Any]:
        """The outcome's ``detail`` object (empty when absent or not an object)."""
        detail = (self.outcome or {}).get("detail")
        return detail if isinstance(detail, Mapping) else {}


def _object(value: Any) -> Mapping[str, Any] | None:
    """``value`` as a JSON object: itself, or a string holding one (a leading ``/td`` is tolerated)."""
    if isinstance(value, Mapping):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.startswith("/td"):
        text = text[3:].strip()
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, Mapping) else None


def _data(event: Mapping[str, Any]) -> Mapping[str, Any]:
    data = event.get("data")
    return data if isinstance(data, Mapping) else {}


def _settled_by_dsh(command: TdCommand, data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The outcome of a ``td`` command whose ``command/done`` holds no outcome of the plugin's: an error is DSH's own
    (it cancelled the command, or refused it before the handler, as with an image attached), so the op never ran."""
    kind = data.get("kind")
    text = data.get("text")
    base = {"requestId": command.request.get("id"), "op": command.op}
    if kind == "success":
        return {**base, "outcome": "applied"}
    why = text if isinstance(text, str) and text else "no reason given"
    return {**base, "outcome": NOT_RUN, "error": f"DSH did not run this td command: {why}"}


def td_commands(session: Session) -> list[TdCommand]:
    """Every ``td`` command in the log, in run order, with its outcome when its ``command/done`` is logged."""
    if not session.counts.get(RUN):
        return []
    found: dict[str, TdCommand] = {}
    events = session.events
    for seq in session.seqs_of((RUN, DONE)):
        data = _data(events[seq])
        command_id = data.get("commandId")
        if not isinstance(command_id, str):
            continue
        if events[seq].get("type") == RUN:
            request = _object(data.get("args")) if data.get("name") == TD_COMMAND else None
            if request is not None and command_id not in found:
                found[command_id] = TdCommand(seq, request)
            continue
        command = found.get(command_id)
        if command is None or command.done_seq is not None:
            continue
        outcome = _object(data.get("text"))
        if outcome is None:
            outcome = _settled_by_dsh(command, data)
        found[command_id] = TdCommand(command.run_seq, command.request, seq, outcome)
    return list(found.values())
