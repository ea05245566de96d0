"""The persistent index (``core.read.index``): a reopen from it gives exactly the state of a full read, it is
dropped whenever the log is no longer the one indexed, and no bytes in its place can crash or fool a reader."""

from __future__ import annotations

import dataclasses
import os
import shutil
import zlib
from array import array
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from bench.gen_session import generate
from core.cli.cache import cache_info
from core.cli.log import inspect_report
from core.log.decoder import Consumer
from core.log.linestore import LineStore
from core.read import index
from core.read.facts import SessionFacts
from core.read.load import load_session
from core.read.session import Session
from core.read.session_state import FIELDS, PARTS, STREAM_FIELDS, decode, encode
from core.read.surface import surface_rows

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dsh"


@pytest.fixture(autouse=True)
def _every_log_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test has a cache of its own, and logs of any size are indexed."""
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")


def _state(session: Session) -> tuple[Any, ...]:
    """Everything a session's projection holds, as plain data, and what its line table answers of each seq: the
    type, size and head of its line and the event read back (a raw log's run of stream deltas is one row of the
    table or several, as the bytes came in: where a read's slices of the file end, a run ends)."""
    tree, columns = encode(session)
    store = session.events
    assert isinstance(store, LineStore)
    lines = [(store.line_facts(n), store.size_of(n), store.raw(n)) for n in range(len(store))]
    return orjson.dumps(tree), columns, len(store), lines


def _cold(path: Path) -> Session:
    return load_session(path, retain=False, readback=True)


def _warm(path: Path) -> tuple[Session, int]:
    """A read through the index, and how many events the index gave it."""
    given: list[int] = []
    session = load_session(path, retain=False, index=True, restored=lambda s: given.append(s.next_seq))
    return session, (given[0] if given else 0)


def _logs(tmp: Path) -> list[Path]:
    logs = [shutil.copy(p, tmp / p.name) for p in sorted(FIXTURES.glob("*.jsonl"))]
    for profile, zstd in (("mixed", False), ("short-turns", False), ("dsh-plain", False), ("mixed", True)):
        path = tmp / f"gen-{profile}.jsonl{'.zstd' if zstd else ''}"
        generate(path, 150_000, seed=7, profile=profile, zstd=zstd)
        logs.append(path)
    return [Path(p) for p in logs]


def test_a_reopen_from_the_index_is_a_full_read(tmp_path: Path) -> None:
    for log in _logs(tmp_path):
        cold = _cold(log)
        first, given = _warm(log)
        assert given == 0 and index.index_path(log).is_file(), log.name
        second, given = _warm(log)
        assert given == cold.next_seq, f"{log.name}: the index gave {given} of {cold.next_seq} events"
        assert _state(first) == _state(cold) == _state(second), log.name
        assert inspect_report(second) == inspect_report(cold)
        read = second.events.__getitem__
        assert surface_rows(second, read) == surface_rows(cold, cold.events.__getitem__)


def _cut_at_line(data: bytes, share: float) -> int:
    return data.index(b"\n", int(len(data) * share)) + 1


@pytest.mark.parametrize("profile", ["short-turns", "dsh-plain"])
def test_appends_after_indexing_read_as_a_full_read(tmp_path: Path, profile: str) -> None:
    full = tmp_path / "full.jsonl"
    generate(full, 200_000, seed=3, profile=profile)
    data = full.read_bytes()
    log = tmp_path / "session.jsonl"
    cut = _cut_at_line(data, 0.4)
    log.write_bytes(data[:cut])
    _warm(log)
    with open(log, "ab") as f:  # half a line: read, reported as torn, and no index written for it
        f.write(data[cut : cut + 30])
    torn, given = _warm(log)
    assert given > 0 and _state(torn) == _state(_cold(log))
    assert [d.code for d in torn.diagnostics][-1:] == ["torn-line"]
    with open(log, "ab") as f:
        f.write(data[cut + 30 :])
    session, given = _warm(log)
    assert 0 < given < session.next_seq
    assert _state(session) == _state(_cold(log)) == _state(_cold(full))


def test_appended_zstd_frames_read_as_a_full_read(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl.zstd"
    generate(log, 150_000, seed=5, profile="mixed", zstd=True)
    _warm(log)
    compressor = zstandard.ZstdCompressor()
    seq = _cold(log).next_seq
    lines = [{"type": "tapedeck/note", "seq": seq + k, "time": 1, "data": {"k": k}, "ignorable": True} for k in range(3)]
    with open(log, "ab") as f:
        f.write(compressor.compress(b"".join(orjson.dumps(e) + b"\n" for e in lines)))
    session, given = _warm(log)
    assert given == seq and session.next_seq == seq + 3
    assert _state(session) == _state(_cold(log))


def _indexed(tmp_path: Path) -> Path:
    log = tmp_path / "session.jsonl"
    generate(log, 100_000, seed=11, profile="mixed")
    _warm(log)
    assert _restored(log) is not None
    assert index.read_meta(index.index_path(log))[0].state is not None  # the state's JSON as it is
    return log


def _restored(log: Path) -> index.Restored | None:
    return index.restore(log, False, Consumer())


def test_a_rewritten_truncated_or_replaced_log_drops_its_index(tmp_path: Path) -> None:
    log = _indexed(tmp_path)
    data = log.read_bytes()
    log.write_bytes(data[:-1] + b" ")  # same inode and size, last byte changed
    assert _restored(log) is None
    log.write_bytes(data)
    assert _restored(log) is not None
    with open(log, "r+b") as f:
        f.truncate(len(data) - 10)
    assert _restored(log) is None
    log.write_bytes(data)
    _warm(log)
    other = tmp_path / "other"
    other.write_bytes(data)
    os.replace(other, log)  # the same bytes in another file
    assert _restored(log) is None
    assert _state(_warm(log)[0]) == _state(_cold(log))


def test_an_index_of_other_code_or_format_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _indexed(tmp_path)
    monkeypatch.setattr(index, "code_fingerprint", lambda: "0" * 32)
    assert _restored(log) is None
    monkeypatch.undo()
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    path = index.index_path(log)
    data = bytearray(path.read_bytes())
    data[len(index.MAGIC) + 3] += 1  # the format number
    path.write_bytes(bytes(data))
    assert _restored(log) is None


def test_the_code_fingerprint_changes_with_any_source_file(tmp_path: Path) -> None:
    """An index is used only by the code that wrote it: editing, adding or renaming a module of the packages
    that read logs gives another fingerprint (as a changed module gets new bytecode)."""
    for package in ("a", "b"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "m.py").write_text("x = 1\n")
    (tmp_path / "a" / "notes.txt").write_text("not code")
    first = index.source_fingerprint(tmp_path, ("a", "b"))
    assert index.source_fingerprint(tmp_path, ("a", "b")) == first
    (tmp_path / "a" / "notes.txt").write_text("still not code")
    assert index.source_fingerprint(tmp_path, ("a", "b")) == first
    module = tmp_path / "b" / "m.py"
    module.write_text("x = 22\n")
    edited = index.source_fingerprint(tmp_path, ("a", "b"))
    assert edited != first
    st = module.stat()
    module.write_text("x = 23\n")  # the same size: its modification time tells it
    os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert index.source_fingerprint(tmp_path, ("a", "b")) not in (first, edited)
    module.rename(tmp_path / "b" / "n.py")
    assert index.source_fingerprint(tmp_path, ("a", "b")) not in (first, edited)


def test_an_unwritable_cache_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "session.jsonl"
    generate(log, 50_000, seed=2, profile="mixed")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(blocker))
    session, given = _warm(log)
    assert given == 0 and _state(session) == _state(_cold(log))


def test_an_index_too_big_at_the_fast_level_is_compressed_harder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A zstd log is several times smaller than its text: its index, at the fast level, can take more than its
    share of the log; it is then compressed harder, and still written."""
    monkeypatch.setattr(index, "MAX_SMALL", 0)  # the share alone bounds the index
    log = tmp_path / "session.jsonl.zst"
    generate(log, 4_000_000, seed=4, profile="mixed", zstd=True)
    session, _ = _warm(log)
    written = index.index_path(log)
    assert written.is_file() and written.stat().st_size <= log.stat().st_size * index.MAX_SHARE
    assert index.read_meta(written)[0].state is None  # the state compressed with the columns
    again, given = _warm(log)
    assert given == session.next_seq and _state(again) == _state(_cold(log))


def test_an_index_too_big_even_compressed_harder_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index bigger than its share of the log at the dense level too is not written: no file, and nothing the
    write began is left in the cache."""
    monkeypatch.setattr(index, "MAX_SMALL", 0)
    monkeypatch.setattr(index, "MAX_SHARE", 0.001)
    log = tmp_path / "session.jsonl"
    generate(log, 400_000, seed=4, profile="mixed")
    session, _ = _warm(log)
    assert not index.index_path(log).exists() and list(index.index_dir().iterdir()) == []
    again, given = _warm(log)
    assert given == 0 and _state(again) == _state(session)


def test_tool_calls_listed_otherwise_than_a_read_lists_them_are_kept_as_they_are(tmp_path: Path) -> None:
    """The calls by id are stored as nothing when they are what a read makes of the calls (each id's latest call,
    where its first one was), else as they are: both come back the same."""
    log = tmp_path / "session.jsonl"
    generate(log, 150_000, seed=7, profile="mixed")
    session = _cold(log)
    assert len(session.tool_calls) > 2
    for change in (None, "reorder", "drop"):
        if change == "reorder":
            first = next(iter(session.tool_calls))
            session.tool_calls[first] = session.tool_calls.pop(first)
        elif change == "drop":
            session.tool_calls.pop(next(iter(session.tool_calls)))
        tree, columns = encode(session)
        assert (tree["toolCalls"] is None) == (change is None)
        stored = {name: bytes(memoryview(data).cast("B")) for name, data in columns.items()}
        back = decode(orjson.loads(orjson.dumps(tree)), stored, session.events, log)
        assert list(back.tool_calls.items()) == list(session.tool_calls.items())


def test_small_logs_are_not_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAPEDECK_INDEX_MIN_BYTES")
    log = tmp_path / "session.jsonl"
    generate(log, 50_000, seed=2, profile="mixed")
    _warm(log)
    assert not index.index_path(log).exists()


def test_the_index_knows_every_field_of_the_projection(tmp_path: Path) -> None:
    session = _cold(_logs(tmp_path)[0])
    assert set(vars(session)) == FIELDS and set(vars(session.streams)) == STREAM_FIELDS
    for part, names in PARTS.items():
        assert tuple(f.name for f in dataclasses.fields(part)) == names, part
    session.streams.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="StreamBlocks.extra"):
        encode(session)
    session.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="extra"):
        encode(session)


# --- hostile bytes ---------------------------------------------------------------------------------------------
_FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _use(session: Session) -> None:
    """What readers do with a restored session (none of it may raise)."""
    inspect_report(session)
    surface_rows(session, session.events.__getitem__)
    list(session.seqs_of(["tool/result"]))


def _sections(path: Path) -> tuple[bytes, dict[str, bytes]]:
    """An index file's metadata and sections, its state among them."""
    meta, meta_end = index.read_meta(path)
    data = path.read_bytes()
    raw_meta = data[len(index.MAGIC) + index._PREFIX.size : meta_end]
    state, sections = index._body(meta, data[meta_end + 32 :])
    return raw_meta, {"state": bytes(state), **{name: bytes(data) for name, data in sections.items()}}


def _signed(raw_meta: bytes, sections: dict[str, bytes]) -> bytes:
    """An index file of ``sections`` with valid checksums, laid out as a first read writes it: what someone who
    means harm could write."""
    state, columns = sections["state"], {name: data for name, data in sections.items() if name != "state"}
    raw_meta = orjson.dumps({**orjson.loads(raw_meta), "state": [len(state), zlib.crc32(state)]})
    body = state + b"".join(index._frame(columns, index.LEVEL))
    return index.MAGIC + index._PREFIX.pack(index.FORMAT, len(raw_meta)) + raw_meta + index._digest(raw_meta) + body


@pytest.fixture(scope="module")
def fuzz_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, bytes]:
    """A log, its cache directory and its index file's bytes."""
    tmp = tmp_path_factory.mktemp("fuzz")
    log = tmp / "session.jsonl"
    generate(log, 40_000, seed=9, profile="short-turns")
    cache = tmp / "cache"
    os.environ["TAPEDECK_CACHE_DIR"], before = str(cache), os.environ.get("TAPEDECK_CACHE_DIR")
    os.environ["TAPEDECK_INDEX_MIN_BYTES"] = "0"
    try:
        load_session(log, retain=False, index=True)
        path = index.index_path(log)
        return log, cache, path.read_bytes()
    finally:
        os.environ["TAPEDECK_CACHE_DIR"] = before or ""
        del os.environ["TAPEDECK_INDEX_MIN_BYTES"]


def _install(cache: Path, log: Path, data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(cache))
    index.index_path(log).write_bytes(data)


@_FUZZ
@given(junk=st.binary(max_size=4096))
def test_junk_in_place_of_an_index_is_ignored(
    fuzz_log: tuple[Path, Path, bytes], monkeypatch: pytest.MonkeyPatch, junk: bytes
) -> None:
    log, cache, good = fuzz_log
    for data in (junk, good[: len(junk)], index.MAGIC + junk):
        _install(cache, log, data, monkeypatch)
        assert _restored(log) is None


@_FUZZ
@given(flips=st.lists(st.tuples(st.integers(min_value=0), st.integers(1, 255)), min_size=1, max_size=8))
def test_damaged_index_bytes_are_ignored(
    fuzz_log: tuple[Path, Path, bytes], monkeypatch: pytest.MonkeyPatch, flips: list[tuple[int, int]]
) -> None:
    log, cache, good = fuzz_log
    data = bytearray(good)
    for at, bits in flips:
        data[at % len(data)] ^= bits
    assume(data != good)
    _install(cache, log, bytes(data), monkeypatch)
    assert _restored(log) is None


@pytest.mark.parametrize(
    ("flips", "why"),
    [({4: 0x04}, "the checksum flag cleared"), ({4: 0x10}, "the unused bit set"),
     ({4: 0x04, -12: 0x01}, "the checksum flag cleared and a compressed byte changed")],
)  # fmt: skip
def test_a_frame_whose_header_was_changed_is_ignored_even_where_zstd_reads_it(
    fuzz_log: tuple[Path, Path, bytes], monkeypatch: pytest.MonkeyPatch, flips: dict[int, int], why: str
) -> None:
    """The fuzzer above found an index restored after a byte flip: in the frame's header descriptor, the flag that
    asks for the content checksum, or the bit decoders skip. Without the flag, zstd checks nothing, so a second flip
    in the compressed bytes went through as a different body."""
    log, cache, good = fuzz_log
    _install(cache, log, good, monkeypatch)
    meta, start = index.read_meta(index.index_path(log))
    frame = start + index._DIGEST + (meta.state[0] if meta.state else 0)
    data = bytearray(good)
    for at, bits in flips.items():
        data[frame + at if at >= 0 else len(data) + at] ^= bits
    _install(cache, log, bytes(data), monkeypatch)
    assert _restored(log) is None, why


@_FUZZ
@given(
    cut=st.integers(min_value=0), tail=st.binary(max_size=16),
    flips=st.lists(st.tuples(st.integers(min_value=0), st.integers(1, 255)), max_size=4),
)  # fmt: skip
def test_cache_info_calls_valid_only_an_index_a_read_uses(
    fuzz_log: tuple[Path, Path, bytes], monkeypatch: pytest.MonkeyPatch, cut: int, tail: bytes,
    flips: list[tuple[int, int]],
) -> None:  # fmt: skip
    """An index cut short, or changed, behind intact metadata was listed valid: only the metadata was read."""
    log, cache, good = fuzz_log
    data = bytearray(good[: len(good) - cut % len(good)] + tail)
    for at, bits in flips:
        data[at % len(data)] ^= bits
    assume(data != good)
    _install(cache, log, bytes(data), monkeypatch)
    [row] = cache_info(str(log))["files"]
    assert (row["state"] == "valid") == (_restored(log) is not None), row


def test_another_logs_index_in_a_logs_place_is_listed_as_unused(tmp_path: Path) -> None:
    """A valid index file copied under another log's name (by hand, or a backup restored) was listed valid,
    though no read looks for it there."""
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    a, b = _indexed(tmp_path / "a"), _indexed(tmp_path / "b")
    shutil.copy(index.index_path(b), index.index_path(a))
    assert _restored(a) is None
    [row] = cache_info(str(a))["files"]
    assert (row["log"], row["state"]) == (os.path.realpath(b), "stale")
    assert row["reason"] == "it is not named for its log, so no read uses it"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node[:6]):
            out += _paths(value, (*prefix, i))
    return out


def _replace(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node[path[0]] = _replace(node[path[0]], path[1:], value)
    return node


@_FUZZ
@given(data=st.data())
def test_hostile_state_with_a_valid_digest_never_crashes_a_reader(
    fuzz_log: tuple[Path, Path, bytes], monkeypatch: pytest.MonkeyPatch, data: st.DataObject
) -> None:
    log, cache, good = fuzz_log
    _install(cache, log, good, monkeypatch)
    raw_meta, sections = _sections(index.index_path(log))
    state = orjson.loads(sections["state"])
    path = data.draw(st.sampled_from(_paths(state)[1:]))
    sections["state"] = orjson.dumps(_replace(state, path, data.draw(_JSON)))
    column = data.draw(st.sampled_from(sorted(k for k in sections if k != "state")))
    if data.draw(st.booleans()):
        sections[column] = data.draw(st.binary(max_size=64))
    _install(cache, log, _signed(raw_meta, sections), monkeypatch)
    restored = _restored(log)
    if restored is not None:
        _use(restored.session)


@_FUZZ
@example(cut=2, junk=b"")  # the frame held 2 bytes: no room for the section count (struct.error, out of inspect)
@given(cut=st.integers(min_value=0), junk=st.binary(max_size=24))
def test_a_valid_frame_of_sections_cut_short_is_ignored(
    fuzz_log: tuple[Path, Path, bytes], monkeypatch: pytest.MonkeyPatch, cut: int, junk: bytes
) -> None:
    """The sections' zstd frame well formed (its checksum right), its content cut anywhere (in the section count or
    a section's header too) and junk put after it: a read that uses the index does not crash, and ``cache info``
    lists it valid only when a read uses it. A count or a header cut short raised struct.error out of both
    (``inspect``, ``cache info``)."""
    log, cache, good = fuzz_log
    _install(cache, log, good, monkeypatch)
    meta, meta_end = index.read_meta(index.index_path(log))
    assert meta.state is not None
    at = meta_end + 32 + meta.state[0]
    whole = zstandard.ZstdDecompressor().decompress(good[at:])
    content = whole[: cut % len(whole)] + junk
    assume(content != whole)
    frame = zstandard.ZstdCompressor(write_checksum=True).compress(content)
    _install(cache, log, good[:at] + frame, monkeypatch)
    restored = _restored(log)
    [row] = cache_info(str(log))["files"]
    assert (row["state"] == "valid") == (restored is not None), row
    if len(content) < 4:  # not even the count of sections
        assert row["state"] == "unreadable", row
    if restored is not None:  # junk that filled the cut with as many bytes: a column's content changed
        _use(restored.session)


@pytest.mark.parametrize("config", [True, "gpt", [1]])
def test_a_request_header_a_log_could_not_give_is_not_used(
    fuzz_log: tuple[Path, Path, bytes], monkeypatch: pytest.MonkeyPatch, config: Any
) -> None:
    """A request header whose config is not an object never comes out of a read (validation refuses such an
    event), so one in an index under a valid digest is refused rather than handed to ``inspect``."""
    log, cache, good = fuzz_log
    _install(cache, log, good, monkeypatch)
    raw_meta, sections = _sections(index.index_path(log))
    state = orjson.loads(sections["state"])
    state["session"]["requestHeader"] = {**(state["session"]["requestHeader"] or {}), "config": config}
    sections["state"] = orjson.dumps(state)
    _install(cache, log, _signed(raw_meta, sections), monkeypatch)
    assert _restored(log) is None


@pytest.mark.parametrize("column", ["lines.seq0", "lines.offset"])
def test_a_line_table_out_of_order_is_not_used(
    fuzz_log: tuple[Path, Path, bytes], monkeypatch: pytest.MonkeyPatch, column: str
) -> None:
    """The line table's seqs and offsets are stored as they are; a table whose lines are not in order (two
    swapped) is refused, though its digest is valid."""
    log, cache, good = fuzz_log
    _install(cache, log, good, monkeypatch)
    raw_meta, sections = _sections(index.index_path(log))
    _install(cache, log, _signed(raw_meta, sections), monkeypatch)
    assert _restored(log) is not None
    values = array("Q")
    values.frombytes(sections[column])
    values[1], values[2] = values[2], values[1]
    sections[column] = values.tobytes()
    _install(cache, log, _signed(raw_meta, sections), monkeypatch)
    assert _restored(log) is None


@pytest.mark.parametrize("threshold", [None, "1000000000000"])
def test_a_pass_that_cannot_write_an_index_builds_no_line_table_and_gathers_no_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threshold: str | None
) -> None:
    if threshold is None:
        monkeypatch.delenv("TAPEDECK_INDEX_MIN_BYTES")  # the default: this log is under ``MIN_LOG_BYTES``
    else:
        monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", threshold)
    log = tmp_path / "session.jsonl"
    generate(log, 200_000, seed=2, profile="dsh-plain")
    observed: list[str] = []
    gather = SessionFacts.observe

    def spy(self: SessionFacts, event: dict[str, Any]) -> None:
        observed.append(event["type"])
        gather(self, event)

    monkeypatch.setattr(SessionFacts, "observe", spy)
    session = load_session(log, retain=False, index=True)
    assert not isinstance(session.events, LineStore)
    assert observed == []
    assert inspect_report(session) == inspect_report(load_session(log, retain=False))
    assert not index.index_path(log).exists()


def test_the_failed_finishes_that_end_runs_of_deltas_are_error_facts(tmp_path: Path) -> None:
    """The decoder's hot loop projects a step's finish that is no error and a usage sample itself; a failed finish,
    however it fails, still takes the general path, where the facts an index keeps gather it."""
    def chunk(seq: int, chunk: dict[str, Any]) -> dict[str, Any]:
        return {"type": "assistant/chunk", "seq": seq, "time": 5, "data": {"turn": 1, "step": 1, "chunk": chunk}}

    finishes = [{"kind": "error"}, {"kind": "stop", "failure": {"message": "x"}}, {"kind": "stop"},
                {"kind": "error", "failure": {"message": "y"}}, {"kind": "aborted"}]  # fmt: skip
    lines: list[dict[str, Any]] = [{"type": "turn/start", "seq": 0, "data": {"turn": 1}},
                                   {"type": "step/start", "seq": 1, "data": {"turn": 1, "step": 1}}]  # fmt: skip
    for reason in finishes:
        lines += [chunk(len(lines), {"type": "text-delta", "index": 0, "text": "ab"}),
                  chunk(len(lines) + 1, {"type": "usage", "usage": {"outputTokens": 2}}),
                  chunk(len(lines) + 2, {"type": "finish", "reason": reason})]  # fmt: skip
    log = tmp_path / "session.jsonl"
    header = {"type": "session", "version": 0, "id": "t-1", "createdAt": 1, "cwd": "/w", "delegationDepth": 0}
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in [header, *lines]))
    expected = SessionFacts.empty()
    for line in lines:
        expected.observe(line)
    _warm(log)
    restored = _restored(log)
    assert restored is not None
    assert restored.facts.errors == expected.errors == [4, 13]
