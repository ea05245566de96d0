"""Every public function of ``core`` has a docstring and a fully type-hinted signature.

Public means: a function or method whose name does not start with ``_``, defined at a module's top level or in a
public class (nested ones included), in a module whose path has no part starting with ``_`` (``__init__`` aside).
An ``@overload`` stub is left out; the implementation it stands for is checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _is_overload(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        isinstance(d, ast.Name) and d.id == "overload" or isinstance(d, ast.Attribute) and d.attr == "overload"
        for d in node.decorator_list
    )


def _problems(source: str, where: str) -> list[str]:
    """What is missing on the public functions of one module's source, one line per function."""
    found: list[str] = []

    def visit(body: list[ast.stmt], prefix: str, in_class: bool) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                visit(node.body, f"{prefix}{node.name}.", True)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.name.startswith("_") or _is_overload(node):
                    continue
                args = node.args
                params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                if in_class and params and params[0].arg in ("self", "cls"):
                    params = params[1:]
                params += [p for p in (args.vararg, args.kwarg) if p is not None]
                missing = [f"no hint for {p.arg}" for p in params if p.annotation is None]
                if node.returns is None:
                    missing.append("no return hint")
                if ast.get_docstring(node) is None:
                    missing.append("no docstring")
                if missing:
                    found.append(f"{where}:{node.lineno} {prefix}{node.name}: {', '.join(missing)}")

    visit(ast.parse(source).body, "", False)
    return found


def test_the_check_finds_what_is_missing() -> None:
    source = (
        "def ok(a: int) -> int:\n    '''Doc.'''\n    return a\n"
        "def bare(a):\n    return a\n"
        "def _private(a):\n    return a\n"
        "class Box:\n"
        "    def method(self, b: int) -> None:\n        pass\n"
        "    def _hidden(self, b):\n        pass\n"
        "    class Inner:\n"
        "        def deep(self, *rest: int, **more) -> None:\n            '''Doc.'''\n"
        "class _Private:\n    def method(self, b):\n        pass\n"
    )
    assert _problems(source, "m.py") == [
        "m.py:4 bare: no hint for a, no return hint, no docstring",
        "m.py:9 Box.method: no docstring",
        "m.py:14 Box.Inner.deep: no hint for more",
    ]


def test_every_public_function_of_core_is_hinted_and_documented() -> None:
    problems: list[str] = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if any(part.startswith("_") and part != "__init__.py" for part in parts):
            continue
        problems += _problems(path.read_text(encoding="utf-8"), "/".join(parts))
    assert not problems, "\n".join(problems)
