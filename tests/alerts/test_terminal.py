"""The escape sequences an alert sends to the terminal: cleaned text, OSC 9 and OSC 777, tmux pass-through, and
which alerts call the operator back at all."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.alerts.config import validate
from core.alerts.engine import Alert
from core.alerts.terminal import BEL, ESC, alert_bytes, clean, osc9, osc777, terminal_bytes, tmux_wrap


def _alert(severity: str, reason: str = "3 tool calls failed in a row") -> Alert:
    return Alert("0123456789", "/s/session.jsonl", "error-streak", 7, severity, reason, 1)


def test_the_two_notifications_and_the_bell() -> None:
    out = terminal_bytes(_alert("warning"), validate({}), tmux=False)
    assert out == (
        f"{BEL}{ESC}]9;tapedeck: error-streak: 01234567: 3 tool calls failed in a row{BEL}"
        f"{ESC}]777;notify;tapedeck: error-streak;01234567: 3 tool calls failed in a row{BEL}"
    )


def test_a_dsh_session_is_named_by_its_uuid_not_by_its_session_prefix() -> None:
    """DSH ids all start with ``session-``: the notification names the session by what follows, as the toast and
    ``tapedeck alerts`` do (``core.shared.text.short_session``)."""
    alert = Alert("session-1a07d9fd-77aa-4e4e-9f0e-0123456789ab", "/s/session.jsonl", "host-died", 9, "critical",
                  "the host exited", 1)  # fmt: skip
    assert f"{ESC}]9;tapedeck: host-died: 1a07d9fd: the host exited{BEL}" in terminal_bytes(alert, validate({}), tmux=False)


def test_tmux_gets_them_wrapped_with_inner_escapes_doubled_and_the_bell_as_it_is() -> None:
    out = terminal_bytes(_alert("critical"), validate({}), tmux=True)
    assert out.startswith(BEL + f"{ESC}Ptmux;{ESC}{ESC}]9;")
    assert out.count(f"{ESC}Ptmux;") == 2 and out.count(f"{ESC}\\") == 2
    assert tmux_wrap(f"{ESC}]9;x{BEL}") == f"{ESC}Ptmux;{ESC}{ESC}]9;x{BEL}{ESC}\\"


def test_info_alerts_and_the_switches_keep_the_terminal_quiet() -> None:
    assert terminal_bytes(_alert("info"), validate({}), tmux=False) == ""
    assert terminal_bytes(_alert("warning"), validate({"bell": False, "notify": False}), tmux=False) == ""
    assert terminal_bytes(_alert("warning"), validate({"notify": False}), tmux=False) == BEL
    assert BEL not in terminal_bytes(_alert("warning"), validate({"bell": False}), tmux=False)[:1]


def test_osc_9_never_reads_as_a_numbered_conemu_command_and_osc_777_keeps_its_fields() -> None:
    assert osc9("4;1 progress") == f"{ESC}]9;tapedeck 4;1 progress{BEL}"
    assert osc777("a;b", "c;d") == f"{ESC}]777;notify;a,b;c;d{BEL}"


@given(st.text(max_size=400) | st.lists(st.sampled_from(["a", " ", "\u202e", "\u2067", "\x9b", "\x1b", "é"])).map("".join))
def test_hostile_reasons_never_end_or_start_a_sequence(text: str) -> None:
    """Nor reorder the notification: a BiDi override (U+202E) in a log's title showed the rest of the desktop
    notification right to left."""
    out = alert_bytes("tapedeck: loop", text, bell=True, notify=True, tmux=False)
    cleaned = clean(text)
    assert ESC not in cleaned and BEL not in cleaned and "\x9c" not in cleaned and "\n" not in cleaned
    assert not {"\u202e", "\u2067"} & set(cleaned)
    assert len(cleaned) <= 200
    assert out.count(ESC) == 2 and out.count(BEL) == 3  # two sequences, each opened and closed once, and the bell
