"""The read index of sealed turns (seed 000 §1.d): which files a turn read successfully, with fingerprints.

A successful ``read``/``read_section``/``read_file`` becomes a ``ReadRef``: the target path, the tool, the
argument window (every argument but the path), the channel (the logged ``result`` the model saw, or a
``code log`` read made by a Code Mode program, which the model did not necessarily see), and a fingerprint of
the returned text (first 8 hex of its sha256). Errors never enter the index; image-only reads are not text
evidence and are skipped.

Each tape entry renders one line per sealed turn, listing the last successful read per key and comparing it
with the last one of an earlier turn (``= turn T …`` unchanged, ``≠ turn T …`` changed). The index holds
metadata only, never payloads, and is built incrementally per ``Session``: from the events appended since
the last look, or, for a session projected in one streaming pass, during the pass (``index_reads``), so that no
event is read back from the log for it.
"""

from __future__ import annotations

import unicodedata
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.log.records import PackedRow
from core.policies.fold import parse_arguments
from core.read.session import Session
from core.shared.text import cp_len, js_json, sha256_hex, tool_result_block

READ_TOOLS = frozenset({"read", "read_section", "read_file"})
READ_INDEX_LIMIT = 10
READ_LINE_CHARS = 2000
TARGET_LABEL_CHARS = 180
WINDOW_LABEL_CHARS = 140
_PATH_KEYS = ("path", "file_path", "filePath")
_SHORTENED = "…[label shortened]"


@dataclass(frozen=True, slots=True)
class ReadRef:
    """One successful text read: a direct result block (``block`` 1) or a code-dispatch read (``block`` None)."""

    key: str
    target: str
    window: str
    tool: str
    turn: int
    step: int
    seq: int
    block: int | None
    digest: str
    lines: int

    @property
    def location(self) -> str:
        """``step S, seq Q block 1`` for a logged result, ``step S, dispatch seq Q`` for a code read."""
        if self.block is None:
            return f"step {self.step}, dispatch seq {self.seq}"
        return f"step {self.step}, seq {self.seq} block {self.block}"


@dataclass(frozen=True, slots=True)
class _Call:
    name: str
    arguments: Any
    turn: int
    step: int
    call_id: str


def _locale_key(key: str) -> tuple[tuple[tuple[int, str], ...], str]:
    """An approximation of JavaScript ``localeCompare`` order: punctuation, digits, letters; case last."""

    def rank(ch: str) -> int:
        category = unicodedata.category(ch)
        return 2 if category.startswith("L") else 1 if category.startswith("N") else 0

    return tuple((rank(ch), ch.lower()) for ch in key), key.swapcase()


def _is_array_index(key: str) -> bool:
    """Whether JavaScript lists ``key`` first, as an array index: a canonical integer below 2**32 - 1 (ten digits at
    most, so that a model's key of thousands of digits is never given to ``int``)."""
    return (
        key.isascii() and key.isdigit() and len(key) <= 10 and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1
    )


def _sorted_keys(value: Any) -> Any:
    """Keys sorted recursively as the seed sorts them; JSON then lists integer-like keys first, as JS objects do."""
    if isinstance(value, list):
        return [_sorted_keys(v) for v in value]
    if isinstance(value, Mapping):
        keys = sorted(map(str, value), key=_locale_key)
        ordered = sorted(filter(_is_array_index, keys), key=int) + [k for k in keys if not _is_array_index(k)]
        return {k: _sorted_keys(value[k]) for k in ordered}
    return value


def _read_ref(call: _Call, seq: int, content: Sequence[Any], block: int | None) -> ReadRef | None:
    if call.name not in READ_TOOLS:
        return None
    args = parse_arguments(call.arguments)
    if not isinstance(args, Mapping):
        return None
    target = next((args[k] for k in _PATH_KEYS if args.get(k) is not None), None)
    if not isinstance(target, str) or not target.strip():
        return None
    texts = [p.get("text") or "" for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
    if not texts:
        return None
    selectors = {k: v for k, v in args.items() if k not in _PATH_KEYS}
    window = js_json(_sorted_keys(selectors)) if selectors else "default"
    channel = "result" if block is not None else "code log"
    text = "".join(texts)
    return ReadRef(
        key=js_json([target, call.name, window, channel]),
        target=target,
        window=window,
        tool=call.name,
        turn=call.turn,
        step=call.step,
        seq=seq,
        block=block,
        digest=sha256_hex(text)[:8],
        lines=0 if text == "" else text.count("\n") + 1,
    )


def label(text: str, limit: int) -> str:
    """A bounded display label: JSON-escaped when it holds CR/LF/TAB, shortened past ``limit``."""
    if any(ch in text for ch in "\r\n\t"):
        text = js_json(text)
    if cp_len(text) <= limit:
        return text
    return text[: limit - 24] + _SHORTENED


def _canonical(reads: Sequence[ReadRef]) -> list[ReadRef]:
    """The last read per key, in first-seen key order."""
    latest: dict[str, ReadRef] = {}
    for read in reads:
        latest[read.key] = read
    return list(latest.values())


class ReadIndex:
    """Successful reads of a session, attached to the logged result that carries them."""

    TYPES = frozenset(
        {"tool/code-dispatch-start", "tool/code-dispatch", "tool/call", "assistant/message", "tool/result"}
    )  # every event type ``observe`` looks at

    def __init__(self) -> None:
        self._cursor = 0
        self._calls: dict[tuple[int, int, str], _Call] = {}
        self._roots: dict[str, _Call] = {}
        self._bound: dict[str, _Call] = {}
        self._queued: dict[tuple[int, int, str], list[ReadRef]] = {}
        self._by_result: dict[int, list[ReadRef]] = {}
        self._history: dict[str, dict[int, ReadRef]] = {}

    def update(self, session: Session) -> ReadIndex:
        """Index the events appended since the last update."""
        for seq in session.seqs_of(self.TYPES, self._cursor):
            self.observe(session, seq, session.events[seq])
        self._cursor = session.next_seq
        return self

    def _register(self, call: _Call) -> None:
        self._calls[(call.turn, call.step, call.call_id)] = call
        self._roots[call.call_id] = call

    def _record(self, read: ReadRef) -> None:
        self._history.setdefault(read.key, {})[read.turn] = read

    def observe(self, session: Session, seq: int, event: Mapping[str, Any]) -> None:
        """Index ``event``, at ``seq``, right after ``session`` applied it (events in log order, none skipped
        whose type is in ``TYPES``)."""
        self._cursor = seq + 1
        etype = event.get("type")
        data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
        if etype == "tool/code-dispatch-start":
            root = self._roots.get(str(data.get("rootCallId")))
            if root is not None:
                self._bound[str(data.get("subCallId"))] = root
            return
        if etype == "tool/code-dispatch":
            root = self._bound.pop(str(data.get("subCallId")), None) or self._roots.get(
                str(data.get("rootCallId"))
            )
            if root is None or data.get("isError") is True:
                return
            nested = _Call(str(data.get("name")), data.get("arguments"), root.turn, root.step, root.call_id)
            read = _read_ref(nested, seq, data.get("content") or [], None)
            if read is not None:
                self._queued.setdefault((root.turn, root.step, root.call_id), []).append(read)
                self._record(read)
            return
        turn, step = data.get("turn"), data.get("step")
        if not (isinstance(turn, int) and isinstance(step, int)) or not session.is_original(seq):
            return
        if etype == "tool/call":
            self._register(
                _Call(str(data.get("name")), data.get("arguments"), turn, step, str(data.get("callId")))
            )
        elif etype == "assistant/message":
            for block in (data.get("message") or {}).get("content") or ():
                if isinstance(block, Mapping) and block.get("type") == "tool-call":
                    name, args, call_id = str(block.get("name")), block.get("arguments"), str(block.get("id"))
                    self._register(_Call(name, args, turn, step, call_id))
        elif etype == "tool/result":
            block = tool_result_block(data.get("message")) or {}
            call_id = str(block.get("toolCallId"))
            reads = self._queued.pop((turn, step, call_id), [])
            call = self._calls.get((turn, step, call_id))
            if call is not None and block.get("isError") is not True:
                read = _read_ref(call, seq, block.get("content") or [], 1)
                if read is not None:
                    reads.append(read)
                    self._record(read)
            if reads:
                self._by_result[seq] = reads

    def reads_for_result(self, seq: int) -> list[ReadRef]:
        """The reads carried by the original tool result at ``seq`` (code reads first, in log order)."""
        return list(self._by_result.get(seq, ()))

    def prior(self, read: ReadRef, turn: int) -> ReadRef | None:
        """The last successful read of the same key in the latest turn before ``turn``."""
        earlier = [t for t in self._history.get(read.key, {}) if t < turn]
        return self._history[read.key][max(earlier)] if earlier else None

    def _item(self, read: ReadRef, turn: int) -> str:
        prior = self.prior(read, turn)
        change = ""
        if prior is not None:
            mark = "=" if prior.digest == read.digest else "≠"
            change = f", {mark} turn {prior.turn} {prior.location}"
        if read.block is None:
            channel = f', code log; model visibility not implied; recall_turn({{"turn":"{read.turn}","view":"full"}})'
        else:
            channel = ", logged result"
        return (
            f"{label(read.target, TARGET_LABEL_CHARS)} ({read.lines} lines, {read.digest}, {read.location}, "
            f"{read.tool} window {label(read.window, WINDOW_LABEL_CHARS)}{channel}{change})"
        )

    def index_line(self, reads: Sequence[ReadRef], turn: int, max_chars: int = READ_LINE_CHARS) -> str | None:
        """The ``[files read this turn: …]`` line of a sealed turn within ``max_chars`` code points, or None."""
        unique = _canonical(reads)
        if not unique:
            return None

        def render(items: list[str]) -> str:
            omitted = len(unique) - len(items)
            more = ""
            if omitted:
                sep = ", " if items else ""
                more = f'{sep}+{omitted} more; recall_turn({{"turn":"{turn}","view":"full"}})'
            return f"[files read this turn: {', '.join(items)}{more}]"

        shown: list[str] = []
        for read in unique[:READ_INDEX_LIMIT]:
            candidate = [*shown, self._item(read, turn)]
            if cp_len(render(candidate)) > max_chars:
                break
            shown = candidate
        line = render(shown)
        return line if cp_len(line) <= max_chars else None


_INDEXES: weakref.WeakKeyDictionary[Session, ReadIndex] = weakref.WeakKeyDictionary()


def _index_of(session: Session) -> ReadIndex:
    index = _INDEXES.get(session)
    if index is None:
        index = _INDEXES[session] = ReadIndex()
    return index


def read_index(session: Session) -> ReadIndex:
    """The session's read index, brought up to date (built once per ``Session``, then incrementally)."""
    return _index_of(session).update(session)


def index_reads(session: Session, item: Mapping[str, Any] | PackedRow) -> None:
    """An ``observe`` hook of ``core.read.load.load_session``: builds the session's read index as the pass goes, from
    the events as they are decoded, so ``read_index`` reads nothing back from the log afterwards."""
    if type(item) is not PackedRow and item.get("type") in ReadIndex.TYPES:  # type: ignore[union-attr]
        _index_of(session).observe(session, session.next_seq - 1, item)  # type: ignore[arg-type]
