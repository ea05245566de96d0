"""The Prolong screen of a session whose workspace is gone (``tapedeck demo`` removes its own): it says so, as
``tapedeck status`` does, where it read ``writable=NO`` and blamed a sandbox plugin for a log file it could not
find."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.widgets import Static

from core.control.config import validate_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers.scripted import ScriptedModel
from tests.tui.screens_policy.harness import PolicyHarness, settle, text
from tui.screens.prolong import ProlongScreen

pytestmark = pytest.mark.anyio
SIZE = (140, 40)


async def test_the_prolong_screen_says_the_workspace_is_gone(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}]}))
    host = AgentHost.create(tmp_path / "root", ScriptedModel(script), validate_config({}),
                            HostOptions(workspace=workspace, progress=lambda _: None), tasks=["hello"])  # fmt: skip
    host.run()
    host.close()
    assert (workspace / "log.txt").is_file()
    shutil.rmtree(workspace)
    app = PolicyHarness(host.writer.path, ProlongScreen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: bool(text(app.screen.query_one("#prolong-report", Static))))
        report = text(app.screen.query_one("#prolong-report", Static))
        assert f"the session's workspace {workspace} is not there any more" in report, report
        assert "writable=" not in report and "sandbox" not in report, report
