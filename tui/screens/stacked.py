"""Screens answered before they mounted: a key typed ahead (over a slow SSH link keys come in bursts) may dismiss a
screen whose start-up has not run yet. That start-up then runs on a screen no longer shown, whose widgets may never
have been made, and must not reach for them."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from textual.screen import Screen

S = TypeVar("S", bound=Screen[Any])


def while_stacked(handler: Callable[[S], None]) -> Callable[[S], None]:
    """``handler`` (a screen's ``on_mount``) run only while its screen is still on the app's stack."""

    @functools.wraps(handler)
    def run(screen: S) -> None:
        if screen in screen.app.screen_stack:
            handler(screen)

    return run
