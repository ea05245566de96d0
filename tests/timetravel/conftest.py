"""Logs the time-travel tests share: every real DSH fixture, generated DSH logs and one demo host session."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.gen_session import generate
from core.control.config import load_config
from core.host.demo_scenario import TASKS, write_script
from core.host.demo_workspace import create_demo_workspace
from core.host.loop import AgentHost, HostOptions
from core.host.providers import make_provider
from tests.conftest import FIXTURES

FIXTURE_LOGS = sorted(p for p in FIXTURES.iterdir() if ".jsonl" in p.name)


@pytest.fixture(scope="session")
def generated_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Small synthetic DSH logs with compactions, prunes, retries and steering (raw and zstd)."""
    root = tmp_path_factory.mktemp("generated")
    logs = []
    for seed, profile, size, zstd in ((3, "short-turns", 3_000_000, False), (3, "mixed", 3_000_000, True)):
        path = root / f"{profile}-{seed}.jsonl{'.zstd' if zstd else ''}"
        generate(path, size, seed=seed, profile=profile, zstd=zstd)
        logs.append(path)
    return logs


@pytest.fixture(scope="session")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted demo run by our host: seals, folds, a prune, a rewind and phase notes."""
    root = tmp_path_factory.mktemp("demo")
    workspace = create_demo_workspace(root / "ws")
    model = make_provider(f"scripted:{write_script(root / 'script.json')}")
    host = AgentHost.create(root / "sessions", model, load_config(None), HostOptions(workspace=workspace),
                            tasks=TASKS)  # fmt: skip
    host.run()
    host.close()
    return host.writer.path
