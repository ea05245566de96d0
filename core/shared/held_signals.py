"""SIGTERM and Ctrl-C held from the ``tapedeck`` console script's first step until the command knows whether it takes
them: the modules a command loads before ``tapedeck run`` installs its handler (``core.cli.stops``) take 0.05-0.1 s,
and a SIGTERM then took the default action, ending the run at once with no word. Nothing here is imported but
``os`` and ``signal``, so that holding them costs no time of its own."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable  # loaded as Python starts: no time of its own

SIGNALS = (signal.SIGTERM, signal.SIGINT)
USUAL: dict[int, object] = {signal.SIGTERM: signal.SIG_DFL, signal.SIGINT: signal.default_int_handler}
_held: list[int] = []
_holding = [False]


def _note(signum: int, _frame: object) -> None:
    _held.append(signum)


def hold() -> None:
    """From now on SIGTERM and SIGINT are noted instead of acted on, until ``taken`` or ``let_go`` (the main thread
    of the console script, before it imports anything else). They are unblocked here: a process started with them
    blocked (``block``: the demo's host), so that one sent while its interpreter starts waits instead of taking
    the default action, notes one that came meanwhile now."""
    for sig in SIGNALS:
        signal.signal(sig, _note)
    _holding[0] = True
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)


def block() -> None:
    """Block SIGTERM and SIGINT in a child about to exec tapedeck (its ``preexec_fn``): the block outlives the exec,
    so one sent before the interpreter has run a line of tapedeck (the first 20-50 ms, where nothing can handle it)
    waits, pending, until ``hold`` takes it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)


def taken() -> int | None:
    """The command has put its own handlers in place: the first signal held meanwhile, for it to act on (None when
    none came, or nothing was held)."""
    _holding[0] = False
    first = _held[0] if _held else None
    _held.clear()
    return first


def usual(handler: Callable[..., object] | int | None, sig: int) -> object:
    """``handler`` as a handler to put back once a command is done with ``sig``: the usual one for the hold's."""
    return USUAL[sig] if handler is _note else handler


def let_go() -> None:
    """The command leaves the signals as Python has them: the usual actions come back, and a signal held meanwhile
    is sent again, so that it acts now as it would have when it came (a SIGTERM ends the process)."""
    if not _holding[0]:
        return
    _holding[0] = False
    for sig in SIGNALS:
        signal.signal(sig, USUAL[sig])
    for sig in dict.fromkeys(_held):
        os.kill(os.getpid(), sig)
    _held.clear()
