"""Test support for the policy screens: small DSH logs a tapedeck host owns, and a minimal host app.

``LogBuilder`` writes plain DSH JSONL (with a ``tapedeck/host`` event, so the TUI treats the session as
controllable) and can run core planners over what it has so far, the way a host would append their events.
``PolicyHarness`` is the smallest app the screens need: an ``app.live`` LiveSession whose ``SessionUpdated``
messages are forwarded to every screen on the stack.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import orjson
from rich.console import Console, RenderableType
from rich.text import Text
from textual.app import App
from textual.binding import Binding
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual.worker import WorkerCancelled

from core.read.session import Session
from tests.messages import tool_result_message
from tests.tui.logs import hold_host
from tui.alerts import AlertBoard
from tui.live import LiveSession, SessionUpdated
from tui.screens.alerts import AlertsScreen
from tui.screens.policy_screen import OutcomePanel

HEADER = {
    "type": "session",
    "version": 0,
    "id": "demo-1",
    "createdAt": 1,
    "cwd": "/nonexistent/tapedeck-demo",
    "delegationDepth": 0,
}
HOST = {
    "pid": 1,
    "version": "0.1.0",
    "provider": "scripted",
    "model": "demo",
    "inbox": "control.jsonl",
    "workspace": "/nonexistent/tapedeck-demo",
    "tasks": ["fix the parser"],
    "resumed": False,
}
MODEL_SOURCE = {"kind": "model", "provider": "scripted", "model": "demo"}
ORDER = ("type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp", "ignorable")


class LogBuilder:
    """Accumulates events with contiguous seqs; ``write`` saves them as ``<dir>/session.jsonl``."""

    def __init__(self, header: dict[str, Any] = HEADER, host: bool = True) -> None:
        self.header = header
        self.events: list[dict[str, Any]] = []
        self.turn = 0
        self.step = 0
        if host:
            self.add({"type": "tapedeck/host", "data": HOST, "ignorable": True})

    # raw events ---------------------------------------------------------------------------------------
    def add(self, *events: dict[str, Any]) -> list[int]:
        """Append events (without seq/time); returns their seqs."""
        seqs = []
        for event in events:
            seq = len(self.events)
            event = {**event, "seq": seq, "time": 1000 + seq}
            self.events.append({k: event[k] for k in ORDER if k in event})
            seqs.append(seq)
        return seqs

    def session(self) -> Session:
        """The projection of everything added so far."""
        return Session.from_events(self.header, self.events)

    def plan(self, planner: Callable[[Session], list[dict[str, Any]]]) -> list[int]:
        """Run a planner over the current projection and append what it plans."""
        return self.add(*planner(self.session()))

    # turn structure -----------------------------------------------------------------------------------
    def start_turn(self, prompt: str) -> None:
        """``turn/start`` and the user's message."""
        self.turn += 1
        self.step = 0
        self.add({"type": "turn/start", "data": {"turn": self.turn}})
        self.start_step()
        self.add(
            {
                "type": "user/message",
                "data": {
                    "id": f"u-{self.turn}",
                    "role": "user",
                    "content": [{"type": "text", "text": prompt}],
                    "source": {"kind": "user"},
                },
                "surfaceOp": "append",
            }
        )

    def start_step(self) -> None:
        """``step/start`` of the next step."""
        self.step += 1
        self.add({"type": "step/start", "data": {"turn": self.turn, "step": self.step}})

    def end_step(self) -> None:
        """``step/end`` of the current step."""
        self.add({"type": "step/end", "data": {"turn": self.turn, "step": self.step}})

    def end_turn(self) -> None:
        """``turn/end`` (completed)."""
        self.add({"type": "turn/end", "data": {"turn": self.turn, "reason": {"kind": "completed"}}})

    def say(self, text: str) -> int:
        """An assistant message with text only."""
        return self._assistant([{"type": "text", "text": text}])

    def _assistant(self, content: list[dict[str, Any]]) -> int:
        message = {
            "id": f"a-{self.turn}-{self.step}",
            "role": "assistant",
            "content": content,
            "source": MODEL_SOURCE,
        }
        (seq,) = self.add(
            {
                "type": "assistant/message",
                "data": {"turn": self.turn, "step": self.step, "message": message},
                "surfaceOp": "append",
            }
        )
        return seq

    def call(
        self, name: str, args: dict[str, Any], result: str, text: str = "", is_error: bool = False
    ) -> int:
        """An assistant message with one tool call, the call and its result; returns the result's seq."""
        (seq,) = self.calls([(name, args, result, is_error)], text)
        return seq

    def calls(self, calls: list[tuple[str, dict[str, Any], str, bool]], text: str = "") -> list[int]:
        """One assistant message with parallel tool calls, then each call and its result; returns result seqs."""
        base = len(self.events)
        ids = [f"c{base}-{i}" for i in range(len(calls))]
        content = [{"type": "text", "text": text}] if text else []
        for call_id, (name, args, _, _) in zip(ids, calls, strict=True):
            content.append(
                {"type": "tool-call", "id": call_id, "name": name, "arguments": orjson.dumps(args).decode()}
            )
        self._assistant(content)
        seqs = []
        for call_id, (name, args, result, is_error) in zip(ids, calls, strict=True):
            arguments = orjson.dumps(args).decode()
            (call_seq,) = self.add(
                {
                    "type": "tool/call",
                    "data": {
                        "turn": self.turn,
                        "step": self.step,
                        "callId": call_id,
                        "name": name,
                        "arguments": arguments,
                    },
                }
            )
            message = tool_result_message(call_id, result, is_error)
            seqs += self.add(
                {
                    "type": "tool/result",
                    "data": {"turn": self.turn, "step": self.step, "message": message},
                    "sourceEventSeqs": [call_seq],
                    "surfaceOp": "append",
                }
            )
        return seqs

    # files --------------------------------------------------------------------------------------------
    def write(self, directory: Path) -> Path:
        """Write the log as ``directory/session.jsonl`` and return its path."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "session.jsonl"
        path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [self.header, *self.events]))
        if any(e.get("type") == "tapedeck/host" for e in self.events):
            hold_host(path)  # the session's host is live for the rest of the test
        return path


def append_events(path: Path, events: list[dict[str, Any]]) -> None:
    """Append events to a written log as a host would (seq continues from the file's last event)."""
    lines = path.read_bytes().splitlines()
    seq = len(lines) - 1
    with path.open("ab") as f:
        for i, event in enumerate(events):
            full = {**event, "seq": seq + i, "time": 1000 + seq + i}
            f.write(orjson.dumps({k: full[k] for k in ORDER if k in full}) + b"\n")


def read_inbox(path: Path) -> list[dict[str, Any]]:
    """The control requests written beside a log."""
    inbox = path.parent / "control.jsonl"
    if not inbox.exists():
        return []
    return [orjson.loads(line) for line in inbox.read_bytes().splitlines() if line.strip()]


def text(widget: Static) -> str:
    """The plain text a Static shows."""
    content = widget.content
    return content.plain if isinstance(content, Text) else str(content)


def plain(renderable: RenderableType, width: int = 200) -> str:
    """The text a Rich renderable draws at ``width`` columns, without styles."""
    console = Console(width=width, file=io.StringIO(), record=True)
    console.print(renderable)
    return console.export_text()


def cells(table: DataTable[Any], key: str) -> list[str]:
    """The plain text of one table row."""
    return [c.plain if isinstance(c, Text) else str(c) for c in table.get_row(key)]


def panel(app: App[Any]) -> str:
    """What the outcome panel of the policy screen shows."""
    screen = next(s for s in app.screen_stack if hasattr(s, "shown_generation"))
    return text(screen.query_one(OutcomePanel))


class PolicyHarness(App[None]):
    """One live session and one policy screen on top of an empty base screen; help's binding, which a screen's hint
    names (the app's own, unshown: the footers are the screen's)."""

    BINDINGS: ClassVar[list[Binding]] = [Binding("question_mark", "help", "Help", show=False, id="app.help")]

    def __init__(self, path: Path, screen: Callable[[], Screen[Any]], *, follow: bool = False) -> None:
        super().__init__()
        self.live = LiveSession(path, self.post_message, follow=follow, interval=0.02, use_watchfiles=False)
        self._screen = screen

    def on_mount(self) -> None:
        """Start following the log and open the screen under test."""
        self.run_worker(self.live.run, thread=True, group="live")
        self.push_screen(self._screen())

    def on_session_updated(self, message: SessionUpdated) -> None:
        """Forward updates to every screen, as the real app does."""
        for screen in self.screen_stack:
            screen.post_message(
                SessionUpdated(message.generation, message.reset, message.start, message.end, message.epoch)
            )

    def on_unmount(self) -> None:
        """Stop the follower thread."""
        self.live.stop()


class AlertsHarness(App[None]):
    """The Alerts screen alone, on a board the test fills."""

    def __init__(self, board: AlertBoard) -> None:
        super().__init__()
        self.board = board

    def on_mount(self) -> None:
        """Open the Alerts screen."""
        self.push_screen(AlertsScreen(self.board))


async def settle(pilot: Pilot[Any], until: Callable[[], bool] = lambda: True, timeout: float = 60.0) -> None:
    """Wait until the log is loaded, every policy screen shows its latest generation and ``until()`` holds.

    The deadline is generous on purpose: a loaded machine only makes this slower, never different.
    """
    app = pilot.app
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause(0.01)
        busy = [w for w in app.workers if w.group != "live" and not w.is_finished]
        if busy:
            # An exclusive worker replaced by a newer one ends cancelled: the next round waits for the newer one.
            with contextlib.suppress(WorkerCancelled):
                await app.workers.wait_for_complete(busy)
            continue
        live = app.live  # type: ignore[attr-defined]
        screens = [s for s in app.screen_stack if hasattr(s, "shown_generation")]
        if live.ready and all(s.shown_generation == live.generation for s in screens) and until():
            await pilot.pause()
            return
    raise AssertionError("the policy screen did not settle")


async def tab_to(pilot: Pilot[Any], widget: Widget, presses: int = 4) -> None:
    """Press Tab until ``widget`` has the focus, at most ``presses`` times (it must get it)."""
    for _ in range(presses):
        if pilot.app.focused is widget:
            break
        await pilot.press("tab")
    assert pilot.app.focused is widget, pilot.app.focused


async def rewind_rejected(pilot: Pilot[Any], path: Path, error: str) -> None:
    """On the checkpoints screen: rewind, confirm it, and answer the request it sends as rejected with ``error``;
    returns once the outcome panel shows the rejection."""
    from core.control.inbox import outcome_event
    from tui.screens.confirm import ConfirmScreen

    app = pilot.app
    await pilot.press("w")
    await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
    await pilot.press("y")
    await settle(pilot, lambda: len(read_inbox(path)) == 1)
    (request,) = read_inbox(path)
    append_events(path, [outcome_event(request, "rejected", error=error)])
    await settle(pilot, lambda: "rejected" in panel(app))
