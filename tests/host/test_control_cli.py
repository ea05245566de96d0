"""``tapedeck control``: queue requests, wait for outcomes a (simulated) host writes to the log, exit codes."""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cli import build_parser
from core.cli import control as cli_control
from core.control.host_state import write_state
from core.control.inbox import InboxReader, outcome_event
from core.log.tail import Tailer
from core.log.writer import SessionWriter, make_header


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tapedeck")
    cli_control.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.handler(args)


@pytest.fixture(params=[False, True], ids=["raw", "zstd"])
def writer(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[SessionWriter]:
    header = make_header("sess-1", cwd=str(tmp_path / "ws"))
    w = SessionWriter.create(tmp_path / "sessions", header, compressed=request.param)
    w.append([{"type": "turn/start", "data": {"turn": 1}}])
    yield w
    w.close()


class FakeHost:
    """Answers inbox requests by appending outcome events, as the reference host does at a safe point."""

    def __init__(
        self, writer: SessionWriter, reject: set[str] = frozenset(), hold: set[str] = frozenset(), said: str = ""
    ) -> None:
        self.writer = writer
        self.reject = reject
        self.said = said  # what a rejection says after its own words (a hostile host's text)
        self.hold = hold  # ops only acknowledged ``pending``, as a paused host leaves them
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        reader = InboxReader(self.writer.path.parent / "control.jsonl")
        while not self.stop.wait(0.02):
            for entry in reader.read():
                if entry.withdraw is not None:  # a held request its sender gave up on
                    withdrawn = {"id": entry.withdraw, "op": None}
                    self.writer.append([outcome_event(withdrawn, "cancelled", error="withdrawn by its sender")])
                    continue
                assert entry.request is not None
                if entry.request["op"] in self.hold:
                    event = outcome_event(entry.request, "pending", None, {"until": "next step"})
                elif entry.request["op"] in self.reject:
                    event = outcome_event(
                        entry.request, "rejected", error=f"{entry.request['op']} is not possible now{self.said}"
                    )
                else:
                    event = outcome_event(entry.request, "applied", detail={"markId": 1})
                self.writer.append([{"type": "step/start", "data": {"turn": 1, "step": 1}}, event])

    def __enter__(self) -> FakeHost:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def test_send_a_request_to_a_live_host(writer: SessionWriter, capsys: pytest.CaptureFixture[str]) -> None:
    inbox = writer.path.parent / "control.jsonl"
    code = _run(["control", str(writer.path), "checkpoint", "--arg", "objective=find the bug"])
    out = capsys.readouterr().out
    [request] = [json.loads(line) for line in inbox.read_text().splitlines()]
    assert code == 0
    assert out == f"sent checkpoint request {request['id']} to the live host of session sess-1\n"
    assert request["args"] == {"objective": "find the bug"}


def test_queue_json_from_the_session_directory(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _run(
        [
            "control",
            str(writer.path.parent),
            "config.set",
            "--arg",
            "key=slice.history.keepRecentTurns",
            "--arg",
            "value=3",
            "--json",
        ]
    )
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert printed["op"] == "config.set" and printed["args"] == {
        "key": "slice.history.keepRecentTurns",
        "value": 3,
    }


def test_argument_typing(writer: SessionWriter, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["control", str(writer.path), "message", "--arg", "text=42", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["args"] == {"text": "42"}
    assert _run(["control", str(writer.path), "expand", "--arg", "seq=17", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["args"] == {"seq": 17}


def test_wait_for_an_applied_outcome(writer: SessionWriter, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeHost(writer):
        code = _run(["control", str(writer.path), "checkpoint", "--wait", "--timeout", "20"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("applied: checkpoint (request req-")
    assert "detail: markId: 1" in out


def test_an_outcome_s_error_is_quoted_when_piped(writer: SessionWriter, capsys: pytest.CaptureFixture[str]) -> None:
    """control --wait printed the outcome's error (the host's or the DSH bridge's words, read back from a log) as it
    came when stdout was no terminal: an escape sequence in it reached a pipe (``| less -R``, a model reading the
    output) raw, and a newline in it forged a line of the outcome. It is quoted as control quotes a session's id."""
    with FakeHost(writer, reject={"rewind"}, said="\x1b]52;c;cm0gLXJm\x07\n  detail: forged"):
        code = _run(["control", str(writer.path), "rewind", "--wait", "--timeout", "20"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.endswith("  error: rewind is not possible now\\u001b]52;c;cm0gLXJm\\u0007\\n  detail: forged\n"), out
    assert "\x1b" not in out and "\x07" not in out and len(out.splitlines()) == 2


def test_an_outcome_s_op_id_and_detail_are_quoted() -> None:
    """The op, the request id and the detail of an outcome come from a log as its error does (a DSH bridge's
    ``control.outcomes.jsonl``, a log anyone wrote): each is quoted, one line each, nothing a terminal acts on."""
    data = {"requestId": "req-\x1b[2J", "op": "pause\nforged", "outcome": "applied", "detail": {"k": "v\x9b1m\n"}}
    text = cli_control._render_outcome({"type": "tapedeck/control", "data": data})
    assert text == "applied: pause\\nforged (request req-\\u001b[2J, from the DSH bridge)\n  detail: k: v\\u009b1m\\n"


def test_a_wait_reads_only_what_the_log_gains_after_the_send(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer comes after the request, so a raw log is followed from its end at the send: a long session's
    history is not read again to find it (a 1 GB log would take longer than the wait)."""
    writer.append([{"type": "session/title", "data": {"title": "x" * 4000}} for _ in range(500)])  # ~2 MB
    before = writer.path.stat().st_size
    read: list[int] = []
    chunks = Tailer._chunks

    def counted(self: Tailer, end: int) -> Iterator[bytes]:
        for chunk in chunks(self, end):
            read.append(len(chunk))
            yield chunk

    monkeypatch.setattr(Tailer, "_chunks", counted)
    with FakeHost(writer):
        code = _run(["control", str(writer.path), "checkpoint", "--wait", "--timeout", "20"])
    assert code == 0 and capsys.readouterr().out.startswith("applied: checkpoint (request req-")
    if writer.compressed:  # a zstd log's frames are followed from its start
        assert sum(read) >= before
    else:
        assert 0 < sum(read) < 4096


def test_wait_for_a_rejected_outcome_as_json(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeHost(writer, reject={"rewind"}):
        code = _run(["control", str(writer.path), "rewind", "--wait", "--timeout", "20", "--json"])
    event = json.loads(capsys.readouterr().out)
    assert code == 1
    assert event["type"] == "tapedeck/control" and event["ignorable"] is True
    assert event["data"]["outcome"] == "rejected" and event["data"]["error"] == "rewind is not possible now"
    assert isinstance(event["seq"], int)


def test_a_wait_that_times_out_withdraws_its_request(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _run(["control", str(writer.path), "pause", "--wait", "--timeout", "0.3"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no outcome for request req-" in err and "it was withdrawn, so the host will never apply it" in err
    request, withdrawal = (json.loads(line) for line in (writer.path.parent / "control.jsonl").read_text().splitlines())
    assert withdrawal["withdraw"] == request["id"]


def test_a_wait_for_a_request_a_paused_host_holds_says_the_host_is_paused(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    """A paused host acknowledges a rewind, an expand or a config.set and applies it only at its next step, which
    the pause holds: the wait timed out saying 'still pending (until: next step)' and nothing of the pause, so the
    operator who had paused the agent waited for a step that never came (found in qa2's walkthrough of the demo)."""
    write_state(writer.path, "paused", os.getpid(), int(time.time() * 1000))
    with FakeHost(writer, hold={"config.set"}):
        code = _run(["control", str(writer.path), "config.set", "--arg", "key=slice.fold.pinSteps", "--arg", "value=2",
                     "--wait", "--timeout", "0.5"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    # and it does not promise what the withdrawal undoes: it said 'it applies it once resumed; it was withdrawn, so
    # the host will never apply it', and a resume applied nothing
    assert ("still pending (until: next step) after 0.5 s, while the host is paused, which holds it until a resume; "
            "it was withdrawn, so the host will never apply it: resume the host, then send it again") in err, err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["explode"], 'unknown control op "explode"; valid ops: checkpoint, rewind'),
        # a typo named the valid ops and left the operator to find the one meant
        (["chekpoint"], 'unknown control op "chekpoint" (did you mean checkpoint?); valid ops: checkpoint, rewind'),
        (["config-set"], 'unknown control op "config-set" (did you mean config.set?); valid ops: '),
        (["expand", "--arg", "seq=abc"], "expand: 'seq' must be an integer (got \"abc\")"),
        # int() took other scripts' digits, '_' and spaces, and quoted 5000 digits whole
        (["expand", "--arg", "seq=١٢"], "expand: 'seq' must be an integer (got \"١٢\")"),
        (["expand", "--arg", "seq=1_2"], "expand: 'seq' must be an integer (got \"1_2\")"),
        (["expand", "--arg", "seq= 12"], "expand: 'seq' must be an integer (got \" 12\")"),
        (["expand", "--arg", "seq=" + "9" * 5000], "expand: 'seq' must be an integer (got \"999999999"),
        (["expand", "--arg", "seq"], '--arg expects KEY=VALUE (got "seq")'),
        (["rewind", "--arg", "force=1"], 'rewind: unknown argument "force"'),
        (["pause", "--timeout", "5"], "--timeout only applies together with --wait"),
        (["pause", "--wait", "--timeout", "0"], "--timeout must be a positive number of seconds"),
        # the last one was sent, the first dropped without a word
        (["message", "--arg", "text=a", "--arg", "text=b"], "--arg text is given twice (\"a\", then \"b\"): give it once"),
        (["expand", "--arg", "seq=3", "--arg", " seq=4"], "--arg seq is given twice (\"3\", then \"4\"): give it once"),
    ],
)
def test_errors_exit_2_with_a_clear_message(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code = _run(["control", str(writer.path), *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("tapedeck: ") and message in err and len(err) < 1000
    assert not (writer.path.parent / "control.jsonl").exists()


def test_path_must_be_a_session_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["control", str(tmp_path / "missing"), "pause"]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    assert _run(["control", str(notes), "pause"]) == 2
    assert "not a session log" in capsys.readouterr().err
    assert not (tmp_path / "control.jsonl").exists()


def test_control_is_a_tapedeck_subcommand() -> None:
    args = build_parser().parse_args(["control", "x", "pause"])
    assert args.command == "control" and args.op == "pause"


@pytest.mark.parametrize(
    ("record", "said"),
    [
        (b"\x00\x00{garbage", "its host.json is not JSON"),
        (b'{"state": "exploded"}', "its host.json names no host state"),
        (b'{"state": "exited", "pid": 7, "since": 4102444800000}', "a time still to come by this machine's clock"),
        (b'{"state": "exited", "pid": 7, "since": 5000, "pad": "' + b"x" * 5000 + b'"}', "its host.json is larger"),
    ],
    ids=["not-json", "no-state", "future", "too-large"],
)
def test_a_damaged_host_file_is_named_and_its_exit_time_is_not_made_up(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str], record: bytes, said: str
) -> None:
    """A dead host's host.json damaged (or forged): control said the host 'exited at' the log's last write or a
    future time '(0 s ago)', as if host.json had said so; it names the file's damage and what was (not) sent."""
    writer.append([{"type": "tapedeck/host", "data": {"pid": 7}}])
    writer.close()
    (writer.path.parent / "host.json").write_bytes(record)
    code = _run(["control", str(writer.path), "pause"])
    err = capsys.readouterr().err
    assert code == 3 and said in err, err
    assert "(0 s ago)" not in err.split("last written")[0] and "nothing was sent" in err
    assert not (writer.path.parent / "control.jsonl").exists()


@pytest.mark.parametrize(("record", "said"), [
    (b'{"state": "running", "pid": 7, "since": 1700000000000}', "it stopped without saying so, as a killed host does"),
    (None, "no host.json says when it exited"),
    (b'{"state": "exited", "pid": 7, "since": 1700000000000}', "it exited at 2023-11-14 22:13:20 UTC"),
], ids=["killed", "no-host-file", "exited"])  # fmt: skip
def test_a_dead_host_is_said_to_have_exited_only_when_it_said_so(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str], record: bytes | None, said: str
) -> None:
    """A host killed (host.json still 'running') was said to have 'exited at' the log's last write, which may be
    hours before it died; it is said to have stopped without saying so, with the log's last write beside."""
    writer.append([{"type": "tapedeck/host", "data": {"pid": 7}}])
    writer.close()
    if record is not None:
        (writer.path.parent / "host.json").write_bytes(record)
    code = _run(["control", str(writer.path), "pause"])
    err = capsys.readouterr().err
    assert code == 3 and said in err and "nothing was sent" in err, err
    assert ("it exited at" in err) == (said.startswith("it exited")), err


@pytest.mark.parametrize("since", [2**63 - 1, -1], ids=["year-292278994", "before-1970"])
def test_a_forged_exit_time_is_called_implausible_not_rendered(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str], since: int
) -> None:
    """A host.json whose 'since' is far past any clock (2**63-1 ms: the year 292278994) or before 1970 was rendered
    as it came ('exited at 292278994-08-17 …', 'since 1969-12-31 …'); control and inspect call it implausible."""
    writer.append([{"type": "tapedeck/host", "data": {"pid": 7}}])
    writer.close()
    (writer.path.parent / "host.json").write_text(f'{{"state": "exited", "pid": 7, "since": {since}}}')
    assert _run(["control", str(writer.path), "pause"]) == 3
    err = capsys.readouterr().err
    assert "it exited at an implausible time" in err and "nothing was sent" in err, err
    from core.cli import main

    assert main(["inspect", str(writer.path)]) == 0
    out = capsys.readouterr().out
    assert "host exited (pid 7) since an implausible time\n" in out, out


@pytest.mark.parametrize("pid", [-1, 0, 2**40])
def test_a_pid_no_process_can_have_is_named_as_such(
    writer: SessionWriter, capsys: pytest.CaptureFixture[str], pid: int
) -> None:
    """A host.json whose pid is none a process can have was shown as one ('host exited (pid -1)'; 0 was left out)."""
    writer.append([{"type": "tapedeck/host", "data": {"pid": 7}}])
    writer.close()
    (writer.path.parent / "host.json").write_text(f'{{"state": "exited", "pid": {pid}, "since": 1764990000000}}')
    from core.cli import main

    assert main(["inspect", str(writer.path)]) == 0
    out = capsys.readouterr().out
    assert f"host exited (pid {pid}, which no process can have) since 2025-12-06" in out, out


def test_control_help_says_who_takes_a_queued_request(capsys: pytest.CaptureFixture[str]) -> None:
    """``--queue``'s help named only `run --resume`, while on a DSH session the bridge's next start takes it (as
    control's own refusal says). Found walking the CLI's --help."""
    with pytest.raises(SystemExit):
        _run(["control", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "the next `run --resume` applies it, or on a DSH session the bridge's next start" in text
