"""What lies where a log should be, given to the reading commands: each answers with a message that names the path
and what is wrong with it, exit 2, never a traceback or a wait (the fuzz of the files' bytes is in
``tests/log/test_reader_fuzz.py``; the FIFO, directory and link loop cases in ``tests/cli/test_sessions_cli.py``
and ``tests/cli/test_stderr_escapes.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from tests.conftest import FIXTURES


@pytest.mark.parametrize("command", ["inspect", "events", "sessions", "alerts"])
def test_a_log_named_that_is_a_link_to_nothing_is_named_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """``sessions LINK`` (the fleet and ``watch`` too), LINK a link to a log moved away, said 'no such file or
    directory' of a link that is there, where every other reader names what it points at."""
    link, gone = tmp_path / "session.jsonl", tmp_path / "moved" / "session.jsonl"
    link.symlink_to(gone)
    assert main([command, str(link)]) == 2
    err = capsys.readouterr().err
    assert f"{link}: a link to {gone}, which is not there" in err and "no such file" not in err, err


@pytest.mark.parametrize("command", ["sessions", "alerts"])
def test_a_first_line_past_the_header_limit_is_named_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """A log whose first line is 17 MiB of junk (then a whole session): the listing commands, which read no further
    than a header takes, said 'no complete first line or frame' of a line that is complete."""
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"x" * (17 << 20) + b"\n" + (FIXTURES / "multi-turn.session.jsonl").read_bytes())
    assert main([command, str(log)]) == 2
    err = capsys.readouterr().err
    assert f"{log}: its first line or frame runs past 16 MiB, more than a session header takes" in err, err
    assert "no complete first line" not in err, err
