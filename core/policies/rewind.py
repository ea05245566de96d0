"""Rewind: fold the surface after the active checkpoint mark into a report (seed 001).

``plan_rewind`` selects the region, has a ``ReportWriter`` write the report, re-checks the region and returns two
events for the host to append: the report as a ``user/message`` replacement (source
``{"kind": "plugin", "plugin": "rewind"}``, ``surfaceOp {"op": "replace", "start": S, "end": E}``,
``sourceEventSeqs`` = the shadowed seqs) and a log-only ``tapedeck/rewind`` event that completes the mark. Any
failure raises a classified ``RewindError`` and plans nothing, so the mark stays active and the fold can be
retried. A per-session, in-process lock rejects a second fold while one is running.

The mark event is log-only, so "after the mark" means the first surface node whose seq is at least the anchor,
and, for a replacement, all of whose sources are too: a fold of an earlier result or a tape entry of earlier turns
written after the mark stands where what it replaced stood (the seed's rule took them for the exploration: a fold
of a result the checkpoint call came beside cost the checkpoint its result, a tape entry after a mark placed
between turns was folded with the new turn).
A mark that is already folded yields ``EMPTY_REGION``: every mark folds once, a new exploration needs a new mark.
Without a ``mark_id`` the fold targets the latest mark, as the seed does; with one it targets that mark, which
may be any active mark (an older one folds the newer marks' explorations with its own).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from core.log.messages import user_message, user_text
from core.log.vocabulary import GUARD_SOURCE
from core.policies.checkpoint import (
    REWIND_EVENT,
    Mark,
    active_mark,
    find_mark,
    latest_mark,
    optional_argument,
)
from core.policies.report import REPORT_SOURCE, ReportRequest, ReportWriter, header_route
from core.policies.rewind_config import RewindConfig
from core.read.session import Session, content_chars, messages_of
from core.shared.errors import TapedeckError
from core.shared.text import js_json, shown, utf16_len
from core.shared.values import whole_number

NO_CHECKPOINT = "NO_CHECKPOINT"
EMPTY_REGION = "EMPTY_REGION"
UNBALANCED = "UNBALANCED"
FOLD_IN_PROGRESS = "FOLD_IN_PROGRESS"
CHANGED = "CHANGED"
SHRINK = "SHRINK"
BAD_ARGUMENTS = "BAD_ARGUMENTS"  # tapedeck's own: the optional markId argument is malformed

MSG_NO_CHECKPOINT = "rewind: no checkpoint mark found for this session; call `checkpoint` before exploring"
MSG_NOTHING_AFTER = "rewind: no surface nodes after the checkpoint mark"
MSG_NOTHING_BETWEEN = "rewind: no surface nodes between the checkpoint mark and the rewind call"
MSG_UNBALANCED = (
    "rewind: the fold region cannot be cut at a balanced boundary (an open tool-call/result pair spans it)"
)
MSG_IN_PROGRESS = "rewind: another fold is already in progress for this session"
MSG_CHANGED = "rewind: the fold region changed during summarization"
MSG_MARK_REPLACED = "rewind: the checkpoint's node is no longer on the surface (a replacement took its history)"

RESULT_KEYS = ("markId", "foldedNodes", "start", "end", "foldedChars", "reportChars")
REWIND_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {key: {"type": "integer"} for key in RESULT_KEYS},
    "required": list(RESULT_KEYS),
    "additionalProperties": False,
}


class RewindError(TapedeckError):
    """A classified rewind failure; ``code`` is one of the six seed codes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


# What a rewind failure means for the operator (the MSG_ texts above are the model's, as the spec words them).
OPERATOR_WORDS = {
    NO_CHECKPOINT: "this session has no checkpoint mark",
    UNBALANCED: "the history after the checkpoint ends inside a tool call that has no result yet",
    FOLD_IN_PROGRESS: "another fold of this session is under way",
    CHANGED: "the history changed while the fold was being planned",
}


def operator_words(error: RewindError, mark_id: int | None = None) -> str:
    """A rewind failure as the operator is told it: a plain clause, without the tool's wording or its code."""
    which = "the checkpoint" if mark_id is None else f"checkpoint {mark_id}"
    if error.code == EMPTY_REGION:
        if str(error) == MSG_MARK_REPLACED:
            return f"the history at {which} was replaced since it was placed"
        return f"nothing the model sees was added after {which}"
    return OPERATOR_WORDS.get(error.code, str(error).removeprefix("rewind: "))


class RewindAborted(TapedeckError):
    """The host cancelled the fold before it was committed; nothing was planned."""


@dataclass(frozen=True, slots=True)
class Region:
    """The surface span a fold replaces: first and last node seq and every node in between."""

    start: int
    end: int
    shadowed_seqs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RewindPreview:
    """What rewinding now would fold (for previews and the TUI)."""

    mark: Mark
    region: Region
    folded_chars: int


@dataclass(frozen=True)
class RewindPlan:
    """A successful fold: the events to append, the tool result and the report text."""

    events: list[dict[str, Any]]
    result: dict[str, int]
    report: str
    writer: str


# region selection ----------------------------------------------------------------------------------------


def _data(event: Mapping[str, Any]) -> Mapping[str, Any]:
    data = event.get("data")
    return data if isinstance(data, Mapping) else {}


def _call_delta(event: Mapping[str, Any]) -> int:
    """How a surface node moves the open tool-call counter: +calls for an assistant message, -1 for a result."""
    etype = event.get("type")
    if etype == "tool/result":
        return -1
    if etype == "assistant/message":
        message = _data(event).get("message")
        blocks = message.get("content") if isinstance(message, Mapping) else None
        return sum(1 for b in blocks or () if isinstance(b, Mapping) and b.get("type") == "tool-call")
    return 0


def _open_before(session: Session, nodes: Sequence[int]) -> list[int]:
    """``open[i]`` = the counter before node i; ``open[len(nodes)]`` = after the last node."""
    counts = [0]
    for seq in nodes:
        counts.append(counts[-1] + _call_delta(session.events[seq]))
    return counts


def _last_assistant_seq(session: Session) -> int | None:
    if not session.counts.get("assistant/message"):
        return None
    events = session.events
    for seq in range(session.next_seq - 1, -1, -1):
        if events[seq].get("type") == "assistant/message":
            return seq
    return None


def _since(session: Session, seq: int, anchor: int) -> bool:
    """Whether surface node ``seq`` (at least ``anchor``) holds what came after the mark: a replacement stands where
    what it replaced stood (a fold of an earlier result, a tape entry of earlier turns), so it does only when all
    of that came after the mark too."""
    return not session.is_replacement(seq) or min(session.sources_of(seq), default=seq) >= anchor


def select_fold_region(session: Session, anchor: int) -> Region:
    """The region to fold for a mark at ``anchor`` (seed §2.b); raises EMPTY_REGION or UNBALANCED."""
    nodes = list(session.surface)
    start = next((i for i, seq in enumerate(nodes) if seq >= anchor and _since(session, seq, anchor)), None)
    if start is None:
        raise RewindError(EMPTY_REGION, MSG_NOTHING_AFTER)
    opened = _open_before(session, nodes)
    if opened[start] != 0:
        start += 1  # the checkpoint call's own result: skip exactly one node, never more
    current = _last_assistant_seq(session)
    end = len(nodes) - 1
    if current is not None:
        while end >= start and nodes[end] >= current:
            end -= 1
    if end < start:
        raise RewindError(EMPTY_REGION, MSG_NOTHING_BETWEEN)
    while end >= start and opened[end + 1] != 0:
        end -= 1
    if end < start:
        raise RewindError(UNBALANCED, MSG_UNBALANCED)
    return Region(nodes[start], nodes[end], tuple(nodes[start : end + 1]))


def assert_region_unchanged(session: Session, anchor: int, region: Region) -> None:
    """Raise CHANGED unless selecting the region again gives the same start, end and length."""
    try:
        again = select_fold_region(session, anchor)
    except RewindError as exc:
        raise RewindError(CHANGED, MSG_CHANGED) from exc
    if (again.start, again.end, len(again.shadowed_seqs)) != (
        region.start,
        region.end,
        len(region.shadowed_seqs),
    ):
        raise RewindError(CHANGED, MSG_CHANGED)


def region_messages(session: Session, region: Region) -> list[dict[str, Any]]:
    """The region's model-visible messages (empty assistant messages project nothing and are skipped)."""
    return messages_of(session.events, region.shadowed_seqs)


def utf16_chars(blocks: Iterable[Any] | None) -> int:
    """Model-visible size in UTF-16 units: text, reasoning, tool-call arguments, tool results (recursively)."""
    return content_chars(blocks, utf16_len)


def folded_chars(messages: Iterable[Mapping[str, Any]]) -> int:
    """``foldedChars`` of a region: the UTF-16 size of every block the model would have read."""
    return sum(utf16_chars(message.get("content")) for message in messages)


def _mark_or_fail(session: Session, mark_id: int | None = None) -> Mark:
    """The latest mark (``mark_id`` None) or the one numbered ``mark_id``; NO_CHECKPOINT when there is none."""
    if mark_id is None:
        mark = latest_mark(session)
        if mark is None:
            raise RewindError(NO_CHECKPOINT, MSG_NO_CHECKPOINT)
        return mark
    mark = find_mark(session, mark_id)
    if mark is None:
        raise RewindError(NO_CHECKPOINT, f"rewind: this session has no checkpoint mark {mark_id}")
    return mark


def bridge_region(session: Session, anchor: int) -> Region:
    """The region the DSH bridge replaces for a mark at ``anchor`` (its surface node's seq + 1, or 0 for a mark
    placed before any node): the nodes after that node to the end, and a region that would start at a tool
    result starts at its call instead (the bridge rewinds at idle, so no call is open)."""
    nodes = list(session.surface)
    start = 0
    if anchor > 0:
        if anchor - 1 not in nodes:
            raise RewindError(EMPTY_REGION, MSG_MARK_REPLACED)
        start = nodes.index(anchor - 1) + 1
    while 0 < start < len(nodes) and session.events[nodes[start]].get("type") == "tool/result":
        start -= 1
    if start >= len(nodes):
        raise RewindError(EMPTY_REGION, MSG_NOTHING_AFTER)
    return Region(nodes[start], nodes[-1], tuple(nodes[start:]))


def preview_rewind(session: Session, mark_id: int | None = None) -> RewindPreview:
    """What a rewind to ``mark_id`` (default: the latest mark) would fold now; raises like ``plan_rewind``."""
    mark = _mark_or_fail(session, mark_id)
    if mark.replaced:
        raise RewindError(EMPTY_REGION, MSG_MARK_REPLACED)
    if not mark.active:
        raise RewindError(EMPTY_REGION, MSG_NOTHING_AFTER)
    region = bridge_region(session, mark.anchor) if mark.bridged else select_fold_region(session, mark.anchor)
    return RewindPreview(mark, region, folded_chars(region_messages(session, region)))


# the fold ------------------------------------------------------------------------------------------------

_LOCK_GUARD = threading.Lock()
_FOLDING: set[str] = set()


@contextmanager
def fold_lock(session_id: str) -> Iterator[None]:
    """Hold the per-session fold lock; raises FOLD_IN_PROGRESS when another fold holds it."""
    with _LOCK_GUARD:
        if session_id in _FOLDING:
            raise RewindError(FOLD_IN_PROGRESS, MSG_IN_PROGRESS)
        _FOLDING.add(session_id)
    try:
        yield
    finally:
        with _LOCK_GUARD:
            _FOLDING.discard(session_id)


def _check_abort(abort: threading.Event | None) -> None:
    if abort is not None and abort.is_set():
        raise RewindAborted("rewind: aborted before the fold was committed; nothing was written")


def _report_request(
    session: Session, config: RewindConfig, mark: Mark, messages: list[dict[str, Any]]
) -> ReportRequest:
    header = session.request_header() or {}
    system = header.get("system")
    tools = header.get("tools")
    return ReportRequest(
        messages=messages,
        folded_chars=folded_chars(messages),
        language=config.report_language,
        objective=mark.objective,
        system=system if isinstance(system, str) else None,
        tools=[t for t in tools if isinstance(t, Mapping)] if isinstance(tools, list) else (),
        route=header_route(header),
    )


def _plan_events(
    mark: Mark, region: Region, report: str, folded: int, writer: str, by: str
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    result = {
        "markId": mark.mark_id,
        "foldedNodes": len(region.shadowed_seqs),
        "start": region.start,
        "end": region.end,
        "foldedChars": folded,
        "reportChars": utf16_len(report),
    }
    report_event = {
        "type": "user/message",
        "data": user_text(report, dict(REPORT_SOURCE)),
        "surfaceOp": {"op": "replace", "start": region.start, "end": region.end},
        "sourceEventSeqs": list(region.shadowed_seqs),
    }
    fold_event = {"type": REWIND_EVENT, "data": {**result, "writer": writer, "by": by}, "ignorable": True}
    return [report_event, fold_event], result


def plan_rewind(
    session: Session,
    config: RewindConfig,
    writer: ReportWriter,
    *,
    by: str = "model",
    mark_id: int | None = None,
    abort: threading.Event | None = None,
    commit: Callable[[list[dict[str, Any]]], object] | None = None,
) -> RewindPlan:
    """Fold the region after a mark into a report; returns the events to append, or raises.

    ``mark_id`` names the mark to rewind to (any active mark); None means the latest mark, as in the seed.
    With ``commit`` (the host's append), the events are committed while the fold lock is still held, so no
    second fold can plan against the same mark in between.
    """
    mark = _mark_or_fail(session, mark_id)
    with fold_lock(session.id):
        if not mark.active:
            raise RewindError(EMPTY_REGION, MSG_NOTHING_AFTER)
        region = select_fold_region(session, mark.anchor)
        request = _report_request(session, config, mark, region_messages(session, region))
        _check_abort(abort)
        report = writer.write(request)
        _check_abort(abort)
        assert_region_unchanged(session, mark.anchor, region)
        again = find_mark(session, mark.mark_id)
        if again is None or not again.active:
            raise RewindError(CHANGED, MSG_CHANGED)
        events, result = _plan_events(mark, region, report, request.folded_chars, writer.kind, by)
        if result["foldedChars"] > 0 and result["reportChars"] >= result["foldedChars"]:
            raise RewindError(
                SHRINK,
                f"rewind summary ({result['reportChars']} chars) is not smaller than the folded region "
                f"({result['foldedChars']} chars over {result['foldedNodes']} nodes)",
            )
        if commit is not None:
            commit(events)
    return RewindPlan(events, result, report, writer.kind)


# the model tool, prompt section and turn guard ------------------------------------------------------------


def rewind_tool_schema(config: RewindConfig) -> dict[str, Any]:
    """The ``rewind`` tool schema (DSH ToolSchema).

    The seed's tool takes no parameters; tapedeck adds an optional ``markId`` so the model can rewind to an
    older active mark. A call without arguments behaves exactly as the seed's.
    """
    return {
        "name": config.tool_name,
        "description": (
            "Fold everything after a `checkpoint` mark (the latest one unless `markId` names another active "
            "mark) into a short report that replaces it in the conversation. Call it as soon as the marked "
            "exploration is done."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "markId": {
                    "type": "integer",
                    "description": "The active mark to rewind to; leave it out for the latest mark.",
                }
            },
        },
    }


def parse_rewind_arguments(arguments: str) -> int | None:
    """The ``markId`` of a ``rewind`` call's raw JSON arguments (None: the latest mark)."""
    given = optional_argument("rewind", arguments, "markId", lambda message: RewindError(BAD_ARGUMENTS, message))
    if given is None:
        return None
    mark_id = whole_number(given)  # 2.0 is 2, as for every tool's integer argument
    if mark_id is None or mark_id < 1:
        raise RewindError(BAD_ARGUMENTS, f"rewind: markId must be a positive integer (got {shown(given)})")
    return mark_id


def rewind_tool_result(result: Mapping[str, int]) -> str:
    """The model-visible result of a successful ``rewind`` call: the contract's result object as JSON."""
    return js_json({key: result[key] for key in RESULT_KEYS})


def rewind_prompt_section(config: RewindConfig) -> str:
    """System-prompt guidance on checkpoints and folding, in tapedeck's words."""
    tool = config.tool_name
    return (
        "Checkpoints and folding:\n"
        "- Before an exploration (reading files, searching, trial runs), call `checkpoint`, optionally with a "
        "short objective.\n"
        f"- The moment the exploration has answered its question, and before any unrelated work, call `{tool}`. "
        "It swaps everything after the mark for a compact report, which keeps the conversation small.\n"
        f"- `{tool}` fails when no checkpoint is set. A failed fold changes nothing: the region stays as it "
        "was and you may retry."
    )


def guard_reminder(mark: Mark, config: RewindConfig) -> str:
    """The reminder injected when a turn tries to end while a mark is still active."""
    tool = config.tool_name
    return (
        f"Checkpoint {mark.mark_id} is still open: the exploration after it has not been folded. "
        f"Call `{tool}` before ending this turn so that the exploration is replaced by its report. "
        f"If `{tool}` fails, say why and finish; this reminder is given once per turn."
    )


def _reminded_in(session: Session, start_seq: int) -> bool:
    events = session.events
    for seq in range(session.next_seq - 1, start_seq - 1, -1):
        event = events[seq]
        if event.get("type") == "user/message" and _data(event).get("source") == GUARD_SOURCE:
            return True
    return False


def plan_turn_guard(session: Session, turn: int, config: RewindConfig) -> list[dict[str, Any]]:
    """Plan the reminder for a turn that is about to end with an active mark; once per turn, judged from the log."""
    mark = active_mark(session)
    if mark is None:
        return []
    record = session.turns.get(turn)
    if record is not None and _reminded_in(session, record.start_seq):
        return []
    return [user_message(guard_reminder(mark, config), dict(GUARD_SOURCE))]
