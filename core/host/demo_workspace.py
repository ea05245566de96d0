"""The demo's throw-away workspace: a small real Python project whose unit tests fail until a bug is fixed."""

from __future__ import annotations

import fcntl
import os
import random
import shutil
import tempfile
from pathlib import Path

DURATION_PY = '''"""Parse and format human durations such as ``1h30m`` or ``45s``."""

from __future__ import annotations

import re

UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_TOKEN = re.compile(r"(\\d+)([dhms])")


def parse_duration(text: str) -> int:
    """Seconds in a duration like ``2d3h``; raises ValueError on anything else."""
    cleaned = text.strip().lower()
    if not cleaned:
        raise ValueError("empty duration")
    total = 0
    pos = 0
    for match in _TOKEN.finditer(cleaned):
        if match.start() != pos:
            raise ValueError(f"bad duration {text!r}")
        total = int(match.group(1)) * UNITS[match.group(2)]
        pos = match.end()
    if pos != len(cleaned):
        raise ValueError(f"bad duration {text!r}")
    return total


def format_duration(seconds: int) -> str:
    """The shortest duration string for ``seconds`` (``0s`` for zero)."""
    if seconds < 0:
        raise ValueError("negative duration")
    parts = []
    for unit, size in UNITS.items():
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
'''

INIT_PY = '''"""timeparse: tiny helpers for human-readable durations."""

from timeparse.duration import format_duration, parse_duration

__all__ = ["format_duration", "parse_duration"]
'''

TEST_PY = """import unittest

from timeparse import format_duration, parse_duration


class ParseDurationTest(unittest.TestCase):
    def test_single_units(self) -> None:
        self.assertEqual(parse_duration("45s"), 45)
        self.assertEqual(parse_duration("2h"), 7200)

    def test_compound(self) -> None:
        self.assertEqual(parse_duration("1h30m"), 5400)

    def test_rejects_garbage(self) -> None:
        with self.assertRaises(ValueError):
            parse_duration("soon")


class FormatDurationTest(unittest.TestCase):
    def test_round_trip(self) -> None:
        for text in ("45s", "2h", "1h30m", "1d1s"):
            self.assertEqual(format_duration(parse_duration(text)), text)


if __name__ == "__main__":
    unittest.main()
"""

README = """# timeparse

Parse and format durations like `1h30m`. Run the tests with `python -m unittest -v`.

Known issue: compound durations such as `1h30m` come out wrong.
"""


def _measurements(rng: random.Random) -> str:
    lines = ["# benchmark measurements, one row per run", "[meta]", "unit: seconds", "source: nightly", ""]
    lines.append("run,input,parsed,expected,host")
    for run in range(1, 2401):
        h, m, s = rng.randint(0, 9), rng.randint(0, 59), rng.randint(0, 59)
        text = f"{h}h{m}m{s}s"
        lines.append(f"{run},{text},{s},{h * 3600 + m * 60 + s},ci-{run % 7}")
    return "\n".join(lines) + "\n"


def _build_log(rng: random.Random) -> str:
    lines = []
    for section in range(1, 9):
        lines.append(f"== section {section}: compiling module group {section} ==")
        for i in range(220):
            lines.append(
                f"2026-12-02T10:{section:02d}:{i % 60:02d} INFO compiled unit {section}.{i} in {rng.randint(3, 90)} ms"
            )
            if i % 53 == 17:
                lines.append(
                    f"2026-12-02T10:{section:02d}:{i % 60:02d} WARN deprecated call to legacy_parse in unit {section}.{i}"
                )
        if section == 6:
            lines.append(
                "2026-12-02T10:06:59 ERROR test timeparse.duration failed: parse_duration('1h30m') == 1800"
            )
    lines.append("build finished: 8 sections, 1 error, warnings above")
    return "\n".join(lines) + "\n"


def _tables() -> str:
    lines = [
        '"""Precomputed seconds for common durations (generated; do not edit by hand)."""',
        "",
        "TABLE = {",
    ]
    for h in range(0, 24):
        for m in range(0, 60):
            lines.append(f'    "{h}h{m}m": {h * 3600 + m * 60},')
    lines += ["}", "", "", "def lookup(text: str) -> int | None:", '    """Seconds for ``text`` if the table has it."""',
              "    return TABLE.get(text)", ""]  # fmt: skip
    return "\n".join(lines)


def create_demo_workspace(root: Path, seed: int = 7) -> Path:
    """Write the demo project into ``root`` (created if needed) and return it."""
    rng = random.Random(seed)
    files = {
        "README.md": README,
        "timeparse/__init__.py": INIT_PY,
        "timeparse/duration.py": DURATION_PY,
        "timeparse/_tables.py": _tables(),
        "tests/__init__.py": "",
        "tests/test_duration.py": TEST_PY,
        "data/measurements.csv": _measurements(rng),
        "logs/build.log": _build_log(rng),
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


SCRATCH_PREFIX = "tapedeck-demo-"  # a demo run's temporary directory, under the system's temporary directory
OWNER_LOCK = ".demo-owner.lock"  # in it: locked while the demo that made it runs (none when it is --keep's)


def make_scratch(keep: bool) -> Path:
    """A new temporary directory for a demo run, first removing those whose demo died before it could (a SIGKILL):
    each holds a lock its demo keeps while it runs (until this process exits), unless ``keep`` (the demo keeps it
    on purpose), and one whose lock nobody holds, of this user, is abandoned. The lock is named only once it is
    held, so a demo starting meanwhile never finds a new one free."""
    for old in Path(tempfile.gettempdir()).glob(SCRATCH_PREFIX + "*"):
        _remove_if_abandoned(old)
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
    if not keep:
        taking = scratch / f"{OWNER_LOCK}.new"  # a name no other demo looks at until the lock is held
        fd = os.open(taking, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held (fd left open) until this process exits
        os.rename(taking, scratch / OWNER_LOCK)
    return scratch


def unowned_scratches(besides: Path) -> list[Path]:
    """This user's demo directories but ``besides`` that have no owner lock, which no demo removes: a ``--keep``
    demo's, or one a demo killed before demos took the lock left (nothing tells the two apart, so both stay)."""
    found = []
    for old in sorted(Path(tempfile.gettempdir()).glob(SCRATCH_PREFIX + "*")):
        try:
            ours = not old.is_symlink() and old.is_dir() and old.stat().st_uid == os.getuid()
        except OSError:
            continue
        if ours and old != besides and not os.path.lexists(old / OWNER_LOCK):
            found.append(old)
    return found


def _remove_if_abandoned(scratch: Path) -> None:
    """Remove ``scratch`` when it has an owner lock, this user's, that no running demo holds."""
    try:
        fd = os.open(scratch / OWNER_LOCK, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return  # no lock: kept (--keep), not a demo's, or not ours to read
    try:
        if scratch.is_symlink() or os.fstat(fd).st_uid != os.getuid():
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # its demo runs
        shutil.rmtree(scratch, ignore_errors=True)
    finally:
        os.close(fd)
