"""Mutation fuzz of every log reader: N logs with one JSON value of one event changed to another type.

    python bench/fuzz.py [--cases 20000] [--seconds S] [--seed N] [--json]

Each case takes a real DSH fixture (``tests/fixtures/dsh``) or a small generated log, applies one mutation from
``bench/mutation.py`` and runs what reads logs: ``inspect --json``, ``surface --json`` and ``events`` through
``core.cli.main`` (in process), then every event read back from the file and summarized (as the TUI shows a
big log), the tail preview, the policy screens' derivations and what the main screen derives from the raw
events (``view_crash``). A crash is an exception out of any of them, an exit code other than 0 or 2, or a
traceback on stderr; crashes are grouped by the innermost frame that raised. The suite runs the same fuzz
under Hypothesis (``tests/log/test_reader_fuzz.py``); this is the long run.

It also measures what the boundary validation costs: ``core.log.validate.problem`` over every event of a
generated log, against the ``orjson.loads`` of the same lines, in the same invocation.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import best_of, counts, emit, markdown_table, positive  # noqa: E402
from bench.gen_session import generate  # noqa: E402
from bench.mutation import mutate_lines, random_mutation  # noqa: E402
from bench.readers import (  # noqa: E402
    READER_COMMANDS,
    argv_for,
    cli_crash,
    host_log,
    screen_crash,
    site,
    tui_crash,
    view_crash,
)
from core.log.tail import tail_events  # noqa: E402
from core.log.validate import problem  # noqa: E402
from core.read.load import load_session  # noqa: E402
from core.read.summary import summarize  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "dsh"
PROFILES = ("mixed", "test-fix", "short-turns")
READER_CODES = ("bad-event", "bad-row", "no-type", "bad-json")


def _readers(path: Path, commands: list[tuple[str, ...]]) -> tuple[str | None, set[str]]:
    """Run ``inspect --json``, then ``commands``, then the read-back store over ``path``: the first crash site
    (or None) and the reader diagnostics inspect listed."""
    crash, out, _ = cli_crash(["inspect", str(path), "--json"])
    if crash:
        return crash, set()
    if not out:
        return None, set()  # exit 2: the header itself is unusable, and every reader says so in one line
    codes = {d["code"] for d in orjson.loads(out)["diagnostics"]} & set(READER_CODES)
    for command in commands:
        crash, _, _ = cli_crash(argv_for(command, path))
        if crash:
            return crash, codes
    try:
        store = load_session(path, retain=False, readback=True).events
        for n in range(len(store)):
            summarize(store.raw(n))  # as the TUI lists it
            summarize(store[n])
        for event in tail_events(path, 50):
            summarize(event)
    except Exception as exc:  # noqa: BLE001 - a LogFormatError is exit 2 above; anything else is a crash
        return site(exc), codes
    return None, codes


def _sources(workdir: Path, seed: int) -> list[tuple[str, list[bytes]]]:
    logs = [p for p in sorted(FIXTURES.glob("*.jsonl")) if "expected" not in p.name]
    for profile in PROFILES:
        target = workdir / f"gen-{profile}.jsonl"
        generate(target, 30_000, seed=seed, profile=profile)
        logs.append(target)
    logs.append(host_log(workdir / "host"))
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


def run(cases: int, seconds: float, seed: int, per_case: int = 3, tui: int = 0) -> dict[str, object]:
    """Fuzz up to ``cases`` mutated logs (or until ``seconds`` ran out), each with ``inspect`` and ``per_case``
    commands drawn from every log-reading command, the first ``tui`` of them in the TUI too; the result as
    plain data."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="tapedeck-fuzz-") as tmp:
        workdir = Path(tmp)
        sources = _sources(workdir, seed)
        cost = validation_cost(workdir, seed)
        crashes: Counter[str] = Counter()
        examples: dict[str, str] = {}
        reported: Counter[str] = Counter()
        ran: Counter[str] = Counter()
        done = tui_done = 0
        start = time.perf_counter()
        while done < cases and time.perf_counter() - start < seconds:
            name, lines = rng.choice(sources)
            mutation = random_mutation(lines, rng)
            case = workdir / "case" / "session.jsonl"
            case.parent.mkdir(exist_ok=True)
            case.write_bytes(b"\n".join(mutate_lines(lines, mutation)) + b"\n")
            commands = rng.sample(READER_COMMANDS, per_case)
            ran.update(" ".join(c for c in command if not c.startswith("{")) for command in commands)
            crash, codes = _readers(case, commands)
            crash = crash or screen_crash(case) or view_crash(case, (mutation.line - 1,) if mutation.line else ())
            if crash is None and tui_done < tui:
                crash = asyncio.run(tui_crash(case))
                tui_done += 1
            done += 1
            reported.update(codes)
            if crash:
                crashes[crash] += 1
                examples.setdefault(crash, f"{name}: {mutation}")
        elapsed = time.perf_counter() - start
    return {
        "cases": done,
        "tui_cases": tui_done,
        "commands": len(READER_COMMANDS),
        "least_run_command": min(ran.values()) if len(ran) == len(READER_COMMANDS) else 0,
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
        ["of them also opened in the TUI, every screen key", result["tui_cases"]],
        ["log-reading commands (each one run at least)", f"{result['commands']} ({result['least_run_command']}x)"],
        ["crashes", f"{result['crashes']} ({result['distinct_sites']} distinct sites)"],
        ["cases/s", result["cases_per_second"]],
        ["cases reporting bad-event / bad-row / no-type", " / ".join(
            str(result["cases_with_diagnostic"].get(c, 0)) for c in ("bad-event", "bad-row", "no-type")  # type: ignore[union-attr]
        )],
        ["validate vs parse (same lines)", f"{cost['validate_s'] * 1e3:.1f} ms vs {cost['parse_s'] * 1e3:.1f} ms "
                                           f"({cost['validate_over_parse']:.2f}x) over {cost['lines']} lines"],
    ]  # fmt: skip
    out = markdown_table(["what", "value"], rows)
    for found in result["sites"]:  # type: ignore[attr-defined]
        out += f"\n- {found['count']}x {found['site']} (e.g. {found['example']})"
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the fuzz; exit 1 when any reader crashed."""
    parser = argparse.ArgumentParser(description="Mutation-fuzz every DSH log reader.")
    parser.add_argument("--cases", type=counts(1), default=20_000, help="mutated logs to try (default 20000)")
    parser.add_argument("--commands", type=counts(0, len(READER_COMMANDS)), default=3, help="commands drawn per case (default 3)")
    parser.add_argument("--tui", type=counts(0), default=0, help="cases also opened in the TUI (default 0)")
    parser.add_argument("--seconds", type=positive, default=float("inf"), help="stop after this long")
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--json", action="store_true", help="print the JSON result only")
    args = parser.parse_args(argv)
    result = run(args.cases, args.seconds, args.seed, args.commands, args.tui)
    emit(result, table(result), args.json)
    return 1 if result["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
