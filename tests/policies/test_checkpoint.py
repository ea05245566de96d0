"""Checkpoint marks: numbering, anchors, completion by folds, reconstruction from a log file, the model tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_rewind_support import HEADER, Log

from core.policies.checkpoint import (
    CHECKPOINT_EVENT,
    REWIND_EVENT,
    CheckpointError,
    active_mark,
    active_marks,
    checkpoint_result,
    checkpoint_tool_schema,
    find_mark,
    latest_mark,
    marks,
    parse_checkpoint_arguments,
    plan_checkpoint,
    render_checkpoint_result,
)
from core.read.load import load_session


def test_first_mark_is_numbered_one_and_anchored_at_its_own_seq() -> None:
    log = Log()
    log.turn_start()
    log.user("find the bug")
    (event,) = plan_checkpoint(log.session, "locate the failing parser", by="operator")
    assert event == {
        "type": CHECKPOINT_EVENT,
        "data": {
            "markId": 1,
            "anchor": 2,
            "objective": "locate the failing parser",
            "by": "operator",
            "turn": 1,
        },
        "ignorable": True,
    }
    (seq,) = log.extend([event])
    assert seq == 2
    mark = active_mark(log.session)
    assert mark is not None
    assert (mark.mark_id, mark.anchor, mark.seq, mark.by, mark.turn) == (1, 2, 2, "operator", 1)


def test_mark_ids_increase_and_the_latest_mark_is_the_active_one() -> None:
    log = Log()
    log.turn_start()
    log.extend(plan_checkpoint(log.session))
    log.user("more")
    log.extend(plan_checkpoint(log.session, "second"))
    assert [m.mark_id for m in marks(log.session)] == [1, 2]
    latest = latest_mark(log.session)
    assert latest is not None and latest.mark_id == 2 and latest.objective == "second"
    assert "objective" not in log.session.events[1]["data"]


def test_a_fold_naming_the_latest_mark_completes_it() -> None:
    log = Log()
    log.turn_start()
    log.extend(plan_checkpoint(log.session))
    fold_seq = log.add(REWIND_EVENT, {"markId": 1}, ignorable=True)
    assert active_mark(log.session) is None
    latest = latest_mark(log.session)
    assert latest is not None and latest.folded_by == fold_seq and not latest.active
    assert marks(log.session)[0].folded_by == fold_seq
    (event,) = plan_checkpoint(log.session)
    assert event["data"]["markId"] == 2


def test_a_fold_to_an_older_mark_completes_it_and_every_later_mark_but_not_earlier_ones() -> None:
    log = Log()
    log.turn_start()
    log.extend(plan_checkpoint(log.session))
    log.extend(plan_checkpoint(log.session))
    log.extend(plan_checkpoint(log.session))
    fold_seq = log.add(REWIND_EVENT, {"markId": 2}, ignorable=True)
    assert [m.folded_by for m in marks(log.session)] == [None, fold_seq, fold_seq]
    assert [m.mark_id for m in active_marks(log.session)] == [1]
    assert active_mark(log.session) is None  # the latest mark is folded: the seed's hasActive is false
    latest = latest_mark(log.session)
    assert latest is not None and latest.mark_id == 3 and latest.folded_by == fold_seq
    assert find_mark(log.session, 2).folded_by == fold_seq
    assert find_mark(log.session, 9) is None


def test_a_fold_naming_no_known_mark_changes_nothing() -> None:
    log = Log()
    log.turn_start()
    log.extend(plan_checkpoint(log.session))
    log.add(REWIND_EVENT, {"markId": 0}, ignorable=True)
    log.add(REWIND_EVENT, {"markId": 7}, ignorable=True)
    assert active_mark(log.session).mark_id == 1
    assert [m.folded_by for m in marks(log.session)] == [None]


def test_malformed_mark_events_are_ignored_not_fatal() -> None:
    log = Log()
    log.turn_start()
    log.extend(plan_checkpoint(log.session))
    log.add(CHECKPOINT_EVENT, {"markId": "two", "anchor": None}, ignorable=True)
    log.add(CHECKPOINT_EVENT, ["not", "a", "mapping"], ignorable=True)
    mark = latest_mark(log.session)
    assert mark is not None and mark.mark_id == 1
    assert len(marks(log.session)) == 1


def test_state_is_reconstructed_from_the_log_after_a_restart(tmp_path: Path) -> None:
    log = Log()
    log.turn_start()
    log.user("explore")
    log.extend(plan_checkpoint(log.session, "map the config loader"))
    log.assistant({"type": "text", "text": "looking"})
    path = tmp_path / "session.jsonl"
    lines = [json.dumps(HEADER | {"id": log.session.id})] + [json.dumps(e) for e in log.session.events]
    path.write_text("\n".join(lines) + "\n")
    reopened = load_session(path)
    mark = active_mark(reopened)
    assert mark is not None
    assert (mark.mark_id, mark.anchor, mark.objective) == (1, 2, "map the config loader")

    with path.open("a") as f:
        f.write(
            json.dumps(
                {
                    "type": REWIND_EVENT,
                    "seq": reopened.next_seq,
                    "time": 0,
                    "data": {"markId": 1},
                    "ignorable": True,
                }
            )
            + "\n"
        )
    assert active_mark(load_session(path)) is None


def test_plan_checkpoint_rejects_an_unknown_author() -> None:
    with pytest.raises(CheckpointError, match="'by' must be model or operator"):
        plan_checkpoint(Log().session, by="robot")


def test_checkpoint_tool_schema_and_arguments() -> None:
    schema = checkpoint_tool_schema("rewind")
    assert "call `rewind`" in schema["description"]
    assert "call `fold_back`" in checkpoint_tool_schema("fold_back")["description"]  # rewind.toolName
    assert schema["name"] == "checkpoint"
    assert schema["parameters"]["properties"]["objective"]["type"] == "string"
    assert "required" not in schema["parameters"]
    assert parse_checkpoint_arguments('{"objective": "why is it slow"}') == "why is it slow"
    assert parse_checkpoint_arguments("{}") is None
    assert parse_checkpoint_arguments("") is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("{oops", "not valid JSON"),
        ("[1]", "must be a JSON object"),
        ('{"objective": 3}', r"objective must be a string \(got 3\)"),  # the value, as rewind's and the tools' say
        ('{"objective": ["x"]}', r"objective must be a string \(got \[\"x\"\]\)"),
        ('{"goal": "x"}', "unknown argument 'goal'"),
    ],
)
def test_bad_checkpoint_arguments_get_a_clear_message(arguments: str, message: str) -> None:
    with pytest.raises(CheckpointError, match=message):
        parse_checkpoint_arguments(arguments)


def test_checkpoint_result_and_rendering() -> None:
    log = Log()
    (event,) = plan_checkpoint(log.session, "trace the retry path")
    result = checkpoint_result(event)
    assert result == {"markId": 1, "anchor": 0, "objective": "trace the retry path"}
    text = render_checkpoint_result(result, "fold")
    assert text.startswith("Checkpoint 1 set at seq 0. Objective: trace the retry path.")
    assert "`fold`" in text
    plain = render_checkpoint_result(checkpoint_result(plan_checkpoint(log.session)[0]))
    assert "Objective" not in plain and "`rewind`" in plain


def test_a_hostile_name_a_model_sends_comes_back_cut_and_escaped() -> None:
    """An unknown argument's name (checkpoint, rewind), an unknown tool's or recall tool's name came back into the
    model's context and the log whole, as Python writes a string: 100,000 characters, or an escape sequence as
    Python's escapes. Each is named as other text from outside is: cut to 80 characters, its controls as escapes."""
    from core.host.toolbox import ToolBox
    from core.policies.recall import run_recall_tool

    long, hostile = "k" * 100_000, "a\x1b[2J\u202eb"
    texts = []
    for name in (long, hostile):
        with pytest.raises(CheckpointError) as info:
            parse_checkpoint_arguments(json.dumps({name: 1}))
        texts.append(str(info.value))
        texts.append(ToolBox.unavailable(name, {"read_file"}).text)
        texts.append(run_recall_tool(Log().session, name, {}).text)
    for text in texts:
        assert len(text) < 300 and not any(ch in text for ch in "\x1b\u202e"), text[:300]
    assert "unknown argument 'kkk" in texts[0] and "…'" in texts[0]
    assert texts[3:] == [
        "checkpoint: unknown argument 'a\\u001b[2J\\u202eb' (only 'objective' is accepted)",
        "Error: no tool named 'a\\u001b[2J\\u202eb' is available (available: read_file)",
        "no recall tool named 'a\\u001b[2J\\u202eb' (recall tools: recall_turn, recall_step, recall_search, expand_result)",
    ]


@pytest.mark.parametrize(
    ("objective", "said"),
    [("k" * 100_000, "k" * 79 + "…"), ("find\x1b[2J\nit\u202e", "find\\u001b[2J\\nit\\u202e")],
    ids=["long", "controls"],
)
def test_the_objective_a_checkpoint_result_repeats_is_cut_and_escaped(objective: str, said: str) -> None:
    """The checkpoint tool's result repeated the model's objective whole and as it came: 100,000 characters back into
    the model's context, an escape sequence or a newline into the log's text and the TUI; it is quoted as every other
    echo of a model's argument is (cut to 80 characters, controls as escapes). The mark keeps it whole."""
    (event,) = plan_checkpoint(Log().session, objective)
    assert event["data"]["objective"] == objective
    text = render_checkpoint_result(checkpoint_result(event))
    assert text.startswith(f"Checkpoint 1 set at seq 0. Objective: {said}. Explore"), text[:300]
