"""An export holds neither its log nor the chosen request: on a log that is never compacted (its last request
carries about every message of the log) the peak RSS of ``export -o FILE`` (redaction on) grows by a small margin
when the log is eight times longer. Each export runs in its own process (``bench.cli``'s children report their own
``VmHWM``); the measure is memory, never time."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cli import CONSOLE, run
from bench.gen_session import generate

SIZES = (1_500_000, 12_000_000)
MARGIN = 10 << 20  # what the larger log may add to the peak (holding the request whole adds 20-40 MiB)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("never-cut")
    paths = [root / f"dsh-plain-{size}.jsonl" for size in SIZES]
    for path, size in zip(paths, SIZES, strict=True):
        generate(path, size, seed=4, profile="dsh-plain")
    return paths


@pytest.mark.parametrize("fmt", ["json", "html", "md"])
def test_export_of_a_surface_that_is_never_cut_holds_no_request(fmt: str, logs: list[Path], tmp_path: Path) -> None:
    peaks = [run(CONSOLE, ["export", str(log), "--format", fmt, "-o", str(tmp_path / f"x.{fmt}")]).peak for log in logs]
    small, large = peaks
    assert large - small <= MARGIN, f"export --format {fmt}: {small >> 20} MiB on the small log, {large >> 20} MiB on the large"
