"""Shared test fixtures: where the real DSH logs are."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# ``shared/`` sits beside the checkout (``../shared``); TAPEDECK_SHARED overrides that.
SHARED = Path(os.environ.get("TAPEDECK_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")
FIXTURES = SHARED / "fixtures" / "dsh"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The directory of real DSH session logs shipped in ``shared/fixtures/dsh``."""
    assert FIXTURES.is_dir(), f"DSH fixtures not found at {FIXTURES} (set TAPEDECK_SHARED)"
    return FIXTURES
