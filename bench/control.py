"""Live-control latency: how long an operator request waits for its outcome while a model call is in flight.

The reference host runs against a loopback OpenAI-compatible server (``tests/host/sse_server.py``) whose every
answer takes ``--delay`` seconds (30 by default). While a model call is in flight the script sends each op
``--tries`` times and measures arrival -> outcome: the request's ``at`` stamp to the ``time`` of the
``tapedeck/control`` event that answers it (both epoch ms from the same clock).

- ``stop``: one host per try; the outcome is ``applied`` once the stream is interrupted.
- ``pause`` (then ``resume``), ``message``, ``checkpoint``: answered at once, in the middle of the call.
- ``rewind``, ``expand``, ``config.set``: acknowledged ``pending`` at once (``ack``), applied at the next
  boundary (``final``, which waits for the model's answer by design).

The baseline is the step length itself (the delay): before live control, a request waited for the step to end.

``--route dsh`` measures the same on the real DSH through the bridge plugin (``core/bridge/tapedeck-bridge.mjs``,
installed by ``tools/install_dsh.sh``): one ``dsh web`` against the scripted model of ``tests/dsh/harness.py``,
one session per try whose turn runs bash steps of ``--step`` seconds. Arrival -> outcome is the request's ``at``
to the ``at`` of its line in ``control.outcomes.jsonl``. ``pause held`` is arrival -> ``bridge.json`` saying
``paused`` (the step in flight ends first); ``rewind`` waits for the turn to end by design and is timed at idle.
The target for pause, stop and message is one step + 1 s.

    python bench/control.py [--delay 30] [--tries 10] [--json]
    python bench/control.py --route dsh [--step 2] [--tries 3] [--json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import counts, delay, emit, markdown_table, positive  # noqa: E402
from core.control import inbox as control  # noqa: E402
from core.control.config import load_config  # noqa: E402
from core.host.loop import AgentHost, HostOptions  # noqa: E402
from core.host.providers.openai_provider import OpenAIProvider  # noqa: E402
from core.host.providers.retry import RetryPolicy  # noqa: E402
from tests.host.sse_server import ChatServer, Reply, chunk, text_reply, tool_delta  # noqa: E402

TARGET_MS = 1000
IMMEDIATE = tuple(op for op, spec in control.OPS.items() if not spec.at_boundary)


def _slow(reply: Reply, delay: float) -> Reply:
    reply.delay = delay
    return reply


def _tool_call(delay: float) -> Reply:
    chunks = [
        chunk({"role": "assistant", "content": ""}),
        chunk(tool_delta(0, '{"command": "true"}', call_id="call_1", name="bash")),
        chunk(finish="tool_calls"),
        chunk(usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}),
    ]
    return Reply(chunks, delay=delay)


class Host:
    """One host on a thread against the loopback model."""

    def __init__(self, root: Path, server: ChatServer) -> None:
        workspace = root / "ws"
        workspace.mkdir(parents=True, exist_ok=True)
        model = OpenAIProvider(api_key="k", base_url=server.base_url, model="m", retry=RetryPolicy(max_retries=0))
        self.host = AgentHost.create(
            root / "sessions", model, load_config(None), HostOptions(workspace=workspace), tasks=["work slowly"]
        )
        self.inbox = control.inbox_path(self.host.writer.path)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.host.run()
        finally:
            self.host.close()

    def outcome(self, request_id: str, final: bool, timeout: float) -> dict[str, Any]:
        """The request's outcome event (``final`` or the first one), waiting up to ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in list(self.host.session.events):
                data = event.get("data") or {}
                answers = event["type"] == "tapedeck/control" and data.get("requestId") == request_id
                if answers and (not final or data.get("outcome") in control.FINAL):
                    return event
            time.sleep(0.002)
        raise TimeoutError(f"no outcome for {request_id}")

    def send(self, op: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        return control.append_request(self.inbox, op, args)

    def finish(self) -> None:
        if self.thread.is_alive() and not self.host.stop_requested:
            self.send("stop")
        self.thread.join(60)


def _wait_calls(server: ChatServer, n: int) -> None:
    while len(server.received) < n:
        time.sleep(0.002)


def _latency(request: dict[str, Any], event: dict[str, Any]) -> int:
    return int(event["time"]) - int(request["at"])


def measure(delay: float, tries: int) -> dict[str, list[int]]:
    """Arrival -> outcome latencies (ms) per op (``<op> ack`` / ``<op> final`` for the deferred ones)."""
    out: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory(prefix="tapedeck-bench-control-") as tmp, ChatServer() as server:
        root = Path(tmp)
        for i in range(tries):  # stop: one host per try, each interrupted mid-call
            server.push(_slow(text_reply("a", "slow", "answer"), delay))
            calls = len(server.received)
            host = Host(root / f"stop-{i}", server)
            _wait_calls(server, calls + 1)
            request = host.send("stop", {"reason": "bench"})
            out.setdefault("stop", []).append(_latency(request, host.outcome(request["id"], True, 10)))
            host.finish()
        # the immediate ops, all inside one slow model call
        server.push(_slow(text_reply("a", "slow", "answer"), delay))
        calls = len(server.received)
        host = Host(root / "immediate", server)
        _wait_calls(server, calls + 1)
        for _ in range(tries):
            for op, args in (("checkpoint", {"objective": "bench"}), ("message", {"text": "keep going"}),
                             ("pause", {}), ("resume", {})):  # fmt: skip
                request = host.send(op, args)
                out.setdefault(op, []).append(_latency(request, host.outcome(request["id"], True, 10)))
        host.finish()
        # the deferred ops: acknowledged inside one slow call, applied at the next boundary
        server.push(_tool_call(delay), text_reply("done"))
        calls = len(server.received)
        host = Host(root / "deferred", server)
        _wait_calls(server, calls + 1)
        mark = host.send("checkpoint", {"objective": "bench"})
        host.outcome(mark["id"], True, 10)
        sent = []
        for _ in range(tries):
            for op, args in (("config.set", {"key": "slice.history.keepRecentTurns", "value": 1}),
                             ("expand", {"seq": 1}), ("rewind", {})):  # fmt: skip
                request = host.send(op, args)
                out.setdefault(f"{op} ack", []).append(_latency(request, host.outcome(request["id"], False, 10)))
                sent.append((op, request))
        for op, request in sent:
            out.setdefault(f"{op} final", []).append(_latency(request, host.outcome(request["id"], True, delay + 30)))
        host.finish()
    return out


def measure_dsh(step: float, tries: int) -> dict[str, list[int]]:
    """Arrival -> outcome latencies (ms) per op on the real DSH through the bridge, inside turns of slow steps."""
    from tests.dsh import harness as h

    install = h.find_dsh()
    if isinstance(install, str):
        raise SystemExit(f"bench/control.py --route dsh: {install}")
    out: dict[str, list[int]] = {}

    def timed(d: Path, op: str, args: dict[str, Any] | None = None) -> None:
        request = h.send(d, op, args)
        outcome = h.final_outcome(d, request["id"], timeout=60)
        if outcome["outcome"] != "applied":
            raise RuntimeError(f"{op} was not applied: {outcome}")
        out.setdefault(op, []).append(outcome["at"] - request["at"])

    with tempfile.TemporaryDirectory(prefix="tapedeck-bench-dsh-") as tmp, h.ScriptedModel() as model:
        world = h.DshHome(install, Path(tmp), model.url)
        with h.DshWeb(world) as web:
            for _ in range(tries):
                _, d = h.start_session(world, web, f"Bench: steps=4 sleep={step:g}")
                timed(d, "checkpoint")
                timed(d, "message", {"text": "a steer from the bench"})
                timed(d, "config.set", {"key": "reasoningEffort", "value": "low"})
                request = h.send(d, "pause")
                h.wait_for(lambda d=d: h.bridge_json(d)["state"] == "paused", 30, "paused")
                out.setdefault("pause held", []).append(int(time.time() * 1000) - request["at"])
                outcome = h.final_outcome(d, request["id"])
                out.setdefault("pause", []).append(outcome["at"] - request["at"])
                timed(d, "resume")
                h.wait_for(lambda d=d: h.tool_in_flight(d), 30, "a step in flight after resume")
                timed(d, "stop", {"reason": "bench"})
                h.wait_for(lambda d=d: h.bridge_json(d)["state"] == "idle", 30, "idle")
                timed(d, "rewind")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=delay, default=30.0, help="seconds each model answer takes (default 30)")
    parser.add_argument("--tries", type=counts(1), default=10, help="requests per op (default 10)")
    parser.add_argument("--json", action="store_true", help="print the JSON result only")
    parser.add_argument("--route", choices=("host", "dsh"), default="host", help="tapedeck's host or the real DSH")
    parser.add_argument("--step", type=positive, default=2.0, help="with --route dsh: seconds per bash step (2)")
    args = parser.parse_args(argv)
    if args.route == "dsh":
        return _report_dsh(measure_dsh(args.step, args.tries), args.step, args.tries, args.json)
    latencies = measure(args.delay, args.tries)
    step_ms = args.delay * 1000
    ops = {}
    for name, values in latencies.items():
        ops[name] = {
            "p50_ms": statistics.median(values),
            "max_ms": max(values),
            "tries": len(values),
            "max_vs_step": round(max(values) / step_ms, 4),
            "within_target": max(values) <= TARGET_MS if name.split()[0] in IMMEDIATE or name.endswith("ack") else None,
        }
    result = {"delay_s": args.delay, "tries": args.tries, "target_ms": TARGET_MS, "baseline_step_ms": step_ms, "ops": ops}
    rows = [
        [name, f"{r['p50_ms']:.0f}", r["max_ms"], f"{r['max_vs_step']:.4f}",
         {True: "yes", False: "NO", None: "(next boundary)"}[r["within_target"]]]
        for name, r in ops.items()
    ]  # fmt: skip
    table = markdown_table(["op", "p50 ms", "max ms", "max / step", f"<= {TARGET_MS} ms"], rows)
    emit(result, table, args.json)
    return 0


DSH_STEP_BOUND = ("pause", "pause held", "stop", "message")  # target: one step + 1 s


def _report_dsh(latencies: dict[str, list[int]], step: float, tries: int, as_json: bool) -> int:
    target = int(step * 1000) + TARGET_MS
    ops = {
        name: {
            "p50_ms": statistics.median(values),
            "max_ms": max(values),
            "tries": len(values),
            "within_target": max(values) <= target if name in DSH_STEP_BOUND else None,
        }
        for name, values in latencies.items()
    }
    result = {"route": "dsh", "step_s": step, "tries": tries, "target_ms": target, "ops": ops}
    rows = [
        [name, f"{r['p50_ms']:.0f}", r["max_ms"], {True: "yes", False: "NO", None: "-"}[r["within_target"]]]
        for name, r in ops.items()
    ]
    emit(result, markdown_table(["op", "p50 ms", "max ms", f"<= {target} ms"], rows), as_json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
