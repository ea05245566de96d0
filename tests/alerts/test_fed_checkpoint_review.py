"""Review of the TUI's alert checkpoint (``FedWatch`` keeping and restoring the log's ``alerts`` checkpoint): cases
the first tests left out. Each drives the real ``LiveSession`` over a real log; where the alert feed's thread matters,
a ``FedWatch`` subclass runs what that thread runs at one point of the view's pass (``AlertFeed.run``'s loop body,
or a change to the file before the feed's next poll), so the interleaving is fixed and the test deterministic."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import tui.live
from bench.gen_session import generate
from core.alerts import checkpoint
from core.alerts.follow import AlertWatch, FedWatch
from core.cli import main
from core.control.config import PolicyConfig
from tests.alerts.test_fed_checkpoint import NOW, _cache, _cold, _dated  # noqa: F401 (_cache: autouse fixture)
from tests.alerts.test_replay import _eager
from tui.live import LiveSession


def _cold_of(data: bytes, tmp_path: Path, config: PolicyConfig, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What a full read of a log holding ``data`` raises at ``NOW``."""
    other = tmp_path / "other" / "session.jsonl"
    other.parent.mkdir(exist_ok=True)
    other.write_bytes(data)
    return _cold(other, config, tmp_path, monkeypatch)


def _alerts_after_the_view(path: Path, config: PolicyConfig) -> tuple[list[Any], bool]:
    """What ``tapedeck alerts`` raises at ``NOW`` with the cache the view left, and whether it restored a
    checkpoint."""
    watch = AlertWatch(path, config, live=False)
    raised = watch.poll(NOW, final=True)
    return raised, watch._restored is not None


class _Shown(FedWatch):
    """The TUI's engine, with the alert feed's loop body (``AlertFeed.run``: a poll, then the open log's projection
    for the header's spend label) run after each of the view's hand-overs, as the feed's thread runs it every 0.1 s
    beside a view's first pass."""

    def __init__(self, config: PolicyConfig) -> None:
        super().__init__(config, live=False)
        self.raised: list[Any] = []

    def take(self, reader: object, items: list[Any], nbytes: int = 0, end: int | None = None) -> None:
        super().take(reader, items, nbytes, end)
        self.raised.extend(self.poll(NOW))
        self.projection(NOW)


def test_the_spend_shown_during_the_first_pass_leaves_the_checkpoint_a_full_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``FedWatch.projection`` (the header's ``$/h``, asked after every poll of the feed, in the middle of a pass)
    looks at the spend window at the wall clock without pruning it: the run-rate rule goes on judging the events on
    the window a full read has, and the checkpoint that pass keeps gives ``tapedeck alerts`` a cold read's answer
    (before, the look popped the samples older than ``now - window`` and the view raised an extra ``run-rate``)."""
    path = tmp_path / "session.jsonl"
    generate(path, 400_000, seed=2, profile="short-turns")
    monkeypatch.setattr(
        tui.live, "LOAD_SLICE", 1 << 16
    )  # several hand-overs in the pass (as on a bigger log)
    config = _eager()
    cold = _cold(path, config, tmp_path, monkeypatch)
    fed = _Shown(config)
    LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()
    fed.raised.extend(fed.poll(NOW))
    after, restored = _alerts_after_the_view(path, config)
    assert restored, "the view kept the log's checkpoint"
    assert _dated(after) == _dated(cold), (
        "tapedeck alerts, restoring the TUI's checkpoint, differs from a cold read"
    )
    assert _dated(fed.raised) == _dated(cold)


def test_a_log_replaced_before_the_engine_takes_the_end_of_the_pass_gets_no_checkpoint_of_the_old_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine takes the end of the view's pass at the feed's next poll (0.1 s later, or seconds later while it
    catches up on a big log). A log replaced in between by one of the same size (another file renamed over it) gets
    no checkpoint of the old file's state: the file's identity is taken when the view says its pass ended, and the
    write refuses a file that is no longer that one, so ``tapedeck alerts`` reads the new file in full."""
    path = tmp_path / "session.jsonl"
    generate(path, 400_000, seed=2, profile="short-turns")
    old = path.read_bytes()
    lines = old.splitlines(keepends=True)
    half = b"".join(lines[: len(lines) // 2])
    new = (
        half[:-1] + b" " * (len(old) - len(half)) + b"\n"
    )  # the first half, its last line padded to the same size
    assert len(new) == len(old)
    config = _eager()
    fed = FedWatch(config, live=False)
    LiveSession(
        path, follow=False, retain_bytes=1, alerts=fed
    ).run()  # the view's pass ends; the feed polls next
    (tmp_path / "new.jsonl").write_bytes(new)
    os.replace(tmp_path / "new.jsonl", path)
    fed.poll(NOW)
    cold = _cold(path, config, tmp_path, monkeypatch)
    assert _dated(cold) != _dated(_cold_of(old, tmp_path, config, monkeypatch)), (
        "the two files raise differently"
    )
    after, _ = _alerts_after_the_view(path, config)
    assert _dated(after) == _dated(cold), "tapedeck alerts restored the replaced file's state"


def test_the_clock_rules_run_again_after_a_view_whose_log_went_away_mid_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A following view whose log disappears during its first pass reloads (``_load`` after the reset), waits for
    the log to come back, and returns None once stopped (the operator left the view). The pass it gave up ends
    there (``FedWatch.loaded``), so the clock rules of the engine, which the app keeps polling, run again: the
    ``stalled`` alert a tick raises comes (before, they were held for good)."""
    path = tmp_path / "session.jsonl"
    generate(path, 400_000, seed=2, profile="dsh-plain")
    monkeypatch.setattr(tui.live, "LOAD_SLICE", 1 << 16)
    config = _eager()

    class Gone(FedWatch):
        def take(self, reader: object, items: list[Any], nbytes: int = 0, end: int | None = None) -> None:
            super().take(reader, items, nbytes, end)
            if path.exists():  # after the first slice: the log is removed, then the view closed
                path.unlink()
                reader.stop()  # type: ignore[attr-defined]

    fed = Gone(config, live=False)
    live = LiveSession(path, follow=True, retain_bytes=1, alerts=fed)
    live.run()  # returns: stopped while waiting for the log
    raised = fed.poll(NOW) + fed.poll(NOW)
    assert "stalled" in {a.cause for a in raised}, [(a.cause, a.seq) for a in raised]


def test_a_new_view_of_a_log_the_engine_read_itself_reads_nothing_of_it_again(tmp_path: Path) -> None:
    """The app's one engine, fed by a first view that read the whole log (no checkpoint yet: it writes it), then a new
    view of the same unchanged log (the operator jumped to a child session and back): that view goes on from the
    index the first one wrote, and the engine, which took in every one of those bytes, reads none of them again
    (before, it read the whole start to skip all of it: 21 s per 100 MB)."""
    path = tmp_path / "session.jsonl"
    generate(path, 400_000, seed=2, profile="short-turns")
    config = _eager()
    fed = FedWatch(config, live=False)
    LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()
    assert fed.poll(NOW) and fed.start_bytes == 0 and fed._restored is None
    LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()
    assert fed.poll(NOW) == []
    assert fed.start_bytes == 0, f"the engine read {fed.start_bytes} bytes of a log it had seen whole"


def _halves(tmp_path: Path) -> tuple[Path, list[bytes]]:
    """The lead's log with a cache break in its second half: ``session.jsonl`` holds the first half of its lines."""
    whole = tmp_path / "whole.jsonl"
    generate(whole, 600_000, seed=2, profile="short-turns")
    lines = whole.read_bytes().splitlines(keepends=True)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines[: len(lines) // 2]))
    return whole, lines


def test_a_restored_engine_whose_next_view_goes_on_from_a_newer_index_keeps_the_cache_break_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine restored the log's checkpoint (no cache-break projection). The log grows while the view is away
    (the operator on a child session), and another reader (``tapedeck inspect``) writes the grown log's index; the
    next view goes on from that index, so the engine takes in the start up to the new index's end itself: it
    rebuilds its projection first, and raises the cache break a full read of the grown log raises (before, the
    restored engine judged the events past its checkpoint with no projection and missed it)."""
    whole, lines = _halves(tmp_path)
    path = tmp_path / "session.jsonl"
    config = _eager()
    breaks = [a for a in _cold(whole, config, tmp_path, monkeypatch) if a.cause == "cache-break"]
    assert breaks
    first = FedWatch(config, live=False)  # an earlier app: the log's index and checkpoint
    LiveSession(path, follow=False, retain_bytes=1, alerts=first).run()
    first.poll(NOW)
    fed = FedWatch(config, live=False)
    LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()
    raised = fed.poll(NOW)
    assert fed._restored is not None
    with path.open("ab") as f:
        f.write(b"".join(lines[len(lines) // 2 :]))
    assert main(["inspect", str(path)]) == 0  # the grown log's index
    LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()  # the operator back on the log
    raised += fed.poll(NOW)
    assert _dated(breaks) == _dated([a for a in raised if a.cause == "cache-break"])


def test_a_reopen_of_a_log_that_grew_a_little_since_its_index_takes_the_checkpoint(tmp_path: Path) -> None:
    """(Speed, not answers.) The index is written again only once the log grew by 5% or 8 MiB: after a small append,
    the view that reads it keeps the grown log's checkpoint, and a later reopen of the unchanged log takes that
    checkpoint, which stands for more than the index (the engine skips what the view hands over past the index),
    instead of reading the whole start again (before: 21 s per 100 MB, at every reopen until the log grew 5% more)."""
    whole = tmp_path / "whole.jsonl"
    generate(whole, 600_000, seed=2, profile="short-turns")
    lines = whole.read_bytes().splitlines(keepends=True)
    n = len(lines) * 97 // 100
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines[:n]))
    config = _eager()

    def view() -> FedWatch:
        """A new app's view of the log (its own engine), polled."""
        fed = FedWatch(config, live=False)
        LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()
        fed.poll(NOW)
        return fed

    view()  # the index and the checkpoint
    with path.open("ab") as f:
        f.write(b"".join(lines[n:]))  # 3% more: the index stays
    view()  # reads the start (no checkpoint of the index's bytes), keeps the grown log's checkpoint
    assert checkpoint.read(path, "alerts", config, {}) is not None
    again = view()  # nothing changed since
    assert again.start_bytes == 0, (
        f"the engine read {again.start_bytes} bytes though the checkpoint fits the log"
    )
