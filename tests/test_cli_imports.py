"""The CLI imports only what the command being run uses: no Textual outside ``watch``/``demo``, no policies for
the read commands, each in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = "tests/fixtures/dsh/tool-call-turn.session.jsonl"


def modules_after(argv: list[str], env: dict[str, str] | None = None) -> set[str]:
    """Every module loaded by running the console script with ``argv`` in a new interpreter (``env`` added to its
    environment)."""
    code = (
        "import contextlib, io, sys\n"
        "from tui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('\\n'.join(sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={**os.environ, **(env or {})})  # fmt: skip
    return set(out.stdout.split())


def _top(modules: set[str], prefix: str) -> set[str]:
    return {m for m in modules if m == prefix or m.startswith(prefix + ".")}


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["inspect", FIXTURE],
        ["surface", FIXTURE, "--json"],
        ["events", FIXTURE, "--type", "tool/result"],
    ],
    ids=["help", "inspect", "surface", "events"],
)
def test_read_commands_load_no_textual_host_or_policy_module(argv: list[str]) -> None:
    modules = modules_after(argv)
    loaded = {p: _top(modules, p) for p in ("textual", "rich", "tui.app", "core.policies", "core.host", "openai")}
    assert not any(loaded.values()), {p: sorted(m) for p, m in loaded.items() if m}


@pytest.mark.parametrize("argv", [["sessions", "tests/fixtures"], ["alerts", FIXTURE, "--json"]], ids=["sessions", "alerts"])
def test_the_alert_rules_load_no_textual_model_client_ssh_or_other_config_section(argv: list[str]) -> None:
    """``sessions`` and ``alerts`` run the alert rules: without a config file only its ``model`` and ``alerts``
    sections are validated (a file's are all), and the TUI, the model client, the host's and the policies' config
    sections and, for local logs, the SSH stack (asyncio and asyncssh: a sixth of the start-up) stay out. Of Rich,
    ``sessions`` measures its cells with ``rich.cells`` alone: no renderer."""
    modules = modules_after(argv)
    loaded = {p: _top(modules, p) for p in ("textual", "rich.console", "rich.text", "tui.app", "openai", "asyncio",
                                            "asyncssh", "core.policies", "core.host")}  # fmt: skip
    assert not any(loaded.values()), {p: sorted(m) for p, m in loaded.items() if m}


@pytest.mark.parametrize(
    "command",
    ["fold", "status", "route", "seal", "recall", "expand", "run", "repair", "control", "request", "diff", "cost",
     "watch", "demo", "fleet"],  # fmt: skip
)
def test_other_commands_load_no_textual_until_the_tui_runs(command: str) -> None:
    modules = modules_after([command, "--help"])
    assert not _top(modules, "textual"), sorted(_top(modules, "textual"))[:5]


def test_route_loads_the_adaptive_policy_and_the_config_schemas_only() -> None:
    policies = _top(modules_after(["route", "fix the parser"]), "core.policies")
    planners = {m for m in policies if not m.endswith("_config")}  # config sections validate a config file
    assert planners == {"core.policies", "core.policies.adaptive", "core.policies.pruner", "core.policies.risk"}


@pytest.mark.parametrize("argv", [["request", FIXTURE, "--all"], ["diff", FIXTURE, "--turn", "1", "--step", "2"],
                                  ["cost", FIXTURE]], ids=["request", "diff", "cost"])  # fmt: skip
def test_rebuilding_requests_loads_no_model_client(argv: list[str]) -> None:
    """A request is rebuilt with the host's body builder, never with the openai client (~30 MB, over a second)."""
    modules = modules_after(argv)
    assert "core.shared.wire" in modules
    assert not _top(modules, "openai"), sorted(_top(modules, "openai"))[:5]


def test_cost_on_a_dsh_log_loads_no_host_tool_or_policy_planner() -> None:
    """``cost`` on a DSH log reads the config's model and alerts sections (their schemas) and rebuilds DSH
    requests: the workspace tools, the phase notes of our host's requests, the planners, the rewind plugin, the
    other config sections, the TOML parser (without a config file) and the persistent index (its pass reads the
    log in full) stay out (their imports were most of the command's start-up)."""
    modules = modules_after(["cost", FIXTURE, "--json"])
    assert not _top(modules, "core.policies"), sorted(_top(modules, "core.policies"))
    assert not _top(modules, "core.host"), sorted(_top(modules, "core.host"))
    assert {"core.shared.model_specs", "core.alerts.config"} <= modules
    assert "core.read.index" not in modules and "hashlib" not in modules and "tomllib" not in modules


@pytest.mark.parametrize("argv", [["inspect", FIXTURE, "--json"], ["surface", FIXTURE],
                                  ["events", FIXTURE, "--type", "tool/result"]], ids=["inspect", "surface", "events"])  # fmt: skip
def test_a_small_log_is_read_without_the_index_the_control_inbox_or_the_config(argv: list[str]) -> None:
    """A log under ``TAPEDECK_INDEX_MIN_BYTES`` has no index to look up, and a host state is read without the
    control inbox (and so without the config sections and TOML): none of their modules is imported."""
    modules = modules_after(argv)
    for name in ("core.read.index", "hashlib", "zstandard", "core.control.inbox", "core.control.config", "tomllib"):
        assert name not in modules, name


def test_writing_a_logs_index_loads_no_tempfile(tmp_path: Path) -> None:
    """A first read that writes the log's index makes its file without ``tempfile``, which with ``random`` was
    6 M instructions of that read (``shutil``, which it also imports, argparse loads anyway)."""
    env = {"TAPEDECK_CACHE_DIR": str(tmp_path), "TAPEDECK_INDEX_MIN_BYTES": "0"}
    modules = modules_after(["inspect", FIXTURE, "--json"], env)
    assert "core.read.index" in modules and list((tmp_path / "index").glob("*.idx"))  # the index was written
    for name in ("tempfile", "random"):
        assert name not in modules, name


@pytest.mark.parametrize(
    ("argv", "unused"),
    [
        (["inspect", FIXTURE, "--json"], ("core.read.type_select",)),
        (["surface", FIXTURE, "--json"], ("core.read.type_select",)),
        (["cost", FIXTURE, "--json"],
         ("core.read.type_select", "core.read.timetravel", "core.shared.chat", "core.read.summary")),
    ],
    ids=["inspect", "surface", "cost"],
)
def test_a_reading_command_imports_no_module_it_never_calls(argv: list[str], unused: tuple[str, ...]) -> None:
    """What a command imports, each run pays for (the module, its dataclasses' methods compiled): ``decimal``
    (``js_number``'s digits), the sessions root's layout note (``sessions``, ``alerts``), the event list's rows
    (the TUI's and the exports'), a zstd log's frames (on a raw log), the ``--type`` parser (``events``), the
    request-at-a-moment view (the TUI's) and the model client's request and answer (our host's requests) stay out
    of the commands that never call them."""
    modules = modules_after(argv)
    for name in ("decimal", "core.log.sessions", "core.read.rows", "core.log.frames", *unused):
        assert name not in modules, name


@pytest.mark.parametrize(
    "argv",
    [["inspect", FIXTURE, "--json"], ["surface", FIXTURE, "--json"], ["events", FIXTURE, "--type", "tool/result"],
     ["cost", FIXTURE, "--json"]],  # fmt: skip
    ids=["inspect", "surface", "events", "cost"],
)
def test_a_reading_commands_dataclasses_compile_no_repr_or_eq(argv: list[str]) -> None:
    """Every dataclass of ours a reading command loads is a ``core.shared.records.record``: its ``__repr__``,
    ``__eq__`` and ``__hash__`` are shared, not compiled from source for it at each start (``dataclasses`` does
    that per class and method: a tenth of ``cost --json``'s start-up on a small log)."""
    code = (
        "import contextlib, io, sys\n"
        "from tui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({argv!r})\n"
        "for name, module in list(sys.modules.items()):\n"
        "    if name.split('.')[0] in ('core', 'tui'):\n"
        "        for cls in vars(module).values():\n"
        "            params = getattr(cls, '__dict__', {}).get('__dataclass_params__')\n"
        "            if params is not None and cls.__module__ == name and (params.repr or params.eq):\n"
        "                print(f'{name}.{cls.__qualname__}')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split() == []
