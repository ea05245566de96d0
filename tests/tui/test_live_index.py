"""The TUI's open of a big log goes on from the log's persistent index: the same session, facts and line table as
reading it in full, before and after appends, whichever reader (TUI or CLI) wrote the index."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bench.gen_session import generate
from core.read import index
from core.read.load import load_session
from tests.core.test_index import _state
from tests.tui.pilot import main_screen, make_app, settle
from tui.live import LiveSession, SessionUpdated


@pytest.fixture(autouse=True)
def _every_log_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")


def _open(path: Path) -> tuple[LiveSession, list[object]]:
    """The TUI's loader on ``path`` as a big log (events read back from the file), to the end."""
    messages: list[object] = []
    live = LiveSession(path, messages.append, follow=False, retain_bytes=1)
    live.run()
    assert live.ready and live.error is None
    return live, messages


def _facts(live: LiveSession) -> bytes:
    return orjson.dumps(live.facts.state())


@pytest.mark.parametrize(("profile", "zstd"), [("mixed", False), ("short-turns", False), ("mixed", True)])
def test_a_reopen_is_a_full_open(tmp_path: Path, profile: str, zstd: bool) -> None:
    path = tmp_path / f"session.jsonl{'.zstd' if zstd else ''}"
    generate(path, 200_000, seed=6, profile=profile, zstd=zstd)
    cold, _ = _open(path)
    assert index.index_path(path).is_file()
    warm, messages = _open(path)
    loaded = [m for m in messages if isinstance(m, SessionUpdated) and m.reset]
    assert loaded[-1].end == warm.session.next_seq == cold.session.next_seq
    assert _state(warm.session) == _state(cold.session) == _state(load_session(path, retain=False, readback=True))
    assert _facts(warm) == _facts(cold)
    assert [warm.event(seq) for seq in range(0, warm.count, 97)] == [cold.event(seq) for seq in range(0, cold.count, 97)]


def test_appends_after_the_index_and_an_index_the_cli_wrote(tmp_path: Path) -> None:
    full = tmp_path / "full.jsonl"
    generate(full, 300_000, seed=2, profile="dsh-plain")
    data = full.read_bytes()
    path = tmp_path / "session.jsonl"
    cut = data.index(b"\n", len(data) // 2) + 1
    path.write_bytes(data[:cut])
    load_session(path, retain=False, index=True)  # the CLI writes the index
    path.write_bytes(data)  # the same file, grown
    warm, _ = _open(path)
    cold, _ = _open(full)
    assert _state(warm.session) == _state(cold.session)
    assert _facts(warm) == _facts(cold)
    assert _state(load_session(path, retain=False, index=True)) == _state(cold.session)  # the TUI's index


@pytest.mark.anyio
async def test_the_app_reopens_a_big_log_to_the_same_screen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tui.live

    monkeypatch.setattr(tui.live, "RETAIN_BYTES", 1)  # read back from the file, as a huge log is
    path = tmp_path / "session.jsonl"
    generate(path, 150_000, seed=12, profile="short-turns")

    async def screen_text() -> tuple[int, list[str]]:
        """The event count and the event list's rows as the app shows them once loaded."""
        app = make_app(path)
        async with app.run_test(size=(150, 40)) as pilot:
            await settle(pilot)
            screen = main_screen(app)
            assert screen is not None and app.live is not None and app.live.ready
            events = screen.events
            return app.live.count, [events.render_line(y).text for y in range(events.size.height)]

    cold = await screen_text()
    assert index.index_path(path).is_file()
    warm = await screen_text()
    assert warm == cold and sum(bool(row.strip()) for row in cold[1]) > 10
