"""A DSH tool call whose block lost its ``name`` or ``id`` is rebuilt as DSH would post it (the key left out), and
every reader that prints requests says so instead of dying on the missing key (found by ``bench/fuzz.py``:
``export`` died with ``KeyError: 'name'`` in its request section)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from core.cli import main

FIXTURE = Path(__file__).parent.parent / "fixtures" / "dsh" / "bash-spill.session.jsonl"


def _without(tmp_path: Path, key: str) -> Path:
    lines = FIXTURE.read_bytes().splitlines()
    at = next(i for i, line in enumerate(lines) if b'"assistant/message"' in line and b'"tool-call"' in line)
    event = orjson.loads(lines[at])
    del event["data"]["message"]["content"][0][key]
    lines[at] = orjson.dumps(event)
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    return log


@pytest.mark.parametrize("key", ["name", "id"])
@pytest.mark.parametrize(
    "argv",
    [
        ["export", "{log}", "--format", "html", "--turn", "1", "-o", "{out}"],
        ["export", "{log}", "--format", "md", "--turn", "1"],
        ["request", "{log}", "--turn", "1", "--step", "2"],
    ],
)
def test_a_tool_call_without_its_name_or_id_is_printed_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, argv: list[str]
) -> None:
    log = _without(tmp_path, key)
    code = main([a.format(log=log, out=tmp_path / "out.html") for a in argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Traceback" not in captured.err
    if argv[0] == "export" and "md" in argv:
        return  # the Markdown transcript prints no request
    printed = captured.out + ((tmp_path / "out.html").read_text() if argv[0] == "export" else "")
    assert ("→ ?(" if key == "name" else "→ bash(") in printed
