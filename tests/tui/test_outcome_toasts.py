"""The toast of a request's outcome is a sentence in the operator's terms for every op and outcome: an applied
config.set toasted ``Config.set slice.fold.pinSteps = 2: key=slice.fold.pinSteps, old=0, new=2.``, its op name
capitalised and the host's detail dumped as key=value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from core.control.inbox import APPLIED, CANCELLED, EXPIRED, PENDING, REJECTED, UNKNOWN, outcome_event
from core.control.ops import DSH_OPS
from tests.tui.logs import policy_log
from tests.tui.pilot import make_app, raised_toasts, settle, until
from tui.screens.control import outcome_said
from tui.screens.policy_screen import NOT_SENT, UNSURE, TrackedRequest

pytestmark = pytest.mark.anyio
STOP = {"reason": "stopped by the operator from the TUI"}

# op, args, outcome, error, detail (as our host writes them), the toast
HOST_ANSWERS: list[tuple[str, dict[str, Any], str, str | None, Any, str]] = [
    ("config.set", {"key": "slice.fold.pinSteps", "value": 2}, APPLIED, None,
     {"key": "slice.fold.pinSteps", "old": 0, "new": 2}, "slice.fold.pinSteps set to 2 (was 0)."),
    ("checkpoint", {"objective": "try pyproject"}, APPLIED, None,
     {"markId": 3, "anchor": 40, "objective": "try pyproject"}, "Checkpoint 3 placed at seq 40: try pyproject."),
    ("rewind", {"markId": 3}, APPLIED, None,
     {"markId": 3, "foldedNodes": 4, "start": 41, "end": 48, "foldedChars": 1200, "reportChars": 300, "seq": 50},
     "Rewound to checkpoint 3: folded 4 nodes / 1.2k chars."),
    ("expand", {"seq": 6}, APPLIED, None, {"seq": 6}, "The original of seq 6 is back on the surface."),
    ("pause", {}, APPLIED, None, None, "The agent holds before its next model or tool call."),
    ("resume", {}, APPLIED, None, {"wasPaused": True}, "The agent goes on."),
    ("message", {"text": "use the fixture"}, APPLIED, None, {"queued": "next step", "text": "use the fixture"},
     "Your message reaches the model at its next step."),
    ("message", {"text": "a note", "kind": "note"}, APPLIED, None, {"note": "a note"},
     "Your note is in the log; the model does not see it."),
    ("stop", STOP, APPLIED, None, STOP, "The agent was stopped (stopped by the operator from the TUI)."),
    ("config.set", {"key": "slice.nope", "value": 1}, REJECTED, "config.set: unknown key 'slice.nope'", None,
     "The change of slice.nope to 1 was refused: config.set: unknown key 'slice.nope'."),
    ("checkpoint", {}, EXPIRED, "expired 30 s after it was sent", None,
     "The checkpoint expired before it was applied: expired 30 s after it was sent."),
    ("message", {"text": "later"}, CANCELLED, "withdrawn by its sender", None,
     "Your message was cancelled: withdrawn by its sender."),
    ("stop", STOP, UNKNOWN, "the host died while it ran it", None,
     "Whether the stop took effect is not known: the host died while it ran it."),
]  # fmt: skip


def _inbox(path: Path) -> list[dict[str, Any]]:
    inbox = path.parent / "control.jsonl"
    return [orjson.loads(line) for line in inbox.read_bytes().splitlines()] if inbox.exists() else []


async def test_each_outcome_our_host_gives_is_toasted_in_the_operators_words(tmp_path: Path) -> None:
    """Every op sent from the TUI, answered by our host with its detail (or its error): each toast says what
    became of it as a sentence, with no op name capitalised and no key=value."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path, follow=True)
    toasts = raised_toasts(app)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: app.control_unavailable() is None)
        for op, args, *_ in HOST_ANSWERS:
            before = len(toasts)  # sent one at a time: in order
            app.send_control(op, args, op)
            await until(pilot, lambda before=before: len(toasts) > before)
        await until(pilot, lambda: len(_inbox(path)) == len(HOST_ANSWERS))
        lines = []
        seq = len(path.read_bytes().splitlines()) - 1
        for n, (request, (_op, _args, outcome, error, detail, _said)) in enumerate(
            zip(_inbox(path), HOST_ANSWERS, strict=True)
        ):
            event = outcome_event(request, outcome, error, detail)
            lines.append(orjson.dumps({**event, "seq": seq + n, "time": 1786000000000 + seq + n}) + b"\n")
        with path.open("ab") as log:
            log.write(b"".join(lines))
        titles = {outcome.capitalize() for _op, _args, outcome, *_ in HOST_ANSWERS}
        await until(pilot, lambda: sum(t.title in titles for t in toasts) == len(HOST_ANSWERS))
        said = sorted(t.message for t in toasts if t.title in titles)
        assert said == sorted(a[5] for a in HOST_ANSWERS)
        sent = [t.message for t in toasts if t.title == ""][: len(HOST_ANSWERS)]
        assert sent[0] == "The change of slice.fold.pinSteps to 2 was sent.", sent
        assert sent[4] == "The pause was sent.", sent


# the DSH bridge's details (core/bridge/tapedeck-bridge.mjs, its HANDLERS)
BRIDGE_ANSWERS: list[tuple[str, dict[str, Any], Any, str]] = [
    ("config.set", {"key": "model", "value": "deepseek-chat"},
     {"key": "model", "value": "deepseek-chat", "applies": "next request of this session"},
     'Model set to "deepseek-chat", from the session\'s next request.'),
    ("config.set", {"key": "reasoningEffort", "value": None},
     {"key": "reasoningEffort", "value": None, "applies": "next request of this session"},
     "reasoningEffort back to DSH's default, from the session's next request."),
    ("config.set", {"key": "shell.timeoutMs", "value": 5000},
     {"key": "shell.timeoutMs", "value": 5000, "applies": "DSH setting (live)"},
     "shell.timeoutMs set to 5000, live in DSH."),
    ("checkpoint", {}, {"markId": 2, "seq": 17}, "Checkpoint 2 placed at seq 17."),
    ("rewind", {}, {"markId": 2, "start": 18, "end": 30, "foldedNodes": 5, "seq": 31},
     "Rewound to checkpoint 2: folded 5 nodes."),
    ("expand", {"seq": 12}, {"seq": 40, "original": 12, "replaced": 33},
     "The original of seq 12 is back on the surface."),
    ("pause", {}, {"state": "paused"}, "The agent holds before its next model or tool call."),
    ("resume", {}, {"wasPaused": False}, "The agent was not paused: nothing to resume."),
    ("message", {"text": "x", "mode": "steer"}, {"mode": "steer"}, "Your message reaches the model at its next step."),
    ("message", {"text": "x", "mode": "queue"}, {"mode": "queue"}, "Your message reaches the model at its next turn."),
    ("message", {"text": "x", "kind": "note"}, {"kind": "note"}, "Your note is in the log; the model does not see it."),
    ("stop", {"reason": "enough"}, {"reason": "enough"}, "The agent was stopped (enough)."),
]  # fmt: skip


def _answered(
    op: str, args: dict[str, Any], outcome: str, error: str | None = None, detail: Any = None
) -> TrackedRequest:
    data = {"requestId": "r1", "op": op, "outcome": outcome, "error": error, "detail": detail}
    return TrackedRequest(
        1, op, op, args, request_id="r1", outcome={k: v for k, v in data.items() if v is not None}
    )


@pytest.mark.parametrize(("op", "args", "detail", "said"), BRIDGE_ANSWERS, ids=[f"{a[0]}-{n}" for n, a in
                                                                                 enumerate(BRIDGE_ANSWERS)])  # fmt: skip
def test_each_applied_outcome_of_the_dsh_bridge_is_said_in_the_operators_words(
    op: str, args: dict[str, Any], detail: Any, said: str
) -> None:
    """The bridge's detail of each op, as its handlers give it, in our words."""
    assert outcome_said(_answered(op, args, APPLIED, detail=detail)) == said


@pytest.mark.parametrize("op", list(DSH_OPS))
@pytest.mark.parametrize("state", [APPLIED, PENDING, REJECTED, CANCELLED, EXPIRED, UNKNOWN, NOT_SENT, UNSURE])
def test_no_outcome_of_any_op_is_a_dump_or_starts_with_the_op_name(op: str, state: str) -> None:
    """Whatever the op and whatever became of it (a detail of a shape no words know too), the toast is a sentence
    that starts with a capital and does not start with the op's name nor quote the detail as key=value."""
    detail = {"surprise": 1, "other": [2]}
    if state in (NOT_SENT, UNSURE):
        failure = {"failure": "the inbox is full"} if state == NOT_SENT else {"unsure": "no exit status"}
        item = TrackedRequest(1, op, op, {}, request_id=None if state == NOT_SENT else "r1", **failure)
    else:
        error = None if state in (APPLIED, PENDING) else "the host said no"
        item = _answered(op, {}, state, error, detail)
    assert item.state == state
    said = outcome_said(item)
    assert said[0].isupper() and said.endswith("."), said
    assert not said.lower().startswith(op.lower()), said
    assert "surprise" not in said and "=" not in said, said
