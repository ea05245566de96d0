"""A log line nested as deep as orjson reads (1,024 levels) is read, shown and written back by every reading
command: before, the Python walkers over decoded values (summaries, redaction, header warnings, the standard
encoder) hit the interpreter's 1,000 frames, and orjson, which writes only 254 levels, refused the ``--json``
outputs and the rows' sizes, each a traceback with exit 1."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.cli import main
from core.shared.jsonout import DEEPEST_READ, dumps
from tests.conftest import FIXTURES

COMMANDS = [
    ["events"], ["inspect"], ["inspect", "--json"], ["surface"], ["surface", "--json"], ["fold"], ["seal"],
    ["cost"], ["cost", "--json"], ["request", "--all", "--json"],
    ["export", "--format", "md"], ["export", "--format", "html"], ["export", "--format", "json"],
    ["export", "--format", "md", "--grep", "call"],
]  # fmt: skip

# (line of tool-call-turn.session.jsonl, the path to the value replaced): the header, a packed row's usage, a
# surface op, a source's kind, a tool call's id and arguments, a delta's target
PLACES = [
    (0, ["cwd"]), (0, ["createdAt"]), (1, ["data", "target"]), (5, ["surfaceOp"]), (5, ["data", "content"]),
    (6, ["data", "source", "kind"]), (16, ["data", "chunk", "usage", "inputTokens"]), (19, ["data", "callId"]),
    (19, ["data", "arguments"]),
]  # fmt: skip


def _nest(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def _deepest_at(line: bytes, path: list[Any]) -> bytes:
    """``line`` with the value at ``path`` replaced by the deepest nest orjson still reads there."""
    event = orjson.loads(line)
    holder = event
    for key in path[:-1]:
        holder = holder[key]
    levels = DEEPEST_READ - len(path)
    holder[path[-1]] = orjson.Fragment(b"[" * levels + b"]" * levels)
    deep = orjson.dumps(event)
    orjson.loads(deep)  # still readable
    with pytest.raises(orjson.JSONDecodeError):  # and as deep as it reads
        orjson.loads(deep.replace(b"[]", b"[[]]", 1))
    return deep


@pytest.mark.parametrize(("line", "path"), PLACES, ids=["/".join(map(str, p)) + f"@{n}" for n, p in PLACES])
def test_every_reading_command_takes_the_deepest_line_orjson_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: int, path: list[Any]
) -> None:
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    lines = (FIXTURES / "tool-call-turn.session.jsonl").read_bytes().splitlines()
    lines[line] = _deepest_at(lines[line], path)
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    limit = sys.getrecursionlimit()
    try:
        for command in COMMANDS:
            sys.setrecursionlimit(1000)  # the interpreter's default: the CLI must raise it itself
            argv = [*command, str(log)] + (["-o", str(tmp_path / "out")] if command[0] == "export" else [])
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
                code = main(argv)
            assert code == 0, (command, err.getvalue()[-2000:])
    finally:
        sys.setrecursionlimit(limit)


def test_a_value_deeper_than_orjson_writes_is_written_by_the_standard_encoder() -> None:
    deep = {"a": _nest(600)}
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps(deep)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(5000)
    try:
        assert json.loads(dumps(deep)) == deep and b" " not in dumps(deep)
        assert json.loads(dumps(deep, orjson.OPT_INDENT_2)) == deep and dumps(deep, orjson.OPT_INDENT_2).count(b"\n") > 600
    finally:
        sys.setrecursionlimit(limit)
    shallow = {"a": _nest(200), "b": "ü"}
    assert dumps(shallow) == orjson.dumps(shallow)
