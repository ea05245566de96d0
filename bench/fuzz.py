"""Mutation fuzz of every log reader: N logs with one JSON value of one event changed to another type.

    python bench/fuzz.py [--cases 20000] [--seconds S] [--seed N] [--json]

Each case takes a real DSH fixture (``tests/fixtures/dsh``) or a small generated log, applies one mutation from
``bench/mutation.py`` and runs what reads logs: ``inspect --json``, ``surface --json`` and ``events`` through
``core.cli.main`` (in process), then every event read back from the file and summarized (as the TUI shows a
big log) and the tail preview. A crash is an exception out of any of them, an exit code other than 0 or 2, or a
traceback on stderr; crashes are grouped by the innermost frame that raised. The suite runs the same fuzz
under Hypothesis (``tests/log/test_reader_fuzz.py``); this is the long run.

It also measures what the boundary validation costs: ``core.log.validate.problem`` over every event of a
generated log, against the ``orjson.loads`` of the same lines, in the same invocation.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import best_of, emit, markdown_table  # noqa: E402
from bench.gen_session import generate  # noqa: E402
from bench.mutation import mutate_lines, random_mutation  # noqa: E402
from core.cli import main as cli_main  # noqa: E402
from core.log.tail import tail_events  # noqa: E402
from core.log.validate import problem  # noqa: E402
from core.read.load import load_session  # noqa: E402
from core.read.summary import summarize  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "dsh"
PROFILES = ("mixed", "test-fix", "short-turns")
COMMANDS = (("inspect", "--json"), ("surface", "--json"), ("events",))
READER_CODES = ("bad-event", "bad-row", "no-type", "bad-json")


def _site(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = Path(frame.filename)
    short = where.relative_to(FIXTURES.parents[2]) if where.is_relative_to(FIXTURES.parents[2]) else where
    return f"{type(exc).__name__} at {short}:{frame.lineno}"


def _cli(argv: list[str]) -> tuple[str | None, str]:
    """Run one command: the crash site (or None) and its stdout."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli_main(argv)
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 2
    except Exception as exc:  # noqa: BLE001 - a crash is what this counts
        return _site(exc), ""
    if rc not in (0, 2, None):
        return f"exit {rc} from {argv[0]}", ""
    if "Traceback" in err.getvalue():
        return f"traceback on stderr from {argv[0]}", ""
    return None, out.getvalue() if rc in (0, None) else ""


def _readers(path: Path) -> tuple[str | None, set[str]]:
    """Run every reader over ``path``: the first crash site (or None) and the reader diagnostics inspect listed."""
    codes: set[str] = set()
    for command in COMMANDS:
        crash, out = _cli([command[0], str(path), *command[1:]])
        if crash:
            return crash, codes
        if command[0] == "inspect" and out:
            codes = {d["code"] for d in orjson.loads(out)["diagnostics"]} & set(READER_CODES)
        elif command[0] == "inspect":
            return None, codes  # exit 2: the header itself is unusable, and every reader says so in one line
    try:
        store = load_session(path, retain=False, readback=True).events
        for n in range(len(store)):
            summarize(store[n])
        for event in tail_events(path, 50):
            summarize(event)
    except Exception as exc:  # noqa: BLE001 - a LogFormatError is exit 2 above; anything else is a crash
        return _site(exc), codes
    return None, codes


def _sources(workdir: Path, seed: int) -> list[tuple[str, list[bytes]]]:
    logs = [p for p in sorted(FIXTURES.glob("*.jsonl")) if "expected" not in p.name]
    for profile in PROFILES:
        target = workdir / f"gen-{profile}.jsonl"
        generate(target, 30_000, seed=seed, profile=profile)
        logs.append(target)
    return [(p.name, p.read_bytes().rstrip(b"\n").split(b"\n")) for p in logs]


def validation_cost(workdir: Path, seed: int) -> dict[str, float]:
    """Seconds to validate every event of a generated log against parsing its lines, best of three."""
    path = workdir / "cost.jsonl"
    generate(path, 8_000_000, seed=seed, profile="mixed")
    lines = [line for line in path.read_bytes().split(b"\n")[1:] if line]
    events = [orjson.loads(line) for line in lines]
    parse, _ = best_of(lambda: [orjson.loads(line) for line in lines])
    check, _ = best_of(lambda: [problem(event) for event in events])
    return {"lines": len(lines), "parse_s": parse, "validate_s": check, "validate_over_parse": check / parse}


def run(cases: int, seconds: float, seed: int) -> dict[str, object]:
    """Fuzz up to ``cases`` mutated logs (or until ``seconds`` ran out); the result as plain data."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="tapedeck-fuzz-") as tmp:
        workdir = Path(tmp)
        sources = _sources(workdir, seed)
        cost = validation_cost(workdir, seed)
        crashes: Counter[str] = Counter()
        examples: dict[str, str] = {}
        reported: Counter[str] = Counter()
        done = 0
        start = time.perf_counter()
        while done < cases and time.perf_counter() - start < seconds:
            name, lines = rng.choice(sources)
            mutation = random_mutation(lines, rng)
            case = workdir / "case" / "session.jsonl"
            case.parent.mkdir(exist_ok=True)
            case.write_bytes(b"\n".join(mutate_lines(lines, mutation)) + b"\n")
            crash, codes = _readers(case)
            done += 1
            reported.update(codes)
            if crash:
                crashes[crash] += 1
                examples.setdefault(crash, f"{name}: {mutation}")
        elapsed = time.perf_counter() - start
    return {
        "cases": done,
        "seconds": round(elapsed, 1),
        "cases_per_second": round(done / elapsed, 1) if elapsed else 0.0,
        "crashes": sum(crashes.values()),
        "distinct_sites": len(crashes),
        "sites": [{"site": s, "count": n, "example": examples[s]} for s, n in crashes.most_common()],
        "cases_with_diagnostic": dict(reported),
        "sources": len(sources),
        "validation": cost,
    }


def table(result: dict[str, object]) -> str:
    """The markdown summary of a run."""
    cost = result["validation"]
    assert isinstance(cost, dict)
    rows = [
        ["mutated logs", result["cases"]],
        ["crashes", f"{result['crashes']} ({result['distinct_sites']} distinct sites)"],
        ["cases/s", result["cases_per_second"]],
        ["cases reporting bad-event / bad-row / no-type", " / ".join(
            str(result["cases_with_diagnostic"].get(c, 0)) for c in ("bad-event", "bad-row", "no-type")  # type: ignore[union-attr]
        )],
        ["validate vs parse (same lines)", f"{cost['validate_s'] * 1e3:.1f} ms vs {cost['parse_s'] * 1e3:.1f} ms "
                                           f"({cost['validate_over_parse']:.2f}x) over {cost['lines']} lines"],
    ]  # fmt: skip
    out = markdown_table(["what", "value"], rows)
    for site in result["sites"]:  # type: ignore[attr-defined]
        out += f"\n- {site['count']}x {site['site']} (e.g. {site['example']})"
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the fuzz; exit 1 when any reader crashed."""
    parser = argparse.ArgumentParser(description="Mutation-fuzz every DSH log reader.")
    parser.add_argument("--cases", type=int, default=20_000, help="mutated logs to try (default 20000)")
    parser.add_argument("--seconds", type=float, default=float("inf"), help="stop after this long")
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--json", action="store_true", help="print the JSON result only")
    args = parser.parse_args(argv)
    result = run(args.cases, args.seconds, args.seed)
    emit(result, table(result), args.json)
    return 1 if result["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
