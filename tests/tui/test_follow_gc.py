"""Follow-mode garbage collection: frozen and relaxed once a log is loaded, the interpreter's settings restored."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from tests.tui.logs import policy_log
from tests.tui.pilot import make_app, settle
from tui.app import GC_THRESHOLD, FollowGC

pytestmark = pytest.mark.anyio


def test_follow_gc_freezes_relaxes_and_restores() -> None:
    before = gc.get_threshold()
    policy = FollowGC()
    policy.restore()  # nothing applied yet: a no-op
    assert gc.get_threshold() == before
    policy.loaded()
    policy.loaded()  # a reload keeps the original settings to restore
    assert gc.get_threshold() == GC_THRESHOLD and gc.get_freeze_count() > 0
    policy.restore()
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_reload_frees_what_the_last_load_froze() -> None:
    """The projection a reload replaces (a log reset, a rewrite) is garbage: frozen, it would never be freed."""

    class Projection:
        def __init__(self) -> None:
            self.me = self  # a cycle: only the collector frees it

    policy = FollowGC()
    try:
        old = Projection()
        policy.loaded()
        alive = weakref.ref(old)
        del old
        policy.loaded()
        gc.collect()
        assert alive() is None
    finally:
        policy.restore()


async def test_the_app_applies_it_once_loaded_and_undoes_it_on_exit(tmp_path: Path) -> None:
    before = gc.get_threshold()
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), follow=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert gc.get_threshold() == GC_THRESHOLD
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


async def test_only_a_real_load_collects_not_a_remote_logs_reachability_flip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote log's reachability flipping re-posts the loaded phase for the screens' header; the app took each
    such post for a reload and ran a full collection of its whole heap (an unreliable link: one every few polls).
    Only the reload after the log was replaced collects now."""
    from types import SimpleNamespace

    from tests.tui.pilot import until

    path = policy_log(host=False).write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        live = app.live
        assert live is not None
        collections: list[int] = []
        collect = gc.collect
        monkeypatch.setattr(gc, "collect", lambda *a: collections.append(1) or collect(*a))
        live._reachable(SimpleNamespace(unreachable="host.example: no route to host"))  # type: ignore[arg-type]
        live._reachable(SimpleNamespace(unreachable=None))  # type: ignore[arg-type]
        epoch = live.epoch
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2].rsplit(b"\n", 1)[0] + b"\n")  # replaced
        await until(pilot, lambda: live.epoch != epoch and live.phase == "following" and bool(collections))
        await settle(pilot)
        assert len(collections) == 1, collections  # the reload's, not the flips'
