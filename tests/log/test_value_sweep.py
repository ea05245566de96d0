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

import orjson
import pytest

from bench.mutation import Mutation, mutate_lines, value_paths
from bench.readers import READER_COMMANDS, argv_for, cli_crash
from tests.conftest import FIXTURES

CHANGES: list[tuple[str, Any]] = [("replace", {"type": []}), ("replace", None), ("replace", -7), ("delete", None)]


def _cases() -> list[tuple[Path, int, tuple[str | int, ...]]]:
    """One (log, line, path) per distinct event type and key path (list positions taken as one), header excluded."""
    seen: set[tuple[object, tuple[object, ...]]] = set()
    out = []
    for log in sorted(FIXTURES.glob("*.jsonl")):
        if "expected" in log.name:
            continue
        for n, line in enumerate(log.read_bytes().rstrip(b"\n").split(b"\n")[1:], 1):
            event = orjson.loads(line)
            for path in value_paths(event) if isinstance(event, dict) else ():
                key = (str(event.get("type")), tuple("#" if isinstance(p, int) else p for p in path))
                if isinstance(path[-1], str) and key not in seen:
                    seen.add(key)
                    out.append((log, n, path))
    return out


@pytest.mark.parametrize(("action", "value"), CHANGES, ids=["unhashable", "null", "number", "deleted"])
def test_no_reader_crashes_on_a_changed_value_anywhere(tmp_path: Path, action: str, value: Any) -> None:
    cases = _cases()
    assert len(cases) > 200  # the fixtures' shapes, not a handful
    crashes: dict[str, str] = {}
    out = tmp_path / "session.jsonl"
    for log, n, path in cases:
        lines = log.read_bytes().rstrip(b"\n").split(b"\n")
        out.write_bytes(b"\n".join(mutate_lines(lines, Mutation(n, path, action, value))) + b"\n")
        for command in READER_COMMANDS:
            crash = cli_crash(argv_for(command, out))[0]
            if crash is not None:
                crashes.setdefault(crash, f"{log.name} line {n} at {'.'.join(map(str, path))}")
    assert crashes == {}
