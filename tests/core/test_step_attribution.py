"""Each event's step (``Session.step_of``): the step it names, else the step of its turn open when it was written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.log.decoder import Consumer
from core.read.index import restore
from core.read.load import load_session
from core.read.session import Session
from core.read.session_state import run_columns
from tests.log.helpers import assistant, user
from tests.tui.logs import Log

# a turn: its items, each a step (the events in it: True names the step, False names none) or an event between steps
TURNS = st.lists(
    st.lists(st.one_of(st.lists(st.booleans(), max_size=4), st.none()), max_size=4), min_size=1, max_size=4
)


def _log(turns: list[list[list[bool] | None]]) -> tuple[Log, list[int | None]]:
    """A log of ``turns`` and the step each of its events belongs to, as it was written."""
    log, expected = Log(), []

    def add(body: dict[str, Any], step: int | None) -> None:
        log.add(body)
        expected.append(step)

    for n, items in enumerate(turns, 1):
        add({"type": "turn/start", "data": {"turn": n}}, None)
        step = 0
        for item in items:
            if item is None:  # between steps: a user message (as an inbox splice logs one)
                add(user(f"between {n}"), None)
                continue
            step += 1
            add({"type": "step/start", "data": {"turn": n, "step": step}}, step)
            for names in item:
                add(assistant(n, step, "x") if names else user(f"in {n}.{step}"), step)
            add({"type": "step/end", "data": {"turn": n, "step": step}}, step)
        add({"type": "turn/end", "data": {"turn": n, "reason": {"kind": "completed"}}}, None)
    add(user("after"), None)  # between turns
    return log, expected


@given(TURNS)
def test_each_event_is_in_the_step_it_was_written_in(turns: list[list[list[bool] | None]]) -> None:
    log, expected = _log(turns)
    session = Session.from_events(log.header, log.events)
    assert [session.step_of(seq) for seq in range(session.next_seq)] == expected
    run_columns(session)  # the TUI's columns, as runs
    assert [session.step_of(seq) for seq in range(session.next_seq)] == expected


def test_the_fused_paths_and_a_reopen_through_the_index_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")  # the log gets an index
    log, expected = _log([[[True, False], None, [False]], [[False, False, True]]])
    path = log.write(tmp_path / "session.jsonl")
    first = load_session(path, index=True, retain=False, readback=True)  # read whole, through the fused paths
    assert [first.step_of(seq) for seq in range(len(expected))] == expected
    for runs in (False, True):  # reopened through the index that read wrote, its columns as arrays or as runs
        restored = restore(path, False, Consumer(), runs=runs)
        assert restored is not None
        assert [restored.session.step_of(seq) for seq in range(len(expected))] == expected
