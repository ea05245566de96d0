"""Architecture boundaries: ``core`` never imports Textual, and the TUI never writes a session log."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import core

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_core_module_imports_textual_or_tui() -> None:
    offenders = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        for name in _imports(path):
            if name.split(".")[0] in {"textual", "tui", "rich"}:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offenders, offenders


def test_importing_every_core_module_loads_no_textual() -> None:
    modules = [m.name for m in pkgutil.walk_packages(core.__path__, "core.")]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n    importlib.import_module(m)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('textual', 'tui'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "", f"core pulled in: {out.stdout.strip()}"


def test_tui_never_uses_the_session_writer() -> None:
    tui = ROOT / "tui"
    offenders = [
        str(p.relative_to(ROOT))
        for p in tui.rglob("*.py")
        if any(n.startswith("core.log.writer") for n in _imports(p))
    ]
    assert not offenders, offenders


def _module_level_imports(path: Path, known: set[str]) -> set[str]:
    """Core modules a module imports at load time or for type checking (function-level imports excluded)."""
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If | ast.Try):
                visit(node.body)
                visit(node.orelse)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found & known


def test_core_modules_import_each_other_without_cycles() -> None:
    paths = {}
    for path in (ROOT / "core").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {name: _module_level_imports(path, set(paths)) - {name} for name, path in paths.items()}
    cycles = []
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    stack: list[str] = []

    def walk(name: str) -> None:
        state[name] = 1
        stack.append(name)
        for dep in sorted(graph[name]):
            if state.get(dep) == 1:
                cycles.append(" -> ".join([*stack[stack.index(dep) :], dep]))
            elif dep not in state:
                walk(dep)
        stack.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name)
    assert not cycles, cycles
