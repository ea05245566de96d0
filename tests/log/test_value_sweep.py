"""Every place a value can sit in the fixtures, given a value of the wrong kind or removed: no reading command
crashes.

The random fuzzers (``test_reader_fuzz``, ``test_screen_fuzz``, ``bench/fuzz.py``) draw a few cases per run; this
sweep is exhaustive along one axis. For each fixture log, every distinct (event type, key path) is removed, or gets
one of a few values each of which has broken a reader: ``{"type": []}`` (unhashable: a field tested against a set
before being checked for a string), ``None`` (a field taken for text), ``-7`` (a field taken for a list). Each
mutated log runs through every command of ``READER_COMMANDS``; the crashes are reported together, with where
each first came from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.mutation import SWEEP_CHANGES, sweep_sites, swept
from bench.readers import READER_COMMANDS, argv_for, cli_crash, parsers_kept
from tests.conftest import FIXTURES

CHANGES = list(SWEEP_CHANGES.values())
LOGS = [log for log in sorted(FIXTURES.glob("*.jsonl")) if "expected" not in log.name]


@pytest.mark.parametrize(("action", "value"), CHANGES, ids=list(SWEEP_CHANGES))
def test_no_reader_crashes_on_a_changed_value_anywhere(tmp_path: Path, action: str, value: Any) -> None:
    assert len(sweep_sites(LOGS)) > 200  # the fixtures' shapes, not a handful
    crashes: dict[str, str] = {}
    out = tmp_path / "session.jsonl"
    with parsers_kept():  # 11,000 in-process runs: each command's parser is built once
        for _, where in swept(LOGS, action, value, out):
            for command in READER_COMMANDS:
                crash = cli_crash(argv_for(command, out))[0]
                if crash is not None:
                    crashes.setdefault(crash, where)
    assert crashes == {}
