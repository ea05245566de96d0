"""GC control around bulk loads.

Decoding a log creates millions of small containers that all stay alive, so every cyclic-GC pass during the
load walks a heap that only grows and frees nothing: on event-dense logs that was 30-46% of a load. A bulk load
runs with the collector off.

It freezes nothing afterwards: a frozen object is never collected, so garbage cycles alive or pending at the end
of a load (a session dropped later, with the store that holds its log file open) leaked one file handle per
command in a long-running process. A caller that keeps a big projection for long freezes it itself (the TUI's
``FollowGC``); the commands read with ``retain=False``, whose projections are small.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic GC for the block. Nesting is safe: only the block that disabled it re-enables it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
