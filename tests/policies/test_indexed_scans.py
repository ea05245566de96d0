"""Scans that an index-backed session answers from the index's type column (huge logs, the TUI)."""

from __future__ import annotations

import json
from pathlib import Path

from test_rewind_support import HEADER, Log

from core.log.index import IndexStore, OffsetIndex
from core.log.reader import read_log
from core.policies.checkpoint import (
    CHECKPOINT_EVENT,
    REWIND_EVENT,
    latest_mark,
    marks,
    plan_checkpoint,
)
from core.policies.prolong import DenyCounter, status_from_log
from core.policies.prolong_config import validate as validate_prolong
from core.read.session import Session


def _write(log: Log, path: Path) -> Path:
    lines = [json.dumps(HEADER | {"id": log.session.id})] + [json.dumps(e) for e in log.session.events]
    path.write_text("\n".join(lines) + "\n")
    return path


def _indexed(path: Path) -> Session:
    index = OffsetIndex(path, False)
    index.extend()
    session = Session(index.header, IndexStore(index), path=path, retain=False)
    for event in read_log(path).events:
        session.apply(event)
    return session


def _log() -> Log:
    log = Log()
    log.turn_start()
    log.user("explore the loader")
    log.extend(plan_checkpoint(log.session, "first look"))
    log.tool("c1", "read_file", '{"path": "log.txt"}', "denied", is_error=True)
    log.add(REWIND_EVENT, {"markId": 1}, ignorable=True)
    log.extend(plan_checkpoint(log.session, "second look"))
    log.assistant({"type": "text", "text": "done"})
    log.turn_end()
    return log


def test_index_backed_and_retained_sessions_agree_on_every_scan(tmp_path: Path) -> None:
    path = _write(_log(), tmp_path / "s.jsonl")
    retained, indexed = Session.open(path), _indexed(path)
    assert not isinstance(retained.events, IndexStore) and isinstance(indexed.events, IndexStore)
    types = (CHECKPOINT_EVENT, REWIND_EVENT)
    expected = [s for s, e in enumerate(retained.events) if e["type"] in types]
    assert len(expected) == 3
    assert list(indexed.seqs_of(types)) == list(retained.seqs_of(types)) == expected
    assert list(indexed.seqs_of(types, expected[1])) == expected[1:]
    assert list(indexed.seqs_of(("no/such-type",))) == []
    assert marks(indexed) == marks(retained) and len(marks(indexed)) == 2
    assert marks(indexed)[0].folded_by == expected[1]
    assert latest_mark(indexed) == latest_mark(retained) and latest_mark(indexed).objective == "second look"
    config = validate_prolong({})
    report, again = status_from_log(indexed, tmp_path, config), status_from_log(retained, tmp_path, config)
    assert report == again and report.sessions[0].denied == 1


def test_the_deny_counter_declares_every_type_it_reacts_to() -> None:
    counter = DenyCounter("log.txt")
    for etype in ("user/message", "assistant/message", "turn/end", "tapedeck/route"):
        counter.observe(
            0, {"type": etype, "data": {"turn": 1, "step": 1, "callId": "x", "arguments": "log.txt"}}
        )
    assert counter.denied == 0
    assert set(DenyCounter.TYPES) == {"tool/call", "tool/result", "step/end"}
