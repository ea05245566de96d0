"""Zstandard frame scanning and incremental multi-frame decoding.

DSH writes a zstd log as concatenated independent frames (header in frame 1, then one frame per append batch).
``zstandard``'s one-shot ``decompress`` stops after the first frame, so frames are located by walking the standard
frame format and decoded one by one. An incomplete final frame is kept for the next feed. A frame is decoded
whole, so one that decodes to more than ``FRAME_LIMIT`` (by its header, or as it decodes when its header does not
say) is refused as a ``FrameTooLarge`` rather than filling the memory.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zstandard import ZstdDecompressor

ZSTD_MAGIC = 0xFD2FB528
_SKIPPABLE_MASK = 0xFFFFFFF0
_SKIPPABLE_MAGIC = 0x184D2A50


FRAME_LIMIT = 1 << 30  # bytes a frame may decode to (DSH writes one per append batch, `zstd FILE` one in all)
_SLICE = 1 << 10  # compressed bytes fed at a time to a frame that does not say its size: 32 MiB out at most


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
    n = len(buf)
    if n - start < 4:
        return None
    magic = int.from_bytes(buf[start : start + 4], "little")
    if magic & _SKIPPABLE_MASK == _SKIPPABLE_MAGIC:
        if n - start < 8:
            return None
        end = start + 8 + int.from_bytes(buf[start + 4 : start + 8], "little")
        return end if end <= n else None
    if magic != ZSTD_MAGIC:
        raise FrameError(f"bad zstd magic 0x{magic:08x}")
    pos = start + 4
    if pos >= n:
        return None
    fhd = buf[pos]
    pos += 1
    fcs_flag, single_segment, checksum, dict_flag = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3
    if (fhd >> 3) & 1:
        raise FrameError("reserved bit set in zstd frame header")
    pos += (0 if single_segment else 1) + (0, 1, 2, 4)[dict_flag]
    pos += (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    while True:
        if pos + 3 > n:
            return None
        bh = int.from_bytes(buf[pos : pos + 3], "little")
        pos += 3
        last, btype, bsize = bh & 1, (bh >> 1) & 3, bh >> 3
        if btype == 3:
            raise FrameError("reserved zstd block type")
        pos += 1 if btype == 1 else bsize
        if pos > n:
            return None
        if last:
            break
    pos += 4 if checksum else 0
    return pos if pos <= n else None


@dataclass(slots=True)
class DecodedFrame:
    """One complete frame: where it sat in the compressed stream and what it decoded to."""

    offset: int
    length: int
    data: bytes | None  # None when the frame was corrupt
    error: str | None = None


_local = threading.local()


def decode_frame(frame: bytes | memoryview) -> bytes:
    """Decompress exactly one complete frame (checksum verified by zstd when present); ``FrameTooLarge`` when it
    decodes to more than ``FRAME_LIMIT`` bytes.

    One decompressor context is reused per thread: creating one per frame costs more than small frames do.
    """
    dctx = getattr(_local, "dctx", None)
    if dctx is None:
        import zstandard  # only zstd logs need it, and it costs ms to import

        dctx = _local.dctx = zstandard.ZstdDecompressor()
    return _bounded(dctx, bytes(frame))


def _bounded(dctx: ZstdDecompressor, data: bytes) -> bytes:
    """What the frame (or the start of one) ``data`` decodes to, refused past ``FRAME_LIMIT``: a frame whose header
    says its size is refused on that (zstd decodes no byte past what it says), any other as it decodes."""
    import zstandard

    try:
        size = zstandard.frame_content_size(data)
    except zstandard.ZstdError:
        size = -1  # a header cut short: zstd says what is wrong with it as it decodes
    if size > FRAME_LIMIT:
        raise FrameTooLarge(size)
    decoder = dctx.decompressobj()
    if size >= 0:
        return decoder.decompress(data)
    out = bytearray()
    for at in range(0, len(data), _SLICE):
        out += decoder.decompress(data[at : at + _SLICE])
        if len(out) > FRAME_LIMIT:
            raise FrameTooLarge(None)
    return bytes(out)


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

    def __init__(self, base_offset: int = 0) -> None:
        self._buf = bytearray()
        self._base = base_offset  # file offset of _buf[0]

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

    def feed(self, data: bytes) -> list[DecodedFrame]:
        """Add bytes; return every frame that is now complete, in order."""
        self._buf += data
        out: list[DecodedFrame] = []
        pos = 0
        buf = self._buf
        while True:
            try:
                end = frame_end(buf, pos)
            except FrameError as exc:
                # Resynchronise on the next magic number; report the garbage as one corrupt frame.
                nxt = self._buf.find(ZSTD_MAGIC.to_bytes(4, "little"), pos + 1)
                stop = nxt if nxt >= 0 else len(self._buf)
                out.append(DecodedFrame(self._base + pos, stop - pos, None, str(exc)))
                pos = stop
                if nxt < 0:
                    break
                continue
            if end is None:
                break
            import zstandard

            try:
                out.append(DecodedFrame(self._base + pos, end - pos, decode_frame(bytes(buf[pos:end]))))
            except zstandard.ZstdError as exc:
                out.append(DecodedFrame(self._base + pos, end - pos, None, f"corrupt zstd frame: {exc}"))
            except FrameTooLarge as exc:
                out.append(DecodedFrame(self._base + pos, end - pos, None, str(exc)))
            pos = end
        del self._buf[:pos]
        self._base += pos
        return out
