"""A fold plan reads each event it needs back from the log file once.

The TUI's Folds screen read every surface tool result back three times on a session whose events a ``LineStore``
reads back (the ledger of ``preview_fold`` for its call id, its decision, then ``resource_backoff``'s own ledger),
each a decode of the line again: 3,447 decodes for 1,148 results on a 20 MB dsh-plain log. ``plan_fold`` read
each twice, and ``fold`` the events before the last request twice (``shown_through`` run twice), as did a
code-mode result's nested calls (the ledger's replay, then the decision's retrievals)."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.log.linestore import LineStore
from core.policies.fold import plan_fold
from core.policies.slice_config import SliceConfig
from core.read.load import load_session
from core.read.session import Session
from tui.screens.folds import derive_view


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """How many times each seq is read back from the log file from now on."""
    counted: Counter[int] = Counter()
    raw = LineStore.raw

    def counting(self: LineStore, n: int) -> dict[str, Any]:
        counted[n] += 1
        return raw(self, n)

    monkeypatch.setattr(LineStore, "raw", counting)
    return counted


PLANS: dict[str, Callable[[Session], object]] = {
    "plan_fold (the host)": lambda session: plan_fold(session, SliceConfig()),
    "derive_view (the TUI)": derive_view,
}


@pytest.mark.parametrize("plan", PLANS, ids=list(PLANS))
@pytest.mark.parametrize("name", ["tool-call-turn.session.jsonl", "code-mode-turn.session.jsonl"])
def test_a_plan_reads_each_event_back_once(fixtures_dir: Path, reads: Counter[int], name: str, plan: str) -> None:
    session = load_session(fixtures_dir / name, retain=False, readback=True)
    assert isinstance(session.events, LineStore)
    reads.clear()
    PLANS[plan](session)
    assert reads and [seq for seq, n in reads.items() if n > 1] == []


@pytest.mark.parametrize("name", ["tool-call-turn.session.jsonl", "code-mode-turn.session.jsonl"])
def test_the_fold_command_reads_each_event_back_once(fixtures_dir: Path, reads: Counter[int], name: str) -> None:
    with redirect_stdout(io.StringIO()):
        assert main(["fold", str(fixtures_dir / name), "--json"]) == 0
    assert reads and [seq for seq, n in reads.items() if n > 1] == []
