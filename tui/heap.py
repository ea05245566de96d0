"""The C heap of a long-running TUI process: big buffers go back to the system once freed.

glibc's ``malloc`` serves a request above its mmap threshold (128 KiB at start) from a mapping of its own, which
``free`` unmaps. But each time such a block is freed the threshold rises to its size (up to 32 MiB), so the big
buffers that follow (the loader's 1 MB reads, growing per-event arrays, the index's sections) are carved from the
ordinary heap instead, where a freed block stays resident as long as anything above it lives. Loading a 500 MB
log in the TUI left 70 MiB of such holes. Setting the threshold once fixes it (and stops it moving).
"""

from __future__ import annotations

import ctypes
import sys

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
MMAP_THRESHOLD = 4 << 20  # blocks from this size on are mapped on their own and unmapped when freed
# (below it the loader's 1 MB reads come from the heap: mapping each would cost a page fault per 4 KiB)


def steady_heap(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at ``threshold`` bytes for this process; False where there is no glibc (the
    heap is left as it is)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own symbols: the C library it runs on, found without a search
    except (OSError, AttributeError):  # musl and others: no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, threshold))
