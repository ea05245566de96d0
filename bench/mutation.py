"""Type mutations of one JSON value in one event line: the fuzz input of ``bench/fuzz.py`` and ``tests/log``.

A mutation picks a line of a log, a value inside it (any depth, the first eight members of each list), and
either replaces it with a value of another JSON type, deletes its key, or renames an event type to another
known one. Each step is a plain choice from a list, so a random generator (the bench) and Hypothesis (the
tests, which then shrink a failure) drive the same code. ``sweep_sites`` and ``SWEEP_CHANGES`` are the
deterministic sweeps' axis instead (``tests/log/test_value_sweep.py``, ``tests/tui/test_view_sweep.py``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import Any

import orjson

# Values of every JSON type, nested and edge-case ones included (orjson cannot write ints beyond 64 bits).
REPLACEMENTS: tuple[Any, ...] = (
    None, True, False, 0, -7, 2**63 - 1, -(2**63), 1e308, -0.5, "", "z", "\u0000", "ü€😀", "9" * 30,
    [], {}, [[[]]], {"k": {"j": []}}, [1, "a", None], {"type": []}, {"type": "text", "text": 5},
)  # fmt: skip
RENAMES: tuple[str, ...] = (
    "turn/start", "turn/end", "step/start", "step/end", "user/message", "assistant/message",
    "assistant/chunk", "tool/call", "tool/result", "request/header", "agent/inbox/spliced", "text-chunks",
    "tool-call-chunks", "tool/code-dispatch", "llm/retry", "tapedeck/route", "tapedeck/config", "session",
)  # fmt: skip
ACTIONS = ("replace", "delete", "rename")
# What the sweeps do at each site: values each of which has broken a reader, and removal. ``{"type": []}`` is
# unhashable (a field tested against a set before being checked for a string), None a field taken for text,
# -7 a field taken for a list or an object.
SWEEP_CHANGES: dict[str, tuple[str, Any]] = {
    "unhashable": ("replace", {"type": []}), "null": ("replace", None), "number": ("replace", -7),
    "deleted": ("delete", None),
}  # fmt: skip
Path = tuple[str | int, ...]


def value_paths(value: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every path to a value inside ``value`` (the root excluded)."""
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value[:8])
    else:
        return
    for key, child in items:
        yield (*prefix, key)
        yield from value_paths(child, (*prefix, key))


@dataclass(frozen=True)
class Mutation:
    """Change the value at ``path`` of line ``line``: replace it with ``value``, delete it, or rename the type."""

    line: int
    path: Path
    action: str
    value: Any = None

    def apply(self, obj: Any) -> Any:
        """Mutate the decoded line ``obj`` in place (a rename applies to ``obj["type"]``) and return it."""
        if self.action == "rename" and isinstance(obj, dict):
            obj["type"] = self.value
            return obj
        parent = obj
        for key in self.path[:-1]:
            parent = parent[key]
        last = self.path[-1]
        if self.action == "delete" and isinstance(parent, dict):
            del parent[last]
        else:
            parent[last] = self.value
        return obj


def mutate_lines(lines: list[bytes], mutation: Mutation) -> list[bytes]:
    """A copy of ``lines`` with ``mutation`` applied to its line (lines that are not JSON are left alone)."""
    out = list(lines)
    try:
        obj = orjson.loads(out[mutation.line])
    except orjson.JSONDecodeError:
        return out
    out[mutation.line] = orjson.dumps(mutation.apply(obj))
    return out


def random_mutation(lines: list[bytes], rng: random.Random) -> Mutation:
    """One mutation of a log's lines: the header one time in twenty, else an event line."""
    line = 0 if rng.random() < 0.05 or len(lines) < 2 else rng.randrange(1, len(lines))
    try:
        paths = list(value_paths(orjson.loads(lines[line])))
    except orjson.JSONDecodeError:
        paths = []
    if not paths:
        return Mutation(line, (), "rename", rng.choice(RENAMES))
    action = rng.choices(ACTIONS, weights=(80, 12, 8))[0]
    value = rng.choice(RENAMES if action == "rename" else REPLACEMENTS)
    return Mutation(line, rng.choice(paths), action, value)


def _kinds(event: dict[str, Any], path: Path) -> tuple[str, ...]:
    """The ``type`` of each object ``path`` passes through below the event (a chunk's, a content block's)."""
    kinds, node = [], event
    for key in path[:-1]:
        node = node[key]
        if isinstance(node, dict) and isinstance(node.get("type"), str):
            kinds.append(node["type"])
    return tuple(kinds)


def sweep_sites(logs: Iterable[FilePath]) -> list[tuple[FilePath, int, Path]]:
    """One (log, line, path) per distinct event type, key path (list positions taken as one) and types of the
    objects on that path (a text delta's index is not a block start's) of ``logs``, the headers left out: the
    first event line where each occurs."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for log in logs:
        for n, line in enumerate(log.read_bytes().rstrip(b"\n").split(b"\n")[1:], 1):
            event = orjson.loads(line)
            for path in value_paths(event) if isinstance(event, dict) else ():
                shape = tuple("#" if isinstance(p, int) else p for p in path)
                key = (str(event.get("type")), shape, _kinds(event, path))
                if isinstance(path[-1], str) and key not in seen:
                    seen.add(key)
                    out.append((log, n, path))
    return out


def swept(logs: Iterable[FilePath], action: str, value: Any, out: FilePath) -> Iterator[tuple[int, str]]:
    """For each sweep site of ``logs`` in turn, write its log with the site changed (``action``, ``value``) to
    ``out`` and yield the changed line and where the site is (``log line N at data.x``)."""
    for log, n, path in sweep_sites(logs):
        lines = log.read_bytes().rstrip(b"\n").split(b"\n")
        out.write_bytes(b"\n".join(mutate_lines(lines, Mutation(n, path, action, value))) + b"\n")
        yield n, f"{log.name} line {n} at {'.'.join(map(str, path))}"
