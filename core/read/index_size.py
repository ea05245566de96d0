"""When a log gets a persistent index (``core.read.index``): its size policy, apart from the index itself so that a
read that uses no index loads none of it (hashlib, zstandard, the projection state's codec)."""

from __future__ import annotations

import os

MIN_LOG_BYTES = 1 << 20  # smaller logs read fast enough without one (``TAPEDECK_INDEX_MIN_BYTES`` overrides)
REWRITE_SHARE = 0.05  # a used index is written again once the log grew by this share of what it indexed …
REWRITE_BYTES = 8 << 20  # … or by this many bytes


def min_log_bytes() -> int:
    """The size from which logs are indexed."""
    try:
        return max(0, int(os.environ.get("TAPEDECK_INDEX_MIN_BYTES", MIN_LOG_BYTES)))
    except ValueError:
        return MIN_LOG_BYTES


def worth_writing(size: int, indexed: int) -> bool:
    """Whether a pass that read ``size`` bytes of a log, ``indexed`` of them from its index, writes it again."""
    if size < min_log_bytes():
        return False
    grown = size - indexed
    return not indexed or grown >= REWRITE_BYTES or grown >= indexed * REWRITE_SHARE
