"""The chart's samples (``Session.context_samples``): one per model request, taken when it goes out, sized as
the request's system prompt plus its surface."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.read.load import load_session
from core.rebuild.request import AGENT, iter_requests
from core.shared.text import cp_len

RETRIED = "compaction-recovery.session.jsonl"  # step 2 fails with a context-window error and is retried


def _requests(path: Path) -> list[tuple[int, int, int, int]]:
    session = load_session(path)
    events = [session.events[seq] for seq in range(session.next_seq)]
    requests = iter_requests(session.header, events)
    return [(r.seq, r.turn, r.step, r.chars) for r in requests if r.kind == AGENT]  # not DSH's title or summary


@pytest.mark.parametrize(
    "name",
    ["bash-spill", "cancel-tool-calls", "code-mode-turn", "compaction-recovery", "error-finish", "multi-turn",
     "subagent-spawn-in-process", "tool-call-turn"],
)  # fmt: skip
def test_a_sample_is_the_request_as_sent(fixtures_dir: Path, name: str) -> None:
    path = fixtures_dir / f"{name}.session.jsonl"
    session = load_session(path)
    system = cp_len(session.request_header()["system"])  # type: ignore[index]
    assert session.context_samples == _requests(path)
    assert all(s[3] > system > 0 for s in session.context_samples)  # the system prompt is counted


def test_a_retried_request_is_sampled_twice(fixtures_dir: Path) -> None:
    session = load_session(fixtures_dir / RETRIED)
    samples = session.context_samples
    assert samples[0][3] == _requests(fixtures_dir / RETRIED)[0][3]  # 3615 chars, 2584 of them the system prompt
    assert cp_len(session.request_header()["system"]) == 2584  # type: ignore[index]
    assert [s[:3] for s in samples] == [r[:3] for r in _requests(fixtures_dir / RETRIED)]
    assert [s[:3] for s in samples] == [(7, 1, 1), (17, 1, 2), (22, 1, 2)]


def test_a_request_is_sampled_when_it_goes_out_not_when_it_is_answered(fixtures_dir: Path, tmp_path: Path) -> None:
    """A log cut while a request's answer streams in already shows that request."""
    lines = (fixtures_dir / RETRIED).read_bytes().splitlines(keepends=True)
    path = tmp_path / "session.jsonl"
    for cut, want in ((8, []), (9, [7]), (19, [7, 17]), (23, [7, 17]), (24, [7, 17, 22])):
        path.write_bytes(b"".join(lines[: cut + 1]))  # the header line, then events 0..cut-1
        assert [s[0] for s in load_session(path).context_samples] == want, cut
