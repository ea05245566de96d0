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
