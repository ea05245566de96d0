"""A log cut short (truncated in place) while a reading command is still reading it: the command says so and fails,
instead of printing, with exit 0, a report of bytes the file no longer holds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.gen_session import generate
from core.cli import main
from core.log.decoder import LogDecoder
from core.read.load import READ_CHUNK


@pytest.mark.parametrize("command", [["inspect", "--json"], ["events", "--json"], ["surface", "--json"], ["cost"]])
def test_a_log_truncated_during_the_read_is_an_error(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "session.jsonl"
    generate(log, 8 * READ_CHUNK, seed=3, profile="mixed")
    feed, fed = LogDecoder.feed, []

    def cut_after_the_first_chunk(self: LogDecoder, data: bytes) -> object:
        fed.append(len(data))
        if len(fed) == 2:  # another writer truncates the file while the command is between two reads
            os.truncate(log, READ_CHUNK // 2)
        return feed(self, data)

    monkeypatch.setattr(LogDecoder, "feed", cut_after_the_first_chunk)
    assert main([command[0], str(log), *command[1:]]) != 0
    err = capsys.readouterr().err
    assert "truncated" in err and "while it was read" in err, err
    assert len(fed) >= 2  # the cut came mid-read


def test_a_log_that_grows_during_the_read_is_read_as_usual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "session.jsonl"
    generate(log, 4 * READ_CHUNK, seed=3, profile="mixed")
    feed, fed = LogDecoder.feed, []

    def grow(self: LogDecoder, data: bytes) -> object:
        fed.append(len(data))
        if len(fed) == 2:
            with open(log, "ab") as f:
                f.write(b"\n")  # an append (a blank line): the readers take what is there
        return feed(self, data)

    monkeypatch.setattr(LogDecoder, "feed", grow)
    assert main(["inspect", str(log), "--json"]) == 0
