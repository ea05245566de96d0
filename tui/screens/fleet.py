"""The fleet table: every session under the roots, one row each, the ones needing the operator first.

The app's fleet feed (``tui.fleet_feed.FleetFeed``: a worker thread, each log read from its new bytes only) hands
the table each row's cells when they changed; the UI thread only filters and draws. Enter opens a session (going back
returns to the same row), ``n`` jumps to the next row needing attention, ``/`` filters, and the row actions
(pause or resume, message, stop) are confirmed, then sent to the row's control inbox from a worker.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static
from textual.worker import get_current_worker

from core.control.host_state import KIND_DSH, HostState
from core.control.inbox import APPLIED, CANCELLED, EXPIRED, REJECTED
from core.control.once import CHECKING, WAITING, held_back
from core.fleet.actions import ANSWER_SECONDS, RowAnswer, row_refusal, send_row_action, state_refusal
from core.fleet.row import COLUMNS, FleetRow, matches, twin
from core.log.layout import sessions_under
from core.shared.errors import TapedeckError
from core.shared.text import printable, quoted_path
from tui.cells import cut, fitting, show_columns
from tui.failures import unexpected
from tui.fleet_feed import FleetChanged, FleetFeed, Shown
from tui.keymap import key_of
from tui.screens.confirm import ConfirmScreen
from tui.screens.control import message_ask, what_stop_does
from tui.screens.dialog import Dialog
from tui.screens.policy_screen import asked_words, fill_table
from tui.screens.stacked import while_stacked
from tui.screens.toasts import sentence, stack_toasts
from tui.widgets.footer import PriorityFooter
from tui.widgets.table import RowTable

# cells cut to fit 80 columns with the state beside them (a title is measured so when the columns that fit are
# chosen, then takes the room they leave: more on a wide screen)
WIDTHS = {"session": 26, "attention": 22}
# left out in this order, while the columns are wider than the table (at 80 columns the rest fit): the needed ones stay
LEAST_NEEDED = ("where", "$/h", "class", "phase", "cache", "ctx", "cost", "write")
SESSION_MIN = 12  # a session's title is cut to the room the other columns leave, but no shorter


class FleetTable(RowTable):
    """The fleet's table: Enter goes on to the screen's ``open`` (``fleet.open``, which a keymap rebinds and ``?``
    lists by its id), on a row or, to say why, with no row shown; a click on a row opens it too."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """No ``select_cursor``: the key is the screen's."""
        if action == "select_cursor":
            return False
        return super().check_action(action, parameters)


class FleetScreen(Screen[None]):
    """The fleet of sessions under ``roots`` (see the module docstring)."""

    DEFAULT_CSS = """
    /* roots past the line's end are cut with "…", so the list is not taken to end at its last comma */
    #fleet-title { height: 1; padding: 0 1; background: $panel; text-style: bold; text-wrap: nowrap;
                   text-overflow: ellipsis; }
    #fleet-table { height: 1fr; }
    #fleet-filter { display: none; height: 3; }
    #fleet-filter.shown { display: block; }
    /* one row as a rule; a long note (what a root holds instead of sessions, a refused host key) takes the rows
       it needs, at most 40% of the screen (of a table with no rows, 75%), and scrolls in its box */
    #fleet-status-box { height: auto; max-height: 40%; }
    FleetScreen.-empty #fleet-status-box { max-height: 75%; }
    #fleet-status { height: auto; padding: 0 1; }
    """
    BINDINGS = [
        Binding("enter", "open", "Open", id="fleet.open"),
        Binding(
            "n", "next_attention", "Attention", tooltip="the next row needing attention", id="fleet.next"
        ),
        Binding("slash", "filter", "Filter", id="fleet.filter"),
        Binding("escape", "close_filter", "Close the filter line", show=False, id="fleet.filter_close"),
        Binding("P", "pause", "Pause", tooltip="pause the host, or resume it when paused", id="fleet.pause"),
        Binding("m", "message", "Message", id="fleet.message"),
        Binding("S", "stop", "Stop…", id="fleet.stop"),
    ]
    FOOTER_LEAST = ("filter", "next_attention")  # left out of a narrow footer first: the status line names their keys

    def __init__(self, roots: list[Path], feed: FleetFeed, layout_notes: list[str]) -> None:
        super().__init__()
        self.roots = roots
        self.feed = feed
        self.rows: dict[str, Shown] = {}  # every row the worker reported, by key, in the fleet's order
        self.shown: list[str] = []  # the keys on screen (after the filter), in order
        self.query_text = ""
        self.loaded = False  # the first poll landed
        self.problems: list[str] = []  # what keeps a root from being read (a refused host key)
        self.skipped: list[str] = []  # directories or machines the last scan could not read
        # a root that holds no session where one would (a project's directory, loose logs): what it is instead
        self.layout_notes = layout_notes
        self.labels: Counter[str] = Counter()  # how many rows show each title: one two share gets its id's head
        # by row key, the widths of its cells as ``_fitting`` measures them, and the cells and title tail measured
        self.measured: dict[str, tuple[tuple[str, ...], str, list[int]]] = {}
        self.dialog: tuple[Dialog[object], str] | None = None  # a row action's dialog up now, and the row's key
        # by (row key, op), a row action begun from here and not done: its host being read (CHECKING) or its request
        # sent and not answered (WAITING, until its host answers or exits); the key that would begin it again says
        # so and sends nothing (``core.control.once``)
        self.pending: dict[tuple[str, str], str] = {}
        # by row key, the state an applied pause or resume told the operator, and the row's host then: P goes by it
        # until the row's host changes (the row's state is read apart from the answer, and may lag it)
        self.told: dict[str, tuple[str, dict[str, object]]] = {}

    def compose(self) -> ComposeResult:
        """Title, filter line, table, status, footer."""
        yield Static("Fleet", id="fleet-title")
        yield Input(
            placeholder="filter: words, state:paused, host:local, attention (Enter applies)",
            id="fleet-filter",
        )
        table = FleetTable(cursor_type="row", id="fleet-table")
        for column in COLUMNS:
            table.add_column(column, key=column)
        self.columns = COLUMNS  # the columns shown (``_fitting``)
        self.session_room = WIDTHS["session"]  # the cells the session's column takes (``_fitting``)
        yield table
        with VerticalScroll(id="fleet-status-box"):
            yield Static("reading the logs…", id="fleet-status")
        yield PriorityFooter()

    @while_stacked
    def on_mount(self) -> None:
        """Ask the feed for the rows and keep the toasts off the status line."""
        self.screen_layout_refresh_signal.subscribe(self, self._place_toasts)
        self.query_one(DataTable).focus()
        self.feed.show(True)

    def _place_toasts(self, screen: Screen[object]) -> None:
        """The toasts stack up from the bottom of the table, in its lower half: the title, the column labels, the
        rows needing attention (listed first), the status line and the footer stay in sight."""
        if not self._drawable():
            return
        table = self.query_one(DataTable).region
        stack_toasts(self, top=False, edge=self.size.height - table.bottom, room=table.height // 2, keep_newest=True)

    def on_screen_resume(self) -> None:
        """Shown again (a session or a dialog above it closed): the feed posts the rows again."""
        self.feed.show(True)

    def on_screen_suspend(self) -> None:
        """Hidden under an open session: the feed still follows every log (alerts) but posts no rows (under a row
        action's dialog it does: the dialog says when the row's host exits)."""
        if self.dialog is None:
            self.feed.show(False)

    def on_unmount(self) -> None:
        """No rows wanted any more."""
        self.feed.show(False)

    # drawing ------------------------------------------------------------------------------------------------
    def changed(self, message: FleetChanged) -> None:
        """The feed's rows: the whole table, or the rows that changed in place. None are taken while the table is
        not there (before the screen is composed, where ``on_mount`` asks the feed for them again, or while the app
        takes the screen down)."""
        if not self._drawable():
            return
        if message.rows is not None:
            self._show(message.rows, message.skipped)
        else:
            self._patch(message.changed)

    def problem(self, message: str) -> None:
        """Something keeps a root from being read: said once, as a toast and on the status line."""
        if message not in self.problems:
            self.problems.append(message)
            self.notify(message, title="Fleet", severity="error", timeout=15, markup=False)
            if self.loaded and self._drawable():
                self._titles()

    def _drawable(self) -> bool:
        """Whether the table is there to draw on."""
        return bool(self.query(FleetTable))

    def _show(self, rows: list[Shown], skipped: list[str]) -> None:
        self.rows = {shown.key: shown for shown in rows}
        self.labels = Counter(shown.row.label for shown in rows)
        self.measured = {key: widths for key, widths in self.measured.items() if key in self.rows}
        self.loaded = True
        self.skipped = skipped
        self._warn_dialog()
        self._draw()
        self._titles()

    def _titles(self) -> None:
        rows = list(self.rows.values())
        need = sum(1 for shown in rows if shown.row.attention)
        names = [root.name or str(root) for root in self.roots]
        # a name two roots share (a/sessions, b/sessions, or one here and one over SSH) tells neither: given whole
        where = ", ".join(quoted_path(name if names.count(name) == 1 else root) for name, root in zip(names, self.roots, strict=True))
        self.query_one("#fleet-title", Static).update(
            Text(
                f"Fleet: {len(rows)} session{'' if len(rows) == 1 else 's'}, {need} need{'s' if need == 1 else ''} "
                f"attention · {where}"
            )
        )
        attention, filter_key, open_key = (key_of(self.app, i) for i in ("fleet.next", "fleet.filter", "fleet.open"))
        status = (
            f"filter: {self.query_text}"
            if self.query_text
            else f"{attention} next attention · {filter_key} filter · {open_key} open"
        )
        n = len(rows)
        if rows and self.query_text and not self.shown:
            status += f": hides all {n} session{'' if n == 1 else 's'} ({filter_key} then Enter on an empty filter shows them)"
        elif self.query_text and len(self.shown) < n:
            status += f" · {len(self.shown)} of {n} shown"
        self.set_class(not rows, "-empty")
        if not rows:
            status = "; ".join([f"{sessions_under(0, self.roots)} yet", *self.layout_notes])
        self.query_one("#fleet-status", Static).update(
            Text(printable("; ".join([status, *self.skipped, *self.problems])))  # names of what is on disk
        )

    def _patch(self, changed: list[Shown]) -> None:
        """Some rows changed in place (same rows, same order): only their cells are redrawn."""
        self.rows.update((shown.key, shown) for shown in changed)
        self._warn_dialog()
        labels, self.labels = self.labels, Counter(shown.row.label for shown in self.rows.values())
        if labels != self.labels or any(matches(shown.row, self.query_text) != (shown.key in self.shown) for shown in changed):
            self._draw()  # a row entered or left the filter, or a title came to be shared (or no longer)
        else:
            self._draw([shown.key for shown in changed if shown.key in self.shown])
        self._titles()

    def _warn_dialog(self) -> None:
        """The row action's dialog up now says at once that nothing would be sent, and why, once its row's host exits."""
        if self.dialog is not None and (shown := self.rows.get(self.dialog[1])) is not None:
            why = state_refusal(HostState(**shown.row.host))
            self.dialog[0].warn(None if why is None else f"As things stand nothing is sent: {why}")

    def _ask(self, row: FleetRow, dialog: Dialog[object], then: Callable[[object], None]) -> None:
        """Push ``dialog`` for an action on ``row`` (``then`` gets its answer), kept up to date with the row's host."""

        def answered(answer: object) -> None:
            self.dialog = None
            then(answer)

        self.dialog = (dialog, row.key)
        self.app.push_screen(dialog, answered)

    def on_resize(self) -> None:
        """A new width: the columns that fit it."""
        if self.loaded:
            self._draw()

    def _fitting(self, keys: list[str]) -> tuple[tuple[str, ...], int]:
        """The columns whose widths (their labels' and the rows' ``keys``' cells, padded) fit the table beside its
        scrollbar, the least needed left out first (a title measured cut to ``WIDTHS``), and the cells the session's
        column takes: the room the others leave it, wider on a wide screen, narrower on a narrow one (no less than
        ``SESSION_MIN``)."""
        table = self.query_one(DataTable)
        room = table.size.width - table.styles.scrollbar_size_vertical  # the same with a scrollbar or without
        padding = 2 * table.cell_padding
        rows = [self._widths(key) for key in keys]
        widths = {column: max([cell_len(column), *(row[index] for row in rows)]) + padding
                  for index, column in enumerate(COLUMNS)}  # fmt: skip
        shown = fitting(widths, room, LEAST_NEEDED)
        left = room - sum(widths[c] for c in shown if c != "session") - padding
        return tuple(shown), max(SESSION_MIN, left)

    def _widths(self, key: str) -> list[int]:
        """The widths of the row ``key``'s cells, its title cut to ``WIDTHS``: measured again only when its cells or
        its title's tail changed (a fleet's one changed row does not draw every other row again)."""
        shown = self.rows[key]
        tail = twin(shown.row, self.labels)
        known = self.measured.get(key)
        if known is None or known[:2] != (shown.cells, tail):
            known = (shown.cells, tail, [cell.cell_len for cell in self._cells(shown, room=WIDTHS["session"])])
            self.measured[key] = known
        return known[2]

    def _draw(self, only: list[str] | None = None) -> None:
        table = self.query_one(DataTable)
        keys = (
            self.shown
            if only is not None
            else [k for k, v in self.rows.items() if matches(v.row, self.query_text)]
        )
        current, y = self.current_key, table.scroll_y
        columns, self.session_room = self._fitting(keys)
        rebuilt = show_columns(table, columns)
        if rebuilt:  # fill_table keeps the cursor and the view on a table it clears of rows only: kept here
            self.columns = columns
        elif keys == self.shown:
            for key in keys if only is None else only:
                for column, cell in zip(self.columns, self._cells(self.rows[key], self.columns), strict=True):
                    if table.get_cell(key, column) != cell:
                        table.update_cell(key, column, cell, update_width=True)  # a longer cell widens it
            return
        fill_table(table, [(key, self._cells(self.rows[key], self.columns)) for key in keys])
        if rebuilt:
            table.scroll_to(y=y, animate=False, immediate=True)
            if current in keys:
                table.move_cursor(row=keys.index(current))
        self.shown = keys

    def _cells(self, shown: Shown, columns: tuple[str, ...] = COLUMNS, room: int | None = None) -> list[Text]:
        """The row's cells in ``columns`` as drawn: the log's text with its controls as pictures (``printable``; a
        title's ``[…]`` is no markup), a title other rows share followed by the head of the session's id, attention
        in red (``room``: the session's cells, else ``session_room``)."""
        twin_tail = twin(shown.row, self.labels)
        out = []
        for column, cell in zip(COLUMNS, shown.cells, strict=True):
            text, tail = printable(cell), twin_tail if column == "session" else ""
            width = (room or self.session_room) if column == "session" else WIDTHS.get(column)
            out.append(Text(text + tail if width is None else cut(text, width, tail)))
        if shown.row.attention:
            out[COLUMNS.index("attention")].stylize("bold red")
        return [text for column, text in zip(COLUMNS, out, strict=True) if column in columns]

    @property
    def current_key(self) -> str | None:
        """The key of the row under the cursor (None: no rows)."""
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def _current(self) -> FleetRow | None:
        """The row under the cursor; with none shown, None and a toast that says why."""
        key = self.current_key
        if key in self.rows:
            return self.rows[key].row
        self._say_no_row()
        return None

    def _say_no_row(self) -> None:
        why = (
            f"the filter hides every session ({key_of(self.app, 'fleet.filter')} changes it)"
            if self.rows
            else "no session under the roots yet"
        )
        self.notify(f"No row shown: {why}.", timeout=3)

    # keys ---------------------------------------------------------------------------------------------------
    def action_open(self) -> None:
        """Open the session under the cursor (going back returns to this row)."""
        row = self._current()
        if row is not None:  # a remote row's path reads user@host:PATH: the session is read over SSH
            self.app.open_session(row.ref.path)  # type: ignore[attr-defined]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter or a click on a row opens it."""
        self.action_open()

    def open_row(self, key: str) -> bool:
        """Open the session of the row ``key`` (its log's path) as Enter on it does, from a screen over the table
        (the alerts): the screens over the table close, the session open there with them, and the cursor goes to
        the row, so that going back returns to it. False when no row has that key."""
        shown = self.rows.get(key)
        if shown is None:
            return False
        while self.app.screen is not self and self in self.app.screen_stack:
            self.app.pop_screen()
        if key in self.shown:
            self.query_one(DataTable).move_cursor(row=self.shown.index(key))
        self.app.open_session(shown.row.ref.path)  # type: ignore[attr-defined]
        return True

    def action_next_attention(self) -> None:
        """Move to the next row needing attention (after the cursor, wrapping around)."""
        table = self.query_one(DataTable)
        if not self.shown:
            self._say_no_row()
            return
        start = table.cursor_row
        for step in range(1, len(self.shown) + 1):
            index = (start + step) % len(self.shown)
            if self.rows[self.shown[index]].row.attention:
                table.move_cursor(row=index)
                return
        self.notify("No session needs attention.", timeout=3)

    def action_filter(self) -> None:
        """Show the filter line."""
        box = self.query_one("#fleet-filter", Input)
        box.add_class("shown")
        box.value = self.query_text
        box.focus()

    def action_close_filter(self) -> None:
        """Esc on the filter line: close it, the filter in force as it was, and go back to the table."""
        box = self.query_one("#fleet-filter", Input)
        if box.has_class("shown"):
            box.remove_class("shown")
            self.query_one(DataTable).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter applies the filter and goes back to the table."""
        self.query_text = event.value.strip()
        event.input.remove_class("shown")
        self.query_one(DataTable).focus()
        self._draw()
        self._titles()

    def action_pause(self) -> None:
        """Pause the session's host, or resume it when it is paused (after a confirm)."""
        row = self._current()
        if row is None:
            return
        state = self._told_state(row)
        op = "resume" if state in ("pausing", "paused") else "pause"
        self._begin(row, op, lambda: self._confirm(row, op, {}, state))

    def _told_state(self, row: FleetRow) -> object:
        """The row's host state as the operator has been told it: an applied pause's or resume's, until the row's
        host changes; else the row's."""
        told = self.told.get(row.key)
        return told[0] if told is not None and told[1] == row.host else row.host.get("state")

    def action_message(self) -> None:
        """Ask for a message, then confirm sending it to the session's agent."""
        row = self._current()
        if row is None:
            return

        def asked(text: object) -> None:
            if isinstance(text, str) and text.strip():
                self._confirm(row, "message", {"text": text.strip()})

        self._begin(row, "message", lambda: self._ask(
            row, message_ask(self.app, f"Message {self._named(row)}"), asked))  # fmt: skip

    def action_stop(self) -> None:
        """Stop the session's host (after a confirm)."""
        row = self._current()
        if row is not None:
            self._begin(row, "stop", lambda: self._confirm(row, "stop", {"reason": "stopped by the operator from the fleet"}))  # fmt: skip

    def _begin(self, row: FleetRow, op: str, then: Callable[[], object]) -> None:
        """Begin ``op`` on ``row``: its host is read (``_when_live``), then ``then`` asks. One begun from here and not
        done (its host still being read: two quick presses; or sent and not answered: a second one confirmed against
        a state that lags) is said instead, and nothing is asked or sent twice; so is any while another row action is
        checked or asked (one dialog at a time, the one ``self.dialog`` tracks)."""
        held = held_back(op, self.pending.get((row.key, op)), self._named(row))
        if held is not None:
            self.notify(held, title="Not sent", timeout=6, markup=False)
            return
        if self.dialog is not None or CHECKING in self.pending.values():  # one dialog at a time, tracked
            said = f"{_asked(op, self._named(row))} is not asked: another row action is being checked or asked"
            self.notify(sentence(f"{said}; one row action at a time"), title="Not asked", timeout=6, markup=False)
            return
        self.pending[(row.key, op)] = CHECKING
        self._when_live(row, op, then)

    @work(thread=True, group="fleet-send", exit_on_error=False)
    def _when_live(self, row: FleetRow, op: str, then: Callable[[], object]) -> None:
        """Run ``then`` (ask, confirm) on the UI thread when a live host would read ``op`` now; else say why at once,
        before the operator types or confirms anything (the host's state is read here, in a worker: over SSH it is a
        round trip)."""
        try:
            why = row_refusal(row.ref.path)
        except (TapedeckError, OSError) as exc:
            why = str(exc)
        except Exception as exc:  # noqa: BLE001 - a bug here is told, and the table goes on
            why = self._unexpected(exc)
        self.app.call_from_thread(self._checked, row, op, then, why)

    def _checked(self, row: FleetRow, op: str, then: Callable[[], object], why: str | None) -> None:
        """``op`` on ``row`` is checked: its guard is cleared and ``then`` asks (or ``why`` is said) in one UI
        callback, so that no key lands between the two on a fleet neither guarded nor asking."""
        self._done(row.key, op)
        if why is None:
            then()
        else:
            self.notify(sentence(f"{_asked(op, self._named(row))}: {why}"), title="Not sent", severity="error",
                        markup=False)  # fmt: skip

    def _confirm(self, row: FleetRow, op: str, args: dict[str, str], state: object = None) -> None:
        """Ask the operator to confirm ``op`` on ``row``, its host's state said as ``state`` (by default the row's)."""

        def decided(confirmed: object) -> None:
            if confirmed:
                self.pending[(row.key, op)] = WAITING
                self._send(row.key, op, args, name)

        name = self._named(row)
        state = row.host.get("state") if state is None else state
        body = Text(f"Send {op} to {name} ({row.where}, {state}) through its control inbox?")
        if "text" in args:  # whole: the operator confirms what they read (the body scrolls)
            body.append(f"\n\n{printable(args['text'])}")
        if op == "stop":  # what it does to that host (its kind as the row read it, DSH's or ours)
            body.append(f"\n\n{what_stop_does(row.host.get('kind'))}")
        self._ask(row, ConfirmScreen(cut(f"{op} {name}", 70), body, op.capitalize()), decided)

    def _named(self, row: FleetRow) -> str:
        """The row's title as the table shows it: one other rows share followed by the head of its session id, so
        that a confirm or an answer names the session it is about."""
        return row.label + twin(row, self.labels)

    @work(thread=True, group="fleet-send", exit_on_error=False)
    def _send(self, key: str, op: str, args: dict[str, str], label: str) -> None:
        """Send the request for the row ``key`` names (its log's path); the host's answer follows (a DSH bridge's, or
        our host's from its log: it may refuse what the table could not foresee, or exit before it applies it)."""
        answer = None
        try:
            answer = self._send_and_wait(Path(key), op, args, label)
        finally:
            if not get_current_worker().is_cancelled:
                self.app.call_from_thread(self._answered, key, op, answer)

    def _send_and_wait(self, path: Path, op: str, args: dict[str, str], label: str) -> dict[str, Any] | None:
        """``_send``'s work, in its worker: the host's answer, once told (None: none came). One that takes longer
        than ``ANSWER_SECONDS`` is said, and waited for on as long as the host runs: the key sends no second one."""
        try:
            answer_of = RowAnswer(path)
            request = send_row_action(path, op, args)
        except Exception as exc:  # noqa: BLE001 - an unexpected one is told as well, and the table goes on
            why = str(exc) if isinstance(exc, (TapedeckError, OSError)) else self._unexpected(exc)
            self.app.call_from_thread(self.notify, sentence(f"{_asked(op, label)}: {why}"), title="Not sent",
                                      severity="error", markup=False)  # fmt: skip
            return None
        self.app.call_from_thread(self.notify, sentence(f"{asked_words(op)} was sent to {label}"), timeout=3,
                                  markup=False)  # fmt: skip
        worker = get_current_worker()  # cancelled when the app exits: quitting never waits out the answer
        title = "DSH bridge" if answer_of.kind == KIND_DSH else "host"
        try:
            answer = answer_of.wait(request["id"], stop=lambda: worker.is_cancelled,
                                    late=lambda: self.app.call_from_thread(self._late, op, label, title))  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - as above
            answer, lost = None, str(exc) if isinstance(exc, (TapedeckError, OSError)) else self._unexpected(exc)
        else:
            lost = answer_of.gone or "none came"
        if worker.is_cancelled:
            return None
        if answer is None:
            text, severity = sentence(f"{_asked(op, label, 'sent to')} got no answer: {lost}"), "warning"
        else:
            text = _answer_said(answer, op, label, title)
            severity = "information" if answer.get("outcome") == APPLIED else "error"
        self.app.call_from_thread(self.notify, text, title=title, severity=severity, markup=False)
        return answer

    def _late(self, op: str, label: str, title: str) -> None:
        """No answer came within ``ANSWER_SECONDS``: what became of the request, and that its key waits on."""
        key = key_of(self.app, "fleet.pause" if op == "resume" else f"fleet.{op}")
        self.notify(f"No answer to {_asked(op, label, 'sent to')} within {ANSWER_SECONDS:g} s. The request stays in "
                    f"the session's inbox and its {title} may still apply it: {key} sends no second {op} until it "
                    "answers (told here) or exits.", title=title, severity="warning", markup=False)  # fmt: skip

    def _answered(self, key: str, op: str, answer: dict[str, Any] | None) -> None:
        """A request sent from here is answered, or given up on: its key may send it again; an applied pause or
        resume is the state P goes by until the row's host changes."""
        self._done(key, op)
        if answer is not None and answer.get("outcome") == "applied" and op in ("pause", "resume") and key in self.rows:
            self.told[key] = ("paused" if op == "pause" else "running", self.rows[key].row.host)

    def _done(self, key: str, op: str) -> None:
        """``op`` on the row ``key`` is no longer under way from here (its key may begin it again)."""
        self.pending.pop((key, op), None)

    def _unexpected(self, exc: Exception) -> str:
        """What a row action's worker says of an error nobody foresaw (a bug): its type and words, logged too."""
        text = unexpected(exc)
        self.app.call_from_thread(self.log.error, f"fleet row action: {text}")
        return text


def _answer_said(answer: dict[str, Any], op: str, label: str, who: str) -> str:
    """The toast that tells the host's ``answer`` to the ``op`` sent to the session titled ``label``: one sentence
    that names the session and says what ``who`` (``host``, ``DSH bridge``) did with it, and why when it says."""
    outcome, sent = answer.get("outcome"), _asked(op, label, "sent to")
    done = {
        APPLIED: f"the {who} applied {sent}",
        REJECTED: f"the {who} refused {sent}",
        CANCELLED: f"the {who} cancelled {sent}",
        EXPIRED: f"{sent} expired before the {who} applied it",
    }.get(outcome, f"whether the {who} applied {sent} is not known")  # unknown: it died while it ran it
    return sentence(f"{done}: {answer['error']}" if answer.get("error") else done)


def _asked(op: str, label: str, how: str = "to") -> str:
    """The ``op`` request ``how`` (``to``, ``sent to``) the session titled ``label``, in the words an open session's
    toasts name it by (``asked_words``): ``the pause sent to Port the CLI``, ``your message to …``."""
    return f"{asked_words(op)} {how} {label}"
