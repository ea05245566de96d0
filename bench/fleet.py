"""The fleet table's budgets: a write shows in its row, the idle cost, and remote roots over one SSH connection.

Local: ``--sessions`` logs (200) under one root are opened in the real fleet table (``tapedeck fleet``'s app, run
headless in this process); ``--live`` of them (20) get writes, one turn opened per write, round after round, and
each write's latency is the time from the append to the table's row showing that turn. Then nothing is written
for ``--idle`` seconds and the app's CPU time over that window is taken as a share of one core; RSS is this
process's resident size at the end (the app and every log's state).

Remote: ``--remote`` sessions (50) under a root served by a real OpenSSH server on 127.0.0.1 (``tests/remote/sshd``,
generated keys, no agent) are followed by a ``core.fleet.follow.Fleet`` polled as the table's worker polls it,
over one connection; writes are timed append → row as above, and the bytes the SFTP link read while they were
written are compared with the bytes appended (no whole log is read again).

    python bench/fleet.py [--sessions 200] [--live 20] [--rounds 5] [--idle 10] [--remote 50] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import counts, current_rss, delay, emit, human_bytes, markdown_table, percentile  # noqa: E402

HEADER = {"type": "session", "version": 0, "cwd": "/w"}


def _event(etype: str, seq: int, data: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": etype, "seq": seq, "time": int(time.time() * 1000), "data": data}) + b"\n"


def _turn(seq: int, turn: int) -> bytes:
    """One closed turn: start, a user message, an answer with usage, end (4 events)."""
    usage = {"inputTokens": 900, "cacheReadTokens": 3_000, "outputTokens": 40}
    user = {"message": {"role": "user", "content": [{"type": "text", "text": f"task {turn}"}]}, "turn": turn}
    answer = {"turn": turn, "step": 1, "usage": usage,
              "message": {"role": "assistant", "content": [{"type": "text", "text": "done " * 20}]}}  # fmt: skip
    return (_event("turn/start", seq, {"turn": turn}) + _event("user/message", seq + 1, user)
            + _event("assistant/message", seq + 2, answer) + _event("turn/end", seq + 3, {"turn": turn}))  # fmt: skip


class Session:
    """One generated log: ``turns`` closed turns; ``write`` appends the next one."""

    def __init__(self, root: Path, sid: str, turns: int = 20) -> None:
        self.path = root / "p" / sid / "session.jsonl"
        self.path.parent.mkdir(parents=True)
        self.turn = turns
        body = orjson.dumps({**HEADER, "id": sid, "createdAt": int(time.time() * 1000)}) + b"\n"
        body += b"".join(_turn(1 + 4 * (t - 1), t) for t in range(1, turns + 1))
        self.path.write_bytes(body)

    def write(self) -> int:
        """Append the next turn; returns the bytes appended."""
        self.turn += 1
        data = _turn(1 + 4 * (self.turn - 1), self.turn)
        with open(self.path, "ab") as f:
            f.write(data)
        return len(data)


def _config() -> Any:
    from core.control.config import validate_config

    return validate_config({"model": {"prices": {"bench-model": {"hit": 0.1, "miss": 1.0, "output": 2.0}}}})


async def _local(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    from tui.app import TapedeckApp
    from tui.screens.fleet import FleetScreen

    root = tmp / "local"
    sessions = [Session(root, f"s{i:03d}") for i in range(args.sessions)]
    live = sessions[: args.live]
    app = TapedeckApp(root, keymap_file=tmp / "keymap.toml", fleet_roots=[root], config=_config())
    latencies: list[float] = []
    async with app.run_test(size=(160, 50)) as pilot:
        deadline = time.monotonic() + 120
        while not (isinstance(app.screen, FleetScreen) and len(app.screen.rows) == args.sessions):
            assert time.monotonic() < deadline, "the fleet never listed every session"
            await pilot.pause(0.05)
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        loaded = time.monotonic()
        for _ in range(args.rounds):
            for session in live:
                session.write()
                start = time.monotonic()
                key = str(session.path)
                while screen.rows[key].row.turn != session.turn:
                    await asyncio.sleep(0.005)
                latencies.append(time.monotonic() - start)
                await asyncio.sleep(0.05)  # writes spread over the round, not one burst
        await pilot.pause(2.0)  # let the last polls settle
        cpu0, wall0 = time.process_time(), time.monotonic()
        await asyncio.sleep(args.idle)
        idle_cpu = (time.process_time() - cpu0) / (time.monotonic() - wall0)
        rss = current_rss()
        del loaded
    return {
        "sessions": args.sessions,
        "live": args.live,
        "writes": len(latencies),
        "write_to_row_p50_s": round(statistics.median(latencies), 3),
        "write_to_row_p95_s": round(percentile(latencies, 0.95), 3),
        "write_to_row_max_s": round(max(latencies), 3),
        "load_average_1m": os.getloadavg()[0],
        "idle_cpu_share_of_core": round(idle_cpu, 4),
        "idle_seconds": args.idle,
        "rss_bytes": rss,
        "targets": {"write_to_row_max_s": 1.0, "idle_cpu_share_of_core": 0.02, "rss_bytes": 300 * 1024 * 1024},
    }


def _remote(args: argparse.Namespace, tmp: Path) -> dict[str, Any] | str:
    from tests.remote.sshd import MISSING, Sshd

    if MISSING:
        return f"skipped: {MISSING}"
    from core.fleet.follow import Fleet
    from core.remote.link import close_links
    from tui.fleet_feed import POLL_SECONDS

    server = Sshd(tmp / "sshd")
    os.environ["HOME"] = str(server.home)
    os.environ.pop("SSH_AUTH_SOCK", None)
    server.start()
    server.trust()
    try:
        root = tmp / "remote"
        sessions = [Session(root, f"r{i:03d}") for i in range(args.remote)]
        fleet = Fleet([f"testbox:{root}"], _config())
        stop = threading.Event()
        rows: dict[str, int | None] = {}

        def worker() -> None:  # the table's worker loop
            while not stop.is_set():
                fleet.poll()
                rows.update({row.key: row.turn for row in fleet.rows()})
                stop.wait(POLL_SECONDS)

        thread = threading.Thread(target=worker, daemon=True)
        thread.start()
        deadline = time.monotonic() + 120
        while len(rows) < args.remote or any(t != 20 for t in rows.values()):
            assert time.monotonic() < deadline, "the remote fleet never listed every session"
            time.sleep(0.05)
        link = next(iter(fleet.watches.values())).link  # type: ignore[attr-defined]
        read0, appended, latencies = link.bytes_read, 0, []
        for session in sessions:
            appended += session.write()
            start = time.monotonic()
            key = f"testbox:{session.path}"
            while rows.get(key) != session.turn:
                assert time.monotonic() - start < 30, "a remote write never showed"
                time.sleep(0.005)
            latencies.append(time.monotonic() - start)
        read = link.bytes_read - read0
        stop.set()
        thread.join()
        connections = len({id(w.link) for w in fleet.watches.values()})  # type: ignore[attr-defined]
    finally:
        close_links()
        server.kill()
    return {
        "sessions": args.remote,
        "connections": connections,
        "write_to_row_p50_s": round(statistics.median(latencies), 3),
        "write_to_row_p95_s": round(percentile(latencies, 0.95), 3),
        "write_to_row_max_s": round(max(latencies), 3),
        "bytes_appended": appended,
        "bytes_read": read,
        "read_over_appended": round(read / appended, 3),
        "targets": {"write_to_row_max_s": 2.0, "read_over_appended": 1.1},
    }


def _spread(result: dict[str, Any]) -> str:
    return f"{result['write_to_row_p50_s']} / {result['write_to_row_p95_s']} / {result['write_to_row_max_s']} s"


def main(argv: list[str] | None = None) -> None:
    """Run both parts and print JSON and a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=counts(1), default=200)
    parser.add_argument("--live", type=counts(0), default=20)
    parser.add_argument("--rounds", type=counts(1), default=5)
    parser.add_argument("--idle", type=delay, default=10.0)
    parser.add_argument("--remote", type=counts(0), default=50)
    parser.add_argument("--json", action="store_true", help="print the JSON alone")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tapedeck-fleet-bench-") as name:
        tmp = Path(name)
        local = asyncio.run(_local(args, tmp))
        remote = _remote(args, tmp) if args.remote else "skipped: --remote 0"
    rows = [
        ["local: write → row, p50 / p95 / max", _spread(local), "≤ 1 s"],
        ["local: idle CPU", f"{local['idle_cpu_share_of_core']:.2%} of a core", "≤ 2%"],
        ["local: RSS", human_bytes(local["rss_bytes"]), "≤ 300 MiB"],
    ]
    if isinstance(remote, dict):
        rows += [
            ["ssh: write → row, p50 / p95 / max", _spread(remote), "≤ 2 s"],
            ["ssh: bytes read / appended", f"{remote['read_over_appended']} over {remote['connections']} connection",
             "≤ 1.1"],  # fmt: skip
        ]
    table = markdown_table(["what", "measured", "target"], rows)
    emit({"local": local, "remote": remote}, f"{table}\n\n1-minute load average during the local run: "
         f"{local['load_average_1m']:.1f} on {os.cpu_count()} cores", args.json)  # fmt: skip


if __name__ == "__main__":
    main()
