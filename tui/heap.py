"""The C heap of a long-running TUI process: big buffers go back to the system once freed.

glibc's ``malloc`` serves a request above its mmap threshold (128 KiB at start) from a mapping of its own, which
``free`` unmaps. But each time such a block is freed the threshold rises to its size (up to 32 MiB), so the big
buffers that follow (the loader's 1 MB reads, growing per-event arrays, the index's sections) are carved from the
ordinary heap instead, where a freed block stays resident as long as anything above it lives. Loading a 500 MB
log in the TUI left 70 MiB of such holes. Setting the threshold once fixes it (and stops it moving). The blocks
below it that a load freed stay in the heap's free lists, resident, until ``trim_heap`` hands their pages back.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
MMAP_THRESHOLD = 4 << 20  # blocks from this size on are mapped on their own and unmapped when freed
# (below it the loader's 1 MB reads come from the heap: mapping each would cost a page fault per 4 KiB)


def _glibc(name: str) -> Any:
    """glibc's function ``name`` (arguments and result C ints), or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = getattr(ctypes.CDLL(None), name)  # the process's own symbols: its C library, found without a search
    except (OSError, AttributeError):  # musl and others: no mallopt or malloc_trim
        return None
    function.restype = ctypes.c_int
    return function


def steady_heap(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at ``threshold`` bytes for this process; False where there is no glibc (the
    heap is left as it is)."""
    mallopt = _glibc("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, threshold))


def trim_heap() -> bool:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``), before a burst of big buffers
    (the index write after a load) would add to them; False where there is no glibc or nothing went back."""
    trim = _glibc("malloc_trim")
    if trim is None:
        return False
    trim.argtypes = [ctypes.c_size_t]
    return bool(trim(0))
