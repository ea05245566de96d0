"""The TUI's alert engine (``FedWatch``) and the log's alert checkpoint: a view's first pass over a whole log keeps the
engine's state as the checkpoint ``tapedeck alerts`` would keep, a reopened view's engine takes it instead of reading
the log's start again, and reads that start only once the log grows (its cache-break projection is needed then).
Every answer is the one a full read of the file gives."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from bench.gen_session import generate
from core.alerts import checkpoint
from core.alerts.follow import AlertWatch, FedWatch
from core.control.config import PolicyConfig, validate_config
from core.log.linestore import LineStore
from core.log.reader import read_log_header
from core.log.tail import Tailer
from tests.alerts.test_replay import EAGER, _eager
from tui.live import LiveSession

NOW = 1_900_000_000_000  # long after every event: a poll's time


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")


def _dated(alerts: list[Any]) -> list[tuple[str, int, str, int | None]]:
    return [(a.cause, a.seq, a.reason, a.at) for a in alerts]


def _cold(path: Path, config: PolicyConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What a full read of ``path`` raises at ``NOW``, with a cache of its own (no checkpoint to restore)."""
    with monkeypatch.context() as m:
        m.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cold-cache"))
        watch = AlertWatch(path, config, live=False)
        raised = watch.poll(NOW, final=True)
        assert watch._restored is None
    shutil.rmtree(tmp_path / "cold-cache")
    return raised


def _halves(tmp_path: Path) -> tuple[Path, list[bytes], Path]:
    """A generated log, its lines, and a log (``session.jsonl``) holding their first half."""
    whole = tmp_path / "whole.jsonl"
    generate(whole, 600_000, seed=2, profile="short-turns")
    lines = whole.read_bytes().splitlines(keepends=True)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines[: len(lines) // 2]))
    return whole, lines, path


def _view(path: Path, config: PolicyConfig) -> tuple[FedWatch, list[Any]]:
    """A view's pass over ``path`` (the TUI's reader, no UI) feeding a new engine, and what its poll raised."""
    fed = FedWatch(config, live=False)
    LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()
    return fed, fed.poll(NOW)


@pytest.mark.parametrize("profile", ["dsh-plain", "short-turns"])
def test_a_first_view_keeps_the_checkpoint_a_full_read_would_keep(
    profile: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "session.jsonl"
    generate(path, 400_000, seed=2, profile=profile)
    config = _eager()
    cold = _cold(path, config, tmp_path, monkeypatch)
    assert cold, "the eager rules fire on this log"
    fed, raised = _view(path, config)
    assert _dated(raised) == _dated(cold) and fed.start_bytes == 0
    assert checkpoint.read(path, "alerts", config, {}) is not None
    watch = AlertWatch(path, config, live=False)  # what `tapedeck alerts` does next: it restores the view's checkpoint
    assert _dated(watch.poll(NOW, final=True)) == _dated(cold)
    assert watch._restored is not None


def test_a_reopened_view_takes_the_checkpoint_instead_of_reading_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "session.jsonl"
    generate(path, 600_000, seed=2, profile="short-turns")  # a cache break among its alerts
    config = _eager()
    cold = _cold(path, config, tmp_path, monkeypatch)
    assert "cache-break" in {a.cause for a in cold}
    _view(path, config)  # the first open writes the index, and the engine its checkpoint
    fed, raised = _view(path, config)  # the view goes on from its index: the engine restores, reads nothing
    assert fed.start_bytes == 0 and fed._restored is not None
    assert _dated(raised) == _dated(cold)
    checkpoint.checkpoint_path(path, "alerts").unlink()  # without one the engine reads the start itself
    fed, raised = _view(path, config)
    assert fed.start_bytes == path.stat().st_size
    assert _dated(raised) == _dated(cold)


@pytest.mark.parametrize("breaks", [True, False], ids=["cache-break-on", "cache-break-off"])
def test_a_log_that_grows_after_a_restore_is_read_from_its_start_once(
    breaks: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine restored from the checkpoint of the log's first half: the second half arrives, so the engine reads
    the first half again (its cache-break projection is not in a checkpoint), raising nothing twice, and answers what
    a full read of the grown log answers; then it keeps the grown log's checkpoint. With the cache-break rule off
    the engine keeps no projection, and goes on without reading the first half again."""
    whole, lines, path = _halves(tmp_path)
    config = _eager() if breaks else validate_config({"alerts": {**EAGER, "cacheBreak": {"enabled": False}}})
    cold = _cold(whole, config, tmp_path, monkeypatch)  # the grown log's lines
    _view(path, config)
    first = path.stat().st_size
    # a view that read the first half through its index: the engine restores its checkpoint
    tailer = Tailer(path)
    store = LineStore(path, tailer)
    tailer.poll()
    half = tailer.decoder.next_seq  # type: ignore[union-attr]
    assert any(a.cause == "cache-break" and a.seq >= half for a in cold) == breaks, "a break the first half's projection finds"
    fed, reader = FedWatch(config, live=False), object()
    fed.begin(reader, path, read_log_header(path), store, unread=first)
    raised = fed.poll(NOW)
    assert fed._restored is not None and fed.start_bytes == 0
    with path.open("ab") as f:
        f.write(b"".join(lines[len(lines) // 2 :]))
    appended = tailer.poll()
    fed.take(reader, appended.events)
    fed.loaded(reader, path.stat().st_size)
    raised += fed.poll(NOW)
    assert fed.start_bytes == (first if breaks else 0) and fed._restored is None
    assert _dated(raised) == _dated(cold)
    watch = AlertWatch(path, config, live=False)  # the grown log's checkpoint, kept after that pass
    assert _dated(watch.poll(NOW, final=True)) == _dated(cold) and watch._restored is not None


def test_the_clock_rules_wait_for_the_end_of_the_pass(tmp_path: Path) -> None:
    """Ticks during a pass would judge the clock rules on part of the log (and leave a state no read leaves): they
    run from the first poll after the reader says its pass ended."""
    path = tmp_path / "session.jsonl"
    generate(path, 200_000, seed=2, profile="dsh-plain")
    config = _eager()
    tailer = Tailer(path)
    store = LineStore(path, tailer)
    update = tailer.poll()
    fed, reader = FedWatch(config, live=False), object()
    fed.begin(reader, path, read_log_header(path), store)
    fed.take(reader, update.events)
    assert "run-rate" in {a.cause for a in fed.poll(NOW)}  # the events raise it: the rate was high then
    assert "run-rate" in fed.engine.active  # judged at NOW, long after, it would clear: no tick yet
    fed.loaded(reader, None)  # not a whole log: nothing is kept, but the clock rules run
    fed.poll(NOW)
    assert "run-rate" not in fed.engine.active
    assert checkpoint.read(path, "alerts", config, {}) is None


def test_a_view_that_reads_the_same_log_again_raises_nothing_twice(tmp_path: Path) -> None:
    """A new view of the log the engine restored (the app opened it again) hands over nothing new: the engine
    neither restores a second time (which would raise the checkpoint's alerts again) nor reads the start."""
    path = tmp_path / "session.jsonl"
    generate(path, 600_000, seed=2, profile="short-turns")
    config = _eager()
    _view(path, config)
    fed, raised = _view(path, config)
    assert raised and fed._restored is not None
    LiveSession(path, follow=False, retain_bytes=1, alerts=fed).run()
    assert fed.poll(NOW) == [] and fed.start_bytes == 0


def test_the_code_fingerprint_covers_the_view_that_ends_a_pass() -> None:
    """When the TUI's engine keeps a checkpoint is the view's word (``tui.live``'s ``FedWatch.loaded``): a change
    there may change what a kept state holds, so a checkpoint written before it must not be used."""
    import tui.live
    from tests.alerts.test_checkpoint_review import fingerprint_follows

    assert fingerprint_follows(Path(tui.live.__file__))
