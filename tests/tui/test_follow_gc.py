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
