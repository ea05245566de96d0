"""The Markdown export as an issue comment: whatever a log's texts hold (code fences a clip leaves open, raw HTML,
``<details>``, comments), the transcript keeps its own structure, rendered by a CommonMark parser with raw HTML
on, as GitHub renders a comment; and with redaction on nothing in it names the exporting user's paths."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import orjson
import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from core.cli import main
from core.shared.text import usd
from tests.export.planted import plant, with_arguments


@pytest.fixture(autouse=True)
def _no_outside_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))


def _md(*argv: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["export", *argv, "--format", "md"]) == 0
    return out.getvalue()


def test_a_log_s_text_cannot_break_the_transcript(tmp_path: Path) -> None:
    """An answer clipped inside a code fence, raw HTML and ``<details>`` in the messages and a tool call, a comment
    left open: each stays text of its own paragraph, the tool result is the one ``<details>`` block, and the
    transcript goes on to its end (the turn's end, the cost table)."""
    html = "<details><summary>open</summary>\n<!-- hidden from here\n<img src=x onerror=alert(1)>\n"
    answer = "\n\nHere is the fix:\n\n```python\n" + "x = 1  # <div>\n" * 150  # clipped inside its fence
    log = plant(tmp_path / "s.jsonl", "see </details> and <!-- this", html, html + answer)
    with_arguments(log, orjson.dumps({"command": "echo '</summary></details><!--' > out.txt"}).decode())
    log.write_bytes(log.read_bytes().replace(b'"model":"deepseek-v4-flash"', b'"model":"v4<details><!--"'))
    text = _md(str(log))
    tokens = MarkdownIt("commonmark", {"html": True}).parse(text)
    blocks = [t.content for t in tokens if t.type == "html_block"]
    assert len(blocks) == 2 and blocks[0].startswith("<details><summary>") and blocks[1] == "</details>\n"
    assert "</details>" not in blocks[0] and "<!--" not in blocks[0]
    inline = [c for t in tokens if t.type == "inline" for c in t.children or () if c.type == "html_inline"]
    assert inline == []
    headings = [
        tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and not t.level
    ]
    assert headings[-3] == "Turn 1" and headings[-2].startswith("Request: turn 1") and headings[-1] == "Cost"
    ends = [t.content for t in tokens if t.type == "inline" and t.level == 1 and "turn 1 ended" in t.content]
    assert ends == ["*turn 1 ended: completed*"]
    assert [t.info for t in tokens if t.type == "fence"] == ["", "python"]


def test_the_expand_hint_names_the_log_redacted(tmp_path: Path) -> None:
    """A clipped tool result's hint names the log to run ``tapedeck expand`` on: with redaction on, its path is
    redacted as every other string (a log under a home directory, in a directory named by an e-mail address)."""
    where = tmp_path / "home" / "alice" / "ops.lead@example.com"
    where.mkdir(parents=True)
    log = plant(where / "s.jsonl", "go", "line\n" * 400, "done")
    text = _md(str(log), "--redact")
    assert "tapedeck expand " in text
    assert "alice" not in text and "example.com" not in text
    assert "--seq" in text.split("tapedeck expand ")[1].split("\n")[0]


def test_past_its_budget_the_transcript_stops_and_keeps_the_notes(tmp_path: Path) -> None:
    """On a log whose transcript outgrows a comment, the rows stop where the budget is reached (no later row slips
    into the gap a long left-out one made: every tool result before the last row kept is there) and the notes on
    the rows left out are still listed, after them."""
    from bench.gen_session import generate

    log = tmp_path / "mixed.jsonl"
    generate(log, 3_000_000, seed=1, profile="mixed")
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["export", str(log), "--format", "json"]) == 0
    rows = orjson.loads(out.getvalue())["events"]
    late = rows[-1]["seq"]
    assert main(["note", str(log), "--seq", str(late), "the run ended here <b>"]) == 0
    text = _md(str(log))
    assert len(text) < 65_536
    body, tail = text.split(" more rows left out")
    shown = [int(s.split("</summary>")[0]) for s in body.split("· seq ")[1:]]
    last = max(int(s.split(")")[0]) for s in body.split("(seq ")[1:])
    assert shown == [
        r["seq"] for r in rows if r["type"] == "tool/result" and r["seq"] <= max(last, shown[-1])
    ]
    assert f"note on seq {late} (`{rows[-1]['type']}`):** the run ended here \\<b\\>" in tail


def test_a_session_of_many_turns_still_fits_a_comment(tmp_path: Path) -> None:
    """The head and the tail do not grow with the session: the head counts the turns by how they ended, the cost
    table shows the costliest turns (in order) and one row for the others, and the notes on rows left out stop at
    their own budget, saying how many more there are. Together with the rows' budget the comment stays under
    GitHub's 65,536 characters whatever the log (735 turns made it 81,748)."""
    from bench.gen_session import generate
    from core.export.markdown import COST_ROWS

    log = tmp_path / "short.jsonl"
    generate(log, 3_000_000, seed=1, profile="short-turns")
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["export", str(log), "--format", "json"]) == 0
    doc = orjson.loads(out.getvalue())
    turns = doc["cost"]["turns"]
    assert len(turns) > COST_ROWS
    for row in doc["events"][-400:]:
        assert main(["note", str(log), "--seq", str(row["seq"]), "n" * 400]) == 0
    text = _md(str(log))
    head = text.split("### Turn 1")[0]
    assert f"- turns: {len(turns)} ({len(turns)} completed)" in head and len(head) < 500
    table = text.split("### Cost")[1]
    shown = [
        line for line in table.splitlines() if line.startswith("| ") and line.split(" | ")[0][2:].isdigit()
    ]
    costliest = sorted(turns, key=lambda t: -t["usd"])[:COST_ROWS]
    assert [int(line.split(" | ")[0][2:]) for line in shown] == sorted(t["turn"] for t in costliest)
    others = len(turns) - COST_ROWS
    assert (
        f"| {others} other turns | {sum(t['requests'] for t in turns) - sum(t['requests'] for t in costliest)} |"
        in table
    )
    notes = text.count("📝")
    assert 0 < notes < 400 and f"*… {400 - notes} more notes*" in text
    assert len(text) < 65_536


def test_a_tool_call_in_an_answer_reads_as_it_was_made(tmp_path: Path) -> None:
    """The calls an answer makes are code in the transcript, not Markdown: ``**/*.py`` or ``__init__.py`` in their
    arguments is not taken for emphasis (the demo's own transcript showed ``timeparse/**init**.py``), backticks
    in them stay."""
    log = plant(tmp_path / "s.jsonl", "go", "ok", "done")
    arguments = orjson.dumps({"pattern": "**/*.py", "path": "timeparse/__init__.py", "q": "a `b` c"}).decode()
    with_arguments(log, arguments)
    tokens = MarkdownIt("commonmark", {"html": True}).parse(_md(str(log)))
    calls = [c for t in tokens if t.type == "inline" for c in t.children or () if "bash(" in c.content]
    assert [c.type for c in calls] == ["code_inline"] and calls[0].content == f"bash({arguments})"


def test_a_fence_after_a_bare_carriage_return_is_closed_too(tmp_path: Path) -> None:
    """CommonMark ends a line at a bare ``\\r`` as at ``\\n``: a fence opened after one (output of a tool that
    redraws its line) and clipped open is closed as any other."""
    log = plant(tmp_path / "s.jsonl", "go", "ok", "progress\r```sh\r" + "step\r" * 300)
    tokens = MarkdownIt("commonmark", {"html": True}).parse(_md(str(log)))
    headings = [
        tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and not t.level
    ]
    assert headings[-1] == "Cost"


def test_a_note_on_a_seq_the_log_no_longer_has_is_still_listed(tmp_path: Path) -> None:
    """A note left past the end of a log replaced under it by a shorter one of its session is on no row: the
    Markdown lists it after the transcript, saying so, as the HTML's and the JSON's lists of notes keep it."""
    log = plant(tmp_path / "s.jsonl", "go", "ok", "done")
    assert main(["note", str(log), "--seq", "90", "the old run ended here"]) == 0
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:20]))  # seq 0..64
    text = _md(str(log))
    assert "note on seq 90 (not in this log):** the old run ended here" in text.split("### Cost")[0]


NOTE = """what went wrong:

```python
# not a heading
| a | b |
|---|---|
- not a list
    indented <details><!--
1. step *one* `x` [link](http://x)
---"""


def _note_lines(tokens: list[Token]) -> list[str]:
    """The lines of the paragraphs of the note's block quote, as a reader sees them (markup shown as text)."""
    start = next(i for i, t in enumerate(tokens) if t.type == "inline" and "note on seq" in t.content)
    end = next(i for i in range(start, len(tokens)) if tokens[i].type == "blockquote_close")
    lines = [""]
    for token in tokens[start:end]:
        for child in token.children or ():
            if child.type in ("hardbreak", "softbreak"):
                lines.append("")
            else:
                lines[-1] += child.content
        if token.type == "paragraph_close":
            lines.append("")
    return lines[:-1]


def test_a_note_of_several_lines_keeps_them_and_its_markup_stays_text(tmp_path: Path) -> None:
    """A note is plain text: its lines come out as lines of its quote (a blank line as a new paragraph) and what
    Markdown would read in them (a fence, a heading, a table, a list, indentation, raw HTML, emphasis, a link)
    shows as typed, so the transcript goes on after it with its own structure (the turn's end, the cost)."""
    log = plant(tmp_path / "s.jsonl", "go", "ok", "done")
    assert main(["note", str(log), "--seq", "4", NOTE]) == 0
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(_md(str(log)))
    lines = _note_lines(tokens)
    assert lines[0] == "📝 note on seq 4: what went wrong:"
    indented = [
        re.sub(r"^ +", lambda m: "\xa0" * len(m.group()), line) for line in NOTE.splitlines()[1:] if line
    ]
    assert lines[1:] == indented  # the indentation as no-break spaces: indented, a line would be code
    quote = tokens[[t.type for t in tokens].index("blockquote_open", 1) :]
    kinds = {t.type for t in quote[: [t.type for t in quote].index("blockquote_close")]}
    assert kinds == {"blockquote_open", "paragraph_open", "inline", "paragraph_close"}
    inline = {
        c.type for t in tokens if t.type == "inline" and "note on seq" in t.content for c in t.children or ()
    }
    assert inline <= {"text", "strong_open", "strong_close", "hardbreak", "softbreak"}
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[1:] == ["Turn 1", headings[2], "Cost"] and headings[2].startswith("Request: ")


def test_at_a_moment_a_long_session_still_fits_a_comment(tmp_path: Path) -> None:
    """At a moment late in a long session, the transcript up to it, the request and the surface of hundreds of
    messages (the newest kept, the oldest counted) together stay under a comment's 65,536 characters."""
    from bench.gen_session import generate

    log = tmp_path / "mixed.jsonl"
    generate(log, 3_000_000, seed=1, profile="mixed")
    at = int(_md(str(log)).split("- turns: ")[1].split(" · events: ")[1].split(" ")[0]) - 10
    text = _md(str(log), "--at", str(at))
    assert len(text) < 65_536
    surface = text.split(f"### Surface right after seq {at}\n")[1].split("### Cost")[0]
    count, left = map(
        int, re.match(r"\n(\d+) model-visible messages; the (\d+) oldest left out", surface).groups()
    )
    assert surface.count("\n- seq ") == count - left > 10


# GitHub's mention and issue-reference syntax in a comment's text (code spans and blocks are left alone)
GITHUB_LINKS = re.compile(r"(?<![\w`/.@#&-])(?:@[A-Za-z0-9]|(?:[\w.-]+/[\w.-]+)?#[0-9])")


def test_the_transcript_mentions_no_one_and_references_no_issue(tmp_path: Path) -> None:
    """Posted as a comment, a transcript must not ping whoever a log names nor list itself on other issues: a
    ``@user`` or ``@org/team`` (a decorator such as ``@pytest.fixture`` names a user too) and an ``#12`` or
    ``owner/repo#12`` in the messages, the surface at a moment and a note are code, which GitHub does not link;
    an e-mail address and a URL's fragment stay as they are."""
    said = "thanks @alice, see #12 and octo/repo#7; use @pytest.fixture (cc @org/team). a@b.io http://h/#3"
    log = plant(tmp_path / "s.jsonl", said, "ok", said)
    assert main(["note", str(log), "--seq", "4", said]) == 0
    text = _md(str(log), "--no-redact", "--at", "70")
    tokens = MarkdownIt("commonmark", {"html": True}).parse(text)
    words = [c.content for t in tokens if t.type == "inline" for c in t.children or () if c.type == "text"]
    assert [w for w in words if GITHUB_LINKS.search(w)] == []
    spans = {
        c.content for t in tokens if t.type == "inline" for c in t.children or () if c.type == "code_inline"
    }
    assert {"@alice", "#12", "octo/repo#7", "@pytest.fixture", "@org/team"} <= spans
    assert text.count("a@b.io http://h/") == 3  # in the message, the note and its surface line, as written


def test_the_commands_it_names_run_as_they_are_on_a_path_with_spaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The transcript's ``tapedeck expand`` and ``tapedeck request`` commands name the log quoted for the shell (a
    path with a space, as macOS's ``Application Support``), the ``~/`` of a redacted home left for it to expand."""
    import shlex

    where = tmp_path / "Application Support"
    where.mkdir()
    log = plant(where / "s.jsonl", "go", "line\n" * 400, "done")
    monkeypatch.setenv("HOME", str(tmp_path))
    for redact, shown in (("--no-redact", str(log)), ("--redact", "~/Application Support/s.jsonl")):
        text = _md(str(log), redact)
        tokens = MarkdownIt("commonmark", {"html": True}).parse(text)
        spans = [
            c.content
            for t in tokens
            if t.type == "inline"
            for c in t.children or ()
            if c.type == "code_inline"
        ]
        commands = [shlex.split(s) for s in spans if s.startswith("tapedeck ")]
        assert [c[1] for c in commands] == ["expand", "request"]
        assert {c[2] for c in commands} == {shown}


def test_the_cuts_line_gives_what_they_saved_net_of_their_cache_breaks(tmp_path: Path) -> None:
    """The cost summary said what the cuts saved and nothing of what their cache breaks cost, which ``tapedeck
    cost`` nets against it: a session whose cuts cost more than they saved read as a saving. It now gives both
    sums and the net, as ``cost`` adds them up; and for a model with no price, ``n/a``, not ``$0.0000``."""
    import json

    from bench.gen_session import generate
    from bench.readers import host_log

    mixed = tmp_path / "mixed.jsonl"
    generate(mixed, 1_500_000, seed=1, profile="mixed")
    for log in (mixed, host_log(tmp_path / "demo")):
        out = io.StringIO()
        with redirect_stdout(out):
            assert main(["cost", str(log), "--json"]) == 0
        cuts = json.loads(out.getvalue())["cuts"]
        line = _md(str(log)).rstrip().splitlines()[-1]
        sums = [sum(c[k] for c in cuts) if cuts[0][k] is not None else None for k in ("savedUsd", "costUsd", "netUsd")]
        shown = [usd(v) for v in sums]
        assert cuts and line.endswith(f"{len(cuts)} cut(s) saved {shown[0]}, their cache breaks cost {shown[1]}: "
                                      f"net {shown[2]} (estimated)"), line  # fmt: skip


def test_the_head_names_the_session_s_title_as_plain_text(tmp_path: Path) -> None:
    """The HTML page and the JSON name the session by its title; the comment gave only its id, so several
    transcripts in one thread could not be told apart. Its head now gives the title, as plain text: its markup
    makes nothing, it mentions no one, and it is redacted as the rest."""
    source = plant(tmp_path / "base.jsonl", "go", "ok", "done").read_text()
    title = "Fix <b>it</b> **now** @octocat #12 sk-proj-Zq81xVb2LmN0pQr5StUv7WxYz"
    log = tmp_path / "s.jsonl"
    log.write_text(source.replace('"title":"Use the bash tool to"', orjson.dumps({"title": title}).decode()[1:-1]))
    head = _md(str(log)).split("\n### ")[0]
    tokens = MarkdownIt("commonmark", {"html": True}).parse(head)
    inline = [c for t in tokens if t.type == "inline" for c in t.children or ()]
    shown = "".join(c.content for c in inline if c.type in ("text", "code_inline"))
    assert "title: Fix <b>it</b> **now** @octocat #12 [redacted key]" in shown
    assert {c.type for c in inline} <= {"text", "code_inline", "softbreak"}
    assert {"@octocat", "#12"} <= {c.content for c in inline if c.type == "code_inline"}


def test_a_note_on_a_row_the_transcript_shows_no_paragraph_for_says_what_the_row_is(tmp_path: Path) -> None:
    """A transcript shows turns, messages, results and replacements; a note on another row (the request's
    header, the title, a model stream's deltas) came as ``note on seq 8`` after three blank lines, with nothing
    saying what seq 8 is. Such a note now names its row's type, and comes alone, as a note under a paragraph does."""
    from tests.conftest import FIXTURES

    log = tmp_path / "s.jsonl"
    log.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["export", str(log), "--format", "json"]) == 0
    rows = {r["seq"]: r for r in orjson.loads(out.getvalue())["events"]}
    for seq in (8, 20, 63):
        assert main(["note", str(log), "--seq", str(seq), f"on {seq}"]) == 0
    text = _md(str(log))
    stream = next(r for r in rows.values() if r.get("endSeq", 0) > 20)
    assert f"\n\n> 📝 **note on seq 8 (`{rows[8]['type']}`):** on 8\n\n" in text
    assert f"> 📝 **note on seqs {stream['seq']}–{stream['endSeq']} (`assistant/chunk`):** seq 20: on 20" in text
    assert "> 📝 **note on seq 63:** on 63" in text  # under its message's paragraph
    assert "\n\n\n" not in text.split("### Request")[0]


def test_one_of_a_thing_is_counted_as_one(tmp_path: Path) -> None:
    """cd2d4c7 and e1af19d count one row as one on stderr and in the TUI's toast, but the documents went on saying
    '(1 rows left out)' for a filter that left one row out (the HTML too), '1 rows after seq' for one row past the
    moment (the TUI's cut HTML: '1 later rows'), and '1 more notes' for one note past the notes' budget."""
    from core.export.build import ExportOptions
    from core.export.write import export
    from core.read.event_filter import EventFilter
    from core.read.notes import set_note
    from tests.conftest import FIXTURES

    log = tmp_path / "s.jsonl"
    log.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())  # seqs 0 … 103, its last row 103
    for seq in range(1000, 1004):  # notes on seqs the log does not have, listed after the rows: the fourth is over
        set_note(log, seq, "n" * 1500)
    text = _md(str(log), "--turns", "1", "--at", "102")
    assert "(1 row left out)" in text and "*… 1 row after seq 102, the moment" in text, text
    assert "*… 1 more note*" in text, text
    page = io.BytesIO()
    export(log, page, "html", ExportOptions(at=102, cut=True, filter=EventFilter.parse("", "", "1", False, "")))
    html = page.getvalue().decode()
    assert "(1 row left out)" in html and "1 later row left out" in html, html


def test_a_log_s_long_names_leave_the_comment_its_room(tmp_path: Path) -> None:
    """The head took the log's title, id and model whole, and each problem the readers found (an unknown event
    type quoted in it): a title of 80,000 characters made a transcript of 110,000, which no comment takes. Each is
    one line of at most 300 characters now."""
    log = plant(tmp_path / "s.jsonl", "go", "ok", "done")
    items = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    for item in items:
        if item.get("type") == "session/title":
            item["data"]["title"] = "word " * 16_000
        elif item.get("type") == "request/header":
            item["data"]["model"] = "m" * 30_000
    items[0]["id"] = "i" * 30_000
    odd = [{"type": f"x/{i}" + "t" * 30_000, "seq": "x", "data": 5} for i in range(6)]
    log.write_bytes(b"\n".join(orjson.dumps(i) for i in [*items[:10], *odd, *items[10:]]) + b"\n")
    text = _md(str(log))
    assert len(text) < 65_536
    head = text.split("### Turn")[0]
    assert "- title: word word" in head and "iiii…`" in head and "- log problems: " in head
    assert max(len(line) for line in head.splitlines()) < 700


HOSTILE = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\r\x9b31m\x7f\u202e\x00"


def test_a_log_s_control_characters_are_drawn_in_the_transcript(tmp_path: Path) -> None:
    """``cat comment.md`` ran a hostile log's escape sequences (a clipboard write, a screen clear, a one-byte CSI)
    kept raw in the heading, the messages and a tool result's fence. Every C0 and C1 control but newline and tab,
    DEL and the BiDi overrides are drawn as pictures there, as the summaries draw them, in each place."""
    log = plant(tmp_path / "s.jsonl", HOSTILE, "out" + HOSTILE + "\tend", "```\n" + HOSTILE + "\n```")
    items = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    items[0]["id"] = "id" + HOSTILE
    for item in items:
        if item.get("type") == "session/title":
            item["data"]["title"] = "title" + HOSTILE
    log.write_bytes(b"\n".join(orjson.dumps(i) for i in items) + b"\n")
    text = _md(str(log), "--no-redact")
    assert re.findall("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text) == []
    drawn = "␛]52;c;cm0gLXJmIH4=␇␛[2J"  # (a head field is one line: its \r a space)
    head = text.split("### Turn")[0]
    assert f"id{drawn}" in head.splitlines()[0] and "- title: title␛" in head  # (Markdown escapes its brackets)
    assert text.count(drawn) == 4 and "\tend" in text  # heading, user, the result's fence, the answer's fence
