"""The policy screens' views, derived from real projections without running the TUI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.control.inbox import CANCELLED, UNKNOWN, ControlError
from core.policies import fold
from core.policies.checkpoint import plan_checkpoint
from core.policies.prolong import session_workspace
from core.policies.recall import run_recall_tool
from core.policies.report import ExtractiveReportWriter
from core.policies.rewind import plan_rewind
from core.read.load import load_session
from core.read.session import Session
from core.remote.inbox import MaybeWritten
from core.shared.errors import TapedeckError
from tests.conftest import FIXTURES
from tests.tui.screens_policy.harness import HEADER, LogBuilder, plain
from tests.tui.screens_policy.scenarios import CONFIG, STARTED_WITH, backoff, configured, demo, route, sealed
from tui.screens.checkpoints import derive_checkpoints, rewind_summary
from tui.screens.config import check_value, derive_config, effective_config, leaves
from tui.screens.folds import (
    EXPANDED,
    FOLDED,
    PINNED,
    PRUNED,
    RAW,
    backoff_text,
    derive_folds,
    derive_view,
    fold_line,
    original_text,
)
from tui.screens.policy_screen import (
    APPLIED,
    NOT_SENT,
    PENDING,
    REJECTED,
    SENDING,
    UNSURE,
    RequestLog,
    describe,
    logged,
    requests_for,
)
from tui.screens.prolong import derive_prolong, report_inputs
from tui.screens.router import compact, derive_routes, route_detail, route_line
from tui.screens.tape import NEXT_SEAL, ON_SURFACE, derive_tape, recall_preview


@pytest.fixture
def demo_session(tmp_path: Path) -> Session:
    return load_session(demo(tmp_path / "demo"))


# ---------------------------------------------------------------------------------------------- outcomes
def test_request_states_follow_the_inbox_write_and_the_logged_outcome() -> None:
    log = RequestLog()
    a = log.add("rewind", "rewind checkpoint 1")
    b = log.add("expand", "expand seq 7")
    c = log.add("config.set", "config.set x = 1")
    assert [i.state for i in log.items()] == [SENDING] * 3
    log.sent(a, "req-a")
    log.sent(b, "req-b")
    log.failed(c, "cannot open the control inbox")
    outcomes = {
        "req-a": {"requestId": "req-a", "op": "rewind", "outcome": "applied", "detail": {"foldedNodes": 4}},
    }
    items = log.poll(outcomes.get)
    assert [i.state for i in items] == [APPLIED, PENDING, NOT_SENT]
    assert items[1].reason == "waiting for the host"
    assert items[0].reason == "folded 4 nodes"  # the detail names no chars
    assert items[2].reason == "cannot open the control inbox"
    outcomes["req-b"] = {"requestId": "req-b", "op": "expand", "outcome": "rejected", "error": "not folded"}
    items = log.poll(outcomes.get)
    assert (items[1].state, items[1].reason) == (REJECTED, "not folded")


def test_a_request_core_says_may_have_been_written_is_unsure_and_still_watched() -> None:
    """A policy screen's request whose remote append lost its status showed "not sent" and was never polled, so the
    host applying it went unseen; a plain refusal, or a withdrawal's, stays "not sent"."""
    log = RequestLog()
    a, b, c = log.add("expand", "expand seq 7"), log.add("rewind", "rewind 1"), log.add("expand", "expand seq 9")
    assert log.send_failed(a, MaybeWritten("no exit status, so it may have been written", "req-a")).state == UNSURE
    assert log.send_failed(b, ControlError("the request could not be written (exit 5)")).state == NOT_SENT
    assert log.send_failed(c, MaybeWritten("the withdrawal may have been written", None)).state == NOT_SENT
    outcomes: dict[str, dict[str, Any]] = {}
    items = log.poll(outcomes.get)
    assert (items[0].state, items[0].reason) == (UNSURE, "no exit status, so it may have been written")
    outcomes["req-a"] = {"requestId": "req-a", "op": "expand", "outcome": "acknowledged"}
    assert log.poll(outcomes.get)[0].state == PENDING  # it was written after all
    outcomes["req-a"] = {"requestId": "req-a", "op": "expand", "outcome": "applied", "detail": "expanded"}
    assert [(i.state, i.reason) for i in log.poll(outcomes.get)][0] == (APPLIED, "expanded")


def test_p_still_pauses_after_a_pause_whose_append_may_have_been_written() -> None:
    """P refused to send a pause while one sent before was unanswered, "unsure" included: a remote append that lost
    its status and never reached the inbox is unsure for as long as the host runs, so P said "not sent twice" for
    good and the operator could not pause the run. A pause the host may never have seen does not hold the key (a
    second one, if both arrive, leaves the host paused); one sent and not answered yet still does."""
    from core.control.host_state import HostState
    from core.control.once import WAITING, held_back
    from tui.screens.control import ControlActions
    from tui.screens.policy_screen import requests_for

    class Keys(ControlActions):  # the app's side of the P key
        def __init__(self) -> None:
            self.live = self  # the live session: its state as the header shows it
            self.shown_host = HostState("running", 4242, 0, "tapedeck")
            self.sent: list[str] = []
            self.said: list[str] = []

        def notify(self, text: str, **_: Any) -> None:
            self.said.append(text)

        def send_control(self, op: str, _args: dict[str, Any], _label: str) -> None:
            self.sent.append(op)

    keys = Keys()
    requests = requests_for(keys.live)
    unsure = requests.add("pause", "pause")
    requests.send_failed(unsure, MaybeWritten("no exit status, so request r1 (pause) may have been written", "r1"))
    ControlActions.action_control_pause(keys)  # type: ignore[arg-type]
    assert (keys.sent, keys.said) == (["pause"], [])
    requests.sent(requests.add("pause", "pause"), "r2")  # written, not answered yet
    ControlActions.action_control_pause(keys)  # type: ignore[arg-type]
    assert keys.sent == ["pause"] and "not sent twice" in keys.said[0]
    assert keys.said[0] == held_back("pause", WAITING)  # the rule's words, the fleet's too (core.control.once)


def test_s_asks_no_second_stop_while_one_sent_from_here_waits_for_the_answer() -> None:
    """Only P held back a second request: S pressed again while a stop waited for the host's answer (the model call
    it interrupts can take a while to end) put up the confirm again and sent a second stop, which the host then
    refused. A stop sent from here and not answered holds S as a pause holds P; one answered does not."""
    from core.control.host_state import HostState
    from tui.screens.control import ControlActions
    from tui.screens.policy_screen import requests_for

    class Keys(ControlActions):  # the app's side of the S key
        def __init__(self) -> None:
            self.live = self
            self.host = HostState("running", 4242, 0, "tapedeck")
            self.asked: list[object] = []
            self.said: list[str] = []

        def notify(self, text: str, **_: Any) -> None:
            self.said.append(text)

        def push_screen(self, screen: object, _then: object) -> None:
            self.asked.append(screen)

    keys = Keys()
    requests = requests_for(keys.live)
    ControlActions.action_control_stop(keys)  # type: ignore[arg-type]
    assert len(keys.asked) == 1 and keys.said == []
    stop = requests.add("stop", "stop")
    requests.sent(stop, "r1")  # written, not answered yet
    ControlActions.action_control_stop(keys)  # type: ignore[arg-type]
    assert len(keys.asked) == 1 and "stop sent from here waits" in keys.said[0] and "not sent twice" in keys.said[0]
    requests.poll(lambda rid: {"requestId": rid, "op": "stop", "outcome": "rejected", "error": "no turn"},
                  lambda: None, lambda item: None)  # fmt: skip
    ControlActions.action_control_stop(keys)  # type: ignore[arg-type]
    assert len(keys.asked) == 2


def test_a_long_message_or_objective_is_named_cut_with_a_mark_in_the_toasts_and_the_outcomes() -> None:
    """A request is named in its toasts and on the outcome panel by its label: a message's was cut at 40
    characters with no mark (it read as the whole message), a checkpoint's objective not at all (a pasted page made
    a toast taller than the screen). Each label is cut to ``LABEL_CELLS`` cells, the cut marked with ``…``."""
    from rich.cells import cell_len

    from core.control.host_state import HostState
    from tui.screens.control import ControlActions
    from tui.screens.policy_screen import LABEL_CELLS, requests_for

    class Keys(ControlActions):  # the app's side of m and K, up to the request it tracks
        BINDINGS: list[Any] = []
        _keymap: dict[str, str] = {}

        def __init__(self) -> None:
            self.live = self
            self.host = HostState("running", 4242, 0, "tapedeck")
            self.asked: list[Any] = []

        def get_key_display(self, binding: Any) -> str:
            return str(binding.key)

        def push_screen(self, _screen: object, then: Any) -> None:
            self.asked.append(then)

        def _show_outcomes(self, _items: object) -> None:
            pass

        def _send_control(self, *_: object) -> None:
            pass

    keys = Keys()
    text = "write a failing test for the flaky case first, then run the whole suite and report back " * 10
    ControlActions.action_control_message(keys)  # type: ignore[arg-type]
    ControlActions.action_control_checkpoint(keys)  # type: ignore[arg-type]
    for answer in keys.asked:
        answer(text)
    labels = [item.label for item in requests_for(keys.live).items()]
    assert [label.split(": ")[0] for label in labels] == ["message", "checkpoint"], labels
    for label in labels:
        assert label.endswith("…") and cell_len(label) <= LABEL_CELLS and text.startswith(label.split(": ")[1][:-1])


def test_a_failed_withdrawal_is_reported_and_the_poll_goes_on() -> None:
    """A withdrawal that raised escaped the watch worker: the request stayed pending, nothing was said, the requests
    after it went unpolled, and every later poll tried again as silently."""
    log = RequestLog()
    a, b = log.add("expand", "expand seq 7"), log.add("rewind", "rewind 1")
    log.sent(a, "req-a")
    log.sent(b, "req-b")
    tried: list[str] = []

    def withdraw(request_id: str) -> None:
        tried.append(request_id)
        if request_id == "req-a":
            raise MaybeWritten("no exit status, so the withdrawal may have been written", None)

    items = log.poll({}.get, lambda: "the host exited", withdraw)
    assert [i.state for i in items] == [UNKNOWN, CANCELLED]
    assert items[0].reason == (
        "the host exited; withdrawing the request failed, so a later host may still apply it: "
        "no exit status, so the withdrawal may have been written"
    )
    assert items[1].reason == "the host exited; the request was withdrawn"
    assert [i.state for i in log.poll({}.get, lambda: "the host exited", withdraw)] == [UNKNOWN, CANCELLED]
    assert tried == ["req-a", "req-b"]  # a final state: not withdrawn again


def test_describe_outcome_values() -> None:
    assert describe(None) == ""
    assert describe("boom") == "boom"
    assert describe({"message": "region changed", "code": "CHANGED"}) == "region changed (CHANGED)"
    assert describe({"markId": 1, "seqs": [4, 5]}) == "markId: 1; seqs: [4,5]"
    assert describe(3) == "3"


def test_request_logs_are_shared_per_live_session() -> None:
    class Live:
        pass

    one, two = Live(), Live()
    assert requests_for(one) is requests_for(one)
    assert requests_for(one) is not requests_for(two)


def test_logged_finds_events_of_one_type_in_order(demo_session: Session) -> None:
    routes = [seq for seq, _ in logged(demo_session, "tapedeck/route")]
    assert routes == [
        s for s in range(demo_session.next_seq) if demo_session.events[s]["type"] == "tapedeck/route"
    ]
    assert len(routes) == 3
    assert list(logged(demo_session, "tapedeck/nothing")) == []


# ---------------------------------------------------------------------------------------------- folds
def test_fold_rows_name_every_state(demo_session: Session) -> None:
    lines = derive_folds(demo_session)
    by_path = {(line.tool, line.path): line for line in lines}
    assert by_path[("read_file", "data/scores.csv")].state == EXPANDED
    assert by_path[("read_file", "data/scores.csv")].backoff == "0/1 exp"  # an operator expand is not counted
    archive = by_path[("read_file", "data/archive.csv")]
    assert archive.state == FOLDED
    assert archive.surface_chars < archive.raw_chars
    assert archive.note == f"data digest of seq {archive.original}"
    build = next(line for line in lines if line.tool == "bash" and line.raw_chars > 1000)
    assert build.state == PRUNED and build.surface_chars < build.raw_chars
    error = next(line for line in lines if line.tool == "bash" and line.raw_chars < 100)
    assert (error.state, error.policy) == (RAW, "error result")
    assert [line.address for line in lines] == ["1.1.1", "1.1.2", "1.2.1", "1.2.2", "1.3.1", "1.4.1"]


def test_fold_line_maps_pending_pinned_and_backed_off_rows() -> None:
    def row(status: str, **kw: object) -> fold.FoldRow:
        values = dict(seq=5, original=5, turn=1, step=1, call=1, tool="read", path="a", status=status,
                      kind="data", chars_before=4000, chars_after=900, reason="why")  # fmt: skip
        values.update(kw)
        return fold.FoldRow(**values)  # type: ignore[arg-type]

    pending = fold_line(row(fold.FOLD))
    assert (pending.state, pending.policy, pending.surface_chars) == (RAW, "folds next step", 4000)
    assert pending.note == "would fold to 900 chars (data digest)"
    assert fold_line(row(fold.PINNED)).state == PINNED
    backed = fold_line(row(fold.BACKED_OFF))
    assert (backed.state, backed.backoff) == (RAW, "backed off")  # no ledger: the status alone


def test_backoff_cell_shows_the_resource_ledger() -> None:
    def state(folds: int, expansions: int, backed_off: bool = False) -> fold.ResourceBackoff:
        return fold.ResourceBackoff('["read","path","a"]', folds, expansions, backed_off, 2)

    assert backoff_text(state(3, 0), fold.FOLDED) == ("0/3 exp", "")
    assert backoff_text(state(3, 1), fold.FOLD) == ("1/3 exp", "expanding")
    assert backoff_text(state(2, 2, True), fold.BACKED_OFF) == ("backed off (2/2)", "backed-off")
    assert backoff_text(state(0, 0), fold.KEPT) == ("–", "none")
    assert backoff_text(None, fold.REPLACED) == ("", "")


def test_fold_rows_show_per_resource_backoff(tmp_path: Path) -> None:
    view = derive_view(load_session(backoff(tmp_path / "s")))
    cells = [(line.address, line.tool, line.state, line.policy, line.backoff) for line in view.lines]
    assert cells == [
        ("1.1.1", "read_file", FOLDED, "", "backed off (2/2)"),
        ("1.2.1", "read_file", FOLDED, "", "backed off (2/2)"),
        ("1.3.1", "expand_result", RAW, "recall result", "–"),
        ("1.4.1", "expand_result", RAW, "recall result", "–"),  # a grep expansion: not counted
        ("1.5.1", "expand_result", RAW, "recall result", "–"),
        ("1.5.2", "read_file", FOLDED, "", "1/1 exp"),
        ("1.6.1", "expand_result", RAW, "recall result", "–"),
        ("1.7.1", "read_file", RAW, "backed off", "backed off (2/2)"),
        ("1.7.2", "bash", RAW, "kept", "–"),
    ]
    assert (view.backoff_after, view.backed_off) == (2, 1)


def test_original_text_is_the_full_result(demo_session: Session) -> None:
    archive = next(line for line in derive_folds(demo_session) if line.path == "data/archive.csv")
    text = original_text(demo_session, archive.original)
    assert text.startswith("id,name,score,status\n0,beta-000")
    assert "149,beta-149" in text


# ---------------------------------------------------------------------------------------------- checkpoints
def test_rewind_preview_names_the_region(demo_session: Session) -> None:
    view = derive_checkpoints(demo_session)
    chosen = view.preview_for(None)
    assert view.problem is None and chosen is not None and view.preview_for(1) is chosen
    assert [m.mark_id for m in view.marks] == [1]
    region = chosen.preview.region
    assert [n.seq for n in chosen.nodes] == list(region.shadowed_seqs)
    assert [n.kind for n in chosen.nodes] == ["assistant", "result grep", "assistant", "result read_file"]
    assert chosen.tools == (("grep", 1), ("read_file", 1))
    assert chosen.covers() == (
        f"4 nodes (seq {region.start}..{region.end}) · {chosen.preview.folded_chars:,} chars · turn 1 · "
        "tool results: grep×1, read_file×1"
    )
    body = plain(rewind_summary(view, chosen))
    assert "Checkpoint 1 (find the empty-input bug)" in body
    assert "result read_file" in body


def test_rewind_preview_explains_why_it_would_fail(tmp_path: Path) -> None:
    log = LogBuilder()
    log.start_turn("look around")
    assert derive_checkpoints(log.session()).problem == "this session has no checkpoint mark"
    log.plan(lambda s: plan_checkpoint(s, None, by="operator"))
    log.call("bash", {"command": "ls"}, "a.txt")
    log.end_step()
    log.start_step()
    log.say("Nothing else to see.")
    session = log.session()
    plan = plan_rewind(session, CONFIG.rewind, ExtractiveReportWriter(), by="operator")
    log.add(*plan.events)
    view = derive_checkpoints(log.session())
    assert view.previews == ()
    assert view.problem == f"checkpoint 1 was already folded at seq {log.session().next_seq - 1}; place a new one"
    assert view.why_not(1) == f"Nothing to rewind: {view.problem.removesuffix('; place a new one')}."
    assert not view.marks[0].active


# ---------------------------------------------------------------------------------------------- config
def test_effective_config_replays_logged_changes(demo_session: Session) -> None:
    config = effective_config(demo_session)
    assert config.get("slice.history.keepRecentTurns") == 1
    view = derive_config(demo_session)
    assert ("slice.history.keepRecentTurns", 1) in view.values
    assert [(c.key, c.old, c.new, c.by) for c in view.history] == [
        ("slice.history.keepRecentTurns", 0, 1, "operator")
    ]



def test_the_config_view_starts_from_the_config_the_session_logged(tmp_path: Path) -> None:
    session = load_session(configured(tmp_path / "s", STARTED_WITH))
    values = dict(derive_config(session).values)
    assert values["slice.history.keepRecentTurns"] == 2  # started at 3, then the logged change
    assert values["slice.fold.pinSteps"] == 2
    assert values["prolong.logWindow"] == 5
    assert values["rewind.reportLanguage"] == "zh"
    assert values["slice.fold.pinMaxChars"] == 8000  # a key the session left alone keeps its default



def test_a_logged_config_that_does_not_validate_is_named_not_replaced_by_defaults(tmp_path: Path) -> None:
    session = load_session(configured(tmp_path / "s", {"slice": {"history": {"keepRecentTurns": -4}}}))
    with pytest.raises(TapedeckError, match="the session log's config does not validate here: .*keepRecentTurns"):
        derive_config(session)
    with pytest.raises(TapedeckError, match="does not validate here"):
        derive_prolong(session)


def test_leaves_stop_at_lists_and_scalars() -> None:
    tree = {"a": {"b": 1, "c": {"d": [1, 2]}}, "e": None, "f": {}}
    assert list(leaves(tree)) == [("a.b", 1), ("a.c.d", [1, 2]), ("e", None), ("f", {})]


def test_check_value_refuses_host_keys_before_anything_is_sent(demo_session: Session) -> None:
    config = effective_config(demo_session)
    check = check_value(config, "host.shell.sandbox", '"off"')
    assert check.error == (
        "config.set: host.shell.sandbox is set only when the host starts (its --config file); a running host keeps it"
    )


def test_check_value_gives_the_diff_or_the_validator_message(demo_session: Session) -> None:
    config = effective_config(demo_session)
    ok = check_value(config, "slice.history.keepRecentTurns", "3")
    assert ok.error is None and ok.value == 3
    assert ok.diff == (("slice.history.keepRecentTurns", 1, 3),)
    bad = check_value(config, "slice.history.keepRecentTurns", "-1")
    assert bad.error == "slice.history.keepRecentTurns must be from 0 to 10,000 (got -1)"
    assert check_value(config, "rewind.reportLanguage", "zh").diff == (("rewind.reportLanguage", "en", "zh"),)
    assert check_value(config, "slice.fold.pinSteps", "0").diff == ()
    unknown = check_value(config, "slcie.fold.pinSteps", "1")
    said = "Unknown configuration section slcie. Did you mean slice?"
    assert unknown.error is not None and said in unknown.error


# ---------------------------------------------------------------------------------------------- router
def test_routes_are_read_back_per_step(demo_session: Session) -> None:
    lines = derive_routes(demo_session)
    assert [(r.turn, r.step, r.phase) for r in lines] == [
        (1, 1, "normal"),
        (1, 2, "normal"),
        (1, 3, "checkpoint"),
    ]
    last = lines[-1]
    assert (last.risk, last.score, last.reason, last.prune_level) == ("boundary", "6", "selected", "moderate")
    assert (last.caps, last.budgets, last.pressure, last.chars_removed) == (
        "32768",
        "5/9",
        "52%",
        2710,
    )
    assert lines[0].risk == "none"
    assert "prunedSeqs: [6]" in route_detail(last).plain


def test_route_fields_tolerate_missing_and_odd_values() -> None:
    assert compact(None) == "-"
    assert compact({"a": [1, 2], "b": True}) == "a=1,2 b=yes"
    odd = route_line(3, {"caps": {"maxTokens": 9, "x": 1}, "budgets": {"soft": 2}})
    assert (odd.caps, odd.budgets) == ("maxTokens=9 x=1", "soft=2")
    log = LogBuilder()
    log.add({"type": "tapedeck/route", "data": {"turn": "x", "risk": "odd"}, "ignorable": True})
    (line,) = derive_routes(log.session())
    assert (line.turn, line.risk, line.task_class, line.chars_removed) == (None, "none", "-", 0)


# ---------------------------------------------------------------------------------------------- tape
def test_tape_lists_entries_and_the_next_seal(tmp_path: Path) -> None:
    session = load_session(sealed(tmp_path / "s"))
    view = derive_tape(session)
    assert [(e.span, e.state) for e in view.entries] == [
        ("1-1", ON_SURFACE),
        ("2-2", ON_SURFACE),
        ("3-3", NEXT_SEAL),
    ]
    first = view.entries[0]
    assert first.text.startswith("[slice tape v1 · turns 1-1 · 1 turn(s) sealed")
    assert first.nodes == 3 and first.chars == len(first.text)
    assert view.entries[2].seq == session.next_seq
    assert view.keep_recent_turns == 0


def test_recall_preview_is_what_the_model_gets(tmp_path: Path) -> None:
    session = load_session(sealed(tmp_path / "s"))
    page = recall_preview(session, 2, "dialogue")
    expected = run_recall_tool(session, "recall_turn", {"turn": "2"}).text
    assert page == f'recall_turn({{"turn":"2"}})\n\n{expected}'
    assert "Explain why test_empty fails." in page
    full = recall_preview(session, 2, "full")
    assert full.startswith('recall_turn({"turn":"2","view":"full"})')
    assert recall_preview(session, 9, "dialogue").startswith(
        'recall_turn({"turn":"9"}) → error: no recorded turn 9'
    )


# ---------------------------------------------------------------------------------------------- prolong
def test_prolong_report_uses_the_host_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = LogBuilder()
    log.events[0]["data"] = {**log.events[0]["data"], "workspace": str(workspace)}
    log.start_turn("hello")
    session = log.session()
    assert session_workspace(session) == workspace
    report = derive_prolong(session)
    assert report.splitlines()[:3] == [
        "prolong-memory status",
        "log file: log.txt (per-session workspace)",
        "window: full",
    ]
    assert f"path: {workspace / 'log.txt'}" in report



def test_the_prolong_report_says_status_is_off_when_the_session_turned_the_command_off(tmp_path: Path) -> None:
    session = load_session(configured(tmp_path / "s", STARTED_WITH))
    report = derive_prolong(session)
    assert report.splitlines()[0] == "prolong-memory status: off for this session"
    assert "prolong.registerCommand is false" in report
    assert "window: last 5 sections" in report  # the log file itself is still kept, as configured
    assert "writable=" not in report and "denied tool calls" not in report


def test_prolong_falls_back_to_the_header_cwd_and_explains_a_missing_one() -> None:
    log = LogBuilder(host=False)
    log.add(route(1, 1))
    assert session_workspace(log.session()) == Path(HEADER["cwd"])
    dsh = LogBuilder({**HEADER, "cwd": "{{cwd}}"}, host=False)
    with pytest.raises(TapedeckError, match=r"header's cwd \(\"\{\{cwd\}\}\"\) is not an absolute path"):
        derive_prolong(dsh.session())
    hostile = LogBuilder({**HEADER, "cwd": "rel\x1b[2J" + "x" * 1000}, host=False)  # shown as the log's JSON, cut
    with pytest.raises(TapedeckError) as info:
        derive_prolong(hostile.session())
    assert str(info.value).startswith("this session names no workspace: no tapedeck/host event names one, and the header's cwd "
                                      '("rel\\u001b[2J' + "x" * 72 + '…" (1,007 characters)) is not an absolute path')


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_every_view_derives_from_real_dsh_logs(name: str) -> None:
    session = load_session(FIXTURES / name)
    folds = derive_folds(session)
    assert {line.seq for line in folds} == {
        seq for seq in session.surface if session.events[seq]["type"] == "tool/result"
    }
    assert derive_checkpoints(session).problem == "this session has no checkpoint mark"
    assert derive_routes(session) == []
    assert derive_config(session).history == ()
    tape = derive_tape(session)
    assert all(entry.state == NEXT_SEAL for entry in tape.entries)
    with pytest.raises(TapedeckError, match="names no workspace"):
        derive_prolong(session)


def test_prolong_report_inputs_change_only_with_what_the_report_reads(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = LogBuilder()
    log.events[0]["data"] = {**log.events[0]["data"], "workspace": str(workspace)}
    log.start_turn("hello")
    session = log.session()

    def catch_up() -> None:
        for event in log.events[session.next_seq :]:
            session.apply(event)

    before = report_inputs(session)
    log.say("thinking")
    catch_up()
    assert report_inputs(session) == before
    (workspace / "log.txt").write_text("=== probe\n")
    with_file = report_inputs(session)
    assert with_file != before
    log.call("bash", {"command": "cat log.txt"}, "denied", is_error=True)
    catch_up()
    assert report_inputs(session) != with_file
