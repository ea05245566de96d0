"""Every event type tapedeck's host writes is one ``--type`` knows (export, events): none is warned of as a type no
log holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.control.config import CONFIG_EVENT
from core.control.host_state import STATE_EVENT
from core.log.vocabulary import is_logged_type
from core.policies.checkpoint import REWIND_EVENT
from tests.conftest import FIXTURES


@pytest.mark.parametrize("etype", [CONFIG_EVENT, STATE_EVENT, REWIND_EVENT])
def test_a_type_tapedeck_s_host_writes_is_a_logged_type(
    etype: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`export --type tapedeck/config` (the README: a config.set 'is logged as tapedeck/config') said the type
    'names no type a DSH or tapedeck log holds', though the host logs it, as it logs its state changes and rewinds."""
    assert is_logged_type(etype)
    out = tmp_path / "x.json"
    assert main(["export", str(FIXTURES / "multi-turn.session.jsonl"), "--type", etype, "-o", str(out)]) in (
        0,
        None,
    )
    assert "names no type" not in capsys.readouterr().err
