"""GC control around bulk loads.

Decoding a log creates millions of small containers that all stay alive, so every cyclic-GC pass during the
load walks a heap that only grows and frees nothing: on event-dense logs that was 30-46% of a load. A bulk load
runs with the collector off.

By default it freezes nothing afterwards: a frozen object is never collected, so garbage cycles alive or pending
at the end of a load (a session dropped later, with the store that holds its log file open) leaked one file
handle per command in a long-running process. The commands read with ``retain=False``, whose projections are
small. The TUI keeps what it loaded for its whole run and asks for the freeze (``freeze=True``): no collector
pass ever walks its projection, and its ``FollowGC`` thaws and collects when a reload replaces it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused(freeze: bool = False) -> Iterator[None]:
    """Disable the cyclic GC for the block; with ``freeze`` move every live object to the permanent generation
    afterwards. Nesting is safe: only the block that disabled the collector re-enables it (and freezes)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if freeze:
                gc.freeze()
            gc.enable()
