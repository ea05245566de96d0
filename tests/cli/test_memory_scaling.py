"""No command that reads a log holds the log: its peak RSS on a log four times longer grows by a small margin.

Every log-reading command of ``core.cli.COMMANDS`` runs in its own process (``bench.cli``'s children, which report
their own ``VmHWM``) on two generated logs of the same profile, ~1.5 MB and ~6 MB, with the arguments a user
would give on each (``bench.cli.probe``). A command that kept the events would grow by tens of MB between them
(a retained load costs several bytes of memory per byte of log); a streaming one grows by what its line table
and the projection's per-event arrays take, well under the margin. The measure is memory, never time.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from bench.cli import CONSOLE, TIMED, argv_for, probe, rss_only, run
from bench.gen_session import generate

SIZES = (1_500_000, 6_000_000)
MARGIN = 10 << 20  # what the larger log may add to a command's peak (holding its events adds 15-25 MiB)
COMMANDS = TIMED + rss_only({"turn": 1, "step": 1, "at": 0, "result": 0}, Path("WORKSPACE"))


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, dict[str, Any], Path]]:
    """Each size's log, what ``probe`` found in it, and its twin begun by a tapedeck host (for ``repair``)."""
    root = tmp_path_factory.mktemp("scaling")
    out = []
    for size in SIZES:
        path, hosted = root / f"short-turns-{size}.jsonl", root / f"short-turns-{size}-hosted.jsonl"
        generate(path, size, seed=4, profile="short-turns")
        generate(hosted, size, seed=4, profile="short-turns", hosted=True)
        out.append((path, probe(path), hosted))
    return out


PARAMS = [pytest.param(i, id=" ".join(c[:2])) for i, c in enumerate(COMMANDS)]


@pytest.mark.parametrize("which", PARAMS)
def test_peak_rss_does_not_grow_with_the_log(
    which: int, logs: list[tuple[Path, dict[str, Any], Path]], tmp_path: Path
) -> None:
    peaks = []
    for log, found, hosted in logs:
        args = (TIMED + rss_only(found, tmp_path))[which]
        peaks.append(run(CONSOLE, argv_for(log, args, hosted)).peak)
    small, large = peaks
    assert large - small <= MARGIN, f"{' '.join(args)}: {small >> 20} MiB on the small log, {large >> 20} MiB on the large"


_probed = functools.cache(probe)  # a step of each never-cut log, found once for the commands that take one


@pytest.mark.parametrize("command", ["cost --json", "diff --json", "request --json", "alerts --json", "request --all"])
def test_requests_on_a_surface_that_is_never_cut_hold_no_messages(command: str, never_cut_logs: tuple[Path, Path]) -> None:
    """On a log that never compacts every request carries the whole surface: ``cost`` and ``diff`` keep each
    surface node's size, not its event or the prompt (``alerts`` too: its cache-break watcher reads the log's
    surface back from the file), ``request`` prints a step's requests a message at a time and ``request --all``
    its requests' sizes from those of their nodes, so a log eight times longer adds little to their peak."""
    peaks = []
    for path in never_cut_logs:
        name, *flags = command.split()
        if name in ("diff", "request") and "--all" not in flags:
            found = _probed(path)
            flags += ["--turn", str(found["turn"]), "--step", str(found["step"])]
        peaks.append(run(CONSOLE, [name, str(path), *flags]).peak)
    small, large = peaks
    assert large - small <= MARGIN, f"{command}: {small >> 20} MiB on the small log, {large >> 20} MiB on the large"
