"""TUI settings kept across runs (the chosen theme) in ``tui.toml`` beside the keymap file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.shared.parsers import Wording, load_document
from core.shared.text import quoted_path

SETTINGS_NAME = "tui.toml"


class Unusable(Exception):
    """A TUI file (the keymap, the settings) that cannot be used; the message names it and says why."""


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """``path``, a TUI file a person wrote (``what``: ``keymap``, ``TUI settings file``), read and parsed as TOML;
    ``Unusable`` with the message of each way that fails, worded as the other files' readers word them."""
    wording = Wording(
        unreadable=f"{{path}}: cannot read the {what} ({{why}})",
        too_large="{why}",
        not_utf8="{path}: {why}",
        syntax="{path}: not valid TOML ({why})",
        depth=f"{{path}}: not a usable {what}: it is nested too deeply",
        digits=f"{{path}}: not a usable {what}: a number has more than {{digits}} digits",
    )
    return load_document(path, "TOML", what, wording, Unusable)


def settings_path(keymap_file: Path) -> Path:
    """``tui.toml`` in the keymap file's directory."""
    return keymap_file.parent / SETTINGS_NAME


def load_theme(path: Path) -> tuple[str | None, str | None]:
    """The saved theme name (None when there is none) and a problem message (None when the file is fine)."""
    if not path.is_file():
        return None, None
    try:
        table = read_toml(path, "TUI settings file")
    except Unusable as exc:
        return None, str(exc)
    theme = table.get("theme")
    if theme is not None and not isinstance(theme, str):
        return None, f'{quoted_path(path)}: theme must be a string such as "textual-dark"'
    return theme, None


def save_theme(path: Path, theme: str) -> str | None:
    """Write ``theme = "<name>"`` to ``path`` (creating its directory); None, or why it could not."""
    escaped = theme.replace("\\", "\\\\").replace('"', '\\"')
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(f'# written by tapedeck watch\ntheme = "{escaped}"\n', encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        return f"{quoted_path(path)}: cannot save the theme ({exc.strerror or exc})"
    return None
