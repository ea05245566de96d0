"""``td`` command pairs in a DSH log: readers take them anywhere, and bridge checkpoints are marks."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bridge.commands import td_commands
from core.policies.checkpoint import active_marks, latest_mark, marks
from core.policies.rewind import RewindError, preview_rewind
from core.read.load import load_session
from core.read.summary import summarize
from core.rebuild.request import iter_requests
from tests.bridge.conftest import compaction, dsh_log, td_pair

CHECKPOINT = {"id": "req-1", "op": "checkpoint", "args": {"objective": "find the bug"}, "at": 1}


def _checkpoint_mid_turn(directory: Path) -> Path:
    """The fixture's turn with a bridge checkpoint logged between the bash tool/call and its tool/result."""
    done = {"requestId": "req-1", "op": "checkpoint", "outcome": "applied", "detail": {"markId": 1, "seq": 63, "objective": "find the bug"}}  # fmt: skip
    return dsh_log(directory, after_type="tool/call", insert=td_pair("c1", CHECKPOINT, done))


def test_command_events_between_tool_call_and_result_change_no_turn_step_or_surface(tmp_path: Path) -> None:
    plain = load_session(dsh_log(tmp_path / "plain"))
    bridged = load_session(_checkpoint_mid_turn(tmp_path / "bridged"))
    assert [e["type"] for e in bridged.events[64:68]] == [
        "tool/call",
        "command/run",
        "command/done",
        "tool/result",
    ]
    assert bridged.diagnostics == plain.diagnostics == []
    shift = {seq: seq + 2 if seq > 64 else seq for seq in plain.surface}
    assert bridged.surface == [shift[s] for s in plain.surface]
    assert {n: (t.status, sorted(t.steps)) for n, t in bridged.turns.items()} == {
        n: (t.status, sorted(t.steps)) for n, t in plain.turns.items()
    }
    assert bridged.turn_of(65) == 1 and bridged.in_turn(66)
    rebuilt = [
        r.body["messages"] for r in iter_requests(bridged.header, list(bridged.events), session=bridged)
    ]
    assert rebuilt == [
        r.body["messages"] for r in iter_requests(plain.header, list(plain.events), session=plain)
    ]


def test_a_bridge_checkpoint_is_a_mark_and_rewind_previews_the_nodes_after_it(tmp_path: Path) -> None:
    session = load_session(_checkpoint_mid_turn(tmp_path / "s"))
    [command] = td_commands(session)
    assert (command.run_seq, command.done_seq, command.op, command.applied) == (65, 66, "checkpoint", True)
    [mark] = marks(session)
    assert (mark.mark_id, mark.anchor, mark.seq, mark.turn, mark.by, mark.objective, mark.bridged) == (
        1, 64, 65, 1, "operator", "find the bug", True,
    )  # fmt: skip
    preview = preview_rewind(session)
    assert preview.mark == mark
    # after the mark's node (63) comes a tool result: the region starts at its call instead, as the bridge's does
    assert preview.region.shadowed_seqs == (63, 67, 103)
    assert preview.folded_chars > 0


def test_an_applied_bridge_rewind_completes_the_mark_and_later_ones(tmp_path: Path) -> None:
    def checkpoint(n: int, seq: int) -> list[str]:
        request = {"id": f"req-c{n}", "op": "checkpoint", "args": {}, "at": 1}
        return td_pair(f"c{n}", request, {"requestId": f"req-c{n}", "op": "checkpoint", "outcome": "applied", "detail": {"markId": n, "seq": seq}})  # fmt: skip

    rewind = {"id": "req-r", "op": "rewind", "args": {"markId": 2}, "at": 1}
    rejected = {"id": "req-x", "op": "rewind", "args": {"markId": 1}, "at": 1}
    tail = [
        *checkpoint(1, 5),
        *checkpoint(2, 63),
        *checkpoint(3, 65),
        *td_pair(
            "r1", rejected, {"requestId": "req-x", "op": "rewind", "outcome": "rejected", "error": "busy"}
        ),
        *td_pair(
            "r2",
            rewind,
            {
                "requestId": "req-r",
                "op": "rewind",
                "outcome": "applied",
                "detail": {"markId": 2, "start": 65, "end": 101, "foldedNodes": 2, "seq": 120},
            },
        ),  # fmt: skip
    ]
    session = load_session(dsh_log(tmp_path / "s", tail=tail))
    found = marks(session)
    assert [(m.mark_id, m.active) for m in found] == [(1, True), (2, False), (3, False)]
    assert [m.mark_id for m in active_marks(session)] == [1]
    assert latest_mark(session).mark_id == 3 and found[1].folded_by == session.next_seq - 1


def test_a_mark_before_any_node_rewinds_the_whole_surface_and_a_replaced_node_ends_a_mark(
    tmp_path: Path,
) -> None:
    early = {
        "requestId": "req-1",
        "op": "checkpoint",
        "outcome": "applied",
        "detail": {"markId": 1, "seq": None},
    }
    session = load_session(dsh_log(tmp_path / "a", tail=td_pair("c1", CHECKPOINT, early)))
    assert preview_rewind(session).region.shadowed_seqs == tuple(session.surface)
    gone = {
        "requestId": "req-1",
        "op": "checkpoint",
        "outcome": "applied",
        "detail": {"markId": 1, "seq": 64},
    }
    session = load_session(dsh_log(tmp_path / "b", tail=td_pair("c1", CHECKPOINT, gone)))
    with pytest.raises(RewindError, match="no longer on the surface"):
        preview_rewind(session)


def test_the_event_list_names_bridge_ops_and_their_outcomes(tmp_path: Path) -> None:
    session = load_session(_checkpoint_mid_turn(tmp_path / "s"))
    assert summarize(session.events[65]) == "bridge checkpoint [req-1]: objective: find the bug"
    assert (
        summarize(session.events[66])
        == "bridge checkpoint applied [req-1]: markId: 1, seq: 63, objective: find the bug"
    )


def test_a_td_run_without_its_done_is_no_mark_yet(tmp_path: Path) -> None:
    session = load_session(dsh_log(tmp_path / "s", tail=td_pair("c1", CHECKPOINT, None)))
    [command] = td_commands(session)
    assert command.outcome is None and marks(session) == []


ANY = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["markId", "seq", "op", "outcome", "detail", "id"]), inner, max_size=4),
    max_leaves=10,
)  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.sampled_from(["c1", "c2", 7]), st.sampled_from(["td", "other"]), ANY, st.sampled_from(["success", "error", None]), ANY),
        max_size=6,
    )
)  # fmt: skip
def test_hostile_command_pairs_never_break_the_mark_readers(tmp_path_factory, pairs) -> None:
    lines = []
    for command_id, name, args, kind, text in pairs:
        args_value = orjson.dumps(args).decode() if isinstance(args, dict) else args
        text_value = orjson.dumps(text).decode() if isinstance(text, dict) else text
        lines.append(
            orjson.dumps(
                {"type": "command/run", "data": {"commandId": command_id, "name": name, "args": args_value}}
            ).decode()
        )
        lines.append(orjson.dumps({"type": "command/done", "data": {"commandId": command_id, "kind": kind, "text": text_value}}).decode())  # fmt: skip
    session = load_session(dsh_log(tmp_path_factory.mktemp("h") / "s", tail=lines))
    for seq in session.seqs_of(("command/run", "command/done")):
        assert summarize(session.events[seq])
    for mark in marks(session):
        assert mark.bridged and mark.anchor >= 0
    latest_mark(session)
    try:
        preview_rewind(session)
    except Exception as exc:  # a classified refusal is fine; a crash is not
        assert type(exc).__name__ == "RewindError"


def test_a_bridge_mark_whose_node_a_compaction_replaced_is_inactive_as_the_plugin_says(
    tmp_path: Path,
) -> None:
    """The plugin calls a mark whose node left the surface no longer active (it rejects a rewind to it); so do the
    marks read from the log, and the Checkpoints screen says its node was replaced rather than offering it."""
    from tui.screens.checkpoints import derive_checkpoints

    def checkpoint(n: int, seq: int) -> list[str]:
        request = {"id": f"req-c{n}", "op": "checkpoint", "args": {}, "at": 1}
        return td_pair(f"c{n}", request, {"requestId": f"req-c{n}", "op": "checkpoint", "outcome": "applied", "detail": {"markId": n, "seq": seq}})  # fmt: skip

    session = load_session(dsh_log(tmp_path / "s", tail=[*checkpoint(1, 5), *checkpoint(2, 65), compaction(4, 63, [4, 5, 63])]))  # fmt: skip
    assert session.diagnostics == [] and not session.on_surface(5) and session.on_surface(65)
    first, second = marks(session)
    assert (first.active, first.folded_by, second.active) == (False, None, True)
    assert active_marks(session) == [second]
    with pytest.raises(RewindError, match="no longer on the surface"):
        preview_rewind(session, 1)
    view = derive_checkpoints(session)
    assert view.problems[1] == "the history at checkpoint 1 was replaced since it was placed"
    assert [p.preview.mark.mark_id for p in view.previews] == [2]


@pytest.mark.parametrize(
    "text", ["/td does not accept image attachments", "command aborted", "tapedeck-bridge unloaded"]
)
def test_a_td_command_dsh_settled_in_its_own_words_did_not_run(tmp_path: Path, text: str) -> None:
    """A ``command/done`` of kind error whose text is no outcome of the plugin's is DSH's (its refusal of an image, a
    cancel): the handler never ran the op, so it reads as not run, with DSH's words as the reason, never as rejected."""
    [run] = td_pair("c1", CHECKPOINT, None)
    done = {"type": "command/done", "data": {"commandId": "c1", "kind": "error", "text": text}}
    session = load_session(dsh_log(tmp_path / "s", tail=[run, orjson.dumps(done).decode()]))
    [command] = td_commands(session)
    assert command.outcome == {
        "requestId": "req-1",
        "op": "checkpoint",
        "outcome": "not run",
        "error": f"DSH did not run this td command: {text}",
    }
    assert not command.applied and marks(session) == []
