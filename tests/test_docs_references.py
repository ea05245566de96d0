"""What the README and docs/ name in the code is there: each file path, dotted name and import they cite, and each
function docs/contracts.md's code blocks call. A rename that leaves a doc naming the old name fails here."""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "docs/cli.md", "docs/contracts.md"]


def _text(doc: str) -> str:
    return (ROOT / doc).read_text(encoding="utf-8")


@cache
def _defined_names() -> frozenset[str]:
    """Every function, method and class name defined anywhere in ``core`` and ``tui``."""
    names: set[str] = set()
    for package in ("core", "tui"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.add(node.name)
    return frozenset(names)


def _resolves(dotted: str) -> bool:
    """Whether ``core.a.b.Name.attr`` names a module, or an attribute reached from the longest importable module."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:end]))
        except ImportError:
            continue
        for name in parts[end:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


@pytest.mark.parametrize("doc", DOCS)
def test_every_cited_path_exists(doc: str) -> None:
    cited = set(re.findall(r"`((?:core|tui|tests|bench|tools|docs)/[^`\s<>{}*:]+)", _text(doc)))
    missing = sorted(path for path in cited if not (ROOT / path.rstrip("/")).exists())
    assert not missing, f"{doc} names files that are not there: {missing}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_dotted_name_and_import_resolves(doc: str) -> None:
    text = _text(doc)
    dotted = set(re.findall(r"`(core(?:\.\w+)+)", text))
    for module, names in re.findall(r"^from (core[\w.]*) import (.+)$", text, re.M):
        dotted.update(f"{module}.{name.strip()}" for name in names.split(","))
    missing = sorted(name for name in dotted if not _resolves(name))
    assert not missing, f"{doc} names what the code does not have: {missing}"


def test_every_function_the_contracts_call_is_defined() -> None:
    called = set()
    for block in re.findall(r"```(?:python)?\n(.*?)```", _text("docs/contracts.md"), re.S):
        called.update(m.split(".")[-1] for m in re.findall(r"^([A-Za-z_][\w.]*)\(", block, re.M))
    missing = sorted(called - _defined_names())
    assert not missing, f"docs/contracts.md calls functions no module defines: {missing}"


def test_the_checks_see_a_stale_name() -> None:
    assert _resolves("core.shared.text.clip") and _resolves("core.read")
    assert not _resolves("core.shared.text.text_parts") and not _resolves("core.nowhere")
    assert "fleet_order" in _defined_names() and "session_tree" not in _defined_names()


def test_every_retired_key_is_in_the_readmes_migration_list() -> None:
    """A retired slice key's refusal says "See README migration": the README's Migration list names each one."""
    from core.policies.slice_config import RETIRED_HISTORY, RETIRED_TOP_LEVEL

    text = _text("README.md")
    start = text.find("**Migration.**")
    assert start >= 0, "the README has no Migration list for the retired keys' message to point to"
    section = text[start : text.find("\n\n", text.find("| retired key", start))]
    missing = [key for key in [*RETIRED_TOP_LEVEL, *RETIRED_HISTORY] if not re.search(rf"\b{key}\b", section)]
    assert not missing, f"retired keys the README's Migration list leaves out: {missing}"
