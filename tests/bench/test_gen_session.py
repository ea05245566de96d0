"""The synthetic session generator writes valid DSH logs (checked with plain orjson + zstandard and with core)."""

from __future__ import annotations

import io
import json
import re
import statistics
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

from bench.gen_session import MAX_RESULT, PROFILES, GenStats, generate, main, parse_size
from core.read.load import load_session

ENVELOPE_KEYS = {"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"}
SURFACE = {"user/message", "assistant/message", "tool/result"}
ROW_KEYS = {
    "text-chunks": ["turn", "step", "index", "dt", "texts"],
    "reasoning-chunks": ["turn", "step", "index", "dt", "texts"],
    "tool-call-chunks": ["turn", "step", "index", "id", "name", "dt", "args"],
}
ROW_DELTA = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta"}
FACT = re.compile(rb"FACT-[0-9a-f]{12}")


def raw_bytes(path: Path) -> bytes:
    """The logical JSONL text of a raw or zstd log."""
    data = path.read_bytes()
    if path.name.endswith(".zstd"):
        return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True).read()
    return data


def expand(lines: list[bytes], explicit: bool) -> list[dict[str, Any]]:
    """Events with rows expanded exactly as the spec describes (independent of core's decoder)."""
    events: list[dict[str, Any]] = []
    for line in lines:
        obj = orjson.loads(line)
        kind = obj["type"]
        if kind not in ROW_KEYS:
            if not explicit:
                obj = {"seq": len(events), "time": 0, **obj}
            events.append(obj)
            continue
        data = obj["data"]
        pieces = data["args" if kind == "tool-call-chunks" else "texts"]
        seq0, time0 = (obj["seq0"], obj["time0"]) if explicit else (len(events), 0)
        for k, piece in enumerate(pieces):
            if kind == "tool-call-chunks":
                chunk = {"type": "tool-call-delta", "index": data["index"], "id": data["id"]}
                chunk |= {"name": data["name"], "argumentsDelta": piece}
            else:
                chunk = {"type": ROW_DELTA[kind], "index": data["index"], "text": piece}
            events.append(
                {
                    "type": "assistant/chunk",
                    "seq": seq0 + k,
                    "time": time0 + sum(data["dt"][:k]),
                    "data": {"turn": data["turn"], "step": data["step"], "chunk": chunk},
                }
            )
    return events


def check_log(path: Path, stats: GenStats) -> list[dict[str, Any]]:
    """Assert every format rule the generator promises; return the expanded events."""
    text = raw_bytes(path)
    assert text.endswith(b"\n")
    lines = text.split(b"\n")[:-1]
    assert len(lines) == stats.lines and len(text) == stats.logical_bytes
    assert max(len(line) + 1 for line in lines) == stats.max_line
    for line in lines:  # compact JSON, one object per line
        assert json.dumps(json.loads(line), separators=(",", ":"), ensure_ascii=False).encode() == line
    header = orjson.loads(lines[0])
    assert list(header) == ["type", "version", "id", "createdAt", "cwd", "delegationDepth"]
    assert header["type"] == "session" and header["version"] == 0 and header["delegationDepth"] == 0
    assert header["cwd"].startswith("/")
    for line in lines[1:]:
        obj = orjson.loads(line)
        if obj["type"] in ROW_KEYS:
            envelope = ["type", "seq0", "time0", "data"] if stats.explicit_envelope else ["type", "data"]
            assert list(obj) == envelope
            data = obj["data"]
            assert list(data) == ROW_KEYS[obj["type"]]
            members = data["args" if obj["type"] == "tool-call-chunks" else "texts"]
            assert len(members) >= 3 and len(data["dt"]) == len(members) - 1
            assert all(isinstance(d, int) for d in data["dt"])
        else:
            assert set(obj) <= ENVELOPE_KEYS
            assert ("seq" in obj) == stats.explicit_envelope == ("time" in obj)
    events = expand(lines[1:], stats.explicit_envelope)
    assert [e["seq"] for e in events] == list(range(len(events))) and len(events) == stats.events
    assert all(type(e["time"]) is int for e in events)
    check_semantics(events)
    return events


def check_semantics(events: list[dict[str, Any]]) -> None:
    """Turns/steps nest, results pair with calls, provenance is valid and the surface folds per spec §3."""
    nodes: list[int] = []
    kinds: dict[int, str] = {}
    calls: dict[tuple[int, int, str], int] = {}
    turn = step = 0
    open_turn = open_step = False
    for ev in events:
        etype, data, seq = ev["type"], ev["data"], ev["seq"]
        op, sources = ev.get("surfaceOp"), ev.get("sourceEventSeqs")
        assert (op is not None) == (etype in SURFACE), ev
        if sources is not None:
            assert len(set(sources)) == len(sources) and all(0 <= s < seq for s in sources)
        if etype == "turn/start":
            assert not open_turn and data["turn"] == turn + 1
            turn, step, open_turn = data["turn"], 0, True
        elif etype == "turn/end":
            assert open_turn and not open_step and data["turn"] == turn
            open_turn = False
        elif etype == "step/start":
            assert open_turn and not open_step and data == {"turn": turn, "step": step + 1}
            step, open_step = data["step"], True
        elif etype == "step/end":
            assert open_step and data == {"turn": turn, "step": step}
            open_step = False
        elif etype in ("assistant/chunk", "assistant/message", "tool/call"):
            assert open_step and (data["turn"], data["step"]) == (turn, step)
        elif etype in ("request/header", "request/context", "todo/write"):
            assert open_turn
        if etype == "tool/call":
            calls[(turn, step, data["callId"])] = seq
        if etype == "assistant/message":
            assert sources and all(events[s]["type"] == "assistant/chunk" for s in sources)
        if etype == "tool/result":
            block = data["message"]["content"]
            assert len(block) == 1 and block[0]["toolCallId"] == data["message"]["source"]["callId"]
        if op == "append":
            if etype == "tool/result":
                key = (data["turn"], data["step"], data["message"]["source"]["callId"])
                assert (data["turn"], data["step"]) == (turn, step) and sources == [calls[key]]
            nodes.append(seq)
            kinds[seq] = etype
        elif op is not None:
            assert set(op) == {"op", "start", "end"} and op["op"] == "replace"
            i, j = nodes.index(op["start"]), nodes.index(op["end"])
            assert i <= j and set(nodes[i : j + 1]) <= set(sources)
            if etype == "tool/result":
                assert i == j and kinds[nodes[i]] == "tool/result" and sources == [nodes[i]]
                before = events[nodes[i]]["data"]["message"]
                after = data["message"]
                assert before["id"] == after["id"] and before["source"] == after["source"]
            nodes[i : j + 1] = [seq]
            kinds[seq] = etype
    assert not open_turn and events[-1]["type"] == "turn/end"


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gen")


@pytest.mark.parametrize("profile", list(PROFILES))
def test_every_profile_writes_a_valid_log(out: Path, profile: str) -> None:
    path = out / f"{profile}.jsonl"
    stats = generate(path, 600_000, seed=11, profile=profile)
    events = check_log(path, stats)
    assert stats.logical_bytes >= 600_000 and stats.file_bytes == stats.logical_bytes
    assert stats.tool_results == sum(
        e["type"] == "tool/result" and e["surfaceOp"] == "append" for e in events
    )
    session = load_session(path)
    assert session.diagnostics == [] and session.next_seq == stats.events


def test_mixed_log_has_the_real_event_mix(out: Path) -> None:
    path = out / "mix.jsonl"
    stats = generate(path, 4_000_000, seed=1, profile="mixed")
    events = check_log(path, stats)
    text = raw_bytes(path)
    types = {e["type"] for e in events}
    for required in (
        "agent/inbox/spliced",
        "turn/start",
        "step/start",
        "user/message",
        "session/title",
        "request/header",
        "request/context",
        "assistant/chunk",
        "assistant/message",
        "tool/call",
        "tool/result",
        "compaction/start",
        "compaction/summary",
        "compaction/end",
        "compaction/prune",
    ):
        assert required in types, required
    for tag in ROW_KEYS:
        assert b'{"type":"%s","seq0":' % tag.encode() in text
    assert b'{"type":"assistant/chunk","seq":' in text and b'"type":"text-delta"' in text  # unpacked deltas
    assert stats.packed_rows > 0 and stats.unpacked_chunks > 0
    names = {e["data"]["name"] for e in events if e["type"] == "tool/call"}
    assert names == {"read", "grep", "bash", "edit", "write", "todo_write"}
    sources = [e["data"]["source"] for e in events if e["type"] == "user/message"]
    assert any(
        s.get("plugin") == "@deepseek-ai/dsh-system-prompt" and s.get("form") == "snapshot" for s in sources
    )
    assert any(s.get("plugin") == "compact" for s in sources)
    replaced = [e for e in events if e["type"] == "tool/result" and e["surfaceOp"] != "append"]
    assert replaced and stats.prunes == len(replaced) and stats.compactions > 0
    results = [e for e in events if e["type"] == "tool/result" and e["surfaceOp"] == "append"]
    assert any(r["data"]["message"]["content"][0]["isError"] for r in results)
    reasoning = [
        b for e in events if e["type"] == "assistant/message" for b in e["data"]["message"]["content"]
    ]
    assert max(len(b["text"]) for b in reasoning if b["type"] == "reasoning") > 3000
    sizes = [len(r["data"]["message"]["content"][0]["content"][0]["text"]) for r in results]
    ok_sizes = [
        n for r, n in zip(results, sizes, strict=True) if not r["data"]["message"]["content"][0]["isError"]
    ]
    assert max(sizes) <= MAX_RESULT and statistics.median(ok_sizes) < 10_000 and min(ok_sizes) < 1000


def test_huge_output_profile_has_multi_megabyte_lines(out: Path) -> None:
    path = out / "huge.jsonl"
    stats = generate(path, 12_000_000, seed=2, profile="huge-output")
    events = check_log(path, stats)
    lengths = sorted(len(line) + 1 for line in raw_bytes(path).split(b"\n")[:-1])
    assert lengths[-1] >= 3_000_000 and stats.big_lines >= 2 and lengths[len(lengths) // 2] < 5000
    texts = [
        e["data"]["message"]["content"][0]["content"][0]["text"] for e in events if e["type"] == "tool/result"
    ]
    assert max(len(t) for t in texts) > 1_000_000 and max(len(t) for t in texts) <= MAX_RESULT


def test_same_seed_same_bytes_other_seed_other_bytes(out: Path) -> None:
    a, b, c = out / "a.jsonl", out / "b.jsonl", out / "c.jsonl"
    for path, seed in ((a, 3), (b, 3), (c, 4)):
        generate(path, 300_000, seed=seed, profile="test-fix")
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()


def test_zstd_frames_hold_the_same_lines_header_first(out: Path) -> None:
    raw, packed = out / "z.jsonl", out / "z.jsonl.zstd"
    generate(raw, 800_000, seed=8, profile="short-turns")
    stats = generate(packed, 800_000, seed=8, profile="short-turns", zstd=True)
    data = packed.read_bytes()
    frames: list[bytes] = []
    while data:
        params = zstandard.get_frame_parameters(data)
        assert params.has_checksum
        dobj = zstandard.ZstdDecompressor().decompressobj()
        frames.append(dobj.decompress(data))
        data = dobj.unused_data
    assert len(frames) == stats.frames > 2
    assert frames[0].count(b"\n") == 1 and orjson.loads(frames[0])["type"] == "session"
    assert all(f.endswith(b"\n") for f in frames)
    assert b"".join(frames) == raw.read_bytes()
    check_log(packed, stats)
    assert stats.file_bytes < stats.logical_bytes
    assert load_session(packed).diagnostics == []


def test_envelope_free_mode_matches_fixture_style(out: Path) -> None:
    plain, bare = out / "e.jsonl", out / "bare.jsonl"
    explicit = generate(plain, 300_000, seed=6, profile="mixed")
    stats = generate(bare, 300_000, seed=6, profile="mixed", explicit_envelope=False)
    check_log(bare, stats)
    assert b'"seq"' not in raw_bytes(bare) and b'"seq0"' not in raw_bytes(bare)
    assert stats.events == explicit.events
    session = load_session(bare)
    assert session.diagnostics == [] and session.next_seq == stats.events


def test_facts_sidecar_lists_every_planted_token_at_its_seq(out: Path) -> None:
    path = out / "facts.jsonl"
    stats = generate(path, 3_000_000, seed=9, profile="short-turns", facts=True)
    events = check_log(path, stats)
    sidecar = json.loads(Path(f"{path}.facts.json").read_text())
    facts = sidecar["facts"]
    assert sidecar["profile"] == "short-turns" and len(facts) == len(stats.facts) > 3
    tokens = [f["fact"] for f in facts]
    assert len(set(tokens)) == len(tokens)
    assert set(FACT.findall(raw_bytes(path))) == {t.encode() for t in tokens}
    kinds = set()
    for fact in facts:
        event = events[fact["seq"]]
        kinds.add(event["type"])
        assert event["type"] == fact["type"] and fact["fact"].encode() in orjson.dumps(event)
    assert kinds == {"tool/result", "assistant/message"}


def test_no_sidecar_without_the_flag(out: Path) -> None:
    path = out / "nofacts.jsonl"
    generate(path, 100_000, seed=1, profile="mixed")
    assert not Path(f"{path}.facts.json").exists()


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("200MB", 200_000_000),
        ("1.5GB", 1_500_000_000),
        ("512KiB", 524_288),
        ("4096", 4096),
        ("3 mib", 3 << 20),
    ],
)
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "MB", "12XB", "-5MB", "0", "1e3"])
def test_parse_size_rejects_bad_sizes(text: str) -> None:
    with pytest.raises(ValueError, match="invalid size"):
        parse_size(text)


@pytest.mark.parametrize(
    ("text", "said"),
    [("\u0661\u0662MB", "ASCII digits"), ("\uff15MB", "ASCII digits"), ("5\u00a0MB", "ASCII digits"),
     ("2000GB", "at most 1,000,000,000,000 bytes"), ("9" * 400, "at most 1,000,000,000,000 bytes"),
     ("9" * 5000 + "GB", "(5,002 characters)")],
    ids=["arabic-indic", "fullwidth", "nbsp", "2000GB", "400-digits", "5000-digits"],
)  # fmt: skip
def test_parse_size_takes_ascii_digits_and_a_bounded_size(text: str, said: str) -> None:
    """'١٢MB' (Arabic-Indic digits) was 12 MB, as \\d matches any script's digits, and a size of thousands of digits
    was read (a ~1e400 one raised OverflowError, not the ValueError the callers turn into a usage line). Sizes are
    ASCII digits, at most 1 TB, and the message cuts a long size."""
    with pytest.raises(ValueError, match="invalid size") as refused:
        parse_size(text)
    assert said in str(refused.value) and len(str(refused.value)) < 300, refused.value


def test_generate_rejects_bad_arguments(out: Path) -> None:
    with pytest.raises(ValueError, match="unknown profile 'chatty'"):
        generate(out / "x.jsonl", 1000, seed=1, profile="chatty")
    with pytest.raises(ValueError, match="greater than zero"):
        generate(out / "x.jsonl", 0, seed=1, profile="mixed")


def test_cli_writes_the_log_and_prints_a_summary(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = out / "cli" / "s.jsonl.zstd"
    assert (
        main([str(path), "--size", "200KB", "--zstd", "--seed", "4", "--profile", "read-heavy", "--facts"])
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["zstd"] and summary["profile"] == "read-heavy" and summary["seed"] == 4
    assert summary["file_bytes"] == path.stat().st_size and Path(f"{path}.facts.json").is_file()


def test_cli_rejects_a_bad_size(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([str(out / "bad.jsonl"), "--size", "lots"])
    assert exc.value.code == 2 and "invalid size 'lots'" in capsys.readouterr().err


def test_cli_reports_an_unwritable_path(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = out / "file"
    blocker.write_text("")
    assert main([str(blocker / "s.jsonl"), "--size", "10KB"]) == 2
    assert "cannot write" in capsys.readouterr().err
