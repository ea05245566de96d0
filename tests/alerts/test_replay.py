"""Rule invariants: a cause never fires twice without clearing in between, and following a log in torn chunks
through the real reader raises exactly the alerts of reading it whole (every DSH fixture and a demo log)."""

from __future__ import annotations

import copy
import functools
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.mutation import Mutation, mutate_lines
from core.alerts.engine import AlertEngine
from core.alerts.follow import AlertWatch
from core.control.config import PolicyConfig
from core.policies.rewind import GUARD_SOURCE
from tests.alerts.crafted import HEADER, Log, config
from tests.conftest import FIXTURES

# thresholds low enough that most rules fire on the fixtures and the demo log
EAGER: dict[str, Any] = {
    "errorStreak": {"count": 1},
    "context": {"percent": 1},
    "cacheBreak": {"tokens": 1},
    "budget": {"usd": 0.0001},
    "runRate": {"usdPerHour": 0.001},
    "loop": {"count": 2},
}
DEMO_PRICES = {"prices": {"tapedeck-demo": {"hit": 0.028, "miss": 0.28, "output": 0.42}}}


def _eager() -> PolicyConfig:
    from core.control.config import validate_config

    return validate_config({"alerts": EAGER, "model": DEMO_PRICES})


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log the real demo host wrote (scripted model)."""
    from core.control.config import load_config
    from core.host.demo_scenario import TASKS, write_script
    from core.host.demo_workspace import create_demo_workspace
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers import make_provider

    tmp = tmp_path_factory.mktemp("demo")
    workspace = create_demo_workspace(tmp / "ws")
    script = write_script(tmp / "script.json")
    host = AgentHost.create(tmp / "root", make_provider(f"scripted:{script}"), load_config(None),
                            HostOptions(workspace=workspace), tasks=TASKS)  # fmt: skip
    try:
        host.run()
    finally:
        host.close()
    return host.writer.path


def _logs(demo: Path) -> list[Path]:
    return sorted(FIXTURES.glob("*.jsonl")) + [demo]


def _key(alerts: list[Any]) -> list[tuple[str, int, str, str]]:
    return [(a.cause, a.seq, a.severity, a.reason) for a in alerts]


def _whole(path: Path, cfg: PolicyConfig) -> list[Any]:
    watch = AlertWatch(path, cfg, live=False)
    return watch.poll(0, final=True)


@functools.cache
def _whole_eager(path: Path) -> list[tuple[str, int, str, str]]:
    """``_whole`` under ``_eager()``, read once per log for every example of a property."""
    return _key(_whole(path, _eager()))


def _torn(path: Path, cfg: PolicyConfig, cuts: list[int], target: Path) -> list[Any]:
    """Write ``path`` into ``target`` piece by piece, cut at ``cuts`` (byte offsets), polling after each piece
    (flushed: a read sees it; an fsync each, 3,000 in the property below, only made the disk wait)."""
    data = path.read_bytes()
    target.unlink(missing_ok=True)
    watch = AlertWatch(target, cfg, live=False)
    out: list[Any] = []
    edges = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    with open(target, "ab") as f:
        for lo, hi in zip(edges, edges[1:], strict=False):
            f.write(data[lo:hi])
            f.flush()
            out.extend(watch.poll(0))
    out.extend(watch.poll(0, final=True))
    return out


def test_every_fixture_and_the_demo_log_raise_alerts_with_the_eager_config(demo_log: Path) -> None:
    cfg = _eager()
    demo = _key(_whole(demo_log, cfg))
    causes = {c for c, *_ in demo}
    assert {"error-streak", "context", "cache-break", "budget", "run-rate", "class-change"} <= causes
    assert any(_whole(p, cfg) for p in FIXTURES.glob("*.jsonl"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_following_in_torn_chunks_raises_what_reading_whole_does(
    demo_log: Path, tmp_path: Path, data: st.DataObject
) -> None:
    cfg = _eager()
    for path in _logs(demo_log):
        cuts = data.draw(st.lists(st.integers(min_value=0, max_value=10**7), max_size=12), label=path.name)
        target = tmp_path / "follow" / path.name
        target.parent.mkdir(exist_ok=True)
        assert _key(_torn(path, cfg, cuts, target)) == _whole_eager(path), path.name


def test_a_zstd_log_followed_in_torn_frames_raises_what_the_raw_log_does(demo_log: Path, tmp_path: Path) -> None:
    import zstandard

    raw = demo_log.read_bytes()
    lines = raw.splitlines(keepends=True)
    packed = tmp_path / "session.jsonl.zstd"
    compressor = zstandard.ZstdCompressor()
    packed.write_bytes(b"".join(compressor.compress(b"".join(lines[i : i + 40])) for i in range(0, len(lines), 40)))
    cfg = _eager()
    target_dir = tmp_path / "follow"
    target_dir.mkdir()
    cuts = list(range(0, packed.stat().st_size, 997))
    assert _key(_torn(packed, cfg, cuts, target_dir / "session.jsonl.zstd")) == _key(_whole(demo_log, cfg))


def test_a_log_replaced_under_the_follower_starts_its_alerts_afresh(demo_log: Path, tmp_path: Path) -> None:
    """The same log again raises nothing twice; another session in its place raises its own alerts. The new file
    is read as the first was: its lines noted, so the engine reads the surface back instead of keeping it."""
    target = tmp_path / "session.jsonl"
    shutil.copy(demo_log, target)
    cfg = _eager()
    watch = AlertWatch(target, cfg, live=False)
    first = _key(watch.poll(0))
    replacement = tmp_path / "new.jsonl"
    shutil.copy(demo_log, replacement)
    os.replace(replacement, target)
    assert _key(watch.poll(0)) == []
    head, rest = demo_log.read_bytes().split(b"\n", 1)
    header = json.loads(head)
    replacement.write_bytes(json.dumps({**header, "id": f"{header['id']}-other"}).encode() + b"\n" + rest)
    os.replace(replacement, target)
    assert _key(watch.poll(0)) == first
    events = len(demo_log.read_bytes().splitlines()) - 1
    assert watch.lines is not None and watch.engine.lines is watch.lines and len(watch.lines) == events


# the engine alone: random crafted sessions ------------------------------------------------------------------
ROUTE = {"turn": 1, "step": 1, "phase": "normal"}
GUARD = {"role": "user", "content": [{"type": "text", "text": "fold"}], "source": dict(GUARD_SOURCE)}


def _step(log: Log, kind: str, n: int) -> None:
    if kind == "fail":
        log.result(True)
    elif kind == "ok":
        log.result(False)
    elif kind == "call":
        log.call("read_file", f'{{"path": "f{n % 2}"}}')
    elif kind == "turn":
        log.turn(n)
    elif kind == "end":
        log.end(n)
    elif kind == "usage":
        log.usage(1, n % 3, miss=n * 7_000, hit=n * 5_000)
    elif kind == "route":
        log.add("tapedeck/route", {**ROUTE, "taskClass": "ab"[n % 2], "pressure": n / 10})
    elif kind == "state":
        log.add("tapedeck/state", {"state": ("running", "paused", "idle", "exited")[n % 4]})
    elif kind == "host":
        log.add("tapedeck/host", {})
    elif kind == "guard":
        log.add("user/message", GUARD, surfaceOp="append")
    elif kind == "ask":
        log.add("approval/asked", {"id": f"a{n % 2}"})
    elif kind == "decide":
        log.add("approval/decided", {"id": f"a{n % 2}"})
    elif kind == "quiet":
        log.add("step/start", {"turn": 1, "step": 1}, at=log.time + n * 60_000)


KINDS = ("fail", "ok", "call", "turn", "end", "usage", "route", "state", "host", "guard", "ask", "decide", "quiet")
SESSIONS = st.lists(st.tuples(st.sampled_from(KINDS), st.integers(min_value=0, max_value=9)), max_size=60)
ALL_ON: dict[str, Any] = {
    "errorStreak": {"count": 2}, "stalled": {"seconds": 30}, "context": {"percent": 50},
    "cacheBreak": {"tokens": 1}, "budget": {"usd": 0.5}, "runRate": {"usdPerHour": 5, "windowMinutes": 5},
    "loop": {"count": 2},
}  # fmt: skip


def _engine() -> AlertEngine:
    cfg = config(ALL_ON)
    e = AlertEngine(cfg.alerts, cfg.model)
    e.start(HEADER)
    return e


@settings(max_examples=200, deadline=None)
@given(steps=SESSIONS, ticks=st.lists(st.booleans(), max_size=60), states=st.lists(st.sampled_from(
    ("running", "paused", "exited", None)), max_size=60), reach=st.lists(st.booleans(), max_size=60))  # fmt: skip
def test_a_cause_never_fires_twice_without_clearing_in_between(
    steps: list[tuple[str, int]], ticks: list[bool], states: list[str | None], reach: list[bool]
) -> None:
    log, e = Log(), _engine()
    for i, (kind, n) in enumerate(steps):
        _step(log, kind, n)
        e.feed([log.events[-1]])
        if i < len(ticks) and ticks[i]:
            e.tick(log.time + n * 20_000, states[i] if i < len(states) else None)
        if i < len(reach):
            e.reachable(reach[i], log.time)
    raised: dict[str, bool] = {}
    for cause, up in e.transitions:
        assert raised.get(cause, False) != up, f"{cause} {'raised' if up else 'cleared'} twice in a row"
        raised[cause] = up
    assert [c for c, up in e.transitions if up] == [a.cause for a in e.fired]
    assert {c for c, up in raised.items() if up} == set(e.active)


@settings(max_examples=200, deadline=None)
@given(steps=SESSIONS, cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=10))
def test_feeding_events_in_any_batches_raises_the_same_alerts(steps: list[tuple[str, int]], cuts: list[int]) -> None:
    log = Log()
    for kind, n in steps:
        _step(log, kind, n)
    whole = _engine()
    whole.feed(log.events)
    batched = _engine()
    edges = [0, *sorted(c % (len(log.events) + 1) for c in cuts), len(log.events)]
    for lo, hi in zip(edges, edges[1:], strict=False):
        batched.feed(log.events[lo:hi])
    assert _key(batched.fired) == _key(whole.fired)
    assert set(batched.active) == set(whole.active)


def test_a_watch_takes_its_line_notes_in_as_it_reads(tmp_path: Path) -> None:
    """The lines the tailer notes go into the line table's columns after each slice: on a log whose surface is
    never cut the rules read nothing back, and the notes piled up as Python ints, several per line (alerts --json
    on 100 MB dsh-plain: 87 MiB peak, 63 MiB once taken in)."""
    from bench.gen_session import generate

    log = tmp_path / "session.jsonl"
    generate(log, 400_000, seed=3, profile="dsh-plain")
    watch = AlertWatch(log, _eager(), live=False)
    watch.poll(0)
    assert watch.lines is not None and watch.lines.pending() == 0


@pytest.mark.parametrize("value", [{"type": []}, [1, "a", None]])
def test_a_route_event_whose_turn_is_unhashable_is_read_as_its_stand_in(
    demo_log: Path, tmp_path: Path, value: Any
) -> None:
    """The request pass under the engine gets a flagged event's validated view, as every other pass does (the
    raw route data was filed under its (turn, step): TypeError in alerts and sessions before)."""
    lines = demo_log.read_bytes().rstrip(b"\n").split(b"\n")
    at = next(n for n, line in enumerate(lines) if n and json.loads(line)["type"] == "tapedeck/route")
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(mutate_lines(lines, Mutation(at, ("data", "turn"), "replace", value))) + b"\n")
    assert _key(_whole(path, _eager()))  # the other alerts of the log are still raised


def test_an_engine_that_projects_a_start_finds_the_breaks_after_it_that_feeding_it_finds(demo_log: Path) -> None:
    """``AlertEngine.project`` (a start read again for the projection alone, its signals given back after) leaves
    the cache-break rule's projection and the seq where ``feed`` leaves them: each request after the start breaks
    the cache as it does for an engine fed all along. Packed rows are handed over as rows, as the TUI's view does."""
    from core.log.decoder import Consumer
    from core.log.reader import read_log_header
    from core.log.tail import Tailer

    cfg = _eager()
    for path in _logs(demo_log):
        items = Tailer(path, consumer=Consumer(packed_rows=True)).poll().events
        header = read_log_header(path)
        breaks = []
        for cut in sorted({0, 1, len(items) // 3, len(items) // 2, len(items) - 1, len(items)}):
            fed, projected = (AlertEngine(cfg.alerts, cfg.model) for _ in range(2))
            for engine in (fed, projected):
                engine.start(header)
            fed.feed(items[:cut], 0)
            projected.project(items[:cut])
            assert projected.signals.seq == fed.signals.seq, (path.name, cut)
            projected.signals = copy.deepcopy(fed.signals)  # given back, as ``FedWatch._rebuild`` does
            seen = []
            for item in items[cut:]:
                fed.feed([item], 0)
                projected.feed([item], 0)
                seen.append(fed.signals.cache_break)
                assert projected.signals.cache_break == fed.signals.cache_break, (path.name, cut, item)
            breaks.extend(b for b in seen if b is not None and b.cause)
        assert breaks or path != demo_log  # the demo log's requests do break the cache
