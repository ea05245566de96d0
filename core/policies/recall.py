"""The recall tools (seed 000 §1.e): ``recall_turn``, ``recall_step``, ``recall_search`` and ``expand_result``.

They read original events back from the session log; surface replacements (tape entries, folds, prunes) are
never recalled themselves, and a replacement's seq resolves through its ``sourceEventSeqs`` to the original
result. Page layouts, locators, scoring and error texts follow the seed, because models already know them.

``run_recall_tool`` is the single entry point for the host and the CLI alike, so the text a model receives and
the text ``tapedeck recall``/``tapedeck expand`` prints are the same. Spilled results are read back from their
stored files, in this session's own spill stores only (``core.policies.spill``).
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.policies.fold import EXPAND_TOOL, LOCATOR_FORMAT_VERSION, RECALL_FAMILY, step_call
from core.policies.spill import (
    LoggedPart,
    SpillRefused,
    SpillStores,
    SpillUnavailable,
    hydrate,
    logged_text_parts,
)
from core.read.session import Session
from core.read.summary import source_label
from core.shared.arguments import loads_arguments
from core.shared.errors import TapedeckError
from core.shared.regex import RegexRefused, linear_regex
from core.shared.text import (
    cp_len,
    js_json,
    json_shown,
    quoted,
    result_call_id,
    text_of_blocks,
    tool_result_block,
    utf16_len,
)
from core.shared.values import js_integer, whole_digits

RECALL_TURN_TOOL = "recall_turn"
RECALL_STEP_TOOL = "recall_step"
RECALL_SEARCH_TOOL = "recall_search"
RECALL_TOOLS = (RECALL_TURN_TOOL, RECALL_STEP_TOOL, RECALL_SEARCH_TOOL, EXPAND_TOOL)

DEFAULT_SEARCH_KINDS = ("user", "assistant", "context", "tool_input", "tool_error")
SEARCH_KINDS = (*DEFAULT_SEARCH_KINDS, "tool_output")
TOOL_OUTPUT_SLOTS = 3
TOOL_SNIPPET_CHARS = 600
SNIPPET_CHARS = 180
GREP_CONTEXT = 2
GREP_MAX_HITS = 200
SEARCH_LIMIT_DEFAULT = 5
SEARCH_LIMIT_MAX = 20
# Each distinct query term is counted in every document searched; the seed sets no bound, and a query of 17,000
# distinct terms took 14.5 s on a 30-turn session. Past this many the query is refused (README, D12).
MAX_SEARCH_TERMS = 128

FORMAT_VERSION_REQUIRED = (
    f"{EXPAND_TOOL}: numeric seq requires formatVersion {LOCATOR_FORMAT_VERSION} from a fresh locator; sequence "
    "numbers can change during format migration. Do not relabel an old locator. Obtain a fresh locator from "
    'recall_turn({"turn":"N","view":"dialogue"}) or recall_search, or use the stable {"turn":N,"step":M,"call":K} '
    "address."
)
_RECORD_TYPES = frozenset(
    {"user/message", "assistant/message", "tool/call", "tool/result", "tool/code-dispatch"}
)
_TURN_ID = re.compile(r"(?:slice-turn-)?([0-9]+)")
_TRAILING_NUMBER = re.compile(r"([0-9]+)\s*$")
LINE_RANGE = re.compile(r"([0-9]+)\s*-\s*([0-9]+)")  # expand_result's "lines"
_WHITESPACE = re.compile(r"\s+")
_TRAILING_NEWLINES = re.compile(r"\n+\Z")


class RecallError(TapedeckError):
    """A recall tool call cannot be answered; the message is what the model (or the CLI user) sees."""


@dataclass(frozen=True, slots=True)
class RecallResult:
    """A recall tool's output: the text block the model receives, and whether it is an error."""

    text: str
    is_error: bool = False


# ---------------------------------------------------------------------------------------------- locators
def expand_locator(seq: int) -> str:
    """The call that returns the original tool result logged at ``seq``."""
    return f'{EXPAND_TOOL}({{"seq":{seq},"formatVersion":{LOCATOR_FORMAT_VERSION}}})'


def turn_locator(turn: int, view: str | None = None) -> str:
    """The call that returns a turn's page (``view`` omitted: the default dialogue view)."""
    if view is None:
        return f'{RECALL_TURN_TOOL}({{"turn":"{turn}"}})'
    return f'{RECALL_TURN_TOOL}({{"turn":"{turn}","view":"{view}"}})'


# ---------------------------------------------------------------------------------------------- shared helpers
def tool_name(session: Session, turn: Any, step: Any, call_id: str) -> str:
    """The name of the tool behind a call id (``tool`` when no call was recorded) as a page's line names it: the
    log's text, quoted (``quoted``), so a name holding a line break or an escape sequence stays on its line."""
    call = session.tool_call_at(turn, step, call_id) or session.tool_calls.get(call_id)
    return quoted(call.name, None) if call else "tool"


def result_content(message: Any) -> list[Any]:
    """The inner content parts of a tool-result message."""
    block = tool_result_block(message if isinstance(message, Mapping) else None) or {}
    content = block.get("content")
    return content if isinstance(content, list) else []


def _result_text(message: Any) -> str:
    """Non-empty text parts of a result joined by newlines (the recall tools' view of a result)."""
    return "\n".join(
        p["text"]
        for p in result_content(message)
        if isinstance(p, Mapping) and p.get("type") == "text" and p.get("text")
    )


def _is_error(message: Any) -> bool:
    block = tool_result_block(message if isinstance(message, Mapping) else None) or {}
    return block.get("isError") is True


def _data(session: Session, seq: int) -> Mapping[str, Any]:
    data = session.events[seq].get("data")
    return data if isinstance(data, Mapping) else {}


def _turn_range(session: Session, turn: int) -> range:
    """Seqs from ``turn/start`` to the next turn's start: every event attributed to the turn lies inside."""
    start = session.turns[turn].start_seq
    end = min((t.start_seq for t in session.turns.values() if t.start_seq > start), default=session.next_seq)
    return range(start, end)


# ---------------------------------------------------------------------------------------------- recall_turn
def _positive_number(value: Any, find: Callable[[str], re.Match[str] | None]) -> int | None:
    """A positive whole number, or the one ``find`` picks out of a string; None otherwise (booleans too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value) if math.isfinite(value) and value == int(value) and value >= 1 else None
    if not isinstance(value, str):
        return None
    match = find(value.strip())
    number = whole_digits(match.group(1)) if match else None
    return number if number is not None and number >= 1 else None


def parse_turn_id(value: Any) -> int | None:
    """``"slice-turn-7"``, ``"7"`` or ``7`` → 7; None when it names no turn."""
    return _positive_number(value, _TURN_ID.fullmatch)


def render_turn_page(session: Session, turn: int, view: str = "dialogue") -> str | None:
    """The verbatim page of one turn, or None when the log has no such turn."""
    info = session.turns.get(turn)
    if info is None:
        return None
    full = view == "full"
    users: list[str] = []
    contexts: list[str] = []
    records: list[dict[str, Any]] = []
    items: list[str] = []
    steps = 0
    for seq in _turn_range(session, turn):
        if not session.is_original(seq) or session.turn_of(seq) != turn:
            continue
        event = session.events[seq]
        etype, data = event.get("type"), _data(session, seq)
        if etype in _RECORD_TYPES:
            records.append({"type": etype, "data": event.get("data")})
        if etype == "user/message":
            text = text_of_blocks(data.get("content"))
            source = data.get("source")
            if isinstance(source, Mapping) and source.get("kind") == "user":
                users.append(text)
            else:
                contexts.append(f"[{quoted(source_label(source), None)}]\n{text}")
        elif etype == "assistant/message":
            content = (data.get("message") or {}).get("content") or []
            text = text_of_blocks(content)
            label = f"[step {quoted(data.get('step'), None)}]"  # the log's step, on its line
            if text:
                steps += 1
                items += [label, text, ""]
            elif not any(isinstance(b, Mapping) and b.get("type") == "tool-call" for b in content):
                items += [label, "(no assistant text recorded for this step)", ""]
        elif etype == "tool/result" and not full:
            message = data.get("message")
            name = tool_name(session, turn, data.get("step"), result_call_id(message))
            chars = cp_len(_result_text(message))
            where = f"step {quoted(data.get('step'), None)} seq {seq}"
            items.append(f"[tool {where} · {name} · {chars} chars · {expand_locator(seq)}]")
    if full:
        frame = 'view full (text plus every original record; the default text-only page is view "dialogue")'
    else:
        frame = (
            "view dialogue (default: text once, tool results as locators; full record with reasoning and tool "
            f"output: {turn_locator(turn, 'full')})"
        )
    context_count = f" · {len(contexts)} generated context message(s)" if contexts else ""
    lines = [
        f"[sealed turn slice-turn-{turn} · status {quoted(info.status, None)} · {len(users)} user message(s)"
        f"{context_count} · {steps} assistant step(s) with text · {frame} · historical record: establishes what was "
        "said, not current world state]",
        "",
        "## User request (verbatim)",
        "\n\n".join(t or "(no user text recorded in this message)" for t in users)
        if users
        else "(no user text recorded for this turn)",
        "",
        "## Assistant response (verbatim)",
        *(items or ["(no assistant text recorded for this turn)"]),
    ]
    if contexts:
        lines += ["", "## Generated context recorded during this turn (verbatim)", *contexts]
    if full:
        lines += [
            "",
            "## Original records (including reasoning, tool output and recorded file metadata)",
            js_json(records),
        ]
    return _TRAILING_NEWLINES.sub("\n", "\n".join(lines))


def recall_turn(session: Session, arguments: Mapping[str, Any]) -> str:
    """``recall_turn``: one turn's page (``view`` ``full`` adds every original record as JSON)."""
    turn = parse_turn_id(arguments.get("turn"))
    if turn is None:
        raise RecallError('recall_turn needs {"turn": "slice-turn-N"} (or just "N")')
    view = "full" if arguments.get("view") == "full" else "dialogue"
    page = render_turn_page(session, turn, view)
    if page is None:
        sealed = sorted(n for n, t in session.turns.items() if t.end_seq is not None)
        known = f" (sealed turns: {', '.join(map(str, sealed[:20]))})" if sealed else " (no sealed turns yet)"
        raise RecallError(f"no recorded turn {turn} in this session{known}")
    return page


# ---------------------------------------------------------------------------------------------- recall_step
def parse_step_number(value: Any) -> int | None:
    """A positive integer, or a string whose trailing digits form one (``"12"``, ``"step 12"``)."""
    return _positive_number(value, _TRAILING_NUMBER.search)


@dataclass(slots=True)
class _StepPart:
    text: str
    part: LoggedPart
    error: str | None = None
    hydrated: bool = False


@dataclass(slots=True)
class _StepResult:
    seq: int
    is_error: bool
    parts: list[_StepPart] = field(default_factory=list)


def _step_range(session: Session, turn: int, step: int) -> range:
    info = session.turns.get(turn)
    record = info.steps.get(step) if info else None
    if info is None or record is None:
        return range(0)
    end = record.end_seq if record.end_seq is not None else info.end_seq
    return range(record.start_seq, session.next_seq if end is None else end + 1)


def render_step_page(session: Session, turn: int, step: int, *, hydrate_spills: bool = True) -> str | None:
    """The verbatim tool record of one step (spilled text read back when it can be), or None when empty."""
    calls: list[str] = []
    results: list[_StepResult] = []
    stores = SpillStores.of(session.path, session.header)
    for seq in _step_range(session, turn, step):
        event = session.events[seq]
        data = _data(session, seq)
        if not session.is_original(seq) or data.get("turn") != turn or data.get("step") != step:
            continue
        if event.get("type") == "tool/call":
            name, args = data.get("name"), data.get("arguments")
            calls.append(f"→ {'?' if name is None else quoted(name, None)}({'' if args is None else args})")
        elif event.get("type") == "tool/result":
            message = data.get("message")
            result = _StepResult(seq, _is_error(message))
            for part in logged_text_parts(result_content(message)):
                item = _StepPart(part.text, part)
                if part.preview is not None and hydrate_spills:
                    try:
                        item.text, item.hydrated = hydrate(part, stores), True
                    except SpillUnavailable as exc:
                        item.error = str(exc)
                result.parts.append(item)
            results.append(result)
    if not calls and not results:
        return None
    previews = any(p.part.preview is not None and not p.hydrated for r in results for p in r.parts)
    record = "logged tool record; spilled results below are previews" if previews else "verbatim tool record"
    lines = [
        f"[sealed step · turn {turn} · step {step} · {len(calls)} call(s) · {record}: what was executed then, "
        "not current world state]",
        "",
        "## Calls",
        *(calls or ["(no calls recorded)"]),
        "",
        "## Results (previews where marked; use the exact expansion locator for full text)"
        if previews
        else "## Results (verbatim)",
    ]
    if not results:
        lines.append("(no results recorded)")
    for result in results:
        lines.append("[error result]" if result.is_error else "[result]")
        for number, item in enumerate(result.parts, 1):
            preview = item.part.preview
            if preview is not None and not item.hydrated:
                size = "full text" if preview.size is None else f"{preview.size} bytes"
                lines.append(
                    f"[text part {number} preview — NOT full output; {size} stored at "
                    f"{quoted(preview.locator, None)}; full text: {expand_locator(result.seq)}]"
                )
                if item.error is not None:
                    lines.append(f"[spill unavailable: {quoted(item.error, 200)}]")
            lines.append(item.text)
    return "\n".join(lines) + "\n"


def recall_step(session: Session, arguments: Mapping[str, Any]) -> str:
    """``recall_step``: the calls and verbatim results of one step."""
    turn, step = parse_step_number(arguments.get("turn")), parse_step_number(arguments.get("step"))
    if turn is None or step is None:
        raise RecallError('recall_step needs {"turn": "N", "step": "M"}')
    page = render_step_page(session, turn, step)
    if page is None:
        raise RecallError(f"no recorded tool calls for turn {turn} step {step}")
    return page


# ---------------------------------------------------------------------------------------------- recall_search
@dataclass(frozen=True, slots=True)
class SearchHit:
    """One scored hit and the exact call that returns its original."""

    turn: int
    step: int | None
    kind: str
    score: float
    snippet: str
    seq: int | None
    locator: str


@dataclass(frozen=True, slots=True)
class _Doc:
    turn: int
    step: int | None
    kind: str
    text: str
    seq: int


# A term's characters: letters and numbers (Unicode categories L and N, which are what ``\w`` takes besides ``_``),
# ``_``, ``.`` and ``-``; tests/policies/test_recall_search.py holds it to the seed's rule on every code point.
_TERM = re.compile(r"[\w.-]+")


def search_terms(query: str) -> list[str]:
    """Lower-cased query terms: runs of letters, digits, ``_``, ``.``, ``-`` longer than one UTF-16 unit (a lone
    code point past U+FFFF is one)."""
    return [term for term in _TERM.findall(query.lower()) if len(term) > 1 or term > "\uffff"]


def resolve_kinds(kinds: Sequence[str] | None, scope: str) -> list[str]:
    """The searched kinds: explicit kinds win; scope ``auto`` adds tool output to the defaults."""
    if kinds:
        return list(kinds)
    return list(SEARCH_KINDS if scope == "auto" else DEFAULT_SEARCH_KINDS)


def snippet_around(text: str, terms: Sequence[str], max_chars: int = SNIPPET_CHARS) -> str:
    """Up to ``max_chars`` code points around the earliest term match, whitespace collapsed.

    The match position is measured in UTF-16 units of the lower-cased text and then used as a code-point
    offset into the original, exactly as the seed does, so snippets agree with it on any text.
    """
    lower = text.lower()
    found = [i for i in (lower.find(term) for term in terms) if i >= 0]
    at = utf16_len(lower[: min(found)]) if found else 0
    start = max(0, at - max_chars // 2)
    end = min(len(text), start + max_chars)
    body = _WHITESPACE.sub(" ", text[start:end]).strip()
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")


_DOC_TYPES = ("user/message", "assistant/message", "tool/result")


def _search_docs(session: Session, kinds: set[str]) -> Iterator[_Doc]:
    """The searchable texts of original events, the turn still open left out, one at a time: a long log's tool
    output is never all held."""
    open_turn = session.open_turn
    return (doc for doc in _all_docs(session, kinds) if doc.turn != open_turn)


def _all_docs(session: Session, kinds: set[str]) -> Iterator[_Doc]:
    for seq in session.seqs_of(_DOC_TYPES):
        if not session.is_original(seq):
            continue
        etype = session.events[seq].get("type")
        data = _data(session, seq)
        if etype == "user/message":
            owner = session.turn_of(seq)
            source = data.get("source")
            kind = "user" if isinstance(source, Mapping) and source.get("kind") == "user" else "context"
            text = text_of_blocks(data.get("content"))
            if owner >= 1 and kind in kinds and text.strip():
                yield _Doc(owner, None, kind, text, seq)
            continue
        turn, step = data.get("turn"), data.get("step")
        if not isinstance(turn, int) or not isinstance(step, int):
            continue
        if etype == "assistant/message":
            content = [b for b in (data.get("message") or {}).get("content") or [] if isinstance(b, Mapping)]
            text = text_of_blocks(content)
            if "assistant" in kinds and text.strip():
                yield _Doc(turn, step, "assistant", text, seq)
            if "tool_input" in kinds:
                for block in content:
                    name = block.get("name")
                    if block.get("type") != "tool-call" or (isinstance(name, str) and name in RECALL_FAMILY):
                        continue
                    text = f"{name or ''} {block.get('arguments') or ''}"
                    if text.strip():
                        yield _Doc(turn, step, "tool_input", text, seq)
        elif etype == "tool/result":
            message = data.get("message")
            if tool_name(session, turn, step, result_call_id(message)) in RECALL_FAMILY:
                continue
            kind = "tool_error" if _is_error(message) else "tool_output"
            text = _result_text(message)
            if kind in kinds and text.strip():
                yield _Doc(turn, step, kind, text, seq)


def search(
    session: Session,
    query: str,
    *,
    kinds: Sequence[str] | None = None,
    scope: str = "auto",
    limit: float | None = None,
) -> list[SearchHit]:
    """Scored hits over the original events of sealed turns (the turn still open is left out); ``RecallError``
    for a query of more than ``MAX_SEARCH_TERMS`` distinct terms."""
    resolved = resolve_kinds(kinds, scope)
    slotted = not kinds and "tool_output" in resolved
    # NaN (Python's parser reads a model's NaN), falsy in JavaScript as 0 is, is no limit: the default
    cap = min(max(limit, 1), SEARCH_LIMIT_MAX) if limit and limit == limit else SEARCH_LIMIT_DEFAULT
    terms = search_terms(query)
    if not terms:
        return []
    # Each distinct term is counted once per document and weighs as often as the query names it: the seed's
    # matched count and term frequency exactly, at the cost of the distinct terms only.
    weights = Counter(terms)
    if len(weights) > MAX_SEARCH_TERMS:
        raise RecallError(
            f"{RECALL_SEARCH_TOOL}: the query has {len(weights)} distinct terms; at most {MAX_SEARCH_TERMS} are "
            "searched, so ask again with the few words the fact you want would contain"
        )
    # Only the best hits are held: (sort key, order found, hit) in each list, sorted and cut to its length.
    wanted = {"tool_output": TOOL_OUTPUT_SLOTS, "other": math.ceil(cap)} if slotted else {"other": int(cap)}
    best: dict[str, list[tuple[float, int, int, SearchHit]]] = {slot: [] for slot in wanted}
    for found, doc in enumerate(_search_docs(session, set(resolved))):
        lower = doc.text.lower()
        counts = [(lower.count(term), weight) for term, weight in weights.items()]
        matched = sum(weight for c, weight in counts if c)
        if not matched:
            continue
        brevity = 1 / math.log2(4 + cp_len(doc.text) / 200)
        score = matched / len(terms) * 1000 + min(sum(c * weight for c, weight in counts), 10) * brevity
        is_tool = doc.kind in ("tool_output", "tool_error")
        snippet = snippet_around(doc.text, list(weights), TOOL_SNIPPET_CHARS if is_tool else SNIPPET_CHARS)
        if is_tool:
            locator = expand_locator(doc.seq)
        else:
            locator = turn_locator(doc.turn, "full" if doc.kind == "tool_input" else "dialogue")
        hit = SearchHit(doc.turn, doc.step, doc.kind, score, snippet, doc.seq if is_tool else None, locator)
        slot = "tool_output" if slotted and doc.kind == "tool_output" else "other"
        bisect.insort(best[slot], (-score, -doc.turn, found, hit))
        del best[slot][wanted[slot] :]
    return [hit for *_, hit in sorted(entry for slot in best.values() for entry in slot)]


def render_hits(query: str, hits: Sequence[SearchHit], kinds: Sequence[str]) -> str:
    """The ``recall_search`` page: a header, then one line per hit ending with its exact follow-up call."""
    if not hits:
        if "tool_output" in kinds:
            hint = "broaden the query, or check earlier sealed turns with recall_turn"
        else:
            hint = 'retry with kinds: ["tool_output"] if the fact was tool-born, or broaden the query'
        return f'[recall_search "{quoted(query)}" · 0 hits over kinds {quoted("/".join(kinds))} — {hint}]'
    lines = [
        f'[recall_search "{quoted(query)}" · {len(hits)} hit(s) · historical record — each hit ends with the exact call '
        'that returns its original: recall_turn({"turn": "slice-turn-N"}) (view "dialogue" is the default: the '
        'cheap text-only page) for said text, recall_turn view "full" for tool inputs, '
        f'expand_result({{"seq": Q,"formatVersion": {LOCATOR_FORMAT_VERSION}}}) for tool output]'
    ]
    for hit in hits:
        where = f"slice-turn-{hit.turn}"
        where += "" if hit.step is None else f" step {hit.step}"
        where += "" if hit.seq is None else f" seq {hit.seq}"
        lines.append(f"- {where} [{hit.kind}] {hit.snippet} → {hit.locator}")
    return "\n".join(lines)


def recall_search(session: Session, arguments: Mapping[str, Any]) -> str:
    """``recall_search``: scored hits over user/assistant text, generated context and tool records."""
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        raise RecallError('recall_search needs {"query": "..."}')
    raw_kinds = arguments.get("kinds")
    kinds = [k for k in raw_kinds if isinstance(k, str)] if isinstance(raw_kinds, list) else []
    scope = "dialogue" if arguments.get("scope") == "dialogue" else "auto"
    limit = arguments.get("limit")
    number = limit if isinstance(limit, int | float) and not isinstance(limit, bool) else None
    hits = search(session, query, kinds=kinds or None, scope=scope, limit=number)
    return render_hits(query, hits, resolve_kinds(kinds or None, scope))


# ---------------------------------------------------------------------------------------------- expand_result
def original_result(session: Session, seq: int) -> int:
    """Follow a replacement chain (``sourceEventSeqs[0]``) from ``seq`` to the original ``tool/result``."""
    seen: set[int] = set()
    at = seq
    while True:
        if not 0 <= at < session.next_seq:
            raise RecallError(f"{EXPAND_TOOL}: no session event at seq {at}")
        etype = session.events[at].get("type")
        if etype != "tool/result":
            raise RecallError(f"{EXPAND_TOOL}: seq {at} is a {quoted(etype)} event, not a tool result")
        if session.is_original(at):
            return at
        sources = session.sources_of(at)
        if not sources or sources[0] in seen:
            raise RecallError(f"{EXPAND_TOOL}: the replacement at seq {at} names no original tool result")
        seen.add(at)
        at = sources[0]


def _ordinal(session: Session, seq: int) -> tuple[int, int, int]:
    """``(turn, step, call)`` of an original result: ``call`` counts the step's original results from 1."""
    data = _data(session, seq)
    turn, step = data.get("turn"), data.get("step")
    if isinstance(turn, int) and isinstance(step, int):
        seqs = session.results_by_step.get((turn, step), [])
        if seq in seqs:
            return turn, step, seqs.index(seq) + 1
    raise RecallError(f"{EXPAND_TOOL}: the tool result at seq {seq} names no turn and step")


def _grep(text: str, pattern: str, head: str) -> str:
    try:
        rx = linear_regex(pattern, ignore_case=True)
    except RegexRefused as exc:
        raise RecallError(f"{EXPAND_TOOL}: invalid regex {json_shown(pattern)[0]}{exc.hint}") from exc
    lines = text.split("\n")
    hits = [i for i, line in enumerate(lines) if rx.search(line)]
    if not hits:
        return f"[{head} · 0 of {len(lines)} lines match /{quoted(pattern)}/i]"
    keep = sorted(
        {k for i in hits for k in range(max(0, i - GREP_CONTEXT), min(len(lines), i + GREP_CONTEXT + 1))}
    )
    out: list[str] = []
    previous = -1
    for i in keep:
        if previous != -1 and i > previous + 1:
            out.append(f"…[{i - previous - 1} lines]…")
        out.append(f"{i + 1}: {lines[i]}")
        previous = i
    shown = min(len(hits), GREP_MAX_HITS)
    more = f", first {GREP_MAX_HITS} shown" if len(hits) > GREP_MAX_HITS else ""
    body = "\n".join(out[: shown * 5 + GREP_MAX_HITS])
    return f"[{head} · {len(hits)} of {len(lines)} lines match /{quoted(pattern)}/i{more}]\n{body}"


def _line_range(text: str, match: re.Match[str], head: str) -> str:
    lines = text.split("\n")
    past = len(lines) + 1  # a bound too long to convert lies past the last line
    first, last = (past if (n := whole_digits(bound)) is None else n for bound in match.groups())
    first, last = max(1, first), min(len(lines), last)
    if last < first:
        # The extraction prints the clamped range: "70-80" over 60 lines is "empty range 70-60".
        raise RecallError(f"{EXPAND_TOOL}: empty range {first}-{last} (result has {len(lines)} lines)")
    numbered = "\n".join(f"{first + i}: {line}" for i, line in enumerate(lines[first - 1 : last]))
    return f"[{head} · lines {first}-{last} of {len(lines)}]\n{numbered}"


def _full_text(session: Session, seq: int, head: str) -> str:
    stores = SpillStores.of(session.path, session.header)
    texts = []
    for number, part in enumerate(logged_text_parts(result_content(_data(session, seq).get("message"))), 1):
        try:
            texts.append(hydrate(part, stores))
        except SpillUnavailable as exc:
            # a locator that is not this session's names a file the model is not sent to (README, D11)
            advice = "" if isinstance(exc, SpillRefused) else "; read that file with the workspace tools instead"
            raise RecallError(
                f"{EXPAND_TOOL}: the full text of {head} (text part {number}) was stored outside the log and "
                f"is not readable here ({quoted(exc, 200)}){advice}"
            ) from exc
    return "\n".join(texts)


def _is_format_version(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == LOCATOR_FORMAT_VERSION


def expand_result(session: Session, arguments: Mapping[str, Any]) -> str:
    """``expand_result``: the full (or grep/line-filtered) text of one original tool result."""
    block = None
    if arguments.get("block") is not None:
        block = js_integer(arguments["block"])
        if block is None or block < 1:
            raise RecallError(f'{EXPAND_TOOL}: "block" must be a positive integer')
    if arguments.get("seq") is not None:
        if not _is_format_version(arguments.get("formatVersion")):
            raise RecallError(FORMAT_VERSION_REQUIRED)
        asked = js_integer(arguments["seq"])
        if asked is None or asked < 0:
            raise RecallError(f'{EXPAND_TOOL}: "seq" must be a non-negative integer')
        seq = original_result(session, asked)
        turn, step, call = _ordinal(session, seq)
        where = f"seq {seq} (turn {turn} step {step} call {call})"
    else:
        named = step_call(arguments)
        if named is None or min(named) < 1:
            raise RecallError(
                f'{EXPAND_TOOL} needs {{"seq": N, "formatVersion": {LOCATOR_FORMAT_VERSION}}} or '
                '{"turn": N, "step": M} (and optional "call": K), all positive integers'
            )
        turn, step, call = named
        seqs = session.results_by_step.get((turn, step), [])
        if call > len(seqs):
            raise RecallError(f"no tool result recorded at turn {turn} step {step} call {call}")
        seq = seqs[call - 1]
        where = f"turn {turn} step {step} call {call}"
    if block is not None and block != 1:
        raise RecallError(f"{EXPAND_TOOL}: no result block {block} (result has 1 blocks)")
    message = _data(session, seq).get("message")
    head = f"{tool_name(session, turn, step, result_call_id(message))} · {where}"
    if block is not None:
        head += f" block {block}"
    text = _full_text(session, seq, head)
    grep, lines = arguments.get("grep"), arguments.get("lines")
    if isinstance(grep, str) and grep.strip():
        return _grep(text, grep, head)
    match = LINE_RANGE.fullmatch(lines.strip()) if isinstance(lines, str) else None
    if match is not None:
        return _line_range(text, match, head)
    return f"[full result of {head}]\n{text}"


# ---------------------------------------------------------------------------------------------- the tool surface
_TOOLS: dict[str, Callable[[Session, Mapping[str, Any]], str]] = {
    RECALL_TURN_TOOL: recall_turn,
    RECALL_STEP_TOOL: recall_step,
    RECALL_SEARCH_TOOL: recall_search,
    EXPAND_TOOL: expand_result,
}


def run_recall_tool(session: Session, name: str, arguments: Mapping[str, Any] | str) -> RecallResult:
    """Run one recall tool with a model's arguments (a JSON object or its raw JSON text)."""
    if isinstance(arguments, str):
        try:
            parsed: Any = loads_arguments(arguments)
        except ValueError as exc:
            return RecallResult(f"{name}: arguments are {exc}", True)
    else:
        parsed = arguments
    if not isinstance(parsed, Mapping):
        return RecallResult(f"{name}: arguments must be a JSON object", True)
    tool = _TOOLS.get(name)
    if tool is None:
        return RecallResult(f"no recall tool named '{quoted(name)}' (recall tools: {', '.join(RECALL_TOOLS)})", True)
    try:
        return RecallResult(tool(session, parsed))
    except RecallError as exc:
        return RecallResult(str(exc), True)


def _schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return {"name": name, "description": description, "parameters": parameters}


def recall_tool_schemas() -> list[dict[str, Any]]:
    """OpenAI-style schemas of the four recall tools (names, parameter names, types and enums as in the seed)."""
    v = LOCATOR_FORMAT_VERSION
    return [
        _schema(
            RECALL_TURN_TOOL,
            "Read back an earlier turn of this session exactly as it was said: the user's request, every "
            "assistant step's text and any context the host generated during the turn. Reach for it when a "
            "[slice tape v1 …] entry mentions a turn you need in detail, when an entry shortened a reply, or "
            "when recall_search points at a turn. The default dialogue view lists each tool result as one "
            f'expand_result({{"seq": Q,"formatVersion": {v}}}) line; view "full" also appends every original '
            "record as JSON (reasoning, tool inputs and outputs), which is usually far larger, so ask for it "
            "only when you need those records. The page comes from the session log and is a record of what "
            "was said, not of the current state of the world.",
            {
                "turn": {
                    "type": "string",
                    "description": 'Which turn: "slice-turn-3" or simply "3".',
                },
                "view": {
                    "type": "string",
                    "enum": ["dialogue", "full"],
                    "description": '"dialogue" (the default) for the text with tool results as locators; '
                    '"full" to add every original record.',
                },
            },
            ["turn"],
        ),
        _schema(
            RECALL_SEARCH_TOOL,
            "Search this session's recorded history when you know what was said or done but not in which "
            "turn. Each hit shows a short original snippet and ends with the exact call that returns the whole "
            'original: recall_turn for said text (view "full" for tool inputs) or expand_result for tool '
            f'output. The default scope "auto" covers user and assistant text, generated context, tool inputs '
            f"and tool errors, plus at most {TOOL_OUTPUT_SLOTS} tool-output hits of up to {TOOL_SNIPPET_CHARS} "
            'characters each; scope "dialogue" leaves tool output out; explicit kinds replace both. The '
            "recall tools' own calls and results are never searched, and neither is the turn in progress. A query "
            f"of more than {MAX_SEARCH_TERMS} distinct words is refused: give the few words the fact would contain.",
            {
                "query": {"type": "string", "description": "Words to look for (case-insensitive)."},
                "scope": {
                    "type": "string",
                    "enum": ["dialogue", "auto"],
                    "description": '"auto" (default) adds a few tool-output hits; "dialogue" skips tool output.',
                },
                "kinds": {
                    "type": "array",
                    "description": "Search only these kinds (overrides scope): user, assistant, context, "
                    "tool_input, tool_error, tool_output.",
                    "items": {"type": "string", "enum": list(SEARCH_KINDS)},
                },
                "limit": {
                    "type": "number",
                    "description": "How many non-tool-output hits to return, 1-20 (default 5).",
                },
            },
            ["query"],
        ),
        _schema(
            RECALL_STEP_TOOL,
            "Read back the tool calls and results of a single earlier step, verbatim. Spilled results are read "
            "from their stored files when possible; otherwise the preview is clearly marked and the exact "
            "expand_result call for the full text is given. Cheaper than a whole recall_turn full view; for a "
            'single result, expand_result({"turn": t, "step": s, "call": n}) is cheaper still.',
            {
                "turn": {"type": "string", "description": 'The turn number, e.g. "3".'},
                "step": {"type": "string", "description": 'The step number within that turn, e.g. "2".'},
            },
            ["turn", "step"],
        ),
        _schema(
            EXPAND_TOOL,
            "Return the complete text of one logged tool result, for example one that was condensed or sealed "
            f'away. Address it by its log id, {{"seq": Q, "formatVersion": {v}}} exactly as a fresh locator '
            'prints it, or by position, {"turn": t, "step": s, "call": n} (n counts the results of that step '
            'from 1). Add "grep" (a case-insensitive regex; matching lines come with 2 lines of context) or '
            '"lines" ("start-end") to get only the part you need, which costs far less than the whole text.',
            {
                "formatVersion": {
                    "type": "number",
                    "description": f"Required with seq: {v}, copied from the same fresh locator. Never relabel an "
                    "old locator; get a new one from recall_turn or recall_search, or use turn/step/call.",
                },
                "seq": {
                    "type": "number",
                    "description": "Log id of the result (from a locator); turn/step/call are ignored when set.",
                },
                "turn": {"type": "number", "description": "Turn of the result (when seq is not given)."},
                "step": {"type": "number", "description": "Step of the result (when seq is not given)."},
                "call": {
                    "type": "number",
                    "description": "Which result of that step, counting from 1 (default 1).",
                },
                "block": {
                    "type": "number",
                    "description": "Optional; every result has exactly one block, 1.",
                },
                "grep": {
                    "type": "string",
                    "description": "Case-insensitive regex; returns matching lines with context and a match count.",
                },
                "lines": {"type": "string", "description": 'Inclusive 1-based line range, e.g. "40-90".'},
            },
            [],
        ),
    ]
