"""``request --all``: a lean pass whose ``--json`` reads each request's messages back from the log, keeping the
printed messages of surface nodes (``RenderedNodes``) only up to its budget."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bench.gen_session import generate
from core.cli import main
from core.cli.timetravel import RenderedNodes, _json_pieces
from core.log.linestore import LineStore
from core.log.reader import read_log
from core.read.session import Session
from core.rebuild.request import Request, iter_requests, stream_requests
from tests.timetravel.conftest import FIXTURE_LOGS

OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS


def _print_all(path: Path, budget: int) -> tuple[list[bytes], RenderedNodes, set[int]]:
    """Each request of the lean pass as a printed list item (``--full``), the ``RenderedNodes`` used and every
    node printed, checking after each request that what is kept is within budget and on its surface."""
    nodes = RenderedNodes(budget)
    printed: list[bytes] = []
    surfaces: set[int] = set()

    def take(request: Request, _: Session) -> None:
        printed.append(b"".join(_json_pieces(request, True, nodes.pieces)))
        assert nodes.size <= budget
        keys = {seq for seq, _ in request.wire_nodes() if seq is not None}
        surfaces.update(keys)
        assert all(set(kept) <= keys for kept in nodes.kept.values())

    stream_requests(path, take)
    return printed, nodes, surfaces


@pytest.mark.parametrize("budget", [0, 40_000, 1 << 30])
def test_printed_nodes_are_kept_within_their_budget_and_print_as_the_whole_request(
    budget: int, generated_logs: list[Path]
) -> None:
    """Whatever the budget, each request prints as ``emit`` prints it; what is kept never passes the budget and
    holds only nodes of the last request's surface (the mixed log's compactions cut it); with room for all, each
    node is read back and rendered once (messages and the body's, at their two depths)."""
    for path in generated_logs:
        data = read_log(path)
        expected = [orjson.dumps(r.to_dict(body=True), option=OPTIONS).replace(b"\n", b"\n  ")
                    for r in iter_requests(data.header, data.events)]  # fmt: skip
        printed, nodes, surfaces = _print_all(path, budget)
        assert printed == expected
        if budget == 1 << 30:
            assert nodes.renders == 2 * len(surfaces)
        if budget == 0:
            assert not any(nodes.kept.values())


def test_request_all_prints_every_request_as_emit_would(capsys: pytest.CaptureFixture[str], generated_logs: list[Path]) -> None:
    for path in [*FIXTURE_LOGS[:4], *generated_logs]:
        data = read_log(path)
        requests = list(iter_requests(data.header, data.events))
        for full in (False, True):
            assert main(["request", str(path), "--all", "--json", *(["--full"] if full else [])]) == 0
            out = capsys.readouterr().out.encode()
            assert out == orjson.dumps([r.to_dict(body=full) for r in requests], option=OPTIONS) + b"\n"


def test_request_all_on_a_log_without_requests_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # it printed an empty line, exit 0
    log = tmp_path / "session.jsonl"
    log.write_bytes(FIXTURE_LOGS[0].read_bytes().split(b"\n", 1)[0] + b"\n")  # the header alone
    assert main(["request", str(log), "--all"]) == 0
    assert capsys.readouterr().out == "no model request in this log\n"
    assert main(["request", str(log), "--all", "--json"]) == 0
    assert capsys.readouterr().out == "[]\n"


def test_a_log_never_cut_reads_each_node_back_once_when_its_printed_surface_fits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request of a log that never compacts prints the whole surface: reading each node back per request
    would decode the surface once per request. With the printed nodes kept, no event is read back twice."""
    path = tmp_path / "session.jsonl"
    generate(path, 600_000, seed=4, profile="dsh-plain")
    read: list[int] = []
    real = LineStore.__getitem__

    def counting(self: LineStore, seq: int) -> object:
        read.append(seq)
        return real(self, seq)

    monkeypatch.setattr(LineStore, "__getitem__", counting)
    assert main(["request", str(path), "--all", "--json"]) == 0
    requests = orjson.loads(capsys.readouterr().out)
    assert len(requests) > 20 and len(read) > 20
    assert len(read) == len(set(read))
