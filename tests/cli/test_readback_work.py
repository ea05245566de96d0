"""The policy commands read the log once: what they read back from the file by seq is counted, never timed.

A streaming command that needs events after its pass reads them back through the session's ``LineStore``, which
counts every line it decodes again (``LineStore.decodes``). ``seal`` reads back at most the surface it seals
(its read index is built during the pass). ``cost`` and ``diff`` read back nothing where no cache broke (the pass
keeps each surface node's size, not its event) and three lines per break; ``request`` reads back the messages it
prints (``--turn`` twice, as it never holds them; ``--all --json`` each surface node once, keeping it printed). A command that re-read every event, or every event once per request, would decode thousands of lines here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.gen_session import generate
from core.cli import main
from core.log.linestore import LineStore
from core.log.vocabulary import SURFACE_TYPES
from core.policies.read_index import ReadIndex, index_reads, read_index
from core.read.load import load_session
from core.read.session import Session


@pytest.fixture(scope="module", params=["short-turns", "mixed", "dsh-plain"])
def log(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("work") / f"{request.param}.jsonl"
    generate(path, 1_000_000, seed=5, profile=request.param)
    return path


@pytest.fixture
def stores(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[LineStore]]:
    """Every ``LineStore`` the command under test opens (the real class, only noted as it is made)."""
    made: list[LineStore] = []

    class Noted(LineStore):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr("core.read.load.LineStore", Noted)
    yield made


def _decodes(argv: list[str], stores: list[LineStore], capsys: pytest.CaptureFixture[str]) -> int:
    assert main(argv) == 0
    capsys.readouterr()
    assert len(stores) == 1
    return stores[0].decodes


@pytest.mark.parametrize("flags", [[], ["--json", "--keep-recent-turns", "0"]], ids=["text", "json-keep-0"])
def test_seal_reads_back_no_more_lines_than_the_surface_holds(
    log: Path, flags: list[str], stores: list[LineStore], capsys: pytest.CaptureFixture[str]
) -> None:
    session = load_session(log, retain=False)
    lines = sum(1 for _ in log.open("rb"))
    decodes = _decodes(["seal", str(log), *flags], stores, capsys)
    assert 0 < decodes <= len(session.surface) < lines // 5


def test_seal_reads_each_surface_node_back_once_without_the_cache(
    log: Path, stores: list[LineStore], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("core.log.linestore.CACHE_LINES", 1)  # a repeated read of a node is a decode again
    session = load_session(log, retain=False)
    decodes = _decodes(["seal", str(log), "--json", "--keep-recent-turns", "0"], stores, capsys)
    assert 0 < decodes <= len(session.surface) + 8  # and a few tape entries' sources, replaced results' originals


def test_fold_reads_back_each_result_on_the_surface_once(
    log: Path, stores: list[LineStore], capsys: pytest.CaptureFixture[str]
) -> None:
    session = load_session(log, retain=False)
    results = sum(1 for seq in session.surface if session.surface_type(seq) == "tool/result")
    decodes = _decodes(["fold", str(log), "--json"], stores, capsys)
    assert 0 < decodes <= results + 8  # shownThrough reads a few events back from the end


def _step_with_results(log: Path) -> tuple[str, str]:
    session = load_session(log, retain=False)
    turn, step = sorted(session.results_by_step)[len(session.results_by_step) // 2]
    return str(turn), str(step)


@pytest.mark.parametrize("command", ["cost --json", "diff --turn"])
def test_cost_and_diff_read_nothing_back_where_no_cache_broke(
    log: Path, command: str, stores: list[LineStore], capsys: pytest.CaptureFixture[str]
) -> None:
    name, *flags = command.split()
    if flags == ["--turn"]:
        turn, step = _step_with_results(log)
        flags = ["--turn", turn, "--step", step]
    assert main(["cost", str(log), "--json"]) == 0
    assert not any(r["cacheBreak"] for r in json.loads(capsys.readouterr().out)["requests"])
    stores.clear()
    assert _decodes([name, str(log), *flags], stores, capsys) == 0


def test_cost_reads_back_three_lines_per_cache_break(
    tmp_path: Path, stores: list[LineStore], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two messages where the prompts part and the replacement that parted them; never the surface."""
    path = tmp_path / "cut.jsonl"
    generate(path, 2_500_000, seed=5, profile="mixed")
    monkeypatch.setattr("core.log.linestore.CACHE_LINES", 1)  # a repeated read of a line is a decode again
    assert main(["cost", str(path), "--json"]) == 0
    breaks = sum(1 for r in json.loads(capsys.readouterr().out)["requests"] if r["cacheBreak"])
    stores.clear()
    assert breaks and 0 < _decodes(["cost", str(path), "--json"], stores, capsys) <= 3 * breaks


@pytest.mark.parametrize("command", ["request --all --json", "request --turn"])
def test_requests_read_back_only_the_messages_they_print(
    log: Path, command: str, stores: list[LineStore], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("core.log.linestore.CACHE_LINES", 1)
    name, *flags = command.split()
    if flags == ["--turn"]:
        turn, step = _step_with_results(log)
        flags = ["--turn", turn, "--step", step, "--json"]
    assert main([name, str(log), *flags]) == 0
    requests = json.loads(capsys.readouterr().out)
    printed = sum(len(r["messages"]) for r in requests)
    stores.clear()
    decodes = _decodes([name, str(log), *flags], stores, capsys)
    if flags[0] == "--all":  # every request's messages: each node's kept printed, never read back per request
        counts = load_session(log, retain=False).counts
        nodes = sum(counts.get(etype, 0) for etype in SURFACE_TYPES)
        assert decodes <= nodes < printed
    else:  # a step's requests, a message at a time: each node read to size it and to print it
        assert 0 < decodes <= printed * 2


def _index(session: Session) -> tuple[Any, ...]:
    index: ReadIndex = read_index(session)
    return index._by_result, index._history, index._calls, index._queued


def test_the_read_index_built_during_the_pass_is_the_one_built_after_it(log: Path) -> None:
    streamed = load_session(log, retain=False, readback=True, observe=index_reads)
    store = streamed.events
    assert isinstance(store, LineStore)
    built = _index(streamed)
    assert store.decodes == 0
    assert built == _index(load_session(log))
    assert built[0], "the log holds read results to index"
