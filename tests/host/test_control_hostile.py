"""Hostile inbox lines and arguments: each is refused with a specific message, never a crash (issue #11)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.control.host_state import read_host_state
from core.control.inbox import (
    CONTROL_EVENT,
    MAX_LINE_BYTES,
    ControlError,
    InboxReader,
    append_request,
    inbox_line,
    inbox_path,
    make_request,
    outcome_event,
)
from tests.conftest import Processes
from tests.host.test_control_at_exit import lingering_host

if TYPE_CHECKING:
    from core.host.loop import AgentHost

DEEP = 1000


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    return tmp_path / "control.jsonl"


def _one(inbox: Path, line: bytes) -> object:
    inbox.write_bytes(line + b"\n")
    [entry] = InboxReader(inbox).read()
    return entry


def test_a_line_nested_a_thousand_deep_is_rejected_by_id(inbox: Path) -> None:
    nested = b'{"id":"deep-1","op":"message","args":{"text":' + b"[" * DEEP + b"]" * DEEP + b"}}"
    entry = _one(inbox, nested)
    assert entry.request is not None and entry.request["id"] == "deep-1"
    assert entry.error and "nested deeper than" in entry.error
    orjson.dumps(outcome_event(entry.request, "rejected", entry.error)["data"])


def test_a_line_nested_past_the_parser_limit_is_rejected_by_id(inbox: Path) -> None:
    nested = b'{"id":"deep-2","op":"message","args":{"text":' + b"[" * 5000 + b"]" * 5000 + b"}}"
    entry = _one(inbox, nested)
    assert entry.request is not None and entry.request["id"] == "deep-2"
    assert entry.error and "not valid JSON" in entry.error


def test_a_lone_surrogate_is_rejected_by_id(inbox: Path) -> None:
    entry = _one(inbox, b'{"id":"sur-1","op":"message","args":{"text":"a\\ud800b"}}')
    assert entry.request is not None and entry.request["id"] == "sur-1"
    assert entry.error and "not valid JSON" in entry.error
    orjson.dumps(outcome_event(entry.request, "rejected", entry.error)["data"])


def test_a_line_that_is_not_utf8_is_rejected_by_id_naming_its_byte(inbox: Path) -> None:
    """orjson refuses any line that is not UTF-8 as 'str is not valid UTF-8: surrogates not allowed: line 1 column 1
    (char 0)', wherever the byte is and though no surrogate is in it; the line's first such byte is named."""
    line = b'{"id":"bin-1","op":"message","args":{"text":"caf\xe9"}}'
    entry = _one(inbox, line)
    assert entry.request is not None and entry.request["id"] == "bin-1"
    assert (
        entry.error
        == f"control inbox line 1 is not UTF-8: its byte {line.index(0xE9)} (0xe9) cannot be decoded"
    )


def _overlong(request_id: str) -> bytes:
    head = json.dumps({"id": request_id, "op": "message", "args": {"text": ""}})[:-3].encode()
    return head + b"x" * (2 * MAX_LINE_BYTES) + b'"}}\n'


def test_a_2mb_line_gets_the_same_rejection_in_one_read_or_in_pieces(tmp_path: Path) -> None:
    whole, pieces = tmp_path / "whole.jsonl", tmp_path / "pieces.jsonl"
    line = _overlong("big-1")
    whole.write_bytes(line)
    [at_once] = InboxReader(whole).read()
    reader = InboxReader(pieces)
    got = []
    for start in range(0, len(line), 300_000):
        with open(pieces, "ab") as f:
            f.write(line[start : start + 300_000])
        got += reader.read()
    [in_pieces] = got
    for entry in (at_once, in_pieces):
        assert entry.request is not None and entry.request["id"] == "big-1"
        assert entry.error and f"longer than {MAX_LINE_BYTES} bytes" in entry.error
    assert at_once.error == in_pieces.error and at_once.line == in_pieces.line == 1


def test_a_huge_inbox_is_read_in_bounded_pieces(tmp_path: Path) -> None:
    """64 MiB without a newline, then a request: the host's memory must not grow with what was dumped there."""
    inbox = tmp_path / "control.jsonl"
    with inbox.open("wb") as f:
        f.write(b"x" * (64 << 20) + b"\n")
        f.write(inbox_line(make_request("pause")))
    tracemalloc.start()
    try:
        junk, request = InboxReader(inbox).read()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert junk.error and "longer than" in junk.error and request.request and request.request["op"] == "pause"
    assert peak < 16 << 20, peak


def test_a_symlinked_inbox_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("")
    inbox = tmp_path / "control.jsonl"
    inbox.symlink_to(elsewhere)
    with pytest.raises(ControlError, match="is a symbolic link"):
        append_request(inbox, "pause")
    assert elsewhere.read_text() == ""
    with pytest.raises(ControlError, match="is a symbolic link"):
        InboxReader(inbox).read()


def test_an_existing_0644_inbox_is_made_0600(inbox: Path) -> None:
    inbox.write_text("")
    os.chmod(inbox, 0o644)
    append_request(inbox, "pause")
    assert stat.S_IMODE(inbox.stat().st_mode) == 0o600


def _entries(data: bytes, cuts: list[int], tmp: Path) -> list[tuple[object, ...]]:
    path = tmp / f"fuzz-{os.getpid()}-{len(cuts)}.jsonl"
    path.unlink(missing_ok=True)
    reader = InboxReader(path)
    out = []
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    for a, b in zip(bounds, bounds[1:], strict=False):
        with open(path, "ab") as f:
            f.write(data[a:b])
        out += reader.read()
    path.unlink(missing_ok=True)
    return [(e.line, e.offset, e.request, e.error) for e in out]


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_requests = st.fixed_dictionaries(
    {"id": st.text(max_size=8), "op": st.sampled_from(["pause", "message", "expand", "config.set", "x"])},
    optional={"args": _json_values, "at": _json_values, "expires": _json_values, "queued": _json_values},
)
_lines = st.one_of(
    _requests.map(lambda r: json.dumps(r).encode()),
    st.binary(max_size=40).filter(lambda b: b"\n" not in b),
    st.sampled_from(
        [b'{"id":"s","op":"message","args":{"text":"\\udc00"}}', b"[" * 300, b'{"id":"d"' + b"[" * 40]
    ),
    st.builds(lambda n: b'{"id":"n","op":"pause","args":' + b"[" * n + b"]" * n + b"}", st.integers(0, 1200)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_lines, max_size=6), cuts=st.lists(st.integers(0, 10_000), max_size=5))
def test_fuzz_inbox_reader_never_raises_and_ignores_how_lines_arrive(
    tmp_path: Path, lines: list[bytes], cuts: list[int]
) -> None:
    data = b"\n".join(lines) + b"\n"
    whole = _entries(data, [], tmp_path)
    assert _entries(data, cuts, tmp_path) == whole
    for _line, _offset, request, error in whole:
        if request is None:
            assert error
            continue
        assert isinstance(request["id"], str) and request["id"]
        assert error or isinstance(request["args"], dict)
        orjson.dumps(outcome_event(request, "rejected" if error else "applied", error)["data"])


@pytest.fixture
def log(tmp_path: Path) -> Path:
    from core.log.writer import SessionWriter, make_header

    with SessionWriter.create(tmp_path / "sessions", make_header("s-1", cwd=str(tmp_path))) as writer:
        return writer.path


@pytest.fixture
def live_log(tmp_path: Path) -> Iterator[Path]:
    """A log whose writer is open: to ``control`` it has a live host."""
    from core.log.writer import SessionWriter, make_header

    with SessionWriter.create(tmp_path / "sessions", make_header("s-1", cwd=str(tmp_path))) as writer:
        yield writer.path


def _cli(argv: list[str]) -> int:
    from core.cli import build_parser

    args = build_parser().parse_args(argv)
    return args.handler(args)


def test_a_non_utf8_arg_is_refused_by_the_cli(live_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = os.fsdecode(b"caf\xe9")
    assert _cli(["control", str(live_log), "message", "--arg", f"text={text}"]) == 2
    err = capsys.readouterr().err
    assert "--arg text is not valid UTF-8" in err
    assert not (live_log.parent / "control.jsonl").exists()


@pytest.mark.parametrize("value", [str(10**26), str(-(10**20))])
def test_an_integer_beyond_64_bits_is_refused_by_the_cli_as_such(
    live_log: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    """It was refused as 'the arguments are not valid UTF-8 text'."""
    argv = [
        "control",
        str(live_log),
        "config.set",
        "--arg",
        "key=slice.fold.pinSteps",
        "--arg",
        f"value={value}",
    ]
    assert _cli(argv) == 2
    err = capsys.readouterr().err
    assert "is an integer beyond 64 bits" in err and "UTF-8" not in err, err
    assert not (live_log.parent / "control.jsonl").exists()


@pytest.mark.parametrize("digits", [b"100000000000000000000000", b"18446744073709551616"])
def test_an_integer_beyond_64_bits_in_the_inbox_is_refused_as_such(inbox: Path, digits: bytes) -> None:
    # JSON's reader makes such an integer a float: the rejection said 'must be a non-negative integer (got 1e+23)'
    entry = _one(inbox, b'{"id":"big-1","op":"expand","args":{"seq":' + digits + b"}}")
    assert entry.request is not None and entry.request["id"] == "big-1"
    assert entry.error and "'seq' must be a non-negative integer" in entry.error, entry.error
    assert "(got a number beyond what 64 bits hold, about " in entry.error, entry.error


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_non_finite_timeout_is_refused(log: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    assert _cli(["control", str(log), "pause", "--wait", f"--timeout={value}"]) == 2
    assert "--timeout must be a positive number of seconds" in capsys.readouterr().err


def test_a_timeout_past_a_day_is_refused_as_every_other_wait_is(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--timeout had a check of its own that let any finite wait through: 1e6 s waited 11 days where --interval,
    --exec-timeout and --pace are refused past a day (check_seconds), and nothing was said of it."""
    assert _cli(["control", str(log), "pause", "--wait", "--timeout", "100000"]) == 2
    assert "--timeout must be at most 86,400 seconds (a day), not 100000" in capsys.readouterr().err
    assert not (log.parent / "control.jsonl").exists()


@pytest.mark.parametrize("value", ["Infinity", "-Infinity", "NaN", "1e999"])
def test_a_non_finite_config_value_is_refused_by_the_cli(
    live_log: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    argv = [
        "control",
        str(live_log),
        "config.set",
        "--arg",
        "key=slice.fold.pinMaxChars",
        "--arg",
        f"value={value}",
    ]
    assert _cli(argv) == 2
    assert "is not a finite number" in capsys.readouterr().err
    assert not (live_log.parent / "control.jsonl").exists()


@pytest.mark.parametrize(
    ("key", "value"),
    [("host.shell.sandbox", "off"), ("host.shell.passEnv", ["GOPATH"]), ("host.shell.network", True),
     ("host.shell", {"sandbox": "off"}),
     # the host opens its prolong log once: a change was logged as applied, and status then named a file (or
     # window) the host never wrote, while it went on writing the old one whole
     ("prolong.logFile", "mem/log2.txt"), ("prolong.logWindow", 3)],
)  # fmt: skip
def test_host_keys_are_start_only_in_the_inbox(inbox: Path, key: str, value: object) -> None:
    line = json.dumps({"id": "r1", "op": "config.set", "args": {"key": key, "value": value}, "at": 1})
    entry = _one(inbox, line.encode())
    assert entry.request is not None and entry.request["id"] == "r1"
    assert entry.error == (
        f"config.set: {key} is set only when the host starts (its --config file); a running host keeps it"
    )
    with pytest.raises(ControlError, match="set only when the host starts"):
        append_request(inbox, "config.set", {"key": key, "value": value})


def test_a_live_host_restores_0600_on_an_inbox_it_reads(inbox: Path) -> None:
    reader = InboxReader(inbox)
    append_request(inbox, "pause")
    os.chmod(inbox, 0o644)
    [entry] = reader.read()
    assert entry.request is not None and entry.request["op"] == "pause"
    assert stat.S_IMODE(inbox.stat().st_mode) == 0o600
    os.chmod(inbox, 0o666)
    assert reader.read() == []
    assert stat.S_IMODE(inbox.stat().st_mode) == 0o600


def test_an_inbox_whose_mode_cannot_be_restored_is_reported_and_not_read(
    inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the bridge does: an inbox widened to 0644 that fchmod cannot set back (a read-only mount, another owner's
    file) is a problem the host reports, and its lines wait until it is 0600 again. The host read it anyway."""
    import errno

    reader = InboxReader(inbox)
    append_request(inbox, "pause")
    os.chmod(inbox, 0o644)

    def refuse(fd: int, mode: int) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(os, "fchmod", refuse)
    with pytest.raises(ControlError) as caught:
        reader.read()
    assert str(caught.value) == (
        f"cannot restore mode 0600 of the control inbox {inbox}: Read-only file system; "
        "it has mode 0644 and is not read until it is 0600 again or replaced"
    )
    monkeypatch.undo()
    os.chmod(inbox, 0o600)
    [entry] = reader.read()
    assert entry.request is not None and entry.request["op"] == "pause"


def test_a_sender_that_cannot_set_the_inbox_mode_says_which_mode_on_which_file(
    inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sender's fchmod that failed (another user's inbox left 0666, say) was reported as 'cannot open the control
    inbox …: Operation not permitted': the open had worked, and neither the mode it set nor the file's came up."""
    import errno

    inbox.write_text("")
    os.chmod(inbox, 0o666)

    def refuse(fd: int, mode: int) -> None:
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "fchmod", refuse)
    with pytest.raises(ControlError) as caught:
        append_request(inbox, "pause")
    assert str(caught.value) == (
        f"cannot set mode 0600 on the control inbox {inbox} (it has mode 0666): fchmod failed: Operation not "
        "permitted; nothing was written"
    )
    assert inbox.read_text() == ""


@pytest.fixture
def exited_log(tmp_path: Path) -> Path:
    """A log whose tapedeck host exited: ``control --queue`` leaves requests for its next resume."""
    from core.log.writer import SessionWriter, make_header

    host = [{"type": "tapedeck/host", "data": {"pid": 1, "workspace": str(tmp_path)}}]
    with SessionWriter.create(
        tmp_path / "sessions", make_header("s-1", cwd=str(tmp_path)), first=host
    ) as writer:
        return writer.path


@pytest.mark.parametrize("value", ["1e300", "1e20"])
def test_an_expiry_the_log_cannot_hold_is_refused_as_such(
    exited_log: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    assert _cli(["control", str(exited_log), "pause", "--queue", "--expires", value]) == 2
    assert "--expires must be at most 1,000,000,000,000 seconds" in capsys.readouterr().err
    assert not (exited_log.parent / "control.jsonl").exists()


@pytest.mark.parametrize(
    ("value", "said"),
    [("nan", "--expires must be a positive number of seconds, not nan"),
     ("-inf", "--expires must be a positive number of seconds, not -inf"),
     ("0", "--expires must be a positive number of seconds, not 0"),
     ("1e13", "--expires must be at most 1,000,000,000,000 seconds, not 1e+13")],
)  # fmt: skip
def test_a_bad_expiry_is_refused_before_the_log_is_looked_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, said: str
) -> None:
    """`--queue --expires nan` was refused only by the inbox, after the log, its host and its bridge were checked:
    on a log no host ran it said that, not what was wrong with the option. It is refused as the CLI refuses any
    number of seconds, before the log is read (here there is none)."""
    argv = ["control", str(tmp_path / "nope.jsonl"), "pause", "--queue", f"--expires={value}"]
    assert _cli(argv) == 2
    err = capsys.readouterr().err
    assert said in err and "nope" not in err, err


def test_an_expiry_below_a_millisecond_still_lies_ahead(exited_log: Path) -> None:
    assert _cli(["control", str(exited_log), "pause", "--queue", "--expires", "0.0001"]) == 0
    [request] = [
        orjson.loads(line) for line in (exited_log.parent / "control.jsonl").read_bytes().splitlines()
    ]
    assert request["expires"] > request["at"]


@pytest.mark.parametrize("expires", [-1, 0, -9_000_000_000_000_000])
def test_an_expiry_before_1970_is_malformed_not_expired(inbox: Path, expires: int) -> None:
    # it was answered 'expired' ("it expired at 1969-12-31 23:59:59 UTC"), as if a real deadline had passed
    entry = _one(inbox, b'{"id":"old-1","op":"pause","at":1,"expires":%d}' % expires)
    assert entry.request is not None and entry.request["id"] == "old-1" and "expires" not in entry.request
    assert entry.error == "control inbox line 1: its 'expires' is no time (epoch milliseconds after 1970)"


def test_a_fifo_named_host_json_is_never_waited_on(
    exited_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``host.json`` is read by every command that shows a host's state: a FIFO there must not hang them."""
    import threading

    from core.control.host_state import read_host_state, read_inbox_position, state_path

    os.mkfifo(state_path(exited_log))  # opened for reading, it would wait for a writer forever
    found: list[object] = []
    thread = threading.Thread(
        target=lambda: found.append((read_host_state(exited_log).state, read_inbox_position(exited_log))),
        daemon=True,
    )
    thread.start()
    thread.join(60)
    assert found == [("exited", None)]


@pytest.mark.parametrize("thing", ["fifo", "directory", "link"])
def test_a_host_answers_again_once_something_put_in_its_inbox_s_place_is_gone(
    tmp_path: Path, processes: Processes, capsys: pytest.CaptureFixture[str], thing: str
) -> None:
    """A FIFO (mode 0644, as mkfifo makes it), a directory or a link where the inbox was, then taken away: the live
    host reads the inbox made again and answers. It opened the FIFO to put its mode back and waited there for a
    writer forever, holding the inbox's lock: no request, not even a stop, reached it again."""
    host, log = lingering_host(processes, tmp_path)
    deadline = time.monotonic() + 60
    while read_host_state(log).state != "idle":
        assert host.poll() is None and time.monotonic() < deadline, "the host did not get idle"
        time.sleep(0.02)
    inbox = inbox_path(log)
    inbox.unlink(missing_ok=True)
    {"fifo": os.mkfifo, "directory": os.mkdir, "link": lambda p: p.symlink_to(tmp_path / "elsewhere")}[thing](
        inbox
    )
    said = tmp_path / "host.out"  # the host met it: it says so once
    while not any(
        why in said.read_bytes() for why in (b"is not a regular file", b"is a symbolic link; refusing")
    ):
        assert host.poll() is None and time.monotonic() < deadline, said.read_text()
        time.sleep(0.02)
    inbox.rmdir() if thing == "directory" else inbox.unlink()
    assert main(["control", str(log), "checkpoint", "--wait", "--timeout", "10"]) == 0, (
        capsys.readouterr().err
    )
    assert capsys.readouterr().out.startswith("applied: checkpoint")
    assert main(["control", str(log), "stop"]) == 0
    assert host.wait(60) == 0


def test_a_whole_number_beyond_64_bits_sent_as_a_float_is_refused_as_the_integer_the_key_wants(
    tmp_path: Path, processes: Processes, capsys: pytest.CaptureFixture[str]
) -> None:
    """``1e+23`` is a float to the inbox and a whole number to the slice validator: the host refused it saying
    '99999999999999991611392 is an integer beyond 64 bits' (1e308: 309 digits), a number nobody sent; it says the
    key wants an integer and quotes the value as sent. Whole floats the log can hold (-0.0, 3.0) are integers, as in
    JavaScript; 2.5 is refused by the key's own rule. Both are past the key's range, which is said first, quoting the
    value as sent all the same."""
    host, log = lingering_host(processes, tmp_path)
    deadline = time.monotonic() + 60
    while read_host_state(log).state != "idle":
        assert host.poll() is None and time.monotonic() < deadline, "the host did not get idle"
        time.sleep(0.02)
    from core.control.inbox import append_request, final_outcome_in

    answers, refused = {}, {}
    for value in ("1e+23", "1e308", "2.5", "-0.0", "3.0"):
        argv = [
            "control",
            str(log),
            "config.set",
            "--arg",
            "key=slice.fold.pinSteps",
            "--arg",
            f"value={value}",
        ]
        code = main([*argv, "--wait", "--timeout", "20"])
        out, err = capsys.readouterr()
        if (
            code == 2
        ):  # refused before sending, in the host's words: the host is asked as well, straight in its inbox
            answers[value] = (
                "refused: config.set",
                "error: " + err.removeprefix("tapedeck: config.set: ").strip(),
            )
            sent = append_request(
                inbox_path(log), "config.set", {"key": "slice.fold.pinSteps", "value": float(value)}
            )
            while (outcome := final_outcome_in(log.read_bytes(), sent["id"])) is None:
                assert host.poll() is None and time.monotonic() < deadline, "the host did not answer"
                time.sleep(0.05)
            refused[value] = ("rejected: config.set", f"error: {outcome['error']}")
            continue
        outcome, said = out.strip().split("\n")
        answers[value] = (outcome.split(" (request")[0], said.strip())
    wants = "slice.fold.pinSteps must be from 0 to 10,000 (got"
    assert refused == {
        value: ("rejected: config.set", answers[value][1]) for value in ("1e+23", "1e308", "2.5")
    }
    assert answers == {
        "1e+23": ("refused: config.set", f"error: {wants} 1e+23)"),
        "1e308": ("refused: config.set", f"error: {wants} 1e+308)"),
        "2.5": ("refused: config.set", "error: pinSteps must be a non-negative integer (got 2.5)"),
        "-0.0": ("applied: config.set", "detail: key: slice.fold.pinSteps, old: 0, new: 0"),
        "3.0": ("applied: config.set", "detail: key: slice.fold.pinSteps, old: 0, new: 3"),
    }, answers
    assert main(["control", str(log), "stop"]) == 0
    assert host.wait(60) == 0


def test_a_line_an_editor_began_with_a_byte_order_mark_is_rejected_by_its_id(inbox: Path) -> None:
    # orjson refuses the mark, and the id was then looked for only at the line's first byte: the line was only
    # reported, so its sender (a script written with PowerShell's Out-File, say) never heard of its request
    entry = _one(inbox, b'\xef\xbb\xbf{"id":"bom-1","op":"checkpoint","args":{},"at":1}')
    assert entry.request is not None and entry.request["id"] == "bom-1"
    assert entry.error is not None and "byte order mark" in entry.error


def test_a_request_whose_at_is_no_time_is_rejected_by_its_id_by_a_real_host(
    tmp_path: Path, processes: Processes
) -> None:
    """``at`` decides whether a request was sent before the host started (then cancelled): one that is no integer
    time ("soon", 1.5, true, a time before 1970) was taken as fresh and applied, a checkpoint placed on no one's
    word. The host rejects it by its id, naming the key, as it does a malformed ``expires``."""
    from core.control.inbox import final_outcome_in

    host, log = lingering_host(processes, tmp_path)
    deadline = time.monotonic() + 60
    while read_host_state(log).state != "idle":
        assert host.poll() is None and time.monotonic() < deadline, "the host did not get idle"
        time.sleep(0.02)
    values = {"text": b'"soon"', "float": b"1.5", "bool": b"true", "zero": b"0", "null": b"null"}
    with inbox_path(log).open("ab") as out:
        for name, value in values.items():
            out.write(b'{"id":"at-%s","op":"checkpoint","args":{},"at":%s}\n' % (name.encode(), value))
    outcomes: dict[str, dict[str, object] | None] = {}
    while len(outcomes) < len(values) or None in outcomes.values():
        assert host.poll() is None and time.monotonic() < deadline, outcomes
        outcomes = {name: final_outcome_in(log.read_bytes(), f"at-{name}") for name in values}
        time.sleep(0.05)
    said = "control inbox line {}: its 'at' is no time (epoch milliseconds after 1970)"
    assert {name: (o["outcome"], o.get("error")) for name, o in outcomes.items() if o} == {
        name: ("rejected", said.format(n)) for n, name in enumerate(values, 1)
    }
    assert main(["control", str(log), "stop"]) == 0
    assert host.wait(60) == 0


@pytest.mark.parametrize("queue", [False, True], ids=["refused", "queued"])
def test_a_session_id_control_names_is_quoted_cut_and_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], queue: bool
) -> None:
    """control named the session by its header's id whole and as it is, so a log whose id held an escape sequence
    and 200 characters more put them raw on stderr (no live host) or stdout (queued), when neither is a terminal;
    it is quoted as run --resume quotes an id (core.shared.text.quoted)."""
    from core.log.writer import SessionWriter, make_header

    host = [{"type": "tapedeck/host", "data": {"pid": 1, "workspace": str(tmp_path)}}]
    header = make_header("s\x1b[2J" + "k" * 200, cwd=str(tmp_path))
    with SessionWriter.create(tmp_path / "sessions", header, first=host) as writer:
        log = writer.path
    assert _cli(["control", str(log), "pause", *(["--queue"] if queue else [])]) == (0 if queue else 3)
    out, err = capsys.readouterr()
    said = out if queue else err
    assert "session s\\u001b[2Jkkk" in said and "k…" in said and "\x1b" not in said, said[:300]


def test_a_request_the_host_fails_on_is_rejected_with_the_failure_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request the host failed on unexpectedly was rejected with the exception as Python writes it (its repr),
    whole: a failure quoting a 100,000-character value put it all into the outcome the log, the TUI and control
    --wait show. It is worded as a tool's unexpected failure is: its type, and its text quoted at 200 characters."""
    host = _scripted_host(tmp_path)
    try:

        def broken(*_: object) -> None:
            raise ValueError("k\x1b[2J\n" + "k" * 100_000)

        monkeypatch.setattr(host.operator, "_take", broken)
        rid = append_request(host.inbox_path, "pause")["id"]
        host.operator.poll()
        [error] = [e["data"]["error"] for e in host.session.events
                   if e["type"] == CONTROL_EVENT and e["data"]["requestId"] == rid]  # fmt: skip
    finally:
        host.close()
    assert error.startswith("the host failed on it: ValueError: k\\u001b[2J\\nkkk") and error.endswith(
        "k…"
    ), error[:300]
    assert len(error) < 300, len(error)


def _scripted_host(tmp_path: Path) -> AgentHost:
    """A host created in ``tmp_path`` with a scripted model and one task, not run: the test drives its operator."""
    from core.control.config import load_config
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers.scripted import ScriptedModel

    (tmp_path / "ws").mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}]}))
    return AgentHost.create(tmp_path / "sessions", ScriptedModel(script), load_config(None),
                            HostOptions(workspace=tmp_path / "ws", progress=lambda _: None), tasks=["t"])  # fmt: skip


@contextlib.contextmanager
def _idle_host(tmp_path: Path) -> Iterator[tuple[AgentHost, list[str]]]:
    """A ``_scripted_host`` whose operator is idle, and the lines it says, closed on leaving."""
    host = _scripted_host(tmp_path)
    said: list[str] = []
    host.options.progress = said.append
    try:
        host.operator.set_state("idle")
        yield host, said
    finally:
        host.close()


def test_host_json_forgets_the_inbox_position_once_the_inbox_is_gone(tmp_path: Path) -> None:
    """host.json kept the removed inbox's device, inode and offset: a host resumed after a kill, finding a new inbox
    that got the old inode number, took its first lines as reported already. Once the inbox is gone, host.json
    records no position (as the plugin sets its cursor back), so the next inbox is read as new from its start."""
    from core.control.host_state import read_inbox_position

    host = _scripted_host(tmp_path)
    try:
        log = host.writer.path
        host.operator.set_state("idle")  # as run does first
        append_request(host.inbox_path, "checkpoint")
        host.operator.poll()
        assert read_inbox_position(log) is not None
        host.inbox_path.unlink()
        host.operator.poll()
        assert read_inbox_position(log) is None
    finally:
        host.close()


def test_an_inbox_rewritten_in_place_while_no_host_ran_has_its_lines_reported(tmp_path: Path) -> None:
    """host.json's inbox position named only the device, inode and offset: an inbox truncated and written again
    (the same inode) while no host ran was taken, up to that offset, for the one the host before read, and the next
    host said nothing of the junk lines it held there. The position holds a digest of the file's first bytes too."""
    from core.control.host_state import read_inbox_position
    from core.host.operator import Operator

    host = _scripted_host(tmp_path)
    said: list[str] = []
    host.options.progress = said.append
    try:
        log, inbox = host.writer.path, host.inbox_path
        host.operator.set_state("idle")
        inbox.write_bytes(b"junk one\n")
        host.operator.poll()
        assert said[-1].startswith("control inbox line 1 is not valid JSON")
        assert read_inbox_position(log)[2] == len(b"junk one\n")
        host.operator.stop_watching()
        with open(inbox, "r+b") as f:  # the same inode, as long as what the host before read
            f.truncate(0)
            f.write(b"junk two\n")
        said.clear()
        second = Operator(host, log, inbox, host.hooks)  # the next host's
        second.set_state("idle")
        second.poll()
        assert [m for m in said if m.startswith("control inbox line")] == [said[-1]], said
        assert said[-1].startswith("control inbox line 1 is not valid JSON")
        said.clear()
        with open(inbox, "ab") as f:  # the file its mark names: what that host read is not said again
            f.write(b"junk three\n")
        Operator(host, log, inbox, host.hooks).poll()
        assert [m.split(" is ")[0] for m in said if m.startswith("control inbox line")] == [
            "control inbox line 2"
        ]
    finally:
        host.close()


def test_a_warning_is_said_again_when_its_trouble_comes_back(tmp_path: Path) -> None:
    """The operator said each warning's text once for the host's life: an inbox made a symbolic link again after it
    was put right, host.json unwritable a second time, or a junk line in a later inbox with the same words as one
    before went unsaid. A trouble that lasts is said once while it lasts; each unreadable line is said."""
    from core.control.host_state import state_path

    with _idle_host(tmp_path) as (host, said):
        inbox, operator = host.inbox_path, host.operator
        for _ in range(2):
            inbox.symlink_to(tmp_path / "elsewhere")
            operator.poll()
            operator.poll()  # still a link: not said again
            inbox.unlink()
            operator.poll()
        assert [m for m in said if "is a symbolic link" in m] == [f"the control inbox {inbox} is a symbolic link; "
                                                                  "refusing to follow it"] * 2  # fmt: skip
        for _ in range(2):
            inbox.write_bytes(b"junk\n")
            operator.poll()
            inbox.unlink()
            operator.poll()
        assert len([m for m in said if m.startswith("control inbox line 1 is not valid JSON")]) == 2, said
        blocked = state_path(host.writer.path)
        for _ in range(2):
            blocked.unlink()
            (blocked / "in-the-way").mkdir(parents=True)  # host.json cannot be replaced now
            operator.set_state("paused")
            operator.set_state("running")  # still blocked: not said again
            shutil.rmtree(blocked)
            operator.set_state("idle")
        assert len([m for m in said if m.startswith(f"cannot write {blocked}")]) == 2, said


def test_an_unreadable_line_read_again_from_an_inbox_replaced_or_written_again_is_said_once(
    tmp_path: Path,
) -> None:
    """An inbox replaced (renamed over) or written again in place is read again from its start, its requests
    skipped by id: its unreadable lines were said again each time, the same warning twice. A line read again (the
    same bytes, moved or not) is said once while the inbox lasts; another line with those bytes is said."""
    with _idle_host(tmp_path) as (host, said):
        inbox, operator = host.inbox_path, host.operator
        first, newer = make_request("checkpoint"), make_request("checkpoint")
        inbox.write_bytes(b"junk\n" + inbox_line(first))
        inbox.chmod(0o600)
        operator.poll()
        aside = tmp_path / "aside"  # replaced, a new request first: the junk line moved
        aside.write_bytes(inbox_line(newer) + b"junk\n" + inbox_line(first))
        aside.chmod(0o600)
        aside.rename(inbox)
        operator.poll()
        with open(inbox, "r+b") as f:  # written again in place, the junk line first again
            f.truncate(0)
            f.write(b"junk\n" + inbox_line(first) + inbox_line(newer))
        operator.poll()
        with open(inbox, "ab") as f:  # a line of its own
            f.write(b"junk\n")
        operator.poll()
        assert [m.split(" is ")[0] for m in said if "not valid JSON" in m] == [
            "control inbox line 1",
            "control inbox line 4",
        ], said
        applied = [e["data"]["requestId"] for e in host.session.events
                   if e["type"] == "tapedeck/control" and e["data"]["outcome"] == "applied"]  # fmt: skip
        assert applied == [first["id"], newer["id"]]


def test_a_paused_resume_names_its_log_escaped(tmp_path: Path) -> None:
    """A host resumed paused says which command resumes it, naming its log as it was: a sessions root whose name
    holds a newline and an escape sequence put a forged line and the raw escape into run's progress. The log is
    named as the CLI names a path (quoted_path), shell-quoted, as run's resume command is."""
    import threading

    from core.control.config import load_config
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers.scripted import ScriptedModel

    (tmp_path / "ws").mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}]}))
    root = tmp_path / "r\x1b]0;t\x07\nforged"
    first = AgentHost.create(root, ScriptedModel(script), load_config(None),
                             HostOptions(workspace=tmp_path / "ws", progress=lambda _: None), tasks=["t"])  # fmt: skip
    log = first.writer.path
    first.close()
    append_request(inbox_path(log), "pause", queued=True)
    said: list[str] = []
    host = AgentHost.resume(
        log, ScriptedModel(script), load_config(None), HostOptions(workspace=None, progress=said.append)
    )
    thread = threading.Thread(target=host.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not [s for s in said if s.startswith("paused: ")] and time.monotonic() < deadline:
        time.sleep(0.02)
    append_request(inbox_path(log), "stop")
    thread.join(60)
    host.close()
    [line] = [s for s in said if s.startswith("paused: ")]
    named = str(log).replace("\x1b", "\\u001b").replace("\x07", "\\u0007").replace("\n", "\\n")
    assert line.endswith(f"nothing runs until `tapedeck control '{named}' resume`"), line


def test_an_op_the_inbox_names_is_quoted_in_the_hosts_progress(tmp_path: Path) -> None:
    """The host said 'control OP rejected: …' with the inbox line's op as it came (the refusal itself quotes it): an
    op holding a newline and an escape sequence forged a line of run's progress and, piped, put the raw escape out."""
    from core.control.config import load_config
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers.scripted import ScriptedModel

    (tmp_path / "ws").mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}]}))
    said: list[str] = []
    host = AgentHost.create(tmp_path / "sessions", ScriptedModel(script), load_config(None),
                            HostOptions(workspace=tmp_path / "ws", progress=said.append), tasks=["t"])  # fmt: skip
    try:
        with host.inbox_path.open("ab") as out:
            out.write(
                orjson.dumps({"id": "r-op", "op": "pa\nturn 9 ended: completed\x1b[2J", "args": {}}) + b"\n"
            )
        host.operator.poll()
    finally:
        host.close()
    [line] = [s for s in said if s.startswith("control ")]
    assert line.startswith("control pa\\nturn 9 ended: completed\\u001b[2J rejected: unknown control op "), (
        line
    )
    assert "\n" not in line and "\x1b" not in line, line


def test_a_steering_message_that_starts_a_turn_is_quoted_in_the_hosts_progress(tmp_path: Path) -> None:
    """Between turns a steering message from the inbox starts the next turn, and the host said 'turn N: TEXT' with
    the first line of the message as it came: its escape sequences (a title set, a BiDi override) went raw into
    run's progress, piped or, for the BiDi, on a terminal. The line quotes it, as 'control OP …' quotes the op."""
    from core.control.config import load_config
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers.scripted import ScriptedModel

    (tmp_path / "ws").mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}]}))
    said: list[str] = []
    host = AgentHost.create(tmp_path / "sessions", ScriptedModel(script), load_config(None),
                            HostOptions(workspace=tmp_path / "ws", progress=said.append), tasks=[])  # fmt: skip
    try:
        with host.inbox_path.open("ab") as out:
            text = "fix it\x1b]0;pwned\x07 now\u202e\nsecond line"
            out.write(orjson.dumps({"id": "r-msg", "op": "message", "args": {"text": text}}) + b"\n")
        host.run()
    finally:
        host.close()
    [line] = [s for s in said if s.startswith("turn 1: ")]
    assert line == "turn 1: fix it\\u001b]0;pwned\\u0007 now\\u202e", line


def test_an_inbox_rewritten_in_place_with_its_lines_moved_is_no_retry(tmp_path: Path) -> None:
    """Request lines were known by the inbox's device, inode and offset: a copy of the inbox written again in place
    (the same inode) with its lines at other offsets had each of them warned of as reusing its own id. They are
    lines read again; a line reusing an id in the file as it is now is still a retry, warned of."""

    host = _scripted_host(tmp_path)
    said: list[str] = []
    host.options.progress = said.append
    try:
        inbox = host.inbox_path
        host.operator.set_state("idle")
        first, second = make_request("checkpoint"), make_request("checkpoint")
        inbox.write_bytes(inbox_line(first) + inbox_line(second))
        inbox.chmod(0o600)
        host.operator.poll()
        inode = inbox.stat().st_ino
        newer = make_request("checkpoint")
        with open(inbox, "r+b") as f:  # the same inode, a new line first: the old ones moved
            f.truncate(0)
            f.write(inbox_line(newer) + inbox_line(first) + inbox_line(second))
        assert inbox.stat().st_ino == inode
        host.operator.poll()
        assert not [m for m in said if "reuses request id" in m], said
        with open(inbox, "ab") as f:
            f.write(inbox_line(first))
        host.operator.poll()
        assert [m for m in said if "reuses request id" in m] == [
            f"control: an inbox line reuses request id {first['id']}, taken already: ignored as a retry (its "
            "outcome is the first one's)"
        ]
        finals = [e["data"]["requestId"] for e in host.session.events
                  if e["type"] == "tapedeck/control" and e["data"]["outcome"] == "applied"]  # fmt: skip
        assert finals == [first["id"], second["id"], newer["id"]]
    finally:
        host.close()


def test_the_unreadable_lines_remembered_are_bounded_whatever_the_inbox_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The digests by which an unreadable line read again is known grew with each distinct junk line for as long as
    the inbox lasted (200,000 such lines held 28 MB after one poll): hostile bytes must not grow the host. Past
    ``UNREADABLE_REMEMBERED`` distinct lines each is still said, and none more is remembered."""
    from core.host import operator as operator_module

    monkeypatch.setattr(operator_module, "UNREADABLE_REMEMBERED", 8, raising=False)
    with _idle_host(tmp_path) as (host, said):
        inbox, operator = host.inbox_path, host.operator
        inbox.write_bytes(b"".join(b"junk %d\n" % n for n in range(40)))
        inbox.chmod(0o600)
        operator.poll()
        assert len([m for m in said if "control inbox line" in m]) == 40, said
        assert len(operator._unreadable_said) <= 8 and len(operator._unreadable_read[1]) <= 8
