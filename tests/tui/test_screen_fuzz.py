"""No screen of the TUI dies on a mutated log: the main screen and every screen key, driven by Pilot.

The policy screens run the same core readers the CLI does (seal, recall, fold, the router, prolong, requests);
a flagged event reaches them only as the validated view's opaque stand-in. ``bench/fuzz.py --tui N`` is the
long run.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.mutation import RENAMES, REPLACEMENTS, Mutation, mutate_lines, value_paths
from bench.readers import SCREEN_KEYS, tui_crash
from tests.conftest import FIXTURES

pytestmark = pytest.mark.anyio
SUBAGENT = FIXTURES / "subagent-spawn-in-process.session.jsonl"


def _write(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


async def test_tape_screen_reads_past_an_assistant_message_whose_content_is_a_number(tmp_path: Path) -> None:
    lines = SUBAGENT.read_bytes().rstrip(b"\n").split(b"\n")
    at = next(n for n, line in enumerate(lines) if b'"assistant/message"' in line and n > 30)
    path = _write(tmp_path, mutate_lines(lines, Mutation(at, ("data", "message", "content"), "replace", -0.5)))
    assert await tui_crash(path, ("t",)) is None


def _logs() -> list[list[bytes]]:
    return [p.read_bytes().rstrip(b"\n").split(b"\n") for p in sorted(FIXTURES.glob("*.jsonl")) if "expected" not in p.name]


SOURCES = _logs()


@st.composite
def mutated(draw: st.DrawFn) -> tuple[int, Mutation]:
    source = draw(st.integers(0, len(SOURCES) - 1))
    lines = SOURCES[source]
    line = draw(st.integers(1, len(lines) - 1))
    paths = list(value_paths(orjson.loads(lines[line])))
    action = draw(st.sampled_from(("replace", "replace", "replace", "delete", "rename")))
    value = draw(st.sampled_from(RENAMES if action == "rename" else REPLACEMENTS))
    path = draw(st.sampled_from(paths)) if paths else ()
    return source, Mutation(line, path, action if path or action == "rename" else "rename", value)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=mutated())
async def test_no_screen_dies_on_a_mutated_log(tmp_path_factory: pytest.TempPathFactory, case: tuple[int, Mutation]) -> None:
    source, mutation = case
    path = _write(tmp_path_factory.mktemp("tui-case"), mutate_lines(SOURCES[source], mutation))
    assert await tui_crash(path, SCREEN_KEYS) is None, mutation
