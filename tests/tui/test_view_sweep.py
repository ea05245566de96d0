"""Every place a value can sit in the fixtures, given a value of the wrong kind or removed: nothing the TUI
derives from the log crashes.

The TUI side of ``tests/log/test_value_sweep.py``, over the same sites and changes (``bench.mutation``): the policy
screens' derivations (``screen_crash``) and what the main screen builds from the raw events it shows
(``view_crash``: the list's rows, the changed event's detail pane and every stream's, the filter and search
scans, time travel to the changed event and every request view), without Textual: driving every screen through
Pilot for each of the 1,252 cases takes about 5 s a case (``tui_crash``; ``test_screen_fuzz`` draws a few).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.mutation import SWEEP_CHANGES, sweep_sites, swept
from bench.readers import screen_crash, view_crash
from tests.conftest import FIXTURES

LOGS = [log for log in sorted(FIXTURES.glob("*.jsonl")) if "expected" not in log.name]


@pytest.mark.parametrize(("action", "value"), list(SWEEP_CHANGES.values()), ids=list(SWEEP_CHANGES))
def test_no_view_crashes_on_a_changed_value_anywhere(tmp_path: Path, action: str, value: Any) -> None:
    assert len(sweep_sites(LOGS)) > 200  # the fixtures' shapes, not a handful
    crashes: dict[str, str] = {}
    out = tmp_path / "session.jsonl"
    for n, where in swept(LOGS, action, value, out):
        crash = screen_crash(out) or view_crash(out, (n - 1,))
        if crash is not None:
            crashes.setdefault(crash, where)
    assert crashes == {}
