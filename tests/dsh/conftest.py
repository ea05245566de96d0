"""Fixtures for the tests that run the real DSH: the cached install (or a skip), the model, a shared ``dsh web``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dsh.harness import DshHome, DshInstall, DshWeb, ScriptedModel, find_dsh, leaked, wait_for


@pytest.fixture(scope="session")
def dsh() -> DshInstall:
    """The cached DSH install; the test is skipped with one line naming what is missing."""
    found = find_dsh()
    if isinstance(found, str):
        pytest.skip(found)
    return found


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    """The scripted loopback model, shared by a module's tests."""
    with ScriptedModel() as server:
        yield server


@pytest.fixture
def world(dsh: DshInstall, model: ScriptedModel, tmp_path: Path) -> DshHome:
    """A fresh DSH home, workspace and session root with the bridge in the ``--patch`` overlay."""
    return DshHome(dsh, tmp_path, model.url)


@pytest.fixture(scope="module")
def shared_web(
    dsh: DshInstall, model: ScriptedModel, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[DshHome, DshWeb]]:
    """One ``dsh web`` with the bridge, shared by the op tests of a module (each test makes its own session)."""
    world = DshHome(dsh, tmp_path_factory.mktemp("dsh-shared"), model.url)
    with DshWeb(world) as web:
        yield world, web


@pytest.fixture(scope="session", autouse=True)
def _no_dsh_left_running() -> Iterator[None]:
    """Every DSH process the tests started is gone, with its whole process group, when they end."""
    yield
    try:
        wait_for(lambda: not leaked(), 60, "the DSH processes to exit")
    except TimeoutError:
        pytest.fail(f"DSH processes left running: {leaked()}")
