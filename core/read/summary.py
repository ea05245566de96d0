"""One-line, human-readable summaries of events, shared by the CLI and the TUI, and each type's glyph.

Everything shown per event type is here: adding an event type touches ``core.log.vocabulary`` (its name),
``core.log.validate`` (its check, when readers use its fields) and this module (its summary and glyph).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from core.log.records import PackedRow
from core.log.validate import INVALID
from core.log.vocabulary import is_known_type
from core.read.session import TAPE_SOURCE_KIND, op_span
from core.shared.text import (
    js_json,
    printable,
    text_of_blocks,
    tool_block_failed,
    tool_result_block,
)
from core.shared.values import whole_digits

INTERRUPTED_MARK = "[interrupted, incomplete]"  # an assistant message cut off by a crash or an abort
_TAPE_SPAN = re.compile(r"^\[slice (?:checkpoint|tape) v1 · turns (\d+)-(\d+)")


def one_line(text: str, limit: int = 120) -> str:
    """Collapse whitespace, show control characters as pictures (``printable``) and cut to ``limit`` code
    points with an ellipsis.

    The whitespace pass runs over a growing head of ``text`` until that head alone fills the line, so a
    multi-MB tool result costs about as much as a short one. Collapsing a head gives a prefix of collapsing
    the whole text, so the result is the same as collapsing everything.
    """
    head = 2 * limit + 16  # most heads collapse to more than the line holds (a longer one is tried when not)
    while limit > 0 and head < len(text):
        flat = " ".join(text[:head].split())
        if len(flat) > limit:
            return printable(flat[: limit - 1]) + "…"
        head *= 8
    flat = " ".join(text.split())  # str.split and strip know the whitespace the regex engine's \s does
    return printable(flat) if len(flat) <= limit else printable(flat[: limit - 1]) + "…"


def cut_line(line: str, limit: int) -> str:
    """What ``one_line`` gives with ``limit`` for a text it gave ``line`` with a limit at least as high."""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def turn_span(first: int, last: int) -> str:
    """``turn 3`` for one turn, ``turns 3-7`` for several."""
    return f"turn {first}" if first == last else f"turns {first}-{last}"


def human_chars(n: int) -> str:
    """``812``, ``4.2k``, ``81k``, ``1.3M``."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def source_label(source: Any) -> str:
    """A short label for a message source: ``user``, ``model``, ``tool``, ``plugin:<name>`` …"""
    if not isinstance(source, dict):
        return "?"
    kind = str(source.get("kind", "?"))
    if kind == "plugin" and source.get("plugin"):
        return f"plugin:{source['plugin']}"
    return kind


def tape_span(text: str) -> tuple[int, int] | None:
    """The ``turns A-B`` span of a slice tape entry's text, if it is one."""
    m = _TAPE_SPAN.match(text)
    span = (whole_digits(m.group(1)), whole_digits(m.group(2))) if m else (None, None)
    return None if span[0] is None or span[1] is None else (span[0], span[1])  # too long to convert: no span


def summarize(event: dict[str, Any], limit: int = 120) -> str:
    """A one-line description of any event (unknown types are shown as opaque)."""
    etype = event.get("type")
    if etype.__class__ is not str:  # a hostile line's type may be any JSON value
        etype = str(etype)
    data = event.get("data")
    if not isinstance(data, dict):
        data = {}
    if INVALID in event:  # ``is_invalid`` without a call: every row ``events`` and ``surface`` print comes here
        return one_line(f"(invalid {etype}: {event[INVALID]}) {{{', '.join(list(data)[:6])}}}", limit)
    fn = _SUMMARIES.get(etype)
    text = fn(event, data) if fn is not None else None
    if text is not None:  # a summarizer may decline (None): the event is then shown like any other
        return one_line(text, limit)
    if etype.startswith("tapedeck/"):
        return one_line(_tapedeck(etype, data), limit)
    fields = in_words(dict(list(data.items())[:6]))
    if not is_known_type(etype):
        return one_line(f"(opaque {etype}) {fields}", limit)
    return one_line(f"{etype} · {fields}" if fields else etype, limit)


WORDS_DEPTH = 32  # lists and objects ``in_words`` descends into; deeper ones read as ``…`` (a log line may nest
# 1024 deep, past Python's recursion limit)


def in_words(value: Any, depth: int = 0) -> str:
    """A value as plain words for a person: ``key: value`` pairs, comma lists, ``none``, ``true``/``false`` (as
    the config screen shows and ``config.set`` takes them); a list or object ``WORDS_DEPTH`` deep as ``…``."""
    if isinstance(value, dict | list | tuple) and depth >= WORDS_DEPTH:
        return "…"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(
            f"{k}: ({in_words(v, depth + 1)})" if isinstance(v, dict) and v else f"{k}: {in_words(v, depth + 1)}"
            for k, v in value.items()
        )
    if isinstance(value, list | tuple):
        return ", ".join(in_words(v, depth + 1) for v in value)
    return str(value)


def duration(ms: Any) -> str:
    """Milliseconds as ``520 ms`` or ``2.5 s`` (``?`` when not a number)."""
    if not isinstance(ms, int | float) or isinstance(ms, bool):
        return "?"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.3g} s"


def _user(event: dict[str, Any], data: dict[str, Any]) -> str:
    text = text_of_blocks(data.get("content"), " ")
    source = data.get("source") or {}
    images = sum(1 for b in data.get("content") or () if isinstance(b, dict) and b.get("type") == "image")
    extra = f" [+{images} image(s)]" if images else ""
    if isinstance(source, dict) and source.get("kind") == TAPE_SOURCE_KIND:
        span = tape_span(text)
        n = len(event.get("sourceEventSeqs") or ())
        label = turn_span(*span) if span else "entry"
        return f"tape entry: {label} · {n} nodes · {human_chars(len(text))} chars"
    if isinstance(source, dict) and source.get("kind") == "plugin" and source.get("plugin") == "rewind":
        return f"rewind report · {len(event.get('sourceEventSeqs') or ())} nodes folded · {text}"
    label = source_label(source)
    prefix = "" if label == "user" else f"[{label}] "
    return f"{prefix}{text}{extra}"


def _assistant(event: dict[str, Any], data: dict[str, Any]) -> str:
    message = data.get("message") or {}
    parts = []
    for block in message.get("content") or ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            parts.append(block["text"])
        elif block.get("type") == "tool-call":
            parts.append(f"→ {block.get('name')}({block.get('arguments', '')})")
        elif block.get("type") == "reasoning" and not parts:
            parts.append(f"(thinking {human_chars(len(block.get('text') or ''))})")
    text = " ".join(parts) if parts else "(empty assistant message)"
    return f"{INTERRUPTED_MARK} {text}" if data.get("interrupted") is True else text


def _tool_result(event: dict[str, Any], data: dict[str, Any]) -> str:
    message = data.get("message") or {}
    block = tool_result_block(message) or {}
    text = text_of_blocks(block.get("content"), "\n")  # ``tool_result_text``, with the block found once
    flag = "error: " if tool_block_failed(block) else ""
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    policy = meta.get("policy") if op_span(event.get("surfaceOp")) else None
    tag = f"[{policy}] " if policy else ""
    return tag + flag + text if tag or flag else text  # a multi-MB result's text is not copied for nothing


def _delta_head(ctype: str, name: Any) -> str:
    """What a delta chunk's summary shows before its delta's ``repr``."""
    return f"tool-call-delta {name or ''} " if ctype == "tool-call-delta" else f"{ctype} "


def row_summaries(row: PackedRow, limit: int = 120, start: int = 0, stop: int | None = None) -> list[str]:
    """``summarize(row.event(k), limit)`` for every member ``k`` of a packed chunk row (from ``start`` to ``stop``:
    all by default), without building its events.

    A member's summary is a head and its delta's ``repr``, which holds no control character and no whitespace but
    the space (``repr`` escapes every unprintable character, and the space is the one printable whitespace): with
    a head of the same kind, ``one_line`` of it only merges runs of spaces and cuts, so a summary without two
    spaces in a row is only cut here.
    """
    ctype, name, deltas = row.deltas()
    if start or stop is not None:
        deltas = deltas[start:stop]
    head = _delta_head(ctype, name)
    if not (head.isprintable() and head == " ".join(head.split()) + " "):  # a tool name with controls or spaces
        return [one_line(f"{head}{delta!r}", limit) for delta in deltas]
    summaries = [f"{head}{delta!r}" for delta in deltas]
    for k, text in enumerate(summaries):
        if "  " in text:
            summaries[k] = one_line(text, limit)
        elif len(text) > limit:
            summaries[k] = text[: limit - 1] + "…"
    return summaries


def _chunk(event: dict[str, Any], data: dict[str, Any]) -> str:
    chunk = data.get("chunk") or {}
    ctype = chunk.get("type")
    if ctype in ("text-delta", "reasoning-delta"):
        return f"{_delta_head(ctype, None)}{chunk.get('text', '')!r}"
    if ctype == "tool-call-delta":
        return f"{_delta_head(ctype, chunk.get('name'))}{chunk.get('argumentsDelta', '')!r}"
    if ctype == "usage":
        usage = chunk.get("usage") or {}
        return "usage " + " ".join(f"{k}={v}" for k, v in usage.items())
    if ctype == "finish":
        reason = chunk.get("reason") or {}
        failure = reason.get("failure") or {}
        return f"finish {reason.get('kind')}" + (
            f": {failure.get('code')} {failure.get('message', '')}" if failure else ""
        )
    return str(ctype)


ABORT_CAUSES = {  # what ended an aborted turn (DSH's reason.reason.kind), as the end of a sentence
    "user": " by the user",
    "parent": " by its parent session",
    "hook": " by a hook",
    "disposed": ", the session was closed",
    "legacy": " (an older log, no cause recorded)",
}


def _turn_end(event: dict[str, Any], data: dict[str, Any]) -> str:
    reason = data.get("reason") if isinstance(data.get("reason"), dict) else {}
    kind = reason.get("kind")
    head = f"turn {data.get('turn')} ended: {in_words(kind)}"
    error = reason.get("error")
    if kind == "error" and isinstance(error, dict):
        text = f"{head} {error['code']}" if error.get("code") else head
        return f"{text}: {error['message']}" if error.get("message") else text
    cause = reason.get("reason")
    # the operator's stop with the reason they gave: ``data.stop`` beside DSH's reason on tapedeck's host, the cause
    # itself (``{"kind": "hook", "reason", "by": "operator"}``) through the DSH bridge
    stop = data.get("stop") if isinstance(data.get("stop"), dict) else cause
    if kind == "aborted" and isinstance(stop, dict) and stop.get("by") == "operator":
        why = stop.get("reason")
        return f"{head} by the operator" + (f": {why if isinstance(why, str) else in_words(why)}" if why else "")
    if kind == "aborted" and isinstance(cause, dict):
        cause_kind = cause.get("kind")
        words = ABORT_CAUSES.get(str(cause_kind), f" ({in_words(cause_kind)})")
        why = cause.get("reason")
        detail = f" ({why if isinstance(why, str) else in_words(why)})" if why else ""
        return f"{head}{words}{detail}"
    return head


def _request_header(event: dict[str, Any], data: dict[str, Any]) -> str:
    header = data.get("header") or {}
    config = header.get("config") or {}
    tools = header.get("tools")
    ntools = len(tools) if isinstance(tools, list) else tools
    return f"{data.get('reason')} · {config.get('provider')}/{config.get('model')} · tools {ntools}"


def _tapedeck(etype: str, data: dict[str, Any]) -> str:
    if etype == "tapedeck/route":
        return f"route {data.get('taskClass')} · {data.get('phase')} · {_risk(data)} · {_prune(data)}"
    if etype == "tapedeck/control":
        err = f": {data.get('error')}" if data.get("error") else ""
        origin = f" (sent by {data['origin']})" if isinstance(data.get("origin"), str) else ""
        op = data.get("op") if isinstance(data.get("op"), str) else "request"  # a line whose op could not be read
        return f"control {op} {data.get('outcome')}{origin}{err}"
    if etype == "tapedeck/checkpoint":
        return f"checkpoint #{data.get('markId')} by {data.get('by')}" + (
            f": {data.get('objective')}" if data.get("objective") else ""
        )
    if etype == "tapedeck/rewind":
        nodes = data.get("foldedNodes")
        return (
            f"rewind mark #{data.get('markId')} · {nodes} node{'' if nodes == 1 else 's'} · "
            f"{human_chars(int(data.get('foldedChars') or 0))} → {human_chars(int(data.get('reportChars') or 0))} chars"
        )
    if etype == "tapedeck/config":
        changes = data.get("changes") or {}
        return "config " + ", ".join(f"{k}: {js_json(v.get('old'))} → {js_json(v.get('new'))}" for k, v in changes.items())
    return f"{etype} " + ", ".join(f"{k}={v}" for k, v in list(data.items())[:5])


def _risk(data: dict[str, Any]) -> str:
    risk = data.get("risk") if isinstance(data.get("risk"), dict) else {}
    if not risk.get("risk") or risk.get("risk") == "none":
        return "no risk flagged"
    score = f"score {risk['score']}" if "score" in risk else ""
    reason = str(risk.get("reason") or "")
    why = f"{score}: {reason}" if score and reason else score or reason
    return f"risk {risk['risk']}" + (f" ({why})" if why else "")


def _prune(data: dict[str, Any]) -> str:
    level = data.get("pruneLevel")
    if not level:
        return "no prune"
    removed = data.get("charsRemoved")
    if isinstance(removed, int) and removed:
        return f"pruned {level}, {human_chars(removed)} chars removed"
    # the tier is in force, but this step wrote no prune (or the event does not say)
    return f"prune tier {level}" + (", nothing pruned" if removed == 0 else "")


# The one-character mark of an event type in an event list (``?`` for the others).
GLYPHS: dict[str, str] = {
    "turn/start": "┌",
    "turn/end": "└",
    "step/start": "├",
    "step/end": "╵",
    "user/message": "❯",
    "assistant/message": "●",
    "assistant/chunk": "·",
    "tool/call": "→",
    "tool/result": "←",
    "request/header": "⇢",
    "request/context": "⇢",
    "session/title": "T",
    "llm/retry": "↻",
}

def _json_object(text: Any) -> dict[str, Any] | None:
    """``text`` parsed as a JSON object, or None (a slash command's arguments, a command's result text)."""
    if not isinstance(text, str) or not text.lstrip().startswith("{"):
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _command_run(event: dict[str, Any], data: dict[str, Any]) -> str | None:
    """An op the tapedeck bridge ran through DSH's command registry (``/td <request>``); other commands decline."""
    request = _json_object(data.get("args")) if data.get("name") == "td" else None
    if request is None:
        return None
    shown = in_words(request.get("args")) if request.get("args") else ""
    return f"bridge {request.get('op')} [{request.get('id')}]" + (f": {shown}" if shown else "")


def _command_done(event: dict[str, Any], data: dict[str, Any]) -> str | None:
    """The outcome of a bridge op (its result text is the outcome JSON); other commands decline."""
    outcome = _json_object(data.get("text"))
    if outcome is None or "requestId" not in outcome or "outcome" not in outcome:
        return None
    why = outcome.get("error") if outcome.get("outcome") != "applied" else outcome.get("detail")
    origin = f" (sent by {outcome['origin']})" if isinstance(outcome.get("origin"), str) else ""
    return f"bridge {outcome.get('op')} {outcome.get('outcome')}{origin} [{outcome.get('requestId')}]" + (
        f": {why if isinstance(why, str) else in_words(why)}" if why else ""
    )


_SUMMARIES: dict[str, Any] = {
    "command/run": _command_run,
    "command/done": _command_done,
    "user/message": _user,
    "assistant/message": _assistant,
    "tool/result": _tool_result,
    "assistant/chunk": _chunk,
    "turn/end": _turn_end,
    "request/header": _request_header,
    "turn/start": lambda e, d: f"turn {d.get('turn')}",
    "step/start": lambda e, d: f"step {d.get('turn')}.{d.get('step')}",
    "step/end": lambda e, d: f"end of step {d.get('turn')}.{d.get('step')}",
    "tool/call": lambda e, d: f"{d.get('name')} {d.get('arguments', '')} [{d.get('callId')}]",
    "tool/code-dispatch-start": lambda e, d: (
        f"code → {d.get('name')} {d.get('arguments')} [{d.get('subCallId')}]"
    ),
    "tool/code-dispatch": lambda e, d: (
        f"code ← {d.get('name')}{' error' if tool_block_failed(d) else ''}: "
        + text_of_blocks(d.get("content"), " ")
    ),
    "request/context": lambda e, d: f"{d.get('provider')}/{d.get('model')} · context window "
    + (f"{human_chars(d['contextWindow'])} tokens" if isinstance(d.get("contextWindow"), int) else "unknown"),
    "session/title": lambda e, d: f"title: {d.get('title')}",
    "agent/inbox/spliced": lambda e, d: (
        f"inbox {d.get('target')} start {d.get('start')} "
        f"-{d.get('removedCount', 0)} +{len(d.get('inserted') or ())}"
        + (f" ({d['outcome']})" if d.get("outcome") else "")
    ),
    "compaction/start": lambda e, d: f"compaction {d.get('compactionId')} starts"
    + (f" in turn {d['turn']}" if isinstance(d.get("turn"), int) else " between turns"),
    "compaction/summary": lambda e, d: (
        f"compaction summary over {d.get('shadowedSeqs')} "
        f"(~{d.get('shadowedTokenCount')} tokens, {d.get('provider')}/{d.get('model')})"
    ),
    "compaction/end": lambda e, d: (
        f"compaction {d.get('compactionId')} ends" + (f": {d['error']}" if d.get("error") else "")
    ),
    "compaction/prune": lambda e, d: f"prune {d.get('shadowedSeqs')} (~{d.get('shadowedTokenCount')} tokens)",
    "llm/retry": lambda e, d: (
        f"retry {d.get('retry')} of {d.get('maxRetries')} in {duration(d.get('delayMs'))}"
        + (
            f": {d['failure'].get('code')} {d['failure'].get('message', '')}"
            if isinstance(d.get("failure"), dict)
            else ""
        )
    ),
}
