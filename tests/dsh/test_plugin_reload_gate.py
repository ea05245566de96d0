"""A step the pause holds across a plugin reload, driven in one Node process (no DSH): the reload lands while the
old instance's pre-step gate awaits its flush, so the step is held only once the new instance answers.

On a busy machine that flush took long enough for a reload to land in it: the old instance then held the step in a
bridge no one answered for, the new instance's resume released nothing, and the turn waited for ever
(tests/dsh/test_bridge_lifecycle.py's reload test timed out waiting for the rewind that waits for the turn's end).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.dsh.harness import PLUGIN, DshInstall

SCRIPT = """
import { apply } from %s;
const [dir] = %s;
const LIVE = Symbol.for("tapedeck-bridge.instances");
const agent = { id: "s1", status: "running", session: { id: "s1", header: {}, events: [] } };
let endFlush;
const slowFlush = new Promise((resolve) => (endFlush = resolve));
let flushes = 0;
const context = () => {
  const listeners = {};
  return {
    listeners,
    effect() {},
    on(name, fn) { listeners[name] = fn; },
    get: (name) => (name === "sessionPersistence" ? { locate: () => ({ path: `${dir}/session.jsonl` }) } : undefined),
    agents: { list: () => [agent] },
    commands: { register() {} },
    sessions: { flush: async () => { if (++flushes === 1) await slowFlush; } },  // the gate's flush, on a busy machine
    logger: { warn() {} },
  };
};
const later = () => new Promise((resolve) => setTimeout(resolve, 50));

const first = context();
apply(first);
const old = globalThis[LIVE].at(-1);
const oldSession = old.sessions.get("s1");
oldSession.paused = true;  // what a pause op sets
oldSession.saveState();
let ran = false;
first.listeners["agent/pre-step"]({ agent }, async () => "step").then(() => (ran = true));
await later();  // the gate awaits its flush

apply(context());  // the reload: a new instance, then the old one disposed
old.dispose();
const successor = globalThis[LIVE].at(-1).sessions.get("s1");
endFlush();
await later();
const heldWhilePaused = !ran;
const pausedAfterReload = successor.paused;

successor.paused = false;  // what the resume op does
successor.saveState();
successor.release();
for (let i = 0; i < 600 && !ran; i++) await later();  // up to 30 s
process.stdout.write(JSON.stringify({ pausedAfterReload, heldWhilePaused, ranAfterResume: ran }));
"""


def test_a_step_held_by_the_old_instance_during_a_reload_is_released_by_the_new_one_s_resume(
    dsh: DshInstall, tmp_path: Path
) -> None:
    script = SCRIPT % (json.dumps(PLUGIN.as_uri()), json.dumps([str(tmp_path)]))
    done = subprocess.run([str(dsh.node), "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"pausedAfterReload": True, "heldWhilePaused": True, "ranAfterResume": True}
