"""Time travel on the main screen: the surface as it stood at any moment, one model request back or forward, the
request view. Every move runs in one worker: find the request to go to, then arrive at the moment it went out (or
open its request view)."""

from __future__ import annotations

from collections.abc import Callable

from textual import work
from textual.screen import Screen
from textual.worker import get_current_worker

from tui.failures import reads_log
from tui.keymap import key_of
from tui.live import LiveSession
from tui.screens.request import RequestScreen
from tui.travel import Moments, Stop, TimeTravel
from tui.widgets.chart import ContextChart
from tui.widgets.event_list import EventList

Find = Callable[[Moments], "Stop | int | None"]
"""Where to go (worker thread, the moments just synced): a moment, the index of a request, or None when nowhere."""


class TimeTravelActions(Screen[None]):
    """The main screen's time travel: ``T``, ``,``/``.``, ``L``, ``R``, a click on the chart, the Router's pick."""

    live: LiveSession
    travel: TimeTravel
    stop: Stop | None  # the moment shown instead of now
    mode: str

    _rebuild: Callable[..., None]  # the main screen's: rebuild the list's view

    def _current_seq(self) -> int | None:
        """The moment shown, else the selected row's seq."""
        return self.stop.moment.seq if self.stop else self.query_one(EventList).current_seq

    def _loaded(self, refused: str) -> bool:
        """Whether the log is loaded; if not, a toast starting with ``refused`` says why (the log deleted under
        ``watch``, or not read yet)."""
        if self.live.ready:
            return True
        if self.live.log_deleted:
            why = "the log was deleted; a log written again at its path is read from its start"
        else:
            why = "the log is not loaded"
        self.notify(f"{refused}: {why}.", timeout=3)
        return False

    def action_time_travel(self) -> None:
        """Show the surface as it stood right after the selected row's event (a collapsed stream's row: its last
        delta, the moment the row shows)."""
        events = self.query_one(EventList)
        block = events.current_block
        seq = block.end - 1 if block is not None else events.current_seq
        if not self._loaded("No time travel"):
            return
        if seq is None:
            self.notify("Time travel needs a selected row.", timeout=3)
            return
        self._go(lambda moments: moments.stop_at(seq), "")

    def action_travel(self, direction: int) -> None:
        """One model request back or forward from the moment shown (or from the selected row)."""
        if not self._loaded("No time travel"):
            return
        seq = self._current_seq()

        def step(moments: Moments) -> int | None:
            if not moments.points:
                return None
            here = moments.point_at(seq if seq is not None else moments.seen - 1)
            on_point = here is not None and moments.points[here].seq == seq
            if here is None:
                target = 0
            elif direction < 0:
                target = here - 1 if on_point else here
            else:
                target = here + 1
            return max(0, min(target, len(moments.points) - 1))

        self._go(step, "This log holds no model request.")

    def on_context_chart_picked(self, message: ContextChart.Picked) -> None:
        """A click on the chart: travel to the moment that request went out (or say why not)."""
        seq = message.seq
        nowhere = "No model request went out there."
        if not self._loaded("No time travel"):
            return
        if seq is None:
            self.notify(nowhere, timeout=3)
            return
        self._go(lambda moments: moments.point_at(seq), nowhere)

    def travel_to_step(self, turn: int, step: int) -> None:
        """Travel to the moment the first request of that step went out (the Router screen's pick)."""
        self._go(lambda moments: moments.step_request(turn, step), "No model request went out there.")

    def action_live(self) -> None:
        """Leave time travel: the surface as it is now."""
        if self.stop is None:
            key = key_of(self.app, "main.time_travel")
            self.notify(f"Not time travelling: {key} shows the session as it stood at the selected row.", timeout=3)
            return
        self.stop = self.query_one(EventList).moment = None
        self._rebuild(reset=True)
        self._mark_chart()

    def action_request(self) -> None:
        """The request in flight at the moment shown (or at the selected row), rebuilt, with its diff."""
        if not self._loaded("No request view"):
            return
        seq = self._current_seq()
        self._go(
            lambda moments: moments.point_at(seq if seq is not None else moments.seen - 1),
            "No model request had gone out by then.",
            open_request=True,
        )

    @work(thread=True, group="timetravel", exclusive=True)
    @reads_log
    def _go(self, find: Find, nowhere: str, open_request: bool = False) -> None:
        """The one time-travel worker: sync the timeline, ``find`` where to go; arrive at that moment (or open the
        request's view), or say ``nowhere``."""
        moments = self.travel.sync()
        where = find(moments)
        if where is None:
            self.app.call_from_thread(self.notify, nowhere, timeout=3)
        elif open_request:
            self.app.call_from_thread(self.app.push_screen, RequestScreen(self.travel, where))
        else:
            stop = where if isinstance(where, Stop) else moments.stop_at_request(where)
            if not get_current_worker().is_cancelled:
                self.app.call_from_thread(self._arrive, stop)

    def _arrive(self, stop: Stop) -> None:
        self.stop = stop
        self.query_one(EventList).moment = stop.view
        self.mode = "surface"
        self._rebuild(reset=True)
        self._mark_chart()

    def _mark_chart(self) -> None:
        chart = self.query_one(ContextChart)
        chart.moment_seq = None if self.stop is None else self.stop.moment.seq
        chart.refresh_chart()
