"""Time-travel latency on a big log, the way the TUI holds it.

In one run, on the generated log ``bench/tui.py`` uses (profile ``mixed``, seed 1, default 200 MB raw):

- ``load_s``: the TUI's loader (``tui.live.LiveSession``, no follow) indexes and projects the log;
- ``sync_s``: ``TimeTravel.sync`` builds the surface timeline and finds every request (first time);
- ``seq_to_surface_ms``: p50 / p95 / max of ``TimeTravel.sync().stop_at(seq)`` for uniformly random seqs: the surface
  after that seq plus its turn and step, which is what one time-travel key press computes before drawing;
- ``request_ms``: p50 / p95 / max of ``TimeTravel.sync().request(i)`` (the rebuilt request and its diff) for random
  requests;
- ``baseline_replay_s``: the same surfaces obtained without checkpoints, by projecting the log from seq 0 up to
  the seq (mean of a few random seqs), and the ratio of the p95 lookup to it;
- ``moment_us``: p50 / p95 of a moment as time travel builds it (``SessionAt``, its step, the replacement of the 40
  seqs before it) through the timeline's turn index and the session's maps, and of the same by the linear scans
  they replaced (``tests/timetravel/test_moment_index.py``, the oracle of the equality test), with
  ``linear_vs_indexed``, the ratio of their total times.

Usage: ``python bench/timetravel.py [--size 200MB] [--seed 1] [--dir /tmp] [--samples 200] [--replays 3] [--json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import counts, emit, markdown_table, peak_rss, percentile  # noqa: E402
from bench.gen_session import generate, parse_size  # noqa: E402
from core.read.load import load_session  # noqa: E402
from core.read.session import Session  # noqa: E402
from core.read.timetravel import SessionAt, SurfaceTimeline, moment  # noqa: E402
from tests.timetravel.test_moment_index import linear_replaced_by, linear_step, linear_turns  # noqa: E402
from tui.live import LiveSession  # noqa: E402
from tui.travel import TimeTravel  # noqa: E402


def timed(fn: Callable[[int], object], args: list[int]) -> list[float]:
    """Seconds each ``fn(arg)`` took."""
    times = []
    for arg in args:
        t0 = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - t0)
    return times


def spread(values: list[float]) -> dict[str, float]:
    """p50, p95 and max in milliseconds."""
    return {k: round(v * 1000, 2) for k, v in
            (("p50", percentile(values, 0.5)), ("p95", percentile(values, 0.95)), ("max", max(values)))}  # fmt: skip


def replay_to(path: Path, seq: int) -> list[int]:
    """The surface after ``seq`` without checkpoints: project the log from the start, stopping once past it."""
    surface: list[int] = []

    def reached(session: Session, _item: object) -> None:
        if session.next_seq > seq:
            surface.extend(session.surface)
            raise _Reached

    with contextlib.suppress(_Reached):
        load_session(path, retain=False, observe=reached)
    return surface


NEARBY = 40  # the seqs around a moment whose replacement is looked up (about a screen of rows)


def indexed_moment(session: Session, timeline: SurfaceTimeline, seq: int, headers: Sequence[int]) -> object:
    """A moment as time travel builds it (``SessionAt``: surface, turns, open turn), its step (``moment``) and the
    replacement of the seqs before it; answered through the timeline's turn index and the session's maps."""
    view = SessionAt(session, timeline, seq, headers)
    nearby = [view.replaced_by.get(s) for s in range(max(0, seq - NEARBY), seq)]
    return view.open_turn, moment(session, seq, timeline.turns).step, nearby


def linear_moment(session: Session, timeline: SurfaceTimeline, seq: int) -> object:
    """The same by the linear scans ``SessionAt`` and ``moment`` made before the index: the same surface, every turn
    and its steps, every replacement, the turn's steps."""
    timeline.surface_at(seq)
    replaced = linear_replaced_by(session, seq)
    nearby = [replaced.get(s) for s in range(max(0, seq - NEARBY), seq)]
    return linear_turns(session, seq)[1], linear_step(session, seq), nearby


class _Reached(Exception):
    """Stops the projection of ``replay_to`` at its seq."""


def run(size: int, seed: int, directory: Path, samples: int, replays: int) -> dict[str, Any]:
    """Every measurement, in one run on one generated log."""
    log = directory / f"tui-mixed-{size}-s{seed}.jsonl"
    if not log.exists():
        directory.mkdir(parents=True, exist_ok=True)
        generate(log, size, seed=seed, profile="mixed")
    result: dict[str, Any] = {"log": str(log), "log_bytes": log.stat().st_size}

    t0 = time.perf_counter()
    live = LiveSession(log, follow=False)
    live.run()
    result["load_s"] = round(time.perf_counter() - t0, 2)
    session = live.session
    result["events"] = session.next_seq

    travel = TimeTravel(live)
    t0 = time.perf_counter()
    moments = travel.sync()
    result["sync_s"] = round(time.perf_counter() - t0, 2)
    result["surface_edits"] = moments.timeline.edits
    result["requests"] = len(moments.points)

    rng = random.Random(seed)
    seqs = [rng.randrange(session.next_seq) for _ in range(samples)]
    result["seq_to_surface_ms"] = spread(timed(lambda seq: travel.sync().stop_at(seq), seqs))

    picks = [rng.randrange(len(moments.points)) for _ in range(min(samples, 50))]
    result["request_ms"] = spread(timed(lambda index: travel.sync().request(index), picks))

    headers = moments.marks["request/header"]
    indexed = timed(lambda seq: indexed_moment(session, moments.timeline, seq, headers), seqs)
    linear = timed(lambda seq: linear_moment(session, moments.timeline, seq), seqs)
    timeline = moments.timeline
    agree = all(indexed_moment(session, timeline, seq, headers) == linear_moment(session, timeline, seq) for seq in seqs)
    assert agree, "the indexes disagree with the linear scans"
    result["moment_us"] = {
        name: {"p50": round(percentile(t, 0.5) * 1e6, 1), "p95": round(percentile(t, 0.95) * 1e6, 1)}
        for name, t in (("indexed", indexed), ("linear", linear))
    }
    result["linear_vs_indexed"] = round(sum(linear) / sum(indexed), 1)

    replay_s = []
    for seq in seqs[:replays]:
        t0 = time.perf_counter()
        surface = replay_to(log, seq)
        replay_s.append(time.perf_counter() - t0)
        assert surface == moments.timeline.surface_at(seq), f"timeline disagrees with a replay at seq {seq}"
    result["baseline_replay_s"] = round(sum(replay_s) / len(replay_s), 2)
    result["p95_vs_replay"] = round(result["seq_to_surface_ms"]["p95"] / 1000 / result["baseline_replay_s"], 5)
    result["peak_rss_bytes"] = peak_rss()
    return result


def table(r: dict[str, Any]) -> str:
    """The short table."""
    s, q, m = r["seq_to_surface_ms"], r["request_ms"], r["moment_us"]
    return markdown_table(
        ["what", "value"],
        [
            ["log", f"{r['log_bytes'] / 1e6:.0f} MB, {r['events']} events, {r['requests']} requests"],
            ["TUI load (index + projection)", f"{r['load_s']} s"],
            ["first sync (timeline + request points)", f"{r['sync_s']} s, {r['surface_edits']} surface edits"],
            ["seq → surface p50 / p95 / max", f"{s['p50']} / {s['p95']} / {s['max']} ms"],
            ["request + diff p50 / p95 / max", f"{q['p50']} / {q['p95']} / {q['max']} ms"],
            ["baseline: replay from seq 0", f"{r['baseline_replay_s']} s (p95 lookup = {r['p95_vs_replay']}×)"],
            [
                "moment p50 / p95: indexed, linear scans",
                f"{m['indexed']['p50']} / {m['indexed']['p95']} µs, {m['linear']['p50']} / {m['linear']['p95']} µs"
                f" (linear / indexed = {r['linear_vs_indexed']}×)",
            ],
        ],
    )


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="200MB", help="size of the generated log (default 200MB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", default="/tmp", help="where the generated log goes (default /tmp)")
    parser.add_argument("--samples", type=counts(1), default=200, help="random seqs to look up")
    parser.add_argument("--replays", type=counts(1), default=3, help="baseline replays from seq 0 (each costs a projection)")
    parser.add_argument("--json", action="store_true", help="print the JSON result only")
    args = parser.parse_args(argv)
    result = run(parse_size(args.size), args.seed, Path(args.dir), args.samples, args.replays)
    emit(result, table(result), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
