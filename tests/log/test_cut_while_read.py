"""A log cut short (truncated in place) while a reading command is still reading it: the command says so and fails,
instead of printing, with exit 0, a report of bytes the file no longer holds."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.gen_session import generate
from core.cli import main
from core.log.decoder import LogDecoder
from core.read.load import READ_CHUNK


def _log_changed_mid_read(path: Path, chunks: int, change: Callable[[], None], monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A generated log of about ``chunks`` reads at ``path``; ``change`` runs between the command's first and second
    read (another writer at work). Returns the sizes the decoder was fed, as the command reads."""
    generate(path, chunks * READ_CHUNK, seed=3, profile="mixed")
    feed, fed = LogDecoder.feed, []

    def fed_then_changed(self: LogDecoder, data: bytes) -> object:
        fed.append(len(data))
        if len(fed) == 2:
            change()
        return feed(self, data)

    monkeypatch.setattr(LogDecoder, "feed", fed_then_changed)
    return fed


@pytest.mark.parametrize("command", [["inspect", "--json"], ["events", "--json"], ["surface", "--json"], ["cost"]])
def test_a_log_truncated_during_the_read_is_an_error(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "session.jsonl"
    fed = _log_changed_mid_read(log, 8, lambda: os.truncate(log, READ_CHUNK // 2), monkeypatch)
    assert main([command[0], str(log), *command[1:]]) != 0
    err = capsys.readouterr().err
    assert "truncated" in err and "while it was read" in err, err
    assert len(fed) >= 2  # the cut came mid-read


def test_a_log_that_grows_during_the_read_is_read_as_usual(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "session.jsonl"

    def append() -> None:
        with open(log, "ab") as f:
            f.write(b"\n")  # an append (a blank line): the readers take what is there

    _log_changed_mid_read(log, 4, append, monkeypatch)
    assert main(["inspect", str(log), "--json"]) == 0
