"""The persistent index of a log: a sidecar file in tapedeck's cache that lets a reopen decode only new bytes.

A full read of a log of hundreds of MB takes seconds to minutes; the index keeps what that read learned, so the
next read picks up where it stopped. It holds the line table (``core.log.linestore``), the projection's state
at the end of the indexed bytes (``core.read.session_state``: turns, steps, stream blocks, the surface, usage,
diagnostics), the facts a screen lists (``core.read.facts``) and the decoder's state, written after a pass that
reached a line boundary (``core.read.load``, the TUI's loader).

Where: ``$TAPEDECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/tapedeck``, else ``~/.cache/tapedeck``; one file per log
under ``index/``, named by a hash of the log's real path. Never beside a log, never required: any problem
reading, checking or writing it means a full read, silently.

An index is used only while it still describes the file: the log's device and inode are the ones indexed,
it is at least as long, and the first and the last ``HASH_BYTES`` of the indexed bytes hash the same; it was
written by this index format and by this version of the code that reads logs (``code_fingerprint``). A digest
of its metadata and a checksum of its body catch damage; every field is type-checked as it is rebuilt
(``session_state``).

Layout: ``MAGIC``, format and metadata length (big-endian u32 each), the metadata (JSON), its 32-byte BLAKE2b
digest, then the body: the ``state`` section (the projection's state as JSON) as it is, its length and CRC-32 in
the metadata, then one zstd frame of the other sections, the columns (u32 count; per section a u16 name length,
the name, a u64 length and the bytes), with zstd's content checksum (XXH64), which decompressing it checks (a
header that no longer asks for that checksum, or sets the bit zstd leaves unused, is damage too). The frame is
compressed at zstd's fast level ``LEVEL``: zstd was most of what writing an index cost a first read, and
the checksum of its content costs a quarter of a BLAKE2b digest of the compressed bytes; JSON text, which that
level hardly shrinks, is left out of it. When that leaves the index too big (a zstd log's), the frame holds the
state too, compressed at ``DENSE_LEVEL``, and the metadata's ``state`` is null.
"""

from __future__ import annotations

import functools
import os
import struct
import time
import zlib
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import Any, NamedTuple

try:  # hashlib's own BLAKE2b: importing hashlib loads OpenSSL's libcrypto too (11 M instructions), which no index uses
    from _blake2 import blake2b
except ImportError:  # pragma: no cover (a Python without the module)
    from hashlib import blake2b

import orjson
import zstandard

from core.log.decoder import Consumer, LogDecoder
from core.log.linestore import LineStore
from core.read.facts import SessionFacts
from core.read.index_size import worth_writing as worth_writing  # the size policy, for the index's users
from core.read.runs import Runs
from core.read.session import Session
from core.read.session_state import decode, encode
from core.shared.envdirs import own_dir, xdg_dir
from core.shared.fdwrite import replace_file
from core.shared.regular import open_regular

FORMAT = 2  # 1: BLAKE2b of metadata and body, the body at zstd level 1 without a checksum
MAGIC = b"tapedeck-index\n\x00"
_UNUSED_BIT = 0x10  # of a zstd frame's header descriptor (byte 4, after the magic): zstd never sets it, nor reads it
HASH_BYTES = 1 << 16  # bytes hashed at the head of the indexed bytes and at their end
MAX_SHARE = 0.05  # an index is written only when it takes at most this share of the log's size …
MAX_SMALL = 32 << 10  # … or this many bytes (for logs under 640 KiB, indexed only when asked for)
MAX_EXPANSION = 64  # a body may not claim to expand to more than this many times its size
LEVEL = -30  # zstd's level of the columns' frame (fast: a first read writes it) …
DENSE_LEVEL = 1  # … and of one frame of every section, the state too, when the index would so take more than
DENSE_SHARE = 0.9  # this share of the most it may (a zstd log's index: the log is 3.5 times smaller than its text)
SUFFIX = ".idx"
CHECKPOINT_SUFFIX = ".ack"  # an alert checkpoint's (``checkpoint_path``)
TEMPORARY = ".tmp-"  # what an index file (or an alert checkpoint) is named first, before it is renamed into place
_PREFIX = struct.Struct(">II")
_DIGEST = 32
_CODE_DIRS = ("log", "read", "shared")  # the packages whose code decides what a read of a log yields


def cache_dir() -> Path:
    """tapedeck's cache directory (see the module docstring)."""
    return own_dir("TAPEDECK_CACHE_DIR") or xdg_dir("XDG_CACHE_HOME", Path.home() / ".cache") / "tapedeck"


def index_dir() -> Path:
    """Where index files are."""
    return cache_dir() / "index"


def index_path(log: Path) -> Path:
    """The index file of ``log``."""
    return named_for(log, index_dir(), SUFFIX)


def named_for(log: Path, where: Path, suffix: str) -> Path:
    """The file in ``where`` that tapedeck keeps of ``log``, named by a hash of the log's real path."""
    real = os.path.realpath(log)
    return where / (blake2b(os.fsencode(real), digest_size=16).hexdigest() + suffix)


def checkpoint_dir() -> Path:
    """Where the alert engine's checkpoints are (``core.alerts.checkpoint``)."""
    return cache_dir() / "alerts"


def checkpoint_path(log: Path, kind: str) -> Path:
    """The checkpoint file of ``log`` kept by a watch of ``kind`` (the fleet's keeps the row's columns too)."""
    return named_for(log, checkpoint_dir(), f".{kind}{CHECKPOINT_SUFFIX}")


def checkpoint_paths(log: Path) -> list[Path]:
    """Every checkpoint file of ``log``, of any kind."""
    where = checkpoint_dir()
    return sorted(where.glob(f"{_stem(log)}*{CHECKPOINT_SUFFIX}")) if where.is_dir() else []


def is_checkpoint_of(path: Path, log: Path) -> bool:
    """Whether ``path`` (a real path) is where a watch of any kind keeps the checkpoint of ``log``."""
    where = Path(os.path.realpath(checkpoint_dir()))
    return path.parent == where and path.name.startswith(_stem(log)) and path.name.endswith(CHECKPOINT_SUFFIX)


def _stem(log: Path) -> str:
    """How the name of every checkpoint file of ``log`` begins."""
    return checkpoint_path(log, "").name.removesuffix(CHECKPOINT_SUFFIX)


@functools.cache
def code_fingerprint() -> str:
    """A fingerprint of the modules that read logs and project them: an index written by other code is not
    used."""
    return source_fingerprint(Path(__file__).resolve().parent.parent, _CODE_DIRS)


def source_fingerprint(root: Path, packages: tuple[str, ...]) -> str:
    """A hash of the name, size and modification time of each source file of ``packages`` under ``root``: what
    Python's own bytecode cache goes by to tell a changed module (reading and hashing their 370 kB cost a first
    read and a reopen 5 M instructions each)."""
    digest = blake2b(digest_size=16)
    digest.update(b"%d" % FORMAT)
    for package in packages:
        with os.scandir(root / package) as entries:
            sources = sorted((entry.name, entry.stat()) for entry in entries if entry.name.endswith(".py"))
        for name, st in sources:
            digest.update(b"%s\0%s\0%d\0%d\0" % (package.encode(), name.encode(), st.st_size, st.st_mtime_ns))
    return digest.hexdigest()


class Meta(NamedTuple):
    """What an index says of itself and of the log it describes (readable without its body). Named tuples, not
    dataclasses: making the two classes costs a first read and a reopen a third of the 1.4 ms it did."""

    log: str
    size: int  # bytes of the log indexed
    dev: int
    ino: int
    head: str  # hash of the first ``HASH_BYTES`` of them …
    tail: str  # … and of the last ones
    code: str
    compressed: bool
    events: int
    written: int  # epoch ms
    state: tuple[int, int] | None  # the state's JSON before the columns' frame: its length and CRC-32 (None: in it)

    @classmethod
    def parse(cls, data: Any) -> Meta:
        """The metadata JSON ``data`` as a ``Meta`` (ValueError when it is not one)."""
        if type(data) is not dict:
            raise ValueError("metadata is not an object")
        kinds = {"log": str, "size": int, "dev": int, "ino": int, "head": str, "tail": str, "code": str,
                 "compressed": bool, "events": int, "written": int}  # fmt: skip
        for key, kind in kinds.items():
            if type(data.get(key)) is not kind:
                raise ValueError(f"metadata {key} is not a {kind.__name__}")
        state = data.get("state", False)
        if state is not None and not (
            type(state) is list and len(state) == 2 and all(type(n) is int and 0 <= n < 1 << 63 for n in state)
        ):
            raise ValueError("metadata state is not a length and a CRC")
        return cls(**{key: data[key] for key in kinds}, state=None if state is None else (state[0], state[1]))


class Restored(NamedTuple):
    """A log's reading state rebuilt from its index: go on decoding at ``offset`` with ``decoder``."""

    session: Session
    lines: LineStore
    decoder: LogDecoder
    decoder_diagnostics: int  # how many of ``session.diagnostics`` (the first ones) the decoder reported
    offset: int
    facts: SessionFacts


def _hash(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def _digest(meta: bytes) -> bytes:
    """The digest an index file holds of its metadata (the body carries a checksum of its own)."""
    return blake2b(meta, digest_size=_DIGEST).digest()


def ends(log: Path, size: int) -> tuple[str, str]:
    """The hashes of the first and the last ``HASH_BYTES`` of the first ``size`` bytes of ``log``."""
    with open_regular(log) as f:
        head = f.read(min(size, HASH_BYTES))
        f.seek(max(0, size - HASH_BYTES))
        tail = f.read(min(size, HASH_BYTES))
    if len(head) != min(size, HASH_BYTES) or len(tail) != min(size, HASH_BYTES):
        raise OSError("the log is shorter than indexed")
    return _hash(head), _hash(tail)


def read_meta(path: Path) -> tuple[Meta, int]:
    """An index file's metadata and the length of what precedes its digest (ValueError/OSError when it is not an
    index of this format; a FIFO, a device or a link there is no index tapedeck wrote, and is not waited on)."""
    with open_regular(path, follow=False) as f:
        prefix = f.read(len(MAGIC) + _PREFIX.size)
        if len(prefix) != len(MAGIC) + _PREFIX.size or not prefix.startswith(MAGIC):
            raise ValueError("not a tapedeck index")
        version, length = _PREFIX.unpack_from(prefix, len(MAGIC))
        if version != FORMAT:
            raise ValueError(f"index format {version}, not {FORMAT}")
        if length > 1 << 20:
            raise ValueError("metadata too long")
        raw = f.read(length)
    if len(raw) != length:
        raise ValueError("metadata cut short")
    return Meta.parse(orjson.loads(raw)), len(prefix) + length


def check(meta: Meta, log: Path) -> str | None:
    """Why the index ``meta`` describes does not fit ``log`` as it is now, or None when it does (a log gone or
    unreadable is said first: whatever wrote the index, that is what an operator needs to know)."""
    try:
        st = os.stat(log)
        if meta.code != code_fingerprint():
            return "written by another version of tapedeck"
        if os.path.realpath(log) != meta.log:
            return "indexes another path"
        if (st.st_dev, st.st_ino) != (meta.dev, meta.ino):
            return "the log was replaced by another file"
        if st.st_size < meta.size:
            return "the log was truncated"
        if ends(log, meta.size) != (meta.head, meta.tail):
            return "the log was rewritten"
    except OSError as exc:
        return log_unreadable(exc)
    return None


def log_unreadable(exc: OSError) -> str:
    """Why a cached file no longer fits its log when the log's stat or read failed with ``exc``, in one phrase."""
    return "the log is gone" if isinstance(exc, FileNotFoundError) else f"the log cannot be read: {exc.strerror or exc}"


def restore(log: Path, compressed: bool, consumer: Consumer, *, runs: bool = False) -> Restored | None:
    """``log``'s reading state from its index, with ``consumer`` taking what the decoder decodes from there on
    (``runs``: the session's per-event columns as ``Runs``, see ``session_state.decode``); None when there is no
    usable index (a problem of any kind: the caller reads the log in full)."""
    path = index_path(log)
    try:
        meta, start = read_meta(path)
        if meta.compressed != compressed or check(meta, log) is not None:
            return None
        raw_state, sections = read_body(path, meta, start)
        state = orjson.loads(raw_state)
        decoder = LogDecoder.resumed(str(log), compressed, state["decoder"], meta.size, consumer)
        lines = LineStore(log, decoder)
        lines.restore(state["lines"], _prefixed(sections, "lines."), meta.size)
        session = decode(state["session"], _prefixed(sections, "session."), lines, log, runs=runs)
        facts = SessionFacts.from_state(state["facts"])
        found = state["decoderDiagnostics"]
        if (
            type(found) is not int
            or not 0 <= found <= len(session.diagnostics)
            or not session.next_seq == decoder.next_seq == len(lines)
            or meta.events != session.next_seq
            or decoder.header != session.header
        ):
            return None
        return Restored(session, lines, decoder, found, meta.size, facts)
    except (OSError, ValueError, KeyError, TypeError, IndexError, OverflowError, MemoryError, RecursionError,
            RuntimeError, zstandard.ZstdError):  # fmt: skip  (RuntimeError: no home directory for the cache)
        return None


def write(
    log: Path, session: Session, lines: LineStore, decoder: LogDecoder, decoder_diagnostics: int, facts: SessionFacts
) -> Path | None:
    """Write the index of ``log`` as the pass that built ``session`` (and gathered ``facts``) left it: its decoder
    ``at_boundary`` with every byte it read, the first ``decoder_diagnostics`` of the session's its own; None
    (and no file) when it cannot be, or would be too big, written."""
    try:
        st = os.stat(log)
        size = decoder.bytes_fed
        if not decoder.at_boundary or size > st.st_size:
            return None
        path = index_path(log)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tree, columns = encode(session)
        table, line_columns = lines.table()
        state = {"session": tree, "lines": table, "decoder": decoder.state(), "facts": facts.state(),
                 "decoderDiagnostics": decoder_diagnostics}  # fmt: skip
        raw_state = orjson.dumps(state)
        del tree, table, state  # the JSON holds them now: the tree's objects go before the compressor's output comes
        sections: dict[str, Any] = {"session." + name: data for name, data in columns.items()}
        sections.update({"lines." + name: data for name, data in line_columns.items()})
        limit = max(size * MAX_SHARE, MAX_SMALL)
        head, tail = ends(log, size)
        meta = {"log": os.path.realpath(log), "size": size, "dev": st.st_dev, "ino": st.st_ino, "head": head,
                "tail": tail, "code": code_fingerprint(), "compressed": decoder.compressed,
                "events": session.next_seq, "written": int(time.time() * 1000)}  # fmt: skip
        # The file is written as it is made, with no spool or joined copy of its bytes in between: its metadata,
        # the state's JSON as it is (at the fast level zstd takes little off JSON text, for 14 instructions a byte;
        # a CRC-32 costs 4), then the columns' frame as the compressor hands it out. When the body passes its share
        # of the most an index may take (a zstd log's does), the write stops and every section goes in one frame at
        # the dense level; an index that takes more than the most is not written.
        try:
            kept = [len(raw_state), zlib.crc32(raw_state)]
            _replace(path, _start(meta, kept), [raw_state], sections, LEVEL, limit * DENSE_SHARE, limit)
        except _TooBig:
            start = _start(meta, None)
            _replace(path, start, [], {"state": raw_state, **sections}, DENSE_LEVEL, limit - sum(map(len, start)), limit)
        return path
    except (OSError, ValueError, TypeError, OverflowError, MemoryError, RuntimeError, zstandard.ZstdError, _TooBig,
            _NoRoom):  # fmt: skip
        return None


class _TooBig(Exception):
    """The body of an index file being written grew past what it may take at this level (``_replace``)."""


class _NoRoom(Exception):
    """An index file came out bigger than an index may be (``_replace``)."""


def _start(meta: dict[str, Any], kept: list[int] | None) -> list[bytes]:
    """What an index file holds before its body: ``meta`` (the state's length and CRC-32 ``kept`` beside it, or
    null: the state is in the frame) with its digest."""
    raw = orjson.dumps({**meta, "state": kept})
    return [MAGIC, _PREFIX.pack(FORMAT, len(raw)), raw, _digest(raw)]


def _replace(
    path: Path, start: list[bytes], kept: list[bytes], sections: dict[str, Any], level: int, most: float, room: float
) -> None:
    """Write the index file ``path``: ``start``, the ``kept`` pieces as they are, then ``sections`` in one zstd
    frame at ``level`` (``_frame``), the file replaced in one step. Raises (the old file left as it was)
    ``_TooBig`` as soon as the bytes after ``start`` pass ``most``, ``_NoRoom`` when the whole file passes
    ``room``."""

    def pieces() -> Iterator[bytes]:
        yield from start
        written = 0
        for piece in chain(kept, _frame(sections, level)):
            written += len(piece)
            if written > most:
                raise _TooBig
            yield piece
        if sum(map(len, start)) + written > room:
            raise _NoRoom

    replace_file(path, pieces(), prefix=TEMPORARY, suffix=SUFFIX)


def _frame(sections: dict[str, Any], level: int) -> Iterator[bytes]:
    """The named sections (each a buffer: bytes, an array, or a list of such pieces, as a line table's column is,
    or ``Runs``, whose pieces are made as they are compressed), packed and compressed at zstd ``level`` into one
    frame with the checksum of its content, its bytes as the compressor hands them out. The compressor takes the
    sections one by one, its frame sized up front: joined first, the sections were copied into one buffer (50 MiB
    on a 500 MB log, on top of everything the view holds)."""
    pieces = {name: data if isinstance(data, list | Runs) else [data] for name, data in sections.items()}
    sizes = {name: parts.nbytes if isinstance(parts, Runs) else sum(memoryview(piece).nbytes for piece in parts)
             for name, parts in pieces.items()}  # fmt: skip
    total = 4 + sum(2 + len(name.encode()) + 8 + size for name, size in sizes.items())
    compressor = zstandard.ZstdCompressor(level=level, write_checksum=True).compressobj(size=total)
    yield compressor.compress(struct.pack(">I", len(pieces)))
    for name, parts in pieces.items():
        key = name.encode()
        yield compressor.compress(struct.pack(">H", len(key)) + key + struct.pack(">Q", sizes[name]))
        for piece in parts.pieces() if isinstance(parts, Runs) else parts:
            yield compressor.compress(piece)
    yield compressor.flush()


def read_body(path: Path, meta: Meta, start: int) -> tuple[memoryview, dict[str, memoryview]]:
    """The state's JSON and the other sections of the index file at ``path``, whose metadata ``read_meta`` read
    (``start``: where its digest begins); ValueError/ZstdError/OSError when its digest or body is damaged."""
    with open_regular(path, follow=False) as f:
        f.seek(start)
        digest = f.read(_DIGEST)
        body = f.read()
        f.seek(len(MAGIC) + _PREFIX.size)
        raw_meta = f.read(start - len(MAGIC) - _PREFIX.size)
    if _digest(raw_meta) != digest:
        raise ValueError("its metadata does not match its digest")
    return _body(meta, body)


def _body(meta: Meta, body: bytes) -> tuple[memoryview, dict[str, memoryview]]:
    """The state's JSON and the other sections of an index's ``body`` (ValueError/ZstdError when it is not what
    ``meta`` says it is)."""
    if meta.state is None:
        sections = _sections(body)
        return sections.pop("state"), sections
    length, crc = meta.state
    view = memoryview(body)
    if length > len(view) or zlib.crc32(view[:length]) != crc:
        raise ValueError("the state does not match its CRC")
    sections = _sections(view[length:])
    if "state" in sections:
        raise ValueError("a second state")
    return view[:length], sections


def _sections(body: bytes | memoryview) -> dict[str, memoryview]:
    """The named sections of a body, as views of the decompressed bytes (ValueError/ZstdError when it is not
    one, or its content does not match its checksum)."""
    if not zstandard.get_frame_parameters(body).has_checksum or body[4] & _UNUSED_BIT:
        raise ValueError("the frame's header is not the one written")  # without the flag zstd checks nothing
    data = memoryview(zstandard.ZstdDecompressor().decompress(body, max_output_size=MAX_EXPANSION * len(body) + 1024))
    try:  # a count or a section's header cut short (struct.error is no ValueError)
        (count,) = struct.unpack_from(">I", data, 0)
        at, sections = 4, {}
        for _ in range(count):
            (n,) = struct.unpack_from(">H", data, at)
            name = bytes(data[at + 2 : at + 2 + n]).decode()
            (length,) = struct.unpack_from(">Q", data, at + 2 + n)
            at += 10 + n
            if at + length > len(data):
                raise ValueError("a section runs past the body")
            sections[name] = data[at : at + length]
            at += length
    except struct.error:
        raise ValueError("a section's header runs past the body") from None
    if at != len(data):
        raise ValueError("bytes after the last section")
    return sections


def _prefixed(sections: dict[str, memoryview], prefix: str) -> dict[str, memoryview]:
    return {name[len(prefix) :]: data for name, data in sections.items() if name.startswith(prefix)}
