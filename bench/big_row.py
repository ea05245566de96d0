"""``events`` on a log whose one packed row has a million members: peak RSS of the command, as text and as JSON.

The log is a turn whose one step streams ``--members`` short text deltas in one ``text-chunks`` row (12.9 MB for a
million). Each command runs in a fresh process (``bench.cli.run``: its own ``VmHWM``, CPU seconds of user + system),
``--repeat`` times; the highest peak is reported. Target: peak RSS <= 200 MB.

Usage: ``nice python bench/big_row.py [--members 1000000] [--repeat 1]``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402

from bench._common import compile_package, counts, emit, human_bytes, markdown_table  # noqa: E402
from bench.cli import CONSOLE, run  # noqa: E402

TARGET = 200 << 20


def write_log(path: Path, members: int) -> None:
    """A turn whose one step streams ``members`` text deltas in one packed row."""
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 0, "id": "big-row", "createdAt": 1, "cwd": "/w", "delegationDepth": 0},
        {"type": "turn/start", "seq": 0, "time": 1000, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 1000, "data": {"turn": 1, "step": 1}},
        {"type": "text-chunks", "seq0": 2, "time0": 1001, "data": {"turn": 1, "step": 1, "index": 0,
         "texts": [f"w{k} " for k in range(members)], "dt": [k % 7 for k in range(members - 1)]}},
        {"type": "step/end", "seq": members + 2, "time": 10**7, "data": {"turn": 1, "step": 1}},
    ]  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=counts(1), default=1_000_000)
    parser.add_argument("--repeat", type=counts(1), default=1)
    parser.add_argument("--json", action="store_true", help="print only the JSON")
    args = parser.parse_args(argv)
    compile_package()
    work = Path(tempfile.mkdtemp(prefix="tapedeck-big-row-"))
    try:
        log = work / "session.jsonl"
        write_log(log, args.members)
        results = []
        for flags in ([], ["--json"]):
            runs = [run(CONSOLE, ["events", str(log), *flags]) for _ in range(args.repeat)]
            results.append({"command": " ".join(["events", *flags]), "logBytes": log.stat().st_size,
                            "members": args.members, "peakBytes": max(r.peak for r in runs),
                            "cpuSeconds": min(r.cpu for r in runs), "wallSeconds": min(r.s for r in runs)})  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [[r["command"], f"{r['members']:,}", human_bytes(r["logBytes"]), human_bytes(r["peakBytes"]),
             "yes" if r["peakBytes"] <= TARGET else "NO", f"{r['cpuSeconds']:.2f}", f"{r['wallSeconds']:.2f}"]
            for r in results]  # fmt: skip
    table = markdown_table(["command", "members", "log", "peak RSS", "≤ 200 MB", "CPU s", "wall s"], rows)
    emit({"results": results}, table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
