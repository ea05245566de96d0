"""tapedeck export on every real DSH fixture: the rows cover every event once (streams collapsed), tool results
carry their calls, the surface, request and cost match surface --at, request and cost, and the Markdown of three
fixtures is pinned byte for byte (``TAPEDECK_UPDATE_GOLDEN=1`` rewrites it; review the diff)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.export.build import ExportOptions
from core.export.write import export, export_to_file
from core.shared.errors import TapedeckError
from tests.conftest import FIXTURES, Processes
from tests.export.planted import plant

ROOT = Path(__file__).resolve().parents[2]
LOGS = sorted(FIXTURES.glob("*.jsonl"))
GOLDEN = ROOT / "tests" / "golden" / "export"
PINNED = ("tool-call-turn", "multi-turn", "compaction-recovery")


@pytest.fixture(autouse=True)
def _no_outside_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))


def _run(*argv: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


def _json(*argv: str) -> Any:
    return json.loads(_run(*argv))


@pytest.mark.parametrize("log", LOGS, ids=[p.name.split(".session")[0] for p in LOGS])
def test_rows_cover_every_event_once_and_results_carry_their_calls(log: Path) -> None:
    doc = _json("export", str(log), "--format", "json", "--no-redact")
    events = _json("inspect", str(log), "--json")["events"]
    covered = [seq for row in doc["events"] for seq in range(row["seq"], row.get("endSeq", row["seq"]) + 1)]
    assert covered == list(range(events)) and doc["session"]["events"] == events
    assert doc["rows"] == len(doc["events"])
    for row in doc["events"]:
        if row["type"] == "assistant/chunk":
            assert row["glyph"] == "●" and row["summary"].startswith("streamed ")
        if row["type"] == "tool/result" and "call" in row:
            call = next(r for r in doc["events"] if r["seq"] == row["call"]["seq"])
            assert row["call"]["name"] in call["summary"]
    assert doc["cost"]["total"] == _json("cost", str(log), "--json")["total"]
    surface = [r["seq"] for r in _json("surface", str(log), "--json")]
    assert [r["seq"] for r in doc["surface"]["nodes"]] == surface


@pytest.mark.parametrize("name", PINNED)
def test_surface_at_and_the_chosen_request_match_their_commands(name: str) -> None:
    log = FIXTURES / f"{name}.session.jsonl"
    requests = _json("request", str(log), "--all", "--json")
    first = next(r for r in requests if r["kind"] == "agent")
    at = first["seq"]
    doc = _json("export", str(log), "--format", "json", "--at", str(at), "--turn", str(first["turn"]),
                "--step", str(first["step"]), "--no-redact")  # fmt: skip
    assert [r["seq"] for r in doc["surface"]["nodes"]] == [r["seq"] for r in _json("surface", str(log), "--at", str(at), "--json")]
    assert doc["request"]["messages"] == first["messages"] and doc["request"]["seq"] == first["seq"]
    diff = _json("diff", str(log), "--turn", str(first["turn"]), "--step", str(first["step"]), "--json")
    assert doc["request"]["cacheBreak"]["prefixBytes"] == diff["prefixBytes"]


@pytest.mark.parametrize("name", PINNED)
def test_markdown_is_pinned(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    text = _run("export", f"tests/fixtures/dsh/{name}.session.jsonl", "--format", "md", "--no-redact")
    assert len(text) < 65_536  # fits an issue comment
    golden = GOLDEN / f"{name}.md"
    if os.environ.get("TAPEDECK_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_notes_travel_into_every_format(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())
    assert main(["note", str(log), "--seq", "65", "the echo worked"]) == 0
    doc = _json("export", str(log), "--format", "json")
    assert next(r for r in doc["events"] if r["seq"] == 65)["note"] == "the echo worked"
    assert doc["notes"][0]["seq"] == 65
    assert "note on seq 65:** the echo worked" in _run("export", str(log), "--format", "md")
    page = _run("export", str(log), "--format", "html")
    assert 'class="note">✎ the echo worked</div>' in page and 'title="note">✎</span>' in page


def test_a_note_on_a_delta_travels_with_its_stream_row(tmp_path: Path) -> None:
    """A note on a stream's delta (``a`` on a delta the TUI lists under its stream, or ``note --seq``) is on the
    one row that stands for the stream, in every format, and the HTML's list of notes links to that row."""
    log = tmp_path / "s.jsonl"
    log.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())
    rows = _json("export", str(log), "--format", "json")["events"]
    stream = next(r for r in rows if r.get("endSeq", 0) > 20)
    assert main(["note", str(log), "--seq", "20", "the call's arguments arrive here"]) == 0
    doc = _json("export", str(log), "--format", "json")
    row = next(r for r in doc["events"] if r["seq"] == stream["seq"])
    assert "the call's arguments arrive here" in row["note"] and "20" in row["note"]
    assert doc["notes"][0]["row"] == stream["seq"]
    assert "the call's arguments arrive here" in _run("export", str(log), "--format", "md")
    page = _run("export", str(log), "--format", "html")
    item = page.split(f'<li id="e{stream["seq"]}"')[1].split("</li>")[0]
    assert 'title="note">✎</span>' in item and "the call&#x27;s arguments arrive here" in item
    assert f'<a href="#e{stream["seq"]}">#20</a> <span class="note">' in page


def test_what_the_readers_found_wrong_in_the_log_is_in_every_format(tmp_path: Path) -> None:
    """A damaged log (a line that is not JSON: its event is missing from the rows) says so in the export, as
    ``inspect`` does: the JSON has the diagnostics, the HTML's header and the Markdown's head count them and show
    them, so the reader knows an event is missing and why."""
    lines = (FIXTURES / "tool-call-turn.session.jsonl").read_bytes().split(b"\n")
    lines[20] = b'{"type":"tool/result","data":{broken'
    log = tmp_path / "s.jsonl"
    log.write_bytes(b"\n".join(lines))
    found = _json("inspect", str(log), "--json")["diagnostics"]
    assert any(d["code"] == "bad-json" for d in found)
    assert _json("export", str(log), "--format", "json")["diagnostics"] == found
    page = _run("export", str(log), "--format", "html")
    assert f"<th>log problems</th><td>{len(found)}" in page and "bad-json (seq 65, offset 4910)" in page
    text = _run("export", str(log), "--format", "md")
    assert f"- log problems: {len(found)}" in text.split("### Turn 1")[0] and "bad-json (seq 65" in text
    clean = _json("export", str(FIXTURES / "tool-call-turn.session.jsonl"), "--format", "json")
    assert clean["diagnostics"] == []


@pytest.mark.parametrize("given", ["file", "link", "directory"])
def test_an_export_never_replaces_the_log_it_reads(tmp_path: Path, given: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o`` naming the session log itself (a slip of the shell: ``export session.jsonl -o session.jsonl``, the log
    given through a link to it or as its session directory, or ``-o`` a link to it) is refused: the log stays as it
    was, where it used to be replaced by the page."""
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())
    before = log.read_bytes()
    (tmp_path / "link.jsonl").symlink_to(log)
    path = {"file": log, "link": tmp_path / "link.jsonl", "directory": log.parent}[given]
    assert main(["export", str(path), "-o", str(log)]) == 2
    assert "is the session log" in capsys.readouterr().err
    assert log.read_bytes() == before and not list(log.parent.glob(".*.part"))
    assert main(["export", str(path), "-o", str(tmp_path / "link.jsonl")]) == 2  # a link is followed, to the log
    assert "is the session log" in capsys.readouterr().err
    assert log.read_bytes() == before and (tmp_path / "link.jsonl").is_symlink()


def test_an_export_never_replaces_the_notes_it_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o`` naming the log's notes sidecar (``export s.jsonl -o s.jsonl.notes.json``, a slip of completion) wrote
    the page over the operator's notes, which no copy keeps; it is refused as ``-o`` the log is, and so is a sidecar
    beside the log that another session's notes were moved aside to."""
    log = tmp_path / "s.jsonl"
    log.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())
    assert main(["note", str(log), "--seq", "4", "keep me"]) == 0
    sidecar = tmp_path / "s.jsonl.notes.json"
    moved = tmp_path / "s.jsonl.another-session.notes.json"
    moved.write_bytes(sidecar.read_bytes())
    notes = sidecar.read_bytes()
    capsys.readouterr()
    for target in (sidecar, moved):
        assert main(["export", str(log), "-o", str(target)]) == 2
        assert "notes" in capsys.readouterr().err
        assert target.read_bytes() == notes and not list(tmp_path.glob(".*.part"))


def test_stdout_is_redacted_unless_it_is_a_terminal(tmp_path: Path, processes: Processes) -> None:
    """Redaction is on by default when the output leaves the terminal: ``export LOG --format md > comment.md`` and
    ``export LOG --format md | gh issue comment 26 -F -`` are shared as ``-o FILE`` is (they went out with every
    key in them); on a terminal, where the operator reads it, the log is shown as it is."""
    import pty

    key = "sk-proj-Zq81xVb2LmN0pQr5StUv7WxYz"
    log = plant(tmp_path / "s.jsonl", f"use {key}", "ok", "done")
    argv = [sys.executable, "-m", "core.cli", "export", str(log), "--format", "md"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TAPEDECK_HOME": str(tmp_path / "home")}

    def run(*more: str, **io: Any) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([*argv, *more], env=env, cwd=tmp_path, check=True, stderr=subprocess.PIPE, **io)

    with open(tmp_path / "comment.md", "wb") as out:
        said = run(stdout=out).stderr.decode()
    assert key not in (tmp_path / "comment.md").read_text()
    assert "key, " in said and "redaction: off" not in said
    assert key.encode() not in run(stdout=subprocess.PIPE).stdout
    assert key.encode() in run("--no-redact", stdout=subprocess.PIPE).stdout
    main_fd, terminal = pty.openpty()
    process = processes.start(argv, env=env, cwd=tmp_path, stdout=terminal, stderr=subprocess.DEVNULL)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # the terminal's other end closed
            break
        if not chunk:
            break
        shown += chunk
    os.close(main_fd)
    assert process.wait() == 0 and key.encode() in shown


def test_output_file_is_redacted_by_default_and_bad_arguments_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = FIXTURES / "tool-call-turn.session.jsonl"
    out = tmp_path / "x.html"
    assert main(["export", str(log), "-o", str(out)]) == 0
    assert "redaction: 0 key, 0 env, 0 email, 0 home" in capsys.readouterr().err and out.read_text().startswith("<!DOCTYPE")
    assert main(["export", str(log), "--step", "1"]) == 2
    assert "--step needs --turn" in capsys.readouterr().err
    assert main(["export", str(log), "--turn", "9"]) == 2
    assert "turn 9 made no model request in this log" in capsys.readouterr().err
    assert main(["export", str(log), "--at", "100000"]) == 2
    assert "seq 100000 is not in this log" in capsys.readouterr().err
    assert main(["export", str(log), "-o", str(tmp_path / "missing" / "x.html")]) == 2
    assert "cannot write" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["html", "md", "json"])
def test_an_output_path_under_a_file_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """``-o FILE/x``: the part file beside it could not be made, and removing it afterwards raised NotADirectoryError
    (``missing_ok`` takes only a file that is not there) over the refusal, which then named the part file,
    ``FILE/.x.<pid>.part: Not a directory``, instead of the path given."""
    (tmp_path / "file").write_text("")
    target = tmp_path / "file" / "x"
    assert main(["export", str(FIXTURES / "tool-call-turn.session.jsonl"), "--format", fmt, "-o", str(target)]) == 2
    assert capsys.readouterr().err == f"tapedeck: {target}: cannot write (Not a directory)\n"


# A sitecustomize: as the export renames its finished temporary file over the output, a SIGTERM (os.replace raises
# the audit event os.rename), the one moment its .part file is sure to be there.
_SIGTERM_AT_RENAME = """
import os, signal, sys

def _hook(event, args):
    if event == "os.rename" and str(args[0]).endswith(".part") and os.environ.pop("TD_TEST_PART_SIGTERM", None):
        os.kill(os.getpid(), signal.SIGTERM)

sys.addaudithook(_hook)
"""


def test_a_sigterm_while_an_export_is_written_leaves_the_output_as_it_was_and_no_partial_file(
    tmp_path: Path, processes: Processes
) -> None:
    """A SIGTERM (kill, a timeout, a service's stop) took the default action while 'export -o' wrote: the process
    died with no word, and the hidden '.NAME.PID.part' file it wrote the export into stayed beside the output (as
    big as the export: hundreds of MB for a big log). It is taken as Ctrl-C is: the temporary file is removed, the
    output left as it was, exit 143 with a line that says so."""
    hook, out = tmp_path / "hook", tmp_path / "out" / "x.html"
    hook.mkdir()
    out.parent.mkdir()
    out.write_text("before")
    (hook / "sitecustomize.py").write_text(_SIGTERM_AT_RENAME)
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{ROOT}", "TD_TEST_PART_SIGTERM": "1"}
    proc = processes.start([sys.executable, "-m", "core.cli", "export", str(LOGS[0]), "-o", str(out)], cwd=ROOT,
                           env=env, stderr=subprocess.PIPE, text=True)  # fmt: skip
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (143, f"tapedeck: terminated; nothing was written to {out}\n")
    assert [p.name for p in out.parent.iterdir()] == ["x.html"] and out.read_text() == "before"


# A sitecustomize: as the export opens the log it reads once its output is made (a file in the output's directory,
# named or not, open in the process), a SIGKILL: a kill nothing can take, while the export is written.
_SIGKILL_WHILE_WRITING = """
import os, signal, sys

def _made(out):
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith(out + "/"):
                return True
        except OSError:
            pass
    return False

def _hook(event, args):
    out = os.environ.get("TD_TEST_KILL_OUT")
    if event == "open" and out and str(args[0]).endswith(".jsonl") and _made(out):
        os.kill(os.getpid(), signal.SIGKILL)

sys.addaudithook(_hook)
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_an_export_killed_while_it_writes_leaves_nothing_beside_its_output(tmp_path: Path, processes: Processes) -> None:
    """An export killed (SIGKILL: the OOM killer, kill -9) while it wrote left its hidden '.NAME.PID.part' beside
    the output for good, as big as the export had got. It writes into a file with no name (O_TMPFILE), which gets
    one only once whole, to be renamed over the output, as a repair writes the log it rebuilds."""
    hook, out = tmp_path / "hook", tmp_path / "out"
    hook.mkdir()
    out.mkdir()
    (out / "x.html").write_text("before")
    (hook / "sitecustomize.py").write_text(_SIGKILL_WHILE_WRITING)
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{ROOT}", "TD_TEST_KILL_OUT": str(out)}
    proc = processes.start([sys.executable, "-m", "core.cli", "export", str(LOGS[0]), "-o", str(out / "x.html")],
                           cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)  # fmt: skip
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, err)
    assert [p.name for p in out.iterdir()] == ["x.html"] and (out / "x.html").read_text() == "before"


@pytest.mark.parametrize("target", ["/proc/self/status", "/proc/tapedeck-export"])
def test_an_output_path_where_no_file_can_be_made_is_refused_saying_why(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o /proc/self/status``: the part file beside it could not be made, and the refusal was its strerror, 'No
    such file or directory', of a file and a directory that are both there."""
    assert main(["export", str(FIXTURES / "tool-call-turn.session.jsonl"), "-o", target]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tapedeck: {target}: cannot write: ") and "No such file" not in err, err
    assert f"new file in {Path(target).parent}," in err and "makes no new files" in err, err


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_a_format_that_shows_no_request_cost_row_exports_as_with_every_diff_made(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTML and Markdown show no request's cost row, so the pass diffs a request against the one before it only
    where a cut's estimate or the chosen request reads the diff: the export is the one every diff made gives."""
    from bench.gen_session import generate
    from core.export.build import ExportOptions
    from core.export.write import export, make_format

    mixed = tmp_path / "mixed.jsonl"
    generate(mixed, 1_500_000, seed=1, profile="mixed")
    writer = type(make_format(fmt, ""))
    for log in [*LOGS, mixed]:
        for options in (ExportOptions(), ExportOptions(turn=2), ExportOptions(at=400)):
            outs = []
            for costs in (False, True):
                monkeypatch.setattr(writer, "costs", costs)
                out = io.BytesIO()
                try:
                    export(log, out, fmt, options)
                except Exception as exc:  # noqa: BLE001 - a request or moment the log has not: the same error
                    out.write(repr(exc).encode())
                outs.append(out.getvalue())
            assert outs[0] == outs[1], (log.name, options)
    doc = _json("export", str(mixed), "--format", "json")
    assert any(cut["brokeCache"] for cut in doc["cost"]["cuts"])  # a cut's estimate read a diff


def _md_rows(text: str) -> list[int]:
    """The seqs of the transcript's messages and tool results (their ``(seq N)`` and ``· seq N``)."""
    body = text.split("\n### Request")[0]
    return sorted(int(m) for m in re.findall(r"\(seq (\d+)\)|· seq (\d+)</summary>", body) for m in m if m)


@pytest.mark.parametrize("name", PINNED)
def test_every_format_shows_the_same_moment(name: str) -> None:
    """``--at SEQ`` means one moment in every format: the surface as it stood right after SEQ and the last
    request at or before it. The Markdown, which has no room for every row, stops its transcript there, lists that
    surface and names that request, as the JSON (and the HTML) show them; ``--turn``/``--step`` choose its
    request as theirs."""
    log = FIXTURES / f"{name}.session.jsonl"
    requests = [r for r in _json("request", str(log), "--all", "--json") if r["kind"] == "agent"]
    first = requests[0]
    at = first["seq"] + 1
    doc = _json("export", str(log), "--format", "json", "--at", str(at), "--no-redact")
    text = _run("export", str(log), "--format", "md", "--at", str(at), "--no-redact")
    surface = text.split(f"### Surface right after seq {at}\n")[1].split("### Cost")[0]
    listed = [int(s) for s in re.findall(r"(?m)^- seq (\d+) · ", surface)]
    assert listed == [r["seq"] for r in doc["surface"]["nodes"]]
    assert f"{len(doc['surface']['nodes'])} model-visible messages" in surface
    assert f"(seq {doc['request']['seq']})" in text.split("### Request")[1].split("\n")[0]
    shown = _md_rows(text)
    assert shown and max(shown) <= at
    assert shown == _md_rows(_run("export", str(log), "--format", "md", "--no-redact"))[: len(shown)]
    last = requests[-1]
    chosen = ["--turn", str(last["turn"]), "--step", str(last["step"])]
    doc = _json("export", str(log), "--format", "json", *chosen, "--no-redact")
    heading = _run("export", str(log), "--format", "md", *chosen, "--no-redact").split("### Request: ")[1]
    assert heading.startswith(f"turn {last['turn']} step {last['step']}")
    assert f"(seq {doc['request']['seq']})" in heading.split("\n")[0]


def test_the_html_event_list_shows_where_the_moment_is() -> None:
    """The HTML of ``--at SEQ`` lists every event, as the JSON does, and dims the rows after the moment, its header
    linking to the moment's row: a reader of the list saw no sign of it."""
    log = FIXTURES / "tool-call-turn.session.jsonl"
    at = 60
    page = _run("export", str(log), "--at", str(at), "--no-redact")
    rows = re.findall(r'<li id="e(\d+)" class="([^"]*)"', page)
    assert rows and {int(seq) > at for seq, classes in rows} == {True, False}
    assert all(("later" in classes.split()) == (int(seq) > at) for seq, classes in rows)
    shown = max(int(seq) for seq, _ in rows if int(seq) <= at)  # the stream's row that holds the delta at the moment
    assert shown < at and f'at <a href="#e{shown}">#{at}</a> (the rows after it are dimmed)' in page
    assert "later" not in _run("export", str(log), "--no-redact").split("</style>")[1]


def test_the_turns_line_stays_short_and_names_the_turns_that_did_not_complete(tmp_path: Path) -> None:
    """The HTML's header listed every turn with how it ended (a session of hundreds of turns made it a wall of
    text); like the Markdown's head it now counts them by how they ended and names the turns that did not complete."""
    from bench.gen_session import generate

    log = tmp_path / "short.jsonl"
    generate(log, 600_000, seed=1, profile="short-turns")
    turns = _json("export", str(log), "--format", "json")["session"]["turns"]
    assert len(turns) > 10
    page = _run("export", str(log))
    row = page.split("<tr><th>turns</th><td>")[1].split("</td>")[0]
    assert row == f"{len(turns)}: {len(turns)} completed"
    aborted = FIXTURES / "cancel-tool-calls.session.jsonl"
    assert "<tr><th>turns</th><td>1: 1 aborted: turn 1</td>" in _run("export", str(aborted))
    assert "- turns: 1 (1 aborted: turn 1)" in _run("export", str(aborted), "--format", "md")


def test_the_output_file_s_suffix_chooses_the_format(tmp_path: Path) -> None:
    """``export LOG -o comment.md`` wrote an HTML page into ``comment.md``: without ``--format`` the suffix of the
    file now chooses it (``.md``, ``.json``, ``.html``; anything else, and stdout, HTML), and ``--format`` wins."""
    log = FIXTURES / "tool-call-turn.session.jsonl"
    for name, start in (("c.md", "## tapedeck session"), ("c.JSON", '{"events"'), ("c.htm", "<!DOCTYPE"),
                        ("c.txt", "<!DOCTYPE")):  # fmt: skip
        assert main(["export", str(log), "-o", str(tmp_path / name)]) == 0
        assert (tmp_path / name).read_text().startswith(start), name
    assert main(["export", str(log), "--format", "html", "-o", str(tmp_path / "p.md")]) == 0
    assert (tmp_path / "p.md").read_text().startswith("<!DOCTYPE")
    assert _run("export", str(log)).startswith("<!DOCTYPE")


def test_the_html_request_shows_every_tool_call_a_message_made(tmp_path: Path) -> None:
    """A request message's summary counts its tool calls (an answer made only of calls said '0 chars'), and the
    calls are shown however long its text is (past 4,000 characters they were left out)."""
    from tests.export.planted import plant

    log = plant(tmp_path / "s.jsonl", "go", "ok", "done")
    items = [json.loads(line) for line in log.read_text().splitlines()]
    call = next(i for i in items if i["type"] == "assistant/message" and "tool-call" in str(i["data"]["message"]))
    text = {"type": "text", "text": "long reasoning " * 400}
    call["data"]["message"]["content"].insert(0, text)
    log.write_text("".join(json.dumps(i) + "\n" for i in items))
    page = _run("export", str(log), "--no-redact")
    request = page.split('<h2 id="request">')[1].split("</ol>")[0]
    item = next(li for li in request.split("<li>") if "long reasoning" in li)
    assert "<summary>6000 chars · 1 tool call</summary>" in item and "bash(" in item


def test_a_seq_asked_of_a_log_with_no_events_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A log holding only its header (a session just started) has no seq to ask for: export --at, surface --at,
    request --seq and note --seq said 'its events are seq 0..-1'."""
    log = tmp_path / "s.jsonl"
    log.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes().split(b"\n")[0] + b"\n")
    for argv in (["export", str(log), "--at", "0"], ["surface", str(log), "--at", "0"],
                 ["request", str(log), "--seq", "0"], ["note", str(log), "--seq", "0", "x"]):  # fmt: skip
        assert main(argv) == 2
        assert "seq 0 is not in this log: it has no events yet" in capsys.readouterr().err, argv


def test_the_html_request_names_a_message_of_no_event_once() -> None:
    """A request message that comes from no surface node (the system prompt) read 'system system prompt': its
    role, then a label that said the role again."""
    page = _run("export", str(FIXTURES / "multi-turn.session.jsonl"), "--no-redact")
    request = page.split('<h2 id="request">')[1].split("</ol>")[0]
    assert "system system" not in request
    assert "<li>system (from no event) <details>" in request


def test_an_output_directory_gets_a_file_named_for_the_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o DIR`` (an existing directory) was refused; the export now goes into a file in it named for the session,
    the moment and the format (as the TUI's X names its page), and stderr names it. A session id that would reach
    out of DIR stays in it, and the log is never replaced."""
    out = tmp_path / "out"
    out.mkdir()
    log = FIXTURES / "multi-turn.session.jsonl"
    sid = "228b7b82-84ed-49b7-a567-981c03b28c77"
    names = [f"tapedeck-{sid}.html", f"tapedeck-{sid}.md", f"tapedeck-{sid}-at-9.json"]
    for argv, name in zip(([], ["--format", "md"], ["--format", "json", "--at", "9"]), names, strict=True):
        assert main(["export", str(log), "-o", str(out), *argv]) == 0
        err = capsys.readouterr().err
        assert err.startswith("tapedeck: exported ") and f" to {out / name} (redaction: " in err, err
        assert (out / name).stat().st_size > 0
    assert sorted(p.name for p in out.iterdir()) == sorted(names)
    odd = tmp_path / "odd" / "session.jsonl"
    odd.parent.mkdir()
    head, rest = log.read_bytes().split(b"\n", 1)
    odd.write_bytes(head.replace(sid.encode(), b"../../x y") + b"\n" + rest)
    assert main(["export", str(odd), "-o", str(out)]) == 0
    assert main(["export", str(odd), "-o", str(odd.parent), "--format", "json"]) == 0
    assert (out / "tapedeck-.._.._x_y.html").is_file() and (odd.parent / "tapedeck-.._.._x_y.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["odd", "out"]
    assert odd.read_bytes().startswith(b'{"type":"session"')


def test_the_summary_line_counts_the_rows_each_format_shows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """stderr said a Markdown export wrote every row of the event list (19 for this log) where its transcript shows
    7 (the turn, the messages, the tool result, how the turn ended); it now says how many of them it shows, at a
    moment too, and (as with a filter) how many it does not: "7 of 19 rows" alone left the other 12 unexplained.
    HTML and JSON show every row."""
    log = str(FIXTURES / "tool-call-turn.session.jsonl")
    for fmt, argv, said in (("html", [], "19 rows"), ("json", [], "19 rows"),
                            ("md", [], "7 of 19 rows (12 the transcript does not show)"),
                            ("md", ["--at", "10"], "3 of 19 rows (16 the transcript does not show)")):  # fmt: skip
        out = tmp_path / f"e.{fmt}"
        assert main(["export", log, "-o", str(out), *argv]) == 0
        assert f"exported {said} to {out} (" in capsys.readouterr().err
    text = (tmp_path / "e.md").read_text()
    assert len(_md_rows(text)) == 2 and "### Turn 1" in text and "*turn 1 ended" not in text


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_the_page_s_head_names_the_title_the_json_gives(tmp_path: Path, zstd: bool) -> None:
    """The HTML's ``<title>``, in its head before the rows, names the session by its last valid title, as the
    JSON's ``session.title`` (read by the pass) does: a later rename counts, a title event without a text and a
    tool result that quotes the event's type do not. The page's header gives it too (it gave the id alone)."""
    import orjson

    from tests.log.helpers import zstd_log

    header, *events = [orjson.loads(line) for line in (FIXTURES / "tool-call-turn.session.jsonl").read_bytes().splitlines()]
    result = next(e for e in events if e["type"] == "tool/result")
    result["data"]["message"]["content"][0]["content"][0]["text"] = '{"type":"session/title","data":{"title":"quoted"}}'
    events += [{"type": "session/title", "data": {"title": "Renamed", "source": {"kind": "user"}}},
               {"type": "session/title", "data": {"title": None, "source": {"kind": "user"}}}]  # fmt: skip
    log = tmp_path / ("s.jsonl.zstd" if zstd else "s.jsonl")
    log.write_bytes(zstd_log(events, header=header) if zstd else b"".join(orjson.dumps(x) + b"\n" for x in [header, *events]))
    page = _run("export", str(log), "--format", "html")
    assert "<title>Renamed · tapedeck export</title>" in page.split("</head>")[0]
    assert page.count("tapedeck export</title>") == 1
    assert "<tr><th>title</th><td>Renamed</td></tr>" in page  # the header says it too, not only the tab
    assert _json("export", str(log), "--format", "json")["session"]["title"] == "Renamed"


@pytest.mark.parametrize("log", LOGS, ids=[p.name.split(".session")[0] for p in LOGS])
def test_every_link_of_the_page_leads_to_an_element_of_it(log: Path, tmp_path: Path) -> None:
    """A reviewer clicks the page's links (the moment, notes, cuts, marks, the surface, the request): each leads to
    an element of the page. The moment linked to its seq's own row, which a stream's delta has not (its stream's
    row stands for it), a list cut at the moment (the TUI's export) kept links to the rows it leaves out, and a
    note on a seq the log no longer holds (a copy cut short) linked to no row."""
    from core.export.build import ExportOptions
    from core.export.write import export

    copy = tmp_path / log.name
    copy.write_bytes(log.read_bytes())
    doc = _json("export", str(copy), "--format", "json")
    deltas = [seq for r in doc["events"] if "deltas" in r for seq in range(r["seq"] + 1, r["endSeq"] + 1)]
    moments = [*deltas[:1], doc["session"]["events"] // 3, 2 * doc["session"]["events"] // 3]
    for row in doc["events"][:: max(1, len(doc["events"]) // 4)]:
        assert main(["note", str(copy), "--seq", str(row["seq"]), "look"]) == 0
    for at in moments:
        for cut in (False, True):
            out = io.BytesIO()
            export(copy, out, "html", ExportOptions(at=at, cut=cut))
            page = out.getvalue().decode()
            ids = set(re.findall(r' id="([^"]+)"', page))
            assert {h for h in re.findall(r'href="#([^"]*)"', page) if h not in ids} == set(), (at, cut)
    short = tmp_path / "short.jsonl"  # the same session cut short: its notes are the copy's
    short.write_bytes(b"".join(copy.read_bytes().splitlines(True)[:4]))
    page = _run("export", str(short), "--format", "html")
    assert "(not in this log)" in page and {h for h in re.findall(r'href="#([^"]*)"', page)} <= set(re.findall(r' id="([^"]+)"', page))


def test_the_chart_draws_a_cut_after_the_last_request_after_its_bar(tmp_path: Path) -> None:
    """A cut is drawn before the first request after it; a cut no request followed (the log ends after it) was drawn
    at the last request's bar, as if it came before that request, which it did not shrink: it is drawn past the last
    bar."""
    log = tmp_path / "s.jsonl"  # DSH's compaction-recovery, up to its compaction's replacement (seq 21)
    log.write_text("".join((FIXTURES / "compaction-recovery.session.jsonl").read_text().splitlines(True)[:24]))
    page = _run("export", str(log), "--format", "html")
    bars = [(float(x), float(w)) for x, w in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', page)]
    cut = float(re.findall(r'<line x1="([\d.]+)"', page)[-1])
    assert bars and cut >= bars[-1][0] + bars[-1][1]


def test_the_page_s_head_waits_for_the_pass_which_reads_the_log_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's head names the session by its last title, which only the pass learns. A byte search of the whole
    log before the pass found it, which decompressed every frame of a zstd log a second time; the rows now wait in
    a file until the pass is over and go out after the head, so the log is read once. An HTML export to stdout that
    fails (a moment the log has not) writes nothing there: it wrote the page's head and rows first."""
    import random

    import orjson

    import core.export.write as write
    from core.export import spool
    from core.export.build import ExportOptions
    from core.export.redact import Redactor
    from core.log.frames import FrameStream
    from tests.log.helpers import zstd_log

    header, *events = [orjson.loads(line) for line in (FIXTURES / "tool-call-turn.session.jsonl").read_bytes().splitlines()]
    rng = random.Random(1)  # notes that do not compress: the log is longer than what a read of its header takes
    events += [{"type": "goal/change", "data": {"note": rng.randbytes(1000).hex()}} for _ in range(300)]
    events.append({"type": "session/title", "data": {"title": "Renamed late", "source": {"kind": "user"}}})
    log = tmp_path / "s.jsonl.zstd"
    log.write_bytes(zstd_log(events, header=header))
    fed: dict[int, int] = {}  # compressed bytes fed to each frame stream
    feed = FrameStream.feed
    monkeypatch.setattr(FrameStream, "feed", lambda self, data: fed.update({id(self): fed.get(id(self), 0) + len(data)})
                        or feed(self, data))  # fmt: skip
    monkeypatch.setattr(spool, "WRITE_CHUNK", 1 << 16)  # the rows go to their file in several chunks
    monkeypatch.setattr(write, "WRITE_CHUNK", 1 << 16)  # and are copied from there in several
    out = io.BytesIO()
    write.export(log, out, "html", ExportOptions(redactor=Redactor()))
    page = out.getvalue().decode()
    assert list(fed.values()).count(log.stat().st_size) == 1  # the pass (and reads of the header's frame)
    assert page.startswith("<!DOCTYPE") and "<title>Renamed late · tapedeck export</title>" in page.split("</head>")[0]
    assert page.count("tapedeck export</title>") == 1 and page.endswith("</html>\n")
    plain = tmp_path / "s.jsonl"
    plain.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header, *events]))
    assert _run("export", str(plain), "--format", "html") == page
    assert main(["export", str(plain), "--format", "html", "--at", "100000"]) == 2
    assert capsys.readouterr().out == ""


def test_an_export_written_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    real, link = tmp_path / "real.html", tmp_path / "link.html"
    real.write_text("old")
    link.symlink_to(real)
    assert main(["export", str(FIXTURES / "tool-call-turn.session.jsonl"), "-o", str(link)]) == 0
    assert link.is_symlink() and real.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "real.html"]


def test_an_export_to_a_named_pipe_streams_into_it(tmp_path: Path) -> None:
    """``-o /dev/stdout`` or a FIFO: nothing can be renamed over it (as root that replaced the device node)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    read_end = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    held = os.open(fifo, os.O_WRONLY)  # a writer of the test's own: the reader sees the end only once it closes
    os.set_blocking(read_end, True)
    got = bytearray()

    def drain() -> None:
        while chunk := os.read(read_end, 1 << 16):
            got.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        code = main(["export", str(FIXTURES / "tool-call-turn.session.jsonl"), "--format", "md", "-o", str(fifo)])
    finally:
        os.close(held)
        reader.join()
        os.close(read_end)
    assert code == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got.startswith(b"## tapedeck session") and sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_an_output_with_a_trailing_slash_that_is_no_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o out/`` where no directory ``out`` is wrote the export to a file named ``out`` (and ``-o page.html/``
    replaced the file page.html), saying 'exported … to out/' (found in qa2's walkthrough): a trailing slash names a
    directory, so one that is not there is refused, naming it, and nothing is written."""
    log = FIXTURES / "multi-turn.session.jsonl"
    page = tmp_path / "page.html"
    page.write_text("kept")
    for target in (tmp_path / "out", page):
        assert main(["export", str(log), "-o", f"{target}/"]) == 2
        assert f"{target}/: no such directory" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"] and page.read_text() == "kept"


def test_export_to_file_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(TapedeckError, match="is a directory"):
        export_to_file(FIXTURES / "tool-call-turn.session.jsonl", tmp_path, "html", ExportOptions())


@pytest.mark.parametrize(("name", "mark", "marked"), [
    ("error-finish", None, 0), ("code-mode-turn", "new: after the cached prefix", 2),
    ("compaction-recovery", "new: past the cache break", 1),
])  # fmt: skip
def test_the_html_request_marks_what_is_new_as_its_cache_stood(name: str, mark: str | None, marked: int) -> None:
    """Every message of a session's first request was marked ``new: past the cache break`` under 'nothing was cached
    before it', and the messages a request appended to a kept cache under 'cache kept': a break named where there
    was none. A first request marks none; a kept cache's new messages are after its cached prefix."""
    out = io.BytesIO()
    export(FIXTURES / f"{name}.session.jsonl", out, "html", ExportOptions())
    page = out.getvalue().decode()
    request = page[page.index('id="request"') : page.index("<h2", page.index('id="request"') + 1)]
    marks = re.findall(r'<span class="mark">(new: [^<]*)</span>', request)
    assert marks == [mark] * marked


@pytest.mark.parametrize(
    "name",
    ["control.jsonl", "host.json", "bridge.json", "bridge.standby.json", "bridge.state.json",
     "control.outcomes.jsonl", ".writer.lock", "session.jsonl.zstd", "index"],
)  # fmt: skip
def test_an_export_never_replaces_a_file_the_session_keeps(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o`` naming a file that tapedeck, its host or the DSH bridge keeps for the session (its control inbox, the
    host's or the bridge's state, the bridge's outcomes, the writer's lock, the other log name of its directory, the
    log's index) replaced it with the page, as it did the log before: each is refused, the file left as it was."""
    from core.read.index import index_path

    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())
    target = index_path(log) if name == "index" else log.parent / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b'{"kept":true}\n')
    for given in (log, log.parent) if name != "session.jsonl.zstd" else (log,):  # (the newer log is the directory's)
        assert main(["export", str(given), "-o", str(target)]) == 2
        assert "the session keeps" in capsys.readouterr().err
        assert target.read_bytes() == b'{"kept":true}\n' and not list(target.parent.glob(".*.part"))


@pytest.mark.parametrize(
    ("name", "what"),
    [(".host.json.m1.4242.tmp", "host.json"), (".bridge.json.4242.tmp", "bridge.json"),
     (".bridge.state.json.7.tmp", "bridge.state.json"), ("session.jsonl.0123456789ab.tmp", "session.jsonl"),
     ("spill/1-1-call_1.txt", "spill/"), ("session.jsonl.notes.json.0123456789ab", "its notes"),
     ("session.jsonl.notes.json.lock", "its notes"), ("session.jsonl.repair", "a repair"),
     (".session.jsonl.0123456789ab.repair", "a repair"), ("session.jsonl.damaged-20261206T150000", "a repair")],
)  # fmt: skip
def test_an_export_never_takes_a_name_the_session_writes_under(
    tmp_path: Path, name: str, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o`` naming a temporary file the host or the bridge writes ``host.json`` or ``bridge.json`` under before
    renaming it into place (``.host.json.<machine>.<pid>.tmp``), or a new log's, was taken: renamed over one in
    the middle of its writer's work, the page became the session's state (or its log), and a host starting removes
    a dead writer's. A tool output the host stored in ``spill/``, which ``expand_result`` reads back, was replaced
    too, and so were the notes sidecar's lock and the temporary name a note is written under (``replace_file``'s
    ``<sidecar>.<12 hex digits>``), and the names a repair writes the log under before it takes the log's place
    (``<log>.repair``, ``.<log>.<12 hex digits>.repair``: the page would become the log) or keeps the damaged log
    under (``<log>.damaged-<time>``, the only copy of its bytes). Each is refused, the file left as it was."""
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())
    target = log.parent / name
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(b'{"kept":true}\n')
    assert main(["export", str(log), "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert "the session keeps" in err and what in err, err
    assert target.read_bytes() == b'{"kept":true}\n' and not list(target.parent.glob(".*.part"))


@pytest.mark.parametrize(
    ("kind", "what"),
    [("index", "an index is written under"), ("alerts", "its alert checkpoint"), ("fleet", "its alert checkpoint"),
     ("alerts-temporary", "an alert checkpoint is written under")],
)  # fmt: skip
def test_an_export_never_takes_a_name_the_cache_keeps_for_the_log_or_writes_under(
    tmp_path: Path, kind: str, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o`` naming the temporary file an index is written under in the cache (``.tmp-<12 hex digits>.idx``) was
    taken: renamed over one in the middle of its writer's work, the page was then renamed into the index's place
    (and ``cache clear`` removes such a name as an index left half-written); so were the log's alert checkpoints
    (``<hash>.alerts.ack``, ``<hash>.fleet.ack``: the next read of the log writes its own over the page) and their
    temporary names. Each is refused, the file left as it was."""
    from core.read.index import checkpoint_dir, checkpoint_path, index_dir

    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())
    targets = {"index": index_dir() / ".tmp-0123456789ab.idx", "alerts-temporary": checkpoint_dir() / ".tmp-0123456789ab.ack"}
    target = targets.get(kind) or checkpoint_path(log, kind)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b'{"kept":true}\n')
    assert main(["export", str(log), "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert "the session keeps" in err and what in err, err
    assert target.read_bytes() == b'{"kept":true}\n' and not list(target.parent.glob(".*.part"))


def test_the_page_lets_only_its_own_script_run() -> None:
    """The page's Content-Security-Policy let any inline script run (``script-src 'unsafe-inline'``), so the page
    was inert only as long as every text of the log was escaped: one slip, and a log's ``<script>`` or ``onerror=``
    ran. It now names the one script the page has by its hash, which no other script or event handler matches."""
    page = _run("export", str(FIXTURES / "tool-call-turn.session.jsonl"), "--no-redact")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert policy is not None and len(scripts) == 1
    directives = dict(d.strip().split(" ", 1) for d in policy.group(1).split(";"))
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert directives["script-src"] == f"'sha256-{digest}'"
    assert directives["default-src"] == "'none'"


def test_the_json_export_escapes_what_a_terminal_acts_on(tmp_path: Path) -> None:
    """The JSON export wrote a log's C1 controls (U+009B is a one-byte CSI to some terminals), DEL, the BiDi
    overrides and U+2028/U+2029 as they are, which orjson does: ``cat share.json`` acted on them. They are ``\\u``
    escapes now, and the JSON decodes to the same strings."""
    hostile = "a\x9b2J\x7f\u202e\u2028\u2029\x85z"
    log = plant(tmp_path / "s.jsonl", hostile, "out" + hostile, "done" + hostile)
    out = _run("export", str(log), "--format", "json", "--no-redact")
    assert re.findall("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", out) == []
    assert "\\u009b" in out and "\\u2028" in out
    texts = json.dumps(json.loads(out), ensure_ascii=False)
    assert texts.count(hostile) >= 3  # the user message, the result and the answer, whole


def test_the_html_export_draws_the_log_s_controls_after_escaping_its_markup(tmp_path: Path) -> None:
    """The HTML export kept a log's control characters wherever it went, so ``cat share.html`` ran its escapes: a
    log's text, long (a message, a result) or short (a type, a role), now draws each C0/C1 control but newline and
    tab, DEL and the BiDi controls as ``printable`` does, and its markup is escaped as before."""
    hostile = "<b>&amp;\x1b[2J\x07\x9b0m\x7f\u202e\tz"
    drawn = "&lt;b&gt;&amp;amp;␛[2J␇�0m␡�\tz"
    log = plant(tmp_path / "s.jsonl", hostile, "out" + hostile, "done" + hostile, structure="r" + hostile)
    page = _run("export", str(log), "--format", "html", "--no-redact")
    assert re.findall("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", page) == []
    assert page.count(drawn) >= 4 and "out" + drawn in page and "done" + drawn in page and "r" + drawn in page
