"""The row model: the virtual row view against a plain list, row facts, badges and originals."""

from __future__ import annotations

import copy
import threading
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.read.rows import build_row, clip_strings
from core.read.session import Session
from tests.tui.logs import policy_log
from tui.widgets.rows import RowView, SortedSeqs, SurfaceRows, badges, huge_row, originals


@given(
    n=st.integers(0, 60),
    sorted_base=st.booleans(),
    toggles=st.lists(st.tuples(st.integers(0, 59), st.integers(0, 4)), max_size=8),
)
def test_row_view_matches_the_flattened_list(
    n: int, sorted_base: bool, toggles: list[tuple[int, int]]
) -> None:
    base = SortedSeqs(range(0, 2 * n, 2)) if sorted_base else range(n)
    view = RowView(base)
    expanded: dict[int, list[int]] = {}
    for pos, count in toggles:
        if pos >= len(base):
            continue
        children = [1000 + pos * 10 + k for k in range(count)]
        view.toggle(pos, children)
        if pos in expanded:
            del expanded[pos]
        elif children:
            expanded[pos] = children
    flat = []
    for pos, seq in enumerate(base):
        flat.append((seq, 0))
        flat.extend((child, 1) for child in expanded.get(pos, []))
    assert len(view) == len(flat)
    assert [view.row(i) for i in range(len(view))] == flat
    for pos, seq in enumerate(base):
        assert view.position_of(seq) == pos
        assert flat[view.row_of_seq(seq)] == (seq, 0)  # type: ignore[index]
    if sorted_base and n:
        assert view.row_of_seq(1, at_or_after=True) == (view.row_of_seq(2) if n > 1 else None)


def test_rows_and_badges_of_a_folded_then_sealed_session() -> None:
    log = policy_log()
    session = Session.from_events(log.header, log.events)
    kinds = {cut.seq: cut.kind for cut in session.cuts}
    result = build_row(log.events[6])
    assert (result.glyph, result.turn, result.step) == ("←", 1, 1)
    assert badges(result, session, kinds) == ["folded", "off"]  # what took it off the surface first
    fold = build_row(log.events[12])
    assert fold.replacement == "fold" and fold.glyph == "▣"
    assert badges(fold, session, kinds) == ["sealed", "fold", "off"]
    tape = build_row(log.events[24])
    assert tape.summary == "tape entry: turn 1 · 4 nodes · 67 chars"
    assert badges(tape, session, kinds) == ["tape", "on"]
    error = build_row(log.events[31])
    assert error.error and badges(error, session, kinds) == ["error", "on"]
    assert badges(build_row(log.events[1]), session, kinds) == []  # log-only turn/start
    assert originals(session, 24) == [3, 4, 6, 9]  # the fold is expanded to the result it replaced


def test_huge_payloads_are_cut_before_summarizing() -> None:
    log = policy_log()
    event = copy.deepcopy(log.events[6])
    big = "x" * 3_000_000
    event["data"]["message"]["content"][0]["content"][0]["text"] = big
    row = build_row(event)
    assert len(row.summary) <= 240 and row.size == 3_000_000
    assert clip_strings({"a": ["y" * 10]}, 4, note=True) == {"a": ["yyyy… (+6 chars)"]}
    lines = [{"n": i, "text": "ab"} for i in range(100)]  # a file's lines: measured a slice at a time
    lines[70] = {"n": 70, "text": "z" * 50}
    clipped = clip_strings({"meta": {"lines": lines}, "short": "ok"}, 20)
    assert clipped["meta"]["lines"][70] == {"n": 70, "text": "z" * 20} and clipped["meta"]["lines"][69] == lines[69]
    assert len(clipped["meta"]["lines"]) == 100 and clipped["short"] == "ok" and lines[70]["text"] == "z" * 50


def test_huge_row_comes_from_index_metadata() -> None:
    row = huge_row(7, "tool/result", 2, 1, 10_500_000)
    assert (row.glyph, row.turn, row.step, row.size, row.surface_type) == ("←", 2, 1, 10_500_000, True)
    assert row.summary == "(10.5MB tool/result line: select it to read it)"


class _Surface(list[int]):
    """A session's surface that counts the nodes read from it."""

    read = 0

    def __getitem__(self, key: Any) -> Any:
        found = super().__getitem__(key)
        self.read += len(found) if isinstance(key, slice) else 1
        return found


def _session() -> SimpleNamespace:
    return SimpleNamespace(surface=_Surface(), cuts=[])


@settings(max_examples=200, deadline=None)
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("append"), st.integers(1, 5)),
            st.tuples(st.just("replace"), st.integers(0, 30), st.integers(0, 3)),
            st.tuples(st.just("scan"), st.integers(0, 12)),
            st.tuples(st.just("filter"), st.integers(0, 2)),
            st.just(("view",)),
        ),
        max_size=40,
    )
)
def test_surface_rows_are_the_surface_nodes_a_filter_keeps(ops: list[tuple[Any, ...]]) -> None:
    """The surface view's rows, kept across appends, replacements (cuts), a filter's scan moving on and another
    filter, are every surface node or those among the matches, as a walk over the whole surface gives them."""
    session, rows, lock = _session(), SurfaceRows(), threading.Lock()
    seq = 0
    matches: SortedSeqs | None = None
    upto, every = 0, 2

    def check() -> None:
        keep = set(matches) if matches is not None else None
        want = [s for s in session.surface if keep is None or s in keep]
        assert list(rows.view(session, lock, matches, upto)) == want

    for op in ops:
        if op[0] == "append":
            for _ in range(op[1]):
                session.surface.append(seq)
                seq += 1
        elif op[0] == "replace" and session.surface:
            i = op[1] % len(session.surface)
            session.surface[i : i + op[2] + 1] = [seq]
            session.cuts.append(seq)
            seq += 1
        elif op[0] == "scan" and matches is not None:
            stop = min(seq, upto + op[1])
            matches.extend(s for s in range(upto, stop) if s % every)
            upto = stop
        elif op[0] == "filter":  # another filter (or none), scanned from the start
            matches, upto, every = (SortedSeqs(), 0, op[1] + 2) if op[1] else (None, 0, 2)
        check()
    check()


def test_an_append_reads_only_the_new_surface_nodes() -> None:
    """Once made, the surface view's rows grow by what an append added: one node read, not the whole surface (with
    a filter, too); a cut makes them again from the whole surface."""
    for matches in (None, SortedSeqs(range(1, 1000, 2))):
        session, rows, lock = _session(), SurfaceRows(), threading.Lock()
        session.surface.extend(range(1000))
        rows.view(session, lock, matches, 1000)
        session.surface.read = 0
        session.surface.append(1001)
        if matches is not None:
            matches.append(1001)
        assert list(rows.view(session, lock, matches, 1002))[-2:] == [999, 1001]
        assert session.surface.read == 1
        session.cuts.append(1001)
        rows.view(session, lock, matches, 1002)
        assert session.surface.read == 1 + 1001
