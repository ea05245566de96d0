"""The tool-result fold (seed 000 §1.g) as a pure planner over the session log.

At each entered step the host asks ``plan_fold`` which fresh tool results to condense before the next model
request. Each fold is a ``tool/result`` replacement of one original result: same data, the inner content's text
parts swapped for a digest view whose first line names the exact ``expand_result`` call that returns the full
text, and ``data.meta = {"policy": "fold", "digest": kind, "charsBefore": N, "charsAfter": M}`` (code points;
meta is never model-visible). The original stays in the log.

Everything is derived from the log, so a restarted host decides exactly what the previous one would have:

- Resume safety: a result at or before ``shown_through`` (the last request header, model message, streamed chunk,
  or failed/aborted/interrupted turn end) may already have been sent to the model; folding it would rewrite a
  cached prefix, so it is never folded. Format version 0 has no ``assistant/attempt`` event; a streamed chunk
  proves the same thing, that a request went out.
- Never folded: error results, the recall family's own results, results that forward a recorded retrieval (a
  nested recall call's text quoted verbatim or as a JSON string), results pinned by ``fold.pinSteps`` /
  ``fold.pinMaxChars``, and results of a backed-off resource.
- Backoff: a resource (the exact ``file_path``/``path`` argument, else the call's key-sorted arguments) stops
  folding for the rest of the session once ``fold.backoffAfterExpansions`` distinct folded results of it were
  expanded in full and those expansions cover at least half of its folds. Expansions are read from the log:
  successful ``expand_result`` results (top level or nested in code mode) resolved through their call arguments.
  ``grep``/``lines`` expansions and repeat expansions of the same result do not count. ``resource_backoff`` and
  ``FoldRow.backoff`` expose these per-resource counts (``ResourceBackoff``) to callers such as the TUI.
- Operator expand: ``plan_unfold`` restores a folded result's original content with
  ``meta = {"policy": "expand", "by": "operator"}``. Only original results still on the surface are candidates,
  so a result the operator unfolded is never folded again.

The spill arm (``spill_digest`` + ``render_spill_view``) serves a host that stores over-size results outside the
log: the result is logged as a digest whose first line carries the stored file's locator, and the next fold
splices the ``expand_result`` hint into that line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from core.policies.digest import Digest, digest_tool_result
from core.policies.slice_config import SliceConfig
from core.policies.spill import StoredText, fold_spill_locator
from core.read.session import Session, cut_kind
from core.shared.errors import TapedeckError
from core.shared.text import (
    a_or_an,
    cp_len,
    js_json,
    quoted,
    result_call_id,
    tool_result_block,
    tool_result_is_error,
    utf16_len,
)
from core.shared.values import js_integer

EXPAND_TOOL = "expand_result"
RECALL_FAMILY = frozenset({EXPAND_TOOL, "recall_step", "recall_turn", "recall_search"})
LOCATOR_FORMAT_VERSION = 4
SPILL_EXEMPT_TOOLS = frozenset({"read", "read_file"})

_SHOWN_TYPES = frozenset({"request/header", "assistant/message", "assistant/attempt", "assistant/chunk"})
_EXPOSED_END_KINDS = frozenset({"error", "aborted", "interrupted"})
_LINE_RANGE = re.compile(r"^\d+\s*-\s*\d+$", re.ASCII)
_LINE_BREAKS = re.compile("[\n\v\f\r\x1c-\x1e\x85\u2028\u2029]")  # where str.splitlines (and a reader) breaks

# Row statuses, for the CLI and the TUI.
FOLD = "fold"  # will be folded by the next plan_fold
FOLDED = "folded"  # a fold replacement is on the surface
UNFOLDED = "unfolded"  # the operator restored the original
REPLACED = "replaced"  # another policy's replacement (prune, …) is on the surface
KEPT = "kept"  # the digest declined (small, code, little to gain) or fold is off
PINNED = "pinned"
ERROR = "error"
RECALL = "recall"
BACKED_OFF = "backed-off"
SHOWN = "shown"


class FoldError(TapedeckError):
    """An operator fold request cannot be planned (no such result, not folded, not on the surface)."""


@dataclass(frozen=True, slots=True)
class ResultInfo:
    """An original tool result and the call it answers: its ``expand_result`` address and backoff scope."""

    seq: int
    turn: int
    step: int
    call: int
    call_id: str
    tool: str
    path: str | None
    scope: str
    call_seq: int | None
    is_error: bool
    arguments: Any = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class ResourceBackoff:
    """The backoff ledger of one resource (seed 000 §1.g), replayed from the log.

    ``scope`` is the resource (``backoff_scope``: the exact path, else the key-sorted call arguments); ``folds``
    counts its distinct original results that were folded; ``expansions`` the distinct folded results of it the
    model expanded in full (successful ``expand_result`` calls; ``grep``/``lines`` expansions, repeats of the same
    result and operator unfolds do not count). The resource is backed off, for the rest of the session, once
    ``expansions >= after`` (``fold.backoffAfterExpansions``) and ``2 * expansions >= folds``.
    """

    scope: str
    folds: int
    expansions: int
    backed_off: bool
    after: int

    @property
    def expansions_to_backoff(self) -> int:
        """More full expansions that would back the resource off if nothing more of it were folded (0 once it is)."""
        if self.backed_off:
            return 0
        return max(max(self.after, (self.folds + 1) // 2) - self.expansions, 0)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``--json`` output."""
        return {
            "scope": self.scope,
            "folds": self.folds,
            "expansions": self.expansions,
            "backedOff": self.backed_off,
            "backoffAfterExpansions": self.after,
        }


@dataclass(frozen=True, slots=True)
class FoldRow:
    """What the fold policy does with one tool result on the surface.

    ``backoff`` is the backoff state of the result's resource (None when the original result is unknown).
    """

    seq: int
    original: int
    turn: int
    step: int
    call: int
    tool: str
    path: str | None
    status: str
    kind: str | None
    chars_before: int
    chars_after: int
    reason: str = ""
    event: dict[str, Any] | None = field(default=None, compare=False)
    backoff: ResourceBackoff | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``--json`` output (the planned event and the backoff state are left out)."""
        return {
            "seq": self.seq,
            "original": self.original,
            "turn": self.turn,
            "step": self.step,
            "call": self.call,
            "tool": self.tool,
            "path": self.path,
            "status": self.status,
            "digest": self.kind,
            "charsBefore": self.chars_before,
            "charsAfter": self.chars_after,
            "reason": self.reason,
        }


# ---------------------------------------------------------------------------------------------- helpers
def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments as a JSON value: strings are parsed (None when malformed), values pass through."""
    if not isinstance(raw, str):
        return raw
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def argument_path(args: Any) -> str | None:
    """The ``file_path`` (else ``path``) string argument of a call, if any."""
    if not isinstance(args, Mapping):
        return None
    for key in ("file_path", "path"):
        if isinstance(args.get(key), str):
            return args[key]
    return None


def _canonical(value: Any) -> Any:
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _canonical(value[k]) for k in sorted(value, key=lambda k: str(k).encode("utf-16-be"))}
    return value


def backoff_scope(tool: str, args: Any) -> str:
    """The resource a result belongs to: its exact path, else its key-sorted arguments."""
    path = argument_path(args)
    return js_json([tool, "path", path] if path is not None else [tool, "arguments", _canonical(args)])


def expand_hint(turn: int, step: int, call: int, seq: int) -> str:
    """The two ``expand_result`` calls that return a folded result's full text."""
    return (
        f'{EXPAND_TOOL}({{"turn": {turn}, "step": {step}, "call": {call}}}) or '
        f'{EXPAND_TOOL}({{"seq": {seq}, "formatVersion": {LOCATOR_FORMAT_VERSION}}})'
    )


def _header_start(tool: str, path: str | None, digest: Digest) -> str:
    """A fold or spill header up to its hint: ``[tool path · kind · N lines, K kept · ``, the seed's format, kept one
    line (the first line is the one readers parse) by escaping each line break in the tool or the model's path as
    JSON writes it (``\\n``, ``\\u2028``); an ordinary path is written as it is."""
    where = f" {path}" if path else ""
    head = _LINE_BREAKS.sub(lambda m: quoted(m.group(), None), f"{tool}{where}")
    return f"[{head} · {digest.kind} · {digest.total_lines} lines, {digest.kept_lines} kept · "


def fold_header(tool: str, path: str | None, digest: Digest, hint: str) -> str:
    """The first line of a folded view."""
    return f"{_header_start(tool, path, digest)}{hint} returns the full text]"


def _text_blocks(blocks: Sequence[Any]) -> list[str]:
    return [b.get("text") or "" for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"]


def _inner(message: Any) -> list[Any]:
    block = tool_result_block(message if isinstance(message, Mapping) else None)
    content = block.get("content") if block else None
    return list(content) if isinstance(content, list) else []


def _meta_policy(event: Mapping[str, Any]) -> str | None:
    meta = (event.get("data") or {}).get("meta")
    return meta.get("policy") if isinstance(meta, Mapping) else None


def _is_partial(args: Mapping[str, Any]) -> bool:
    grep, lines = args.get("grep"), args.get("lines")
    return (isinstance(grep, str) and bool(grep.strip())) or (
        isinstance(lines, str) and _LINE_RANGE.match(lines.strip()) is not None
    )


def shown_through(session: Session) -> int:
    """The last seq a model request may have included: results at or before it are never folded."""
    for seq in range(session.next_seq - 1, -1, -1):
        event = session.events[seq]
        etype = event.get("type")
        if etype in _SHOWN_TYPES:
            return seq
        if etype == "turn/end":
            reason = (event.get("data") or {}).get("reason")
            if isinstance(reason, Mapping) and isinstance(kind := reason.get("kind"), str) and kind in _EXPOSED_END_KINDS:
                return seq
    return -1


# ---------------------------------------------------------------------------------------------- the ledger
def result_call(event: Mapping[str, Any]) -> tuple[str, bool]:
    """The call id a ``tool/result`` event answers (its block's ``toolCallId``, else its source's ``callId``) and
    its model-visible ``isError`` flag."""
    message = (event.get("data") or {}).get("message")
    return result_call_id(message), tool_result_is_error(message if isinstance(message, Mapping) else None)


class ResultCalls(dict[int, tuple[str, bool]]):
    """``result_call`` of every ``tool/result``, by seq, noted as a streaming pass reads it (``observe`` of
    ``core.read.load.load_session`` for type ``TYPE``): the ledger then reads no result back for it."""

    TYPE = ("tool/result",)

    def observe(self, session: Session, event: Any) -> None:
        """Note the event ``session`` just applied."""
        self[session.next_seq - 1] = result_call(event)


def step_call(arguments: Mapping[str, Any]) -> tuple[int, int, int] | None:
    """The turn, step and call an ``expand_result`` call names by turn and step (call 1 when it names none), each
    read as the tool reads an integer (``js_integer``); None when one of them is no integer."""
    turn, step = js_integer(arguments.get("turn")), js_integer(arguments.get("step"))
    call = js_integer(arguments["call"]) if arguments.get("call") is not None else 1
    return None if turn is None or step is None or call is None else (turn, step, call)


class _Ledger:
    """Original results, their folds and expansions, replayed in log order into per-resource backoff.

    With ``hold`` (a plan that goes on to decide each surface result) the event of a surface result read here for
    its call, and the texts its nested recall calls returned, are held until the plan takes them (``event``,
    ``retrievals``): a session whose events are read back from the log file reads each of them once."""

    def __init__(
        self, session: Session, backoff_after: int, calls: ResultCalls | None = None, *, hold: bool = False
    ) -> None:
        self.session = session
        self._calls = calls
        self._hold = hold
        self._held: dict[int, dict[str, Any]] = {}
        self._retrieved: dict[int, list[str]] = {}
        self.backoff_after = backoff_after
        self.results: dict[int, ResultInfo] = {}
        self.folded_at: dict[tuple[int, int, int], str] = {}
        self.tally: dict[str, list[int]] = {}
        self.backed_off: set[str] = set()
        self._counted_folds: set[int] = set()
        self._counted_calls: set[str] = set()
        self._expanded: set[tuple[int, int, int]] = set()
        for (turn, step), seqs in session.results_by_step.items():
            for ordinal, seq in enumerate(seqs, 1):
                self.results[seq] = self._info(seq, turn, step, ordinal)
        self._replay()

    def _info(self, seq: int, turn: int, step: int, ordinal: int) -> ResultInfo:
        known = self._calls.get(seq) if self._calls is not None else None
        if known is None:
            event = self.session.events[seq]
            known = result_call(event)
            if self._hold and self.session.on_surface(seq):
                self._held[seq] = event
        call_id, is_error = known
        call = self.session.tool_call_at(turn, step, call_id)
        tool = call.name if call else "tool"
        args = parse_arguments(call.arguments) if call else None
        return ResultInfo(
            seq=seq,
            turn=turn,
            step=step,
            call=ordinal,
            call_id=call_id,
            tool=tool,
            path=argument_path(args),
            scope=backoff_scope(tool, args),
            call_seq=call.call_seq if call else None,
            is_error=is_error,
            arguments=args,
        )

    def event(self, seq: int) -> dict[str, Any]:
        """Result ``seq``'s event: the one held since it was read for its call (handed over once), else read now."""
        held = self._held.pop(seq, None)
        return held if held is not None else self.session.events[seq]

    def resource(self, scope: str) -> ResourceBackoff:
        """The backoff state of one resource (zero counts when none of its results was folded)."""
        folds, expansions = self.tally.get(scope, (0, 0))
        return ResourceBackoff(scope, folds, expansions, scope in self.backed_off, self.backoff_after)

    def dispatches(self, info: ResultInfo) -> list[tuple[int, Mapping[str, Any]]]:
        """Code-mode sub-calls logged inside the call that produced ``info`` (between its call and result)."""
        if not self.session.counts.get("tool/code-dispatch") or info.call_seq is None:
            return []
        found = []
        for seq in range(info.call_seq + 1, info.seq):
            event = self.session.events[seq]
            data = event.get("data") or {}
            if event.get("type") == "tool/code-dispatch" and data.get("rootCallId") == info.call_id:
                found.append((seq, data))
        return found

    def retrievals(self, info: ResultInfo) -> list[str]:
        """Texts that successful nested recall-family calls returned inside the call behind ``info``."""
        held = self._retrieved.pop(info.seq, None)
        return _retrieved_texts(self.dispatches(info)) if held is None else held

    def _replay(self) -> None:
        folds = [
            (cut.seq, self.session.original_of(cut.seq)) for cut in self.session.cuts if cut.kind == FOLD
        ]
        expansions: list[tuple[int, Any, str]] = []
        for info in self.results.values():
            if info.tool == EXPAND_TOOL and not info.is_error:
                expansions.append((info.seq, info.arguments, f"{info.call_seq}:{info.call_id}"))
            dispatched = self.dispatches(info)
            if dispatched and self._hold and self.session.on_surface(info.seq):
                self._retrieved[info.seq] = _retrieved_texts(dispatched)
            for seq, data in dispatched:
                if data.get("name") == EXPAND_TOOL and data.get("isError") is not True:
                    expansions.append(
                        (seq, data.get("arguments"), f"{info.call_seq}:{data.get('subCallId')}")
                    )
        timeline = [(seq, "fold", original, "") for seq, original in folds]
        timeline += [(seq, "expand", args, call_key) for seq, args, call_key in expansions]
        for _, what, payload, call_key in sorted(timeline, key=lambda item: item[0]):
            if what == "fold":
                self._note_fold(payload)
            else:
                self._note_expansion(payload, call_key)

    def _note_fold(self, original: int) -> None:
        info = self.results.get(original)
        if info is None or original in self._counted_folds:
            return
        self._counted_folds.add(original)
        self.folded_at[(info.turn, info.step, info.call)] = info.scope
        self.tally.setdefault(info.scope, [0, 0])[0] += 1

    def _address(self, args: Mapping[str, Any]) -> tuple[int, int, int] | None:
        if args.get("seq") is not None:
            seq = js_integer(args["seq"])
            if (
                args.get("formatVersion") != LOCATOR_FORMAT_VERSION
                or seq is None
                or not 0 <= seq < self.session.next_seq
            ):
                return None
            info = self.results.get(self.session.original_of(seq))
            return (info.turn, info.step, info.call) if info else None
        return step_call(args)

    def _note_expansion(self, args: Any, call_key: str) -> None:
        if call_key in self._counted_calls or not isinstance(args, Mapping):
            return
        address = self._address(args)
        if address is None or address not in self.folded_at:
            return
        if args.get("block") is not None and js_integer(args["block"]) != 1:
            return
        self._counted_calls.add(call_key)
        if _is_partial(args) or address in self._expanded:
            return
        self._expanded.add(address)
        scope = self.folded_at[address]
        tally = self.tally[scope]
        tally[1] += 1
        if tally[1] >= self.backoff_after and 2 * tally[1] >= tally[0]:
            self.backed_off.add(scope)


def _retrieved_texts(dispatched: list[tuple[int, Mapping[str, Any]]]) -> list[str]:
    """The texts successful recall-family calls among ``dispatched`` (code-mode sub-calls) returned."""
    return [
        text
        for _, data in dispatched
        if data.get("name") in RECALL_FAMILY and data.get("isError") is not True
        for text in _text_blocks(data.get("content") or [])
        if text
    ]


# ---------------------------------------------------------------------------------------------- views
@dataclass(frozen=True, slots=True)
class _View:
    message: dict[str, Any] | None
    kind: str | None
    chars_after: int
    reason: str
    forwarded: bool


def _build_view(
    info: ResultInfo, message: Mapping[str, Any], retrieved: list[str], config: SliceConfig
) -> _View:
    hint = expand_hint(info.turn, info.step, info.call, info.seq)
    block = tool_result_block(message)
    inner = _inner(message)
    new_inner: list[Any] = []
    changed = forwarded = False
    kind: str | None = None
    first_kind: str | None = None
    reason = ""
    for part in inner:
        if not (isinstance(part, Mapping) and part.get("type") == "text"):
            new_inner.append(part)
            continue
        text = part.get("text") or ""
        if any(r in text or js_json(r) in text for r in retrieved):
            forwarded = True
            new_inner.append(part)
            continue
        if fold_spill_locator(text) is not None:
            head, sep, rest = text.partition("\n")
            text = f"{head[:-1]} · {hint} returns the full text]{sep}{rest}"
            kind, changed = kind or "spill", True
        else:
            digest = digest_tool_result(text, info.tool, info.path, config.digest)
            first_kind, reason = first_kind or digest.kind, reason or digest.reason
            if digest.digested:
                text = f"{fold_header(info.tool, info.path, digest, hint)}\n{digest.text}"
                kind, changed = kind or digest.kind, True
        new_inner.append({**part, "text": text})
    after = sum(cp_len(t) for t in _text_blocks(new_inner))
    if not changed:
        return _View(None, first_kind, after, reason, forwarded)
    new_block = {**(block or {}), "content": new_inner}
    content = [new_block if b is block else b for b in message.get("content") or []]
    return _View({**message, "content": content}, kind, after, "", forwarded)


def _fold_event(event: Mapping[str, Any], view: _View, before: int) -> dict[str, Any]:
    seq = event["seq"]
    meta = {"policy": FOLD, "digest": view.kind, "charsBefore": before, "charsAfter": view.chars_after}
    return {
        "type": "tool/result",
        "data": {**event["data"], "message": view.message, "meta": meta},
        "sourceEventSeqs": [seq],
        "surfaceOp": {"op": "replace", "start": seq, "end": seq},
    }


# ---------------------------------------------------------------------------------------------- analysis
def _pinned(step: int, text_units: int, config: SliceConfig) -> bool:
    return step <= config.fold.pinSteps and text_units < config.fold.pinMaxChars


def _decide(
    session: Session, ledger: _Ledger, info: ResultInfo, shown: int, config: SliceConfig, explain: bool
) -> FoldRow:
    event = ledger.event(info.seq)
    message = (event.get("data") or {}).get("message")
    texts = _text_blocks(_inner(message))
    before = sum(cp_len(t) for t in texts)

    def row(
        status: str, reason: str, kind: str | None = None, after: int = before, planned: Any = None
    ) -> FoldRow:
        return FoldRow(
            info.seq, info.seq, info.turn, info.step, info.call, info.tool, info.path,
            status, kind, before, after, reason, planned, ledger.resource(info.scope),
        )  # fmt: skip

    if not config.fold.enabled:
        return row(KEPT, "fold.enabled is false")
    if info.is_error:
        return row(ERROR, "error results are never folded")
    if info.tool in RECALL_FAMILY:
        return row(RECALL, "recalled originals are never folded")
    pinned = _pinned(info.step, sum(utf16_len(t) for t in texts), config)
    backed_off = info.scope in ledger.backed_off
    if info.seq <= shown:
        if not explain or pinned or backed_off:
            return row(SHOWN, "already sent to the model")
        view = _build_view(info, message, ledger.retrievals(info), config)
        if view.message is None:
            return row(SHOWN, "already sent to the model", view.kind)
        note = f"already sent to the model; folding it now would rewrite the sent prefix (to {view.chars_after} chars)"
        return row(SHOWN, note, view.kind, view.chars_after)
    if pinned:
        return row(PINNED, f"step {info.step} <= fold.pinSteps and under fold.pinMaxChars")
    if backed_off:
        return row(BACKED_OFF, "the model kept expanding this resource's folds")
    view = _build_view(info, message, ledger.retrievals(info), config)
    if view.message is None:
        if view.forwarded:
            return row(RECALL, "forwards a recorded retrieval")
        return row(KEPT, view.reason, view.kind)
    return row(FOLD, "", view.kind, view.chars_after, _fold_event(event, view, before))


def _replacement_row(session: Session, ledger: _Ledger, seq: int) -> FoldRow:
    event = session.events[seq]
    data = event.get("data") or {}
    original = session.original_of(seq)
    info = ledger.results.get(original)
    meta = data.get("meta") if isinstance(data.get("meta"), Mapping) else {}
    policy = meta.get("policy") or cut_kind(event)  # a DSH bridge's expand carries no meta
    now = session.node_chars(seq)
    before = session.node_chars(original)
    if policy == FOLD:
        status, reason, kind = FOLDED, f"folded view of seq {original}", meta.get("digest")
    elif policy == "expand":
        status, reason, kind = (
            UNFOLDED,
            f"restored by the {meta.get('by', 'operator')} (original seq {original})",
            None,
        )
    else:
        status, reason, kind = (
            REPLACED,
            f"replaced by {policy} (original seq {original})",
            None,
        )
    turn = info.turn if info else js_integer(data.get("turn")) or 0
    step = info.step if info else js_integer(data.get("step")) or 0
    return FoldRow(
        seq, original, turn, step, info.call if info else 0, info.tool if info else "tool",
        info.path if info else None, status, kind, before, now, reason,
        backoff=ledger.resource(info.scope) if info else None,
    )  # fmt: skip


def _analyze(
    session: Session, config: SliceConfig, explain: bool, calls: ResultCalls | None = None, shown: int | None = None
) -> tuple[list[FoldRow], _Ledger]:
    ledger = _Ledger(session, config.fold.backoffAfterExpansions, calls, hold=True)
    shown = shown_through(session) if shown is None else shown
    rows = []
    for seq in session.surface:
        if session.surface_type(seq) != "tool/result":
            continue
        if not session.is_original(seq):
            rows.append(_replacement_row(session, ledger, seq))
        elif seq in ledger.results:
            rows.append(_decide(session, ledger, ledger.results[seq], shown, config, explain))
    return rows, ledger


def plan_fold(session: Session, config: SliceConfig) -> list[dict[str, Any]]:
    """Replacement events for every original result on the surface that should fold now (in surface order)."""
    return [row.event for row in _analyze(session, config, explain=False)[0] if row.event is not None]


def preview_fold(
    session: Session, config: SliceConfig, calls: ResultCalls | None = None, shown: int | None = None
) -> list[FoldRow]:
    """One row per tool result on the surface: what the fold policy did, would do now, or why not (``calls``:
    what the pass that projected ``session`` noted of its results; ``shown``: ``shown_through(session)`` when
    the caller has it)."""
    return _analyze(session, config, explain=True, calls=calls, shown=shown)[0]


def preview_with_backoff(
    session: Session, config: SliceConfig
) -> tuple[list[FoldRow], dict[str, ResourceBackoff]]:
    """``preview_fold`` and ``resource_backoff`` from one reading of the log's results."""
    rows, ledger = _analyze(session, config, explain=True)
    return rows, _backoff(ledger)


def resource_backoff(session: Session, config: SliceConfig) -> dict[str, ResourceBackoff]:
    """The backoff state of every resource with at least one folded result, keyed by scope, in first-fold order."""
    return _backoff(_Ledger(session, config.fold.backoffAfterExpansions))


def _backoff(ledger: _Ledger) -> dict[str, ResourceBackoff]:
    return {scope: ledger.resource(scope) for scope in ledger.tally}


# ---------------------------------------------------------------------------------------------- operator expand
def check_unfold_target(session: Session, seq: int) -> None:
    """Raise FoldError when no later state of the log could unfold ``seq``: it is not in the log yet, or it is not
    a tool result (what an event is never changes)."""
    if not 0 <= seq < session.next_seq:
        raise FoldError(f"no session event at seq {seq}")
    etype = session.events[seq].get("type")
    if etype != "tool/result":
        raise FoldError(f"seq {seq} is {a_or_an(quoted(etype))} event, not a tool result")


def _standing_for(session: Session, original: int) -> int:
    """The last of the tool results that replaced ``original`` in turn (a fold, a prune, an expand), else itself: the
    node that shows it while it is on the surface."""
    node = original
    while (nxt := session.replaced_by.get(node)) is not None and session.events[nxt].get(
        "type"
    ) == "tool/result":
        node = nxt
    return node


def off_surface(session: Session, seq: int) -> str | None:
    """Why the tool result at ``seq`` (a result or a fold of one) can no longer be put back: it left the surface (a
    rewind, a seal or a compaction took its place), or the log holds no such event; None while it, or a result that
    stands for it, is on the surface. Cheaper than ``plan_unfold``, and blind to whether it is folded."""
    if not 0 <= seq < session.next_seq:
        return f"the log holds no event at seq {seq}"
    try:
        check_unfold_target(session, seq)
    except FoldError as error:  # never a tool result: nothing it could be put back as
        return str(error)
    original = session.original_of(seq)
    node = _standing_for(session, original)
    if session.on_surface(node):
        return None
    by = session.replaced_by.get(node)
    return f"the tool result at seq {original} is no longer on the surface" + ("" if by is None else f" (seq {by} replaced it)")


def plan_unfold(session: Session, seq: int) -> list[dict[str, Any]]:
    """The replacement that puts a folded result's original content back on the surface (``seq``: result or fold)."""
    check_unfold_target(session, seq)
    original = session.original_of(seq)
    node = _standing_for(session, original)
    if not session.on_surface(node):
        raise FoldError(
            f"the tool result at seq {original} is not on the surface "
            f"(seq {node} was replaced by seq {session.replaced_by.get(node)})"
        )
    if node == original:
        raise FoldError(f"the tool result at seq {original} is not folded")
    policy = _meta_policy(session.events[node])
    if policy == "expand":
        raise FoldError(f"the tool result at seq {original} is already unfolded (seq {node} restored it)")
    if policy != FOLD:
        raise FoldError(
            f"the tool result at seq {original} is not folded "
            f"(its surface copy at seq {node} comes from {policy or 'another policy'})"
        )
    data = session.events[original]["data"]
    return [
        {
            "type": "tool/result",
            "data": {**data, "meta": {"policy": "expand", "by": "operator"}},
            "sourceEventSeqs": [node],
            "surfaceOp": {"op": "replace", "start": node, "end": node},
        }
    ]


# ---------------------------------------------------------------------------------------------- spill arm
def spill_digest(
    session: Session,
    config: SliceConfig,
    *,
    tool: str,
    arguments: Any,
    text: str,
    step: int,
    is_error: bool = False,
    nested: bool = False,
) -> Digest | None:
    """The digest to log in place of a fresh, over-size result whose full text the host stores; None = no spill.

    ``text`` is the result's text parts joined with newlines. The arm skips nested calls, errors, file reads,
    the recall family, results under ``fold.spillPreviewMinBytes`` UTF-8 bytes, pinned results, backed-off
    resources, and texts the digest would not condense.
    """
    fold = config.fold
    if not fold.enabled or fold.spillPreviewMinBytes <= 0 or nested or is_error:
        return None
    if tool in SPILL_EXEMPT_TOOLS or tool in RECALL_FAMILY:
        return None
    if len(text.encode("utf-8", "replace")) < fold.spillPreviewMinBytes or _pinned(
        step, utf16_len(text), config
    ):
        return None
    args = parse_arguments(arguments)
    if backoff_scope(tool, args) in _Ledger(session, fold.backoffAfterExpansions).backed_off:
        return None
    digest = digest_tool_result(text, tool, argument_path(args), config.digest)
    return digest if digest.digested else None


def render_spill_view(
    tool: str, path: str | None, digest: Digest, size_bytes: int, locator: str, retrieval_hint: str
) -> str | None:
    """The logged text of a spilled result, or None when its first line would not parse back to the locator."""
    text = (
        f"{_header_start(tool, path, digest)}"
        f"full text ({size_bytes} bytes) stored at {locator} — {retrieval_hint}]\n{digest.text}"
    )
    return text if fold_spill_locator(text) == StoredText(locator, size_bytes) else None
