"""Subagent lineage on the main screen: from a spawn row to the child session it started, and back to the parent."""

from __future__ import annotations

from textual import work
from textual.screen import Screen

from core.log.lineage import child_log, parent_log, spawns
from tui.live import LiveSession
from tui.widgets.event_list import EventList


class SubagentLinks(Screen[None]):
    """The main screen's ``J`` (open the child of a spawn row) and ``u`` (back to the parent session)."""

    live: LiveSession

    def action_open_child(self) -> None:
        """On a subagent spawn row, open the child session it started."""
        seq = self.query_one(EventList).current_seq
        if seq is None:
            self.notify("Select a subagent spawn row first.", timeout=3)
            return
        self._find_child(seq)

    @work(thread=True, group="lineage", exclusive=True, exit_on_error=False)
    def _find_child(self, seq: int) -> None:
        live = self.live
        calls = ((at, live.session.events[at]) for at in live.session.seqs_of(["tool/call"]))
        found = spawns(calls)
        if all(at != seq for at, _ in found):
            self.app.call_from_thread(self.notify, "This row is not a subagent spawn.", timeout=3)
            return
        path = child_log(live.path, live.session.id, found, seq)
        if path is None:
            self.app.call_from_thread(
                self.notify, "No child session for this spawn under this sessions root.", timeout=5
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
        path = parent_log(self.live.path, parent)
        if path is None:
            self.app.call_from_thread(
                self.notify, f"Parent session {parent} is not under this sessions root.", timeout=5
            )
            return
        self.app.call_from_thread(self.app.switch_session, path)  # type: ignore[attr-defined]
