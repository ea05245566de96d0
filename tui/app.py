"""The tapedeck Textual app: global bindings (each with an id), the command palette, screens and the live log."""

from __future__ import annotations

import asyncio
import gc
import importlib
import io
import os
import signal
import subprocess
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from textual import constants, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.events import Event, Paste
from textual.filter import LineFilter, NoColor
from textual.markup import escape
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Input, TextArea

from core.alerts.follow import FedWatch
from core.alerts.terminal import terminal_bytes
from core.cli.args import layout_notes
from core.control.config import PolicyConfig, validate_config
from core.fleet.alerts import RemoteFedWatch
from core.log.layout import is_sessions_root
from core.log.pace import Pacer
from core.log.tail import FOLLOW_INTERVAL
from core.remote.live import RemoteLog, names_one_session
from core.remote.target import parse_remote
from core.shared.jsonout import allow_deepest_walks
from core.shared.text import counted, printable, quoted_path, shown
from tui.alerts import (
    BURST_GAP,
    AlertBoard,
    AlertFeed,
    AlertRaised,
    Burst,
    HistoryRecalled,
    SessionRenamed,
    SpendProjected,
)
from tui.fleet_feed import FleetChanged, FleetFeed, FleetProblem
from tui.keymap import binding_owners, key_of, keymap_path, load_keymap
from tui.live import LiveSession, LoadProgress, SessionUpdated
from tui.screens.control import CONTROL_ACTIONS, CONTROL_BINDINGS, ControlActions
from tui.screens.help import HelpScreen, help_entries
from tui.screens.main import MainScreen
from tui.screens.toasts import sentence, toast_seconds
from tui.settings import load_theme, save_theme, settings_path

# imported where it is used, as the app's other screens are: the Alerts screen loads when it is opened
if TYPE_CHECKING:
    from tui.screens.alerts import AlertsScreen

# key, screen module, class, description, binding id
POLICY_SCREENS: list[tuple[str, str, str, str, str]] = [
    ("t", "tape", "TapeScreen", "Slice tape", "app.tape"),
    ("o", "folds", "FoldsScreen", "Folds", "app.folds"),
    ("c", "checkpoints", "CheckpointsScreen", "Checkpoints", "app.checkpoints"),
    ("r", "router", "RouterScreen", "Router", "app.router"),
    ("p", "prolong", "ProlongScreen", "Prolong status", "app.prolong"),
    ("C", "config", "ConfigScreen", "Config", "app.config"),
    ("D", "diagnostics", "DiagnosticsScreen", "Diagnostics", "app.diagnostics"),
]


# Garbage collection while following. A follow-mode frame allocates thousands of short-lived Textual objects, so
# with CPython's default threshold (700) the young generation is collected several times per append and the
# middle one about once per append (~3 ms each on a loaded 200 MB log), inside the append-to-screen path; a full
# collection over the loaded session takes ~90 ms. Once a log is loaded its objects are frozen (never scanned
# again) and young collections run every GC_THRESHOLD[0] net allocations instead.
GC_THRESHOLD = (50_000, 20, 100)
HINT_SECONDS = 12  # the first-run hint's toast, unless a key takes it away sooner
# an alert's severity as a toast's (else information)
_TOAST_SEVERITY = {"critical": "error", "warning": "warning"}


class FollowGC:
    """The collector settings above, applied once a log is loaded and undone when the app ends."""

    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None

    def loaded(self) -> None:
        """Freeze what loading built and collect the young generation less often (idempotent per load). A
        reload first thaws and collects what the last load froze: the projection it replaced is garbage now."""
        if self._saved is None:
            self._saved = gc.get_threshold()
        else:
            gc.unfreeze()
            gc.collect()
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLD)

    def restore(self) -> None:
        """Back to the interpreter's settings (objects frozen so far become collectable again)."""
        if self._saved is not None:
            gc.unfreeze()
            gc.set_threshold(*self._saved)
            self._saved = None


def is_session_log_target(path: Path) -> bool:
    """True for a log file or a session directory; False for a directory of sessions (a sessions root). A remote
    path (``[user@]host:PATH``) is asked of its machine (``names_one_session``)."""
    remote = parse_remote(str(path))
    if remote is not None:
        return names_one_session(remote)
    return not is_sessions_root(path)


def tmux_load_buffer(text: str, timeout: float = 5.0) -> str | None:
    """Put ``text`` in tmux's paste buffer and the outer clipboard (``-w``, tmux >= 3.2); None or the problem."""
    for command in (["tmux", "load-buffer", "-w", "-"], ["tmux", "load-buffer", "-"]):
        try:
            done = subprocess.run(command, input=text.encode("utf-8"), capture_output=True, timeout=timeout)
        except FileNotFoundError:
            return "tmux is not on PATH"
        except subprocess.TimeoutExpired:
            return f"tmux load-buffer did not answer within {timeout:g} s"
        if done.returncode == 0:
            return None
        problem = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
    return problem


def policy_screen(module: str, cls: str) -> type[Screen[None]]:
    """The class of a policy screen (imported when first needed)."""
    screen: type[Screen[None]] = getattr(importlib.import_module(f"tui.screens.{module}"), cls)
    return screen


def inert_paste(text: str) -> tuple[str, int]:
    """Pasted ``text`` as a text box may hold it, and how many control characters it held: line breaks of any kind
    become newlines (a box of one line keeps the first line, a note every one), every other control character (ESC,
    BEL, DEL, C1, a BiDi override) its picture, as ``printable`` draws a log's. Textual's text boxes draw their value
    as it is, so a pasted ESC ] 52 would set the clipboard and ESC [ 2J clear the screen at every redraw."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n")
    shown = printable(lines)
    return shown, sum(a != b for a, b in zip(lines, shown, strict=True))


NO_COLOURS = NoColor()  # Textual's filter that drops every colour of what is drawn


def terminal_colours() -> str | None:
    """The colours the terminal draws, as Textual's console reads them from the environment (``TERM``,
    ``COLORTERM``, ``TEXTUAL_COLOR_SYSTEM``): ``truecolor``, ``256``, ``standard`` (the 16 ANSI ones), or None (a
    dumb terminal: none)."""
    console = Console(color_system=constants.COLOR_SYSTEM, force_terminal=True, file=io.StringIO())  # type: ignore[arg-type]
    return console.color_system


class TapedeckApp(ControlActions, App[None]):
    """``tapedeck watch``: a session log (followed live), or the fleet table of sessions roots."""

    CSS_PATH = "tapedeck.tcss"
    TITLE = "tapedeck"
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="app.quit_now"),
        Binding(  # Textual's own palette key, as Textual words it (the footer shows it), under an id
            "ctrl+p",
            "command_palette",
            "palette",
            show=False,
            priority=True,
            tooltip="Open the command palette",
            id="app.palette",
        ),
        Binding("escape", "back", "Back", show=False, id="app.back"),
        Binding("A", "alerts", "Alerts", show=False, id="app.alerts"),
        *CONTROL_BINDINGS,
        *(
            Binding(key, f"policy('{module}')", description, show=False, id=binding_id)
            for key, module, _cls, description, binding_id in POLICY_SCREENS
        ),
    ]

    def __init__(
        self,
        target: Path,
        *,
        follow: bool = True,
        interval: float = FOLLOW_INTERVAL,
        use_watchfiles: bool = False,
        keymap_file: Path | None = None,
        hint: Callable[[App[Any]], str] | None = None,
        fleet_roots: list[Path] | None = None,
        config: PolicyConfig | None = None,
    ) -> None:
        # NO_COLOR or a dumb terminal: no colour at all. Textual's way is native ANSI colours (ansi_color), under
        # which it drops every colour for NO_COLOR (else it greys them, in truecolor on a truecolor terminal); a
        # dumb terminal, whose colours its console finds none of, it drew in truecolor (``get_line_filters``).
        # A terminal of 16 colours (or 256) Textual's console draws in those.
        plain = terminal_colours() is None or "NO_COLOR" in os.environ
        super().__init__(ansi_color=True if plain else None)
        self.no_color = plain  # also what the :nocolor rules of tapedeck.tcss go by
        allow_deepest_walks()  # as the CLI does: the workers walk whatever a log line holds, however the app started
        if fleet_roots is None and not is_session_log_target(target):
            fleet_roots = [target]  # a sessions root opens the fleet table
        self.fleet_roots = fleet_roots  # set: the fleet table of these roots opens instead of the target
        # what a root that holds no session holds instead (here or over SSH, as ``tapedeck sessions`` says it), read
        # here, not by the UI thread (a root's whole tree)
        self.layout_notes = layout_notes([str(root) for root in fleet_roots or ()], "fleet")
        # the remote log the target names (None: a local one): ``host:PATH`` is local when such a file is here
        self.target_remote = None if fleet_roots else RemoteLog.of(target)
        self.config = config or validate_config({})  # its alerts and model sections apply
        self.board = AlertBoard()
        self.burst = Burst()  # which alerts ring and toast one by one
        self.alert_marks: dict[int, tuple[str, ...]] = {}  # the open session's alert marks, by seq
        self._marked_key: str | None = None  # the ``log_key`` they are the marks of
        self.alert_feed: AlertFeed | None = None
        self.hint = hint  # its text is shown once the session opens (the demo's first-run hint of which keys act)
        self.target = target
        self.follow = follow
        self.interval = interval
        self.use_watchfiles = use_watchfiles
        self.keymap_file = keymap_file or keymap_path()
        # Both TUI files are read here, as the command builds the app, not on the UI thread (which does no I/O):
        # on_mount applies them and reports their problems.
        self._user_keymap, self.keymap_problems = load_keymap(
            self.keymap_file, self.binding_ids(), partial(key_of, self, "app.help")
        )
        self._saved_settings = load_theme(settings_path(self.keymap_file))  # (theme, problem)
        self.live: LiveSession | None = None
        self.in_fleet = False
        self.follow_gc = FollowGC()
        self._fleet_frozen = False  # the fleet's first table was in and its heap frozen
        self._saved_theme = ""
        self._hint_up = False  # the first-run hint's toast is showing (the first key takes it away)
        self.quitting = False  # the app is closing: keys typed behind the quit run nothing

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters of every line drawn, and on a dumb terminal (which Textual draws in colour unless
        NO_COLOR is set) the one that drops every colour."""
        filters = super().get_line_filters()
        if self.no_color and not any(isinstance(f, NoColor) for f in filters):
            return [*filters, NO_COLOURS]
        return filters

    async def on_event(self, event: Event) -> None:
        """A paste is made inert before any text box takes it (``inert_paste``)."""
        if isinstance(event, Paste) and not event.is_forwarded:
            event.text, controls = inert_paste(event.text)
            if controls and isinstance(self.focused, Input | TextArea):
                self.notify(f"The paste held {counted(controls, 'control character')} (escape sequences, C1 or BiDi "
                            "controls): each is kept as its picture, such as ␛ for ESC, never sent to the terminal.",
                            severity="warning", timeout=8)  # fmt: skip
        await super().on_event(event)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Show a toast whose text is never read as markup (``markup`` is taken and left unused: a screen's
        ``notify`` passes it on as true): toasts quote filters, paths, logs and the host's words, whose brackets
        are text, and a ``[/…]`` among them raised a MarkupError that ended the TUI; their control characters are
        drawn as pictures, so that an escape sequence quoted from the log never drives the terminal."""
        super().notify(printable(message), title=printable(title), severity=severity, timeout=timeout, markup=False)

    # start-up ---------------------------------------------------------------------------------------------
    def on_mount(self) -> None:
        """Apply the user's keymap, then open the log or the fleet table."""
        if self._user_keymap:
            self.set_keymap(self._user_keymap)
        for problem in self.keymap_problems:
            self.notify(problem, title="Keymap", severity="warning", timeout=10)
        self._restore_theme()
        self.start_host_watch()
        self.start_alerts()
        if self.hint:
            self._hint_up = True
            self.notify(self.hint(self), title="Try the controls", timeout=HINT_SECONDS)
        if self.fleet_roots:
            from tui.screens.fleet import FleetScreen

            assert isinstance(self.alert_feed, FleetFeed)
            self.in_fleet = True
            self.push_screen(FleetScreen(self.fleet_roots, self.alert_feed, self.layout_notes))
        else:
            self.open_session(self.target)

    async def run_action(self, action: Any, default_namespace: Any = None, namespaces: Any = None) -> bool:
        """Run an action (none once the app is quitting; a policy screen's dimmed key says why it cannot act); the
        first one the operator starts takes the first-run hint (and the start-up toasts) off the list and the
        dialogs it would cover."""
        if self.quitting:
            return False
        if self._hint_up:
            self._hint_up = False
            self.clear_notifications()
        if await super().run_action(action, default_namespace, namespaces):
            return True
        # a policy screen's dimmed key, pressed anyway
        why = getattr(default_namespace, "disabled_reason", None)
        reason = why(action.partition("(")[0]) if why is not None and isinstance(action, str) else None
        if reason:
            self.notify(f"Not available: {reason}", timeout=6)
            return True
        return False

    def exit(self, result: Any = None, return_code: int = 0, message: Any = None) -> None:
        """Close the app; a key that came in the same burst as the quit (a slow link sends keys in bursts) no longer
        opens a screen on the closing app, whose start-up would find none of its widgets."""
        self.quitting = True
        super().exit(result, return_code, message)

    def run_until_quit(self) -> int:
        """Run the app until it quits: 0, 1 when an exception ended it, or 143 when a SIGTERM (``kill``, a service
        manager's stop) ended it, which quits it as ``q`` does, so that the terminal is given back (the alternate
        screen left, mouse reporting off). A SIGTERM before the app runs or once it has stopped raises
        ``SystemExit(143)``."""
        terminated, told = 128 + signal.SIGTERM, False

        def terminate(_signum: int, _frame: object) -> None:
            nonlocal told
            told = True
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # not running yet, or no more: nothing to give back
                raise SystemExit(terminated) from None
            loop.call_soon_threadsafe(self.exit)

        previous = signal.signal(signal.SIGTERM, terminate)
        try:
            self.run()
        finally:
            signal.signal(signal.SIGTERM, previous)
        return terminated if told else self.return_code or 0  # 1: an exception ended it (Textual printed it)

    def _restore_theme(self) -> None:
        """Apply the theme saved by an earlier run, then save every theme the operator picks."""
        path = settings_path(self.keymap_file)
        theme, problem = self._saved_settings
        if problem:
            self.notify(problem, title="Settings", severity="warning", timeout=10)
        elif theme is not None and theme in self.available_themes:
            self.theme = theme
        elif theme is not None:
            self.notify(f"{quoted_path(path)}: no theme named {shown(theme)}", title="Settings", severity="warning", timeout=10)
        self._saved_theme = self.theme
        self.theme_changed_signal.subscribe(self, lambda new: self._save_theme(path, new.name))

    def _save_theme(self, path: Path, theme: str) -> None:
        """Save a theme the operator picked (starting up with the saved or default theme writes nothing)."""
        if theme != self._saved_theme:
            self._saved_theme = theme
            self._write_theme(path, theme)

    @work(thread=True, group="settings", exclusive=True, exit_on_error=False)
    def _write_theme(self, path: Path, theme: str) -> None:
        problem = save_theme(path, theme)
        if problem:
            self.call_from_thread(self.notify, problem, title="Settings", severity="warning")

    def binding_ids(self) -> list[str]:
        """Every binding id tapedeck defines, on every screen and widget (what a keymap may rebind)."""
        ids: dict[str, None] = {}
        for owner in [type(self), *binding_owners()]:
            ids.update((b.id, None) for b in owner.BINDINGS if isinstance(b, Binding) and b.id)
        return list(ids)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """With no session open (the fleet table) the policy screens and the operator keys are not offered (help,
        palette and keys leave them out); else the operator keys are disabled while no live host runs it."""
        if self.live is None and (action == "policy" or action in CONTROL_ACTIONS):
            return False
        return self.check_control(action)

    # alerts -------------------------------------------------------------------------------------------------
    def start_alerts(self) -> None:
        """Run the alert rules over the target (a log or a sessions root) in a worker thread (in the ``live``
        group: like the log's follower it runs as long as the app)."""
        if self.fleet_roots:  # the fleet's one follower raises every session's alerts, remote ones included
            feed: AlertFeed = FleetFeed(self.fleet_roots, self.config, self.post_message)
        else:  # the log's engine is fed by its view's own pass (a remote log's also ticks from the view's reads)
            remote = self.target_remote
            # paced: after a restored index the engine reads the log's start itself, beside the UI
            fed = (
                FedWatch(self.config, pace=Pacer()) if remote is None else RemoteFedWatch(self.config, remote)
            )
            feed = AlertFeed([], self.config, self.post_message, follow=self.follow, fed=fed)
        self.alert_feed = feed
        self.run_worker(feed.run, thread=True, group="live", exit_on_error=False, name="alerts")

    def on_alert_raised(self, message: AlertRaised) -> None:
        """Deliver an alert: the list, the mark on its event, and, when raised live (not replayed from the log's
        history: ``on_history_recalled`` sums those up), a toast, the bell and a desktop notification."""
        alert = message.alert
        self.board.add(alert, message.key, message.title)
        self._mark_alerts()
        live = not message.replayed
        if live and self.burst.alone(alert):
            where = self.board.session_name(alert)
            severity = _TOAST_SEVERITY.get(alert.severity, "information")
            self.notify(f"{alert.reason} (seq {alert.seq}, {where})", title=f"Alert: {alert.cause}", severity=severity,
                        timeout=toast_seconds(severity), markup=False)  # fmt: skip
            out = terminal_bytes(alert, self.config.alerts, tmux=bool(os.environ.get("TMUX")))
            if out and not self.is_headless and self._driver is not None:
                self._driver.write(out)
        elif live and len(self.burst.held) == 1:  # the first one held: its summary is due once the burst is over
            self.set_timer(BURST_GAP, self._sum_up_burst)
        for screen in self._alerts_screens():
            screen.show_alerts()

    def on_session_renamed(self, message: SessionRenamed) -> None:
        """A session whose alerts are listed has a new title: the alerts list names them by it."""
        if not self.board.rename(message.path, message.session, message.title):
            return
        for screen in self._alerts_screens():
            screen.show_alerts(again=True)

    def _alerts_screens(self) -> list[AlertsScreen]:
        """The Alerts screens on the stack that are up: one pushed but not mounted yet has no table to fill, and
        lists what the board holds as it mounts (an alert that came meanwhile among them)."""
        from tui.screens.alerts import AlertsScreen

        return [s for s in self.screen_stack if isinstance(s, AlertsScreen) and s.is_mounted]

    def on_history_recalled(self, message: HistoryRecalled) -> None:
        """One quiet toast (no bell, no notification) for the alerts the loaded logs' histories raised."""
        count = len(message.alerts)
        if not count:
            return
        where = "this log's history"
        if self.fleet_roots:
            sessions = len({alert.path for alert in message.alerts})
            where = f"the history of {sessions} session{'' if sessions == 1 else 's'}"
        text = f"{count} alert{'' if count == 1 else 's'} in {where}: {key_of(self, 'app.alerts')} lists them"
        self.notify(text, title="Alerts", severity="information", timeout=6, markup=False)

    def _sum_up_burst(self) -> None:
        """One toast for the alerts a burst held back (later, while the burst goes on)."""
        if not self.burst.over():
            self.set_timer(BURST_GAP, self._sum_up_burst)
            return
        summary = self.burst.summary(key_of(self, "app.alerts"))
        if summary is not None:
            text, severity = summary
            self.notify(text, title="Alerts", severity=_TOAST_SEVERITY.get(severity, "information"), timeout=10,
                        markup=False)  # fmt: skip

    def on_fleet_changed(self, message: FleetChanged) -> None:
        """The fleet feed's new rows: to the fleet table. Once the first table is in, what reading every log built
        is frozen (``FollowGC``): a full collection over it paused the table for up to 0.7 s on a loaded machine."""
        from tui.screens.fleet import FleetScreen

        if message.rows is not None and not self._fleet_frozen:
            self._fleet_frozen = True
            self.follow_gc.loaded()

        for screen in self.screen_stack:
            if isinstance(screen, FleetScreen):
                screen.changed(message)

    def on_fleet_problem(self, message: FleetProblem) -> None:
        """A fleet root cannot be read: the fleet table says so."""
        from tui.screens.fleet import FleetScreen

        for screen in self.screen_stack:
            if isinstance(screen, FleetScreen):
                screen.problem(message.text)

    def on_spend_projected(self, message: SpendProjected) -> None:
        """The alert worker projected the open log's spend again: redraw the headers that show it."""
        from tui.widgets.header import SessionHeader

        for screen in self.screen_stack:
            for header in screen.query(SessionHeader):
                header.refresh_header()

    def _mark_alerts(self) -> None:
        """Give the event lists the open session's alert marks."""
        from tui.widgets.event_list import EventList

        self._marked_key = self.live.key if self.live is not None else None
        self.alert_marks = self.board.marks_for(self._marked_key)
        for screen in self.screen_stack:
            for events in screen.query(EventList):
                events.refresh()

    def action_alerts(self) -> None:
        """Show every alert raised so far."""
        from tui.screens.alerts import AlertsScreen

        if not isinstance(self.screen, AlertsScreen):
            self.push_screen(AlertsScreen(self.board))

    # the live session -------------------------------------------------------------------------------------
    def open_session(self, path: Path) -> None:
        """Start following ``path`` and show it on a new main screen."""
        self.close_session()
        fed = self.alert_feed.fed if self.alert_feed is not None else None
        live = LiveSession(
            path,
            self._from_live,
            follow=self.follow,
            interval=self.interval,
            use_watchfiles=self.use_watchfiles,
            # the target's rules, fed by its view
            alerts=fed if fed is not None and path == self.target else None,
            remote=fed.remote if isinstance(fed, RemoteFedWatch) and path == self.target else None,
        )
        self.live = live
        self.run_worker(live.run, thread=True, group="live", exit_on_error=False, name=f"live {path.name}")
        self.push_screen(MainScreen(live))
        self._mark_alerts()  # none until its worker has its log's key (``on_load_progress``)
        if self.alert_feed is not None:  # the live session reports what is wrong with it (its log found by the feed)
            self.alert_feed.focus = path

    def switch_session(self, path: Path) -> None:
        """Show ``path`` in place of the session on the top main screen (the parent/child jump)."""
        if isinstance(self.screen, MainScreen):
            self.pop_screen()
        self.open_session(path)

    def close_session(self) -> None:
        """Stop following the current log (its main screen is popped by the caller)."""
        if self.live is not None:
            self.live.stop()
            self.live = None

    def _from_live(self, message: Message) -> None:
        """What the live session posts, from its threads: projection changes and loading progress straight to every
        screen that handles them (posting is thread-safe; an append's update reaches the main screen without a
        hop through the app's queue), in the order they come; progress to the app as well (``on_load_progress``)."""
        if isinstance(message, SessionUpdated | LoadProgress):
            self._forward(message)
        if not isinstance(message, SessionUpdated):
            self.post_message(message)

    def _forward(self, message: SessionUpdated | LoadProgress) -> None:
        if self.live is None:
            return
        handler = "on_session_updated" if isinstance(message, SessionUpdated) else "on_load_progress"
        for screen in self.screen_stack:
            if not hasattr(screen, handler):
                continue  # a message to a screen that ignores it still costs that screen a repaint
            copy: Message = (
                SessionUpdated(message.generation, message.reset, message.start, message.end, message.epoch)
                if isinstance(message, SessionUpdated)
                else LoadProgress(message.phase, message.fraction, message.loaded)
            )
            screen.post_message(copy)

    def on_load_progress(self, message: LoadProgress) -> None:
        """A loaded (or reloaded) log switches to follow-mode GC (the screens have the progress from
        ``_from_live``); a phase posted again (a remote log's reachability changed) collects nothing. A log reset
        (rewritten, replaced or removed) takes its alert marks along: the log read next numbers other events (its
        own alerts mark them); a log waited for at the start (missing, or its machine not answering) keeps them.
        The marks follow the log's key, which the live worker finds (the path's, then the log's)."""
        if message.loaded:
            self.follow_gc.loaded()
        if self.live is None:
            return
        if message.phase == "reset" and self.live.key is not None:
            self.board.forget_marks(self.live.key)
            self._mark_alerts()
        elif self.live.key != self._marked_key:
            self._mark_alerts()

    def on_unmount(self) -> None:
        """Let the follower threads end."""
        self.close_session()
        if self.alert_feed is not None:
            self.alert_feed.stop()
        self.follow_gc.restore()

    # actions ----------------------------------------------------------------------------------------------
    def action_help(self) -> None:
        """Show every key active here, generated from the bindings."""
        if isinstance(self.screen, HelpScreen):
            return
        entries = help_entries(self, self.screen)
        columns_legend = getattr(self.screen, "columns_legend", None)  # the main screen's, Folds'
        legend = columns_legend() if columns_legend is not None else ()
        title = f"{getattr(self.screen, 'HEADING', '')}: what the columns mean" if legend else ""
        self.push_screen(HelpScreen(entries, quoted_path(self.keymap_file), self.keymap_problems, legend, title))

    def action_back(self) -> None:
        """On a session's main screen: out of time travel (back to live), else, for a session opened in the fleet
        table, back to the table."""
        if not isinstance(self.screen, MainScreen):
            return
        if self.screen.stop is not None:
            self.screen.action_live()
        elif self.in_fleet:
            self.close_session()
            self.pop_screen()

    def action_policy(self, module: str) -> None:
        """Open one of the policy screens (they read ``app.live``)."""
        if self.live is None:
            self.notify("Open a session first.", timeout=3)
            return
        for _key, name, cls, _description, _binding_id in POLICY_SCREENS:
            if name == module:
                screen_type = policy_screen(name, cls)
                if not isinstance(self.screen, screen_type):
                    self.push_screen(screen_type())
                return

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The palette: every action bound where it was opened, then every action of the policy screens (each
        opens its screen first), each once, then Textual's own (theme, quit …)."""
        seen: set[str] = set()  # titles: each action once
        for namespace, binding, _enabled, _tooltip in screen.active_bindings.values():
            if not binding.description or binding.system or binding.description in seen:
                continue
            seen.add(binding.description)
            keys = f"key {self.get_key_display(binding)}"  # the help line adds to the title, never repeats it
            yield SystemCommand(
                binding.description,
                escape(f"{binding.tooltip} · {keys}" if binding.tooltip else keys),  # read as markup: keys as written
                partial(self.run_action, binding.action, namespace),
            )
        if self.live is not None:
            for _key, module, cls, title, _binding_id in POLICY_SCREENS:
                for binding in policy_screen(module, cls).BINDINGS:
                    if (
                        not isinstance(binding, Binding)
                        or binding.id == "policy.close"
                        or not binding.description
                    ):
                        continue
                    name = f"{title}: {binding.description}"
                    if name in seen or isinstance(screen, policy_screen(module, cls)):
                        continue
                    seen.add(name)
                    yield SystemCommand(
                        name,
                        escape(f"opens {title} and runs it ({key_of(self, binding.id)} there)"),
                        partial(self._on_policy_screen, module, binding.action),
                    )
        yield from (c for c in super().get_system_commands(screen) if c.title not in seen)

    def _on_policy_screen(self, module: str, action: str) -> None:
        self.action_policy(module)
        self.call_after_refresh(self.run_action, action, self.screen)

    def copy_to_clipboard(self, text: str) -> None:
        """OSC 52 copy; inside tmux also ``tmux load-buffer -w`` (in a worker), which reaches the outer terminal.

        tmux drops an application's OSC 52 under its default ``set-clipboard external``; ``load-buffer -w``
        hands the text to tmux itself, which fills its paste buffer and forwards it to the outer clipboard.
        """
        super().copy_to_clipboard(text)
        if os.environ.get("TMUX"):
            self._tmux_copy(text)

    @work(thread=True, group="copy", exit_on_error=False)
    def _tmux_copy(self, text: str) -> None:
        problem = tmux_load_buffer(text)
        if problem:
            self.call_from_thread(self.notify, sentence(f"the copy did not reach tmux: {problem}"), severity="warning")
