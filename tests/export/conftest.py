"""Fixtures of the export tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

LOG = FIXTURES / "tool-call-turn.session.jsonl"


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the tool-call fixture in a session folder of its own (its notes sidecar goes under
    ``TAPEDECK_HOME``, set inside ``tmp_path``)."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    target = tmp_path / "s" / "session.jsonl"
    target.parent.mkdir()
    shutil.copy(LOG, target)
    return target
