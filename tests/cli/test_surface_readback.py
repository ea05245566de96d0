"""``surface`` keeps the surface's seqs, not its events: each node's row is rendered as its event goes by and
spooled to a temporary file, and the rows of the nodes still on the surface at the end are copied out of it. A
log that is never cut has most of its bytes on the surface, so holding every surface event made ``surface
--json`` grow with the log (643 MiB on a 500 MB ``dsh-plain`` log), and reading them back decoded them twice."""

from __future__ import annotations

import contextlib
import io
import tracemalloc
from pathlib import Path

import orjson
import pytest

import core.cli.log
from bench.gen_session import generate
from core.cli import main
from core.read.index import index_path
from core.read.load import load_session
from core.read.session import Session
from core.read.surface import iter_surface_rows

AT = 4000


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


def _expected(log: Path, at: int | None, as_json: bool) -> bytes:
    """What ``surface`` prints, from a session that holds every event (cut at ``at`` when given)."""
    whole = load_session(log)
    session = whole if at is None else Session.from_events(whole.header, (whole.events[n] for n in range(at + 1)))
    rows = list(iter_surface_rows(session))
    if as_json:
        return orjson.dumps(rows, option=orjson.OPT_INDENT_2) + b"\n"
    lines = [core.cli.log._surface_line(row) + "\n" for row in rows]
    return "".join([*lines, f"{len(rows)} model-visible message(s); * = replacement\n"]).encode()


@pytest.mark.parametrize("flags", [["--json"], [], ["--at", str(AT), "--json"], ["--at", str(AT)]])
@pytest.mark.parametrize("which", ["never_cut", "cut"])
def test_spooled_rows_are_the_rows_of_the_surface(
    which: str, flags: list[str], request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:  # fmt: skip
    log = request.getfixturevalue(which)
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", str(10**12))  # every node spooled, none read back
    printed = _output(["surface", str(log), *flags], capsysbinary)
    assert printed == _expected(log, AT if "--at" in flags else None, flags[-1:] == ["--json"])
    assert printed.count(b'"seq"' if flags[-1:] == ["--json"] else b"\n") > 20


@pytest.mark.parametrize("flags", [["--json"], []])
@pytest.mark.parametrize("which", ["never_cut", "cut"])
def test_rows_read_back_through_the_index_are_the_rows_spooled(
    which: str, flags: list[str], request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes],
) -> None:  # fmt: skip
    """A second read restores the surface from the log's index and reads those nodes back; a log grown since
    mixes both: its new nodes are spooled."""
    log = tmp_path / request.getfixturevalue(which).name
    log.write_bytes(request.getfixturevalue(which).read_bytes())
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")
    spooled = _output(["surface", str(log), *flags], capsysbinary)
    assert index_path(log).exists()
    assert _output(["surface", str(log), *flags], capsysbinary) == spooled


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


def test_surface_holds_no_surface_events(never_cut: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", str(10**12))
    longest = max(len(line) for line in never_cut.open("rb"))
    projection = _peak(["inspect", str(never_cut), "--json"])
    surface = _peak(["surface", str(never_cut), "--json"])
    nodes = len(load_session(never_cut, retain=False).surface)
    # beyond the projection: a few copies of the longest line (decoded, summarized, rendered) and two machine
    # integers a node. Holding the surface's events took 19 MB here.
    assert surface - projection <= 4 * longest + 16 * nodes + (256 << 10), (surface >> 20, projection >> 20)
