"""Subagent lineage on the main screen: from a spawn row to the child session it started, and back to the parent."""

from __future__ import annotations

from textual import work
from textual.screen import Screen

from core.log.lineage import child_log, parent_log, spawns
from core.read.session import Session
from core.read.streams import Block
from tui.failures import reads_log
from tui.live import LiveSession
from tui.widgets.event_list import EventList


def spawn_of_row(session: Session, seq: int, block: Block | None, spawn_seqs: set[int]) -> int | None:
    """The spawn (the seq of its ``tool/call``, one of ``spawn_seqs``) a row stands for: the call itself, the
    answer that made it or its result (the rows the surface view shows), or the model stream of its step; the
    first of several."""
    if seq in spawn_seqs:
        return seq
    mine = [
        call.call_seq
        for call in session.tool_calls.values()
        if call.call_seq in spawn_seqs
        and (
            seq in (call.message_seq, call.result_seq)
            or (block is not None and (call.turn, call.step) == (block.turn, block.step))
        )
    ]
    return min((s for s in mine if s is not None), default=None)


class SubagentLinks(Screen[None]):
    """The main screen's ``J`` (open the child of a spawn row) and ``u`` (back to the parent session)."""

    live: LiveSession

    def action_open_child(self) -> None:
        """On a subagent spawn row (its tool call, the answer that made it, or its result), open the child session
        it started."""
        events = self.query_one(EventList)
        seq = events.current_seq
        if seq is None:
            self.notify("Select a subagent spawn row first.", timeout=3)
            return
        self._find_child(seq, events.current_block)

    @work(thread=True, group="lineage", exclusive=True)
    @reads_log
    def _find_child(self, seq: int, block: Block | None) -> None:
        live = self.live
        calls = ((at, live.session.events[at]) for at in live.session.seqs_of(["tool/call"]))
        found = spawns(calls)
        with live.lock:
            spawn = spawn_of_row(live.session, seq, block, {at for at, _ in found})
        if spawn is None:
            self.app.call_from_thread(self.notify, "This row is not a subagent spawn.", timeout=3)
            return
        skipped: list[str] = []
        path = child_log(live.path, live.session.id, found, spawn, skipped)
        if path is None:
            self.app.call_from_thread(
                self.notify, _with("No child session for this spawn under this sessions root", skipped), timeout=5
            )
            return
        self.app.call_from_thread(self.app.switch_session, path)  # type: ignore[attr-defined]

    def action_open_parent(self) -> None:
        """In a subagent child session, go back to its parent session."""
        parent = self.live.session.header.get("parentSession")
        if not isinstance(parent, str) or not parent:
            self.notify("This session has no parent.", timeout=3)
            return
        self._find_parent(parent)

    @work(thread=True, group="lineage", exclusive=True, exit_on_error=False)
    def _find_parent(self, parent: str) -> None:
        skipped: list[str] = []
        path = parent_log(self.live.path, parent, skipped)
        if path is None:
            self.app.call_from_thread(
                self.notify, _with(f"Parent session {parent} is not under this sessions root", skipped), timeout=5
            )
            return
        self.app.call_from_thread(self.app.switch_session, path)  # type: ignore[attr-defined]


def _with(sentence: str, skipped: list[str]) -> str:
    """``sentence`` and what the sessions root holds that could not be read (its listing's notes), one sentence."""
    return "; ".join([sentence, *skipped]) + "."
