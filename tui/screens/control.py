"""Operator control from any screen: checkpoint, pause/resume, message and stop, and the host's state.

``ControlActions`` is mixed into the app, whose bindings include ``CONTROL_BINDINGS``: they work on every screen (so the main screen, ``?`` and the
palette offer them), each request goes through ``LiveSession.send`` from a worker and is tracked in the shared
``RequestLog``, and a timer re-reads the host state and the outcomes twice a second: the header shows the state,
each final outcome is announced once (also of a request core says may have been written), and a request whose
host exited is withdrawn and shown cancelled.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import App
from textual.binding import Binding

from core.control.host_state import KIND_DSH, exited_at
from core.control.inbox import APPLIED, CANCELLED, EXPIRED, PENDING, REJECTED
from core.control.once import WAITING, held_back
from core.shared.errors import TapedeckError
from tui.failures import unexpected
from tui.keymap import key_of
from tui.screens.confirm import AskScreen, ConfirmScreen
from tui.screens.dialog import Dialog
from tui.screens.policy_screen import FINAL, NOT_SENT, UNANSWERED, UNSURE, TrackedRequest, requests_for
from tui.screens.toasts import sentence, toast_seconds

HOST_POLL_SECONDS = 0.5
CONTROL_BINDINGS: list[Binding] = [
    Binding("K", "control_checkpoint", "Checkpoint", show=False, id="control.checkpoint"),
    Binding("P", "control_pause", "Pause/resume", show=False, id="control.pause"),
    Binding("m", "control_message", "Message", show=False, id="control.message"),
    Binding("S", "control_stop", "Stop…", show=False, id="control.stop"),
]
CONTROL_ACTIONS = frozenset(b.action for b in CONTROL_BINDINGS)
# the demo's first toast: binding id, what its key does
FIRST_RUN_KEYS = (
    ("control.checkpoint", "checkpoint"),
    ("control.pause", "pause/resume"),
    ("control.message", "message the agent"),
    ("control.stop", "stop"),
    ("app.checkpoints", "checkpoints & rewind"),
    ("app.folds", "folds & expand"),
    ("app.config", "config"),
    ("app.help", "every key"),
)


def message_ask(app: App[Any], title: str) -> AskScreen:
    """The dialog that asks for a message to the agent, titled ``title``: when the model reads it, and the keys
    that send and cancel it (as the keymap binds them)."""
    cancel = key_of(app, "policy.ask.cancel")
    return AskScreen(title, f"The model reads it at its next step. Enter sends, {cancel} cancels.")


def what_stop_does(kind: object) -> str:
    """What a stop does to a host of ``kind`` (a DSH bridge's, else ours), as its confirm says it."""
    if kind == KIND_DSH:
        return ("DSH cancels the turn in flight (the model call and any running tool) and ends it as aborted with "
                "your reason. DSH keeps running: a message starts the next turn.")  # fmt: skip
    return ("The host interrupts the model call in flight and any running tool, ends the turn as aborted and exits. "
            "`tapedeck run --resume` can continue the session later.")  # fmt: skip


# what became of a request, after the phrase of what it asked (``TrackedRequest.asked``); the reason follows
FATES = {
    PENDING: "waits",
    REJECTED: "was refused",
    CANCELLED: "was cancelled",
    EXPIRED: "expired before it was applied",
    NOT_SENT: "was not sent",
    UNSURE: "may have been sent",
}


def outcome_said(item: TrackedRequest) -> str:
    """The toast of what became of ``item``, a sentence in the operator's terms: what applying it did
    (``slice.fold.pinSteps set to 2 (was 0).``), else what it asked and its fate, with the host's reason
    (``The change of x to 2 was refused: …``)."""
    if item.state == APPLIED:
        return sentence(item.reason or f"{item.asked} was applied")
    fate = FATES.get(item.state)
    said = f"{item.asked} {fate}" if fate else f"whether {item.asked} took effect is not known"  # unknown
    return sentence(f"{said}: {item.reason}" if item.reason else said)


def first_run_hint(app: App[Any]) -> str:
    """The demo's first toast: the keys that act on the agent, as ``app``'s keymap binds them."""
    return "You are the operator: " + " · ".join(f"{key_of(app, i)} {what}" for i, what in FIRST_RUN_KEYS)


class ControlActions:
    """The app's operator actions (a mixin for ``TapedeckApp``)."""

    live: Any
    _announced: set[int]
    _watch_failing: bool  # a poll of the host watch failed, told, and none got through since
    _outcomes_told: str | None  # why the outcomes cannot come in, as told (said once while it lasts)
    _outcomes_seen: list[TrackedRequest]  # the requests as the last poll found them
    _host_seen: Any  # the host state the last poll that got through told the screens
    control_dialog: Dialog[Any] | None = None  # the message or stop dialog up now

    def start_host_watch(self) -> None:
        """Poll the host state and the outcomes of sent requests (call once the app is mounted)."""
        self._announced = set()
        self._watch_failing = False
        self._outcomes_told = None
        self._outcomes_seen = []
        self._host_seen = None
        self.set_interval(HOST_POLL_SECONDS, self._poll_host)  # type: ignore[attr-defined]

    def check_control(self, action: str) -> bool | None:
        """Control keys are disabled (shown dimmed) while no live tapedeck host or DSH bridge runs the open
        session."""
        if action not in CONTROL_ACTIONS:
            return True
        return None if self.control_unavailable() is not None else True

    def control_unavailable(self) -> str | None:
        """Why the operator keys cannot act now, or None while a live tapedeck host (or DSH bridge) runs the open
        session."""
        live = self.live
        if live is None:
            return "no session is open."
        if live.read_only_reason is not None:
            return str(live.read_only_reason)
        if live.host.live:
            return None
        if live.host.state == "exited" and live.host.kind == KIND_DSH:
            return (
                f"the DSH bridge exited {exited_at(live.host.since)}; it answers again once DSH runs the session "
                "with the bridge loaded (`tapedeck bridge status`)."
            )
        if live.host.state == "exited":
            return f"no live host ({live.how_host_ended(live.host)}); `tapedeck run --resume` continues the session."
        return "no live tapedeck host runs this session."

    async def run_action(self, action: Any, default_namespace: Any = None, namespaces: Any = None) -> bool:
        """Run an action; a control key that cannot act says why in a toast instead of doing nothing."""
        if await super().run_action(action, default_namespace, namespaces):  # type: ignore[misc]
            return True
        if action in CONTROL_ACTIONS:
            label = next(b.description for b in CONTROL_BINDINGS if b.action == action).rstrip("…")
            why = self.control_unavailable() or "the session could not act on it just now; try again."
            self.notify(sentence(why), title=f"{label} not sent", timeout=6)  # type: ignore[attr-defined]
            return True
        return False

    # the actions ------------------------------------------------------------------------------------------
    def action_control_checkpoint(self) -> None:
        """Ask for an objective, then place a checkpoint now."""

        def asked(objective: str | None) -> None:
            if objective is not None:
                text = objective.strip()
                self.send_control("checkpoint", {"objective": text} if text else {}, f"checkpoint: {text}" if text else "checkpoint")

        self.push_screen(  # type: ignore[attr-defined]
            AskScreen(
                "Place a checkpoint", "What the exploration after it is for (optional). Enter places it."
            ),
            asked,
        )

    def action_control_pause(self) -> None:
        """Pause the host before its next model or tool call, or let a paused host go on (as the header shows it);
        a pause (or resume) sent from here that the host has not answered yet is not sent again (one whose append
        may never have been written, ``unsure``, does not hold the key: a second pause leaves a paused host paused)."""
        if self.live is None:
            return
        op = "resume" if self.live.shown_host.state in ("pausing", "paused") else "pause"
        if not self._waits(op):
            self.send_control(op, {}, op)

    def _waits(self, op: str) -> bool:
        """Whether an ``op`` sent from here waits for the host's answer (one whose append may never have been
        written, ``unsure``, does not): then a toast says it is not sent twice."""
        waiting = any(i.op == op and i.state in UNANSWERED for i in requests_for(self.live).items())
        held = held_back(op, WAITING if waiting else None)
        if held is not None:
            self.notify(held, title="Not sent", timeout=6)  # type: ignore[attr-defined]
        return held is not None

    def action_control_message(self) -> None:
        """Type a message the model sees at its next step."""

        def asked(text: str | None) -> None:
            self.control_dialog = None
            if text and text.strip():
                self.send_control("message", {"text": text.strip()}, f"message: {text.strip()}")

        self.control_dialog = message_ask(self, "Message the agent")  # type: ignore[arg-type]
        self.push_screen(self.control_dialog, asked)  # type: ignore[attr-defined]

    def action_control_stop(self) -> None:
        """Confirm, then stop the run now (the model call and any running tool are interrupted); not asked again
        while a stop sent from here waits for the host's answer."""
        if self.live is None or self._waits("stop"):
            return

        def decided(confirmed: bool | None) -> None:
            self.control_dialog = None
            if confirmed:
                self.send_control("stop", {"reason": "stopped by the operator from the TUI"}, "stop")

        self.control_dialog = ConfirmScreen("Stop the agent now?", Text(what_stop_does(self.live.host.kind)), "Stop")
        self.push_screen(self.control_dialog, decided)  # type: ignore[attr-defined]

    # sending and watching ---------------------------------------------------------------------------------
    def send_control(self, op: str, args: dict[str, Any], label: str) -> None:
        """Send one request from a worker; its outcome is announced when it arrives."""
        if self.live is None:
            return
        requests = requests_for(self.live)
        item = requests.add(op, label, args)
        self._show_outcomes(requests.items())
        self._send_control(item, op, args)

    @work(thread=True, group="control-send", exit_on_error=False)
    def _send_control(self, item: TrackedRequest, op: str, args: dict[str, Any]) -> None:
        live = self.live
        requests = requests_for(live)
        try:
            request = live.send(op, args)
            requests.sent(item, str(request["id"]))
            self.call_from_thread(self.notify, sentence(f"{item.asked} was sent"), timeout=3)  # type: ignore[attr-defined]
        except (TapedeckError, OSError) as exc:
            failed = requests.send_failed(item, exc)
            if failed.state == NOT_SENT:
                self._announced.add(item.number)
                title, severity = "Not sent", "error"
            else:  # it may have been written: its outcome, if one comes, is announced as any other
                title, severity = "May have been sent", "warning"
            self.call_from_thread(  # type: ignore[attr-defined]
                self.notify, outcome_said(failed), title=title, severity=severity, timeout=8
            )
        except Exception as exc:  # noqa: BLE001 - a bug: told, and the request not left 'sending' for good
            requests.failed(item, f"{unexpected(exc)}; look at the inbox before sending it again")
            self._announced.add(item.number)
            said = outcome_said(requests.items()[item.number - 1])
            self.call_from_thread(  # type: ignore[attr-defined]
                self.notify, said, title="Send failed", severity="error", timeout=toast_seconds("error")
            )
        self.call_from_thread(self._show_outcomes, requests.items())  # type: ignore[attr-defined]

    def _poll_host(self) -> None:
        if self.live is not None:
            self._watch_host(self.live)

    # exit_on_error=False: an error is reported by ``_watch_failed``; only one while the app closes is dropped
    @work(thread=True, group="control-watch", exclusive=True, exit_on_error=False)
    def _watch_host(self, live: Any) -> None:
        try:
            host = live.poll_host()  # what follows goes by this reading: host.json is not read again
            if live.outcomes_problem != self._outcomes_told:  # the outcomes cannot come in: said once while it lasts
                self.call_from_thread(self._outcomes_trouble, live.outcomes_problem)  # type: ignore[attr-defined]
            items = requests_for(live).poll(live.outcome_for, lambda: live.host_gone(host), live.withdraw)
            fresh = [
                i for i in items if i.state in FINAL and i.number not in self._announced and i.state != NOT_SENT
            ]
            self._announced.update(i.number for i in fresh)
            refused = None if self.control_dialog is None else live.read_only_reason or live.host_gone(host)
            moved = items != self._outcomes_seen  # an outcome on its way (acknowledged, pending) shows too
            self._outcomes_seen = items
            changed = host != self._host_seen  # since the last poll that got through (not one that failed)
            self._host_seen = host
            self.call_from_thread(self._host_changed, changed, fresh, refused, items if moved else None)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - a bug here is told, and the next poll tries again
            self.call_from_thread(self._watch_failed, unexpected(exc))  # type: ignore[attr-defined]

    def _watch_failed(self, error: str) -> None:
        """Tell the operator that a poll of the host failed, once while polls keep failing (whatever each one's
        words), again once one got through and another fails; the next poll runs as due."""
        self.log.error(f"host watch: {error}")  # type: ignore[attr-defined]
        if not self._watch_failing:
            self._watch_failing = True
            self._tell_watch_failed(error)

    def _outcomes_trouble(self, problem: str | None) -> None:
        """Tell the operator why the outcomes of requests sent cannot come in (``problem``), once while it lasts;
        None: they can again."""
        if problem != self._outcomes_told:
            self._outcomes_told = problem
            if problem is not None:
                self._tell_watch_failed(problem)

    def _tell_watch_failed(self, error: str) -> None:
        self.notify(  # type: ignore[attr-defined]
            f"Reading the host's state and the requests' outcomes failed on {error}. The watch goes on, every "
            f"{HOST_POLL_SECONDS} s; the header and the outcomes may lag until a poll succeeds.",
            title="Host watch failed",
            severity="error",
            timeout=toast_seconds("error"),
        )

    def _show_outcomes(self, items: list[TrackedRequest]) -> None:
        """Redraw the outcome panel of every screen that has one."""
        for screen in self.screen_stack:  # type: ignore[attr-defined]
            show = getattr(screen, "show_outcomes", None)
            if show is not None:
                show(items)

    def _host_changed(
        self, changed: bool, fresh: list[TrackedRequest], refused: str | None, items: list[TrackedRequest] | None
    ) -> None:
        self._watch_failing = False  # this poll got through: a failure from here on is told again
        if self.control_dialog is not None:  # it says at once what sending it would say
            self.control_dialog.warn(None if refused is None else f"As things stand nothing is sent: {refused}")
        for item in fresh:
            severity = "information" if item.state == APPLIED else "warning"
            self.notify(outcome_said(item), title=item.state.capitalize(), severity=severity, timeout=toast_seconds(severity))  # type: ignore[attr-defined]
        if items is not None:
            self._show_outcomes(items)
        if changed:
            self.refresh_bindings()  # type: ignore[attr-defined]
            for screen in self.screen_stack:  # type: ignore[attr-defined]
                refresh = getattr(screen, "refresh_host", None)
                if refresh is not None:
                    refresh()
