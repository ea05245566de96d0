"""Nothing a log holds reaches a terminal as a control: a Hypothesis property over the CLI's text printers. Each
example appends hostile text (escape sequences, C0 and C1 controls, a carriage return, BiDi overrides and
isolates) to every string of one line of a real DSH log (its type too, or not), then runs every reading command
with its stdout and stderr a terminal: neither may carry one of those characters (each is drawn as a picture, or
in JSON written as its escape)."""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cli import main
from core.shared.jsonout import allow_deepest_walks
from tests.conftest import FIXTURES

LINES = (FIXTURES / "tool-call-turn.session.jsonl").read_bytes().splitlines()
# what a terminal acts on: C0 but tab and newline, DEL, C1, the BiDi embeddings, overrides and isolates
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
PIECES = ["\x1b]52;c;cHduZWQ=\x07", "\x1b[2J", "\x1b]2;title\x1b\\", "\x9b31m", "\x9d0;t\x9c", "\r", "\x85", "\x00",
          "\u202e", "\u2067", "\u202a", "\u2069", "\x7f", "\x08", "ok", " ", "\n", "é", "\u2028"]  # fmt: skip
allow_deepest_walks()  # as main does: Hypothesis warns of a recursion limit changed inside an example
HOSTILE = st.lists(st.one_of(st.sampled_from(PIECES), st.characters(max_codepoint=0x206F)), min_size=1, max_size=8)


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _appended(value: Any, text: str, typed: bool, key: str | None = None) -> Any:
    """``value`` with ``text`` after each of its strings, an event's type only when ``typed``."""
    if isinstance(value, str):
        return value + text if typed or key != "type" else value
    if isinstance(value, list):
        return [_appended(item, text, typed) for item in value]
    if isinstance(value, dict):
        return {k: _appended(item, text, typed, k) for k, item in value.items()}
    return value


def _commands(log: str, root: str) -> list[list[str]]:
    return [
        ["events", log], ["inspect", log], ["surface", log], ["request", log, "--all"],
        ["request", log, "--turn", "1", "--step", "1"], ["diff", log, "--turn", "1", "--step", "2"], ["cost", log],
        ["seal", log], ["fold", log], ["recall", "turn", log, "1"], ["recall", "step", log, "1", "1"],
        ["recall", "search", log, "ok"], ["expand", log, "--turn", "1", "--step", "1"], ["alerts", log],
        ["sessions", root], ["export", log, "--format", "md"], ["control", log, "pause"], ["cache", "info", log],
        ["events", log, "--json"], ["inspect", log, "--json"], ["surface", log, "--json"], ["sessions", root, "--json"],
        ["request", log, "--all", "--json"], ["cost", log, "--json"], ["fold", log, "--json"], ["alerts", log, "--json"],
    ]  # fmt: skip


@settings(max_examples=25, derandomize=True)
@given(st.integers(0, len(LINES) - 1), HOSTILE.map("".join), st.booleans())
def test_no_text_printer_writes_a_logs_controls_to_a_terminal(line: int, text: str, typed: bool) -> None:
    lines = list(LINES)
    lines[line] = orjson.dumps(_appended(orjson.loads(lines[line]), text, typed))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "root")
        log = root / "--w--" / "s1" / "session.jsonl"
        log.parent.mkdir(parents=True)
        log.write_bytes(b"\n".join(lines) + b"\n")
        for argv in _commands(str(log), str(root)):
            out, err = _Terminal(), _Terminal()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                main(argv)
            for name, written in (("stdout", out.getvalue()), ("stderr", err.getvalue())):
                found = CONTROL.search(written)
                assert found is None, (argv[0], name, written[max(0, found.start() - 80) : found.end() + 20])


# what keeps the log's bytes when piped, by design (docs/cli.md): the pages the model gets (recall, expand), the
# request's messages, an export's transcript
VERBATIM = ("request", "recall", "expand", "export")


def test_no_report_writes_a_logs_controls_to_a_pipe(tmp_path: Path) -> None:
    """Piped, a report is no terminal's to draw: inspect's header, cost's unpriced model, sessions' outcome column
    wrote what the log held (an escape sequence raw, a newline forging a line; found running every command piped),
    and sessions' title column broke its row in two at a newline in the title.
    One log whose every string ends in hostile text: no command but those that keep the model's bytes writes one
    of those characters to a stdout or stderr that is no terminal."""
    hostile = "\x1b]52;c;cHduZWQ=\x07\nforged\u202e\r\x9b"
    root = tmp_path / "root"
    log = root / "--w--" / "s1" / "session.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"".join(orjson.dumps(_appended(orjson.loads(line), hostile, False)) + b"\n" for line in LINES))
    for argv in _commands(str(log), str(root)):
        if argv[0] in VERBATIM:
            continue
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(argv)
        for name, written in (("stdout", out.getvalue()), ("stderr", err.getvalue())):
            found = CONTROL.search(written)
            assert found is None, (argv, name, written[max(0, found.start() - 80) : found.end() + 20])
            assert "\nforged" not in written, (argv, name, written)  # no line of the log's forges one of the report
