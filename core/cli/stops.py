"""SIGTERM and Ctrl-C for ``tapedeck run``, taken from the moment ``main`` knows the command is ``run``, before the
host's modules are imported: a SIGTERM in the half second a run takes to start (imports, the config, the model's
provider, the log) took the default action, which ended the process at once, exit status -15, with no word. The
console script holds them from its first step (``core.shared.held_signals``), and one held there is taken here as
one that came once the handler was in place.

Before the host is made, a first signal ends the command where it stands (``Terminated``, or Ctrl-C's
``KeyboardInterrupt``), caught by ``started``: nothing was written. While the host makes or opens its log the
signal is held (``hold``), so a log is never left half made, and it ends the run as soon as the run starts
(``release``), the log resumable. Once the run has begun, the first ends it where it stands; a later one, or one
once the host is closing, is only noted, so that nothing cuts the close short.

A signal is taken where Python code runs, and one extension module of the run runs some as it starts: google-re2's
pybind11 start-up calls the process's audit hooks, and a ``Terminated`` raised there cannot unwind through its C++,
which aborts the process (exit -6, no close, no word). It is loaded first (``NATIVE_START``), while the console
script still holds the signals, so that one coming meanwhile is acted on once the handler is in place.

Where Python runs code of its own accord (a finalizer, a collected generator's ``finally``, a garbage collector's
callback), the exception raised there is only reported ('Exception ignored in …'), or cleared without a word (the
``close`` of an io object finalized unclosed), and the run went on, deaf to the next signal too. So the stop does
not hang on its exception surviving: each is watched (a weak reference) until the run catches it (``caught``),
and one dropped before that means the run is not ending after all: the signal is sent again a moment later
(``AGAIN_SECONDS``), to land in the run's own code. ``sys.unraisablehook`` keeps the report of one quiet."""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import threading
import weakref
from collections.abc import Callable, Iterator

from core.shared import held_signals

EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report a process SIGINT ended
EXIT_TERMINATED = 143  # SIGTERM (kill, a service manager's stop), as shells report it
SIGNALS = (signal.SIGTERM, signal.SIGINT)
AGAIN_SECONDS = 0.01  # before a signal whose exception was dropped before the run caught it is sent again
NATIVE_START = ("re2",)  # the run's extension modules whose native start-up runs Python code (see above)


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as Ctrl-C is: the run ends where it stands, the host closes, its log stays resumable."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, as the handler raises it (a ``KeyboardInterrupt`` of its own, which a weak reference can watch)."""


def ended_by(signum: int) -> tuple[str, int]:
    """The word and the exit status for a run ``signum`` ended."""
    return ("terminated", EXIT_TERMINATED) if signum == signal.SIGTERM else ("interrupted", EXIT_INTERRUPTED)


def stopped_by(exc: KeyboardInterrupt) -> tuple[str, int]:
    """The word and the exit status for what ``exc`` says ended a run: ``Terminated`` a SIGTERM, else Ctrl-C."""
    return ended_by(signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)


class Stops:
    """The signals of one ``run``: ``taken`` installs it, ``hold`` and ``release`` bracket the making of the host."""

    def __init__(self) -> None:
        self.ending = False  # a signal has ended the run (or the host is closing): a later one is only noted
        self.held = False
        self.noted: list[int] = []
        self._installed = False
        self._raised: tuple[int, weakref.ref[KeyboardInterrupt]] | None = None  # a signal raised, not yet caught
        self._again: threading.Timer | None = None

    def __call__(self, signum: int, _frame: object) -> None:
        if self.ending or self.held:
            self.noted.append(signum)
            return
        self.ending = True
        raise self._watched(signum)  # held by no local of this frame, which its traceback keeps

    def _watched(self, signum: int) -> KeyboardInterrupt:
        """The exception that ends the run for ``signum``, watched until the run catches it."""
        exc = Terminated() if signum == signal.SIGTERM else Interrupted()
        self._raised = (signum, weakref.ref(exc, self._dropped))
        return exc

    def _dropped(self, ref: weakref.ref[KeyboardInterrupt]) -> None:
        """The watched exception is gone and the run never caught it (code cleared it, or could only report it):
        the run is not ending, and the signal is sent again."""
        if self._raised is None or self._raised[1] is not ref:
            return
        signum, self._raised = self._raised[0], None
        self.ending = False
        self._again = threading.Timer(AGAIN_SECONDS, os.kill, (os.getpid(), signum))
        self._again.daemon = True
        self._again.start()

    def caught(self, exc: KeyboardInterrupt) -> KeyboardInterrupt:
        """``exc``, which the code that ends the run has caught: a signal's is no longer watched."""
        if self._raised is not None and self._raised[1]() is exc:
            self._raised = None
        return exc

    def _unraisable(self, unraisable: object, reported: Callable[[object], object]) -> None:
        """What ``sys.unraisablehook`` gets while installed: the exception a signal raised where Python could only
        report it goes unreported (``_dropped`` sends the signal again once it is gone); any other goes on to
        ``reported``."""
        if self._raised is None or getattr(unraisable, "exc_value", None) is not self._raised[1]():
            reported(unraisable)

    @contextlib.contextmanager
    def taken(self) -> Iterator[None]:
        """Within: both signals come here (once installed, a nested ``taken`` changes nothing), and one the console
        script held is noted, for ``release`` to act on. Only a process's main thread takes signals (``main`` run on
        another thread, as tests run it, leaves them as they are)."""
        if self._installed or threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self) for sig in SIGNALS}
        reported = sys.unraisablehook
        sys.unraisablehook = lambda unraisable: self._unraisable(unraisable, reported)
        self._installed = True
        try:
            if (early := held_signals.taken()) is not None:  # held since the console script's first step
                self.noted.append(early)  # acted on at ``release``
            yield
        finally:
            self._installed = False
            self._raised = None  # one not caught by now ends what it ended: not sent again
            sys.unraisablehook = reported
            if self._again is not None:
                self._again.cancel()  # one not sent yet could only end the process as it finishes
            for sig, handler in previous.items():
                if handler is not None:  # None: a handler set from C, which Python cannot set back
                    signal.signal(sig, held_signals.usual(handler, sig))

    def hold(self) -> None:
        """From now until ``release`` a signal waits (the host makes or opens its log)."""
        self.held = True

    def release(self) -> None:
        """The run starts: a signal that came while held ends it now."""
        self.held = False
        if self.noted and not self.ending:
            self.ending = True
            raise Terminated if self.noted.pop(0) == signal.SIGTERM else KeyboardInterrupt


_CURRENT: list[Stops] = []  # the Stops ``started`` installed on the main thread, while its command runs


def current() -> Stops:
    """The Stops of the ``run`` being run on the main thread, the only one signals reach (a fresh one elsewhere, or
    when ``main`` did not start it: a run on another thread never takes the main thread's)."""
    return _CURRENT[-1] if _CURRENT and threading.current_thread() is threading.main_thread() else Stops()


def started(command: Callable[[], int]) -> int:
    """Run ``command`` (``main``'s parse and handler of ``run``) with its signals taken from now on; one that ends it
    before its host was made is said on stderr, exit 143 or 130."""
    for name in NATIVE_START:  # under the console script's hold: a signal now is noted, never raised in there
        importlib.import_module(name)
    stops = Stops()
    main = threading.current_thread() is threading.main_thread()
    if main:
        _CURRENT.append(stops)
    try:
        with stops.taken():  # a signal as it puts the handler in place is taken below too
            stops.release()  # a signal held since the console script's first step ends the run here
            return command()
    except KeyboardInterrupt as exc:  # the run catches its own: this one came before its host was made
        if not stops.ending:  # not a signal's
            raise
        how, code = stopped_by(stops.caught(exc))
        from core.cli.common import fail

        return fail(f"{how} before the session started; nothing was written", code)
    finally:
        if main:
            _CURRENT.pop()


def ending(command: Callable[[], int]) -> int:
    """Run ``command`` (``main``'s parse and handler of a command that runs until stopped, ``alerts``) with its
    signals taken from the start: SIGTERM or Ctrl-C ends it where it stands, said on stderr, exit 143 or 130 (a
    SIGTERM took the default action until the command put a handler of its own in place: exit -15, no word)."""
    stops = Stops()
    try:
        with stops.taken():
            stops.release()  # a signal held since the console script's first step ends the command here
            return command()
    except KeyboardInterrupt as exc:
        if not stops.ending:  # not a signal's
            raise
        from core.cli.common import fail

        return fail(*stopped_by(stops.caught(exc)))
