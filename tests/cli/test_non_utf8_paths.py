"""A session under a directory whose name is not UTF-8 (a project directory named for a working directory of
Latin-1 bytes, say): the JSON of the commands that print its path holds it as the escapes Python reads back to
those bytes, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES

CODE = "import sys; from core.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture
def root(tmp_path: Path) -> bytes:
    where = os.path.join(os.fsencode(tmp_path), b"root")
    session = os.path.join(where, b"proj\xff\xfe", b"s1")
    os.makedirs(session)
    shutil.copy(FIXTURES / "multi-turn.session.jsonl", os.path.join(session, b"session.jsonl"))
    return where


def _run(*argv: bytes) -> tuple[int, bytes, bytes]:
    env = {**os.environ, "TAPEDECK_INDEX_MIN_BYTES": "0"}  # cache info has an index to list
    done = subprocess.run([sys.executable, "-c", CODE, *argv], capture_output=True, timeout=120, env=env)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("command", [[b"inspect"], [b"fold"], [b"seal"], [b"sessions"], [b"cache", b"info"]])
def test_json_output_names_the_path_in_escapes_that_read_back_to_its_bytes(root: bytes, command: list[bytes]) -> None:
    """orjson refuses a str holding surrogate escapes: each of these ended in a TypeError traceback, exit 1."""
    session = os.path.join(root, b"proj\xff\xfe", b"s1")
    _run(b"inspect", session)  # leaves the index that cache info lists
    code, out, err = _run(*command, root if command == [b"sessions"] else session, b"--json")
    assert (code, b"Traceback" in err) == (0, False), err
    texts = _strings(json.loads(out))
    assert any(b"proj\xff\xfe" in text.encode("utf-8", "surrogateescape") for text in texts)


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


def test_a_note_goes_on_and_lists_from_such_a_session(root: bytes) -> None:
    """The notes' file names hash the log's path, and a pointer names a sidecar by its path: both encoded it as
    UTF-8, so 'note' and 'notes' ended in a UnicodeEncodeError traceback, exit 1."""
    session = os.path.join(root, b"proj\xff\xfe", b"s1")
    assert _run(b"note", session, b"--seq", b"3", b"checked")[0] == 0
    code, out, err = _run(b"notes", session, b"--json")
    assert (code, err) == (0, b"") and "checked" in out.decode()


@pytest.mark.parametrize("fmt", [b"json", b"md", b"html"])
def test_an_export_of_such_a_session_names_its_path_as_the_cli_does(root: bytes, tmp_path: Path, fmt: bytes) -> None:
    """The redaction pass encoded the path as UTF-8: every format ended in a UnicodeEncodeError traceback, exit 1.
    The document is UTF-8, and where it names the path (JSON's session, Markdown's expand hints) the bytes that are
    not UTF-8 are backslash escapes."""
    session = os.path.join(root, b"proj\xff\xfe", b"s1")
    out = os.path.join(os.fsencode(tmp_path), b"out." + fmt)
    code, _, err = _run(b"export", session, b"--format", fmt, b"-o", out)
    assert (code, b"Traceback" in err) == (0, False), err
    text = Path(os.fsdecode(out)).read_bytes().decode()
    if fmt != b"html":  # the page never shows the path
        assert "proj\\xff\\xfe" in (json.loads(text)["session"]["path"] if fmt == b"json" else text)
