"""A zstd frame is decoded as a stream: a log written as one frame (``zstd FILE``, or a frame past ``WINDOW``)
is read holding its compressed bytes and a window of what they decode to, not the whole of it, which a
single-frame log of hundreds of MB made the largest thing a reading command held (295 MB of peak RSS for
``inspect --json`` on a 200 MB log, against 84 MB for the same log uncompressed). What the reading commands print
is the same, byte for byte, whether a frame is decoded whole or as a stream: its events, the lines read back
through the index, and a corrupt or torn frame's diagnostics (a corrupt frame still yields none of its lines)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
import zstandard

from bench.gen_session import generate
from core.cli import main
from core.log import frames

SMALL_WINDOW = 64 << 10  # a window far below the frames of these logs, so every one of them is streamed


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("zstd-streamed") / "session.jsonl"
    generate(path, 8_000_000, seed=5, profile="short-turns")
    return path.read_bytes()


def _write(directory: Path, data: bytes, name: str = "session.jsonl.zstd") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_bytes(data)
    return directory / name


def _one_frame(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


def _two_frames(raw: bytes) -> tuple[bytes, bytes]:
    """The header's frame, and the frame of every other line."""
    cut = raw.index(b"\n") + 1
    return _one_frame(raw[:cut]), _one_frame(raw[cut:])


def _run(argv: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> tuple[int, bytes, bytes]:
    capsysbinary.readouterr()
    code = main(argv)
    out, err = capsysbinary.readouterr()
    return code, out, err


def _peak(argv: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> int:
    tracemalloc.start()
    try:
        code, _, _ = _run(argv, capsysbinary)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        assert code == 0


@pytest.mark.parametrize("torn", [False, True], ids=["whole", "torn"])
def test_a_single_frame_log_is_read_holding_a_window_of_it(
    torn: bool,
    raw: bytes,
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``inspect --json`` on the log as one frame (whole, or torn as a copy cut short leaves it) holds at most its
    compressed bytes and a few windows more than on the log uncompressed (it held all 8 MB the frame decodes to)."""
    monkeypatch.setattr(frames, "WINDOW", SMALL_WINDOW, raising=False)
    packed = _one_frame(raw)
    if torn:
        packed = packed[: len(packed) * 3 // 4]
    plain, zstd = _write(tmp_path / "raw", raw, "session.jsonl"), _write(tmp_path / "zstd", packed)
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache-raw"))
    peak_raw = _peak(["inspect", str(plain), "--json"], capsysbinary)
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache-zstd"))
    peak_zstd = _peak(["inspect", str(zstd), "--json"], capsysbinary)
    assert peak_zstd - peak_raw <= 2 * len(packed) + 8 * SMALL_WINDOW, (peak_raw, peak_zstd, len(packed))


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A log with lines longer than ``SMALL_WINDOW``, so lines run across the pieces of a frame."""
    path = tmp_path_factory.mktemp("zstd-streamed") / "session.jsonl"
    generate(path, 1_500_000, seed=2, profile="mixed")
    data = path.read_bytes()
    assert max(map(len, data.split(b"\n"))) > SMALL_WINDOW
    return data


def _corrupt(frame: bytes, at: int) -> bytes:
    damaged = bytearray(frame)
    damaged[at] ^= 0x5A
    return bytes(damaged)


def _variants(raw: bytes) -> dict[str, bytes]:
    """The log as one frame; as the header's frame and one more, whole, corrupt in its middle, with a checksum
    that does not match, or torn."""
    head, body = _two_frames(raw)
    return {
        "one-frame": _one_frame(raw),
        "two-frames": head + body,
        "corrupt-middle": head + _corrupt(body, len(body) // 2),
        "bad-checksum": head + _corrupt(body, len(body) - 2),
        "torn": head + body[: len(body) * 2 // 3],
    }


COMMANDS = [
    ["inspect", "{log}", "--json"],
    ["events", "{log}", "--json"],
    ["events", "{log}", "--type", "tool/result", "--json"],  # the second run reads its lines back
    ["surface", "{log}"],
    ["expand", "{log}", "--turn", "1", "--step", "1"],
]


@pytest.mark.parametrize("variant", ["one-frame", "two-frames", "corrupt-middle", "bad-checksum", "torn"])
def test_a_streamed_frame_reads_as_the_whole_frame_did(
    variant: str,
    mixed: bytes,
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every command prints the same bytes (twice: the second run starts from the index and reads lines back from
    the frame) whether the frames are decoded whole or a small window at a time: the same events, the same
    lines read back, and a corrupt or torn frame's diagnostics word for word (a corrupt one yields no line)."""
    log = _write(tmp_path / "log", _variants(mixed)[variant])
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")  # indexed, small as it is
    outputs = []
    for window, cache in ((1 << 40, "whole"), (SMALL_WINDOW, "streamed")):
        monkeypatch.setattr(frames, "WINDOW", window)
        monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / cache))
        outputs.append(
            [_run([a.replace("{log}", str(log)) for a in argv], capsysbinary) for argv in COMMANDS * 2]
        )
    whole, streamed = outputs
    if variant in ("one-frame", "two-frames"):
        assert [code for code, _, _ in whole] == [0] * len(whole), [err for _, _, err in whole]
    for argv, one, other in zip(COMMANDS * 2, whole, streamed, strict=True):
        assert one == other, argv
    if variant in ("corrupt-middle", "bad-checksum"):
        diagnostics = b"".join(out for _, out, _ in whole)
        assert b'"corrupt-frame"' in diagnostics and b'"events": 0' in diagnostics
