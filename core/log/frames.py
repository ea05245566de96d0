"""Zstandard frame scanning and incremental multi-frame decoding.

DSH writes a zstd log as concatenated independent frames (header in frame 1, then one frame per append batch).
``zstandard``'s one-shot ``decompress`` stops after the first frame, so frames are located by walking the standard
frame format and decoded one by one. An incomplete final frame is kept for the next feed. A frame that decodes to
more than ``FRAME_LIMIT`` (by its header, or as it decodes when its header does not say) is refused as a
``FrameTooLarge`` rather than filling the memory. The log decoder's frames (``FrameStream(streamed=True)``) that
decode to more than ``WINDOW`` (``zstd FILE`` writes a whole log as one) are decoded as a stream: checked to
their end first, so a corrupt one still yields no line, then decoded again a window at a time as its lines are
read, so what a reader holds of a frame is its compressed bytes and a window, never all it decodes to; so is a
torn final frame's (``recovered_frame``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zstandard import ZstdDecompressor

ZSTD_MAGIC = 0xFD2FB528
_SKIPPABLE_MASK = 0xFFFFFFF0
_SKIPPABLE_MAGIC = 0x184D2A50


FRAME_LIMIT = 1 << 30  # bytes a frame may decode to (DSH writes one per append batch, `zstd FILE` one in all)
SLICE = 1 << 10  # compressed bytes fed at a time to a frame that does not say its size: 32 MiB out at most
WINDOW = 8 << 20  # decoded bytes a streamed frame is handed on in (and one slice's output more at most)


class FrameError(ValueError):
    """The bytes at a frame boundary are not a zstd frame."""


class FrameTooLarge(FrameError):
    """A frame that decodes to more than ``FRAME_LIMIT`` bytes."""

    def __init__(self, size: int | None) -> None:
        said = f"{size:,} bytes" if size is not None else f"more than {FRAME_LIMIT:,} bytes"
        super().__init__(
            f"a zstd frame that decodes to {said}, past the {FRAME_LIMIT >> 30} GiB a frame is read to "
            "(`zstd -d` the log to read it)"
        )


def frame_end(buf: bytes | memoryview, start: int) -> int | None:
    """Offset just past the frame starting at ``start``, or None if the buffer ends before the frame does.

    Raises FrameError when the bytes are not a zstd (or skippable) frame.
    """
    return _walk(buf, start, None)[0]


_Walk = tuple[int, int, bool]
"""Where a walk over a frame's blocks stopped for want of bytes (``_walk``): the offset of the next block header (or
just past the block whose body is not all there yet, past the buffer's end), the bytes after the last block (its
checksum) and whether the last block was seen."""


def _walk(
    buf: bytes | bytearray | memoryview, start: int, walk: _Walk | None
) -> tuple[int | None, _Walk | None]:
    """``frame_end`` of the frame at ``start``, walked on from where an earlier walk over fewer of its bytes stopped
    (``walk``; None: from its header), and where this one stopped when the frame is not all in ``buf`` (None when
    its header is not)."""
    n = len(buf)
    if walk is None:
        if n - start < 4:
            return None, None
        magic = int.from_bytes(buf[start : start + 4], "little")
        if magic & _SKIPPABLE_MASK == _SKIPPABLE_MAGIC:
            if n - start < 8:
                return None, None
            walk = (start + 8 + int.from_bytes(buf[start + 4 : start + 8], "little"), 0, True)
        elif magic != ZSTD_MAGIC:
            raise FrameError(f"bad zstd magic 0x{magic:08x}")
        else:
            pos = start + 4
            if pos >= n:
                return None, None
            fhd = buf[pos]
            pos += 1
            fcs_flag, single_segment, checksum, dict_flag = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3
            if (fhd >> 3) & 1:
                raise FrameError("reserved bit set in zstd frame header")
            pos += (0 if single_segment else 1) + (0, 1, 2, 4)[dict_flag]
            pos += (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
            walk = (pos, 4 if checksum else 0, False)
    pos, trailer, last = walk
    while not last:
        if pos + 3 > n:
            return None, (pos, trailer, last)
        bh = int.from_bytes(buf[pos : pos + 3], "little")
        last, btype, bsize = (bh & 1) == 1, (bh >> 1) & 3, bh >> 3
        if btype == 3:
            raise FrameError("reserved zstd block type")
        pos += 3 + (1 if btype == 1 else bsize)
        if pos > n:
            return None, (pos, trailer, last)
    pos += trailer
    return (pos, None) if pos <= n else (None, (pos - trailer, trailer, last))


@dataclass(slots=True)
class DecodedFrame:
    """One complete frame: where it sat in the compressed stream and what it decoded to."""

    offset: int
    length: int
    data: bytes | None  # None when the frame was corrupt (``error``) or is decoded as a stream (``source``)
    error: str | None = None
    source: bytes | bytearray | None = None  # a streamed frame, checked: decoded again by ``pieces``
    end: int | None = None  # a torn streamed frame: the decoded bytes ``pieces`` hands on (whole lines)

    def pieces(self) -> Iterator[tuple[int, bytes]]:
        """What a frame that is not corrupt decodes to, in pieces, each with where it starts in the whole: its
        ``data`` in one, or its ``source`` decoded again a ``WINDOW`` at a time (up to ``end``)."""
        if self.data is not None:
            yield 0, self.data
            return
        import zstandard

        at = 0
        # a context of its own: the thread's may decode other frames (a line read back) between two pieces
        for piece in _stream(zstandard.ZstdDecompressor(), self.source or b""):
            if self.end is not None and at + len(piece) > self.end:
                piece = piece[: self.end - at]
            if not piece:
                return
            yield at, piece
            at += len(piece)


_local = threading.local()


def _context() -> ZstdDecompressor:
    """This thread's decompressor context: creating one per frame costs more than small frames do."""
    dctx = getattr(_local, "dctx", None)
    if dctx is None:
        import zstandard  # only zstd logs need it, and it costs ms to import

        dctx = _local.dctx = zstandard.ZstdDecompressor()
    return dctx


def decode_frame(frame: bytes | memoryview) -> bytes:
    """Decompress exactly one complete frame (checksum verified by zstd when present); ``FrameTooLarge`` when it
    decodes to more than ``FRAME_LIMIT`` bytes."""
    return _bounded(_context(), bytes(frame))


def _content_size(data: bytes | bytearray) -> int:
    """What the frame (or the start of one) ``data`` says it decodes to, -1 when it does not say; ``FrameTooLarge``
    past ``FRAME_LIMIT``."""
    import zstandard

    try:
        size = zstandard.frame_content_size(data)
    except zstandard.ZstdError:
        size = -1  # a header cut short: zstd says what is wrong with it as it decodes
    if size > FRAME_LIMIT:
        raise FrameTooLarge(size)
    return size


def _bounded(dctx: ZstdDecompressor, data: bytes | bytearray) -> bytes:
    """What the frame (or the start of one) ``data`` decodes to, refused past ``FRAME_LIMIT``: a frame whose header
    says its size is refused on that (zstd decodes no byte past what it says), any other as it decodes."""
    if _content_size(data) >= 0:
        return dctx.decompressobj().decompress(data)
    return b"".join(_stream(dctx, data))


def _stream(dctx: ZstdDecompressor, data: bytes | bytearray) -> Iterator[bytes]:
    """What the frame (or the start of one) ``data`` decodes to, as it decodes, in pieces of ``WINDOW`` bytes and
    at most one slice's output more (the last one shorter); ``FrameTooLarge`` past ``FRAME_LIMIT``, a
    ``zstandard.ZstdError`` where it is corrupt, as decoding it whole raises them."""
    _content_size(data)
    decoder = dctx.decompressobj()
    view = memoryview(data)
    # what the slices decoded to since the last piece, joined into the next and let go, so that the piece a reader
    # works on is held once (a buffer it was copied out of stayed beside it)
    parts: list[bytes] = []
    size = total = 0
    for at in range(0, len(data), SLICE):
        part = decoder.decompress(view[at : at + SLICE])
        parts.append(part)
        size += len(part)
        if size >= WINDOW:
            total += size
            if total > FRAME_LIMIT:
                raise FrameTooLarge(None)
            piece = b"".join(parts)
            parts.clear()
            size = 0
            yield piece
            del piece
    if total + size > FRAME_LIMIT:
        raise FrameTooLarge(None)
    if size:
        yield b"".join(parts)


def _checked(frame: bytes | bytearray) -> bytes | None:
    """What the complete ``frame`` decodes to when that is one ``_stream`` piece; None when it is more (decoded to
    its end, so that zstd checks it, and let go); raises as ``decode_frame`` does."""
    if 0 <= _content_size(frame) <= WINDOW:
        return decode_frame(frame)
    pieces = _stream(_context(), frame)
    first = next(pieces, b"")
    more = False
    for _ in pieces:
        more = True
    return None if more else first


def recovered_frame(torn: bytes | bytearray, offset: int) -> tuple[DecodedFrame, int]:
    """The incomplete (torn) frame ``torn`` at file ``offset`` as a frame whose ``pieces`` are the complete lines
    ``recover_lines`` gives (decoded again a ``WINDOW`` at a time when they are more than one window), and how
    many lines those are."""
    import zstandard  # only zstd logs get here

    lines = kept = total = 0
    first: bytes | None = None
    more = False
    try:
        for piece in _stream(_context(), torn):
            if (nl := piece.rfind(b"\n")) >= 0:
                kept = total + nl + 1
            lines += piece.count(b"\n")
            total += len(piece)
            if first is None:
                first = piece
            else:
                more = True
    except (zstandard.ZstdError, FrameTooLarge):
        return DecodedFrame(offset, len(torn), b""), 0
    if not more:
        return DecodedFrame(offset, len(torn), (first or b"")[:kept]), lines
    return DecodedFrame(offset, len(torn), None, source=torn, end=kept), lines


def recover_lines(torn: bytes) -> bytes:
    """The complete lines an incomplete (torn) zstd frame decodes to: what a reader already showed of it (none when
    it is past ``FRAME_LIMIT``)."""
    import zstandard  # only zstd logs get here

    try:
        recovered = _bounded(zstandard.ZstdDecompressor(), torn)
    except (zstandard.ZstdError, FrameTooLarge):
        return b""
    return recovered[: recovered.rfind(b"\n") + 1]


class FrameStream:
    """Incremental splitter: feed compressed bytes, get back every complete frame decoded."""

    def __init__(self, base_offset: int = 0, streamed: bool = False) -> None:
        """Frames from file offset ``base_offset`` on; ``streamed``: one that decodes to more than ``WINDOW`` comes
        checked, to be decoded again by ``DecodedFrame.pieces``."""
        self._buf = bytearray()
        self._base = base_offset  # file offset of _buf[0]
        self._streamed = streamed
        # how far the incomplete frame at _buf[0] was walked: the next feed goes on from there
        self._walk: _Walk | None = None
        # a run of bytes that is no frame, not ended yet (no frame's magic after it so far): its file offset and what
        # is wrong at its start; ``_buf`` then holds its last bytes that may begin a magic, looked at again with the
        # next feed, so that the run is one corrupt frame wherever the feeds cut it
        self._damage: tuple[int, str] | None = None

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held back for the next feed."""
        return len(self._buf)

    @property
    def pending_offset(self) -> int:
        """File offset where the held-back bytes start."""
        return self._base

    def pending_bytes(self) -> bytes:
        """A copy of the held-back bytes of the incomplete final frame."""
        return bytes(self._buf)

    @property
    def pending_buffer(self) -> bytearray:
        """The held-back bytes of the incomplete final frame themselves, not a copy: read before the next feed, which
        changes them."""
        return self._buf

    @property
    def damage(self) -> tuple[int, str] | None:
        """A run of bytes that is no frame, going on to the end of what was fed (reported once it ends: by the feed
        that brings the next frame, or by ``finish``): its file offset and what is wrong at its start."""
        return self._damage

    def finish(self) -> list[DecodedFrame]:
        """End of input: the run of bytes that is no frame going on to it, if any, as one corrupt frame (the held
        bytes it ends in with it); an incomplete final frame stays held (``pending_buffer``)."""
        if self._damage is None:
            return []
        (offset, error), self._damage = self._damage, None
        end = self._base + len(self._buf)
        self._buf.clear()
        self._base = end
        return [DecodedFrame(offset, end - offset, None, error)]

    def feed(self, data: bytes) -> list[DecodedFrame]:
        """Add bytes; return every frame that is now complete, in order."""
        self._buf += data
        out: list[DecodedFrame] = []
        pos = 0
        buf = self._buf
        walk, self._walk = self._walk, None
        damage, self._damage = self._damage, None
        while True:
            if damage is None:  # else a run that is no frame goes on from an earlier feed
                try:
                    end, walk = _walk(buf, pos, walk)
                except FrameError as exc:
                    damage, pos = (self._base + pos, str(exc)), pos + 1
            if damage is not None:
                # Resynchronise on the next magic number; the bytes before it are one corrupt frame, whatever feed
                # brings that magic (the last bytes fed, which may begin one, are looked at again with the next)
                nxt = buf.find(ZSTD_MAGIC.to_bytes(4, "little"), pos)
                if nxt < 0:
                    self._damage, pos = damage, max(pos, len(buf) - 3)
                    break
                out.append(DecodedFrame(damage[0], self._base + nxt - damage[0], None, damage[1]))
                pos, walk, damage = nxt, None, None
                continue
            if end is None:  # the frame at ``pos`` goes on in the next feed: its blocks are not walked again
                self._walk = None if walk is None else (walk[0] - pos, walk[1], walk[2])
                break
            import zstandard

            try:
                frame: bytes | bytearray
                if self._streamed and pos == 0 and end == len(buf):
                    # the whole buffer (a log in one frame) is taken, not copied: the loop ends on the empty buffer
                    # that replaces it, and cuts nothing from that
                    frame, buf = buf, bytearray()
                    self._buf = buf
                else:
                    with memoryview(buf) as view:  # one copy of the frame, let go before the buffer is cut
                        frame = bytes(view[pos:end])
                if not self._streamed:
                    out.append(DecodedFrame(self._base + pos, end - pos, decode_frame(frame)))
                elif (data := _checked(frame)) is not None:
                    out.append(DecodedFrame(self._base + pos, end - pos, data))
                else:
                    out.append(DecodedFrame(self._base + pos, end - pos, None, source=frame))
            except zstandard.ZstdError as exc:
                out.append(DecodedFrame(self._base + pos, end - pos, None, f"corrupt zstd frame: {exc}"))
            except FrameTooLarge as exc:
                out.append(DecodedFrame(self._base + pos, end - pos, None, str(exc)))
            pos = end
        del self._buf[:pos]
        self._base += pos
        return out
