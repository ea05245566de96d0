"""TUI benchmark: ``tapedeck watch`` on a large generated DSH log, driven and observed through tmux.

In one run, on the same generated log (default 200 MB, raw), measured from the moment the process starts:

- first meaningful paint: ``capture-pane`` is polled until event rows (seq, turn, glyph, summary) show;
  the reference is toolong (``tl``, installed into ``bench/out/toolong-venv``) on the same file until its
  first log lines show -- target: tapedeck <= 0.6 x toolong;
- time to the full projection (the header shows ``loaded``; a big log is projected in one pass, its tail
  preview showing meanwhile);
- append-to-screen latency while following: uniquely marked events are appended to the log and the time until
  each mark reaches the pane is taken from tmux's own output stream (``pipe-pane`` into a reader thread: no
  polling, so no observer load competing for the CPU and no poll granularity) -- target p50 <= 30 ms. The
  earlier method, ``capture-pane`` polled every 2 ms until the mark shows, runs in the same session after it
  and is reported beside it (``append_poll_*``): on a 2-core machine its process spawning slows the app it
  measures and adds about half a poll round trip;
- peak RSS of the app process (``VmHWM`` from ``/proc/<pid>/status``);
- frames blocked while a log of 10 MB lines is opened: ``s`` (surface view on, off) is sent repeatedly during
  loading and the time until the screen reacts is recorded, beside the same keys on an idle app -- target:
  no reaction slower than 250 ms.

The append baseline is a bare Textual app (``--echo-app``: one Static showing the newest line, the same poll
interval) measured the same way in the same run, after tapedeck.

Usage: ``python bench/tui.py [--size 200MB] [--seed 1] [--samples 30] [--no-toolong] [--json]``;
``--big-lines-only`` runs only the key reactions (idle, then while opening the 10 MB-line log);
``--peak-rss dsh-plain,mixed --size 500MB [--dir /tmp/x]`` runs only the peak RSS of a first open of a log of
each profile (target <= 200 MB at 500 MB);
``--append-sizes 10MB,1GB [--dir /tmp/x] [--rounds 5]`` runs only the append-to-screen latency, on one generated
log per size (written to ``--dir``, default ``bench/out``) and of the echo app on a copy of the smallest, all open
at once: an append must cost the same on the biggest log as on the smallest (target p50 ratio <= 1.2) and at most
twice the echo app's. Once every app is idle (the alert engine's own pass over the log is done), the alerts'
toasts are gone and one untimed append each has settled, ``--rounds`` rounds of ``--samples`` appends go to the
apps in turns (a shuffled order for each sample), so what else the machine does falls on all of them alike. The
JSON gives p50 / p95 over all rounds, each round's p50, and each ratio of p50s with a 95% bootstrap interval and
its value in each round.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402

from bench._common import compile_package, counts, emit, human_bytes, markdown_table, percentile  # noqa: E402
from bench.gen_session import generate, parse_size  # noqa: E402
from core.log.tail import tail_events  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
TAPEDECK = ROOT / ".venv" / "bin" / "tapedeck"
TOOLONG_VENV = OUT / "toolong-venv"
SESSION = "tapedeck-bench"
WIDTH, HEIGHT = 160, 48
# seq, turn.step (– between turns), the time column when the list is wide enough, glyph, summary
EVENT_ROW = re.compile(r"│\s*\d+\s+(?:\d+(?:\.\d+)?|–)\s+(?:\S{8}\s+)?\S\s+[^…\s]")
BLOCK_LIMIT_MS = 250.0
TOOLONG_TIMEOUT = 120.0
FINE_POLL = 0.002  # capture-pane interval while timing an append (short bursts, so the extra load is brief)
TOAST = "▌ Alert"  # the title line of an alert's toast ("Alert: cause") or of a burst's summary ("Alerts")
KEY_POLL = 0.005  # while the app is loading, a gentler poll leaves it the CPU it is being measured on


class Pane:
    """One detached tmux session running a command, observed with ``capture-pane``."""

    panes = 0

    def __init__(self, command: str, env: dict[str, str] | None = None) -> None:
        self.started = time.perf_counter()
        # A tmux server of its own: concurrent runs, the user's tmux and the previous pane's server (which may
        # still be shutting down) never meet it.
        Pane.panes += 1
        self.socket = str(Path(tempfile.gettempdir()) / f"tapedeck-bench-{os.getpid()}-{Pane.panes}.sock")
        exports = " ".join(f"{k}={v}" for k, v in (env or {}).items())
        self._tmux(
            "new-session", "-d", "-s", SESSION, "-x", str(WIDTH), "-y", str(HEIGHT),
            f"exec env -u COLUMNS -u LINES {exports} {command}",
        )  # fmt: skip
        self.pid = int(self._tmux("display-message", "-p", "-t", SESSION, "#{pane_pid}").strip())

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", self.socket, *args], check=True, capture_output=True, text=True).stdout

    def text(self) -> str:
        """The visible screen."""
        return self._tmux("capture-pane", "-p", "-t", SESSION)

    def keys(self, *keys: str) -> None:
        """Send keys."""
        self._tmux("send-keys", "-t", SESSION, *keys)

    def wait(self, predicate: Callable[[str], bool], timeout: float = 120.0, poll: float = 0.01) -> float:
        """Seconds (from now) until ``predicate(screen)`` holds, checking every ``poll`` seconds."""
        start = time.perf_counter()
        while True:
            if predicate(self.text()):
                return time.perf_counter() - start
            if time.perf_counter() - start > timeout:
                raise TimeoutError(f"screen never matched; last screen:\n{self.text()}")
            time.sleep(poll)

    def since_start(self, predicate: Callable[[str], bool], timeout: float = 120.0) -> float:
        """Seconds from the process start until ``predicate(screen)`` holds."""
        self.wait(predicate, timeout)
        return time.perf_counter() - self.started

    def cpu_seconds(self) -> float:
        """CPU time the process used so far (user + system)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def idle(self, span: float = 2.0, busy: float = 0.1, timeout: float = 1800.0) -> float:
        """Seconds (from now) until the process used less than ``busy`` of a core over ``span`` seconds: what it
        does after the list is loaded (the alert feed's own first pass over the log) is done."""
        start = time.perf_counter()
        while True:
            before = self.cpu_seconds()
            time.sleep(span)
            if self.cpu_seconds() - before < busy * span:
                return time.perf_counter() - start
            if time.perf_counter() - start > timeout:
                raise TimeoutError("the app never went idle")

    def peak_rss(self) -> int:
        """``VmHWM`` of the process in bytes."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmHWM")

    def close(self) -> None:
        """Kill the session (and the app with it)."""
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True)
        Path(self.socket).unlink(missing_ok=True)


class OutputStream:
    """What the app writes to its pane, as tmux receives it (``pipe-pane -O`` into a FIFO read by a thread)."""

    KEEP = 1 << 16  # bytes of recent output searched for a mark (a mark never spans more than one frame)

    def __init__(self, pane: Pane) -> None:
        self._dir = tempfile.mkdtemp(prefix="tapedeck-bench-")
        self.fifo = Path(self._dir) / "out"
        os.mkfifo(self.fifo)
        self._lock = threading.Lock()
        self._tail = b""
        self._wanted: bytes | None = None
        self._seen_at: float | None = None
        self._found = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        pane._tmux("pipe-pane", "-O", "-t", SESSION, f"cat > {self.fifo}")

    def _read(self) -> None:
        with open(self.fifo, "rb", buffering=0) as f:
            while chunk := f.read(1 << 16):
                now = time.perf_counter()
                with self._lock:
                    self._tail = (self._tail + chunk)[-self.KEEP :]
                    if self._wanted is not None and self._seen_at is None and self._wanted in self._tail:
                        self._seen_at = now
                        self._found.set()

    def expect(self, mark: str) -> None:
        """Start looking for ``mark`` in output that arrives from now on."""
        with self._lock:
            self._wanted, self._seen_at, self._tail = mark.encode(), None, b""
            self._found.clear()

    def seen(self, timeout: float) -> float:
        """``perf_counter`` time at which the expected mark arrived."""
        if not self._found.wait(timeout):
            raise TimeoutError("the mark never reached the pane")
        assert self._seen_at is not None
        return self._seen_at

    def close(self, pane: Pane) -> None:
        """Stop piping."""
        subprocess.run(["tmux", "-S", pane.socket, "pipe-pane", "-t", SESSION], capture_output=True)
        shutil.rmtree(self._dir, ignore_errors=True)


def echo_app(path: str) -> None:
    """The baseline: a bare Textual app that polls ``path`` like the follower and shows its newest line.

    Same poll interval and thread hand-over as ``tapedeck watch`` (``call_from_thread``), nothing else: its
    append-to-screen time is the floor for Textual in this tmux on this machine.
    """
    from rich.text import Text
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    from core.log.tail import FOLLOW_INTERVAL

    def shown(line: bytes) -> Text:
        found = re.search(rb'"text":"([^"]{1,150})"', line)
        return Text((found.group(1) if found else line[-150:]).decode("utf-8", "replace"))

    class Echo(App[None]):
        def compose(self) -> ComposeResult:
            yield Static("echo: waiting for appends", id="line")

        def on_mount(self) -> None:
            threading.Thread(target=self.follow, daemon=True).start()

        def follow(self) -> None:
            offset = os.path.getsize(path)
            while True:
                time.sleep(FOLLOW_INTERVAL)
                size = os.path.getsize(path)
                if size > offset:
                    with open(path, "rb") as f:
                        f.seek(offset)
                        lines = f.read(size - offset).splitlines()
                    offset = size
                    self.call_from_thread(self.query_one("#line", Static).update, shown(lines[-1]))

    Echo().run()


def echo_pane(path: Path) -> Pane:
    """The bare Textual baseline following ``path``, once it shows."""
    pane = Pane(f"{sys.executable} {Path(__file__).resolve()} --echo-app {path}")
    pane.wait(lambda s: "echo: waiting" in s)
    return pane


def echo_latencies(path: Path, samples: int) -> list[float]:
    """Append-to-screen of the bare Textual baseline on ``path`` (tmux output stream, like tapedeck's)."""
    pane = echo_pane(path)
    try:
        stream = OutputStream(pane)
        try:
            return append_latencies(pane, path, samples, stream)
        finally:
            stream.close(pane)
    finally:
        pane.close()


def watch(path: Path) -> Pane:
    """``tapedeck watch PATH`` with no user keymap."""
    return Pane(f"{TAPEDECK} watch {path}", {"TAPEDECK_HOME": str(OUT / "tui-home")})


def toolong_first_paint(path: Path, timeout: float) -> float | str:
    """Seconds until toolong shows the first lines of ``path``, or why there is no figure."""
    tl = TOOLONG_VENV / "bin" / "tl"
    if not tl.exists():
        subprocess.run([sys.executable, "-m", "venv", str(TOOLONG_VENV)], check=True)
        pip = subprocess.run(
            [str(TOOLONG_VENV / "bin" / "pip"), "install", "-q", "toolong"], capture_output=True
        )
        if pip.returncode != 0 or not tl.exists():
            return "toolong could not be installed"
    pane = Pane(f"{tl} {path}")
    try:
        return round(pane.since_start(lambda screen: '"type":' in screen, timeout=timeout), 3)
    except TimeoutError:
        return f"no lines shown within {timeout:.0f} s"
    finally:
        pane.close()


def mark_event(seq: int, mark: str) -> bytes:
    """One operator-style user message carrying ``mark`` (appended after the last turn ended)."""
    event = {
        "type": "user/message",
        "seq": seq,
        "time": 1_900_000_000_000 + seq,
        "data": {
            "id": mark,
            "role": "user",
            "content": [{"type": "text", "text": mark}],
            "source": {"kind": "user"},
        },
        "surfaceOp": "append",
    }
    return orjson.dumps(event) + b"\n"


class Appender:
    """Appends uniquely marked events to the log one app follows and times each until its mark reaches the pane."""

    def __init__(self, pane: Pane, path: Path, stream: OutputStream | None = None) -> None:
        self.pane, self.path, self.stream = pane, path, stream
        self.next_seq = int(tail_events(path, 1)[-1]["seq"]) + 1
        self.run = os.urandom(4).hex()  # marks never seen before, even in a log holding older runs' marks
        self.sent = 0

    def one(self) -> float:
        """Milliseconds from one appended mark being written to it reaching the pane.

        With a ``stream`` the arrival is read from tmux's output stream (nothing polls); without it ``capture-pane``
        is polled every ``FINE_POLL`` seconds until the mark shows on the screen.
        """
        mark = f"MARK-{self.run}-{self.sent:04d}"
        self.sent += 1
        with open(self.path, "ab", buffering=0) as f:
            if self.stream is not None:
                self.stream.expect(mark)
                start = time.perf_counter()
                f.write(mark_event(self.next_seq, mark))
                took = (self.stream.seen(30) - start) * 1000
                self.pane.wait(lambda screen: mark in screen, timeout=30)  # and it is on the screen
            else:
                f.write(mark_event(self.next_seq, mark))
                os.fsync(f.fileno())
                took = self.pane.wait(lambda screen: mark in screen, timeout=30, poll=FINE_POLL) * 1000
        self.next_seq += 1
        return took


def pause(rng: random.Random) -> None:
    """The random gap before each append (its phase against the apps' timers differs from one append to the next)."""
    time.sleep(rng.uniform(0.15, 0.35))


def append_latencies(pane: Pane, path: Path, samples: int, stream: OutputStream | None = None) -> list[float]:
    """Milliseconds from each of ``samples`` appended marks being written to it reaching the pane
    (``Appender.one``)."""
    appender, rng = Appender(pane, path, stream), random.Random()
    out = []
    for _ in range(samples):
        pause(rng)
        out.append(appender.one())
    return out


def interleaved(appenders: list[Appender], samples: int, rounds: int) -> list[list[list[float]]]:
    """Latencies (ms) of each appender by round, ``samples`` each a round, the apps taking turns: each sample appends
    to every app once, in an order shuffled anew, so whatever else the machine does meanwhile falls on all of them
    alike."""
    rng = random.Random()
    out: list[list[list[float]]] = [[[] for _ in range(rounds)] for _ in appenders]
    for r in range(rounds):
        for _ in range(samples):
            order = list(range(len(appenders)))
            rng.shuffle(order)
            for i in order:
                pause(rng)
                out[i][r].append(appenders[i].one())
    return out


def ratio_interval(top: list[float], bottom: list[float], resamples: int = 2000) -> list[float]:
    """A 95% bootstrap interval of ``median(top) / median(bottom)`` (each resampled with replacement; fixed seed)."""
    rng = random.Random(0)
    median, pick = statistics.median, rng.choices
    ratios = [median(pick(top, k=len(top))) / median(pick(bottom, k=len(bottom))) for _ in range(resamples)]
    return [round(percentile(ratios, 0.025), 3), round(percentile(ratios, 0.975), 3)]


def big_line_log(path: Path, lines: int, line_bytes: int) -> Path:
    """A log whose tool results are ``line_bytes`` long each (``lines`` of them)."""
    header = {
        "type": "session",
        "version": 0,
        "id": "big-lines",
        "createdAt": 1,
        "cwd": "/w",
        "delegationDepth": 0,
    }
    with open(path, "wb") as f:
        f.write(orjson.dumps(header) + b"\n")
        seq = 0
        for turn in range(1, lines + 1):
            cid = f"c{turn}"
            body = "".join(random.Random(turn).choices("abcdefghij klmnop\n", k=line_bytes))
            events = [
                {"type": "turn/start", "data": {"turn": turn}},
                {"type": "tool/call", "data": {"turn": turn, "step": 1, "callId": cid, "name": "read", "arguments": "{}"}},
                {"type": "tool/result", "data": {"turn": turn, "step": 1, "message": {
                    "id": f"r{turn}", "role": "user", "source": {"kind": "tool", "callId": cid},
                    "content": [{"type": "tool-result", "toolCallId": cid, "content": [{"type": "text", "text": body}]}]}},
                 "sourceEventSeqs": [seq + 1], "surfaceOp": "append"},
                {"type": "turn/end", "data": {"turn": turn, "reason": {"kind": "completed"}}},
            ]  # fmt: skip
            for event in events:
                f.write(orjson.dumps({"type": event["type"], "seq": seq, "time": seq, **event}) + b"\n")
                seq += 1
    return path


def key_reactions(path: Path, *, while_loading: bool, presses: int = 40) -> dict[str, Any]:
    """Open ``path`` and time how fast ``s`` switches the list to the surface view and back.

    With ``while_loading`` the keys are sent only until the header says ``loaded`` (the log is still being read
    and indexed); otherwise ``presses`` keys are sent to the idle app as the baseline.
    """
    pane = watch(path)
    reactions: list[float] = []
    try:
        pane.wait(lambda s: "tapedeck" in s and "FULL LOG" in s)
        while len(reactions) < (400 if while_loading else presses):
            if while_loading and "loaded" in pane.text():
                break
            pane.keys("s")
            reactions.append(pane.wait(lambda s: "SURFACE" in s, timeout=30, poll=KEY_POLL) * 1000)
            pane.keys("s")
            reactions.append(pane.wait(lambda s: "FULL LOG" in s, timeout=30, poll=KEY_POLL) * 1000)
    finally:
        pane.close()
    return {
        "keys_sent": len(reactions),
        "reaction_p50_ms": round(statistics.median(reactions), 1) if reactions else None,
        "reaction_max_ms": round(max(reactions), 1) if reactions else None,
        "blocked_frames": sum(1 for r in reactions if r > BLOCK_LIMIT_MS),
    }


def run(size: int, seed: int, samples: int, with_toolong: bool) -> dict[str, Any]:
    """Every measurement, in one run on one generated log."""
    OUT.mkdir(parents=True, exist_ok=True)
    source = OUT / f"tui-mixed-{size}-s{seed}.jsonl"
    if not source.exists():
        generate(source, size, seed=seed, profile="mixed")
    live = OUT / "tui-live.jsonl"
    shutil.copyfile(source, live)
    result: dict[str, Any] = {"log": str(live.relative_to(ROOT)), "log_bytes": live.stat().st_size}

    result["toolong_first_paint_s"] = (
        toolong_first_paint(live, TOOLONG_TIMEOUT) if with_toolong else "skipped"
    )
    pane = watch(live)
    try:
        result["first_paint_s"] = round(pane.since_start(lambda s: EVENT_ROW.search(s) is not None), 3)
        result["loaded_s"] = round(pane.since_start(lambda s: "loaded" in s, timeout=600), 3)
        stream = OutputStream(pane)
        try:
            latencies = append_latencies(pane, live, samples, stream)
        finally:
            stream.close(pane)
        result["append_p50_ms"] = round(statistics.median(latencies), 1)
        result["append_p95_ms"] = round(percentile(latencies, 0.95), 1)
        polled = append_latencies(pane, live, samples)
        result["append_poll_p50_ms"] = round(statistics.median(polled), 1)
        result["append_poll_p95_ms"] = round(percentile(polled, 0.95), 1)
        result["peak_rss_bytes"] = pane.peak_rss()
    finally:
        pane.close()
    echo = echo_latencies(live, samples)
    result["echo_append_p50_ms"] = round(statistics.median(echo), 1)
    result["echo_append_p95_ms"] = round(percentile(echo, 0.95), 1)
    reference = result["toolong_first_paint_s"]
    bound = (
        reference if isinstance(reference, float) else TOOLONG_TIMEOUT if "within" in str(reference) else None
    )
    if bound is not None:  # without a toolong figure the ratio is an upper bound (toolong took longer)
        result["first_paint_ratio"] = round(result["first_paint_s"] / bound, 3)
        result["first_paint_ratio_is_bound"] = not isinstance(reference, float)
    result.update(big_lines())
    return result


def append_scaling(sizes: list[int], seed: int, samples: int, rounds: int, workdir: Path) -> dict[str, Any]:
    """Append-to-screen of ``tapedeck watch`` on a log of each size (appended to in place: a scratch copy) and of the
    echo app (on a copy of the smallest), all open at once and timed in turns (``interleaved``) once every app is
    idle after loading and the alerts' toasts are gone: p50/p95 over all rounds, each round's p50, and the ratios
    the targets name with a bootstrap interval."""
    workdir.mkdir(parents=True, exist_ok=True)
    paths = [workdir / f"tui-append-mixed-{size}-s{seed}.jsonl" for size in sizes]
    for size, path in zip(sizes, paths, strict=True):
        if not path.exists():
            generate(path, size, seed=seed, profile="mixed")
    echo_log = workdir / "tui-append-echo.jsonl"  # its own file: appends to it reach no tapedeck pane
    shutil.copyfile(paths[0], echo_log)
    panes: list[Pane] = []
    streams: list[tuple[Pane, OutputStream]] = []
    rows: list[dict[str, Any]] = []
    try:
        panes.extend(watch(path) for path in paths)
        for size, path, pane in zip(sizes, paths, panes, strict=True):
            loaded = pane.since_start(lambda s: "loaded" in s, timeout=1800)
            rows.append({"size": size, "log_bytes": path.stat().st_size, "loaded_s": round(loaded, 1)})
        for row, pane in zip(rows, panes, strict=True):
            pane.idle()
            # the alerts the log's history raised toast for 8 s each, and a burst's summary ("Alerts") for 10 s; one
            # leaving lays the screen out again (tens of ms): timed appends start once they are gone, on every log
            pane.wait(lambda s: TOAST not in s, timeout=120, poll=0.2)
            row["idle_s"] = round(time.perf_counter() - pane.started, 1)
        panes.append(echo_pane(echo_log))
        appenders = []
        for pane, path in zip(panes, [*paths, echo_log], strict=True):
            stream = OutputStream(pane)
            streams.append((pane, stream))
            appenders.append(Appender(pane, path, stream))
        # one append each, untimed, then idle again: what the first append after an open sets off (an alert engine
        # restored from the log's checkpoint reads the log's start again to rebuild its projection: about 15 s of
        # CPU on 1 GB) is over before the timed appends, whichever state the log's caches were left in
        for appender in appenders:
            appender.one()
        for pane in panes:
            pane.idle()
        latencies = interleaved(appenders, samples, rounds)
        for row, pane in zip(rows, panes[: len(rows)], strict=True):
            row["peak_rss_bytes"] = pane.peak_rss()
    finally:
        for pane, stream in streams:
            stream.close(pane)
        for pane in panes:
            pane.close()
    pooled = [[ms for by_round in app for ms in by_round] for app in latencies]
    for row, app, every in zip(rows, latencies[: len(rows)], pooled, strict=False):
        row["p50_ms"] = round(statistics.median(every), 2)
        row["p95_ms"] = round(percentile(every, 0.95), 1)
        row["round_p50_ms"] = [round(statistics.median(r), 2) for r in app]
    small, big, echo = pooled[0], pooled[-2], pooled[-1]

    def by_round(top: int, bottom: int) -> list[float]:
        pairs = zip(latencies[top], latencies[bottom], strict=True)
        return [round(statistics.median(t) / statistics.median(b), 3) for t, b in pairs]

    result: dict[str, Any] = {
        "method": "interleaved",  # every app open at once, appended to in turns
        "samples": samples,  # per app and round
        "rounds": rounds,
        "logs": rows,
        "echo_p50_ms": round(statistics.median(echo), 2),
        "echo_p95_ms": round(percentile(echo, 0.95), 1),
        "echo_round_p50_ms": [round(statistics.median(r), 2) for r in latencies[-1]],
        "big_over_small": round(statistics.median(big) / statistics.median(small), 3),
        "big_over_small_ci95": ratio_interval(big, small),
        "big_over_small_rounds": by_round(-2, 0),
        "big_over_echo": round(statistics.median(big) / statistics.median(echo), 3),
        "big_over_echo_ci95": ratio_interval(big, echo),
        "big_over_echo_rounds": by_round(-2, -1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    return result


def append_scaling_table(r: dict[str, Any]) -> str:
    """The markdown summary of ``append_scaling``."""
    rows = [[human_bytes(x["log_bytes"]), f"{x['loaded_s']} s", f"{x['idle_s']} s",
             f"{x['p50_ms']} / {x['p95_ms']} ms", " ".join(map(str, x["round_p50_ms"])),
             human_bytes(x["peak_rss_bytes"])] for x in r["logs"]]  # fmt: skip
    rows.append(["bare Textual echo app", "", "", f"{r['echo_p50_ms']} / {r['echo_p95_ms']} ms",
                 " ".join(map(str, r["echo_round_p50_ms"])), ""])  # fmt: skip
    head = ["log", "loaded", "idle", "append-to-screen p50 / p95", "p50 by round (ms)", "peak RSS"]
    return markdown_table(head, rows) + (
        f"\n\n{r['rounds']} rounds of {r['samples']} appends to each app, in turns. p50 biggest / smallest: "
        f"{r['big_over_small']} (95% interval {r['big_over_small_ci95']}, by round {r['big_over_small_rounds']}; "
        f"target <= 1.2); biggest / echo app: {r['big_over_echo']} (95% interval {r['big_over_echo_ci95']}, "
        f"by round {r['big_over_echo_rounds']}; target <= 2); load average {r['load_average']}"
    )


def peak_rss(profiles: list[str], size: int, seed: int, workdir: Path) -> dict[str, Any]:
    """Peak RSS of ``tapedeck watch`` opening a generated log of each profile for the first time (an empty index
    cache: it reads the whole log, its alert engine folds it, and it writes the log's index): ``VmHWM`` once the
    header shows ``loaded`` and once the app is idle after it (the index written, the engine's pass over)."""
    workdir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for profile in profiles:
        path = workdir / f"tui-rss-{profile}-{size}-s{seed}.jsonl"
        if not path.exists():
            generate(path, size, seed=seed, profile=profile)
        cache = tempfile.mkdtemp(prefix="tapedeck-bench-cache-")
        pane = Pane(f"{TAPEDECK} watch {path}", {"TAPEDECK_HOME": str(OUT / "tui-home"), "XDG_CACHE_HOME": cache})
        try:
            loaded = pane.since_start(lambda s: "loaded" in s, timeout=3600)
            at_loaded = pane.peak_rss()
            settled = loaded + pane.idle()
            rows.append({"profile": profile, "log_bytes": path.stat().st_size, "loaded_s": round(loaded, 1),
                         "idle_s": round(settled, 1), "cpu_s": round(pane.cpu_seconds(), 1),
                         "peak_rss_loaded_bytes": at_loaded, "peak_rss_bytes": pane.peak_rss()})  # fmt: skip
        finally:
            pane.close()
            shutil.rmtree(cache, ignore_errors=True)
    return {"logs": rows, "load_average": [round(x, 2) for x in os.getloadavg()]}


def peak_rss_table(r: dict[str, Any]) -> str:
    """The markdown summary of ``peak_rss``."""
    rows = [[x["profile"], human_bytes(x["log_bytes"]), f"{x['loaded_s']} s", f"{x['idle_s']} s", f"{x['cpu_s']} s",
             human_bytes(x["peak_rss_loaded_bytes"]), human_bytes(x["peak_rss_bytes"])] for x in r["logs"]]  # fmt: skip
    head = ["profile", "log", "loaded", "idle", "CPU", "peak RSS at loaded", "peak RSS"]
    return markdown_table(head, rows) + f"\n\ntarget: peak RSS <= 200 MB; load average {r['load_average']}"


def big_lines() -> dict[str, Any]:
    """Key reactions on an idle app (the baseline), then while a log of 24 lines of 10 MB is opened."""
    OUT.mkdir(parents=True, exist_ok=True)
    big = big_line_log(OUT / "tui-10mb-lines.jsonl", 24, 10_000_000)
    result: dict[str, Any] = {
        "keys_idle": key_reactions(big_line_log(OUT / "tui-small.jsonl", 3, 1000), while_loading=False),
        "big_lines": key_reactions(big, while_loading=True),
    }
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return result


def big_lines_table(r: dict[str, Any]) -> str:
    """The markdown summary of ``big_lines`` alone."""
    return markdown_table(["measure", "tapedeck", "reference", "target"], [_big_lines_row(r)])


def _big_lines_row(r: dict[str, Any]) -> list[str]:
    big, idle = r["big_lines"], r["keys_idle"]
    return [
        "key reaction while opening 10 MB lines",
        f"p50 {big['reaction_p50_ms']} ms, max {big['reaction_max_ms']} ms",
        f"idle app: p50 {idle['reaction_p50_ms']} ms, max {idle['reaction_max_ms']} ms",
        f"blocked (> {BLOCK_LIMIT_MS:.0f} ms): {big['blocked_frames']} of {big['keys_sent']}",
    ]


def table(r: dict[str, Any]) -> str:
    """The markdown summary."""
    ratio = r.get("first_paint_ratio")
    ratio_text = f"{'< ' if r.get('first_paint_ratio_is_bound') else ''}{ratio} (target <= 0.6)"
    reference = r["toolong_first_paint_s"]
    reference_text = f"toolong {reference} s" if isinstance(reference, float) else f"toolong: {reference}"
    rows = [
        ["first meaningful paint", f"{r['first_paint_s']} s", reference_text, ratio_text],
        ["full projection (`loaded`)", f"{r['loaded_s']} s", "", ""],
        ["append-to-screen p50 / p95 (tmux output stream)", f"{r['append_p50_ms']} / {r['append_p95_ms']} ms", "", "target p50 <= 30 ms"],
        ["append-to-screen p50 / p95, bare Textual echo app", f"{r['echo_append_p50_ms']} / {r['echo_append_p95_ms']} ms", "same stream, same run", "the floor"],
        ["append-to-screen p50 / p95 (capture-pane every 2 ms)", f"{r['append_poll_p50_ms']} / {r['append_poll_p95_ms']} ms", "", "observer load included"],
        ["peak RSS (VmHWM)", human_bytes(r["peak_rss_bytes"]), "", ""],
        _big_lines_row(r),
    ]  # fmt: skip
    return markdown_table(["measure", "tapedeck", "reference", "target"], rows)


def main(argv: list[str] | None = None) -> int:
    """CLI entry."""
    parser = argparse.ArgumentParser(description="Benchmark tapedeck watch in tmux.")
    parser.add_argument("--size", default="200MB", help="size of the generated log (default 200MB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--samples", type=counts(1), default=30, help="appended events timed (default 30)")
    parser.add_argument("--no-toolong", action="store_true", help="skip the toolong reference")
    parser.add_argument("--json", action="store_true", help="print only the JSON result")
    parser.add_argument(
        "--big-lines-only", action="store_true", help="only the key reactions while opening 10 MB lines"
    )
    parser.add_argument("--append-sizes", help="only append-to-screen, on a log of each size (10MB,1GB)")
    parser.add_argument("--rounds", type=counts(1), default=5,
                        help="--append-sizes: rounds of --samples appends to each app in turns (default 5)")  # fmt: skip
    parser.add_argument("--dir", type=Path, default=OUT, help="where --append-sizes and --peak-rss write their logs")
    parser.add_argument("--peak-rss", metavar="PROFILES",
                        help="only the peak RSS of a first open of a --size log of each profile (dsh-plain,mixed)")  # fmt: skip
    parser.add_argument("--echo-app", metavar="PATH", help=argparse.SUPPRESS)  # the baseline app, in its pane
    args = parser.parse_args(argv)
    if args.echo_app:
        echo_app(args.echo_app)
        return 0
    if shutil.which("tmux") is None:
        print("bench/tui.py needs tmux", file=sys.stderr)
        return 2
    if not TAPEDECK.exists():
        print(f"{TAPEDECK} is missing: pip install -e . first", file=sys.stderr)
        return 2
    compile_package()
    if args.append_sizes:
        sizes = sorted(parse_size(word) for word in args.append_sizes.split(","))
        result = append_scaling(sizes, args.seed, args.samples, args.rounds, args.dir)
        emit(result, append_scaling_table(result), args.json)
        return 0
    if args.peak_rss:
        result = peak_rss(args.peak_rss.split(","), parse_size(args.size), args.seed, args.dir)
        emit(result, peak_rss_table(result), args.json)
        return 0
    if args.big_lines_only:
        result = big_lines()
        emit(result, big_lines_table(result), args.json)
        return 0
    result = run(parse_size(args.size), args.seed, args.samples, not args.no_toolong)
    emit(result, table(result), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
