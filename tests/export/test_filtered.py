"""An export of the TUI's filtered view: the rows the filter lets through (``core.read.event_filter``, the TUI's own
filter), the filter named in the export, and no link or note pointing at a row left out."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.cli import main
from core.export.build import ExportOptions
from core.export.redact import Redactor
from core.export.write import export
from core.read.event_filter import EventFilter


@pytest.fixture
def log(log: Path) -> Path:
    """The copied fixture with three notes."""
    for seq, text in ((65, "the result"), (4, "the task"), (30, "a delta")):
        assert main(["note", str(log), "--seq", str(seq), text]) == 0
    return log


def _export(log: Path, fmt: str, flt: EventFilter | None) -> tuple[str, dict]:
    out = io.BytesIO()
    doc = export(log, out, fmt, ExportOptions(filter=flt))
    return out.getvalue().decode(), doc


def test_a_filtered_export_lists_the_rows_the_filter_lets_through(log: Path) -> None:
    """The TUI's filter as an option of the export: only the rows it lets through, each as in the whole export, the
    filter and the rows it left out named; a note on a row left out is on no row."""
    whole = orjson.loads(_export(log, "json", None)[0])
    text, _ = _export(log, "json", EventFilter.parse("tool/", "", "", False, ""))
    doc = orjson.loads(text)
    assert [r["seq"] for r in doc["events"]] == [64, 65]
    assert doc["events"] == [r for r in whole["events"] if r["seq"] in (64, 65)]
    assert doc["rows"] == 2 and doc["filter"] == {"text": "type tool/", "rowsLeftOut": whole["rows"] - 2}
    assert whole["filter"] is None
    assert {n["seq"]: n["row"] for n in doc["notes"]} == {4: None, 30: None, 65: 65}


def test_an_inactive_filter_exports_every_row_and_leaves_the_caller_s_options_as_given(log: Path) -> None:
    inactive = EventFilter.parse("", "", "", False, "")
    options = ExportOptions(filter=inactive)
    out = io.BytesIO()
    export(log, out, "json", options)
    assert orjson.loads(out.getvalue()) == orjson.loads(_export(log, "json", None)[0])
    assert options.filter is inactive


@pytest.mark.parametrize(
    ("flt", "rows"),
    [
        (EventFilter.parse("!assistant/chunk", "", "", False, ""), 17),  # no stream's row
        (EventFilter.parse("", "", "", False, '"OT"'), 2),  # a delta of each stream: the two streams' rows
        (EventFilter.parse("", "bash", "", False, ""), 3),  # the message that called, the call, its result
        (EventFilter.parse("", "", "1", False, ""), 18),  # every row of turn 1
    ],
)  # fmt: skip
def test_a_stream_s_row_is_listed_when_one_of_its_deltas_passes(log: Path, flt: EventFilter, rows: int) -> None:
    """As the TUI lists a stream's row when any of its deltas passes the filter, so does the export."""
    doc = orjson.loads(_export(log, "json", flt)[0])
    assert doc["rows"] == len(doc["events"]) == rows
    if flt.regex:
        assert [r["seq"] for r in doc["events"]] == [9, 68]


def test_a_filtered_html_page_names_the_filter_and_links_only_rows_it_lists(log: Path) -> None:
    """The header names the filter and how many rows it left out; the surface, the request, the notes and the marks
    link only to rows the page lists (the others' seqs are plain text), so no anchor leads nowhere."""
    page, _ = _export(log, "html", EventFilter.parse("tool/", "", "", False, ""))
    ids = set(re.findall(r'<li id="e(\d+)"', page))
    assert ids == {"64", "65"}
    assert set(re.findall(r'href="#e(\d+)"', page)) <= ids
    assert "<tr><th>filter</th><td>type tool/ (17 rows left out)</td></tr>" in page
    assert "#4 (its row left out by the filter)" in page and "not in this log" not in page


def test_a_filtered_markdown_names_the_filter_and_the_notes_on_rows_left_out(log: Path) -> None:
    """The Markdown's head names the filter; a note on a row the filter left out is listed after the rows as such,
    not as a seq the log does not have."""
    text, _ = _export(log, "md", EventFilter.parse("tool/", "", "", False, ""))
    assert "- filter: type tool/ (17 rows left out)" in text
    assert "(not in this log)" not in text
    assert "> 📝 **note on seq 4 (its row left out by the filter):** the task" in text, text


def test_the_cli_exports_with_the_tui_s_filter(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``export --type/--tool/--turns/--errors/--grep`` take the TUI filter's fields: the same rows as the filter."""
    capsys.readouterr()
    assert main(["export", str(log), "--format", "json", "--type", "tool/", "--grep", "SNAPSHOT"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert [r["seq"] for r in doc["events"]] == [64, 65]
    assert doc["filter"]["text"] == "type tool/, /SNAPSHOT/"
    assert "exported 2 of 19 rows (filter: type tool/, /SNAPSHOT/; 17 left out)" in out.err
    assert main(["export", str(log), "--format", "json", "--turns", "2-"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 0
    assert main(["export", str(log), "--format", "json", "--grep", "("]) == 2
    assert "regex '(' does not compile" in capsys.readouterr().err


def test_the_summary_line_quotes_the_filter(log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The stderr line named the filter raw: a ``--tool`` or ``--grep`` a script pasted from a log's text wrote its
    escape sequence to the terminal, its line break a second line. It is quoted as the rest of the line is."""
    capsys.readouterr()
    argv = ["export", str(log), "-o", str(tmp_path / "x.json"), "--tool", "b\x1b[2Jx", "--grep", "SNAP\nSHOT"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "(filter: tool b\\u001b[2Jx, /SNAP\\nSHOT/; 19 left out)" in err, err


def test_the_summary_line_names_a_long_filter_whole(log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The stderr line cut the filter at 80 characters: a ``--grep`` of more lost its closing ``/``, and what it
    showed (``/SNAPSHOT|xxx…``) read as another pattern, ``…`` its own; after a long ``--type`` list the regex
    went from the line. The operator's filter is named whole, as the export's header names it."""
    pattern = "SNAPSHOT|" + "x" * 90
    capsys.readouterr()
    assert main(["export", str(log), "-o", str(tmp_path / "x.json"), "--tool", "t" * 90, "--grep", pattern]) == 0
    err = capsys.readouterr().err
    assert f"(filter: tool {'t' * 90}, /{pattern}/; " in err and f"--tool '{'t' * 90}' names no tool" in err, err


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_a_redacted_export_redacts_the_filter_it_names(log: Path, fmt: str) -> None:
    """The filter's text went into a redacted export's header as typed: a key or a home directory in a regex was
    shared with the page."""
    flt = EventFilter.parse("", "", "", False, "SNAPSHOT|/home/alice/proj|sk-abcdef1234567890abcdef")
    out = io.BytesIO()
    doc = export(log, out, fmt, ExportOptions(filter=flt, redactor=Redactor(environ={}, home="/home/alice")))
    text = out.getvalue().decode()
    assert "alice" not in text and "sk-abcdef" not in text
    assert doc["filter"]["text"] == "/SNAPSHOT|~/proj|[redacted key]/"


def test_the_filter_in_a_markdown_head_is_shown_as_typed(log: Path) -> None:
    """A regex is no Markdown: ``x*SNAPSHOT*`` in the head's filter line came out as emphasis on GitHub, ``<b>`` as
    the start of raw HTML."""
    text, _ = _export(log, "md", EventFilter.parse("", "", "", False, "x*SNAPSHOT*|<b>"))
    assert r"- filter: /x\*SNAPSHOT\*\|\<b\>/ (" in text, text[:600]


def test_a_filter_that_asks_for_deltas_lists_each_delta_as_the_tui_does(log: Path) -> None:
    """The type ``assistant/chunk`` makes the TUI list every delta as its own row; the export listed the stream's
    one row instead, so the page had two rows where the operator saw 95."""
    doc = orjson.loads(_export(log, "json", EventFilter.parse("assistant/chunk", "", "", False, ""))[0])
    assert [r["seq"] for r in doc["events"]] == [*range(9, 63), *range(68, 101)]
    assert all("deltas" not in r and r["type"] == "assistant/chunk" for r in doc["events"])
    doc = orjson.loads(_export(log, "json", EventFilter.parse("assistant/chunk", "", "", False, '"OT"'))[0])
    assert [r["seq"] for r in doc["events"]] == [40, 55, 79]


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_a_grep_for_a_home_path_matches_the_log_and_the_export_shows_it_redacted(tmp_path: Path, fmt: str) -> None:
    """The filter is the TUI's, so it reads the log as it is: ``--grep /home/alice`` lists the rows whose text holds
    that path (the rows an export without redaction lists) and the redacted export shows them, and the filter, with
    ``~`` for it; a grep for the redacted text (``~/proj``) finds nothing, as in the TUI."""
    from tests.export.planted import plant

    log = plant(tmp_path / "p.jsonl", "look at /home/alice/proj/main.py", "cat /home/alice/proj/a.py: ok", "done")
    redactor = Redactor(environ={}, home="/nonexistent-home")
    grep = EventFilter.parse("", "", "", False, "/home/alice/proj")
    plain = orjson.loads(_export(log, "json", grep)[0])
    assert len(plain["events"]) == 2
    out = io.BytesIO()
    doc = export(log, out, fmt, ExportOptions(filter=grep, redactor=redactor))
    text = out.getvalue().decode()
    assert "alice" not in text and text.count("~/proj") >= 3, text  # two rows and the filter
    assert doc["filter"] == {"text": "/~/proj/", "rowsLeftOut": plain["filter"]["rowsLeftOut"]}
    if fmt == "json":
        assert [r["seq"] for r in orjson.loads(text)["events"]] == [r["seq"] for r in plain["events"]]
    tilde = EventFilter.parse("", "", "", False, "~/proj")
    assert export(log, io.BytesIO(), fmt, ExportOptions(filter=tilde, redactor=redactor))["shown"] == 0


@pytest.mark.parametrize("option", ["--grep", "--tool", "--type"])
def test_a_filter_value_that_is_not_utf8_is_refused_in_one_line(
    log: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bytes that are no UTF-8 (the shell passes them as lone surrogates) crashed the export naming its filter."""
    capsys.readouterr()
    assert main(["export", str(log), "--format", "json", option, "tool\udcff"]) == 2
    out = capsys.readouterr()
    assert out.err == f"tapedeck: {option} is not valid UTF-8 (check the terminal's encoding)\n"
    assert out.out == ""


def _grepped(
    tmp_path: Path, fmt: str, regex: str, user: str, result: str
) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """The planted log with ``user`` in its prompt and ``result`` as its tool result, exported as ``fmt`` through
    ``--grep regex`` with redaction on: the export's summary, its text, and that filter's export as JSON without."""
    from tests.export.planted import plant

    log = plant(tmp_path / "p.jsonl", user, result, "done")
    grep = EventFilter.parse("", "", "", False, regex)
    plain = orjson.loads(_export(log, "json", grep)[0])
    out = io.BytesIO()
    doc = export(log, out, fmt, ExportOptions(filter=grep, redactor=Redactor(environ={}, home="/nonexistent-home")))
    return doc, out.getvalue().decode(), plain


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
@pytest.mark.parametrize("regex", ["alice", "SNAPSHOT_OK|hunter2"])
def test_a_grep_that_found_only_what_redaction_replaced_is_not_shown(tmp_path: Path, fmt: str, regex: str) -> None:
    """``--grep alice`` lists the rows that hold ``/home/alice``, whose export shows ``~``: the filter's text, which
    no pattern redacts, named the user the export hides (and ``--grep hunter2`` a password). A regex that found in a
    row listed only what redaction replaced there is shown as ``[redacted]``; the rows stay the log's."""
    doc, text, plain = _grepped(tmp_path, fmt, regex, "look at /home/alice/proj", "password = 'hunter2'")
    assert "alice" not in text and "hunter2" not in text
    assert doc["filter"] == {"text": "/[redacted]/", "rowsLeftOut": plain["filter"]["rowsLeftOut"]}
    assert doc["rows"] == len(plain["events"]) > 0


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
@pytest.mark.parametrize(("regex", "shown"), [
    ("ls -l|hunter2", "/[redacted]/"), ("hunter2|ls -l", "/[redacted]/"), ("alice|/home/alice", "/[redacted]/"),
    ("ls -l|/home/alice/proj", "/ls -l|~/proj/"), ("password = .hunter", "/[redacted]/"), ("ls -l|pass", "/ls -l|pass/"),
])  # fmt: skip
def test_a_grep_whose_alternative_found_a_secret_in_a_row_that_shows_another_is_not_shown(
    tmp_path: Path, fmt: str, regex: str, shown: str
) -> None:
    """``--grep 'ls -l|hunter2'`` lists the row that holds both (the filter reads the log as it is), whose export
    shows ``ls -l`` and the password redacted: the regex was judged by the row as shown, where ``ls -l`` still
    matched, so the header named ``hunter2``. What the regex found in the log but not in the row as shown is what
    redaction replaced: the regex is hidden when it names that (or the secret was only one in its context), and
    shown redacted when redaction replaces what it names (``/home/alice/proj``: ``~/proj``)."""
    doc, text, plain = _grepped(tmp_path, fmt, regex, "run ls -l in /home/alice/proj", "ls -l\npassword = 'hunter2'")
    assert "alice" not in text and "hunter2" not in text and "hunter" not in text
    assert doc["filter"] == {"text": shown, "rowsLeftOut": plain["filter"]["rowsLeftOut"]}
    assert doc["rows"] == len(plain["events"]) > 0


@pytest.mark.parametrize("types", ["user/message", "user/,assistant/message", "tool/result"])
def test_a_filtered_html_page_links_the_surface_rows_of_the_rows_it_lists(log: Path, types: str) -> None:
    """The surface table's seq links to the node's row where the page lists it: a filtered page showed every one as
    plain text, its row listed or not (the row was made after the node's surface row, so not listed yet)."""
    page, _ = _export(log, "html", EventFilter.parse(types, "", "", False, ""))
    ids = set(re.findall(r'<li id="e(\d+)"', page))
    surface = page[page.index('<h2 id="surface">') :]
    surface = surface[: surface.index("</table>")]
    cells = re.findall(r'<tr><td>(?:<a href="#e(\d+)">#\d+</a>|#(\d+))</td>', surface)
    linked = {a for a, _ in cells if a}
    assert cells and linked == {a or b for a, b in cells} & ids and linked, (ids, cells)


@pytest.mark.parametrize(
    ("fmt", "types", "at", "keys"),
    [
        ("json", "", None, 5), ("html", "", None, 5), ("md", "", None, 2), ("md", "", 66, 3),
        ("json", "user/", None, 3), ("html", "user/", None, 3), ("md", "user/", None, 1),
    ],
)  # fmt: skip
def test_the_redaction_summary_counts_what_the_file_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, types: str, at: int | None, keys: int
) -> None:
    """The summary counted every redaction the pass made: the rows a filter left out, and in the Markdown the
    request's messages, the surface (shown only at a moment) and the rows past its budget, none of which the file
    holds. It counts each place the file shows the secret: the tool result's row, the note on it (under its row,
    or listed on its own), its surface row and its request message where the format shows them."""
    from tests.export.planted import plant

    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    log = plant(tmp_path / "p.jsonl", "deploy it", "ok\npassword = 'hunter2pw'\n", "done")
    assert main(["note", str(log), "--seq", "65", "it printed password = 'notepw123'"]) == 0
    flt = EventFilter.parse(types, "", "", False, "") if types else None
    out = io.BytesIO()
    doc = export(log, out, fmt, ExportOptions(at=at, filter=flt, redactor=Redactor(environ={}, home="/nonexistent")))
    text = out.getvalue().decode()
    assert "hunter2pw" not in text and "notepw123" not in text
    assert doc["redaction"] == {"key": keys, "env": 0, "email": 0, "home": 0}
    head = {"json": f'"key": {keys},', "html": f"redacted: {keys} key,", "md": f"- redacted: {keys} key,"}[fmt]
    assert head in text


def _streamed(tmp_path: Path, pieces: list[str]) -> Path:
    """The fixture with its first stream deltas made text deltas of ``pieces``, in order."""
    lines = [orjson.loads(line) for line in (Path(__file__).parents[1] / "fixtures/dsh/tool-call-turn.session.jsonl")
             .read_bytes().splitlines()]  # fmt: skip
    chunks = [item for item in lines if item.get("type") == "assistant/chunk"]
    for item, piece in zip(chunks, pieces, strict=False):
        item["data"]["chunk"] = {"type": "text-delta", "index": 0, "text": piece}
    log = tmp_path / "streamed.jsonl"
    log.write_bytes(b"\n".join(orjson.dumps(item) for item in lines) + b"\n")
    return log


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
@pytest.mark.parametrize("grep", ["", "hunter2pw|LmN0pQ"])
def test_a_secret_the_deltas_of_a_stream_cut_is_redacted_in_each_delta_s_row(
    tmp_path: Path, fmt: str, grep: str
) -> None:
    """``--type assistant/chunk`` lists each delta as a row of its own, and each was redacted alone: a model
    streams a few characters at a time, so a password after ``DB_PASSWORD=`` in the next delta, or a key's
    tail after its ``sk-proj-``, went out as they were. The deltas of a stream are now redacted as the text
    they make together: each row shows its part of that text, the replacement where the secret starts; the
    filter still reads the log as it is."""
    log = _streamed(tmp_path, ["run with DB_PASSWORD=", "hunter2pw, and key sk-proj-", "Zq81xVb2LmN0pQr5StUv7WxYz now"])
    flt = EventFilter.parse("assistant/chunk", "", "", False, grep)
    plain = orjson.loads(_export(log, "json", flt)[0])
    out = io.BytesIO()
    doc = export(log, out, fmt, ExportOptions(filter=flt, redactor=Redactor(environ={}, home="/nonexistent")))
    text = out.getvalue().decode()
    assert "hunter2pw" not in text and "LmN0pQ" not in text
    assert doc["rows"] == len(plain["events"]) > 0
    assert doc["redaction"]["key"] == (0 if fmt == "md" else 2)  # a transcript shows no delta
    if grep:
        assert doc["filter"]["text"] == "type assistant/chunk, /[redacted]/"
    elif fmt == "json":
        deltas = [r["summary"] for r in orjson.loads(text)["events"] if r["summary"].startswith("text-delta")]
        assert deltas[:3] == ["text-delta 'run with DB_PASSWORD='", "text-delta '[redacted key], and key [redacted key]'",
                          "text-delta ' now'"]  # fmt: skip


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
@pytest.mark.parametrize(("grep", "shown"), [("hunter2pw", "/[redacted]/"), ("run with", "/run with/")])
def test_a_grep_that_found_a_secret_only_in_a_stream_s_deltas_is_not_shown(
    tmp_path: Path, fmt: str, grep: str, shown: str
) -> None:
    """A stream's row is listed when one of its deltas passes; its row shows none of their text, so nothing
    judged the regex by what it found there: ``--grep hunter2pw`` on a stream that never became a message (cut
    short) named the password in the header. The deltas are judged as their rows would show them redacted."""
    log = _streamed(tmp_path, ["run with DB_PASSWORD=", "hunter2pw and", " more"])
    flt = EventFilter.parse("", "", "", False, grep)
    out = io.BytesIO()
    doc = export(log, out, fmt, ExportOptions(filter=flt, redactor=Redactor(environ={}, home="/nonexistent")))
    assert "hunter2pw" not in out.getvalue().decode()
    assert doc["rows"] == 1 and doc["filter"]["text"] == shown


def test_stderr_counts_one_row_as_one_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A filter that lets one row through said ``exported 1 rows``."""
    log = Path(__file__).parents[1] / "fixtures/dsh/tool-outcome-unknown.session.expected.jsonl"
    capsys.readouterr()
    assert main(["export", str(log), "--errors", "-o", str(tmp_path / "x.json")]) == 0
    assert f"exported 1 of 21 rows (filter: errors; 20 left out) to {tmp_path / 'x.json'} (" in capsys.readouterr().err
    assert main(["export", str(log), "--errors", "-o", str(tmp_path / "x.md")]) == 0
    assert f"exported 1 of 21 rows (filter: errors; 20 left out) to {tmp_path / 'x.md'} (" in capsys.readouterr().err


def _judged_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The judging of a listed stream's deltas as it was: each delta read back by seq and redacted."""
    import core.export.build as build

    monkeypatch.setattr(build, "_read_range", lambda session, start, end: [session.events[at] for at in range(start, end)])
    monkeypatch.setattr(build, "_deltas_clean", lambda redactor, events: False)


@pytest.mark.parametrize("grep", ["e", ".", "alice", "Zq81", "hunter2pw|LmN0pQ", "k-proj"])
def test_a_grep_judges_streams_as_redacting_every_delta_does(
    tmp_path: Path, grep: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deltas of a listed stream are redacted only when the screen finds something in them or in the text
    each block's deltas make together (secrets cut anywhere: a key's ``s|k-``, a home's ``/ho|me/``): every format
    is byte for byte the export that reads back and redacts every delta, on a generated log too."""
    from bench.gen_session import generate

    mixed = tmp_path / "mixed.jsonl"
    generate(mixed, 600_000, seed=3, profile="mixed")
    logs = [mixed, _streamed(tmp_path, ["cd /ho", "me/alice/src and s", "k-proj-Zq81xVb2LmN0pQr5StUv7WxYz", " ok"])]
    (tmp_path / "b").mkdir()
    logs.append(_streamed(tmp_path / "b", ["DB_PASSWORD=", "hunter2pw", " e"]))
    for log in logs:
        for fmt in ("json", "md", "html"):
            outs = []
            for exact in (False, True):
                with monkeypatch.context() as patch:
                    if exact:
                        _judged_exactly(patch)
                    out = io.BytesIO()
                    options = ExportOptions(filter=EventFilter.parse("", "", "", False, grep),
                                            redactor=Redactor(environ={}, home="/home/alice"))  # fmt: skip
                    doc = export(log, out, fmt, options)
                    outs.append((out.getvalue(), doc["filter"], doc["redaction"]))
            assert outs[0] == outs[1], (log, fmt)


def test_a_grep_reads_back_and_redacts_no_delta_of_a_stream_with_nothing_to_redact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``export --grep e`` of a 30 MB log took 2.5 times the CPU it did before the regex was judged by the deltas
    of the streams it lists: each delta was read back by seq and redacted, though nearly none holds anything to
    redact. They are read in one sweep and redacted only when the screen finds something in them."""
    import core.export.build as build
    from core.log.linestore import LineStore

    log = _streamed(tmp_path, ["here is ", "the answer", " you wanted"])
    counted = {"redacted": 0, "read back": 0}
    redacted, raw = build._deltas_redacted, LineStore.raw

    def count(name: str, f: Any) -> Any:
        def counting(*args: Any) -> Any:
            counted[name] += 1
            return f(*args)

        return counting

    monkeypatch.setattr(build, "_deltas_redacted", count("redacted", redacted))
    monkeypatch.setattr(LineStore, "raw", count("read back", raw))
    plain = io.BytesIO()
    export(log, plain, "json", ExportOptions(redactor=Redactor(environ={}, home="/nonexistent")))
    before = counted["read back"]
    out = io.BytesIO()
    flt = EventFilter.parse("", "", "", False, "e")
    doc = export(log, out, "json", ExportOptions(filter=flt, redactor=Redactor(environ={}, home="/nonexistent")))
    assert doc["filter"]["text"] == "/e/" and doc["rows"] > 1
    deltas = max(row.get("deltas", 0) for row in orjson.loads(plain.getvalue())["events"])
    assert counted["redacted"] == 0 and deltas > 40
    assert counted["read back"] - before <= 2  # what the filter's test reads: not the stream's deltas one by one


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
@pytest.mark.parametrize(("regex", "shown"), [(".", "/./"), ("[A-Z]|x", "/[A-Z]|x/"), (r"\w\w", r"/\w\w/"), ("Q", "/[redacted]/"),
                                              ("[Q]", "/[redacted]/")])  # fmt: skip
def test_a_grep_that_names_no_character_is_shown(tmp_path: Path, fmt: str, regex: str, shown: str) -> None:
    """``--grep .`` found in the row a character only the password held (``Q`` of ``hunter2QJZ``), and was hidden
    as ``[redacted]`` like a regex naming the password: a regex with no character of its own (``.``, a class's
    range, ``\\w``) names nothing of what it found. One that names the character is still hidden."""
    doc, text, plain = _grepped(tmp_path, fmt, regex, "run it", "password = 'hunter2QJZ'")
    assert "hunter2" not in text and "QJZ" not in text
    assert doc["filter"] == {"text": shown, "rowsLeftOut": plain["filter"]["rowsLeftOut"]}


@pytest.mark.parametrize(("regex", "shown"), [
    (".{,2}", "/[redacted]/"), ("ß", "/[redacted]/"), ("(?i)ẞ", "/[redacted]/"), (r"\x{51}", "/[redacted]/"),
    (r"\QQ\E", "/[redacted]/"), ("[[:alpha:]]+", "/[[:alpha:]]+/"), (r"\pN", r"/\pN/"), (r"\p{Lu}", r"/\p{Lu}/"),
    ("[[:upper:]]", "/[[:upper:]]/"),
])  # fmt: skip
def test_a_grep_is_judged_in_the_grammar_that_matches_it(tmp_path: Path, regex: str, shown: str) -> None:
    """The filter matches with RE2, but which characters its regex names was read with Python's grammar: ``{,2}``
    is a repetition there and literal characters in RE2, and ``ß`` folded to ``ss`` named no character, so
    ``/.{,2}/`` and ``/ß/`` were shown though they name what the password held; RE2's ``[[:alpha:]]`` and ``\\pN``
    (classes: no character of their own) were hidden as literals or as a pattern that did not parse."""
    doc, text, plain = _grepped(tmp_path, "json", regex, "run it", "password = 'hunter2Q{,2}ßZ'")
    assert "hunter2" not in text and "{,2}" not in text.replace(regex, "")
    assert doc["filter"] == {"text": shown, "rowsLeftOut": plain["filter"]["rowsLeftOut"]}


def test_a_tool_the_log_never_used_is_warned_of_as_a_type_it_never_holds_is(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--type`` warns of a type no log holds, naming the nearest; a misspelt ``--tool`` left every row out without
    a word. A tool no event of the log is about (a call, its result, a code-mode dispatch) is warned of the same
    way, naming the nearest tool the log did use; the export is still written, as the filter asked."""
    capsys.readouterr()
    assert main(["export", str(log), "--tool", "bsh,bash", "--tool", "x\x1b[2J", "-o", str(tmp_path / "a.json")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[1:] == [
        "tapedeck: --tool 'bsh' names no tool this session used (did you mean bash?): no row is about it",
        "tapedeck: --tool 'x\\u001b[2J' names no tool this session used: no row is about it",
    ], err
    assert main(["export", str(log), "--tool", "bash", "-o", str(tmp_path / "b.json")]) == 0
    assert "--tool" not in capsys.readouterr().err


def test_the_summary_counts_add_up_to_the_log_s_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``exported 3 of 11 rows (…; 12 left out)``: 3 counted the transcript's paragraphs, 11 the rows the filter
    let through and 12 those it left out, so shown and left out never made the total. Every count is of the log's
    23 rows now, and the rows the format does not show are said too."""
    log = Path(__file__).parents[1] / "fixtures/dsh/code-mode-turn.session.jsonl"
    capsys.readouterr()
    assert main(["export", str(log), "--grep", "tool", "-o", str(tmp_path / "x.md")]) == 0
    err = capsys.readouterr().err
    assert "exported 3 of 23 rows (filter: /tool/; 12 left out, 8 more the transcript does not show) to" in err, err
    assert main(["export", str(log), "--grep", "tool", "-o", str(tmp_path / "x.json")]) == 0
    assert "exported 11 of 23 rows (filter: /tool/; 12 left out) to" in capsys.readouterr().err



def test_a_long_tool_name_is_suggested_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``did you mean …`` cut the nearest tool's name at 80 characters: a long name could not be copied back."""
    name = "mcp__" + "very_long_server_name_" * 5 + "bash"
    log = tmp_path / "session.jsonl"
    fixture = Path(__file__).parents[1] / "fixtures/dsh/code-mode-turn.session.jsonl"
    log.write_text(fixture.read_text().replace('"bash"', f'"{name}"'))
    capsys.readouterr()
    assert main(["export", str(log), "--tool", name[:-1], "-o", str(tmp_path / "x.json")]) == 0
    assert f"(did you mean {name}?)" in capsys.readouterr().err
