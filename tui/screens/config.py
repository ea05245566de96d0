"""The Config screen: the policy config as an editable key list with inline validation, a diff before sending,
and the changes the log records.

The effective config is the one the session runs under, read from its log by ``core.control.config.session_config``:
the config its host started with (the ``tapedeck/host`` event) plus every ``tapedeck/config`` change. A proposed value is checked
off the UI thread by ``core.control.config.set_value``, so the message under the editor is the section validator's own.
A valid change opens a diff; confirming it sends a ``config.set`` request, whose outcome the panel shows.

A session DSH runs through the bridge has no policy config: the screen lists the live DSH settings the bridge can
change (``core.bridge.settings``), checks a value with ``core.bridge.ops.dsh_config_error`` and shows the changes
the bridge applied.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Static
from textual.worker import get_current_worker

from core.bridge.settings import dsh_config_changes, dsh_settings
from core.control.config import CONFIG_EVENT, PolicyConfig, parse_value, session_config, set_value
from core.control.host_state import KIND_DSH
from core.control.inbox import ControlError, validate_request
from core.log.vocabulary import HOST_EVENT
from core.read.session import Session
from core.shared.errors import ConfigError
from core.shared.text import js_json, printable
from tui.cells import cut, cut_middle, fitting, show_columns
from tui.keymap import key_of
from tui.screens.confirm import AskScreen, ConfirmScreen
from tui.screens.policy_screen import PolicyScreen, column_widths, fill_table, logged
from tui.screens.stacked import while_stacked
from tui.widgets.table import RowTable


def effective_config(session: Session) -> PolicyConfig:
    """The session's config as ``core.control.config.session_config`` reads it from the log."""
    found = sorted([*logged(session, HOST_EVENT), *logged(session, CONFIG_EVENT)], key=lambda pair: pair[0])
    return session_config(event for _, event in found)


def leaves(tree: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every settable dotted key of a config dict and its value (lists and scalars are leaves)."""
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from leaves(value, f"{dotted}.")
        else:
            yield dotted, value


def show_value(value: Any) -> str:
    """A config value as the operator types it (JSON; an unset key shows as ``null``); a recorded fact as is; the
    controls JSON leaves as they are (a C1 control, a BiDi override: a log may have set the value) as pictures."""
    return printable(str(value) if isinstance(value, Recorded) else js_json(value))


@dataclass(frozen=True, slots=True)
class LoggedChange:
    """One key change recorded in a ``tapedeck/config`` event."""

    seq: int
    by: str
    key: str
    old: Any
    new: Any


@dataclass(frozen=True, slots=True)
class ConfigView:
    """The effective config and its history (``config`` None: a DSH session's live settings; ``recorded``: what a
    DSH log no bridge runs records, read-only)."""

    config: PolicyConfig | None
    values: tuple[tuple[str, Any], ...]
    history: tuple[LoggedChange, ...]
    recorded: bool = False


@dataclass(frozen=True, slots=True)
class Check:
    """The verdict on a proposed value: the diff it makes, or the validator's message."""

    key: str
    text: str
    value: Any = None
    diff: tuple[tuple[str, Any, Any], ...] = ()
    error: str | None = None


def logged_changes(session: Session) -> list[LoggedChange]:
    """Every key change the log records, oldest first."""
    found = []
    for seq, event in logged(session, CONFIG_EVENT):
        data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
        changes = data.get("changes")
        for key, change in changes.items() if isinstance(changes, Mapping) else ():
            change = change if isinstance(change, Mapping) else {}
            found.append(
                LoggedChange(seq, str(data.get("by", "?")), str(key), change.get("old"), change.get("new"))
            )
    return found


def derive_config(session: Session) -> ConfigView:
    """The effective config, its settable keys and the logged changes."""
    config = effective_config(session)
    return ConfigView(config, tuple(leaves(config.to_dict())), tuple(logged_changes(session)))


def derive_dsh_settings(session: Session) -> ConfigView:
    """A DSH session's live settings and the changes the bridge applied."""
    history = tuple(
        LoggedChange(seq, "operator", key, None, value) for seq, key, value in dsh_config_changes(session)
    )
    return ConfigView(None, tuple(dsh_settings(session)), history)


def derive_recorded(session: Session) -> ConfigView:
    """What a DSH log no bridge runs records about its settings: the latest request header's config (every key,
    as logged), its tools and system prompt, and the context window DSH reported; nothing to change."""
    header = session.request_header() or {}
    config = header.get("config") if isinstance(header.get("config"), Mapping) else {}
    values: list[tuple[str, Any]] = list(leaves(config))
    tools = [str(t.get("name")) for t in header.get("tools") or () if isinstance(t, Mapping)]
    if tools:
        values.append(("tools", Recorded(f"{len(tools)}: {', '.join(tools)}")))
    if isinstance(header.get("system"), str):
        values.append(("system prompt", Recorded(f"{len(header['system']):,} chars")))
    window = None
    for _, event in logged(session, "request/context"):
        data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
        window = data.get("contextWindow") if isinstance(data.get("contextWindow"), int) else window
    if window is not None:
        values.append(("context window", Recorded(f"{window} tokens")))
    return ConfigView(None, tuple(values), (), recorded=True)


class EditingKey:
    """"Editing <key>", wrapped after the word or after a dot of the dotted key, never inside a name (a name wider than
    the line is cut with '…')."""

    def __init__(self, key: str) -> None:
        self.text = Text.assemble(("Editing ", "dim"), (key, "bold"), no_wrap=True, overflow="ellipsis")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The line cut where the next name would not fit ``options.max_width``."""
        offsets, width = [], 0
        for part in re.finditer(r"[^ .]*[ .]|[^ .]+", self.text.plain):
            size = cell_len(part.group())
            if width and width + size > options.max_width:
                offsets.append(part.start())
                width = 0
            width += size
        lines = self.text.divide(offsets)
        for line in lines:
            line.rstrip()  # the space after "Editing" where the key starts a line
        yield Text("\n").join(lines)


class Recorded(str):
    """A recorded fact shown as it is (not as a config value, which shows as JSON)."""


def check_dsh_value(view: ConfigView, key: str, text: str) -> Check:
    """Validate ``key = text`` for a DSH session: one of the bridge's keys, a value of its type."""
    value = parse_value(text)
    try:
        validate_request("config.set", {"key": key, "value": value}, "dsh")
    except ControlError as exc:
        return Check(key, text, value, error=str(exc))
    old = dict(view.values).get(key)
    return Check(key, text, value, ((key, old, value),) if old != value else ())


def check_value(config: PolicyConfig, key: str, text: str) -> Check:
    """Validate ``key = text`` against ``config`` (the value is JSON, else a plain string)."""
    value = parse_value(text)
    try:
        proposed, _ = set_value(config, key, value)
        validate_request("config.set", {"key": key, "value": value})  # a host key is set only at start
    except (ConfigError, ControlError) as exc:
        return Check(key, text, value, error=str(exc))
    before, after = dict(leaves(config.to_dict())), dict(leaves(proposed.to_dict()))
    diff = tuple(
        (k, before.get(k), after.get(k))
        for k in sorted(before.keys() | after.keys())
        if before.get(k) != after.get(k)
    )
    return Check(key, text, value, diff)


def diff_text(check: Check) -> Text:
    """The change a ``config.set`` request would make, one key per pair of lines."""
    out = Text()
    for key, old, new in check.diff:
        out.append(f"- {key} = {show_value(old)}\n", style="red")
        out.append(f"+ {key} = {show_value(new)}\n", style="green")
    out.append(f"\nRequest: config.set {js_json({'key': check.key, 'value': check.value})}", style="dim")
    return out


RECORDED_HEADING = "Config — what this DSH log records about its settings (read-only)"
EDIT_ACTIONS = frozenset({"edit", "other_key", "submit"})
DSH_HEADING = (
    "Config — the live DSH settings the bridge can change (as the log shows them, plus applied changes)"
)


HISTORY = ("seq", "by", "key", "old→new")  # the columns of the logged changes
CHANGE = HISTORY[-1]
HISTORY_LEAST_NEEDED = ("by", "seq")  # left out in this order while the key and the change have too little room
KEY_MIN = 11  # a key is cut no shorter than this: its head, ``…`` and an end that tells it apart
VALUE_MIN = 7  # a value (a change) gets no less than this beside a key


def _room(table: DataTable[Any]) -> int:
    """The cells a table's columns may take beside its vertical scrollbar (the same with one or without)."""
    return table.size.width - table.styles.scrollbar_size_vertical


def _shares(room: int, keys: list[str], values: list[str]) -> tuple[int, int]:
    """The cells of ``room`` (padding of both columns included) a key column and a value column beside it take:
    each its widest where both fit; else the value what the key leaves it but ``VALUE_MIN``, and the key no less
    than ``KEY_MIN``."""
    key_need = max(map(cell_len, keys), default=0)
    value_need = max(map(cell_len, values), default=0)
    left = room - 4
    key = min(key_need, max(KEY_MIN, left - min(value_need, VALUE_MIN)))
    return key, min(value_need, max(left - key, 1))


class ConfigScreen(PolicyScreen):
    """Edit the policy config through the control inbox."""

    HEADING = "Config — the session's effective config (as its host started it, plus logged changes)"
    ACTIONS: ClassVar[frozenset[str]] = frozenset({"submit"})
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("e", "edit", "Edit value", id="policy.config.edit"),
        Binding("a", "other_key", "Other key…", id="policy.config.other"),
        Binding("ctrl+s", "submit", "Review & send", id="policy.config.submit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._view: ConfigView | None = None
        self._check: Check | None = None
        self._key: str | None = None
        self._submit_when_checked = False
        self._put = ""  # the text the screen put in the editor: any other is the operator's draft

    def compose_body(self) -> ComposeResult:
        """Key table, editor and history."""
        with Horizontal(id="config-body", classes="policy-body"):
            yield RowTable(id="config-keys", cursor_type="row", classes="policy-table")
            with Vertical(id="config-side", classes="policy-side"):
                with VerticalScroll(id="config-selected-box"):  # a read-only log's value of any length
                    edit, other = (key_of(self.app, i) for i in ("policy.config.edit", "policy.config.other"))
                    yield Static(
                        f"Select a key; {edit} (or Enter) edits it, {other} edits a key not listed.",
                        id="config-selected",
                    )
                yield Input(placeholder="new value (JSON, or plain text)", id="config-value")
                with VerticalScroll(id="config-check-box"):  # a value of any length leaves the history room
                    yield Static(id="config-check")
                yield Static("Logged changes", classes="policy-subtitle")
                yield RowTable(id="config-history", cursor_type="none", classes="policy-table")

    @while_stacked
    def on_mount(self) -> None:
        """Set up the tables, then derive."""
        self.query_one("#config-keys", DataTable).add_columns("key", "value")
        self.query_one("#config-history", DataTable).add_columns(*HISTORY)
        super().on_mount()

    def heading(self) -> str:
        """A DSH session's heading names its live settings, or what its log records when no bridge runs it."""
        if self._recorded_only(self.live):
            return RECORDED_HEADING
        return DSH_HEADING if self.live.host.kind == KIND_DSH else self.HEADING

    @staticmethod
    def _recorded_only(live: Any) -> bool:
        """A DSH log no bridge ever ran: nothing can change its settings."""
        return bool(live.host.kind == KIND_DSH and live.host.state == "none" and live.facts.host is None)

    def derive(self, live: Any) -> ConfigView:
        """Effective config and history (worker thread)."""
        if live.facts.host is None and live.host.state == "none":
            live.check_host()  # who runs a DSH log (a bridge or nobody) decides what this screen can show
        if self._recorded_only(live):
            return derive_recorded(live.session)
        return (
            derive_dsh_settings(live.session) if live.host.kind == KIND_DSH else derive_config(live.session)
        )

    def disabled_reason(self, action: str) -> str | None:
        """No editing where the screen shows what a log records."""
        if action in EDIT_ACTIONS and self._view is not None and self._view.recorded:
            return f"this screen shows what the log records. {self._read_only or ''}".strip()
        return super().disabled_reason(action)

    def show(self, view: ConfigView) -> None:
        """Refill both tables and re-check a pending edit against the new config."""
        self._view = view
        if view.recorded:
            self._show_recorded(view)
            return
        self._show_tables()
        if self._key is None and view.values:
            self._select(view.values[0][0])
        elif self.query_one("#config-value", Input).value != self._put:
            self._recheck()  # the operator's draft is checked against the new config
        elif self._key is not None:
            self._select(self._key)  # an untouched editor follows the live value

    def _show_tables(self) -> None:
        """Fill the key table and the table of logged changes to their widths (neither scrolls sideways): a key
        too wide loses its middle, so that two keys that differ at their ends are still told apart; a value its end
        (the editor holds the selected one whole, as the line over the table does a recorded one); a change wraps
        in its column."""
        view = self._view
        if view is None:
            return
        changed = {c.key for c in view.history}
        keys = self.query_one("#config-keys", DataTable)
        pairs = [(printable(key), show_value(value)) for key, value in view.values]
        key_room, value_room = _shares(_room(keys), ["key", *(k for k, _ in pairs)], ["value", *(v for _, v in pairs)])
        fill_table(keys, [(key, (Text(cut_middle(shown, key_room), style="bold" if key in changed else ""),
                                 cut(value, value_room)))
                          for (key, _), (shown, value) in zip(view.values, pairs, strict=True)])  # fmt: skip
        if not view.recorded:
            self._show_history(view)

    def _show_history(self, view: ConfigView) -> None:
        """The logged changes in the table's width: ``by``, then ``seq``, left out while the key and the change would
        get less than their least, the key cut in its middle, the change wrapped in what the key leaves it."""
        table = self.query_one("#config-history", DataTable)
        rows = [{"seq": str(c.seq), "by": printable(c.by), "key": printable(c.key),
                 CHANGE: f"{show_value(c.old)} → {show_value(c.new)}"} for c in view.history]  # fmt: skip
        widths = {c: column_widths([c], [[row[c]] for row in rows]) for c in HISTORY}
        room = _room(table)
        least = {**widths, "key": min(widths["key"], KEY_MIN + 2), CHANGE: min(widths[CHANGE], VALUE_MIN + 2)}
        shown = fitting(least, room, HISTORY_LEAST_NEEDED)
        left = room - sum(widths[c] for c in shown if c not in ("key", CHANGE))
        key_room, change_room = _shares(left, ["key", *(r["key"] for r in rows)], [CHANGE, *(r[CHANGE] for r in rows)])
        show_columns(table, shown)
        change = table.columns[CHANGE]  # type: ignore[index]
        change.width, change.auto_width = change_room, False
        fill_table(table, [(f"{c.seq}:{c.key}", [cut_middle(row[n], key_room) if n == "key" else row[n] for n in shown])
                           for c, row in zip(view.history, rows, strict=True)], height=None)  # fmt: skip

    def on_resize(self) -> None:
        """Fit the tables to the new width."""
        super().on_resize()
        self.call_after_refresh(self._show_tables)

    def _show_recorded(self, view: ConfigView) -> None:
        for widget in self.query(
            "#config-value, #config-check, #config-side .policy-subtitle, #config-history"
        ):
            widget.display = False
        self.query_one("#config-side").add_class("-recorded")
        self._show_tables()
        values = dict(view.values)
        self._select(self._key if self._key in values else next(iter(values), ""))
        self.refresh_bindings()

    def _show_recorded_value(self, key: str) -> None:
        """What the log records under ``key``, whole (the table cuts a long one), under the read-only note."""
        note = Text(
            "Read-only: what this DSH log records about its settings (no bridge runs it, so nothing here can be "
            "changed).",
            style="dim",
        )
        assert self._view is not None
        values = dict(self._view.values)
        if key in values:
            note.append_text(Text(f"\n{printable(key)}: {show_value(values[key])}", style="not dim"))
        self.query_one("#config-selected", Static).update(note)

    # editing --------------------------------------------------------------------------------------------
    def _select(self, key: str) -> None:
        if self._view is None:
            return
        self._key = key
        if self._view.recorded:
            self._show_recorded_value(key)
            return
        values = dict(self._view.values)
        value = values.get(key)
        self.query_one("#config-selected", Static).update(EditingKey(key))
        box = self.query_one("#config-value", Input)
        self._put = show_value(value)
        with box.prevent(Input.Changed):
            box.value = self._put
        self._check = None
        state = (
            f"current value: {show_value(value)}" if key in values else "not set here: its default applies"
        )
        self.query_one("#config-check", Static).update(Text(state, style="dim"))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Moving the cursor selects a key."""
        key = event.row_key.value
        table = event.data_table
        if table.id == "config-keys" and table.has_focus and key is not None and key != self._key:
            self._select(key)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a key edits it."""
        if event.data_table.id == "config-keys":
            self.action_edit()

    def action_edit(self) -> None:
        """Focus the editor (none where the screen shows what a log records)."""
        if self._view is not None and not self._view.recorded:
            self.query_one("#config-value", Input).focus()

    def action_close(self) -> None:
        """Esc in the value editor drops the draft and goes back to the key table; elsewhere it leaves (also before
        the screen's widgets are there: an Esc typed right after the key that opened it)."""
        if not any(box.has_focus for box in self.query("#config-value")):
            super().action_close()
            return
        if self._key is not None:
            self._select(self._key)
        self.query_one("#config-keys", DataTable).focus()

    def action_other_key(self) -> None:
        """Edit a key the table does not list (one whose default is "not set", such as an optional cap)."""

        def chosen(key: str | None) -> None:
            if key and key.strip():
                self._select(key.strip())
                self.action_edit()

        self.app.push_screen(
            AskScreen("Edit another key", "Dotted config key, for example slice.history.entryMaxChars."),
            chosen,
        )

    def on_input_changed(self, event: Input.Changed) -> None:
        """Validate as the operator types."""
        if event.input.id == "config-value":
            self._recheck()

    def _recheck(self) -> None:
        if self._view is not None and self._key is not None:
            self._validate(self._view, self._key, self.query_one("#config-value", Input).value)

    @work(thread=True, exclusive=True, group="config-check")
    def _validate(self, view: ConfigView, key: str, text: str) -> None:
        check = (
            check_dsh_value(view, key, text) if view.config is None else check_value(view.config, key, text)
        )
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_check, check)

    def _show_check(self, check: Check) -> None:
        if not self.is_attached or check.key != self._key:
            return
        self._check = check
        line = self.query_one("#config-check", Static)
        if check.error is not None:
            line.update(Text(f"✗ {printable(check.error)}", style="bold red"))
        elif not check.diff:
            line.update(Text("unchanged: this is the current value", style="dim"))
        else:
            changes = ", ".join(f"{k}: {show_value(old)} → {show_value(new)}" for k, old, new in check.diff)
            line.update(Text(f"✓ valid — {changes}  (Enter to review)", style="green"))
        if self._submit_when_checked and check.text == self.query_one("#config-value", Input).value:
            self.action_submit()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the editor reviews the change."""
        if event.input.id == "config-value":
            self.action_submit()

    def action_submit(self) -> None:
        """Show the diff of a valid change and send it once confirmed."""
        if self.read_only_reason is not None:
            self.say(f"Not sent: {self.read_only_reason}", error=True)
            return
        check = self._check
        text = self.query_one("#config-value", Input).value
        if check is None or check.key != self._key or check.text != text:
            self._submit_when_checked = True  # the check in flight opens the review when it lands
            self._recheck()
            return
        self._submit_when_checked = False
        if check.error is not None:
            self.say(f"Not sent: {check.error}", error=True)
            return
        if not check.diff:
            self.say("Nothing to send: the value is unchanged.")
            return

        def send() -> None:
            self.send_request(
                "config.set", {"key": check.key, "value": check.value}, f"config.set {check.key} = {show_value(check.value)}"
            )

        self.confirm_then(ConfirmScreen(f"Change {check.key}?", diff_text(check)), send)
