"""The bytes that make a terminal ring and show a desktop notification for an alert.

- the bell: BEL (``\\a``);
- OSC 9 (``ESC ] 9 ; text BEL``): iTerm2, WezTerm, Windows Terminal, kitty and others show ``text``;
- OSC 777 (``ESC ] 777 ; notify ; title ; body BEL``): urxvt's notify extension, also read by foot, Ghostty,
  WezTerm and VTE terminals; each terminal acts on the one it knows and ignores the other.

Inside tmux an application's OSC never reaches the outer terminal unless it is wrapped in tmux's pass-through
(``ESC P tmux ; …  ESC \\`` with every ESC inside doubled) and tmux allows it (``set -g allow-passthrough on``).
The bell needs no wrapping: tmux forwards it as it is (``bell-action``). Text is cleaned first: control
characters would end the sequence early or start another one.
"""

from __future__ import annotations

import unicodedata

from core.alerts.config import AlertsConfig
from core.alerts.engine import Alert
from core.shared.text import BIDI, short_session

BEL = "\x07"
ESC = "\x1b"
MAX_TEXT = 200
CALLING = ("warning", "critical")  # the severities that ring and notify


def clean(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` on one line without control characters (C0, DEL, C1, line or paragraph separators and the BiDi
    controls, which would show the rest of the notification right to left)."""
    kept = "".join(
        " " if ch in BIDI or unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in text
    )
    kept = " ".join(kept.split())
    return kept if len(kept) <= limit else kept[: limit - 1] + "…"


def osc9(text: str) -> str:
    """An OSC 9 notification showing ``text`` (never read as a ConEmu ``9;N`` command: it starts with a letter
    when cleaned text would start with a digit)."""
    body = clean(text)
    if body[:1].isdigit():
        body = f"tapedeck {body}"
    return f"{ESC}]9;{body}{BEL}"


def osc777(title: str, body: str) -> str:
    """An OSC 777 notification (``;`` separates its fields, so none is left in the title)."""
    return f"{ESC}]777;notify;{clean(title).replace(';', ',')};{clean(body)}{BEL}"


def tmux_wrap(sequence: str) -> str:
    """``sequence`` in tmux's pass-through: ``ESC P tmux ;`` + the sequence with each ESC doubled + ``ESC \\``."""
    return f"{ESC}Ptmux;{sequence.replace(ESC, ESC + ESC)}{ESC}\\"


def alert_bytes(title: str, body: str, *, bell: bool, notify: bool, tmux: bool) -> str:
    """The bell and the two notifications, as asked, for one notification ``title`` and ``body``."""
    out = BEL if bell else ""
    if notify:
        for sequence in (osc9(f"{title}: {body}"), osc777(title, body)):
            out += tmux_wrap(sequence) if tmux else sequence
    return out


def terminal_bytes(alert: Alert, config: AlertsConfig, *, tmux: bool) -> str:
    """What the terminal gets for ``alert``: the bell and a desktop notification (as ``alerts.bell`` and
    ``alerts.notify`` allow) for a warning or a critical alert; nothing for an ``info`` one (a router's class
    change, a rewind guard: the toast and the list say it without calling the operator back)."""
    if alert.severity not in CALLING:
        return ""
    where = short_session(alert.session) or alert.path
    return alert_bytes(f"tapedeck: {alert.cause}", f"{where}: {alert.reason}", bell=config.bell, notify=config.notify,
                       tmux=tmux)  # fmt: skip
