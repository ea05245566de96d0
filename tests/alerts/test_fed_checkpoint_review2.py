"""Second review of the TUI's alert checkpoint (``FedWatch``, after 9a6e6ea): cases the first review's tests left out.
Each drives the real ``LiveSession`` over a real log; where timing matters, a ``FedWatch`` subclass changes the file or
stops the view at a fixed point of the view's pass, so the test is deterministic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.alerts.follow import FedWatch
from core.cli import main
from tests.alerts.test_fed_checkpoint import NOW, _cache, _halves  # noqa: F401 (_cache: autouse fixture)
from tests.alerts.test_replay import _eager
from tui.live import LiveSession


def test_a_new_view_after_a_followed_append_reads_nothing_the_engine_was_handed(tmp_path: Path) -> None:
    """The view follows the log and hands the engine every appended event; another reader (``tapedeck inspect``)
    then indexes the grown log, and the next view (the operator back from a child session) goes on from that index.
    The engine took in every byte of it (read at the first pass, handed over while following), so it reads none of
    the log's start again (before 095d6c6 it counted only the bytes of passes that ended, not the follower's
    hand-overs, and read the whole grown log again to skip all of it)."""
    _, lines, path = _halves(tmp_path)
    half = len(lines) // 2
    config = _eager()

    class Grows(FedWatch):
        """The log grows right after the view's first pass; the view is closed once it handed the append over."""

        grown = False

        def loaded(self, reader: object, offset: int | None) -> None:
            super().loaded(reader, offset)
            if not self.grown:
                self.grown = True
                with path.open("ab") as f:
                    f.write(b"".join(lines[half:]))

        def take(self, reader: object, items: list[Any], nbytes: int = 0, end: int | None = None) -> None:
            super().take(reader, items, nbytes, end)
            if self.grown and items:  # the follower's one poll handed the whole append over
                reader.stop()  # type: ignore[attr-defined]

    fed = Grows(config, live=False)
    LiveSession(path, follow=True, interval=0.01, retain_bytes=1, alerts=fed).run()
    fed.poll(NOW)
    seen = fed._next  # every event of the grown log (the next view finds nothing new)
    assert main(["inspect", str(path)]) == 0  # the grown log's index
    LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()  # the operator back on the log
    assert fed.poll(NOW) == []
    assert fed._next == seen, "the engine had taken in the whole grown log already"
    assert fed.start_bytes == 0, (
        f"the engine read {fed.start_bytes} bytes of the log's start though it had taken in every one of them"
    )
