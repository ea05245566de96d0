"""A control request may name what sent it (``origin``): validated when written and when read, and carried into
its outcome, so the log says which rule paused the host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.control import inbox as control


def test_an_origin_is_written_read_back_and_answered_with(tmp_path: Path) -> None:
    inbox = tmp_path / "control.jsonl"
    sent = control.append_request(inbox, "pause", {}, origin="alert:budget")
    assert sent["origin"] == "alert:budget"
    (entry,) = control.InboxReader(inbox).read()
    assert entry.error is None and entry.request is not None and entry.request["origin"] == "alert:budget"
    outcome = control.outcome_event(entry.request, control.APPLIED)
    assert outcome["data"] == {"requestId": sent["id"], "op": "pause", "outcome": "applied", "origin": "alert:budget"}


@pytest.mark.parametrize("origin", ["", " alert", "alert budget", "a" * 101, "alert:\n", "-x"])
def test_a_bad_origin_is_refused_by_the_sender(tmp_path: Path, origin: str) -> None:
    with pytest.raises(control.ControlError, match="'origin' must be 1 to 100 letters"):
        control.append_request(tmp_path / "control.jsonl", "pause", {}, origin=origin)
    assert not (tmp_path / "control.jsonl").exists()


@pytest.mark.parametrize("origin", [3, None, ["alert"], {"rule": "budget"}, "alert:\u2028", "x" * 5000])
def test_a_hostile_origin_in_the_inbox_is_rejected_with_its_reason(tmp_path: Path, origin: object) -> None:
    inbox = tmp_path / "control.jsonl"
    inbox.write_text(json.dumps({"id": "r1", "op": "pause", "args": {}, "at": 1, "origin": origin}) + "\n")
    (entry,) = control.InboxReader(inbox).read()
    assert entry.request is not None and entry.request["id"] == "r1"
    assert entry.error is not None and "'origin' must be" in entry.error
    assert "origin" not in entry.request
