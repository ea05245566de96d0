"""``surface`` keeps the surface's seqs, not its events: past a budget of model-visible text it reads each node
back from the file as its row is printed. A log that is never cut has most of its bytes on the surface, so
holding every surface event made ``surface --json`` grow with the log (643 MiB on a 500 MB ``dsh-plain`` log)."""

from __future__ import annotations

import contextlib
import io
import tracemalloc
from pathlib import Path

import pytest

import core.cli.log
from bench.gen_session import generate
from core.cli import main
from core.log.linestore import CACHE_BYTES

BUDGET = 1 << 20


@pytest.fixture(scope="module")
def never_cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("surface") / "dsh-plain.jsonl"
    generate(path, 12_000_000, seed=3, profile="dsh-plain")
    return path


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("surface") / "mixed.jsonl.zstd"
    generate(path, 3_000_000, seed=6, profile="mixed", zstd=True)
    return path


def _output(argv: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> bytes:
    assert main(argv) == 0
    return capsysbinary.readouterr().out


@pytest.mark.parametrize("flags", [["--json"], [], ["--at", "4000", "--json"], ["--at", "4000"]])
@pytest.mark.parametrize("which", ["never_cut", "cut"])
def test_rows_read_back_are_the_rows_kept(
    which: str, flags: list[str], request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:  # fmt: skip
    log = str(request.getfixturevalue(which))
    kept = _output(["surface", log, *flags], capsysbinary)
    monkeypatch.setattr(core.cli.log, "SURFACE_KEPT_CHARS", 0)
    assert _output(["surface", log, *flags], capsysbinary) == kept
    assert kept.count(b'"seq"' if flags[-1:] == ["--json"] else b"\n") > 20


def _peak(argv: list[str]) -> int:
    sink = io.TextIOWrapper(open("/dev/null", "wb"))  # noqa: SIM115 (closed below)
    tracemalloc.start()
    try:
        with contextlib.redirect_stdout(sink):
            assert main(argv) == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        sink.close()


def test_surface_holds_its_budget_not_the_surface(never_cut: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core.cli.log, "SURFACE_KEPT_CHARS", BUDGET)
    longest = max(len(line) for line in never_cut.open("rb"))
    projection = _peak(["inspect", str(never_cut), "--json"])
    surface = _peak(["surface", str(never_cut), "--json"])
    # beyond the projection: the kept text and the read-back cache's lines, decoded (about twice their bytes), and
    # a few copies of the longest line (decoded, summarized, printed). Holding the surface's events took 19 MB here.
    assert surface - projection <= 2 * (BUDGET + CACHE_BYTES) + 3 * longest, (surface >> 20, projection >> 20)
