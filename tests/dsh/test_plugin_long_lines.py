"""The plugin's reader of the outcomes file (``regularLines``): a line longer than the most a line may hold
(``MAX_LINE_BYTES``, as the inbox's) is not gathered whole, however long it grows. It is skipped, named by its
number, and the lines after it are read. A Node process imports the reader from ``core/bridge/tapedeck-bridge.mjs``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.dsh.harness import PLUGIN, DshInstall

SCRIPT = """
import { regularLines } from %s;
const lines = [], long = [];
for (const line of regularLines(process.argv[1], (n) => long.push(n)))
  lines.push(line.length > 100 ? `${line.length} chars` : line);
process.stdout.write(JSON.stringify({ lines, long }));
"""
MAX_LINE_BYTES = 1 << 20


def _read(dsh: DshInstall, file: Path) -> dict[str, list[object]]:
    done = subprocess.run([str(dsh.node), "--input-type=module", "-e", SCRIPT % json.dumps(PLUGIN.as_uri()),
                           str(file)], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_line_past_the_limit_is_skipped_and_named_and_the_rest_read(
    dsh: DshInstall, tmp_path: Path
) -> None:
    file = tmp_path / "control.outcomes.jsonl"
    whole = b"y" * MAX_LINE_BYTES  # as long as a line may be: kept
    file.write_bytes(
        b'{"a":1}\n' + b"x" * (5 * MAX_LINE_BYTES + 7) + b"\n" + whole + b'\n{"b":2}\n' + b"z" * (3 << 20)
    )
    got = _read(dsh, file)
    assert got["lines"] == ['{"a":1}', f"{MAX_LINE_BYTES} chars", '{"b":2}']
    assert got["long"] == [2, 5]  # 5: the last, with no newline after it
