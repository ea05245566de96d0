"""The plugin reads the inbox by the same rules as tapedeck's host: its line decoder against ``core.control``.

A Node process imports ``decodeLine`` from ``core/bridge/tapedeck-bridge.mjs`` and answers one line at a time;
Hypothesis draws requests, hostile values and raw bytes, and every line must come out the same way: the same
request id (rejected by id) or none (skipped), an error or none, the same withdrawal, and the same message for
every error that is not about the JSON syntax itself (whose wording is each parser's own).
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.control.inbox import ControlError, InboxReader, validate_request
from tests.dsh.harness import PLUGIN, DshInstall
from tests.lines import Lines

SCRIPT = """
import { decodeLine } from %s;
import readline from "node:readline";
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (b64) => {
  const entry = decodeLine(1, Buffer.from(b64, "base64"));
  process.stdout.write(JSON.stringify({ id: entry.request?.id ?? null, error: entry.error ?? null,
                                        withdraw: entry.withdraw ?? null }) + "\\n");
});
"""


@pytest.fixture(scope="module")
def decoder(dsh: DshInstall) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [str(dsh.node), "--input-type=module", "-e", SCRIPT % json.dumps(PLUGIN.as_uri())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    yield proc
    proc.stdin.close()  # type: ignore[union-attr]
    proc.wait(60)


def _node(proc: subprocess.Popen[str], line: bytes) -> dict[str, object]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(base64.b64encode(line).decode() + "\n")
    proc.stdin.flush()
    return json.loads(Lines(proc.stdout).next())  # one answer a line sent: nothing read is left behind


def _python(tmp: Path, line: bytes) -> dict[str, object]:
    """What tapedeck's reader makes of the line, its arguments checked as for a DSH session."""
    inbox = tmp / "inbox.jsonl"
    inbox.write_bytes(line + b"\n")
    [entry] = InboxReader(inbox).read()
    error = entry.error
    if entry.request is not None and (error is None or not error.startswith("control inbox line")):
        obj = orjson.loads(line)
        try:
            validate_request(obj.get("op"), obj.get("args"), kind="dsh")
            error = None
        except ControlError as exc:
            error = str(exc)
    return {"id": entry.request["id"] if entry.request else None, "error": error, "withdraw": entry.withdraw}


# The JSON parsers' own words, and config.set, whose keys the plugin judges against the settings of the DSH it
# runs in (the CLI pre-checks a fixed list), are compared by outcome only; every refused value is quoted alike.
_LOOSE = ("not valid JSON",)


def _same(node: dict[str, object], python: dict[str, object], line: bytes) -> None:
    config = b'"config.set"' in line
    assert (node["id"], node["withdraw"]) == (python["id"], python["withdraw"]), (node, python)
    if not config:
        assert (node["error"] is None) == (python["error"] is None), (node, python)
    if python["error"] and not any(s in str(python["error"]) for s in _LOOSE) and not config:
        assert node["error"] == python["error"]


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 2**53) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_ops = st.sampled_from(["pause", "resume", "message", "stop", "checkpoint", "rewind", "expand", "x", "config.set"])
_args = st.one_of(
    _values,
    st.fixed_dictionaries({}, optional={"text": _values, "kind": _values, "mode": _values, "reason": _values}),
    st.fixed_dictionaries({}, optional={"seq": _values, "markId": _values, "objective": _values}),
    st.fixed_dictionaries({}, optional={"key": st.just("model") | st.text(max_size=6), "value": _values}),
)
_requests = st.fixed_dictionaries(
    {"id": st.text(max_size=8) | st.integers(), "op": _ops},
    optional={"args": _args, "at": _values, "expires": _values, "queued": _values,
              "origin": _values | st.sampled_from(["alert:budget", "fleet", "-x", "a" * 101, "a b"])},
)  # fmt: skip
_lines = st.one_of(
    _requests.map(lambda r: json.dumps(r).encode()),
    st.builds(lambda i: json.dumps({"withdraw": i, "at": 1}).encode(), st.text(max_size=5) | st.integers()),
    st.binary(max_size=40).filter(lambda b: b"\n" not in b and b"\r" not in b),
    st.builds(lambda n: b'{"id":"n","op":"pause","args":' + b"[" * n + b"]" * n + b"}", st.integers(0, 1200)),
    st.sampled_from(
        [b'{"id":"s","op":"message","args":{"text":"\\udc00"}}', b'{"id":"t","op":"stop"} trailing', b"[" * 300]
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=_lines)
@example(line=b'{"id": "0", "op": "pause", "args": {"\\ud823\\udd80": null}}')  # U+18D80: unknown to Python 3.11 only
@example(line=b'{"id": "e", "op": "pause", "expires": -9000000000000000}')  # no Date: the plugin threw on it
@example(line=b'{"id": "e", "op": "pause", "expires": -9223372036854775808}')
@example(line=b'{"id": "o", "op": "pause", "origin": 5}')  # the plugin took any origin, and dropped it
@example(line=b'{"id": "0", "op": "pause", "args": {"": null, "0": null}}')  # JavaScript lists the key "0" first
@example(line=b'{"id": "0", "op": "pause", "args": {"\\uffff": null, "\\ud800\\udc00": null}}')  # code points, not UTF-16
@example(line=b'{"id": "o", "op": "pause", "origin": "\xf0\x9f\x98\x80' + b"x" * 120 + b'"}')
@example(line=b"\x0b0")  # a vertical tab before the value: trimmed by both readers, then a JSON 0 (no object)
@example(line=b'{"id": "f", "op": "expand", "args": {"seq": 2.0}}')  # said 'got 2' alone: now why 2 is refused
@example(line=b'{"id": "f", "op": "rewind", "args": {"markId": 2e0}}')
@example(line=b'{"id": "t", "op": "chekpoint"}')  # the host offers 'did you mean checkpoint?' (3635c87)
@example(line=b'{"id": "t", "op": "Config-Set"}')
@example(line=b"\x80")  # no UTF-8: both name the first byte that is not, as Python's decoder finds it (050c7276)
@example(line=b'{"id": "u", "op": "message", "args": {"text": "\xe0\x80"}}')  # 0xe0 takes 0xa0-0xbf next
@example(line=b'{"id": "u", "op": "message", "args": {"text": "\xed\xa0\x80"}}')  # a surrogate's bytes
@example(line=b'{"id": "u", "op": "message", "args": {"text": "ok\xf0\x9f"}}')  # a sequence cut short
@example(line=b'{"id": "u", "op": "message", "args": {"text": "\xf4\x90\x80\x80 \xc1\xbf"}}')  # past U+10FFFF
def test_the_plugin_decodes_every_line_as_the_host_does(
    decoder: subprocess.Popen[str], tmp_path: Path, line: bytes
) -> None:
    if not line.strip():
        return  # blank lines are skipped by both before decoding
    # both readers trim a line before decoding it: the host with bytes.strip(), the plugin's splitLines with
    # trimBytes (the same bytes, 0x09-0x0d and the space); decodeLine is handed what is left, as the plugin hands it
    _same(_node(decoder, line.strip()), _python(tmp_path, line), line)


@pytest.mark.parametrize(
    "line",
    [b'{"id": "0", "op": "pause", "args": 0.0}', b'{"id": "0", "op": "message", "args": 0.0}',
     b'{"id": "0", "op": "stop", "args": -2.5e3}', b"0.5"],
)  # fmt: skip
def test_the_plugin_rejects_a_float_where_an_object_belongs(
    decoder: subprocess.Popen[str], tmp_path: Path, line: bytes
) -> None:
    """The plugin's parser keeps a float's type by boxing it (a Number object), which is no JSON object."""
    node = _node(decoder, line)
    assert node == _python(tmp_path, line) and node["error"]


@pytest.mark.parametrize(
    "line", [b'{"id":"r1","op":\x1b]0;pwned\x07}', "\x1b[2J\u202egarbage".encode(), b"[1,\x1b]2;x\x07]"]
)
def test_the_plugins_json_refusal_quotes_the_line_it_cites(decoder: subprocess.Popen[str], line: bytes) -> None:
    """Node's JSON.parse cites the line it refuses ('Unexpected token ..., "…" is not valid JSON'), and the plugin
    put that message as it came into the outcome's error, the warning it logs and what control --wait prints: an
    inbox line holding an escape sequence (a title set, a screen clear) or a BiDi override sent it out raw. The
    message is quoted as the host quotes an exception's text (quoted: its controls as JSON escapes, cut at 200)."""
    error = str(_node(decoder, line)["error"])
    assert error.startswith("control inbox line 1 is not valid JSON (") and "\\u001b" in error, error
    assert not any(c in error for c in "\x1b\x07\u202e"), error


_LONG = "k" * 100_000


@pytest.mark.parametrize(
    "request_",
    [{"op": "expand", "args": {"seq": _LONG}}, {"op": "message", "args": {"text": "hi", "mode": _LONG}},
     {"op": "message", "args": {"text": "hi", "mode": "\U0001f600" * 50_000}},
     {"op": "pause", "args": {_LONG: 1}}, {"op": _LONG}],
)  # fmt: skip
def test_both_quote_a_long_refused_value_cut_the_same(
    decoder: subprocess.Popen[str], tmp_path: Path, request_: dict[str, object]
) -> None:
    """A refused value of 100,000 characters is named by its first ones on both sides, in the same words (the
    cut counts UTF-16 units, as clip does), not written back whole into the outcome event."""
    line = json.dumps({"id": "long", **request_}, ensure_ascii=False).encode()
    node, python = _node(decoder, line), _python(tmp_path, line)
    assert node == python and len(str(node["error"])) < 300 and "…" in str(node["error"])


@pytest.mark.parametrize(
    "line",
    [b'{"id": "j", "op": "expand", "args": {"seq": ["x"]}}', b'{"id": "j", "op": "expand", "args": {"seq": null}}',
     b'{"id": "j", "op": "expand", "args": {"seq": {"b": 1.0, "0": [true, 1e-7]}}}',
     b'{"id": "j", "op": "expand", "args": {"seq": 2.5e20}}', b'{"id": "j", "op": "expand", "args": {"seq": 3.5e20}}',
     b'{"id": "j", "op": "expand", "args": {"seq": -1e30}}',
     b'{"id": "j", "op": "message", "args": {"text": "hi", "kind": "\\u001b[2J\\u202e\\u0085\\u2028"}}',
     b'{"id": "j", "op": "expand", "args": {"seq": ["' + b"k" * 200 + b'"]}}',
     b'{"id": "o", "op": "pause", "origin": "' + b"a" * 100 + b'"}', b'{"id": "o", "op": "pause", "origin": "' + b"a" * 101 + b'"}',
     b'{"id": "o", "op": "pause", "origin": "' + b"a" * 99 + b' "}',
     b'{"id": "o", "op": "pause", "origin": "' + b"a" * 98 + "\U0001f600".encode() + b'bbbbb"}',
     b'{"id": "o", "op": "pause", "origin": 5.0}', b'{"id": "t", "op": "message", "args": {"text": {"a": null}}}',
     b'{"id": "s", "op": "stop", "args": ["now", 1.5]}'],
)  # fmt: skip
def test_both_word_a_refused_value_as_json(decoder: subprocess.Popen[str], tmp_path: Path, line: bytes) -> None:
    """The host quoted a refused value as Python does (['x'], None), the plugin as JSON (["x"], null), and a bad
    origin was cut to 101 characters unmarked: both quote it as JSON now, in the same words, an origin whole up to
    the 100 characters it may have, the cut marked with … and the length."""
    node, python = _node(decoder, line), _python(tmp_path, line)
    assert node == python
    if python["error"]:
        assert "'" not in str(python["error"]).split("(got", 1)[1] and "None" not in str(python["error"])


_IDS = ["twice-1", "it's", "\x1b]2;x\x07", "a\nb\tc\r", "\x00\x7f\x85\x9f", "\u2028\u2029", "\u202e\u2066\u2069",
        "\ud800x\udc00", "\U0001f600" * 50, "k" * 78 + "\U0001f600", "k" * 79 + "\U0001f600", "k" * 200, '"\\', ""]  # fmt: skip


def test_both_name_a_request_id_as_control_names_one(dsh: DshInstall) -> None:
    """The warning of an inbox line reusing a taken id named it as Python writes a string ('twice-1') on the host,
    and between quotes as it is, escape sequences and all, in the plugin; both name it as every message names an
    id from outside (core.shared.text.quoted): as it is, cut to 80 characters with …, a character a terminal acts
    on or draws out of order as its JSON escape."""
    from core.shared.text import quoted

    script = f"import {{ quoted }} from {json.dumps(PLUGIN.as_uri())};\n"
    script += f"process.stdout.write(JSON.stringify({json.dumps(_IDS)}.map((id) => quoted(id))));"
    done = subprocess.run([str(dsh.node), "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [quoted(i) for i in _IDS]
