"""Shared test fixtures: where the real DSH logs are."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

# Real DSH session logs, copied into the repository with their license and provenance (README.md there).
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "dsh"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The directory of real DSH session logs in ``tests/fixtures/dsh``."""
    assert FIXTURES.is_dir(), f"DSH fixtures missing from the checkout: {FIXTURES}"
    return FIXTURES


@pytest.fixture(autouse=True)
def _simulated_hosts_exit() -> Iterator[None]:
    """Logs the TUI tests write get a live (simulated) host for the test's duration only."""
    yield
    from tests.tui.logs import release_hosts

    release_hosts()
