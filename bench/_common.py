"""Helpers shared by the benchmark scripts: best-of timing, peak RSS, percentiles, JSON and markdown output."""

from __future__ import annotations

import argparse
import compileall
import json
import math
import os
import resource
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What a timed child inherits: the environment, less two switches a user's shell rarely sets. Without bytecode
# caches (PYTHONDONTWRITEBYTECODE) every start would compile every module and measure the compiler; unbuffered
# output (PYTHONUNBUFFERED) would make each write a system call, in the commands and in the baseline loops alike.
CHILD_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")}


def compile_package() -> None:
    """Write the bytecode of ``core`` and ``tui`` now, as installing a package does, so that no timed child
    compiles a module first (an editable checkout, or ``PYTHONDONTWRITEBYTECODE``, would leave that to the first
    import of every process)."""
    for package in ("core", "tui"):
        if not compileall.compile_dir(os.path.join(ROOT, package), quiet=1):
            raise RuntimeError(f"cannot compile {package}")


def best_of(
    fn: Callable[[], T], repeat: int = 3, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, T]:
    """The best duration by ``clock`` (wall time unless given: ``time.process_time`` for CPU time) over ``repeat``
    calls of ``fn``, and the last call's result."""
    best = float("inf")
    result: T
    for _ in range(max(1, repeat)):
        start = clock()
        result = fn()
        best = min(best, clock() - start)
    return best, result


def _maxrss_bytes(ru_maxrss: int) -> int:
    # Linux reports kilobytes, macOS bytes.
    return ru_maxrss if sys.platform == "darwin" else ru_maxrss * 1024


def current_rss() -> int:
    """Resident bytes of this process now (``/proc/self/statm``; peak RSS where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return _maxrss_bytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def peak_rss() -> int:
    """Peak resident bytes of this process image (``VmHWM``; ``ru_maxrss`` where /proc is missing).

    ``ru_maxrss`` of a process started by fork/vfork + exec also counts the parent's pages from before the
    exec; ``VmHWM`` belongs to the exec'd image alone, so a child should report this number itself.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return _maxrss_bytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def human_bytes(n: float) -> str:
    """``n`` bytes in the largest binary unit (up to GiB) that keeps the number at or above 1."""
    if abs(n) < 1024:
        return f"{n:.0f} B"
    value = n / 1024
    for unit in ("KiB", "MiB"):
        if abs(value) < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def finite(text: str) -> float:
    """A number option's value (``type=finite``), refused unless finite: ``emit`` would write a NaN or an infinity
    into the JSON result as ``NaN``/``Infinity``, which no JSON reader takes."""
    from core.cli.args import decimal  # ASCII digits only, a long value quoted cut

    value = decimal(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite number")
    return value


def positive(text: str) -> float:
    """A number option's value (``type=positive``) that must be finite and above 0: a time to run, a ratio, a scale."""
    value = finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive number")
    return value


def delay(text: str) -> float:
    """A number of seconds to wait (``type=delay``): finite, 0 (no wait) or more."""
    value = finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds, 0 or more")
    return value


def fraction(text: str) -> float:
    """A share of a whole (``type=fraction``): finite, above 0, at most 1."""
    value = finite(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a fraction above 0 and at most 1")
    return value


def counts(least: int, most: int | None = None) -> Callable[[str], int]:
    """A whole-number option's type: ASCII digits (``core.cli.args.whole``), from ``least`` (to ``most`` when given):
    a count of 0 measures nothing, a negative one means nothing."""
    from core.cli.args import whole

    def count(text: str) -> int:
        value = whole(text)
        if value < least or (most is not None and value > most):
            wanted = f"of at least {least}" if most is None else f"from {least} to {most}"
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number {wanted}")
        return value

    return count


def emit(result: dict[str, Any], table: str, json_only: bool) -> None:
    """Print the result as JSON, then (unless ``json_only``) the markdown table."""
    print(json.dumps(result, indent=2))
    if not json_only:
        print()
        print(table)
