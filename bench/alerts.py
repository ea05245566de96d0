"""Alerts benchmark: how long from the triggering event being written to the alert being delivered, and whether
following a log in torn chunks raises exactly the alerts of reading it whole.

- ``--follow`` latency: ``tapedeck alerts LOG --follow --json`` runs as its own process; each sample appends a
  failed tool result (the error-streak rule at count 1, then a successful one to clear it) and times the write
  until the alert's JSON line is read from the process's stdout;
- TUI latency: the app (headless, through Textual's test driver) follows the log; each sample times the write
  until the app's UI thread has taken the alert (``AlertRaised`` handled: toast, mark, list, notification);
- replay = live: every DSH fixture in ``tests/fixtures/dsh`` and a freshly run demo log, each written into a
  followed file in random torn pieces (``--rounds`` times) and compared with the same log read whole;
- budget guard: the demo host run with a budget guard (``pause``) at several budgets; each run counts the model
  requests that started after the one crossing the budget and before the pause;
- replay cost: ``tapedeck alerts LOG --json`` (every rule over a whole log, as ``sessions``, the fleet and the
  TUI's rules read a log they have not seen) against ``tapedeck inspect --json`` on the same generated log, fresh
  processes taking turns, best of ``--repeat`` (wall and CPU); no target, a ratio to watch. Beside it the same
  ``alerts --json`` again on the unchanged log, from the checkpoint its first run left (``core.alerts.checkpoint``),
  as a share of the first run;
- the TUI's reopen: the view (``tui.live.LiveSession``, no UI) reads the same log with its alert engine
  (``FedWatch``) until the engine has caught up, in a fresh process: first with an empty cache, then reopened
  (the view goes on from its index, the engine from the checkpoint its first pass kept), then reopened with the
  index but no checkpoint (the engine reads the log's start itself, as before there was one); last, a log that
  grows while its view is open: a copy of the log less its last ``GROWN_TAIL`` bytes is opened once, then reopened
  (the engine restored from its checkpoint) and, once the rest is appended, read on by a second pass of the view
  in the same process: the engine reads the start again for the cache-break rule's projection, then takes the
  appended events (the wall and CPU of that second pass and the engine's catching up).

Target: latency <= 1 s (p95 and max); replay = live on 100% of the logs; the guard pauses the host before its
next model request (0 requests after the crossing one, every run).

Usage: ``python bench/alerts.py [--samples 30] [--rounds 5] [--seed 1] [--replay-size 30MB] [--replay-profile P]
[--reopen-size 100MB] [--repeat 3] [--out DIR] [--json]`` (``--replay-size 0`` leaves the replay cost out, ``--reopen-size 0`` the TUI's reopen)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import counts, emit  # noqa: E402
from bench.gen_session import PROFILES, parse_size  # noqa: E402
from core.alerts.follow import AlertWatch  # noqa: E402
from core.control.config import validate_config  # noqa: E402

HEADER = {"type": "session", "version": 0, "id": "bench-alerts", "createdAt": 0, "cwd": "/w"}
CONFIG = {"alerts": {"errorStreak": {"count": 1}, "bell": False, "notify": False}}
EAGER = {"alerts": {"errorStreak": {"count": 1}, "context": {"percent": 1}, "cacheBreak": {"tokens": 1},
                    "loop": {"count": 2}, "budget": {"usd": 0.0001}, "runRate": {"usdPerHour": 0.001}},
         "model": {"prices": {"tapedeck-demo": {"hit": 0.028, "miss": 0.28, "output": 0.42}}}}  # fmt: skip


class Writer:
    """Appends tool results to a log: a failed one triggers the alert, a successful one clears it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seq = 0
        path.write_text(json.dumps(HEADER) + "\n")

    def result(self, error: bool) -> int:
        block = {"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": "x"}], "isError": error}
        event = {"type": "tool/result", "seq": self.seq, "time": int(time.time() * 1000), "surfaceOp": "append",
                 "data": {"turn": 1, "step": 1, "message": {"role": "tool", "content": [block]}}}  # fmt: skip
        with open(self.path, "a") as f:
            f.write(json.dumps(event) + "\n")
        self.seq += 1
        return self.seq - 1


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(samples),
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


def follow_latency(tmp: Path, samples: int, rng: random.Random) -> dict[str, float]:
    """Write → JSON line read, through a ``tapedeck alerts --follow --json`` process."""
    log = Writer(tmp / "follow.jsonl")
    conf = tmp / "alerts.json"
    conf.write_text(json.dumps(CONFIG))
    proc = subprocess.Popen([sys.executable, "-m", "core.cli", "alerts", str(log.path), "--follow", "--json",
                             "--config", str(conf)], stdout=subprocess.PIPE, text=True, cwd=ROOT)  # fmt: skip
    assert proc.stdout is not None
    times: list[float] = []
    try:
        time.sleep(1.0)  # the process is up and has read the header
        for _ in range(samples):
            time.sleep(rng.uniform(0.05, 0.25))  # writes land anywhere in the poll cycle
            start = time.monotonic()
            seq = log.result(True)
            alert = json.loads(proc.stdout.readline())
            times.append(time.monotonic() - start)
            assert alert["seq"] == seq, alert
            log.result(False)
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    return _stats(times)


def tui_latency(tmp: Path, samples: int, rng: random.Random) -> dict[str, float]:
    """Write → alert taken on the app's UI thread, with the TUI following the log."""
    from tui.app import TapedeckApp

    log = Writer(tmp / "tui.jsonl")
    app = TapedeckApp(log.path, follow=True, keymap_file=tmp / "no-keymap.toml", config=validate_config(CONFIG))
    times: list[float] = []

    async def drive() -> None:
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause(1.0)
            for _ in range(samples):
                await asyncio.sleep(rng.uniform(0.05, 0.25))
                count = len(app.board.alerts)
                start = time.monotonic()
                seq = log.result(True)
                while len(app.board.alerts) == count:
                    await asyncio.sleep(0.002)
                times.append(time.monotonic() - start)
                assert app.board.alerts[-1].seq == seq
                log.result(False)

    asyncio.run(drive())
    return _stats(times)


def demo_log(tmp: Path) -> Path:
    """A log the demo host writes with its scripted model."""
    from core.control.config import load_config
    from core.host.demo_scenario import TASKS, write_script
    from core.host.demo_workspace import create_demo_workspace
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers import make_provider

    tmp.mkdir(parents=True, exist_ok=True)
    host = AgentHost.create(tmp / "root", make_provider(f"scripted:{write_script(tmp / 'script.json')}"),
                            load_config(None), HostOptions(workspace=create_demo_workspace(tmp / "ws")),
                            tasks=TASKS)  # fmt: skip
    try:
        host.run()
    finally:
        host.close()
    return host.writer.path


def _key(alerts: list[Any]) -> list[tuple[str, int, str]]:
    return [(a.cause, a.seq, a.reason) for a in alerts]


def replay_equals_live(tmp: Path, rounds: int, rng: random.Random) -> dict[str, Any]:
    """Each log read whole against the same log followed in torn pieces, ``rounds`` times."""
    config = validate_config(EAGER)
    logs = sorted((ROOT / "tests" / "fixtures" / "dsh").glob("*.jsonl")) + [demo_log(tmp / "demo")]
    equal = alerts = 0
    for path in logs:
        whole = _key(AlertWatch(path, config, live=False).poll(0, final=True))
        alerts += len(whole)
        data = path.read_bytes()
        same = True
        for r in range(rounds):
            target = tmp / f"torn-{r}-{path.name}"
            watch = AlertWatch(target, config, live=False)
            cuts = sorted(rng.randrange(len(data)) for _ in range(rng.randint(1, 40)))
            got = []
            with open(target, "wb") as f:
                for lo, hi in zip([0, *cuts], [*cuts, len(data)], strict=False):
                    f.write(data[lo:hi])
                    f.flush()
                    got.extend(watch.poll(0))
            got.extend(watch.poll(0, final=True))
            same = same and _key(got) == whole
        equal += same
    return {"logs": len(logs), "equal": equal, "alerts": alerts, "rounds": rounds,
            "percent": round(100 * equal / len(logs), 1)}  # fmt: skip


DEMO_PRICE = EAGER["model"]["prices"]["tapedeck-demo"]


def _usd(usage: dict[str, Any]) -> float:
    """What one request cost at the demo's prices (the demo reports no cache hits)."""
    return (usage.get("inputTokens", 0) * DEMO_PRICE["miss"] + usage.get("outputTokens", 0) * DEMO_PRICE["output"]) / 1e6


def budget_guard(tmp: Path, budgets: list[float]) -> dict[str, Any]:
    """The demo host run with a budget guard at each of ``budgets``: for each run, the model requests that started
    after the one that crossed the budget and before the host paused (target 0), and the time from the crossing
    request's end (its assistant/message) to the applied pause (both as the log dates them)."""
    from core.control import inbox as control
    from core.control.host_state import read_host_state
    from core.host.demo_scenario import TASKS, write_script
    from core.host.demo_workspace import create_demo_workspace
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers import make_provider

    runs = []
    for n, usd in enumerate(budgets):
        base = tmp / f"guard-{n}"
        base.mkdir()
        config = validate_config({"model": EAGER["model"], "alerts": {"budget": {"usd": usd, "action": "pause"}}})
        host = AgentHost.create(base / "root", make_provider(f"scripted:{write_script(base / 'script.json')}"), config,
                                HostOptions(workspace=create_demo_workspace(base / "ws")), tasks=TASKS)  # fmt: skip
        log = host.writer.path
        runner = threading.Thread(target=host.run, daemon=True)
        runner.start()
        deadline = time.monotonic() + 60
        while read_host_state(log).state != "paused" and runner.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        events = [json.loads(line) for line in log.read_text().splitlines()[1:]]
        control.append_request(control.inbox_path(log), "stop", {})
        runner.join(30)
        host.close()
        spent, crossing = 0.0, None
        for e in events:
            usage = (e.get("data") or {}).get("usage") if e["type"] == "assistant/message" else None
            spent += _usd(usage) if usage else 0.0
            if usage and spent >= usd:
                crossing = e
                break
        pause = next((e for e in events if e["type"] == "tapedeck/control" and e["data"].get("op") == "pause"
                      and e["data"].get("outcome") == "applied"), None)  # fmt: skip
        if crossing is None:
            continue  # the run never spent that much
        step = (crossing["data"]["turn"], crossing["data"]["step"])
        end = pause["seq"] if pause is not None else len(events)
        started = {(e["data"]["turn"], e["data"]["step"]) for e in events[crossing["seq"] + 1 : end]
                   if e["type"] in ("assistant/chunk", "assistant/message")
                   and (e["data"]["turn"], e["data"]["step"]) > step}  # fmt: skip
        runs.append({"budget_usd": usd, "crossing_seq": crossing["seq"], "paused": pause is not None,
                     "requests_after_crossing": len(started),
                     "crossing_to_pause_ms": pause["time"] - crossing["time"] if pause is not None else None})  # fmt: skip
    return {"runs": runs, "met": bool(runs) and all(r["paused"] and r["requests_after_crossing"] == 0 for r in runs)}


def replay_cost(out: Path, size: int, profile: str, repeat: int) -> dict[str, Any]:
    """``alerts --json`` against ``inspect --json`` on one generated log: best wall and CPU seconds of each."""
    from bench.cli import CONSOLE, ensure_log, run

    log = ensure_log(out, size, profile, 1, False)
    runs: dict[str, list[Any]] = {"inspect": [], "alerts": [], "again": []}
    with tempfile.TemporaryDirectory() as cache:
        run(CONSOLE, ["alerts", "--json", str(log)], cache)  # leaves the log's checkpoint
        for _ in range(repeat):  # taking turns: a change of the machine's load reaches each
            runs["inspect"].append(run(CONSOLE, ["inspect", "--json", str(log)]))
            runs["alerts"].append(run(CONSOLE, ["alerts", "--json", str(log)]))
            runs["again"].append(run(CONSOLE, ["alerts", "--json", str(log)], cache))
    best = {name: (min(r.s for r in done), min(r.cpu for r in done)) for name, done in runs.items()}
    return {"log": str(log), "profile": profile, "bytes": log.stat().st_size,
            "inspect_s": round(best["inspect"][0], 3), "inspect_cpu_s": round(best["inspect"][1], 3),
            "alerts_s": round(best["alerts"][0], 3), "alerts_cpu_s": round(best["alerts"][1], 3),
            "ratio": round(best["alerts"][0] / best["inspect"][0], 2),
            "cpu_ratio": round(best["alerts"][1] / best["inspect"][1], 2),
            "again_s": round(best["again"][0], 3), "again_cpu_s": round(best["again"][1], 3),
            "again_share": round(best["again"][0] / best["alerts"][0], 3)}  # fmt: skip


TUI_ENGINE = (  # the view and its alert engine until the engine has caught up; prints wall, CPU, bytes it read itself
    "import sys, time\n"
    "from core.alerts.follow import FedWatch, now_ms\n"
    "from core.control.config import validate_config\n"
    "from tui.live import LiveSession\n"
    "fed = FedWatch(validate_config({}), live=False)\n"
    "start, cpu = time.perf_counter(), time.process_time()\n"
    "LiveSession(sys.argv[1], follow=False, alerts=fed).run()\n"
    "fed.poll(now_ms())\n"
    "print(time.perf_counter() - start, time.process_time() - cpu, fed.start_bytes)\n"
)


TUI_GROWN = (  # the view reopens the log (the engine restored), the rest is appended, a second pass reads on
    "import sys, time\n"
    "from core.alerts.follow import FedWatch, now_ms\n"
    "from core.control.config import validate_config\n"
    "from tui.live import LiveSession\n"
    "fed = FedWatch(validate_config({}), live=False)\n"
    "LiveSession(sys.argv[1], follow=False, alerts=fed).run()\n"
    "fed.poll(now_ms())\n"
    "assert fed._restored is not None, 'the engine was not restored from its checkpoint'\n"
    "with open(sys.argv[1], 'ab') as log, open(sys.argv[2], 'rb') as rest:\n"
    "    log.write(rest.read())\n"
    "start, cpu = time.perf_counter(), time.process_time()\n"
    "LiveSession(sys.argv[1], follow=False, alerts=fed).run()\n"
    "fed.poll(now_ms())\n"
    "print(time.perf_counter() - start, time.process_time() - cpu, fed.start_bytes)\n"
)
GROWN_TAIL = 1 << 20  # bytes of the log appended while the view is open (from a line's start on)


def _split_tail(log: Path, where: Path) -> tuple[Path, Path]:
    """A copy of ``log`` less its last ``GROWN_TAIL`` bytes or so (cut at a line's start), and those bytes."""
    size = log.stat().st_size
    with log.open("rb") as f:
        f.seek(max(0, size - GROWN_TAIL))
        cut = f.tell() + f.read().index(b"\n") + 1
        f.seek(0)
        head, rest = where / "grown.jsonl", where / "rest.jsonl"
        with head.open("wb") as out:
            left = cut
            while left:
                left -= out.write(f.read(min(left, 1 << 24)))
        rest.write_bytes(f.read())
    return head, rest


def tui_reopen(log: Path, repeat: int) -> dict[str, Any]:
    """The TUI's view of ``log`` with its alert engine caught up: first open, reopen, reopen without the engine's
    checkpoint, and a second pass after the log grew (best wall and CPU seconds of each, fresh processes)."""
    from bench._common import CHILD_ENV
    from core.alerts.checkpoint import SUFFIX

    def timed(cache: str, code: str = TUI_ENGINE, *args: Path) -> tuple[float, float, int]:
        done = subprocess.run([sys.executable, "-c", code, *map(str, args or (log,))], capture_output=True, text=True,
                              cwd=ROOT, env={**CHILD_ENV, "TAPEDECK_CACHE_DIR": cache}, check=True)  # fmt: skip
        wall, cpu, read = done.stdout.split()
        return float(wall), float(cpu), int(read)

    runs: dict[str, list[tuple[float, float, int]]] = {"first": [], "reopen": [], "no_checkpoint": [], "grown": []}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            runs["first"].append(timed(cache))
            runs["reopen"].append(timed(cache))
            for kept in Path(cache, "alerts").glob("*" + SUFFIX):  # the index stays
                kept.unlink()
            runs["no_checkpoint"].append(timed(cache))
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as where:
            head, rest = _split_tail(log, Path(where))
            timed(cache, TUI_ENGINE, head)  # the first open of the log as it was: index and checkpoint
            runs["grown"].append(timed(cache, TUI_GROWN, head, rest))
    out: dict[str, Any] = {"log": str(log), "bytes": log.stat().st_size}
    for name, done in runs.items():
        out[name] = {"s": round(min(r[0] for r in done), 3), "cpu_s": round(min(r[1] for r in done), 3),
                     "start_bytes": done[0][2]}  # fmt: skip
    out["reopen_vs_first"] = round(out["reopen"]["s"] / out["first"]["s"], 3)
    out["no_checkpoint_vs_first"] = round(out["no_checkpoint"]["s"] / out["first"]["s"], 3)
    out["grown_vs_first"] = round(out["grown"]["s"] / out["first"]["s"], 3)
    return out


def table(result: dict[str, Any], replay_size: str | None, reopen: bool) -> str:
    """The markdown tables of a run (``replay_size``: as given, when the replay cost was measured; ``reopen``: the
    TUI's reopen was)."""
    lines = ["| path | samples | p50 | p95 | max | target |", "|---|---|---|---|---|---|"]
    for name in ("follow", "tui"):
        r = result[name]
        ok = "met" if r["max_ms"] <= 1000 else "missed"
        lines.append(f"| {name} | {r['n']} | {r['p50_ms']} ms | {r['p95_ms']} ms | {r['max_ms']} ms | <= 1 s: {ok} |")
    rp = result["replay"]
    lines += ["", f"replay = live: {rp['equal']}/{rp['logs']} logs ({rp['percent']}%), {rp['alerts']} alerts, "
                  f"{rp['rounds']} torn rounds each"]  # fmt: skip
    lines += ["", "| budget | crossing seq | paused | model requests started after it | crossing -> pause |",
              "|---|---|---|---|---|"]  # fmt: skip
    for r in result["guard"]["runs"]:
        lines.append(f"| ${r['budget_usd']} | {r['crossing_seq']} | {r['paused']} | {r['requests_after_crossing']} | "
                     f"{r['crossing_to_pause_ms']} ms |")  # fmt: skip
    if replay_size is not None:
        c = result["replay_cost"]
        lines += ["", f"| replay of {replay_size} {c['profile']} | wall | CPU |", "|---|---|---|",
                  f"| inspect --json (baseline) | {c['inspect_s']} s | {c['inspect_cpu_s']} s |",
                  f"| alerts --json | {c['alerts_s']} s ({c['ratio']}x) | {c['alerts_cpu_s']} s ({c['cpu_ratio']}x) |",
                  f"| alerts --json again, unchanged log | {c['again_s']} s ({c['again_share']}x the first) | "
                  f"{c['again_cpu_s']} s |"]  # fmt: skip
    if reopen:
        t = result["tui_reopen"]
        lines += ["", "| the TUI's view and alert engine, caught up | wall | CPU | bytes the engine read itself |",
                  "|---|---|---|---|"]  # fmt: skip
        for name, label in (("first", "first open"), ("reopen", "reopen (index, checkpoint)"),
                            ("no_checkpoint", "reopen with the index alone"),
                            ("grown", "reopened, then the log grew: the second pass")):  # fmt: skip
            r = t[name]
            share = "" if name == "first" else f" ({t[name + '_vs_first']}x)"
            lines.append(f"| {label} | {r['s']} s{share} | {r['cpu_s']} s | {r['start_bytes']:,} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=counts(1), default=30)
    parser.add_argument("--rounds", type=counts(1), default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--replay-size", default="30MB", help="log size for the replay cost (0: leave it out)")
    parser.add_argument("--reopen-size", default="100MB",
                        help="log size for the TUI's reopen (0: leave it out; a log over 48 MB gets an index)")  # fmt: skip
    parser.add_argument("--replay-profile", default="dsh-plain", choices=sorted(PROFILES))
    parser.add_argument("--repeat", type=counts(1), default=3, help="runs of each replay-cost process; the best counts")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out", help="where the generated log goes")
    parser.add_argument("--json", action="store_true", help="print the JSON alone")
    args = parser.parse_args(argv)
    size = 0 if args.replay_size.strip() == "0" else parse_size(args.replay_size)
    reopen_size = 0 if args.reopen_size.strip() == "0" else parse_size(args.reopen_size)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        result = {
            "follow": follow_latency(Path(tmp), args.samples, rng),
            "tui": tui_latency(Path(tmp), args.samples, rng),
            "replay": replay_equals_live(Path(tmp), args.rounds, rng),
            "guard": budget_guard(Path(tmp), [0.001, 0.002, 0.003, 0.004, 0.006]),
        }
    if size:
        result["replay_cost"] = replay_cost(args.out, size, args.replay_profile, args.repeat)
    if reopen_size:
        from bench.cli import ensure_log

        log = ensure_log(args.out, reopen_size, args.replay_profile, 1, False)
        result["tui_reopen"] = tui_reopen(log, args.repeat)
    emit(result, table(result, args.replay_size if size else None, bool(reopen_size)), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
