"""The reading commands run with the cyclic GC off, and leave it as they found it: nothing frozen, unless the
process ends with the command (the console script), where what it made is frozen instead of walked."""

from __future__ import annotations

import gc
import io
import weakref
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from core.cli import common, main
from core.cli.common import collector_off, guarded

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dsh" / "tool-call-turn.session.jsonl"


class _Made:
    """A container the collector tracks."""


def test_in_a_process_that_ends_with_the_command_what_it_made_is_frozen_unwalked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(common, "_ENDS_AFTER", [True])
    collections: list[int] = []
    callback = lambda phase, info: collections.append(info["generation"]) if phase == "start" else None  # noqa: E731
    gc.callbacks.append(callback)
    try:
        with collector_off():
            assert not gc.isenabled()
            made = [_Made() for _ in range(5000)]  # well over a young generation's threshold
        assert gc.isenabled() and gc.get_freeze_count() >= len(made)
        more = [_Made() for _ in range(100)]
        assert not collections and more  # none ran in the block, and none was due when it ended
    finally:
        gc.callbacks.remove(callback)
        gc.unfreeze()


def test_anywhere_else_nothing_is_frozen_and_the_collector_frees_the_commands_garbage() -> None:
    with collector_off():
        cycle = _Made()
        cycle.me = cycle  # type: ignore[attr-defined]
        left = weakref.ref(cycle)
        del cycle
    assert gc.isenabled() and not gc.get_freeze_count()
    gc.collect()
    assert left() is None


def test_a_disabled_collector_stays_disabled_and_frozen_objects_stay_frozen() -> None:
    gc.disable()
    try:
        with collector_off():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_off():
            pass
        assert gc.isenabled() and gc.get_freeze_count() == frozen  # another's freeze is not thawed
    finally:
        gc.unfreeze()


def test_a_paused_handler_runs_without_the_collector_and_errors_still_exit_cleanly() -> None:
    seen: list[bool] = []

    def handler(args: Any) -> int:
        seen.append(gc.isenabled())
        return 3

    assert guarded(handler, paused=True)(None) == 3 and seen == [False] and gc.isenabled()
    assert guarded(handler)(None) == 3 and seen == [False, True]


@pytest.mark.parametrize("argv", [["cost", "--json"], ["inspect", "--json"], ["surface", "--json"],
                                  ["events", "--type", "tool/result"]])  # fmt: skip
def test_reading_commands_leave_the_collector_on_and_nothing_frozen(argv: list[str]) -> None:
    with redirect_stdout(io.StringIO()):
        assert main([argv[0], str(FIXTURE), *argv[1:]]) == 0
    assert gc.isenabled() and not gc.get_freeze_count()
