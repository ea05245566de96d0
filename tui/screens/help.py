"""The ``?`` help screen, generated from the bindings active where it was opened."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from tui.screens.toasts import stack_toasts, toast_room
from tui.widgets.footer import PriorityFooter


@dataclass(frozen=True)
class HelpEntry:
    """One key line: where it applies, the keys, what it does and the binding id a keymap can rebind."""

    scope: str
    keys: str
    description: str
    binding_id: str


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
}


def scope_name(node: object) -> str:
    """Where a binding works, in words: ``everywhere``, ``main screen``, ``table``, ``checkpoints screen`` …"""
    if isinstance(node, App):
        return "everywhere"
    name = type(node).__name__
    if name in SCOPE_WORDS:
        return SCOPE_WORDS[name]
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).lower()


def help_entries(app: App[object], screen: Screen[object]) -> list[HelpEntry]:
    """Every binding with a description and an id active on ``screen`` (the ids ``tui.keymap`` knows: tapedeck's own
    and the Textual keys its widgets take in, ``keymap.textual_bindings``), keys as the keymap left them. Textual's
    generic keys that no tapedeck class takes in (a text field's editing keys, moving the focus) have no id: a
    keymap cannot rebind them, and the help's note names them instead of listing them."""
    seen: dict[tuple[str, str], HelpEntry] = {}
    for namespace, binding, _enabled, _tooltip in screen.active_bindings.values():
        if not binding.description or binding.system or not binding.id:
            continue
        scope = scope_name(namespace)
        keys = app.get_key_display(binding)
        entry = seen.get((binding.id, scope))
        if entry is not None:
            keys = entry.keys if keys in entry.keys.split(" / ") else f"{entry.keys} / {keys}"
        seen[(binding.id, scope)] = HelpEntry(scope, keys, binding.description, binding.id)
    return list(seen.values())


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
        """A table per scope."""
        entries = sorted(self.entries, key=lambda e: (e.scope != "everywhere", e.scope))
        scope_width = max((len(e.scope) for e in entries), default=5) + 2
        keys_width = max((len(e.keys) for e in entries), default=4) + 2
        desc_width = max((len(e.description) for e in entries), default=4) + 2
        table = Text()
        table.append(
            f"{'where':<{scope_width}}{'keys':<{keys_width}}{'does':<{desc_width}}binding id\n", style="bold underline"
        )
        scope = None
        for entry in entries:
            table.append(f"{entry.scope if entry.scope != scope else '':<{scope_width}}", style="dim")
            table.append(f"{entry.keys:<{keys_width}}", style="bold cyan")
            table.append(f"{entry.description:<{desc_width}}")
            table.append(f"{entry.binding_id}\n", style="dim")
            scope = entry.scope
        notes = Text.assemble(
            ("Rebind keys in ", "dim"),
            (self.keymap_file, "bold"),
            (' with lines like  main.search = "ctrl+f"  (binding id = keys).', "dim"),
            ("\nTextual's own keys, which a keymap cannot rebind, are not listed: a text field's editing keys, "
             "tab and shift+tab to move the focus, ctrl+c to copy a selection.", "dim"),
        )  # fmt: skip
        for problem in self.problems:
            notes.append(f"\n{problem}", style="bold red")
        with VerticalScroll(id="help-dialog"):
            if self.legend:
                yield Static(
                    Text(self.legend_title or "What the columns mean", style="bold"), id="help-title"
                )
                yield Static(legend_table(self.legend), id="help-legend")
            yield Static(Text("tapedeck keys", style="bold"), id="help-keys-title")
            yield Static(table)
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
        box.styles.max_height = self.size.height - box.styles.margin.top - footer - room  # its top stays where it is
        stack_toasts(self, top=False, edge=footer, room=room)

    def action_close(self) -> None:
        """Back to where help was opened."""
        self.dismiss(None)
