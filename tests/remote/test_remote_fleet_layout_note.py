"""The fleet table of a root that holds no session says what the directory holds instead and what to pass (one
project's directory: its session directories, or its parent); ``tapedeck sessions`` says so of a remote root too,
but the table did only for a local one, and stood silent over ``host:PATH``. Now it shows the remote note, read
before the table opens (never on the UI thread), in the words ``tapedeck sessions`` uses."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from core.remote.link import link_for
from core.remote.sessions import remote_layout_note
from core.remote.target import parse_remote
from tests.alerts.crafted import HEADER
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


@pytest.mark.anyio
async def test_the_fleet_table_of_a_remote_project_directory_says_what_it_holds(
    sshd: Sshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.remote.sessions
    from tests.tui.pilot import NO_KEYMAP, until
    from tui.app import TapedeckApp
    from tui.screens.fleet import FleetScreen

    sshd.trust()
    project = tmp_path / "sessions" / "--w--"
    log = project / "s-1" / "session.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(json.dumps(HEADER) + "\n")
    remote = f"testbox:{project}"
    expected = remote_layout_note(link_for(parse_remote(remote)), parse_remote(remote), "fleet")  # type: ignore[arg-type]
    assert (
        expected is not None
        and f"`tapedeck fleet testbox:{tmp_path / 'sessions'}` every project's" in expected
    )
    on_ui: list[str] = []
    noted, running = core.remote.sessions.remote_layout_note, threading.Event()

    def watched(*args: object, **kwargs: object) -> str | None:
        if threading.current_thread() is threading.main_thread() and running.is_set():
            on_ui.append(str(args[1]))
        return noted(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(core.remote.sessions, "remote_layout_note", watched)
    app = TapedeckApp(Path(remote), keymap_file=NO_KEYMAP, fleet_roots=[Path(remote)])
    running.set()  # from here on the test's thread is the app's
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.loaded)
        screen = app.screen
        assert isinstance(screen, FleetScreen) and not screen.shown
        status = str(screen.query_one("#fleet-status").render()).replace("\n", "")
        assert expected in status, status
    assert on_ui == []
