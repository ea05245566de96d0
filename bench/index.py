"""Engine benchmark: the full offset index and the tail-first read over a large generated DSH log.

Each ratio is measured against its baseline in the same run (best of ``--repeat`` runs, ``time.perf_counter``):

- full index time / a bare ``for line in f: orjson.loads(line)`` over the same file (through a multi-frame
  zstd reader for ``.zstd`` logs) -- target <= 1.0;
- tail-first time (the last 200 events decoded and ready) / full index time -- target <= 0.1;
- index bytes per event (``OffsetIndex.nbytes / len``) -- target <= 24;
- peak RSS of a fresh process that only builds the index (``wait4``) -- target <= 150 MB.

The log is generated into ``bench/out/`` (git-ignored) on first use.
Usage: ``python bench/index.py [--size 200MB] [--profile mixed] [--seed 1] [--zstd] [--log PATH] [--json]``.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402
import zstandard  # noqa: E402

from bench._common import (  # noqa: E402
    ChildError,
    best_of,
    current_rss,
    emit,
    human_bytes,
    markdown_table,
    peak_rss,
    run_child,
)
from bench.gen_session import PROFILES, generate, parse_size  # noqa: E402
from core.log.index import build_index, tail_events  # noqa: E402
from core.shared.errors import TapedeckError  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent / "out"
TARGETS = {"index_ratio": 1.0, "tail_ratio": 0.1, "bytes_per_event": 24.0, "peak_rss_bytes": 150_000_000}


def baseline_parse(path: Path) -> int:
    """The bare loop the index is compared with: parse every line of the file with orjson."""
    count = 0
    with open(path, "rb") as f:
        if path.name.endswith(".zstd"):
            reader = zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True)
            lines: Any = io.BufferedReader(reader, buffer_size=1 << 20)
        else:
            lines = f
        for line in lines:
            orjson.loads(line)
            count += 1
    return count


def default_log(size: int, profile: str, seed: int, zstd: bool) -> Path:
    """Where the generated benchmark log lives."""
    label = f"{size // 10**6}MB" if size % 10**6 == 0 else f"{size}B"
    return OUT_DIR / f"{profile}-{label}-s{seed}.jsonl{'.zstd' if zstd else ''}"


def ensure_log(args: argparse.Namespace) -> tuple[Path, dict[str, Any] | None]:
    """The log to measure (generated when missing) and the generator's summary when one was saved."""
    if args.log:
        log = Path(args.log)
        if not log.is_file():
            raise FileNotFoundError(f"no such log file: {log}")
    else:
        log = default_log(args.size, args.profile, args.seed, args.zstd)
    summary_path = Path(f"{log}.gen.json")
    if not log.exists():
        print(f"generating {log} ({human_bytes(args.size)}, profile {args.profile}) ...", file=sys.stderr)
        stats = generate(log, args.size, seed=args.seed, profile=args.profile, zstd=args.zstd)
        summary_path.write_text(json.dumps(stats.summary(), indent=2))
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else None
    return log, summary


def child_index(path: str) -> int:
    """Child mode: build the index and report its size (the parent records this process's peak RSS)."""
    before = current_rss()
    try:
        index = build_index(path)
    except (TapedeckError, OSError) as exc:
        print(exc, file=sys.stderr)
        return 2
    print(
        json.dumps(
            {"events": len(index), "nbytes": index.nbytes, "rss_before": before, "peak_rss": peak_rss()}
        )
    )
    return 0


def measure(log: Path, repeat: int, tail_n: int, summary: dict[str, Any] | None) -> dict[str, Any]:
    """Run every measurement and check the results against each other."""
    # The memory child runs first, while this process is still small (see run_child).
    run = run_child([sys.executable, str(Path(__file__).resolve()), "--child-index", str(log)])
    child = run.json()
    base_s, lines = best_of(lambda: baseline_parse(log), repeat)
    index_s, index = best_of(lambda: build_index(log), repeat)
    tail_s, tail = best_of(lambda: tail_events(log, tail_n), repeat)
    events = len(index)
    expected_tail = list(range(max(0, events - tail_n), events))
    checks = {
        "tail_seqs_are_the_last": [e.get("seq") for e in tail] == expected_tail,
        "tail_matches_index": bool(tail) and index.event(events - 1) == tail[-1],
        "first_event_seq0": events > 0 and index.event(0).get("seq") == 0,
    }
    if summary is not None:
        checks["event_count_matches_generator"] = summary.get("events") == events
    checks["child_event_count_matches"] = child["events"] == events
    nbytes = index.nbytes
    result: dict[str, Any] = {
        "log": str(log),
        "file_bytes": log.stat().st_size,
        "logical_bytes": summary.get("logical_bytes") if summary else None,
        "lines": lines,
        "events": events,
        "repeat": repeat,
        "baseline_parse_s": round(base_s, 4),
        "index_s": round(index_s, 4),
        "tail_events": tail_n,
        "tail_s": round(tail_s, 5),
        "index_ratio": round(index_s / base_s, 3),
        "tail_ratio": round(tail_s / index_s, 4),
        "index_nbytes": nbytes,
        "bytes_per_event": round(nbytes / events, 2) if events else None,
        "peak_rss_bytes": child["peak_rss"],
        "peak_rss_wait4_bytes": run.peak_rss,
        "child_rss_before_index_bytes": child["rss_before"],
        "checks": checks,
        "targets": TARGETS,
    }
    result["pass"] = {key: result[key] is not None and result[key] <= limit for key, limit in TARGETS.items()}
    return result


def table(r: dict[str, Any]) -> str:
    """The short markdown summary."""

    def ok(key: str) -> str:
        return "yes" if r["pass"][key] else "**no**"

    rows = [
        [
            "full index time",
            f"{r['index_s']:.3f} s",
            f"{r['baseline_parse_s']:.3f} s (orjson line loop)",
            r["index_ratio"],
            "<= 1.0",
            ok("index_ratio"),
        ],
        [
            f"tail-first (last {r['tail_events']})",
            f"{r['tail_s'] * 1000:.1f} ms",
            f"{r['index_s']:.3f} s (full index)",
            r["tail_ratio"],
            "<= 0.1",
            ok("tail_ratio"),
        ],
        ["index bytes per event", r["bytes_per_event"], "-", "-", "<= 24", ok("bytes_per_event")],
        [
            "peak RSS (index build, fresh process)",
            human_bytes(r["peak_rss_bytes"]),
            "-",
            "-",
            "<= 150 MB",
            ok("peak_rss_bytes"),
        ],
    ]
    head = (
        f"{r['log']}: {human_bytes(r['file_bytes'])} on disk, {r['lines']:,} lines, {r['events']:,} events, "
        f"best of {r['repeat']}"
    )
    return (
        head
        + "\n\n"
        + markdown_table(["metric", "value", "baseline (same run)", "ratio", "target", "ok"], rows)
    )


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description="Benchmark the offset index over a large generated DSH log.")
    parser.add_argument("--size", default="200MB", help="generated log size (decompressed), default 200MB")
    parser.add_argument("--profile", choices=list(PROFILES), default="mixed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--zstd", action="store_true", help="benchmark a zstd log instead of raw JSONL")
    parser.add_argument("--log", help="measure this existing log instead of a generated one")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per measurement; the best counts (default 3)"
    )
    parser.add_argument("--tail", type=int, default=200, help="events the tail-first read must deliver")
    parser.add_argument("--json", action="store_true", help="print only the JSON result")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when a target or a consistency check fails"
    )
    parser.add_argument("--child-index", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_index:
        return child_index(args.child_index)
    try:
        args.size = parse_size(args.size)
    except ValueError as exc:
        parser.error(str(exc))
    if args.repeat < 1 or args.tail < 1:
        parser.error("--repeat and --tail must be at least 1")
    try:
        log, summary = ensure_log(args)
        result = measure(log, args.repeat, args.tail, summary)
    except (TapedeckError, OSError, ChildError) as exc:
        print(f"index bench: {exc}", file=sys.stderr)
        return 2
    emit(result, table(result), args.json)
    failed = not all(result["pass"].values()) or not all(result["checks"].values())
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
