"""``stream_requests``: the requests of a log file from one streaming pass equal the in-memory pass's, while the
pass holds only the surface's events."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bench.gen_session import generate
from core.log.linestore import LineStore
from core.log.reader import read_log
from core.log.vocabulary import SURFACE_TYPES
from core.read.load import load_session
from core.read.session import Session
from core.rebuild.request import Point, Request, RequestPass, iter_requests, stream_requests
from core.rebuild.request_diff import diff_base, diff_requests, prompt_bytes, prompt_parts
from tests.timetravel.conftest import FIXTURE_LOGS


def _streamed(path: Path) -> list[tuple[Request, int, int]]:
    """Each request with how many events the pass kept and how many nodes the surface had when it came."""
    out = []

    def take(request: Request, session: Session) -> None:
        assert isinstance(session.events, LineStore)
        out.append((request, session.events.kept, len(session.surface)))

    stream_requests(path, take)
    return out


def _check(path: Path) -> None:
    data = read_log(path)
    streamed = _streamed(path)
    assert [r for r, _, _ in streamed] == list(iter_requests(data.header, data.events))
    assert all(kept == nodes for _, kept, nodes in streamed)


def test_fixtures_generated_logs_and_a_host_session(generated_logs: list[Path], demo_log: Path) -> None:
    for path in [*FIXTURE_LOGS, *generated_logs, demo_log]:
        _check(path)


def test_emit_returning_true_ends_the_pass_there(generated_logs: list[Path]) -> None:
    path = generated_logs[0]
    seen: list[Request] = []
    session = stream_requests(path, lambda request, _: seen.append(request) or len(seen) == 3)
    assert len(seen) == 3
    assert seen[2].seq < session.next_seq < read_log(path).events[-1]["seq"]


def test_want_builds_only_the_requests_it_accepts(generated_logs: list[Path]) -> None:
    path = generated_logs[0]
    every = [r for r, _, _ in _streamed(path)]
    step = (every[len(every) // 2].turn, every[len(every) // 2].step)
    asked: list[tuple[int, int]] = []

    def want(point: Point) -> bool:
        asked.append((point.turn, point.step))
        return (point.turn, point.step) == step

    built: list[Request] = []
    stream_requests(path, lambda request, _: built.append(request), want)
    assert len(asked) == len(every) and built == [r for r in every if (r.turn, r.step) == step]


@pytest.mark.parametrize("which", [0, 1], ids=["short-turns", "mixed-zstd"])
def test_a_pass_reads_and_converts_each_surface_message_about_once(generated_logs: list[Path], which: int) -> None:
    path = generated_logs[which]
    carried: list[int] = []
    requests = RequestPass(lambda request, _: carried.append(len(request.messages)), keep=True)
    session = load_session(path, retain=False, readback=True, before=requests.before, observe=requests.after)
    requests.finish(session)
    messages = sum(1 for e in read_log(path).events if e["type"] in SURFACE_TYPES)
    cache = requests.cache
    assert len(session.surface) <= cache.converted <= 2 * messages < sum(carried) // 3  # not per request
    assert len(session.surface) <= cache.derived <= 2 * messages


def _against_scratch(path: Path) -> int:
    """Check each request's prompt and cache break against the same rendered without the pass's ``WireCache``;
    return how many prompts the cache rendered in the buffer of the one before."""
    last: list[Request] = []
    reused = 0

    def take(request: Request, session: Session) -> None:
        nonlocal reused
        plain = replace(request, cache=None, prompt=None)
        assert prompt_bytes(request) == prompt_bytes(plain) == b"".join(prompt_parts(request))
        assert request.cache is not None
        if last:
            ours, theirs = diff_requests(last[0], request, session), diff_requests(last[1], plain, session)
            assert (ours.prefix_bytes, ours.total_bytes, ours.broke, ours.cause, ours.cause_seq) == (
                theirs.prefix_bytes, theirs.total_bytes, theirs.broke, theirs.cause, theirs.cause_seq,
            )  # fmt: skip
            reused += request.cache.cut_from(last[0], request) is not None
        last[:] = [diff_base(request), diff_base(plain)]

    stream_requests(path, take, others=False)  # DSH's other calls are built apart, without the cache
    return reused


def test_prompts_and_cache_breaks_of_a_pass_are_those_rendered_from_scratch(
    generated_logs: list[Path], demo_log: Path
) -> None:
    for path in [demo_log, *FIXTURE_LOGS]:
        _against_scratch(path)
    assert all(_against_scratch(path) > 20 for path in generated_logs)


def test_a_pass_over_a_never_cut_surface_grows_one_prompt_buffer(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    generate(path, 1_500_000, seed=3, profile="dsh-plain")  # no compaction, no prune: each prompt extends the last
    buffers: list[bytes | bytearray] = []
    sizes: list[int] = []
    last: list[Request] = []

    def take(request: Request, session: Session) -> None:
        diff = diff_requests(last[0] if last else None, request, session)
        prompt = prompt_bytes(request)
        assert diff.total_bytes == len(prompt) and not (last and diff.broke)
        buffers.append(prompt)  # held, so that no two buffers can share an id
        sizes.append(len(prompt))
        last[:] = [diff_base(request)]

    stream_requests(path, take, others=False)
    headers = sum(1 for e in read_log(path).events if e["type"] == "request/header")
    assert len(sizes) > 20 and sizes == sorted(sizes)
    # the shared prefix is never copied: one buffer, cut back and grown in place (a new one per header change)
    assert len({id(b) for b in buffers}) <= headers
