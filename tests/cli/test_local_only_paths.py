"""A command that reads only a log on this machine, given ``[user@]host:PATH``, says so (and names the commands that
read a remote log), instead of "no such file or directory" for a file that exists over there."""

from __future__ import annotations

import pytest

from core.cli import main


@pytest.mark.parametrize(
    "argv",
    [["cost"], ["request", "--all"], ["diff", "--turn", "1", "--step", "2"], ["fold"], ["status"],
     ["export"], ["notes"], ["recall", "turn"]],  # fmt: skip
)
def test_a_remote_path_to_a_local_only_command_is_refused_with_what_reads_it(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    remote = "box:/srv/sessions/p/s1/session.jsonl"
    at = 2 if argv[0] == "recall" else 1
    with pytest.raises(SystemExit) as exit:
        main([*argv[:at], remote, *argv[at:], *(["1"] if argv[0] == "recall" else [])])
    err = capsys.readouterr().err
    assert exit.value.code == 2
    assert "no such file" not in err and "on this machine only" in err and "inspect, surface, events" in err, err
