"""Rewind to any active mark, and the tool's result object (seed 001 §2.d: ``→ {markId, foldedNodes, start,
end, foldedChars, reportChars}``)."""

from __future__ import annotations

import json

import pytest
from test_rewind_support import Log

from core.policies.checkpoint import active_mark, active_marks, find_mark, plan_checkpoint
from core.policies.rewind import (
    BAD_ARGUMENTS,
    EMPTY_REGION,
    NO_CHECKPOINT,
    RESULT_KEYS,
    RewindError,
    parse_rewind_arguments,
    plan_rewind,
    preview_rewind,
    rewind_tool_result,
)
from core.policies.rewind_config import RewindConfig

HEADER = {"config": {"provider": "deepseek", "model": "deepseek-chat"}, "system": "sys", "tools": []}


class Fixed:
    kind = "model"

    def write(self, request: object) -> str:
        return "## Findings\n- ok"


def two_marks() -> Log:
    """Mark 1, a long exploration, mark 2, a second exploration, then the rewind call."""
    log = Log(request_header=HEADER)
    log.user("Find the cause")
    log.extend(plan_checkpoint(log.session, "first"))
    log.tool("c1", "bash", '{"command":"ls"}', "a.py b.py " * 40)
    log.extend(plan_checkpoint(log.session, "second"))
    log.tool("c2", "bash", '{"command":"cat a.py"}', "print(1)\n" * 40)
    log.rewind_call("rw")
    return log


def test_the_tool_returns_the_contracts_result_object_including_mark_id() -> None:
    log = two_marks()
    plan = plan_rewind(log.session, RewindConfig(), Fixed())
    returned = json.loads(rewind_tool_result(plan.result))
    assert list(returned) == list(RESULT_KEYS)
    assert returned == plan.result and returned["markId"] == 2


def test_rewinding_to_an_older_active_mark_folds_from_its_anchor_and_completes_the_newer_mark() -> None:
    log = two_marks()
    first = find_mark(log.session, 1)
    preview = preview_rewind(log.session, mark_id=1)
    assert preview.region.start > first.anchor - 1 and preview.mark.mark_id == 1
    plan = plan_rewind(log.session, RewindConfig(), Fixed(), mark_id=1)
    assert plan.result["markId"] == 1
    assert plan.result["start"] == preview.region.start and plan.result["foldedNodes"] == 4
    log.extend(plan.events)
    assert active_marks(log.session) == [] and active_mark(log.session) is None


def test_rewinding_to_the_newest_mark_leaves_the_older_one_active_for_a_later_rewind() -> None:
    log = two_marks()
    log.extend(plan_rewind(log.session, RewindConfig(), Fixed(), mark_id=2).events)
    assert [m.mark_id for m in active_marks(log.session)] == [1]
    assert active_mark(log.session) is None  # the turn guard follows the seed: only the latest mark counts
    log.result("rw", "{}")
    log.rewind_call("rw2")
    plan = plan_rewind(log.session, RewindConfig(), Fixed(), mark_id=1)
    assert plan.result["markId"] == 1
    log.extend(plan.events)
    assert active_marks(log.session) == []


def test_a_folded_or_unknown_mark_is_refused_with_a_classified_error() -> None:
    log = two_marks()
    log.extend(plan_rewind(log.session, RewindConfig(), Fixed(), mark_id=1).events)
    with pytest.raises(RewindError) as folded:
        plan_rewind(log.session, RewindConfig(), Fixed(), mark_id=2)
    assert folded.value.code == EMPTY_REGION
    with pytest.raises(RewindError) as unknown:
        preview_rewind(log.session, mark_id=5)
    assert unknown.value.code == NO_CHECKPOINT and "mark 5" in str(unknown.value)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [("", None), ("{}", None), ('{"markId": 3}', 3), ('{"markId": 2.0}', 2), ('{"markId": 1e1}', 10)],
)
def test_rewind_arguments_name_an_optional_mark(arguments: str, expected: int | None) -> None:
    """A whole number written with a fraction or an exponent is that integer, as the workspace tools' integer
    arguments and JSON Schema's ``integer`` take it (core.shared.values.whole_number); 2.0 was refused before."""
    mark_id = parse_rewind_arguments(arguments)
    assert mark_id == expected and type(mark_id) is type(expected)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("{", "not valid JSON"),
        ("[]", "JSON object"),
        ('{"mark": 1}', "unknown argument 'mark'"),
        ('{"markId": 0}', "positive integer"),
        ('{"markId": true}', "positive integer"),
        ('{"markId": "2"}', "positive integer"),
        ('{"markId": 2.5}', "positive integer (got 2.5)"),
        ('{"markId": 0.0}', "positive integer (got 0)"),
    ],
)
def test_bad_rewind_arguments_get_a_clear_message(arguments: str, message: str) -> None:
    with pytest.raises(RewindError) as info:
        parse_rewind_arguments(arguments)
    assert info.value.code == BAD_ARGUMENTS and message in str(info.value)


@pytest.mark.parametrize(
    ("mark", "said"),
    [("k" * 100_000, '"' + "k" * 79 + '…" (100,000 characters)'), ("a\u202eb\x9b", '"a\\u202eb\\u009b"')],
    ids=["long", "controls"],
)
def test_a_refused_mark_id_is_shown_cut_and_escaped(mark: str, said: str) -> None:
    """A markId that is no integer came back in the refusal whole (100,000 characters into the model's context and
    the log) with its BiDi and C1 controls as they are; it is shown as the other tools show a refused value."""
    with pytest.raises(RewindError) as info:
        parse_rewind_arguments(json.dumps({"markId": mark}))
    assert str(info.value) == f"rewind: markId must be a positive integer (got {said})"
