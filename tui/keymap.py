"""User keymap overrides: a TOML file mapping binding ids to keys, applied with Textual's keymap support."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode

from core.shared.envdirs import own_dir, xdg_dir
from core.shared.text import printable, quoted_path, shown
from tui.settings import Unusable, read_toml

KEYMAP_NAME = "keymap.toml"


def keymap_path() -> Path:
    """``$TAPEDECK_HOME/keymap.toml`` when TAPEDECK_HOME is set, else ``$XDG_CONFIG_HOME/tapedeck/keymap.toml`` (a
    relative XDG_CONFIG_HOME is ignored, as ``core.shared.envdirs`` ignores the other XDG directories)."""
    home = own_dir("TAPEDECK_HOME")
    if home:
        return home / KEYMAP_NAME
    return xdg_dir("XDG_CONFIG_HOME", Path.home() / ".config") / "tapedeck" / KEYMAP_NAME


def _flatten(table: Mapping[str, Any], prefix: str = "", depth: int = 0) -> Iterable[tuple[str, Any]]:
    """Each value under its dotted name; a table nested past the depth of any binding id stays one value (a
    thousand nested tables ran past the interpreter's recursion limit)."""
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and depth < 4:
            yield from _flatten(value, name + ".", depth + 1)
        else:
            yield name, value


def load_keymap(
    path: Path, known_ids: Iterable[str], help_key: Callable[[Mapping[str, str]], str] | None = None
) -> tuple[dict[str, str], list[str]]:
    """Read ``path``; return the usable ``{binding id: keys}`` entries and one message per problem.

    ``main.search = "ctrl+f"`` and ``"main.search" = "ctrl+f"`` mean the same; several keys are comma-separated.
    A missing file is no problem; a file that does not parse yields no overrides and one message. An unknown id's
    message names the key that opens help once the usable entries apply: ``help_key`` of them (the app's
    ``key_of``), else ``?``.
    """
    if not path.is_file():
        return {}, []
    try:
        table = read_toml(path, "keymap")
    except Unusable as exc:
        return {}, [str(exc)]
    known = set(known_ids)
    entries = list(_flatten(table))
    keymap = {
        binding_id: ",".join(k.strip() for k in keys.split(",") if k.strip())
        for binding_id, keys in entries
        if binding_id in known and _wrong_keys(keys) is None
    }
    problems: list[str] = []
    named = quoted_path(path)
    for binding_id, keys in entries:
        if binding_id not in known:
            hint = f"press {help_key(keymap) if help_key is not None else '?'} to see the ids"
            problems.append(f"{named}: unknown binding id {shown(binding_id)} ({hint})")
        elif (wrong := _wrong_keys(keys)) is not None:
            problems.append(f"{named}: {binding_id}{wrong}")
    return keymap, problems


def _wrong_keys(keys: Any) -> str | None:
    """What is wrong with a binding's keys as a keymap gives them (the message's tail after the id), or None."""
    if not isinstance(keys, str) or not [k for k in keys.split(",") if k.strip()]:
        return ' must be a string of keys such as "ctrl+f" or "f3,ctrl+f"'
    if printable(keys) != keys:  # the footer and the palette would draw it as it is: ESC [ 2J clears the screen
        return f": {shown(keys)} holds a control character, which no key name does"
    if not keys.isprintable():  # a private-use, unassigned or format character: no key sends one
        odd = next(c for c in keys if not c.isprintable())
        return f": {shown(keys)} holds U+{ord(odd):04X}, a character no key name has"
    return None


def textual_bindings(base: type[DOMNode], prefix: str, own: Iterable[Binding]) -> list[Binding]:
    """``own`` bindings, then every binding Textual gives ``base`` (its own and those it inherits) on a key none of
    ``own`` takes, each with the id ``prefix.<action>`` a keymap rebinds it by: a subclass that declares these
    takes Textual's keys into the ids the help screen shows and a keymap may name."""
    own = list(Binding.make_bindings(own))
    taken = {binding.key for binding in own}
    inherited = [binding for _key, binding in base._merge_bindings() if binding.key not in taken]
    return [*own, *(dataclasses.replace(b, id=b.id or f"{prefix}.{b.action}") for b in inherited)]


@functools.cache
def binding_owners() -> tuple[type[DOMNode], ...]:
    """Every screen and widget class of ``tui.screens`` and ``tui.widgets`` that declares bindings, found once per
    process: listing the packages reads their directories, and ``key_of`` asks on the app's thread (at each redraw of
    the detail pane)."""
    import tui.screens
    import tui.widgets

    owners: list[type[DOMNode]] = []
    for package in (tui.screens, tui.widgets):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, DOMNode)
                    and value.__module__ == module.__name__
                    and "BINDINGS" in vars(value)
                ):
                    owners.append(value)
    return tuple(owners)


def key_of(app: App[Any], binding_id: str, keymap: Mapping[str, str] | None = None) -> str:
    """The key that runs binding ``binding_id`` now, named as the help screen and the footer name it: its first
    key, the one the operator's keymap gives it if it rebinds it (for a hint in a message or on a screen); with
    ``keymap``, the key it gives once applied (read before the app applies it)."""
    overrides = app._keymap if keymap is None else keymap
    for owner in [type(app), *binding_owners()]:
        for binding in owner.BINDINGS:
            if isinstance(binding, Binding) and binding.id == binding_id:
                rebound = binding.with_key(overrides[binding_id]) if binding_id in overrides else binding
                return app.get_key_display(next(iter(Binding.make_bindings([rebound]))))
    raise KeyError(binding_id)
