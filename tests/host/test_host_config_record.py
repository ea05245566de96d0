"""The host records the config it runs with, and orders the prompt sections as the seeds do (``promptOrder``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.control.config import CONFIG_EVENT, logged_config, validate_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers.scripted import ScriptedModel
from core.log.vocabulary import HOST_EVENT


def _host(tmp_path: Path, config: dict[str, Any]) -> AgentHost:
    tmp_path.mkdir(exist_ok=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}]}))
    (tmp_path / "ws").mkdir(exist_ok=True)
    return AgentHost.create(tmp_path / "root", ScriptedModel(script), validate_config(config),
                            HostOptions(workspace=tmp_path / "ws"), tasks=["hello"])  # fmt: skip


def test_the_log_holds_the_effective_config(tmp_path: Path) -> None:
    host = _host(tmp_path, {"prolong": {"logWindow": 3}})
    host.run()
    session = host.session
    recorded = logged_config(session.events[s] for s in session.seqs_of((HOST_EVENT, CONFIG_EVENT)))
    assert recorded is not None and recorded.prolong.log_window == 3
    host.close()


def test_prompt_order_moves_the_prolong_section(tmp_path: Path) -> None:
    # Seed 003: "PRO-LONG 提示词 | ctx.systemPrompt.section() | order=150"; seed 001's rewind section is order 151.
    hosts = [_host(tmp_path / "a", {}), _host(tmp_path / "b", {"prolong": {"promptOrder": 160}})]
    default, late = (host.hooks.system_prompt() for host in hosts)
    for host in hosts:
        host.close()
    marker_prolong, marker_rewind = "Session record:", "Checkpoints and folding:"
    assert default.index(marker_prolong) < default.index(marker_rewind)
    assert late.index(marker_prolong) > late.index(marker_rewind)
    assert sorted(default.split("\n\n")) == sorted(late.split("\n\n"))  # same sections, another order
