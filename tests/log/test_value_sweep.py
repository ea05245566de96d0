"""Every place a value can sit in the fixtures, made unhashable: no reading command crashes.

The random fuzzers (``test_reader_fuzz``, ``test_screen_fuzz``, ``bench/fuzz.py``) draw a few cases per run; this
sweep is exhaustive along one axis. For each fixture log, every distinct (event type, key path) gets the value
``{"type": []}`` (a dict whose own ``type`` is a list): a reader that tests a field against a set or a dict's keys
without first checking it is a string raises ``TypeError: unhashable type``. Each mutated log runs through every
command of ``READER_COMMANDS``; the crashes are reported together, with where each first came from.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from bench.mutation import Mutation, mutate_lines, value_paths
from bench.readers import READER_COMMANDS, argv_for, cli_crash
from tests.conftest import FIXTURES

UNHASHABLE = {"type": []}


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


def test_no_reader_crashes_on_an_unhashable_value_anywhere(tmp_path: Path) -> None:
    cases = _cases()
    assert len(cases) > 200  # the fixtures' shapes, not a handful
    crashes: dict[str, str] = {}
    out = tmp_path / "session.jsonl"
    for log, n, path in cases:
        lines = log.read_bytes().rstrip(b"\n").split(b"\n")
        out.write_bytes(b"\n".join(mutate_lines(lines, Mutation(n, path, "replace", UNHASHABLE))) + b"\n")
        for command in READER_COMMANDS:
            crash = cli_crash(argv_for(command, out))[0]
            if crash is not None:
                crashes.setdefault(crash, f"{log.name} line {n} at {'.'.join(map(str, path))}")
    assert crashes == {}
