"""An in-place upgrade of the plugin while one of its ``td`` commands waits, with the real DSH.

``tapedeck bridge install`` over an older copy a running DSH has loaded writes the new file and names it anew in the
profile patch; DSH imports it and replaces the old instance by one of the new plugin. A ``td`` command of a rewind
given while the agent is busy waits in its handler, in the old instance, for the agent to be idle: the new instance
takes the wait over and applies it, or, when it keeps its state in another form, the rewind is refused saying so.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from core.bridge.files import packaged_fingerprint
from tests.dsh.harness import (
    PLUGIN,
    DshInstall,
    DshWeb,
    ScriptedModel,
    bridge_json,
    final_outcome,
    log_events,
    outcomes,
    send,
    start_session,
    wait_for,
)
from tests.dsh.test_bridge_lifecycle import _installed_world, _tapedeck

STATE_FORMAT = re.compile(rb"const STATE_FORMAT = (\d+);")


def _upgrade_under_a_waiting_rewind(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path, old: bytes
) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """Run the older copy ``old`` in DSH, give a rewind by hand while a turn runs (it waits for idle in the old
    instance), upgrade to the packaged plugin, stop the turn, and return the session directory, the rewind's outcome and what DSH
    answered the command."""
    world = _installed_world(dsh, model, tmp_path)
    web_dir = world.home / "profiles" / "web"
    (web_dir / "tapedeck-bridge.mjs").write_bytes(old)
    patch = web_dir / "cordis.patch.yml"
    patch.write_text(re.sub(r"\?v=[0-9a-f]+", "", patch.read_text()))  # as an older tapedeck named it
    with DshWeb(world) as web, ThreadPoolExecutor(1) as pool:
        sid, d = start_session(world, web, "Upgraded under a rewind: steps=30 sleep=1")
        assert final_outcome(d, send(d, "checkpoint")["id"])["outcome"] == "applied"
        rewind = {"id": "rewind-by-hand", "op": "rewind", "args": {}}
        given = pool.submit(web.command, sid, "/td " + json.dumps(rewind))
        wait_for(lambda: (bridge_json(d) or {}).get("inFlight"), 60, "the rewind waiting for idle")
        assert "fingerprint" not in bridge_json(d)  # type: ignore[operator]
        assert _tapedeck("bridge", "install", str(world.home)).returncode == 0
        wait_for(
            lambda: (bridge_json(d) or {}).get("fingerprint") == packaged_fingerprint(), 60, "the new plugin"
        )
        # the turn ends only now, under the new plugin: the rewind waited through the upgrade
        assert final_outcome(d, send(d, "stop")["id"])["outcome"] == "applied"
        done = final_outcome(d, rewind["id"])
        answer = given.result(timeout=60)
    return d, done, answer


def test_a_rewind_waiting_for_idle_in_the_older_plugin_is_applied_by_the_upgraded_one(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """The older copy keeps its state in the packaged plugin's form: the new instance goes on waiting for the turn
    to end and applies the rewind, once; DSH answers the command with that outcome. The old instance gave up the
    wait when it was replaced, and the rewind was refused ('gave up waiting for the agent to be idle')."""
    old = PLUGIN.read_bytes().replace(b"if (FINGERPRINT) body.fingerprint = FINGERPRINT;", b"")
    d, done, answer = _upgrade_under_a_waiting_rewind(dsh, model, tmp_path, old)
    assert done["outcome"] == "applied" and done["detail"]["markId"] == 1, done
    assert answer["result"]["kind"] == "success" and json.loads(answer["result"]["text"]) == done, answer
    notes = [
        e for e in log_events(d) if e["type"] == "user/message" and "rewound this session" in json.dumps(e)
    ]
    assert len(notes) == 1 and notes[0]["seq"] == done["detail"]["seq"], notes
    assert [o["outcome"] for o in outcomes(d) if o["requestId"] == done["requestId"]] == ["applied"]


def test_a_rewind_waiting_in_an_older_plugin_of_another_state_format_is_refused_saying_so(
    dsh: DshInstall, model: ScriptedModel, tmp_path: Path
) -> None:
    """The older copy keeps its state in another form than the packaged plugin: it cannot drive the new instance's
    state, and refuses the rewind saying why and what to do, never applies it half on one instance's state."""
    packaged = PLUGIN.read_bytes()
    ours = int(STATE_FORMAT.search(packaged).group(1))  # type: ignore[union-attr]
    old = STATE_FORMAT.sub(f"const STATE_FORMAT = {ours + 1};".encode(), packaged).replace(
        b"if (FINGERPRINT) body.fingerprint = FINGERPRINT;", b""
    )
    d, done, answer = _upgrade_under_a_waiting_rewind(dsh, model, tmp_path, old)
    assert done["outcome"] == "rejected", done
    assert "the tapedeck bridge was upgraded while this rewind waited" in done["error"], done
    assert "send it again once the agent is idle" in done["error"], done
    assert answer["result"]["kind"] == "error" and json.loads(answer["result"]["text"]) == done, answer
    assert not [
        e for e in log_events(d) if e["type"] == "user/message" and "rewound this session" in json.dumps(e)
    ]
