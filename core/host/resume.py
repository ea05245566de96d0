"""What a crash left unfinished, read back from the session log.

A host killed at any point leaves a log prefix. These pure readers tell the resuming host what that prefix
still owes: steering messages acknowledged but never delivered, the prompt of a turn that started without
one, how far the open turn's last step got (model call interrupted, or step ended with the turn still open), and
whether the operator had paused the host.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.control.host_state import written_by_another
from core.host.toolbox import CallResult
from core.log.layout import resolve_log_path
from core.log.vocabulary import APPLIED, CONTROL_EVENT, HOST_EVENT
from core.policies.adaptive import FINALIZATION, turn_routes
from core.policies.checkpoint import CHECKPOINT_TOOL_NAME
from core.policies.recall import RECALL_TOOLS
from core.policies.rewind import REWIND_EVENT, rewind_tool_result
from core.read.session import Session
from core.shared.errors import TapedeckError
from core.shared.text import quoted_path

# Calls that are safe to run again after a crash cut them off: they change nothing (workspace reads and
# searches, the recall family), or their effect and result are appended in one batch (``checkpoint``). File
# calls are settled by what their file holds (``core.host.file_calls``).
REPEATABLE_TOOLS = frozenset({"read_file", "list_dir", "glob", "grep", *RECALL_TOOLS, CHECKPOINT_TOOL_NAME})
STEER_VIA = "tapedeck-control"
QUEUED = "next turn"


def refuse_foreign_log(path: Path) -> None:
    """Refuse to resume ``path`` (a log, or a session directory) when the DeepSeek Harness wrote it: a
    TapedeckError saying what steers it instead. Cheap (its first lines), and before anything opens it to write."""
    if written_by_another(resolve_log_path(path)):
        raise TapedeckError(_foreign_log(path))


def _foreign_log(path: object) -> str:
    """Why a host refuses to resume ``path``, a session log the DeepSeek Harness wrote."""
    return (
        f"{quoted_path(str(path))} is a DeepSeek Harness (DSH) session log, not one a tapedeck host started, and tapedeck's host "
        "never writes into a DSH log; nothing was changed. Continue the session in DSH; to watch and steer it from "
        "tapedeck, add the bridge to DSH once (`tapedeck bridge install DSH_HOME`), then use `tapedeck watch` or "
        "`tapedeck control` on this log"
    )


@dataclass(frozen=True)
class Steer:
    """An acknowledged steering message (for the next turn or step): its text and the request that sent it."""

    text: str
    request_id: str

    def source(self) -> dict[str, Any]:
        """The ``user/message`` source that delivers it (the request id marks it delivered)."""
        return {"kind": "user", "via": STEER_VIA, "requestId": self.request_id}


def recorded_workspace(session: Session) -> str | None:
    """The workspace the newest ``tapedeck/host`` event names (else the header's ``cwd``)."""
    for seq in reversed(list(session.seqs_of((HOST_EVENT,)))):
        workspace = (session.events[seq].get("data") or {}).get("workspace")
        if isinstance(workspace, str):
            return workspace
    cwd = session.header.get("cwd")
    return cwd if isinstance(cwd, str) else None


def recorded_tasks(session: Session) -> list[str]:
    """The tasks the session was started with (its first ``tapedeck/host`` event); a TapedeckError when they are
    not a list of texts (the log was changed by hand)."""
    seq = next(iter(session.seqs_of((HOST_EVENT,))), None)
    tasks = (session.events[seq].get("data") or {}).get("tasks") if seq is not None else None
    if tasks is None:
        return []
    if not isinstance(tasks, list) or not all(isinstance(task, str) for task in tasks):
        raise TapedeckError(
            f"{session.path}: the tasks its {HOST_EVENT} event records are not a list of texts; was the log edited?"
        )
    return tasks


def paused_by_operator(session: Session) -> bool:
    """Whether the operator's latest applied ``pause`` or ``resume`` is a pause: the host was left paused."""
    for seq in reversed(list(session.seqs_of((CONTROL_EVENT,)))):
        data = session.events[seq].get("data") or {}
        if data.get("outcome") == APPLIED and data.get("op") in ("pause", "resume"):
            return bool(data["op"] == "pause")
    return False


def _source(event: dict[str, Any]) -> dict[str, Any]:
    data = event.get("data")
    source = data.get("source") if isinstance(data, dict) else None
    return source if isinstance(source, dict) else {}


def _pending(session: Session) -> list[tuple[int, Steer]]:
    """(seq of the acknowledging outcome, steer) of every acknowledged steer not yet in a ``user/message``."""
    queued: list[tuple[int, Steer]] = []
    delivered: set[str] = set()
    for seq in session.seqs_of((CONTROL_EVENT, "user/message")):
        event = session.events[seq]
        data = event.get("data") or {}
        if event.get("type") == "user/message":
            request_id = _source(event).get("requestId")
            if isinstance(request_id, str):
                delivered.add(request_id)
            continue
        detail = data.get("detail")
        if (
            isinstance(detail, dict)
            and isinstance(detail.get("queued"), str)  # for the next turn, or the next step of the open one
            and isinstance(detail.get("text"), str)
            and isinstance(data.get("requestId"), str)
        ):
            queued.append((seq, Steer(detail["text"], data["requestId"])))
    return [(seq, s) for seq, s in queued if s.request_id not in delivered]


def pending_steers(session: Session) -> list[Steer]:
    """Steers acknowledged (for the next turn or step) that never reached the model, oldest first."""
    return [steer for _, steer in _pending(session)]


def turn_steer(session: Session, turn: int) -> Steer | None:
    """The steer a turn was started for, when its prompt is missing: the oldest queued before it began."""
    start = session.turns[turn].start_seq
    return next((steer for seq, steer in _pending(session) if seq < start), None)


def _turn_user_sources(session: Session, turn: int) -> list[dict[str, Any]]:
    record = session.turns[turn]
    end = record.end_seq if record.end_seq is not None else session.next_seq
    return [
        _source(session.events[seq])
        for seq in session.seqs_of(("user/message",), record.start_seq)
        if seq < end and _source(session.events[seq]).get("kind") == "user"
    ]


def prompt_logged(session: Session, turn: int) -> bool:
    """Whether the turn's prompt (a ``user/message`` from the user) reached the log."""
    return bool(_turn_user_sources(session, turn))


def task_turns(session: Session) -> int:
    """How many turns were started by a recorded task (not by a steering message)."""
    count = 0
    for turn in session.turns:
        sources = _turn_user_sources(session, turn)
        if sources and "via" not in sources[0]:
            count += 1
    return count


@dataclass(frozen=True)
class LastStep:
    """The open turn's newest step as the crash left it."""

    step: int
    ended: bool
    answered: bool  # its assistant/message is logged
    tool_calls: int  # tool-call blocks in that message
    finish: str | None  # the finish kind of its last model attempt
    continued: bool  # a user/message (a guard reminder) was appended after its step/end


def last_step(session: Session, turn: int) -> LastStep | None:
    """The open turn's newest step, or None when the turn has no step yet."""
    record = session.turns[turn]
    if not record.steps:
        return None
    number = max(record.steps)
    step = record.steps[number]
    answered, calls, finish, continued = False, 0, None, False
    for seq in range(step.start_seq, session.next_seq):
        event = session.events[seq]
        etype = event.get("type")
        data = event.get("data") or {}
        if etype == "assistant/chunk" and data.get("turn") == turn and data.get("step") == number:
            chunk = data.get("chunk") or {}
            if chunk.get("type") == "finish":
                finish = str((chunk.get("reason") or {}).get("kind"))
        elif etype == "assistant/message" and data.get("turn") == turn and data.get("step") == number:
            answered = True
            content = (data.get("message") or {}).get("content") or []
            calls = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool-call")
        elif etype == "user/message" and step.end_seq is not None and seq > step.end_seq:
            continued = True
    return LastStep(number, step.end_seq is not None, answered, calls, finish, continued)


def tools_allowed(session: Session, turn: int, step: int) -> bool:
    """Whether the step's logged route let the model call tools (not in the finalization phase)."""
    routes = [r for r in turn_routes(session, turn) if r.get("step") == step]
    return not routes or routes[-1].get("phase") != FINALIZATION


def committed_rewind(session: Session, call_seq: int) -> CallResult | None:
    """The result of a model ``rewind`` cut off after its fold reached the log (None: it never committed)."""
    for seq in session.seqs_of((REWIND_EVENT,), call_seq):
        data = session.events[seq].get("data") or {}
        if data.get("by") == "model":
            result = {k: v for k, v in data.items() if k not in ("writer", "by")}
            return CallResult(rewind_tool_result(result), False, meta=result)
    return None
