"""What ``inspect_surface`` keeps per surface node: a big log's seal holds it for every node of the surface, so it
is kept in columns (ints in arrays, one slot per node in a few lists), not in an object and tuples per node."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

from bench.gen_session import generate
from core.policies.read_index import ReadIndex, index_reads
from core.policies.slice import inspect_surface
from core.read.load import load_session

BYTES_PER_NODE = 120  # besides the strings it keeps (ids and reply texts)


def _held(root: Any) -> tuple[int, int]:
    """Bytes of every object reachable from ``root`` (types, modules and functions aside): strings, the rest."""
    seen: set[int] = set()
    todo = [root]
    strings = rest = 0
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type | type(sys) | type(_held)):
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            strings += sys.getsizeof(obj)
        else:
            rest += sys.getsizeof(obj)
            todo += gc.get_referents(obj)
    return strings, rest


def test_the_layout_keeps_a_few_words_per_node(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    generate(log, 2_000_000, seed=1, profile="dsh-plain")
    session = load_session(log, retain=False, readback=True, observe=index_reads, observe_types=ReadIndex.TYPES)
    layout = inspect_surface(session)
    nodes = layout.nodes
    assert len(nodes) > 100 and any(n.reply for n in nodes) and any(n.calls for n in nodes)
    _, rest = _held(layout)
    assert rest <= BYTES_PER_NODE * len(nodes)
