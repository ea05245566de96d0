"""``control --help`` takes what a DSH session's ops take beyond our host's from the op registry (``DSH_OPS``), as
it takes our host's ops from ``OPS``: its DSH lines were written by hand, in words of their own
(``also [mode=steer|queue]: into the running turn, or for the next turn``, ``key= model, …``)."""

from __future__ import annotations

import pytest

from core.cli import main
from core.control.ops import DSH_OPS, OPS


def test_the_dsh_lines_of_control_help_are_the_registrys(capsys: pytest.CaptureFixture[str]) -> None:
    """Under the DSH heading: each op that takes an argument ours does not (or takes otherwise), with that
    argument's description as ``DSH_OPS`` gives it, and no other op."""
    with pytest.raises(SystemExit):
        main(["control", "--help"])
    _ours, heading, dsh = capsys.readouterr().out.partition("on a DSH session (through the bridge):\n")
    assert heading, "no DSH section"
    said = " ".join(dsh.split())  # as one line: the help wraps a long description
    other = {op: [a for a in spec.args if a not in OPS[op].args] for op, spec in DSH_OPS.items()}
    for op, args in other.items():
        for arg in args:
            assert f"{arg.name}: {arg.description}" in said, (op, arg, said)
    named = {
        line.split()[0] for line in dsh.splitlines() if line.startswith("  ") and not line.startswith("   ")
    }
    assert named == {op for op, args in other.items() if args}, named
