"""Which of tapedeck's modules a test reaches, read from its source: the seed-rule audit's check that a cited
test exercises the rule's module.

A test reaches a module when its body (with the fixtures it takes and the helpers it calls, in its own file or in
the test-support modules it imports, followed to any depth) names something imported from that module, or runs a
``tapedeck`` command (``main(["status", …])``) that the module serves. The reading is static, so it can only say
that a test touches the module, not that it fails when the rule breaks: a test that touches none of the rule's
modules cannot be evidence for it.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from core.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ROOT / "tests" / "policies"

# Where the rules of each section of the extraction live (a command that serves them counts). A test that runs
# the host (``HOST``) reaches every policy through it.
SECTION_MODULES: dict[str, tuple[str, ...]] = {
    "0.1": ("core.read.session", "core.log"),
    "1.a": ("core.policies.slice", "core.policies.recall"),
    "1.b": ("core.policies.slice", "core.policies.slice_config"),
    "1.c": ("core.policies.slice",),
    "1.d": ("core.policies.read_index", "core.policies.slice"),
    "1.e": ("core.policies.recall", "core.cli.slice"),
    "1.f": ("core.policies.slice",),
    "1.g": ("core.policies.fold", "core.policies.digest", "core.policies.spill", "core.cli.fold"),
    "1.h": ("core.policies.slice_config",),
    "1.i": ("core.policies.slice", "core.policies.fold", "core.policies.recall"),
    "2.a": ("core.policies.rewind", "core.policies.checkpoint"),
    "2.b": ("core.policies.rewind",),
    "2.c": ("core.policies.report", "core.host.report_client"),
    "2.d": ("core.policies.rewind",),
    "2.e": ("core.policies.rewind_config",),
    "2.g": ("core.policies.checkpoint",),
    "3.a": ("core.policies.prolong",),
    "3.b": ("core.policies.prolong", "core.cli.status"),
    "3.c": ("core.policies.prolong_config",),
    "4.a": ("core.policies.adaptive",),
    "4.b": ("core.policies.adaptive",),
    "4.c": ("core.policies.risk",),
    "4.d": ("core.policies.adaptive", "core.policies.adaptive_config", "core.policies.phase_notes"),
    "4.e": ("core.policies.pruner",),
    "4.f": ("core.policies.adaptive_config",),
    "4.g": ("core.policies.adaptive",),
}
HOST = ("core.host.loop", "core.host.hooks")


def _source_file(module: str, near: Path) -> Path | None:
    """The file of a test-support module (``test_x_support`` beside the test, or ``tests.…``); None otherwise."""
    if module.startswith("tests."):
        path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
    elif module.startswith("test_") or module in ("seed_rules", "seed_reach"):
        path = near.parent / f"{module}.py"
    else:
        return None
    return path if path.is_file() else None


@functools.cache
def _parsed(path: Path) -> tuple[dict[str, str], dict[str, ast.AST]]:
    """A file's imported names (name -> module) and its top-level functions and classes."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                # ``from core.policies import recall`` binds a module; ``from core.policies.recall import x`` a name.
                whole = f"{node.module}.{alias.name}"
                imports[alias.asname or alias.name] = whole if _is_module(whole) else node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                imports[alias.asname or alias.name.split(".")[0]] = alias.name
    defs: dict[str, ast.AST] = {
        n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    for n in tree.body:  # module-level names (an alias such as ``Run = BackoffRun``, a shared config)
        if isinstance(n, ast.Assign | ast.AnnAssign):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            defs.update({t.id: n for t in targets if isinstance(t, ast.Name) and t.id not in defs})
    return imports, defs


def _is_module(dotted: str) -> bool:
    base = ROOT.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _commands(node: ast.AST) -> set[str]:
    """The modules of the ``tapedeck`` commands a ``main([...])`` call in ``node`` runs."""
    found = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in ("main", "_cli", "_run"):
            first = call.args[0] if call.args else None
            if isinstance(first, ast.List) and first.elts and isinstance(first.elts[0], ast.Constant):
                command = COMMANDS.get(str(first.elts[0].value))
                if command is not None:
                    found.add(command.module)
    return found


def reached(path: Path, name: str) -> set[str]:
    """Every module of ``core`` the test (or helper) ``name`` in ``path`` reaches."""
    modules: set[str] = set()
    seen: set[tuple[Path, str]] = set()
    stack = [(path, name)]
    while stack:
        where, what = stack.pop()
        if (where, what) in seen:
            continue
        seen.add((where, what))
        imports, defs = _parsed(where)
        node = defs.get(what)
        if node is None:
            continue
        modules |= _commands(node)
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names |= {a.arg for a in node.args.args}  # fixtures defined beside the test
        for used in names:
            if used in defs:
                stack.append((where, used))
            module = imports.get(used)
            if module is None:
                continue
            support = _source_file(module, where)
            if support is not None:
                stack.append((support, used))
            elif module.startswith("core"):
                modules.add(module)
    return modules


def exercises(path: Path, name: str, section: str) -> bool:
    """Whether the test reaches a module of the extraction's ``section``, or the host that applies them all."""
    wanted = (*SECTION_MODULES[section], *HOST)
    return any(m == w or m.startswith(f"{w}.") for m in reached(path, name) for w in wanted)
