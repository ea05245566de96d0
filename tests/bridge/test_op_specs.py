"""The bridge plugin checks an inbox request against its own copy of the ops' argument specs: that copy and
``core.control.ops.DSH_OPS`` must agree, so a request is refused alike (and in the same words) by both hosts."""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.control.ops import DSH_OPS

PLUGIN = Path(__file__).resolve().parents[2] / "core" / "bridge" / "tapedeck-bridge.mjs"


def _plugin_ops() -> dict[str, list[list[object]]]:
    """The plugin's ``OPS`` literal, read as JSON (its keys quoted, its trailing commas dropped)."""
    block = re.search(r"^const OPS = (\{.*?^\});", PLUGIN.read_text(), re.S | re.M)
    assert block is not None, "the plugin's OPS table is not where this test looks"
    text = re.sub(r"^(\s*)([A-Za-z_.]+):", r'\1"\2":', block.group(1), flags=re.M)
    return json.loads(re.sub(r",(\s*[\]}])", r"\1", text))


def test_the_plugin_and_dsh_ops_take_the_same_arguments() -> None:
    plugin = _plugin_ops()
    assert list(plugin) == list(DSH_OPS)
    for op, specs in plugin.items():
        ours = {a.name: a for a in DSH_OPS[op].args}
        assert [s[0] for s in specs] == list(ours), op
        for name, kind, required, *rest in specs:
            arg = ours[name]
            assert (kind, required) == (arg.kind, arg.required), (op, name)
            choices = rest[0] if rest else None
            assert tuple(choices or ()) == arg.choices, (op, name)


def test_a_missing_argument_is_explained_in_the_same_words_by_both() -> None:
    """The plugin says ``<op> needs the argument '<name>' (<description>)`` as the inbox does: its description of
    every required argument is ours."""
    for op, specs in _plugin_ops().items():
        ours = {a.name: a for a in DSH_OPS[op].args}
        for name, _kind, required, *rest in specs:
            if required:
                assert len(rest) == 2, (op, name)
                assert rest[1] == ours[name].description, (op, name)
