"""Search and filter scanning for the main screen: the seqs matching a predicate, found by a worker thread and
kept up to date as events are appended."""

from __future__ import annotations

from collections.abc import Callable

from textual.screen import Screen
from textual.worker import get_current_worker

from tui.live import LiveSession
from tui.widgets.matching import Predicate, scan
from tui.widgets.rows import SortedSeqs


class Scanner:
    """Seqs matching a predicate, kept up to date as events are appended (one worker at a time)."""

    def __init__(
        self, screen: Screen[None], live: LiveSession, predicate: Predicate, on_change: Callable[[], None], name: str
    ) -> None:
        self.screen = screen
        self.live = live
        self.predicate = predicate
        self.on_change = on_change
        self.name = name
        self.seqs = SortedSeqs()
        self.upto = 0
        self.fraction = 0.0
        self.running = False
        self.epoch = 0

    @property
    def done(self) -> bool:
        """True when every projected event has been tested."""
        return not self.running and self.upto >= self.live.session.next_seq

    def restart(self) -> None:
        """Forget the matches (the log was reset) and scan from the start."""
        self.epoch += 1
        self.seqs = SortedSeqs()
        self.upto = 0
        self.running = False
        self.advance()

    def advance(self) -> None:
        """Scan whatever was projected since the last scan."""
        live = self.live
        if self.running or self.upto >= live.session.next_seq or not live.ready:
            return
        self.running = True
        start, stop, epoch = self.upto, live.session.next_seq, self.epoch
        self.screen.run_worker(
            lambda: self._scan(start, stop, epoch), thread=True, group=self.name, exit_on_error=False
        )

    def _scan(self, start: int, stop: int, epoch: int) -> None:
        worker = get_current_worker()
        app = self.screen.app

        def progress(fraction: float) -> None:
            self.fraction = fraction
            app.call_from_thread(self.on_change)

        found = scan(
            self.live,
            self.predicate,
            start,
            stop,
            progress=progress if stop - start > 50_000 else None,
            cancelled=lambda: worker.is_cancelled or epoch != self.epoch,
        )
        app.call_from_thread(self._done, found, stop, epoch)

    def _done(self, found: SortedSeqs, stop: int, epoch: int) -> None:
        if epoch != self.epoch:
            return
        self.seqs.extend(found)
        self.upto = stop
        self.running = False
        self.fraction = 1.0
        self.on_change()
        self.advance()
