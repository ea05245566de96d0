"""Typed reads of decoded JSON values, where a wrong type reads as absent."""

from __future__ import annotations

from typing import Any


def int_or_none(value: Any) -> int | None:
    """``value`` when it is an integer (a bool is not one), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def str_or_none(value: Any) -> str | None:
    """``value`` when it is a string, else None."""
    return value if isinstance(value, str) else None
