"""Cooperative pacing for background readers that share the GIL with an interactive thread.

A loader thread that parses a big log holds the GIL almost all the time. Every time the UI thread gives the
GIL up (a ``select`` call, a write to the terminal, a hand-over to another thread) it has to wait for it again
until the loader's current C call ends or the switch interval (5 ms) forces a hand-over; a frame needs dozens
of such hand-overs, so a busy loader stretches a 20 ms key reaction to hundreds of milliseconds.

``Pacer`` is called between bounded units of work. At most every ``every`` seconds it naps for ``nap`` seconds
with the GIL released, so a waiting thread takes the GIL at once. When another thread of the process used the
CPU for more than ``late`` seconds during the nap (the UI is busy), it keeps napping until a nap passes without
that or ``patience`` has passed, so the UI's burst of work runs without competition. A nap that merely came
back late because the machine is busy does not count: napping on would only slow the loader down. Without
another Python thread nobody can be waiting for the GIL, so the pacer never naps. The first call after ``idle`` seconds without calls starts
a new stretch of work and does not nap (a follower reading one append should not wait for the UI it is about
to update). It never changes results, only when the work happens.
"""

from __future__ import annotations

import threading
import time

EVERY = 0.004
NAP = 0.0002
LATE = 0.0008  # another thread that used this much CPU during a nap is busy
PATIENCE = 0.06
IDLE = 0.05


class Pacer:
    """Call the instance between units of work (each short: at most a few ms of GIL); see the module doc."""

    def __init__(
        self,
        every: float = EVERY,
        nap: float = NAP,
        late: float = LATE,
        patience: float = PATIENCE,
        idle: float = IDLE,
    ) -> None:
        self.every = every
        self.nap = nap
        self.late = late
        self.patience = patience
        self.idle = idle
        self.naps = 0  # how many naps were taken (for tests and tuning)
        self._last = self._called = time.perf_counter()

    def __call__(self) -> None:
        """Nap if ``every`` seconds of work went by since the last nap; nap on while another thread is busy."""
        now = time.perf_counter()
        called, self._called = self._called, now
        if now - called > self.idle:
            self._last = now  # a new stretch of work begins
            return
        if now - self._last < self.every:
            return
        if threading.active_count() < 2:
            self._last = now
            return
        deadline = now + self.patience
        while True:
            cpu = time.process_time()  # every thread's CPU time: this one adds nothing while it sleeps
            time.sleep(self.nap)
            self.naps += 1
            if time.process_time() - cpu < self.late or time.perf_counter() >= deadline:
                break
        self._last = self._called = time.perf_counter()


def no_pacing() -> None:
    """The pacer of a reader nobody waits for."""
