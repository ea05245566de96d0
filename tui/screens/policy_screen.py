"""Operator actions and their outcomes, shared by the policy screens.

- ``RequestLog`` remembers the control requests this TUI sent for one live session. A request is *sending*
  until the inbox write returns, then *pending* until its final ``tapedeck/control`` outcome shows up in the
  log (the host acknowledges ``rewind``/``expand``/``config.set`` at once and applies them at its next step),
  then *applied*, *rejected*, *cancelled* or *expired* (with the host's reason). A request whose host exits
  before answering is withdrawn and shown *cancelled* with the exit time. One that could not be written is
  *not sent*; one whose remote append lost its status (core's ``MaybeWritten``) is *unsure* and still watched,
  so an outcome for it still shows.
- ``OutcomePanel`` lists the latest of them under every policy screen.
- ``PolicyScreen`` is the base of the policy screens: it shows who may act (a session this host does not own is
  read-only, and the banner says why), re-derives its view in a thread worker on every ``SessionUpdated``
  (the UI thread never reads the log or runs a planner), disables action keys while read-only and sends
  requests through ``LiveSession.send`` from a worker.
- ``fill_table`` (its columns fitted to the rows it gets: ``fit_columns``) and ``logged`` are the small table and log
  helpers the screens share.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.console import RenderableType
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.render import measure
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from core.control.inbox import APPLIED, CANCELLED, EXPIRED, FINAL, PENDING, REJECTED, UNKNOWN
from core.read.session import Session
from core.read.summary import human_chars
from core.remote.inbox import MaybeWritten
from core.shared.errors import TapedeckError
from core.shared.text import js_json, printable, short_session
from core.shared.values import int_or_none
from tui.cells import cut
from tui.failures import unexpected
from tui.screens.confirm import ConfirmScreen
from tui.screens.stacked import while_stacked
from tui.screens.toasts import rows_of, stack_in, stack_over_rows
from tui.widgets.footer import PriorityFooter
from tui.widgets.header import TITLE_MIN, clip_title

SENDING = "sending"  # this TUI's own states of a request, before and instead of the host's outcomes
NOT_SENT = "not sent"
UNSURE = "unsure"  # the append's fate was lost: it may have been written, so its outcome is still looked for
# the states of a request on its way or taken and not answered yet (not ``unsure``: that one may never have reached
# the inbox, and would stay so for as long as the host runs)
UNANSWERED = (SENDING, PENDING)
LABEL_CELLS = 60  # a request's label (its toasts, the outcome panel) is cut to these cells, the cut marked
NARROW_WIDTH = 70  # policy screens narrower than this stack their side pane under the table

_STATE_STYLE = {
    SENDING: "dim",
    PENDING: "yellow",
    APPLIED: "bold green",
    REJECTED: "bold red",
    CANCELLED: "bold magenta",
    EXPIRED: "bold magenta",
    UNKNOWN: "bold yellow",
    NOT_SENT: "bold red",
    UNSURE: "bold yellow",
}


@dataclass(frozen=True, slots=True)
class TrackedRequest:
    """One operator request as the TUI knows it: what was asked and, once known, how the host answered."""

    number: int
    op: str
    label: str
    args: Mapping[str, Any] | None = None  # the request's arguments, as sent
    request_id: str | None = None
    outcome: Mapping[str, Any] | None = None
    failure: str | None = None
    gone: str | None = None  # the host exited before answering (the request was withdrawn)
    unwithdrawn: str | None = None  # why withdrawing it, once its host was gone, failed
    unsure: str | None = None  # why it may or may not have been written, until an outcome says it was

    @property
    def state(self) -> str:
        """``sending``, ``pending``, a final outcome (``applied`` … ``unknown``), ``not sent`` or ``unsure``."""
        if self.failure is not None:
            return NOT_SENT
        if self.request_id is None:
            return SENDING
        if self.gone is not None:
            return CANCELLED if self.unwithdrawn is None else UNKNOWN
        outcome = (self.outcome or {}).get("outcome")
        if outcome in FINAL:
            return outcome
        return UNSURE if self.unsure is not None and self.outcome is None else PENDING

    @property
    def reason(self) -> str:
        """Why it was rejected, cancelled or not sent, what applying it did, or what it waits for."""
        if self.failure is not None:
            return self.failure
        if self.request_id is None:
            return ""
        if self.state == UNSURE:
            return self.unsure or ""
        if self.gone is not None:
            if self.unwithdrawn is not None:
                return f"{self.gone}; withdrawing the request failed, so a later host may still apply it: {self.unwithdrawn}"
            return f"{self.gone}; the request was withdrawn"
        if self.state == PENDING:
            if self.outcome is not None:
                detail = self.outcome.get("detail")
                if isinstance(detail, Mapping) and detail.get("waitingFor") == "idle":  # the DSH bridge's rewind, expand
                    return "acknowledged; DSH applies it once its turn ends (at idle)"
                return "acknowledged; the host applies it before its next model call"
            return "waiting for the host"
        assert self.outcome is not None
        if self.state == APPLIED:
            return applied_words(self.op, self.outcome.get("detail"))
        return describe(self.outcome.get("error"))

    @property
    def asked(self) -> str:
        """What the request asks, as the noun phrase a sentence about its fate starts with (``asked_words``)."""
        return asked_words(self.op, self.args)


def asked_words(op: str, args: Mapping[str, Any] | None = None) -> str:
    """What a request of ``op`` with ``args`` asks, as the noun phrase every toast about it starts with (an open
    session's and the fleet's alike): ``the change of slice.fold.pinSteps to 2``, ``the rewind to checkpoint 3``,
    ``the pause``, ``your message``."""
    args = args or {}
    if op == "config.set" and "key" in args:
        return f"the change of {printable(str(args['key']))} to {said_value(args.get('value'))}"
    if op == "rewind" and args.get("markId") is not None:
        return f"the rewind to checkpoint {args['markId']}"
    if op == "expand" and "seq" in args:
        return f"the expansion of seq {args['seq']}"
    return ASKED.get(op, f"the {printable(op)} request")


ASKED = {  # what a request of each op asks, when its arguments add nothing to say
    "checkpoint": "the checkpoint",
    "rewind": "the rewind to the newest checkpoint",
    "pause": "the pause",
    "resume": "the resume",
    "stop": "the stop",
    "message": "your message",
}
VALUE_CELLS = 40  # a config value an outcome names is cut to these cells, the cut marked
# where a config.set the DSH bridge applied takes effect (its detail's ``applies``), in our words
BRIDGE_APPLIES = {
    "next request of this session": "from the session's next request",
    "DSH setting (live)": "live in DSH",
}


def said_value(value: Any) -> str:
    """A config value as an outcome names it: its JSON (``2``, ``"deepseek-chat"``), or ``unset``."""
    return "unset" if value is None else cut(printable(js_json(value)), VALUE_CELLS)


def applied_words(op: str, detail: Any) -> str:
    """What applying an ``op`` request did, in words, from its outcome's detail as our host or the DSH bridge gives
    it: ``slice.fold.pinSteps set to 2 (was 0)``, ``checkpoint 3 placed at seq 120``; the host's own words when
    the detail is text, "" when it says nothing these words know (an op of no known words, a detail of no known
    shape)."""
    if isinstance(detail, str):
        return detail
    words = _APPLIED.get(op)
    return words(detail if isinstance(detail, Mapping) else {}) if words is not None else ""


def _config_set(detail: Mapping[str, Any]) -> str:
    if "key" not in detail:
        return ""
    key = printable(str(detail["key"]))
    if "new" in detail:  # our host: the value in force now and the one before
        return f"{key} set to {said_value(detail['new'])} (was {said_value(detail.get('old'))})"
    value = detail.get("value")  # the DSH bridge: the value sent (null drops it) and where it applies
    now = "back to DSH's default" if value is None else f"set to {said_value(value)}"
    where = BRIDGE_APPLIES.get(str(detail.get("applies")), "")
    return f"{key} {now}, {where}" if where else f"{key} {now}"


def _checkpoint(detail: Mapping[str, Any]) -> str:
    if detail.get("markId") is None:
        return ""
    at = detail.get("anchor", detail.get("seq"))  # our host's anchor, the bridge's seq
    said = f"checkpoint {detail['markId']}" + (f" placed at seq {at}" if at is not None else " placed")
    goal = detail.get("objective")
    return f"{said}: {cut(printable(str(goal)), LABEL_CELLS)}" if goal else said


def _rewind(detail: Mapping[str, Any]) -> str:
    done = rewind_outcome(detail)
    return f"rewound to checkpoint {detail['markId']}: {done}" if detail.get("markId") is not None else done


def _expand(detail: Mapping[str, Any]) -> str:
    # the bridge names the original's seq, our host the seq asked (a tool result's, or its fold's)
    original = detail.get("original", detail.get("seq"))
    return f"the original of seq {original} is back on the surface" if original is not None else ""


def _message(detail: Mapping[str, Any]) -> str:
    if "note" in detail or detail.get("kind") == "note":
        return "your note is in the log; the model does not see it"
    when = {"steer": "next step", "queue": "next turn"}.get(str(detail.get("mode")), detail.get("queued"))
    return f"your message reaches the model at its {printable(str(when))}" if when else ""


def _resume(detail: Mapping[str, Any]) -> str:
    if detail.get("wasPaused") is False:
        return "the agent was not paused: nothing to resume"
    return "the agent goes on"


def _stop(detail: Mapping[str, Any]) -> str:
    reason = detail.get("reason")
    return "the agent was stopped" + (f" ({cut(printable(str(reason)), LABEL_CELLS)})" if reason else "")


_APPLIED: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "config.set": _config_set,
    "checkpoint": _checkpoint,
    "rewind": _rewind,
    "expand": _expand,
    "message": _message,
    "pause": lambda _detail: "the agent holds before its next model or tool call",
    "resume": _resume,
    "stop": _stop,
}


def rewind_outcome(detail: Any) -> str:
    """What a rewind did, against what its sender previewed: ``previewed 12 nodes / 4.4k chars at seq 780;
    applied 22 / 8.0k at seq 802: the agent ran 2 more steps`` (the DSH bridge reports no chars nor steps)."""
    if not isinstance(detail, Mapping):
        return describe(detail)
    chars = detail.get("foldedChars")
    size = f" / {human_chars(int(chars))}" if isinstance(chars, int) and not isinstance(chars, bool) else ""
    applied = f"{detail.get('foldedNodes')}{size} at seq {detail.get('seq')}"
    preview = detail.get("preview")
    if not isinstance(preview, Mapping):
        nodes = detail.get("foldedNodes")
        return f"folded {nodes} node{'' if nodes == 1 else 's'}{size + ' chars' if size else ''}"
    moved = ""
    if "stepsSince" in preview:
        steps = int_or_none(preview.get("stepsSince")) or 0  # a log's value of another type: none ran
        moved = (
            ": nothing changed in between"
            if steps == 0
            else f": the agent ran {steps} more step{'s' if steps != 1 else ''}"
        )
    return (
        f"previewed {preview.get('nodes')} node{'' if preview.get('nodes') == 1 else 's'} / {human_chars(int_or_none(preview.get('chars')) or 0)} chars at seq "
        f"{preview.get('seq')}; applied {applied}{moved}"
    )


def describe(value: Any) -> str:
    """A short human form of an outcome's ``error`` or ``detail`` (a string, a mapping or any JSON value): a
    mapping with no message is said key by key, each key then what is wrong with it (``slice.fold.pinSteps: must
    be 0 or more; got: -1``), as the screens word their own errors."""
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        message = value.get("message")
        code = value.get("code")
        if isinstance(message, str):
            return f"{message} ({code})" if isinstance(code, str) else message
        return "; ".join(f"{k}: {v if isinstance(v, str) else js_json(v)}" for k, v in value.items())
    return js_json(value)


class RequestLog:
    """The requests sent for one live session; safe to update from worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[TrackedRequest] = []

    def add(self, op: str, label: str, args: Mapping[str, Any] | None = None) -> TrackedRequest:
        """Record a request of ``args`` that is about to be written, named by ``label`` cut to ``LABEL_CELLS`` (a
        message or an objective is the operator's text, of any length)."""
        with self._lock:
            item = TrackedRequest(len(self._items) + 1, op, cut(label, LABEL_CELLS), args)
            self._items.append(item)
            return item

    def _update(self, number: int, **changes: Any) -> None:
        with self._lock:
            self._items[number - 1] = replace(self._items[number - 1], **changes)

    def sent(self, item: TrackedRequest, request_id: str) -> None:
        """The inbox write returned this request id: the request now waits for its outcome."""
        self._update(item.number, request_id=request_id)

    def failed(self, item: TrackedRequest, message: str) -> None:
        """The request could not be written to the inbox."""
        self._update(item.number, failure=message)

    def send_failed(self, item: TrackedRequest, exc: Exception) -> TrackedRequest:
        """The inbox write raised ``exc``; returns the request as now known: ``unsure`` (still watched for its
        outcome) when core says the line may have been written, else ``not sent``."""
        if isinstance(exc, MaybeWritten) and exc.request_id is not None:
            self._update(item.number, request_id=exc.request_id, unsure=str(exc))
        else:
            self.failed(item, str(exc))
        return self.items()[item.number - 1]

    def items(self) -> list[TrackedRequest]:
        """Every request, oldest first."""
        with self._lock:
            return list(self._items)

    def poll(
        self,
        outcome_for: Callable[[str], Mapping[str, Any] | None],
        host_gone: Callable[[], str | None] | None = None,
        withdraw: Callable[[str], None] | None = None,
    ) -> list[TrackedRequest]:
        """Look up the outcome of every pending request (call from a worker thread); returns ``items()``.

        When ``host_gone`` says the host exited, a request it did not answer before it exited is withdrawn (so no
        later host applies it) and shown cancelled with that reason; when the withdrawal raises, ``unknown`` with
        core's error instead (final: not withdrawn again), and the other requests are still polled.
        """
        gone: str | None = None
        for item in self.items():
            if item.state not in (PENDING, UNSURE) or item.request_id is None:
                continue
            outcome = outcome_for(item.request_id)
            if outcome is not None:
                self._update(item.number, outcome=outcome)
            if outcome is None or outcome.get("outcome") not in FINAL:
                if host_gone is not None and gone is None:
                    gone = host_gone() or ""
                if gone:
                    outcome = outcome_for(item.request_id)  # it may have answered just before it exited
                    if outcome is not None and outcome.get("outcome") in FINAL:
                        self._update(item.number, outcome=outcome)
                        continue
                    failed = None
                    if withdraw is not None:
                        try:
                            withdraw(item.request_id)
                        except (TapedeckError, OSError) as exc:
                            failed = str(exc)
                    self._update(item.number, gone=gone, unwithdrawn=failed)
        return self.items()


_LOGS: weakref.WeakKeyDictionary[Any, RequestLog] = weakref.WeakKeyDictionary()
_LOGS_LOCK = threading.Lock()


def requests_for(live: Any) -> RequestLog:
    """The request log of a live session, shared by every policy screen opened on it."""
    with _LOGS_LOCK:
        log = _LOGS.get(live)
        if log is None:
            log = _LOGS[live] = RequestLog()
        return log


def outcome_line(item: TrackedRequest) -> Text:
    """One request as a line: state, what was asked, and the reason or detail."""
    line = Text()
    line.append(f"{item.state:<9}", style=_STATE_STYLE[item.state])
    line.append(f" {printable(item.label)}")
    if item.reason:  # the host's words, or an error quoting the log or the disk
        alarming = item.state in (REJECTED, CANCELLED, EXPIRED, UNKNOWN, NOT_SENT, UNSURE)
        line.append(f" — {printable(item.reason)}", style="red" if alarming else "dim")
    return line


class OutcomePanel(Static):
    """The latest operator requests and their outcomes."""

    def __init__(self, shown: int = 4, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.shown = shown

    def show(self, items: Iterable[TrackedRequest]) -> None:
        """Render the newest ``shown`` requests (newest last)."""
        recent = list(items)[-self.shown :]
        if not recent:
            self.update(Text("No operator requests sent from this TUI yet.", style="dim"))
            return
        self.update(Text("\n").join(outcome_line(item) for item in recent))


class PolicyScreen(Screen[None]):
    """Base of the policy screens; subclasses provide ``compose_body``, ``derive`` and ``show``."""

    CSS_PATH = "policy.tcss"
    # the -narrow class stacks the side pane under the table (policy.tcss)
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (NARROW_WIDTH, "-wide")]
    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "close", "Back", id="policy.close")]
    HEADING: ClassVar[str] = ""
    ACTIONS: ClassVar[frozenset[str]] = frozenset()  # actions that send control requests

    def __init__(self) -> None:
        super().__init__(classes="policy-screen")
        self._deriving = False  # a derivation is running
        self._stale = False  # the session changed while it ran
        self._read_only: str | None = None
        self._heading = (self.HEADING, "")  # the heading line's title and session id
        self.shown_generation = -1  # the live generation the screen shows (-1 before the first view)
        self._said_state = False  # the message line shows a loading note or a derive failure
        self._confirming: Confirming | None = None  # the confirm dialog up now

    # layout -----------------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        """Heading, read-only banner, the screen's body, a message line, the outcome panel and the footer."""
        yield Static(Text(self.HEADING), id="policy-heading")
        with VerticalScroll(id="policy-readonly-box") as box:  # a reason quoting a long path leaves the body rows
            box.can_focus = False  # scrolled by the mouse: a disabled key, pressed, says the whole reason
            yield Static(id="policy-readonly")
        yield from self.compose_body()
        yield Static(id="policy-message")
        with VerticalScroll(id="policy-outcomes-box") as box:  # older reasons never push the newest request out
            box.can_focus = False
            yield OutcomePanel(id="policy-outcomes")
        yield PriorityFooter()

    def compose_body(self) -> ComposeResult:
        """The screen's own widgets."""
        yield from ()

    @while_stacked
    def on_mount(self) -> None:
        """Derive the first view and keep the toasts off the outcomes."""
        self.screen_layout_refresh_signal.subscribe(self, self._place_toasts)
        self.query_one("#policy-readonly").display = False
        self.query_one("#policy-message").display = False
        self.query_one("#policy-outcomes-box").anchor()  # the newest request, listed last, stays in sight
        self.refresh_view()

    def _place_toasts(self, screen: Screen[object]) -> None:
        """The toasts stack over the rows of the body's first table, in its columns (``stack_over_rows``), else under
        the body's first row: the heading, the labels, the side pane (the value being typed, a preview), the message
        line, the outcome panel and the footer stay in sight."""
        tables = self._drawn_tables()
        if tables:
            stack_over_rows(self, tables)
        else:
            stack_in(self, self.toast_band(), top=True, keep_newest=True)

    def _drawn_tables(self) -> list[DataTable[Any]]:
        """The body's tables that are drawn, its main one (left of or over the side pane) first."""
        return [table for table in self.query_one(".policy-body").query(DataTable) if table.region.area]

    def toast_band(self) -> Region:
        """Where toasts may go on this screen, also beside a dialog over it: the rows of the body's main table, in
        its columns, else the body under its first row."""
        tables = self._drawn_tables()
        if tables:
            return rows_of(tables[0])
        body = self.query_one(".policy-body").region
        return Region(body.x, body.y + 1, body.width, max(body.height - 1, 0))

    def on_session_updated(self, message: Any) -> None:
        """The live session changed: derive the view again."""
        self.refresh_view()

    def action_close(self) -> None:
        """Leave the screen."""
        self.dismiss(None)

    def heading(self) -> str:
        """The heading line's title (``HEADING``, unless the screen words it for the session it shows)."""
        return self.HEADING

    def _draw_heading(self) -> None:
        """The title, cut at a word's end where it does not fit, then ``· session ID`` (the id's head, as the fleet
        and the alerts name a session: a DSH id, 36 characters, would leave the title no room at 80 columns)."""
        title, session_id = printable(self._heading[0]), printable(short_session(self._heading[1]))
        line = self.query_one("#policy-heading", Static)
        suffix = f" · session {session_id}" if session_id else ""
        room = line.size.width - cell_len(suffix) if line.size.width else None
        line.update(Text(clip_title(title, room if room is None else max(TITLE_MIN, room)) + suffix))

    def on_resize(self) -> None:
        """Fit the heading to the new width."""
        self.call_after_refresh(self._draw_heading)

    # deriving ---------------------------------------------------------------------------------------------
    @property
    def live(self) -> Any:
        """The app's live session."""
        return self.app.live  # type: ignore[attr-defined]

    @property
    def requests(self) -> RequestLog:
        """Requests sent for the live session."""
        return requests_for(self.live)

    def derive(self, live: Any) -> Any:
        """Compute the view from ``live`` (runs in a worker thread; call core, never Textual)."""
        raise NotImplementedError

    def show(self, view: Any) -> None:
        """Render a derived view (runs on the UI thread)."""
        raise NotImplementedError

    def refresh_view(self) -> None:
        """Derive the view in a worker; updates that arrive meanwhile coalesce into one more derivation."""
        if self._deriving:
            self._stale = True
            return
        self._deriving = True
        self._derive()

    @work(thread=True, group="policy-derive")
    def _derive(self) -> None:
        live = self.live
        if live.ready and self.shown_generation < 0:  # the first view of a big log can take a while
            self.app.call_from_thread(self._note, "Deriving this view from the log…")
        with live.lock:  # the follower thread applies appends under this lock
            generation = live.generation
            session_id = live.session.id
            if not live.ready:
                view: Any = Waiting(
                    "Nothing to show: the log cannot be read." if live.error else "Reading the session…"
                )
            else:
                try:
                    view = self.derive(live)
                except TapedeckError as exc:
                    view = DeriveFailure(str(exc))
                except Exception as exc:  # a malformed log must never take the TUI down
                    view = DeriveFailure(f"cannot derive this view: {unexpected(exc)}")
        items = self.requests.poll(live.outcome_for, live.host_gone, live.withdraw)
        reason = live.read_only_reason
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._apply, generation, session_id, view, items, reason)

    def _apply(
        self, generation: int, session_id: str, view: Any, items: list[TrackedRequest], reason: str | None
    ) -> None:
        self._deriving = False
        if not self.is_attached:
            return
        if self._stale:
            self._stale = False
            self.refresh_view()
        self._heading = (self.heading(), session_id)
        self._draw_heading()
        self._set_read_only(reason)
        self.query_one(OutcomePanel).show(items)
        if isinstance(view, Waiting | DeriveFailure):
            self.say(view.message, error=isinstance(view, DeriveFailure))
            self._said_state = True
        else:
            if self._said_state:
                self.say("")
                self._said_state = False
            self.show(view)
        self._revise_dialog(view)
        if not isinstance(view, Waiting):
            self.shown_generation = generation

    def _note(self, message: str) -> None:
        if self.is_attached:
            self.say(message)
            self._said_state = True

    def _set_read_only(self, reason: str | None) -> None:
        if reason == self._read_only:
            return
        self._read_only = reason
        banner = self.query_one("#policy-readonly", Static)
        banner.display = reason is not None
        if reason is not None:
            banner.update(Text(f"Read-only — actions are disabled: {printable(reason)}", style="bold"))
        self.refresh_bindings()

    # acting -----------------------------------------------------------------------------------------------
    @property
    def read_only_reason(self) -> str | None:
        """Why actions are disabled on this session, or None when the host accepts requests."""
        return self._read_only

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Action keys show as disabled while the session is read-only."""
        return None if self.disabled_reason(action) is not None else True

    def disabled_reason(self, action: str) -> str | None:
        """Why ``action`` cannot run now (its key shows dimmed; pressed anyway, the app says this), or None."""
        return self._read_only if action in self.ACTIONS else None

    def say(self, message: str, *, error: bool = False) -> None:
        """Show a one-line message above the outcome panel (empty clears it, and the line takes no row), its control
        characters as pictures: why a view could not be derived or a request not sent quotes the log, the host or the
        disk."""
        line = self.query_one("#policy-message", Static)
        line.update(Text(printable(message), style="bold red" if error else "") if message else "")
        line.display = bool(message)

    def confirm_then(
        self, dialog: ConfirmScreen, send: Callable[[], None], revise: Callable[[Any], None] | None = None
    ) -> None:
        """Push ``dialog`` and ``send`` on yes, unless the log was truncated, replaced or deleted while it was up: the
        seqs and marks it described are another session's events now (or none), so nothing is sent and the message
        says so. While it is up, each view derived again is handed to ``revise``, which brings the dialog up to date
        (``ConfirmScreen.revise``); a log changed so says so in the dialog itself. No dialog comes up while the
        session's host (or DSH bridge) is known to have exited: the message says so at once."""
        if (gone := self.live.host_gone(self.live.host)) is not None:
            self.say(f"Not sent: {gone}.", error=True)
            return
        confirming = Confirming(dialog, self.live.epoch, revise)

        def decided(confirmed: bool | None) -> None:
            if self._confirming is confirming:
                self._confirming = None
            if not confirmed:
                return
            if self.live.epoch != confirming.epoch:
                self.say(f"Not sent: the log was {self.live.how_changed} while the dialog was up, so what it described "
                         "is gone.",
                         error=True)  # fmt: skip
                return
            if (gone := self.live.host_gone(self.live.host)) is not None:
                self.say(f"Not sent: {gone}.", error=True)
                return
            self.say("")
            send()

        self._confirming = confirming
        self.app.push_screen(dialog, decided)

    def _revise_dialog(self, view: Any) -> None:
        """Bring the confirm dialog up to date with ``view``, the one just shown (or why none could be; None: the
        view did not change, the host's state did); a host known to have exited is said over what ``revise`` said."""
        confirming = self._confirming
        if confirming is None:
            return
        if self.live.epoch != confirming.epoch:
            confirming.dialog.revise(f"The log was {self.live.how_changed} while this dialog was up: what it "
                                     "describes is gone, so confirming sends nothing.")  # fmt: skip
            return
        if confirming.revise is not None and not isinstance(view, Waiting | DeriveFailure | None):
            confirming.revise(view)
        if (gone := self.live.host_gone(self.live.host)) is not None:
            confirming.dialog.warn(f"As things stand nothing is sent: {gone}.")

    def refresh_host(self) -> None:
        """The session's host changed state (the app's host watch): a confirm dialog up says at once when it exited."""
        self._revise_dialog(None)

    def send_request(self, op: str, args: dict[str, Any], label: str) -> None:
        """Append a control request through the live session; its outcome appears in the panel."""
        if self._read_only is not None:
            self.say(f"Not sent: {self._read_only}", error=True)
            return
        item = self.requests.add(op, label, args)
        self.query_one(OutcomePanel).show(self.requests.items())
        self._send(item, op, args)

    @work(thread=True, group="policy-send")
    def _send(self, item: TrackedRequest, op: str, args: dict[str, Any]) -> None:
        live = self.live
        try:
            request = live.send(op, args)
            self.requests.sent(item, str(request["id"]))
        except (TapedeckError, OSError) as exc:
            self.requests.send_failed(item, exc)
        items = self.requests.poll(live.outcome_for, live.host_gone, live.withdraw)
        self.app.call_from_thread(self.show_outcomes, items)

    def show_outcomes(self, items: list[TrackedRequest]) -> None:
        """Redraw the outcome panel (also when an outcome arrived while the log stood still: a DSH bridge's
        outcomes come in a file of their own, which the app's host poll reads)."""
        if self.is_attached:
            self.query_one(OutcomePanel).show(items)


@dataclass(frozen=True, slots=True)
class Confirming:
    """A confirm dialog up on a policy screen: the log's epoch it describes, and what brings it up to date."""

    dialog: ConfirmScreen
    epoch: int
    revise: Callable[[Any], None] | None


@dataclass(frozen=True, slots=True)
class DeriveFailure:
    """A view that could not be derived, with the reason to show instead."""

    message: str


@dataclass(frozen=True, slots=True)
class Waiting:
    """The log is not fully read yet; nothing is derived from a partial projection."""

    message: str


def column_widths(labels: Sequence[str], rows: Sequence[Sequence[str | Text]]) -> int:
    """The cells a table of ``labels`` and ``rows`` takes: each column as wide as its widest cell, padded by one
    cell on either side."""
    return sum(
        max([cell_len(label), *(cell_len(str(row[i])) for row in rows)]) + 2 for i, label in enumerate(labels)
    )


def fill_table(
    table: DataTable[Any], rows: Sequence[tuple[str, Sequence[RenderableType]]], height: int | None = 1
) -> None:
    """Replace a table's rows, keeping the cursor on the same row key when that row still exists and the view
    scrolled where it was (a live log refills the tables at every append; the cursor is scrolled into view only when
    its row moved out of it) (``height``: each row's lines, None: as many as its cells take wrapped in their columns).

    Plain strings are shown verbatim (never parsed as markup: log text is full of square brackets), their control
    characters as pictures (a path or a tool name from the log never drives the terminal)."""
    current: str | None = None
    if table.row_count and table.cursor_row >= 0:
        current = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
    x, y = table.scroll_x, table.scroll_y
    table.clear()  # which scrolls to the top
    drawn = [(key, [cell_of(c) for c in cells]) for key, cells in rows]
    fit_columns(table, [cells for _, cells in drawn])
    for key, cells in drawn:
        table.add_row(*cells, key=key, height=height)
    table.scroll_to(x, y, animate=False, immediate=True)
    if current is not None and any(key == current for key, _ in rows):
        table.move_cursor(row=table.get_row_index(current))


def fit_columns(table: DataTable[Any], rows: Sequence[Sequence[RenderableType]]) -> None:
    """Make ``table``'s columns that take their width from their cells as wide as their labels and their cells in
    ``rows``, the rows it is filled with: Textual only ever widens a column, so a table filled again kept each column
    as wide as the widest row it ever held (a header run past the screen, blank cells beside short rows)."""
    console = table.app.console
    for i, column in enumerate(table.ordered_columns):
        if column.auto_width:
            widths = (measure(console, cells[i], 1) for cells in rows if i < len(cells))
            column.content_width = max([measure(console, column.label, 1), *widths])


def cell_of(value: RenderableType) -> RenderableType:
    """A table cell of ``value``: a plain string verbatim (never read as markup), its control characters as
    pictures."""
    return Text(printable(value)) if isinstance(value, str) else value


def add_rows(
    table: DataTable[Any], rows: Sequence[tuple[str, Sequence[RenderableType]]], height: int | None = 1
) -> None:
    """Add rows under a table's others, their plain strings shown as ``fill_table`` shows them (the cursor and the
    view stay where they are)."""
    for key, cells in rows:
        table.add_row(*(cell_of(c) for c in cells), key=key, height=height)


def logged(session: Session, event_type: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """``(seq, event)`` for every event of one type, oldest first (a log read back from its file decodes only
    those: ``Session.seqs_of``)."""
    if not session.counts.get(event_type):
        return
    events = session.events
    for seq in session.seqs_of((event_type,)):
        yield seq, events[seq]
