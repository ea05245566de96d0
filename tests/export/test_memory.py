"""An export holds neither its log nor the chosen request: on a log that is never compacted (its last request
carries about every message of the log) the peak RSS of ``export -o FILE`` (redaction on) grows by a small margin
when the log is eight times longer. Each export runs in its own process (``bench.cli``'s children report their own
``VmHWM``); the measure is memory, never time."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cli import CONSOLE, run

MARGIN = 10 << 20  # what the larger log may add to the peak (holding the request whole adds 20-40 MiB)


@pytest.mark.parametrize("fmt", ["json", "html", "md"])
def test_export_of_a_surface_that_is_never_cut_holds_no_request(
    fmt: str, never_cut_logs: tuple[Path, Path], tmp_path: Path
) -> None:
    out = str(tmp_path / f"x.{fmt}")
    peaks = [run(CONSOLE, ["export", str(log), "--format", fmt, "-o", out]).peak for log in never_cut_logs]
    small, large = peaks
    assert large - small <= MARGIN, f"export --format {fmt}: {small >> 20} MiB on the small log, {large >> 20} MiB on the large"
