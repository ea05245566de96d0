"""The plugin and tapedeck name the same place to look for whether a request DSH died running took effect."""

from __future__ import annotations

import json
import subprocess

from core.control.inbox import DSH_OPS
from core.control.outcome import unknown_hint
from tests.dsh.harness import PLUGIN, DshInstall

SCRIPT = """
import { unknownHint } from %s;
process.stdout.write(JSON.stringify(%s.map((op) => unknownHint(op))));
"""


def test_every_op_has_the_hint_tapedeck_gives(dsh: DshInstall) -> None:
    ops: list[str | None] = [*DSH_OPS, None, "bogus"]
    script = SCRIPT % (json.dumps(PLUGIN.as_uri()), json.dumps(ops))
    done = subprocess.run([str(dsh.node), "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [unknown_hint(op) for op in ops]
    assert len({unknown_hint(op) for op in DSH_OPS}) > 1  # op by op, not one hint for all
