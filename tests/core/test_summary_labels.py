"""Summaries say values in words: no None, no bare key lists, no long floats, no Python reprs."""

from __future__ import annotations

import orjson
import pytest

from core.read.summary import in_words, summarize


def ev(etype: str, data: dict[str, object]) -> dict[str, object]:
    return {"type": etype, "seq": 1, "data": data}


@pytest.mark.parametrize(
    ("event", "text"),
    [
        (ev("tapedeck/route", {"taskClass": "debug", "phase": "explore", "risk": {}}), "route debug · explore · no risk flagged · no prune"),
        (
            ev("tapedeck/route", {"taskClass": "large", "phase": "act", "risk": {"risk": "high", "score": 6, "reason": "deletes files"}, "pruneLevel": "tight", "charsRemoved": 1500}),
            "route large · act · risk high (score 6: deletes files) · pruned tight, 1.5k chars removed",
        ),
        (  # a tier in force that pruned nothing at this step (the cache-aware schedule waits for a cache break)
            ev("tapedeck/route", {"taskClass": "small", "phase": "normal", "risk": None, "pruneLevel": "moderate", "charsRemoved": 0, "prunedSeqs": []}),
            "route small · normal · no risk flagged · prune tier moderate, nothing pruned",
        ),
        (  # an inbox line whose op could not be read, rejected by its id
            ev("tapedeck/control", {"requestId": "h2", "op": None, "outcome": "rejected", "error": "control inbox line 17 is not valid JSON"}),
            "control request rejected: control inbox line 17 is not valid JSON",
        ),
        (ev("request/context", {"provider": "deepseek", "model": "chat"}), "deepseek/chat · context window unknown"),
        (ev("request/context", {"provider": "deepseek", "model": "chat", "contextWindow": 128000}), "deepseek/chat · context window 128k tokens"),
        (ev("llm/retry", {"retry": 1, "maxRetries": 3, "delayMs": 520.4575452286251, "failure": {"code": "rate_limit", "message": "slow down"}}), "retry 1 of 3 in 520 ms: rate_limit slow down"),
        (ev("llm/retry", {"retry": 2, "maxRetries": 3, "delayMs": 2500}), "retry 2 of 3 in 2.5 s"),
        (ev("approval/policy", {"preset": "full-access"}), "approval/policy · preset: full-access"),
        (ev("command/run", {"commandId": "c1", "name": "test", "args": ["-x"], "source": {"kind": "user"}}), "command/run · commandId: c1, name: test, args: -x, source: (kind: user)"),
        (ev("x/unknown", {"a": 1}), "(opaque x/unknown) a: 1"),
    ],
)
def test_values_in_words(event: dict[str, object], text: str) -> None:
    assert summarize(event, 200) == text


def test_in_words() -> None:
    assert in_words({"delivered": "next step"}) == "delivered: next step"
    assert in_words(None) == "none"
    assert in_words([1, 2.25, True]) == "1, 2.25, true"  # booleans as the operator types them
    assert in_words({"a": {"b": None}}) == "a: (b: none)"


def test_a_value_nested_as_deep_as_a_log_line_may_be_reads_in_words() -> None:
    """orjson reads a line nested up to 1024 deep and in_words recursed twice a level, so an unknown event nested
    500 deep or more (a forged or damaged log line) ended 'tapedeck events' and the TUI's list in a RecursionError,
    as did a bridge outcome's detail 'control --wait' prints; past a few dozen levels a value reads as '…'."""
    deep = orjson.loads(b"[" * 1000 + b"1" + b"]" * 1000)
    assert summarize(ev("x/unknown", {"a": deep, "b": 2}), 200) == "(opaque x/unknown) a: …, b: 2"
    assert in_words({"detail": deep}) == "detail: …"


@pytest.mark.parametrize(
    ("reason", "text"),
    [
        ({"kind": "completed"}, "turn 1 ended: completed"),
        ({"kind": "aborted", "reason": {"kind": "user"}}, "turn 1 ended: aborted by the user"),
        ({"kind": "aborted", "reason": {"kind": "parent"}}, "turn 1 ended: aborted by its parent session"),
        ({"kind": "aborted", "reason": {"kind": "hook", "reason": "policy said no"}}, "turn 1 ended: aborted by a hook (policy said no)"),
        # the DSH bridge's stop: the cause the plugin gives DSH says the operator stopped it
        ({"kind": "aborted", "reason": {"kind": "hook", "reason": "enough", "by": "operator"}}, "turn 1 ended: aborted by the operator: enough"),
        ({"kind": "aborted", "reason": {"kind": "hook", "by": "operator"}}, "turn 1 ended: aborted by the operator"),
        ({"kind": "aborted", "reason": {"kind": "disposed"}}, "turn 1 ended: aborted, the session was closed"),
        ({"kind": "aborted", "reason": {"kind": "legacy"}}, "turn 1 ended: aborted (an older log, no cause recorded)"),
        ({"kind": "error", "error": {"code": "AUTH", "message": "HTTP 401"}}, "turn 1 ended: error AUTH: HTTP 401"),
        ({"kind": "error", "error": {"message": "boom"}}, "turn 1 ended: error: boom"),
        ({"kind": "interrupted"}, "turn 1 ended: interrupted"),
    ],
)
def test_turn_end_reason_in_words(reason: dict[str, object], text: str) -> None:
    """A DSH abort cause (``{"kind": "user"}``) reads as words, not ``(user: )``."""
    assert summarize(ev("turn/end", {"turn": 1, "reason": reason}), 200) == text


USER_ABORT = {"kind": "aborted", "reason": {"kind": "user"}}


@pytest.mark.parametrize(
    ("stop", "text"),
    [
        ({"by": "operator", "requestId": "r1", "reason": "wrong task"}, "turn 1 ended: aborted by the operator: wrong task"),
        ({"by": "operator", "requestId": "r1"}, "turn 1 ended: aborted by the operator"),
        ({"by": "operator", "reason": 7}, "turn 1 ended: aborted by the operator: 7"),
        ("not an object", "turn 1 ended: aborted by the user"),
    ],
)
def test_an_operator_stop_reads_with_its_reason(stop: object, text: str) -> None:
    """tapedeck's host adds ``stop`` beside DSH's reason; a reader shows who stopped the turn and why."""
    assert summarize(ev("turn/end", {"turn": 1, "reason": USER_ABORT, "stop": stop}), 200) == text


def test_every_type_keyed_table_names_a_type_the_vocabulary_knows() -> None:
    """The type-keyed tables (checks, summaries, glyphs) add no type of their own: each names a DSH type or one of
    tapedeck's own ``tapedeck/*`` types."""
    from core.log.validate import _CHECKS
    from core.log.vocabulary import is_known_type
    from core.read.summary import _SUMMARIES, GLYPHS

    keys = {*_CHECKS, *_SUMMARIES, *GLYPHS}
    assert [k for k in sorted(keys) if not (is_known_type(k) or k.startswith("tapedeck/"))] == []
