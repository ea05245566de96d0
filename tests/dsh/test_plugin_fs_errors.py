"""The plugin's word for a failed file operation: what it was doing, on which file, the call, the path the call was
given, and the errno code; each path whole, its terminal controls and line breaks escaped as tapedeck's
``quoted_path`` escapes them (a session directory's name is anybody's)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from core.shared.text import quoted_path
from tests.dsh.harness import PLUGIN, DshInstall

# the bridge's atomic replace of bridge.json onto a directory in its place; an inbox that is not there; an error
# no system call raised
SCRIPT = """
import { fsProblem } from %s;
import fs from "node:fs";
const dir = %s;
const said = [];
try {
  fs.writeFileSync(`${dir}/.bridge.json.7.tmp`, "{}");
  fs.renameSync(`${dir}/.bridge.json.7.tmp`, `${dir}/bridge.json`);
} catch (err) {
  said.push(fsProblem("write", `${dir}/bridge.json`, err));
}
try {
  fs.openSync(`${dir}/control.jsonl`, "r");
} catch (err) {
  said.push(fsProblem("open the control inbox", `${dir}/control.jsonl`, err));
}
said.push(fsProblem("append to the outcomes file", `${dir}/o`, new Error("no\\u001b[2J room")));
process.stdout.write(JSON.stringify(said));
"""


def test_a_file_error_says_what_was_done_on_which_path_and_its_errno_code(dsh: DshInstall, tmp_path: Path) -> None:
    d = tmp_path / "proj\x1b]2;owned\x07\nline"
    (d / "bridge.json").mkdir(parents=True)
    (d / "bridge.json" / "held").touch()  # a directory that is not empty: the rename fails
    script = SCRIPT % (json.dumps(PLUGIN.as_uri()), json.dumps(str(d)))
    done = subprocess.run([str(dsh.node), "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    q = quoted_path(d)
    assert "\x1b" not in q and "\n" not in q
    assert json.loads(done.stdout) == [
        f"cannot write {q}/bridge.json: rename {q}/.bridge.json.7.tmp to {q}/bridge.json failed with EISDIR "
        "(illegal operation on a directory)",
        f"cannot open the control inbox {q}/control.jsonl: open failed with ENOENT (no such file or directory)",
        f"cannot append to the outcomes file {q}/o: no\\u001b[2J room",
    ]
