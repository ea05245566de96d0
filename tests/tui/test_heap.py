"""``tui.heap.steady_heap``: big blocks a process frees go back to the system, however big the ones before were."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# In a fresh interpreter: free one 16 MiB block (which raises glibc's default mmap threshold to 16 MiB), then make
# sixteen 6 MiB blocks with a small block kept after each, free the big ones and report how much of them stayed
# resident. Printed: MiB still resident of the 96 MiB freed.
PROBE = textwrap.dedent(
    """
    import sys
    from tui.heap import steady_heap

    def rss():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024

    steady = sys.argv[1] == "steady" and steady_heap()
    first = b"a" * (16 << 20)
    del first
    before = rss()
    kept, big = [], []
    for k in range(16):
        big.append(bytes([k]) * (6 << 20))
        kept.append(bytes([k]) * 2000)  # above pymalloc's limit: from the C heap, right after the big one
    del big
    print(steady, round(rss() - before))
    """
)


def resident_after_free(mode: str) -> tuple[str, int]:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True).stdout
    steady, mib = out.split()
    return steady, int(mib)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt and /proc are Linux's")
def test_freed_big_blocks_leave_the_process() -> None:
    steady, resident = resident_after_free("steady")
    if steady != "True":
        pytest.skip("no glibc mallopt here (another C library)")
    assert resident < 16  # of 96 MiB freed (all 96 stay without it, on glibc 2.3x)



# In a fresh interpreter: make 64 MiB of 4,000-byte blocks (from the C heap, below the mmap threshold), free all
# but every sixteenth (each freed run a hole the heap cannot give back by shrinking), then trim. Printed: MiB of
# the holes still resident before and after ``trim_heap``.
TRIM_PROBE = textwrap.dedent(
    """
    from tui.heap import steady_heap, trim_heap

    def rss():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024

    steady_heap()
    blocks = [bytes([k % 251]) * 4000 for k in range((64 << 20) // 4000)]
    kept = blocks[::16]
    del blocks
    before = rss()
    trimmed = trim_heap()
    print(trimmed, round(before - rss()))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim and /proc are Linux's")
def test_trimming_gives_the_heaps_holes_back() -> None:
    out = subprocess.run([sys.executable, "-c", TRIM_PROBE], capture_output=True, text=True, check=True).stdout
    trimmed, released = out.split()
    if trimmed != "True":
        pytest.skip("no glibc malloc_trim here (another C library)")
    assert int(released) > 40  # of the 60 MiB of holes (none goes back without the trim)
