"""Architecture boundaries: ``core`` never imports Textual, the TUI never writes a session log, each layer of
``core`` imports only the layers beneath it, no import cycle (lazy imports counted), and no module only tests use."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
import tomllib
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
    """Of Rich, a direct dependency, ``core`` takes only ``rich.cells``: the rule the terminal renderer measures
    a character's cells by, so that ``sessions`` lines a title up as the TUI's tables draw it; never a renderer."""
    offenders = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        for name in _imports(path):
            if name.split(".")[0] in {"textual", "tui"} or name.split(".")[0] == "rich" and name != "rich.cells":
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


def _modules() -> dict[str, Path]:
    """Every module of ``core`` and ``tui`` by dotted name (a package by its own name)."""
    found = {}
    for package in ("core", "tui"):
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _all_imports(path: Path) -> set[str]:
    """The modules of ``core`` and ``tui`` a module imports anywhere: at load time, for type checking, or lazily
    inside a function (``from a import b`` counts ``a.b`` when that is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found & set(MODULES)


GRAPH = {name: _all_imports(path) - {name} for name, path in MODULES.items()}

# The layers of ``core`` from the bottom up, and what each may import besides itself (``core`` alone gives the
# version). The README's development section draws the same map.
LAYERS: dict[str, set[str]] = {
    "core.shared": set(),  # the leaves
    "core.log": {"core.shared"},
    "core.read": {"core.shared", "core.log"},
    "core.control": {"core.shared", "core.log"},
    "core.policies": {"core.shared", "core.log", "core.read"},
    "core.rebuild": {"core.shared", "core.log", "core.read", "core.policies"},
    "core.alerts": {"core.shared", "core.log", "core.read", "core.control", "core.policies", "core.rebuild"},
    "core.export": {"core.shared", "core.log", "core.read", "core.control", "core.policies", "core.rebuild"},
    "core.remote": {"core.shared", "core.log", "core.control"},
    "core.fleet": {"core.shared", "core.log", "core.read", "core.control", "core.policies", "core.rebuild", "core.alerts", "core.remote"},
    "core.host": {"core.shared", "core.log", "core.read", "core.control", "core.policies", "core.alerts", "core.host"},
}
# The DSH bridge's modules each sit in the layer of what they serve: its op vocabulary beside the event vocabulary
# in the log layer; its files, and its installation into a DSH home, in the control layer; the marks read from its
# td command pairs and the live settings its log shows on the read side.
BRIDGE_LAYERS = {
    "core.bridge.ops": "core.log",
    "core.bridge.files": "core.control",
    "core.bridge.install": "core.control",
    "core.bridge.commands": "core.read",
    "core.bridge.settings": "core.read",
}
READ_SIDE = ("core.shared", "core.log", "core.read", "core.rebuild")


def _layer(name: str) -> str | None:
    if name in BRIDGE_LAYERS:
        return BRIDGE_LAYERS[name]
    return next((layer for layer in LAYERS if name == layer or name.startswith(layer + ".")), None)


def test_every_module_of_core_is_in_a_layer() -> None:
    """The command line may import any of ``core``; every other module has a layer whose rules it is held to."""
    unplaced = [name for name in sorted(MODULES) if name.startswith("core.") and not name.startswith("core.cli")
                and name != "core.bridge" and _layer(name) is None]  # fmt: skip
    assert unplaced == []


def test_each_layer_imports_only_the_layers_beneath_it() -> None:
    offenders = []
    for name, deps in sorted(GRAPH.items()):
        layer = _layer(name)
        if layer is None:
            continue
        allowed = LAYERS[layer] | {layer, "core"}
        offenders += [f"{name} imports {dep}" for dep in sorted(deps) if dep != "core" and _layer(dep) not in allowed]
    assert not offenders, offenders


def test_the_read_side_never_imports_the_host_and_policies_never_the_cli_or_the_host() -> None:
    def reaches(layers: tuple[str, ...], targets: tuple[str, ...]) -> list[str]:
        return [
            f"{name} imports {dep}"
            for name, deps in sorted(GRAPH.items())
            if _layer(name) in layers
            for dep in sorted(deps)
            if dep.startswith(targets)
        ]

    assert reaches(READ_SIDE, ("core.host",)) == []
    assert reaches(("core.policies",), ("core.host", "core.cli")) == []


def test_modules_import_each_other_without_cycles_lazy_imports_counted() -> None:
    cycles = []
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    stack: list[str] = []

    def walk(name: str) -> None:
        state[name] = 1
        stack.append(name)
        for dep in sorted(GRAPH[name]):
            if state.get(dep) == 1:
                cycles.append(" -> ".join([*stack[stack.index(dep) :], dep]))
            elif dep not in state:
                walk(dep)
        stack.pop()
        state[name] = 2

    for name in sorted(GRAPH):
        if name not in state:
            walk(name)
    assert not cycles, cycles


def test_every_module_serves_the_product_not_only_tests() -> None:
    """Every module of ``core``/``tui`` is reached from the ``tapedeck`` console script (``tui.cli``, which runs
    ``core.cli``), ``python -m core.cli`` or the reaper script (run by its path): through imports, lazy ones
    included, or by being named in a table of modules to load (``core.cli.COMMANDS``, config sections, the app's
    screens). A module imported only by tests, or only by modules that only tests reach, fails."""
    edges: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        named = {
            module
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            for module in (node.value, f"tui.screens.{node.value}")
            if module in MODULES
        }
        parts = name.split(".")
        packages = {".".join(parts[:i]) for i in range(1, len(parts))}  # importing a.b.c runs a and a.b
        edges[name] = GRAPH[name] | named | (packages & set(MODULES))
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    entries = [*(target.split(":")[0] for target in scripts.values()), "core.cli.__main__", "core.host.tools.reaper"]
    reached: set[str] = set()
    while entries:
        name = entries.pop()
        if name not in reached:
            reached.add(name)
            entries.extend(edges[name])
    assert sorted(set(MODULES) - reached) == []


def _attributes_read(path: Path, owners: set[str]) -> set[str]:
    """The attributes a module reads off ``self.<owner>`` or ``<owner>`` (a local bound to it), for each owner."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute):
            continue
        base = node.value
        if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id in ("self", "host"):
            base_name = base.attr
        elif isinstance(base, ast.Name):
            base_name = base.id
        else:
            continue
        if base_name in owners:
            found.add(node.attr)
    return found


def test_the_host_and_its_policy_hooks_and_operator_meet_through_narrow_interfaces() -> None:
    """``PolicyHooks`` and ``Operator`` use of the host only what ``HostPort`` declares (append, session, say,
    lock); the host (and the ``run`` command) use of them only methods and properties, never their state."""
    import inspect

    from core.host.hooks import PolicyHooks
    from core.host.operator import Operator
    from core.host.port import HostPort

    port = {name for name in dir(HostPort) if not name.startswith("_")} | set(HostPort.__annotations__)
    for module in ("hooks", "operator"):
        used = _attributes_read(ROOT / "core" / "host" / f"{module}.py", {"host"})
        assert used <= port, f"core/host/{module}.py reads {sorted(used - port)} of the host beyond HostPort"
    for path in (ROOT / "core" / "host" / "loop.py", ROOT / "core" / "cli" / "host.py"):
        for owner, cls in (("operator", Operator), ("hooks", PolicyHooks)):
            for name in sorted(_attributes_read(path, {owner})):
                member = inspect.getattr_static(cls, name, None)
                assert isinstance(member, (property, type(lambda: None))), (
                    f"{path.relative_to(ROOT)} reads {owner}.{name}, which is not a method or property of {cls.__name__}"
                )
