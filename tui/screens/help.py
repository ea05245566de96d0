"""The ``?`` help screen, generated from the bindings active where it was opened."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Static

from tui.screens.toasts import stack_toasts, toast_room
from tui.widgets.footer import PriorityFooter


@dataclass(frozen=True)
class HelpEntry:
    """One key line: where it applies, the keys, what it does and the binding id a keymap can rebind ("" for a
    fixed key: one of Textual's own, which no keymap can rebind)."""

    scope: str
    keys: str
    description: str
    binding_id: str

    @property
    def fixed(self) -> bool:
        """Whether no keymap can rebind the key."""
        return not self.binding_id


SCOPE_WORDS = {
    "MainScreen": "main screen",
    "EventList": "event list",
    "SearchBar": "search bar",
    "DataTable": "table",
    "RowTable": "table",
    "FleetScreen": "fleet table",
    "FilterScreen": "filter dialog",
    "HelpScreen": "this help",
    "Input": "text field",
    "TextView": "detail pane",
    "VerticalScroll": "scrolling box",
}


SCREEN_WIDE = frozenset(binding.action for binding in Screen.BINDINGS)  # Textual's keys of every screen


def scope_name(node: object) -> str:
    """Where a binding works, in words: ``everywhere``, ``main screen``, ``table``, ``checkpoints screen`` …"""
    if isinstance(node, App):
        return "everywhere"
    name = type(node).__name__
    if name in SCOPE_WORDS:
        return SCOPE_WORDS[name]
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).lower()


def bindings_here(app: App[object], screen: Screen[object]) -> Iterator[tuple[DOMNode, Binding]]:
    """Every binding that works on ``screen``, with the node it belongs to: those active now (the focused widget's,
    its ancestors', the app's: ``Screen.active_bindings``), then those of each other widget the focus can move to,
    as the keymap left them; none whose action is off here (``check_action``)."""
    for namespace, binding, _enabled, _tooltip in screen.active_bindings.values():
        yield namespace, binding
    for widget in screen.focus_chain:
        if widget is screen.focused:
            continue
        bindings = widget._bindings.copy()
        if app._keymap:
            bindings.apply_keymap(app._keymap)
        for _key, binding in bindings:
            if app._check_action_state(binding.action, widget) is not False:
                yield widget, binding


def help_entries(app: App[object], screen: Screen[object]) -> list[HelpEntry]:
    """Every binding with a description that works on ``screen`` (``bindings_here``), keys as the keymap left them,
    merged by id (a fixed key's by action) and where it works. A binding with an id is one ``tui.keymap`` knows
    (tapedeck's own and the Textual keys its widgets take in, ``keymap.textual_bindings``); Textual's generic keys
    that no tapedeck class takes in (moving the focus, copying, a text field's editing keys) have none: they are
    listed as fixed. Textual's keys of every screen (``SCREEN_WIDE``: moving the focus, copying the selection) are
    listed once, among those that work everywhere, and a widget's key that does there what one of those does is not
    listed again under the widget."""
    seen: dict[tuple[str, str], HelpEntry] = {}
    for namespace, binding in bindings_here(app, screen):
        if not binding.description or binding.system:
            continue
        wide = isinstance(namespace, Screen) and not binding.id and binding.action in SCREEN_WIDE
        scope = "everywhere" if wide else scope_name(namespace)
        keys = app.get_key_display(binding)
        merged = (binding.id or f"{binding.action} (fixed)", scope)
        entry = seen.get(merged)
        if entry is not None:
            keys = entry.keys if keys in entry.keys.split(" / ") else f"{entry.keys} / {keys}"
        seen[merged] = HelpEntry(scope, keys, binding.description, binding.id or "")
    everywhere = {(e.keys, e.description) for e in seen.values() if e.scope == "everywhere"}
    return [e for e in seen.values() if e.scope == "everywhere" or (e.keys, e.description) not in everywhere]


DOES_MIN = 24  # the cells the "does" column needs beside the others; with fewer, each scope heads its own keys


def keys_table(entries: Sequence[HelpEntry], width: int) -> RenderableType:
    """The keys in ``width`` cells, one group per scope (everywhere first) with a blank line between, each scope's
    fixed keys after those a keymap can rebind; descriptions wrap, and a word wider than its column breaks rather
    than being cut. Where the scope, keys and binding id columns would leave the descriptions fewer than
    ``DOES_MIN`` cells, each scope is a heading over its keys instead of a column beside them."""
    ordered = sorted(entries, key=lambda e: (e.scope != "everywhere", e.scope, e.fixed))
    widest = {
        "scope": max((cell_len(e.scope) for e in ordered), default=0),
        "keys": max((cell_len(e.keys) for e in ordered), default=0),
        "id": max((cell_len(e.binding_id or "fixed") for e in ordered), default=0),
    }
    beside = sum(max(cell_len(head), widest[column]) + 1 for column, head in SIDE_HEADS.items())
    if width - beside >= DOES_MIN:
        return _keys_grid(ordered, scope_column=True)
    scopes = [list(group) for _scope, group in itertools.groupby(ordered, key=lambda e: e.scope)]
    keys_width = max(cell_len("keys"), widest["keys"])
    id_width = max(cell_len("binding id"), widest["id"])
    parts: list[RenderableType] = [_keys_grid([], scope_column=False, widths=(keys_width, id_width))]
    for n, group in enumerate(scopes):
        heading = Text(group[0].scope, style="dim underline")
        parts += [*([Text()] if n else []), heading, _keys_grid(group, scope_column=False, widths=(keys_width, id_width),
                                                                heads=False)]  # fmt: skip
    return Group(*parts)


SIDE_HEADS = {"scope": "where", "keys": "keys", "id": "binding id"}  # the columns beside "does", by their heads


def _keys_grid(
    ordered: Sequence[HelpEntry],
    *,
    scope_column: bool,
    widths: tuple[int, int] | None = None,
    heads: bool = True,
) -> Table:
    """``ordered`` as a grid: where (``scope_column``), keys, does and binding id, the heads first (``heads``);
    ``widths`` fixes the keys' and the ids' columns, so that the grids of several scopes line up."""
    keys_width, id_width = widths or (None, None)
    grid = Table.grid(padding=(0, 1), expand=widths is not None)  # each scope's grid as wide: their columns line up
    if scope_column:
        grid.add_column(style="dim", no_wrap=True)
    grid.add_column(style="bold cyan", no_wrap=True, width=keys_width)
    grid.add_column(ratio=1, overflow="fold")
    grid.add_column(style="dim", overflow="fold", width=id_width)
    if heads:
        names = ("where", "keys", "does", "binding id") if scope_column else ("keys", "does", "binding id")
        grid.add_row(*(Text(head, style="bold underline") for head in names))
    for n, entry in enumerate(ordered):
        first = n == 0 or ordered[n - 1].scope != entry.scope
        if first and n:
            grid.add_row()  # a blank line between scopes
        fixed = Text("fixed", style="italic") if entry.fixed else entry.binding_id
        cells = (entry.keys, entry.description, fixed)
        grid.add_row(*((entry.scope if first else "",) if scope_column else ()), *cells)
    return grid


class KeysTable:
    """The keys as ``keys_table`` lays them out for the width the help box draws them in (it reflows on a resize)."""

    def __init__(self, entries: Sequence[HelpEntry]) -> None:
        self.entries = entries

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The keys laid out for ``options.max_width``."""
        yield keys_table(self.entries, options.max_width)


def legend_table(legend: Sequence[tuple[str, str]]) -> Table:
    """A screen's legend (term, explanation) as a two-column grid whose explanations wrap."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold cyan", no_wrap=True)
    grid.add_column(ratio=1)
    for term, text in legend:
        grid.add_row(term, text)
    return grid


class HelpScreen(Screen[None]):
    """Keys, grouped by where they work, with their binding ids for ``keymap.toml``."""

    BINDINGS = [Binding("escape,q,question_mark", "close", "Close help", id="help.close")]

    def __init__(
        self,
        entries: list[HelpEntry],
        keymap_file: str,
        problems: list[str],
        legend: Sequence[tuple[str, str]] = (),
        legend_title: str = "",
    ) -> None:
        super().__init__()
        self.entries = entries
        self.keymap_file = keymap_file
        self.problems = problems
        self.legend = legend
        self.legend_title = legend_title

    def compose(self) -> ComposeResult:
        """The legend, if any, then the keys grouped by where they work (``keys_table``) and the notes."""
        notes = Text.assemble(
            ("Rebind keys in ", "dim"),
            (self.keymap_file, "bold"),
            (' with lines like  main.search = "ctrl+f"  (binding id = keys). ', "dim"),
            ("A key marked fixed is Textual's own: no keymap can rebind it.", "dim"),
        )
        for problem in self.problems:
            notes.append(f"\n{problem}", style="bold red")
        with VerticalScroll(id="help-dialog"):
            if self.legend:
                yield Static(
                    Text(self.legend_title or "What the columns mean", style="bold"), id="help-title"
                )
                yield Static(legend_table(self.legend), id="help-legend")
            yield Static(Text("tapedeck keys", style="bold"), id="help-keys-title")
            yield Static(KeysTable(self.entries), id="help-keys")
            yield Static(notes, id="help-notes")
        yield PriorityFooter()  # how to leave, in sight wherever the box is scrolled

    def on_mount(self) -> None:
        """Keep the toasts off the help text."""
        self.screen_layout_refresh_signal.subscribe(self, self._place_toasts)

    def _place_toasts(self, screen: Screen[object]) -> None:
        """The toasts stack at the bottom of the screen, above the footer, the newest that fit in half of it shown,
        and the help box ends above them (it scrolls) until they are gone."""
        room = toast_room(self)
        box = self.query_one("#help-dialog")
        footer = self.query_one(PriorityFooter).outer_size.height
        box.styles.max_height = (
            self.size.height - box.styles.margin.top - footer - room
        )  # its top stays where it is
        stack_toasts(self, top=False, edge=footer, room=room)

    def action_close(self) -> None:
        """Back to where help was opened."""
        self.dismiss(None)
