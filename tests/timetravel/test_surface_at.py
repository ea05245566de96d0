"""The surface at a seq equals the surface of the log cut right after that seq, everywhere."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.gen_session import generate
from core.cli import main
from core.log.reader import LogData, read_log
from core.read.load import READ_CHUNK
from core.read.session import Session
from core.read.timetravel import SurfaceTimeline, moment
from tests.log.helpers import HEADER, user
from tests.timetravel.conftest import FIXTURE_LOGS


@cache
def _loaded(path: Path) -> tuple[LogData, Session]:
    data = read_log(path)
    return data, Session.from_events(data.header, data.events)


def _cut_surface(data: LogData, seq: int) -> list[int]:
    return Session.from_events(data.header, data.events[: seq + 1]).surface


@pytest.mark.parametrize("path", FIXTURE_LOGS, ids=lambda p: p.name)
def test_every_seq_of_every_fixture(path: Path) -> None:
    data, session = _loaded(path)
    timeline = SurfaceTimeline.from_session(session, every=2)
    for seq in range(-1, session.next_seq):
        assert timeline.surface_at(seq) == _cut_surface(data, seq), seq


@settings(max_examples=12, deadline=None)
@given(which=st.integers(0, 1), where=st.floats(0, 1), every=st.sampled_from([1, 7, 256]))
def test_random_cuts_of_generated_logs(generated_logs: list[Path], which: int, where: float, every: int) -> None:
    data, session = _loaded(generated_logs[which])
    seq = min(int(where * session.next_seq), session.next_seq - 1)
    timeline = SurfaceTimeline.from_session(session, every=every)
    assert session.cuts, "the generated logs compact and prune"
    assert timeline.surface_at(seq) == _cut_surface(data, seq)


@settings(max_examples=10, deadline=None)
@given(where=st.lists(st.floats(0, 1), min_size=1, max_size=5))
def test_random_cuts_of_a_host_session(demo_log: Path, where: list[float]) -> None:
    data, session = _loaded(demo_log)
    assert session.cuts, "the demo seals, folds and rewinds"
    timeline = SurfaceTimeline.from_session(session, every=3)
    for w in where:
        seq = min(int(w * session.next_seq), session.next_seq - 1)
        assert timeline.surface_at(seq) == _cut_surface(data, seq)


@settings(max_examples=40, deadline=None)
@given(splits=st.lists(st.integers(1, 60), min_size=1, max_size=4), data=st.data())
def test_extending_while_following_gives_the_same_answers(splits: list[int], data: st.DataObject) -> None:
    events: list[dict] = []
    nodes: list[int] = []
    for seq in range(sum(splits)):
        if nodes and data.draw(st.booleans()):
            i = data.draw(st.integers(0, len(nodes) - 1))
            j = data.draw(st.integers(i, len(nodes) - 1))
            ev = user(f"r{seq}", "plugin:slice:history")
            ev["surfaceOp"] = {"op": "replace", "start": nodes[i], "end": nodes[j]}
            ev["sourceEventSeqs"] = nodes[i : j + 1]
            nodes[i : j + 1] = [seq]
        else:
            ev = user(f"m{seq}")
            nodes.append(seq)
        events.append({**ev, "seq": seq, "time": seq})
    session = Session(HEADER)
    followed = SurfaceTimeline(every=3)
    done = 0
    for size in splits:
        for event in events[done : done + size]:
            session.apply(event)
        done += size
        followed.extend(session)
    whole = SurfaceTimeline.from_session(session, every=5)
    for seq in range(-1, len(events)):
        expected = Session.from_events(HEADER, events[: seq + 1]).surface
        assert followed.surface_at(seq) == whole.surface_at(seq) == expected


def test_a_seq_past_the_end_is_refused() -> None:
    session = Session.from_events(HEADER, [{**user("a"), "seq": 0, "time": 0}])
    with pytest.raises(IndexError, match="past the 1 events"):
        SurfaceTimeline.from_session(session).surface_at(1)


def test_moment_names_turn_and_step(fixtures_dir: Path) -> None:
    _, session = _loaded(fixtures_dir / "compaction-recovery.session.jsonl")
    turns = SurfaceTimeline.from_session(session).turns
    assert moment(session, 22, turns).label() == "at seq 22 · turn 1 step 2"
    assert moment(session, 0, turns).label() == "at seq 0"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _write_cut(data: LogData, seq: int, path: Path) -> Path:
    lines = [orjson.dumps(data.header), *(orjson.dumps(e) for e in data.events[: seq + 1])]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, len(FIXTURE_LOGS) + 1), where=st.floats(0, 1), as_json=st.booleans())
def test_cli_surface_at_equals_surface_of_the_cut_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, generated_logs: list[Path], which: int, where: float,
    as_json: bool,
) -> None:  # fmt: skip
    path = [*FIXTURE_LOGS, *generated_logs][which]
    data, session = _loaded(path)
    seq = min(int(where * session.next_seq), session.next_seq - 1)
    flag = ["--json"] if as_json else []
    at = _cli(capsys, "surface", str(path), "--at", str(seq), *flag)
    cut = _cli(capsys, "surface", str(_write_cut(data, seq, tmp_path / "cut.jsonl")), *flag)
    assert at == cut
    assert at[0] == 0 and at[1]


def test_cli_surface_at_a_seq_outside_the_log_says_so(capsys: pytest.CaptureFixture[str], fixtures_dir: Path) -> None:
    code, out, err = _cli(capsys, "surface", str(fixtures_dir / "multi-turn.session.jsonl"), "--at", "71")
    assert (code, out) == (2, "")
    assert err == "tapedeck: seq 71 is not in this log: its events are seq 0..70\n"


def test_cli_surface_at_reads_the_log_only_as_far_as_seq(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Nothing after SEQ changes the surface at SEQ: the pass ends once it is taken, the rest of the log unread
    (the whole log was decoded and projected, to no use: a mid-log ``--at`` of a 100 MB log read its second half)."""
    log = tmp_path / "session.jsonl"
    generate(log, 2 * READ_CHUNK, seed=3, profile="mixed")
    fed = request.getfixturevalue("decoder_feeds")  # from here on
    at = _cli(capsys, "surface", str(log), "--at", "40", "--json")
    assert at[0] == 0 and sum(fed) <= READ_CHUNK, fed  # the first read holds seq 40
    assert at == _cli(capsys, "surface", str(_write_cut(read_log(log), 40, tmp_path / "cut.jsonl")), "--json")
