"""``cache info`` and ``cache clear`` give sizes in binary units (B, KiB, MiB, GiB), as the README writes sizes; they
printed decimal kilo (``4.2kB`` for 4,200 bytes) beside the README's KiB."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.cli.cache import binary_size
from core.read.index import SUFFIX, index_dir


@pytest.mark.parametrize(
    ("n", "said"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (4200, "4.1 KiB"),
        (10 * 1024, "10 KiB"),
        (1023 * 1024 + 1023, "1023 KiB"),
        (3 << 20, "3.0 MiB"),
        (700 << 20, "700 MiB"),
        (5 << 30, "5.0 GiB"),
        (2048 << 30, "2048 GiB"),
    ],
)
def test_binary_size(n: int, said: str) -> None:
    assert binary_size(n) == said


def test_cache_info_and_clear_say_binary_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    where = index_dir()
    where.mkdir(parents=True)
    (where / f"a{SUFFIX}").write_bytes(b"x" * 4200)  # no index: listed as unreadable, with its size
    (where / f"b{SUFFIX}").write_bytes(b"x" * (3 << 20))
    assert main(["cache", "info"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"2 file(s) in {tmp_path / 'cache'}, 3.0 MiB", lines
    assert lines[1].startswith(f"  index  a{SUFFIX}  4.1 KiB  ?"), lines
    assert lines[2].startswith(f"  index  b{SUFFIX}  3.0 MiB  ?"), lines
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out == f"removed 2 file(s), 3.0 MiB, from {tmp_path / 'cache'}\n"
