"""Crash safety: SIGKILL the reference host at random points of the demo, resume, and count what went wrong.

Each trial plays the bundled demo (six turns, 42 tool calls) through the real host process, exactly as
``tapedeck demo --no-tui --speed 0`` does, in a fresh workspace, raw or zstd. The host's process group is
killed with SIGKILL at a random point: a byte size of the log drawn uniformly between its header and the size
an uninterrupted run reaches, plus a random delay of up to ``--jitter`` seconds after the log grows past it (so
kills land mid-stream, mid-tool and mid-write alike). With ``--reach F`` the size is drawn up to F times that size
instead, so that the host always has a part of the demo left to play when the kill comes (a kill drawn near the end
can come after the host finished: the trial then notes it and counts one kill fewer). Then ``tapedeck run --resume`` runs; with
``--kills-per-trial K`` the resumed host is killed the same way K-1 more times before a last resume finishes
the session. The baseline is one uninterrupted run per log format in the same invocation.

Per trial:

- lost events: events a reader saw right after a kill (``read_log``) that the final log no longer holds as
  they were;
- duplicated events: seq numbers written twice (reader diagnostics), a turn started twice, a model answer or a
  tool result logged twice for the same step or call, a prompt issued twice;
- divergent: the run did not finish like the baseline: another exit code, other turn outcomes or step counts,
  or other workspace files (``log.txt`` and ``__pycache__`` aside);
- log.txt gaps: narrative events of the final log without their section in ``log.txt`` (and sections
  repeated, reported apart).

``python bench/crash.py --trials 100`` is the full run (trials alternate raw and zstd; ``--raw`` or ``--zstd``
runs one format only); ``--json`` prints the JSON alone. With ``--out DIR`` the directories of the trials that
went wrong (workspace, script, log) stay under ``DIR`` for a look, named in the JSON's ``problems``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._common import counts, delay, emit, fraction, markdown_table  # noqa: E402
from core.host.demo_scenario import TASKS, write_script  # noqa: E402
from core.host.demo_workspace import create_demo_workspace  # noqa: E402
from core.log.layout import log_path  # noqa: E402
from core.log.reader import read_log  # noqa: E402
from core.policies.prolong import is_narrative, parse_sections, sections_by_session  # noqa: E402
from core.read.load import load_session  # noqa: E402
from core.read.session import Session  # noqa: E402

RUN_TIMEOUT = 300.0
POLL_SECONDS = 0.002
IGNORED_FILES = ("log.txt",)


@dataclass
class Run:
    """A finished (or killed) host process."""

    code: int
    seconds: float
    stderr: str = ""


@dataclass
class Outcome:
    """What a finished session looks like, compared against the baseline."""

    code: int
    turns: list[tuple[str, int]]
    files: dict[str, str]


@dataclass
class Trial:
    """One trial's figures."""

    mode: str
    seed: int
    kills: int = 0
    killed_after: list[str] = field(default_factory=list)  # type of the last event a reader saw at each kill
    lost: int = 0
    duplicated: int = 0
    divergent: bool = False
    log_txt_gaps: int = 0
    log_txt_repeats: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def _command(workspace: Path, script: Path, root: Path, session_id: str, zstd: bool) -> list[str]:
    cmd = [sys.executable, "-m", "core.cli", "run", *TASKS, "--provider", f"scripted:{script}",
           "--workspace", str(workspace), "--sessions-root", str(root), "--session-id", session_id,
           "--pace", "0", "--chunk-delay", "0"]  # fmt: skip
    return [*cmd, "--zstd"] if zstd else cmd


def _resume_command(script: Path, root: Path, session_id: str) -> list[str]:
    return [sys.executable, "-m", "core.cli", "run", "--resume", session_id, "--provider", f"scripted:{script}",
            "--sessions-root", str(root)]  # fmt: skip


def _start(cmd: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    err = tempfile.TemporaryFile()  # noqa: SIM115 (closed by _finish or _kill_at; a file never blocks the host)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    proc.stderr = err  # type: ignore[assignment]
    return proc


def _finish(proc: subprocess.Popen[bytes], started: float) -> Run:
    with _reaped(proc):
        code = proc.wait(timeout=RUN_TIMEOUT)
    assert proc.stderr is not None
    with proc.stderr as err:
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return Run(code, time.monotonic() - started, text)


def _kill_at(proc: subprocess.Popen[bytes], log: Path, size: int, jitter: float, rng: random.Random) -> bool:
    """Kill the host's process group once ``log`` reaches ``size`` bytes (plus jitter); False if it ended first."""
    with _reaped(proc):
        while proc.poll() is None:
            try:
                grown = log.stat().st_size >= size
            except FileNotFoundError:
                grown = False
            if grown:
                time.sleep(rng.uniform(0, jitter))
                if proc.poll() is not None:
                    break
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                if proc.stderr is not None:
                    proc.stderr.close()
                return True
            time.sleep(POLL_SECONDS)
    return False


@contextlib.contextmanager
def _reaped(proc: subprocess.Popen[bytes]) -> Iterator[None]:
    """Kill the host's process group when what runs inside fails (a run past its time limit, Ctrl-C at the bench):
    in a session of its own, the host would go on playing alone."""
    try:
        yield
    except BaseException:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        raise


def _files(workspace: Path) -> dict[str, str]:
    out = {}
    for path in sorted(workspace.rglob("*")):
        rel = path.relative_to(workspace).as_posix()
        if path.is_file() and "__pycache__" not in path.parts and rel not in IGNORED_FILES:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return out


def _outcome(code: int, log: Path, workspace: Path) -> Outcome:
    session = load_session(log)
    turns = [(t.status, len(t.steps)) for t in session.turns.values()]
    return Outcome(code, turns, _files(workspace))


def _duplicates(log: Path) -> tuple[int, list[str]]:
    data = read_log(log)
    notes = [f"{d.code} at seq {d.seq}" for d in data.diagnostics if d.code in ("seq-gap", "seq-mismatch")]
    keys: Counter[tuple[Any, ...]] = Counter()
    session = Session.from_events(data.header, data.events)
    for event in data.events:
        kind, d = event["type"], event.get("data") or {}
        if kind == "turn/start":
            keys[(kind, d.get("turn"))] += 1
        elif kind == "assistant/message" and session.is_original(event["seq"]):
            keys[(kind, d.get("turn"), d.get("step"))] += 1
        elif kind == "tool/result" and session.is_original(event["seq"]):
            source = (d.get("message") or {}).get("source") or {}
            keys[(kind, d.get("turn"), d.get("step"), source.get("callId"))] += 1
        elif kind == "tool/call":
            keys[(kind, d.get("turn"), d.get("step"), d.get("callId"))] += 1
        elif kind == "user/message" and (d.get("source") or {}).get("kind") == "user":
            keys[(kind, session.turn_of(event["seq"]), str(d.get("content")))] += 1
    repeated = {k: n for k, n in keys.items() if n > 1}
    count = len(notes) + sum(n - 1 for n in repeated.values())
    return count, notes + [f"{k} x{n}" for k, n in list(repeated.items())[:5]]


def _log_txt(log: Path, workspace: Path) -> tuple[int, int]:
    data = read_log(log)
    narrative = [e["seq"] for e in data.events if is_narrative(e)]
    path = workspace / "log.txt"
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    sections = sections_by_session(parse_sections(text)).get(str(data.header["id"]), [])
    written = Counter(s.seq for s in sections if s.seq is not None)
    gaps = sum(1 for seq in narrative if seq not in written)
    return gaps, sum(n - 1 for n in written.values() if n > 1)


def _fresh(base: Path, name: str) -> tuple[Path, Path, Path]:
    trial = base / name
    workspace = create_demo_workspace(trial / "ws")
    return workspace, write_script(trial / "script.json"), trial / "root"


def baseline(base: Path, zstd: bool) -> tuple[Outcome, int, float]:
    """One uninterrupted run: its outcome, final log size and wall time."""
    workspace, script, root = _fresh(base, f"baseline-{'zstd' if zstd else 'raw'}")
    started = time.monotonic()
    run = _finish(_start(_command(workspace, script, root, "baseline", zstd)), started)
    log = log_path(root, str(workspace), "baseline", zstd)
    if run.code != 0:
        raise RuntimeError(f"the uninterrupted demo failed ({run.code}): {run.stderr.strip()}")
    return _outcome(run.code, log, workspace), log.stat().st_size, run.seconds


def trial(
    base: Path,
    seed: int,
    zstd: bool,
    expected: Outcome,
    size: int,
    *,
    kills: int = 1,
    jitter: float = 0.05,
    reach: float = 1.0,
) -> Trial:
    """Kill the demo host ``kills`` times at random points, resume after each kill, and count the damage. Kill
    points are log sizes drawn up to ``reach`` times ``size`` (never below the size the log already has)."""
    rng = random.Random(seed)
    result = Trial("zstd" if zstd else "raw", seed)
    workspace, script, root = _fresh(base, f"trial-{seed}")
    session_id = f"crash-{seed}"
    log = log_path(root, str(workspace), session_id, zstd)
    cmd = _command(workspace, script, root, session_id, zstd)
    started = time.monotonic()
    seen_at_kills: list[list[dict[str, Any]]] = []
    final: Run | None = None
    for _ in range(kills):
        proc = _start(cmd)
        floor = log.stat().st_size if log.exists() else 1
        if not _kill_at(proc, log, rng.randint(floor, max(floor, int(size * reach))), jitter, rng):
            final = _finish(proc, started)
            result.notes.append("the host finished before the kill")
            break
        result.kills += 1
        seen = read_log(log).events if log.exists() else []
        result.killed_after.append(seen[-1]["type"] if seen else "(no log yet)")
        seen_at_kills.append(seen)
        if log.exists():
            cmd = _resume_command(script, root, session_id)
    if final is None:
        final = _finish(_start(cmd), started)
    result.seconds = time.monotonic() - started
    if final.code != 0:
        result.notes.append(f"final run exited {final.code}: {final.stderr.strip()[-300:]}")
    events = read_log(log).events
    result.lost = sum(_lost(seen, events) for seen in seen_at_kills)
    result.duplicated, notes = _duplicates(log)
    result.notes += notes
    outcome = _outcome(final.code, log, workspace)
    if outcome != expected:
        result.divergent = True
        result.notes.append(_difference(expected, outcome))
    result.log_txt_gaps, result.log_txt_repeats = _log_txt(log, workspace)
    return result


def _lost(seen: list[dict[str, Any]], now: list[dict[str, Any]]) -> int:
    """Events a reader saw at a kill that the final log does not hold unchanged at the same seq."""
    return sum(1 for n, event in enumerate(seen) if n >= len(now) or now[n] != event)


def _difference(expected: Outcome, got: Outcome) -> str:
    if got.code != expected.code:
        return f"exit code {got.code}, baseline {expected.code}"
    if got.turns != expected.turns:
        return f"turns {got.turns}, baseline {expected.turns}"
    changed = sorted(k for k in set(got.files) | set(expected.files) if got.files.get(k) != expected.files.get(k))
    return f"workspace files differ: {', '.join(changed)}"


def _went_wrong(result: Trial) -> bool:
    return bool(result.lost or result.duplicated or result.divergent or result.log_txt_gaps
                or result.log_txt_repeats or result.notes)  # fmt: skip


def run_trials(
    trials: int,
    seed: int,
    kills: int,
    jitter: float,
    out: Path | None = None,
    formats: tuple[bool, ...] = (False, True),
    reach: float = 1.0,
) -> dict[str, Any]:
    """Baselines, then ``trials`` trials cycling through ``formats`` (zstd or not); the JSON result. Under ``out``
    the directories of trials that went wrong are kept."""
    base = Path(tempfile.mkdtemp(prefix="tapedeck-crash-", dir=out))
    kept: dict[int, str] = {}
    try:
        baselines = {zstd: baseline(base, zstd) for zstd in formats}
        results = []
        for n in range(trials):
            zstd = formats[n % len(formats)]
            expected, size, _ = baselines[zstd]
            results.append(trial(base, seed + n, zstd, expected, size, kills=kills, jitter=jitter, reach=reach))
            if out is not None and _went_wrong(results[-1]):
                kept[seed + n] = str(base / f"trial-{seed + n}")
            else:
                shutil.rmtree(base / f"trial-{seed + n}", ignore_errors=True)
    finally:
        if not kept:
            shutil.rmtree(base, ignore_errors=True)
    modes: dict[str, Any] = {}
    for mode in ("zstd" if zstd else "raw" for zstd in formats):
        rows = [r for r in results if r.mode == mode]
        uninterrupted = baselines[mode == "zstd"][2]
        modes[mode] = {
            "trials": len(rows),
            "kills": sum(r.kills for r in rows),
            "lost_events": sum(r.lost for r in rows),
            "duplicated_events": sum(r.duplicated for r in rows),
            "divergent_runs": sum(r.divergent for r in rows),
            "log_txt_gaps": sum(r.log_txt_gaps for r in rows),
            "log_txt_repeats": sum(r.log_txt_repeats for r in rows),
            "baseline_seconds": round(uninterrupted, 2),
            "mean_trial_seconds_ratio": round(sum(r.seconds for r in rows) / max(1, len(rows)) / uninterrupted, 2),
        }
    totals = {key: sum(m[key] for m in modes.values()) for key in
              ("trials", "kills", "lost_events", "duplicated_events", "divergent_runs", "log_txt_gaps",
               "log_txt_repeats")}  # fmt: skip
    return {
        "seed": seed,
        "kills_per_trial": kills,
        "totals": totals,
        "modes": modes,
        "killed_after": dict(Counter(t for r in results for t in r.killed_after).most_common()),
        "problems": [{**asdict(r), **({"kept": kept[r.seed]} if r.seed in kept else {})}
                     for r in results if _went_wrong(r)],
    }  # fmt: skip


def table(result: dict[str, Any]) -> str:
    """The markdown summary of a result."""
    keys = ("trials", "kills", "lost_events", "duplicated_events", "divergent_runs", "log_txt_gaps",
            "log_txt_repeats", "mean_trial_seconds_ratio")  # fmt: skip
    rows = [[mode, *(m[k] for k in keys)] for mode, m in result["modes"].items()]
    rows.append(["total", *(result["totals"].get(k, "") for k in keys)])
    headers = ["log", "trials", "kills", "lost", "duplicated", "divergent", "log.txt gaps", "log.txt repeats",
               "time / uninterrupted"]  # fmt: skip
    return markdown_table(headers, rows)


def main(argv: list[str] | None = None) -> int:
    """``python bench/crash.py [--trials N] [--seed S] [--kills-per-trial K] [--jitter SEC] [--reach F]
    [--raw|--zstd] [--out DIR] [--json]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=counts(0), default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kills-per-trial", type=counts(1), default=1)
    parser.add_argument("--jitter", type=delay, default=0.05, help="seconds of random delay after the size is reached")
    parser.add_argument("--reach", type=fraction, default=1.0,
                        help="kill points are drawn up to this fraction of an uninterrupted run's log size (0-1]")
    parser.add_argument("--out", type=Path, help="where trial directories go (default: the system temp dir; made "
                        "when missing); those of trials that went wrong are kept there")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--raw", action="store_true", help="raw logs only")
    only.add_argument("--zstd", action="store_true", help="zstd logs only")
    parser.add_argument("--json", action="store_true", help="print the JSON alone")
    args = parser.parse_args(argv)
    if args.out is not None:
        try:
            args.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            sys.stderr.write(f"crash.py: --out {args.out}: cannot make a directory there ({exc.strerror or exc})\n")
            return 2
    formats = (True,) if args.zstd else (False,) if args.raw else (False, True)
    result = run_trials(args.trials, args.seed, args.kills_per_trial, args.jitter, args.out, formats, args.reach)
    emit(result, table(result), args.json)
    totals = result["totals"]
    bad = totals["lost_events"] + totals["duplicated_events"] + totals["divergent_runs"] + totals["log_txt_gaps"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
