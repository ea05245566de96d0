"""A streaming load with ``readback``: every event read back by seq is the event a retaining load holds."""

from __future__ import annotations

import sys
from array import array
from pathlib import Path

import orjson
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.gen_session import generate
from core.log.linestore import LineStore, _u16
from core.log.records import is_packed_row, row_member_count
from core.read.load import load_session
from core.read.session import Session
from core.shared.errors import LogFormatError
from tests.conftest import FIXTURES
from tests.log.helpers import HEADER, one_turn_with_tool, raw_log


def _same_events(path: Path) -> Session:
    kept = list(load_session(path).events)
    streamed = load_session(path, retain=False, readback=True)
    store = streamed.events
    assert isinstance(store, LineStore)
    assert len(store) == len(kept)
    assert [store[n] for n in reversed(range(len(kept)))] == kept[::-1]  # random order, cache misses
    assert list(store) == kept
    types = {e["type"] for e in kept}
    for names in ({"tool/result"}, {"assistant/chunk", "turn/start"}, types):
        assert list(store.seqs_of_types(names, 3)) == [e["seq"] for e in kept[3:] if e["type"] in names]
    return streamed


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_fixture_reads_back(path: Path) -> None:
    _same_events(path)


@pytest.mark.parametrize("shift", [14, 3], ids=["one-block", "blocks-of-8-lines"])
@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_generated_logs_read_back_with_packed_rows(
    tmp_path: Path, zstd: bool, shift: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("core.log.linestore.SHIFT", shift)  # the table's blocks: 16384 lines, or 8
    path = tmp_path / f"s.jsonl{'.zstd' if zstd else ''}"
    generate(path, 400_000, seed=2, profile="mixed", zstd=zstd)
    _same_events(path)


def _frames(body: bytes, cuts: list[int]) -> list[bytes]:
    """``body`` compressed as one checksummed frame per piece between ``cuts`` (lines may span frames)."""
    c = zstandard.ZstdCompressor(write_checksum=True)
    bounds = sorted({0, len(body), *(min(cut, len(body)) for cut in cuts)})
    return [c.compress(body[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


@settings(max_examples=60, deadline=None)
@given(
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=10),
    corrupt=st.one_of(st.none(), st.integers(min_value=1, max_value=12)),
    torn=st.integers(min_value=0, max_value=30),
    text=st.text(max_size=300),
)
def test_zstd_lines_spanning_corrupt_and_torn_frames_read_back(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int], corrupt: int | None, torn: int, text: str
) -> None:
    events = one_turn_with_tool(text) + one_turn_with_tool("again")[1:]
    body = b"".join(orjson.dumps(e) + b"\n" for e in events)
    frames = [zstandard.ZstdCompressor().compress(orjson.dumps(HEADER) + b"\n"), *_frames(body, cuts)]
    if corrupt is not None and corrupt < len(frames):
        damaged = bytearray(frames[corrupt])
        damaged[len(damaged) // 2] ^= 0x5A
        frames[corrupt] = bytes(damaged)
    blob = b"".join(frames)
    path = tmp_path_factory.mktemp("z") / "s.jsonl.zstd"
    path.write_bytes(blob[: len(blob) - torn] if torn < len(blob) - len(frames[0]) else blob)
    _same_events(path)


@settings(max_examples=40, deadline=None)
@given(
    junk=st.lists(st.tuples(st.integers(min_value=1, max_value=12), st.sampled_from([b"{bad", b"[1]", b"", b"  "]))),
    crlf=st.booleans(),
    torn=st.integers(min_value=0, max_value=30),
)
def test_raw_logs_with_bad_lines_read_back(
    tmp_path_factory: pytest.TempPathFactory, junk: list[tuple[int, bytes]], crlf: bool, torn: int
) -> None:
    lines = raw_log(one_turn_with_tool("x" * 70_000)).split(b"\n")  # one line longer than a read block
    for at, line in junk:
        lines.insert(min(at, len(lines) - 1), line)
    blob = (b"\r\n" if crlf else b"\n").join(lines)
    path = tmp_path_factory.mktemp("r") / "s.jsonl"
    path.write_bytes(blob[: len(blob) - torn])
    _same_events(path)


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_line_sizes_and_heads_come_from_the_table(tmp_path: Path, zstd: bool) -> None:
    path = tmp_path / f"s.jsonl{'.zstd' if zstd else ''}"
    generate(path, 300_000, seed=3, profile="huge-output", zstd=zstd)
    store = load_session(path, retain=False, readback=True).events
    assert isinstance(store, LineStore)
    blob = path.read_bytes()
    body = zstandard.ZstdDecompressor().stream_reader(blob).read() if zstd else blob
    seq, turns_told = 0, 0
    for line in body.split(b"\n")[1:]:
        if not line:
            continue
        obj = orjson.loads(line)
        members = row_member_count(obj) if is_packed_row(obj) else 1
        data = obj["data"]
        for n in range(seq, seq + members):
            facts = store.line_facts(n)
            assert store.size_of(n) == facts.nbytes == len(line)
            assert facts.type == ("assistant/chunk" if members > 1 else obj["type"])
            assert facts.turn in (None, data.get("turn")) and facts.step in (None, data.get("step"))
            turns_told += facts.turn is not None
        seq += members
    assert seq == len(store) and turns_told > seq // 2  # the heads tell the turn of most lines


def test_a_line_longer_than_the_length_column_holds_is_sized_at_its_top(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("core.log.linestore.MAX_LENGTH", 900)  # stands for the 4 GB of the real column
    path = tmp_path / "s.jsonl"
    generate(path, 200_000, seed=3, profile="huge-output", zstd=False)
    store = _same_events(path).events
    assert isinstance(store, LineStore)
    lines = [line for line in path.read_bytes().split(b"\n")[1:] if line]
    assert max(map(len, lines)) > 900 > min(map(len, lines))
    sizes = [min(len(line), 900) for line in lines for _ in range(row_member_count(orjson.loads(line)) or 1)]
    assert [store.size_of(n) for n in range(len(store))] == sizes


def test_a_bad_packed_row_reads_back_as_its_placeholders(tmp_path: Path) -> None:
    events = one_turn_with_tool()
    row = {"type": "text-chunks", "seq0": len(events), "time0": 5,
           "data": {"turn": 1, "step": 2, "index": 0, "texts": ["a", 7, "c"], "dt": [1, 1]}}  # fmt: skip
    path = tmp_path / "s.jsonl"
    path.write_bytes(raw_log([*events, row]))
    session = _same_events(path)
    assert [session.events[n]["type"] for n in range(len(events), len(events) + 3)] == ["text-chunks"] * 3


@given(st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=40))
def test_the_type_column_is_built_as_a_16_bit_array_of_the_ids(ids: list[int]) -> None:
    """The type ids of noted lines go into the table through bytes when all are below 256, else one by one."""
    assert _u16(tuple(ids)) == array("H", ids)


def test_a_run_of_stream_deltas_is_one_row_and_reads_back_from_any_of_its_lines(tmp_path: Path) -> None:
    """A raw log's consecutive delta lines that the pass projects as one run are noted as one row (the pass notes
    a row per run, not per line); every seq in it, a scan that starts inside it, and its lines' sizes and heads
    still read back as a full read gives them."""
    path = tmp_path / "s.jsonl"
    generate(path, 300_000, seed=4, profile="dsh-plain")
    kept = list(load_session(path).events)
    store = load_session(path, retain=False, readback=True).events
    assert isinstance(store, LineStore)
    table, _ = store.table()
    record_lines = sum(1 for line in path.read_bytes().split(b"\n")[1:] if line.strip())
    assert table["spans"] and table["lines"] + sum(lines - 1 for _, lines in table["spans"]) == record_lines
    fresh = load_session(path, retain=False, readback=True).events
    assert isinstance(fresh, LineStore)
    first = table["spans"][0][0]
    assert fresh.raw(first) == kept[first] and fresh.decodes == 1  # a run's head: its first line alone is decoded
    for seq, _lines in table["spans"][:20]:
        inside = seq + 3
        assert store.raw(inside) == kept[inside]
        assert list(store.iter_raw(inside, inside + 40)) == kept[inside : inside + 40]
        assert store.size_of(inside) == store.line_facts(inside).nbytes <= len(orjson.dumps(kept[inside])) * 40


def test_a_run_whose_lines_changed_under_it_is_an_error_not_a_wrong_event(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    generate(path, 300_000, seed=4, profile="dsh-plain")
    store = load_session(path, retain=False, readback=True).events
    assert isinstance(store, LineStore)
    seq, _ = store.table()[0]["spans"][5]
    data = bytearray(path.read_bytes())
    start = data.index(b'"seq0":%d,' % seq) if b'"seq0":%d,' % seq in data else data.index(b'"seq":%d,' % seq)
    start = data.rindex(b"\n", 0, start) + 1
    end = data.index(b"\n", start)
    data[start:end] = b" " * (end - start)  # the run's first line blanked, in place
    path.write_bytes(bytes(data))
    with pytest.raises(LogFormatError, match="no longer holds"):
        store.raw(seq + 1)


def _run_heads(path: Path) -> tuple[int, int]:
    """Load ``path`` told of each run of stream deltas, checking ``run_head`` of each run's first seq against
    the event read back: how many heads it made, and how many it left to the read back."""
    made = left = 0

    def told(session: Session, seq0: int, n: int, turn: int, step: int, chars: int) -> None:
        nonlocal made, left
        store = session.events
        assert isinstance(store, LineStore)
        head = store.run_head(seq0)
        if head is None:
            left += 1
            return
        made += 1
        back = store[seq0]
        assert head == back and list(head) == list(back) and type(head["seq"]) is type(back["seq"])
        assert store.run_head(seq0 + 1) is None  # only a run's first seq

    load_session(path, retain=False, readback=True, deltas=told)
    return made, left


@pytest.mark.parametrize("profile", ["mixed", "dsh-plain"])
def test_a_run_head_is_the_event_read_back(tmp_path: Path, profile: str) -> None:
    path = tmp_path / "s.jsonl"
    generate(path, 300_000, seed=3, profile=profile)
    made, left = _run_heads(path)
    assert made > 5 and left == 0


@settings(max_examples=30, deadline=None)
@given(
    shifts=st.lists(st.tuples(st.integers(min_value=2, max_value=400), st.integers(min_value=-3, max_value=3))),
    junk=st.lists(st.tuples(st.integers(min_value=2, max_value=400), st.sampled_from([b"{bad", b"", b"[1]"]))),
)
def test_run_heads_of_renumbered_and_broken_logs_are_the_events_read_back(
    tmp_path_factory: pytest.TempPathFactory, shifts: list[tuple[int, int]], junk: list[tuple[int, bytes]]
) -> None:
    base = tmp_path_factory.mktemp("h") / "base.jsonl"
    generate(base, 120_000, seed=5, profile="dsh-plain")
    lines = base.read_bytes().split(b"\n")
    for at, by in shifts:  # a line numbered off its place: the lines after it go on from there, or are renumbered
        at = min(at, len(lines) - 1)
        obj = orjson.loads(lines[at]) if lines[at].strip() else None
        key = "seq0" if isinstance(obj, dict) and "seq0" in obj else "seq"
        if isinstance(obj, dict) and isinstance(obj.get(key), int):
            obj[key] += by
            lines[at] = orjson.dumps(obj)
    for at, line in junk:
        lines.insert(min(at, len(lines) - 1), line)
    path = base.with_name("s.jsonl")
    path.write_bytes(b"\n".join(lines))
    made, left = _run_heads(path)
    assert made + left > 0


def test_a_log_of_more_event_types_than_16_bits_number_reads_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hostile log may give every line a type of its own: past 65,535 names the type column widens instead of
    overflowing, the types still answer by seq, and the index keeps and restores the wide column."""
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")
    n = 0x10000 + 5
    path = tmp_path / "types.jsonl"
    monkeypatch.setattr("core.read.index.MAX_SHARE", 1.0)  # a log of short lines: its index may be as big as it
    path.write_bytes(raw_log([{"type": f"odd/t{i}", "seq": i, "time": 1, "data": {}} for i in range(n)]))
    session = _same_events(path)
    store = session.events
    assert isinstance(store, LineStore)
    assert store.line_facts(n - 1).type == f"odd/t{n - 1}"
    assert list(store.seqs_of_types({f"odd/t{n - 1}", "odd/t3"})) == [3, n - 1]
    first = load_session(path, retain=False, index=True)
    given: list[int] = []
    second = load_session(path, retain=False, index=True, restored=lambda s: given.append(s.next_seq))
    assert given == [n]
    for read in (first, second):
        assert isinstance(read.events, LineStore)
        assert read.events.line_facts(n - 1).type == f"odd/t{n - 1}"
        assert list(read.events.seqs_of_types({f"odd/t{n - 1}"})) == [n - 1]


def test_the_line_table_numbers_event_types_in_the_order_they_first_appear(tmp_path: Path) -> None:
    """Type ids follow the log, not a set's hash order: the index written from them is the same bytes in every
    process (a set of strings iterates in an order that ``PYTHONHASHSEED`` changes)."""
    names = [f"custom/kind-{k:02d}" for k in range(24)]
    lines = [orjson.dumps(HEADER)]
    lines += [orjson.dumps({"type": name, "seq": seq, "time": 1_000 + seq, "data": {}}) for seq, name in enumerate(names)]
    path = tmp_path / "kinds.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    store = load_session(path, retain=False, readback=True).events
    assert isinstance(store, LineStore) and len(store) == len(names)
    store.take_notes()
    assert store.type_names == names


def test_the_line_table_of_a_small_log_holds_about_what_its_lines_take(tmp_path: Path) -> None:
    """A fleet or ``alerts ROOT`` follows every session under its roots through a line table each: a table allocated
    every column's first block for 16,384 lines and kept 12,288 spare note slots whatever the log's size (about
    450 KiB for a log of a hundred lines: 300 such sessions took 100 MiB more to follow); a small log's table holds
    about what its lines take, whole and read back."""
    path = tmp_path / "session.jsonl"
    generate(path, 20_000, seed=1, profile="dsh-plain")
    streamed = _same_events(path)
    store = streamed.events
    assert isinstance(store, LineStore)
    held = store.nbytes + sys.getsizeof(store.noted)
    assert held < 64 * len(store) + 4096, (held, len(store))
