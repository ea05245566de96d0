"""What the names redaction remembers save on a log where most events hold a secret: the same events walked by
``core.export.redact`` as it is and as it was at ``--baseline``, in the same run.

    python bench/redact_names.py [--events 2000] [--repeat 5] [--baseline REV] [--json]

The judges that read a key's name (is it named for a secret, for a count, for no password) remember their answers,
a log's keys being asked about again and again. At the baseline any call that replaced something forgot every
answer, for every thread, so on a log where each event holds a secret each event judged all of its keys anew; now
only the answers about a name that held something to replace are forgotten. Two logs of ``--events`` events each,
with the same keys (some forty, with numbers a key named for a secret would hide): ``secretHeavy``, where every
event's command holds a password, and ``clean``, where every event passes the screen (a key word) but holds nothing
to replace. For each, the best CPU time of walking all its events (``Redactor.walk``) over ``--repeat`` runs, each
module in turn, and the ratio of the current code's time to the baseline's.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import ROOT, best_of, counts, emit, markdown_table  # noqa: E402
from core.export import redact  # noqa: E402

BASELINE = "9c061c3f"  # the code whose judges forgot every name after any call that replaced something
# an event's keys, as a log's objects repeat them, and the counts a key named for a secret would hide (``max_tokens``
# is a count's: each number is judged by its key's name)
FIELDS = [
    "type", "seq", "ts", "turn", "step", "id", "role", "model", "tool_call_id", "name", "status", "exit_code",
    "duration_ms", "cwd", "path", "timeout", "session_id", "parent_id", "request_id", "finish_reason", "attempt",
    "retry_after", "bytes", "lines", "truncated", "api_version",
]  # fmt: skip
USAGE = ["input_tokens", "output_tokens", "cache_read_tokens", "max_tokens", "prompt_tokens", "completion_tokens",
         "total_tokens"]  # fmt: skip


def events(n: int, secret: bool) -> list[dict[str, Any]]:
    """``n`` events of the same keys, each with a command that holds a password (``secret``) or only the key word."""
    out = []
    for i in range(n):
        command = (
            f"export DB_PASSWORD=Sup3r{i:05d}Secret && make test" if secret else "grep -rn password: config/"
        )
        event: dict[str, Any] = {field: f"{field}-value" for field in FIELDS}
        event.update(seq=i, turn=i // 10, exit_code=0, duration_ms=1000 + i, bytes=4096 + i)
        event["arguments"] = {"command": command, "timeout": 120_000}
        event["usage"] = {field: 1000 + i for field in USAGE}
        out.append(event)
    return out


def module_at(rev: str) -> types.ModuleType:
    """``core/export/redact.py`` as it was at ``rev``, loaded as a module of its own."""
    source = subprocess.run(
        ["git", "-C", ROOT, "show", f"{rev}:core/export/redact.py"], capture_output=True, check=True
    ).stdout
    module = types.ModuleType(f"redact_at_{rev}")
    sys.modules[module.__name__] = module
    exec(compile(source, f"{rev}:core/export/redact.py", "exec"), module.__dict__)  # noqa: S102  # (the repo's code)
    return module


def measure(module: types.ModuleType, log: list[dict[str, Any]], repeat: int) -> tuple[float, int]:
    """The best CPU time to walk every event of ``log`` with a redactor of ``module``, and the keys a walk of them
    replaced."""
    redactor = module.Redactor(environ={}, home="/home/ann")
    seconds, _ = best_of(lambda: [redactor.walk(event) for event in log], repeat, clock=time.process_time)
    return seconds, redactor.summary()["key"] // repeat


def main(argv: list[str] | None = None) -> None:
    """Measure both logs with both modules and print the JSON, then the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=counts(1), default=2000, help="events of each log (default 2000)")
    parser.add_argument(
        "--repeat", type=counts(1), default=5, help="timed runs of each, best kept (default 5)"
    )
    parser.add_argument(
        "--baseline", default=BASELINE, help=f"the commit to compare with (default {BASELINE})"
    )
    parser.add_argument("--json", action="store_true", help="print the JSON alone")
    args = parser.parse_args(argv)
    baseline = module_at(args.baseline)
    result: dict[str, Any] = {"events": args.events, "baseline": args.baseline}
    rows = []
    for name, secret in (("secretHeavy", True), ("clean", False)):
        log = events(args.events, secret)
        then, then_keys = measure(baseline, log, args.repeat)
        now, now_keys = measure(redact, log, args.repeat)
        if now_keys != then_keys:
            raise SystemExit(f"{name}: the two replaced {now_keys} and {then_keys} keys: not the same work")
        per = 1e6 / args.events
        result[name] = {
            "baselineSeconds": round(then, 4), "seconds": round(now, 4), "ratio": round(now / then, 3),
            "baselineUsPerEvent": round(then * per, 1), "usPerEvent": round(now * per, 1), "replaced": now_keys,
        }  # fmt: skip
        rows.append([name, f"{then * per:.1f}", f"{now * per:.1f}", f"{now / then:.3f}", now_keys])
    table = markdown_table(
        ["log", "baseline us/event", "now us/event", "ratio now / baseline", "replaced"], rows
    )
    emit(result, table, args.json)


if __name__ == "__main__":
    main()
