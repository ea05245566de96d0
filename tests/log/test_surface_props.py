"""The surface fold follows DSH's algorithm exactly, including replacements of replacements."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.read.session import Session
from tests.log.helpers import HEADER, user


def reference_fold(events: list[dict]) -> list[int] | None:
    """DSH's applySurfacePlan, verbatim from the spec (None when an op is invalid)."""
    nodes: list[int] = []
    for ev in events:
        op = ev.get("surfaceOp")
        if op is None:
            continue
        if op == "append":
            nodes.append(ev["seq"])
            continue
        start, end = op.get("start", op.get("startSeq")), op.get("end", op.get("endSeq"))
        if start not in nodes or end not in nodes or nodes.index(start) > nodes.index(end):
            return None
        i, j = nodes.index(start), nodes.index(end)
        nodes[i : j + 1] = [ev["seq"]]
    return nodes


@st.composite
def op_sequences(draw: st.DrawFn) -> list[dict]:
    events: list[dict] = []
    nodes: list[int] = []
    for seq in range(draw(st.integers(min_value=1, max_value=40))):
        if nodes and draw(st.booleans()):
            i = draw(st.integers(min_value=0, max_value=len(nodes) - 1))
            j = draw(st.integers(min_value=i, max_value=len(nodes) - 1))
            spelling = draw(st.sampled_from(["start", "startSeq"]))
            end_key = "end" if spelling == "start" else "endSeq"
            ev = user(f"r{seq}", "plugin:slice:history")
            ev["surfaceOp"] = {"op": "replace", spelling: nodes[i], end_key: nodes[j]}
            ev["sourceEventSeqs"] = nodes[i : j + 1]
            nodes[i : j + 1] = [seq]
        elif draw(st.integers(0, 4)) == 0:
            ev = {"type": "session/title", "data": {"title": "x"}}
        else:
            ev = user(f"m{seq}")
            nodes.append(seq)
        events.append({**ev, "seq": seq, "time": seq})
    return events


@settings(max_examples=300, deadline=None)
@given(events=op_sequences())
def test_projection_matches_reference_fold(events: list[dict]) -> None:
    session = Session.from_events(HEADER, events)
    assert session.surface == reference_fold(events)
    assert session.diagnostics == []
    live = set(session.surface)
    for seq in range(len(events)):
        assert session.on_surface(seq) == (seq in live)
    assert session.surface_chars == sum(session.node_chars(s) for s in session.surface)
    for rseq, shadowed in session.shadowed.items():
        assert all(session.replaced_by[s] == rseq for s in shadowed)


@settings(max_examples=100, deadline=None)
@given(events=op_sequences(), bogus=st.integers(min_value=0, max_value=60))
def test_invalid_replace_is_a_diagnostic_not_a_crash(events: list[dict], bogus: int) -> None:
    seq = len(events)
    ev = user("bad", "plugin:x")
    ev["surfaceOp"] = {"op": "replace", "start": bogus + 1000, "end": bogus + 1000}
    ev["sourceEventSeqs"] = []
    session = Session.from_events(HEADER, [*events, {**ev, "seq": seq, "time": seq}])
    assert session.surface == reference_fold(events)
    assert [d.code for d in session.diagnostics] == ["replace-missing-node"]
