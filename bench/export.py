"""Export benchmark: ``tapedeck export`` against ``tapedeck inspect --json`` on the same generated log, same run.

Each command runs in a fresh process (``bench.cli.run``: wall time, CPU time and the child's own peak RSS),
alternating, best of ``--repeat``. Exports go to a file, so redaction is on (as a user's ``-o FILE`` export), in each
format. Targets: export time <= 3x ``inspect --json``, peak RSS <= 200 MB. The target is on wall time; the CPU time
ratio is given beside it, since on a shared, loaded machine wall times swing with the load and CPU times far less.
A big log's export runs in two processes (``core.export.split``): its CPU time counts both, its peak RSS is the
first's. ``--one-process`` also runs each export with ``TAPEDECK_EXPORT_JOBS=1`` (rows marked so, not judged).

Usage: ``python bench/export.py [--size 100MB] [--profile mixed] [--out DIR] [--repeat 2] [--one-process] [--json]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import counts, emit, human_bytes, markdown_table  # noqa: E402
from bench.cli import CONSOLE, RSS_TARGET, ensure_log, run  # noqa: E402
from bench.gen_session import PROFILES, parse_size  # noqa: E402

TIME_TARGET = 3.0
FORMATS = ("html", "md", "json")
ONE = "1 process: "  # an export run with TAPEDECK_EXPORT_JOBS=1


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print JSON plus a table; exit 1 when a target is missed."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="100MB", help="log size to generate (e.g. 20MB, 100MB)")
    ap.add_argument("--profile", default="mixed", choices=sorted(PROFILES))
    ap.add_argument("--out", default="bench/out", help="where generated logs are kept")
    ap.add_argument("--repeat", type=counts(1), default=2)
    ap.add_argument("--one-process", action="store_true", help="also each export in one process, for comparison")
    ap.add_argument("--json", action="store_true", help="print only JSON")
    args = ap.parse_args(argv)
    log = ensure_log(Path(args.out), parse_size(args.size), args.profile, seed=1, zstd=False)
    with tempfile.TemporaryDirectory() as tmp:
        commands: dict[str, tuple[list[str], dict[str, str]]] = {"inspect --json": (["inspect", str(log), "--json"], {})}
        for fmt in FORMATS:
            argv_ = ["export", str(log), "--format", fmt, "-o", f"{tmp}/x.{fmt}"]
            commands[f"export --format {fmt} -o FILE"] = (argv_, {})
            if args.one_process:
                commands[f"{ONE}export --format {fmt} -o FILE"] = (argv_, {"TAPEDECK_EXPORT_JOBS": "1"})
        best: dict[str, tuple[float, float, int]] = {}
        for _ in range(args.repeat):
            for name, (argv_, env) in commands.items():
                r = run(CONSOLE, argv_, env=env)
                s, cpu, peak = best.get(name, (float("inf"), float("inf"), 0))
                best[name] = (min(s, r.s), min(cpu, r.cpu), max(peak, r.peak))
    base, base_cpu = best["inspect --json"][:2]
    rows = []
    result: dict[str, object] = {"log": str(log), "bytes": log.stat().st_size, "load": os.getloadavg()[0], "commands": {}}
    ok = True
    for name, (s, cpu, peak) in best.items():
        ratio = s / base
        fine = peak <= RSS_TARGET and (name.startswith(("inspect", ONE)) or ratio <= TIME_TARGET)
        ok &= fine or name.startswith(ONE)
        result["commands"][name] = {"seconds": round(s, 3), "ratio": round(ratio, 2), "cpuSeconds": round(cpu, 3),  # type: ignore[index]
                                    "cpuRatio": round(cpu / base_cpu, 2), "peakBytes": peak}  # fmt: skip
        rows.append([name, f"{s:.2f} s", f"{ratio:.2f}x", f"{cpu:.2f} s", f"{cpu / base_cpu:.2f}x", human_bytes(peak),
                     "ok" if fine else "MISSED"])  # fmt: skip
    table = markdown_table(["command", "best time", "vs inspect --json", "CPU", "CPU vs inspect", "peak RSS", "target"],
                           rows)  # fmt: skip
    emit(result, f"{human_bytes(log.stat().st_size)} {args.profile} log, load {result['load']:.1f}\n\n{table}", args.json)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
