"""The Prolong screen: the ``/prolong status`` report of the live session, kept current.

The report is ``core.policies.prolong.session_status_text`` under the session's logged config (a notice that
the command is off when ``prolong.registerCommand`` is false): the session log gives the deny
counter, the workspace log file gives the probe, the section count and the last seq. The workspace is
``core.policies.prolong.session_workspace``'s. The host flushes the log file on its own
thread, so besides every session update the report is re-read every few seconds.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from core.policies.prolong import session_status_text, session_workspace
from core.read.session import Session
from core.shared.text import printable
from tui.screens.config import effective_config
from tui.screens.policy_screen import PolicyScreen
from tui.screens.stacked import while_stacked

REREAD_SECONDS = 3.0


def derive_prolong(session: Session) -> str:
    """The status command's answer under the session's prolong config: its report, or that it is off."""
    return session_status_text(session, session_workspace(session), effective_config(session).prolong)


def report_inputs(session: Session) -> tuple[object, ...]:
    """What the report depends on: the session, its config, its tool calls and results, and the log file.

    Rebuilding the report reads every event (the deny counter pairs calls with results), which is slow on a
    log read back from its file (``LineStore``); while none of these inputs changed the previous report still holds.
    """
    config = effective_config(session).prolong
    path = session_workspace(session) / config.log_file
    try:
        stat = path.stat()
        file_state: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        file_state = None
    counts = session.counts
    return (session, config, counts.get("tool/call", 0), counts.get("tool/result", 0), file_state)


class ProlongScreen(PolicyScreen):
    """The prolong-memory status report, live."""

    HEADING = "Prolong status — the workspace session record"

    def compose_body(self) -> ComposeResult:
        """The report."""
        with VerticalScroll(classes="policy-body"):
            yield Static(id="prolong-report")

    def __init__(self) -> None:
        super().__init__()
        self._last: tuple[tuple[object, ...], str] | None = None  # (report inputs, report), workers only

    @while_stacked
    def on_mount(self) -> None:
        """Derive now and re-read the log file periodically."""
        super().on_mount()
        self.set_interval(REREAD_SECONDS, self.refresh_view)

    def derive(self, live: Any) -> str:
        """The report text (worker thread); reused while its inputs are unchanged."""
        inputs = report_inputs(live.session)
        if self._last is None or self._last[0] != inputs:
            self._last = (inputs, derive_prolong(live.session))
        return self._last[1]

    def show(self, view: str) -> None:
        """Show the report."""
        self.query_one("#prolong-report", Static).update(Text(printable(view)))  # it quotes the log
