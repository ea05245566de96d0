"""Every refusal of a ``--config`` file names the file first, the rewind tool's name taken by another tool as much
as an unknown key or a value out of range: the host's check of ``rewind.toolName`` said only the key, and a run of
several config files left the operator to guess which one held it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from core.cli import main


def run_host(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    """``tapedeck run`` of a scripted one-reply model in ``tmp_path`` with ``extra`` arguments: its exit code and
    what it wrote to stderr."""
    script = tmp_path / "play.json"
    script.write_bytes(orjson.dumps({"responses": [{"text": "done"}]}))
    (tmp_path / "ws").mkdir(exist_ok=True)
    capsys.readouterr()
    code = main(["run", "--provider", f"scripted:{script}", "--workspace", str(tmp_path / "ws"),
                 "--sessions-root", str(tmp_path / "root"), *extra])  # fmt: skip
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ('[rewind]\ntoolName = "bash"\n', 'rewind.toolName "bash" is the name of another tool'),
        ("[slice.history]\nkeepRecentTurns = -3\n", "slice.history.keepRecentTurns must be from 0 to 10,000 (got -3)"),
    ],
)
def test_a_refused_config_file_is_named_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], toml: str, said: str
) -> None:
    config = tmp_path / "cfg.toml"
    config.write_text(toml)
    code, err = run_host(tmp_path, capsys, "--config", str(config), "task")
    assert code == 2 and err.startswith(f"tapedeck: {config}: {said}"), err
    assert not (tmp_path / "root").exists() or not list((tmp_path / "root").rglob("session.jsonl"))


def test_a_resume_with_a_refused_rewind_tool_name_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_host(tmp_path, capsys, "--session-id", "s1", "task")
    assert code == 0, err
    (log,) = (tmp_path / "root").rglob("session.jsonl")
    config = tmp_path / "cfg.toml"
    config.write_text('[rewind]\ntoolName = "read_file"\n')
    code, err = run_host(tmp_path, capsys, "--config", str(config), "--resume", str(log))
    assert code == 2 and err.startswith(f'tapedeck: {config}: rewind.toolName "read_file" is the name of'), (
        err
    )
