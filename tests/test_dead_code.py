"""No function or class of ``core`` or ``tui`` is left that nothing uses: each top-level one is named in its own
module, imported by name from it somewhere (the product, tests, benches, tools), or read as an attribute somewhere.
The check leans towards "used" (any ``x.name`` anywhere counts), so what it reports is dead for certain."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READERS = ("core", "tui", "tests", "bench", "tools")


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _unused(sources: dict[Path, str], checked: tuple[str, ...]) -> list[str]:
    """``path:line name`` of each top-level function or class of a module under ``checked`` that nothing uses."""
    trees = {path: ast.parse(text) for path, text in sources.items()}
    imported: set[tuple[str, str]] = set()
    attributes: set[str] = set()
    for path, tree in trees.items():
        module = _module(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                package = module.split(".")[: len(module.split(".")) - node.level + (path.name == "__init__.py")]
                source = ".".join(package + [node.module] if node.module else package) if node.level else node.module
                imported.update((source or "", alias.name) for alias in node.names)
            elif isinstance(node, ast.Attribute):
                attributes.add(node.attr)
    unused = []
    for path, tree in trees.items():
        if path.relative_to(ROOT).parts[0] not in checked:
            continue
        module = _module(path)
        named = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or node.name.startswith("__"):
                continue
            if node.name not in named and node.name not in attributes and (module, node.name) not in imported:
                unused.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    return unused


def test_the_check_tells_a_used_function_from_an_unused_one() -> None:
    sources = {
        ROOT / "core" / "m.py": "def used_here():\n    pass\n\nx = used_here()\n\ndef imported():\n    pass\n\n"
        "def read_as_attribute():\n    pass\n\ndef dead():\n    pass\n",
        ROOT / "tests" / "t.py": "from core.m import imported\nimport core.m\ncore.m.read_as_attribute()\n",
    }
    assert _unused(sources, ("core",)) == ["core/m.py:12 dead"]


def test_no_function_or_class_of_core_or_tui_is_unused() -> None:
    sources = {path: path.read_text(encoding="utf-8") for top in READERS for path in (ROOT / top).rglob("*.py")}
    assert _unused(sources, ("core", "tui")) == []
