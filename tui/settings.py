"""TUI settings kept across runs (the chosen theme) in ``tui.toml`` beside the keymap file."""

from __future__ import annotations

from pathlib import Path

from core.shared.parsers import NotUtf8, parse_toml, user_text
from core.shared.regular import TooLarge, read_config

SETTINGS_NAME = "tui.toml"


def settings_path(keymap_file: Path) -> Path:
    """``tui.toml`` in the keymap file's directory."""
    return keymap_file.parent / SETTINGS_NAME


def load_theme(path: Path) -> tuple[str | None, str | None]:
    """The saved theme name (None when there is none) and a problem message (None when the file is fine)."""
    if not path.is_file():
        return None, None
    try:
        table = parse_toml(user_text(read_config(path, "TUI settings file")))
    except OSError as exc:
        return None, f"{path}: cannot read the settings ({exc})"
    except TooLarge as exc:
        return None, str(exc)
    except NotUtf8 as exc:
        return None, f"{path}: {exc}"
    except ValueError as exc:
        return None, f"{path}: not valid TOML ({exc})"
    theme = table.get("theme")
    if theme is not None and not isinstance(theme, str):
        return None, f'{path}: theme must be a string such as "textual-dark"'
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
        return f"{path}: cannot save the theme ({exc.strerror or exc})"
    return None
