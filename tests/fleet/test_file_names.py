"""``FileNames`` records the real path behind each name of a log: a local path, or ``[user@]host:PATH`` as the far
side resolved it. Its ``real`` took a local ``Path`` and resolved on this machine any name not looked up yet, so a
remote name (a POSIX path of another machine) asked before its look-up came back as a path here
(``/cwd/box:/s/...``), and one of a name looked up came back only through that same local fallback's type."""

from __future__ import annotations

from pathlib import Path

from core.alerts.follow import FileNames
from core.remote.target import RemoteTarget


def test_a_remote_names_real_path_is_the_far_sides_and_never_resolved_here() -> None:
    names = FileNames()
    far = RemoteTarget("me", "box", "logs/p/s/session.jsonl")
    asked: list[list[RemoteTarget]] = []

    def look_up(new: list[RemoteTarget]) -> list[str]:  # what the far side answers (core.remote.sessions)
        asked.append(new)
        return ["me@box:/home/me/logs/p/s/session.jsonl"]

    names.look_up([far], look_up)
    assert names.first([far], set()) == [far]
    assert names.real(str(far)) == "me@box:/home/me/logs/p/s/session.jsonl"
    assert names.real("me@box:/never/listed/session.jsonl") is None  # not resolved as a path of this machine
    names.look_up([far], look_up)
    assert names.first([far], set()) == [far] and len(asked) == 1  # looked up once


def test_a_local_names_real_path_is_resolved_here(tmp_path: Path) -> None:
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    log.write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "s")
    names = FileNames()
    seen: set[str] = set()
    names.look_up([log, tmp_path / "link" / "session.jsonl"])
    assert names.first([log, tmp_path / "link" / "session.jsonl"], seen) == [log]
    assert names.real(str(tmp_path / "link" / "session.jsonl")) == str(log) and seen == {str(log)}
