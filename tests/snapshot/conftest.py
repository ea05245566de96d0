"""Every snapshot renders in the same environment: outside tmux, without animations."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fixed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
