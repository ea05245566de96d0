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
def test_json_output_names_the_path_as_an_export_does(root: bytes, command: list[bytes]) -> None:
    """orjson refuses a str holding surrogate escapes: each of these ended in a TypeError traceback, exit 1; then
    (17c3cb8) they wrote the path as JSON's ``\\udcff`` escapes, which a strict reader (jq, serde) refuses or turns
    into U+FFFD, while an export wrote ``\\xff``. Both write each byte that is not UTF-8 as ``\\xNN`` text now
    (``core.shared.text.path_text``): valid UTF-8 JSON for any reader, the same path in both."""
    session = os.path.join(root, b"proj\xff\xfe", b"s1")
    _run(b"inspect", session)  # leaves the index that cache info lists
    code, out, err = _run(*command, root if command == [b"sessions"] else session, b"--json")
    assert (code, b"Traceback" in err) == (0, False), err
    assert b"\\ud" not in out
    texts = _strings(json.loads(out.decode("utf-8")))
    assert any("proj\\xff\\xfe" in text for text in texts)
    if command == [b"inspect"]:
        exported = _run(b"export", session, b"--format", b"json")[1]
        assert json.loads(out)["path"] == json.loads(exported)["session"]["path"]


def test_an_error_on_stderr_names_the_path_by_the_same_rule(root: bytes) -> None:
    """Python's stderr wrote the surrogate escapes it read the path with as ``\\udcff``, a third spelling."""
    code, _, err = _run(b"inspect", os.path.join(root, b"proj\xff\xfe"))
    assert code == 2 and b"proj\\xff\\xfe" in err and b"\\udc" not in err, err


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


def test_a_text_report_names_the_path_by_the_same_rule(root: bytes) -> None:
    """A text report wrote the path's raw bytes, which no UTF-8 reader shows: a fourth spelling."""
    code, out, err = _run(b"inspect", os.path.join(root, b"proj\xff\xfe", b"s1"))
    assert (code, err) == (0, b"") and b"proj\\xff\\xfe" in out and b"\xff" not in out
