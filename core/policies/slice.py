"""Slice tape sealing (seed 000 §1.b–1.c) as a pure planner: completed turns become frozen tape entries.

At step 1 of every turn the host asks ``plan_seal`` which completed turns to seal. Each entry is a
``user/message`` with source ``{"kind": "plugin:slice:history"}`` that replaces a contiguous span of surface
nodes in place (``{"op": "replace", "start": S, "end": E}``) and cites every node it shadows. Its text names
the turns it covers, keeps every visible assistant reply verbatim (whitespace included) inside hash-stamped
wrappers, adds a read index per turn and one locator line per tool result; the bodies stay in the log, one
recall call away.

What is sealed:

- only nodes of completed turns older than the last ``history.keepRecentTurns`` ones;
- never a protected node: every user message that is not ours (human input, instructions, plugin notices,
  multimodal input, foreign replacements such as a compaction summary), the live runtime-context snapshot, and
  anything before the first turn. A runtime snapshot that a newer one superseded is not protected; it leaves
  the surface with its turn's entry as a one-line note;
- never anything at or before the last existing entry (the frozen prefix): entries are never re-rendered and
  nothing is backfilled ahead of one, so a request's bytes up to its last entry never change again.

Protected nodes split a turn into several entries. A group of one turn whose tool calls and results do not pair
up stays raw (sealing half a pair would leave an orphan on the surface); the planner reports it once per group
as a warning. The system prompt lives in ``request/header`` and is never on the surface.

With ``history.entryMaxChars`` set, an entry must fit in that many code points: the renderer drops tool lines
first, then shortens replies and the read index, then switches to a compact layout, and finally falls back to a
span marker with per-turn recall instructions.

The module also holds the policy's system-prompt section (``prompt_section``) and the ``defaultReasoningEffort``
rule (``default_reasoning_effort``), which the host applies to each request.
"""

from __future__ import annotations

import uuid
from array import array
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.log.messages import user_text
from core.policies.fold import LOCATOR_FORMAT_VERSION
from core.policies.read_index import READ_LINE_CHARS, ReadIndex, ReadRef, read_index
from core.policies.recall import expand_locator, result_content, tool_name, turn_locator
from core.policies.slice_config import SliceConfig
from core.read.session import RUNTIME_CONTEXT_PLUGIN, TAPE_SOURCE_KIND, Session, derive_message
from core.read.summary import tape_span
from core.shared.text import cp_len, js_json, quoted, result_call_id, sha256_hex, text_of_blocks

TAPE_PREFIX = "[slice tape v1 · turns "
SNAPSHOT_NOTE_PREFIX = "[slice note · "
TOOL_LINES_PER_TURN = 6
REPLY_HASH_CHARS = 12
LEGACY_TAPE_PLUGIN = "slice:history"
# Entry message ids are derived from the session id and the entry's seq, so a plan is reproducible.
_ENTRY_IDS = uuid.UUID("5f0c7d1e-9a35-4c0b-8d8e-3b1f6a2c9e47")

Caps = tuple[int, int, int]  # (cap, head, tail) in code points


# ---------------------------------------------------------------------------------------------- node kinds
def is_tape_entry(event: Mapping[str, Any]) -> bool:
    """True for a slice tape entry (ours, or one written by the V3-era plugin)."""
    if event.get("type") != "user/message":
        return False
    source = (event.get("data") or {}).get("source")
    if not isinstance(source, Mapping):
        return False
    kind = source.get("kind")
    return kind == TAPE_SOURCE_KIND or (kind == "plugin" and source.get("plugin") == LEGACY_TAPE_PLUGIN)


def is_runtime_snapshot(message: Any) -> bool:
    """True for a host-projected runtime-context snapshot (DSH 0.1 plugin source, or the later bare kind)."""
    if not isinstance(message, Mapping) or message.get("role") != "user":
        return False
    source = message.get("source")
    if not isinstance(source, Mapping):
        return False
    kind = source.get("kind")
    return kind == "runtime-context" or (kind == "plugin" and source.get("plugin") == RUNTIME_CONTEXT_PLUGIN)


def entry_turns(session: Session, seq: int) -> tuple[int, int]:
    """The turns an existing entry covers: from its header, else from the events it replaced, else (0, 0)."""
    message = session.events[seq].get("data") or {}
    span = tape_span(text_of_blocks(message.get("content")))
    if span is not None:
        return span
    turns: list[int] = []
    seen: set[int] = set()
    pending = list(session.sources_of(seq))
    while pending:
        source = pending.pop()
        if source in seen:
            continue
        seen.add(source)
        if is_tape_entry(session.events[source]):
            pending.extend(session.sources_of(source))
        elif session.turn_of(source) >= 1:
            turns.append(session.turn_of(source))
    return (min(turns), max(turns)) if turns else (0, 0)


# ---------------------------------------------------------------------------------------------- the surface
@dataclass(slots=True)
class SurfaceNode:
    """One surface node as the sealer sees it, with what sealing reads of its event (``inspect_surface`` reads each
    event once: a node is read back from the file on a big log; ``SurfaceLayout.node`` builds one)."""

    seq: int
    type: str
    turns: tuple[int, int]
    protected: bool
    superseded: bool = False
    recall_turn: int = 0
    calls: tuple[str, ...] = ()  # the ids of its message's tool-call blocks
    results: tuple[str, ...] = ()  # and of its tool-result blocks
    reply: str = ""  # an assistant message: its text blocks, joined
    calls_tools: bool = False  # an assistant message: it holds a tool-call block
    step: Any = None  # its ``data.step``
    result: tuple[str, int] = ("", 0)  # a tool result: its call id and text size


_PROTECTED, _SUPERSEDED, _CALLS_TOOLS = 1, 2, 4  # ``SurfaceLayout.flags`` bits


def _result_facts(data: Mapping[str, Any]) -> tuple[str, int]:
    """The call id and text size of a tool result's ``data``."""
    message = data.get("message")
    size = sum(
        cp_len(p.get("text") or "")
        for p in result_content(message)
        if isinstance(p, Mapping) and p.get("type") == "text"
    )
    return result_call_id(message), size


@dataclass(slots=True)
class SurfaceLayout:
    """The surface in model order, with the turn bookkeeping sealing needs.

    A big log's surface has tens of thousands of nodes, so what sealing needs of each is kept in columns (ints in
    arrays, one string or value per node in lists, every node's call and result ids in one flat list) rather than
    in an object per node; ``node(k)`` builds node ``k``'s ``SurfaceNode``.
    """

    completed_through: int
    last_turn: int
    seqs: array[int] = field(default_factory=lambda: array("q"))
    first_turns: array[int] = field(default_factory=lambda: array("q"))
    last_turns: array[int] = field(default_factory=lambda: array("q"))
    recall_turns: array[int] = field(default_factory=lambda: array("q"))
    flags: bytearray = field(default_factory=bytearray)
    kinds: bytearray = field(default_factory=bytearray)  # index in ``type_names``
    type_names: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # each node's call ids, then its result ids
    id_ends: array[int] = field(default_factory=lambda: array("q"))  # per node: where its calls end, then its results
    replies: list[str] = field(default_factory=list)
    steps: list[Any] = field(default_factory=list)
    result_ids: list[str] = field(default_factory=list)
    result_sizes: array[int] = field(default_factory=lambda: array("q"))
    _open: dict[str, str] = field(default_factory=dict, repr=False, compare=False)  # calls not answered yet

    def __len__(self) -> int:
        return len(self.seqs)

    @property
    def nodes(self) -> list[SurfaceNode]:
        """Every node, built."""
        return [self.node(k) for k in range(len(self))]

    def protected(self, k: int) -> bool:
        """Whether node ``k`` is protected."""
        return bool(self.flags[k] & _PROTECTED)

    def call_ids(self, k: int) -> list[str]:
        """Node ``k``'s tool-call ids."""
        return self.ids[self.id_ends[2 * k - 1] if k else 0 : self.id_ends[2 * k]]

    def result_call_ids(self, k: int) -> list[str]:
        """Node ``k``'s tool-result ids."""
        return self.ids[self.id_ends[2 * k] : self.id_ends[2 * k + 1]]

    def node(self, k: int) -> SurfaceNode:
        """Node ``k``."""
        flags = self.flags[k]
        return SurfaceNode(
            self.seqs[k], self.type_names[self.kinds[k]], (self.first_turns[k], self.last_turns[k]),
            bool(flags & _PROTECTED), bool(flags & _SUPERSEDED), self.recall_turns[k], tuple(self.call_ids(k)),
            tuple(self.result_call_ids(k)), self.replies[k], bool(flags & _CALLS_TOOLS), self.steps[k],
            (self.result_ids[k], self.result_sizes[k]),
        )  # fmt: skip

    def add(self, seq: int, etype: str, turns: tuple[int, int], recall_turn: int, event: Mapping[str, Any]) -> None:
        """Append the node of surface event ``event``, with what sealing reads of it."""
        self.seqs.append(seq)
        self.first_turns.append(turns[0])
        self.last_turns.append(turns[1])
        self.recall_turns.append(recall_turn)
        if etype not in self.type_names:
            self.type_names.append(etype)
        self.kinds.append(self.type_names.index(etype))
        message = derive_message(event) or {}  # type: ignore[arg-type]
        calls: dict[str, None] = {}
        results: dict[str, None] = {}
        for block in message.get("content") or ():
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool-call":
                calls[str(block.get("id"))] = None
            elif block.get("type") == "tool-result":
                found = str(block.get("toolCallId"))
                results[self._open.pop(found, found)] = None  # its call's string: one copy of the id
        self._open.update({i: i for i in calls})
        self.ids += calls
        self.id_ends.append(len(self.ids))
        self.ids += results
        self.id_ends.append(len(self.ids))
        data = event.get("data") or {}
        self.steps.append(data.get("step"))
        flags = (seq > self.completed_through or turns[0] < 1) * _PROTECTED
        reply, result = "", ("", 0)
        if etype == "assistant/message":
            content = (data.get("message") or {}).get("content") or []
            reply = text_of_blocks(content)
            if any(isinstance(b, Mapping) and b.get("type") == "tool-call" for b in content):
                flags |= _CALLS_TOOLS
        elif etype == "tool/result":
            call_id, size = _result_facts(data)
            result = (next((i for i in results if i == call_id), call_id), size)
        self.flags.append(flags)
        self.replies.append(reply)
        self.result_ids.append(result[0])
        self.result_sizes.append(result[1])

    def mark(self, k: int, protected: bool, superseded: bool) -> None:
        """Set node ``k``'s protected and superseded flags."""
        self.flags[k] = (self.flags[k] & _CALLS_TOOLS) | protected * _PROTECTED | superseded * _SUPERSEDED


def inspect_surface(session: Session, pending: Sequence[Mapping[str, Any]] = ()) -> SurfaceLayout:
    """Classify every surface node: its turns, whether it is protected, whether it is a superseded snapshot.

    ``pending`` holds the messages the host is about to append in this step; when one of them is a runtime
    snapshot, every snapshot already on the surface is superseded.
    """
    last_turn = max((n for n, t in session.turns.items() if t.end_seq is not None), default=0)
    layout = SurfaceLayout(session.completed_through, last_turn)
    live = None  # the last node whose message is a runtime snapshot, unless a pending one supersedes it
    snapshots: list[int] = []
    last_entry = -1
    for index, seq in enumerate(session.surface):
        event = session.events[seq]
        etype = str(event.get("type"))
        own = is_tape_entry(event)
        turn = session.turn_of(seq)
        layout.add(seq, etype, entry_turns(session, seq) if own else (turn, turn), turn, event)
        if is_runtime_snapshot(derive_message(event)):
            live = seq
        if etype == "user/message" and is_runtime_snapshot(event.get("data")):
            snapshots.append(index)
        elif etype == "user/message":
            layout.mark(index, True, False)
        if own:
            last_entry = index
    if any(is_runtime_snapshot(m) for m in pending):
        live = None
    for k in snapshots:
        # A dead snapshot of the open turn is still dead; one from before the first turn has no recall page.
        protected = layout.seqs[k] == live or layout.recall_turns[k] < 1
        layout.mark(k, protected, not protected)
    for k in range(last_entry + 1):
        layout.mark(k, True, False)
    return layout


# ---------------------------------------------------------------------------------------------- items
@dataclass(frozen=True, slots=True)
class _Reply:
    seq: int
    step: Any
    text: str


@dataclass(slots=True)
class TurnItem:
    """What one sealed turn contributes to an entry."""

    turn: int
    replies: list[_Reply] = field(default_factory=list)
    empty_replies: int = 0
    tools: list[str] = field(default_factory=list)
    reads: list[ReadRef] = field(default_factory=list)
    snapshots: list[int] = field(default_factory=list)


def _tool_line(session: Session, node: SurfaceNode, turn: int) -> tuple[int, str]:
    """The original result behind a result node, and its locator line."""
    original = session.original_of(node.seq)
    if original != node.seq and session.events[original].get("type") != "tool/result":
        original = node.seq
    if original == node.seq:
        step, (call_id, size) = node.step, node.result
    else:
        data = session.events[original].get("data") or {}
        step, (call_id, size) = data.get("step"), _result_facts(data)
    name = tool_name(session, turn, step, call_id)
    return (
        original,
        f"[tool turn {turn} step {step} seq {original} · {name} · {size} chars · {expand_locator(original)}]",
    )


def collect_items(session: Session, nodes: Sequence[SurfaceNode], index: ReadIndex) -> list[TurnItem]:
    """Group a segment's nodes into per-turn items (replies, tool lines, reads, superseded snapshots)."""
    items: list[TurnItem] = []
    for node in nodes:
        turn = node.turns[0]
        if not items or items[-1].turn != turn:
            items.append(TurnItem(turn))
        item = items[-1]
        if node.superseded:
            item.snapshots.append(node.recall_turn)
            continue
        if node.type == "assistant/message":
            if node.reply:
                item.replies.append(_Reply(node.seq, node.step, node.reply))
            elif not node.calls_tools:
                item.empty_replies += 1
        elif node.type == "tool/result":
            original, line = _tool_line(session, node, turn)
            item.reads += index.reads_for_result(original)
            item.tools.append(line)
    return items


# ---------------------------------------------------------------------------------------------- rendering
@dataclass(frozen=True, slots=True)
class RenderLevel:
    """One rung of the ``entryMaxChars`` ladder."""

    tools: bool
    read_chars: int
    reply: Caps | None
    compact: bool = False


FULL_LEVEL = RenderLevel(tools=True, read_chars=READ_LINE_CHARS, reply=None)


def ladder(max_chars: int) -> list[RenderLevel]:
    """The levels tried in order when an entry must fit ``max_chars`` code points."""
    levels = [
        FULL_LEVEL,
        RenderLevel(False, READ_LINE_CHARS, None),
        RenderLevel(False, min(READ_LINE_CHARS, max_chars), (2000, 1400, 500)),
    ]
    levels += [RenderLevel(False, 2000 // d, (2000 // d, 1400 // d, 500 // d)) for d in (2, 4, 8, 16)]
    levels += [RenderLevel(False, 128, (48, 32, 16), True), RenderLevel(False, 0, (48, 32, 16), True)]
    return levels


def render_reply(artifact_id: str, text: str, caps: Caps | None = None) -> str:
    """A reply wrapped with its sha256 id; over a cap it keeps head and tail around a cut marker."""
    body = text
    if caps is not None and cp_len(body) > caps[0]:
        _, head, tail = caps
        n = cp_len(body)
        body = f"{body[:head]} …[+{n - head - tail} chars in sealed turn]… {body[n - tail :] if tail else ''}"
    if not body:
        return ""
    digest = sha256_hex(body)[:REPLY_HASH_CHARS]
    return f"[reply {artifact_id} @sha256:{digest}]\n{body}\n[end reply @sha256:{digest}]"


def excerpt(text: str, head: int, tail: int) -> str:
    """Compact-mode reply text: head and tail around a cut marker when longer than both."""
    n = cp_len(text)
    if n <= head + tail:
        return text
    return f"{text[:head]}…[+{n - head - tail} chars, recall_turn]…{text[n - tail :] if tail else ''}"


def snapshot_note(recall_turns: Sequence[int]) -> str:
    """The line standing in for a turn's superseded runtime snapshots (each has a recall turn >= 1)."""
    count = len(recall_turns)
    noun = "runtime-context snapshot" if count == 1 else f"{count} runtime-context snapshots"
    where = ", ".join(turn_locator(t) for t in dict.fromkeys(recall_turns))
    return f"{SNAPSHOT_NOTE_PREFIX}{noun} superseded by a later one; not repeated here · verbatim: {where}]"


def render_items(
    items: Sequence[TurnItem], span: tuple[int, int], count: int, level: RenderLevel, index: ReadIndex
) -> str:
    """The entry text for one ladder level."""
    first, last = span
    if level.compact:
        header = (
            f"{TAPE_PREFIX}{first}-{last} · {count} turn(s) sealed · details: {turn_locator(first)}; "
            f"repeat for each turn through {last}]"
        )
    else:
        header = f"{TAPE_PREFIX}{first}-{last} · {count} turn(s) sealed · recall_turn / expand_result]"
    lines = [header]
    for item in items:
        lines.append(f"[turn {item.turn}]")
        if item.snapshots and level.compact:
            lines.append(
                f"[{len(item.snapshots)} runtime-context snapshot(s) superseded; {turn_locator(item.turn)}]"
            )
        elif item.snapshots:
            lines.append(snapshot_note(item.snapshots))
        for reply in item.replies:
            if level.compact and level.reply is not None:
                _, head, tail = level.reply
                lines.append(f"[reply step {reply.step} seq {reply.seq}] {excerpt(reply.text, head, tail)}")
            else:
                artifact = f"slice-turn-{item.turn}-step-{reply.step}-seq-{reply.seq}"
                lines.append(render_reply(artifact, reply.text, level.reply))
        if item.empty_replies:
            lines.append(
                f"[{item.empty_replies} assistant message(s) contained no visible text or tool calls]"
            )
        if item.reads and level.read_chars:
            read_line = index.index_line(item.reads, item.turn, level.read_chars)
            if read_line is not None:
                lines.append(read_line)
        if level.tools and item.tools:
            lines += item.tools[:TOOL_LINES_PER_TURN]
            if len(item.tools) > TOOL_LINES_PER_TURN:
                lines.append(f"[+{len(item.tools) - TOOL_LINES_PER_TURN} more tool results]")
    return "\n".join(lines)


def render_entry(
    session: Session, nodes: Sequence[SurfaceNode], entry_max_chars: int | None = None
) -> tuple[str, tuple[int, int], int]:
    """The text of the entry sealing ``nodes``, the turn span it covers and how many turns it seals."""
    index = read_index(session)
    items = collect_items(session, nodes, index)
    covered = sorted({item.turn for item in items})
    span, count = (covered[0], covered[-1]), len(covered)
    if entry_max_chars is None:
        return render_items(items, span, count, FULL_LEVEL, index), span, count
    for level in ladder(entry_max_chars):
        text = render_items(items, span, count, level, index)
        if cp_len(text) <= entry_max_chars:
            return text, span, count
    fallback = (
        f"{TAPE_PREFIX}{span[0]}-{span[1]} · {count} turn(s) sealed]\n"
        f"[details omitted to fit entry; {turn_locator(span[0])}; repeat for each turn through {span[1]}]"
    )
    return fallback, span, count


# ---------------------------------------------------------------------------------------------- prompt and effort
def prompt_section(recall_step: bool = True) -> str:
    """The slice policy's system-prompt section: how to read tape entries and fetch what they leave out.

    ``recall_step`` False (folding off, so the tool is not offered) leaves its line out.
    """
    return "\n".join(
        line
        for line in [
            "<slice>",
            "Completed turns of this conversation may appear as frozen entries that begin with "
            "[slice tape v1 · turns A-B …]. An entry keeps the visible assistant replies of its turns word for "
            "word between [reply …] and [end reply …] markers, lists the files those turns read (with a short "
            "fingerprint and a note when a later read differs from an earlier one) and gives one line per tool "
            "result with the call that returns it. Reasoning and tool output are not repeated there, but they "
            "are all still in the session log.",
            "What you cannot see in your context is unknown, not false: it may well have been said or done. "
            "Look it up before you state that something did not happen.",
            "To look things up:",
            '- recall_search({"query": "words"}) when you do not know which turn it was;',
            '- recall_turn({"turn": "3"}) for what was said in turn 3; add "view": "full" for its tool inputs, '
            "tool output and reasoning (much larger);",
            '- recall_step({"turn": "3", "step": "2"}) for the calls and results of one step;' if recall_step else "",
            f'- expand_result({{"seq": 41, "formatVersion": {LOCATOR_FORMAT_VERSION}}}) or '
            'expand_result({"turn": 3, "step": 2, "call": 1}) for one tool result; add "grep" or "lines" to get '
            "only the part you need. Copy seq locators exactly as printed.",
            "A marker such as …[+N chars …]… means text was left out at that point: fetch it instead of guessing "
            "what it said. Recalled text records what was true then; check the current state with your tools "
            "before relying on it.",
            "</slice>",
        ]
        if line
    )


def default_reasoning_effort(
    config: SliceConfig, requested: str | None, declared: Sequence[str] | None, provider: str, model: str
) -> tuple[str | None, str | None]:
    """The reasoning effort to send and an operator warning, per ``defaultReasoningEffort``.

    An explicit ``requested`` effort always wins; ``inherit`` adds nothing. Otherwise the default is sent only
    when the route declares it. ``declared`` None means the route's efforts are unknown: inherit silently. A
    route that declares efforts without this one gets a warning (the host reports it once per route).
    """
    effort = config.defaultReasoningEffort
    if requested is not None or effort == "inherit" or declared is None:
        return requested, None
    if effort in declared:
        return effort, None
    listed = ", ".join(declared) or "none"
    return None, (
        f"slice defaultReasoningEffort={effort} is not declared by {provider}/{model} (declared: {listed}); "
        "inheriting the adapter default"
    )


# ---------------------------------------------------------------------------------------------- the planner
@dataclass(frozen=True, slots=True)
class SealWarning:
    """A turn group kept raw because its tool calls and results do not pair; ``key`` identifies the group."""

    key: str
    message: str


@dataclass(frozen=True, slots=True)
class PlannedEntry:
    """One entry the seal would append: the surface span it replaces and its text."""

    seq: int
    start: int
    end: int
    sources: tuple[int, ...]
    turns: tuple[int, int]
    sealed_turns: int
    text: str
    event: dict[str, Any] = field(compare=False)

    def to_dict(self, session: Session) -> dict[str, Any]:
        """Plain-dict form for ``--json`` output."""
        return {
            "seq": self.seq,
            "start": self.start,
            "end": self.end,
            "sources": list(self.sources),
            "turns": list(self.turns),
            "sealedTurns": self.sealed_turns,
            "chars": cp_len(self.text),
            "charsReplaced": sum(session.node_chars(s) for s in self.sources),
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class SealPlan:
    """Everything a seal decides: the entries (append in order) and the warnings to report."""

    entries: list[PlannedEntry]
    warnings: list[SealWarning]

    @property
    def events(self) -> list[dict[str, Any]]:
        """The planned events, in append order."""
        return [entry.event for entry in self.entries]


def _utf16_key(text: str) -> bytes:
    return text.encode("utf-16-be", "surrogatepass")


def _unpaired(layout: SurfaceLayout, group: Sequence[int]) -> list[str]:
    calls = dict.fromkeys(i for k in group for i in layout.call_ids(k))
    results = dict.fromkeys(i for k in group for i in layout.result_call_ids(k))
    return [i for i in {**calls, **results} if i not in calls or i not in results]


def _entry_event(session: Session, seq: int, nodes: Sequence[SurfaceNode], text: str) -> dict[str, Any]:
    return {
        "type": "user/message",
        "data": user_text(text, {"kind": TAPE_SOURCE_KIND}, str(uuid.uuid5(_ENTRY_IDS, f"{session.id}:{seq}"))),
        "sourceEventSeqs": [n.seq for n in nodes],
        "surfaceOp": {"op": "replace", "start": nodes[0].seq, "end": nodes[-1].seq},
    }


def plan_seal(
    session: Session,
    config: SliceConfig,
    *,
    pending: Sequence[Mapping[str, Any]] = (),
    warned: Collection[str] = (),
) -> SealPlan:
    """Plan the seal of step 1: entries for every sealable span, planned in full before any append.

    ``pending`` are the messages the host is about to append this step; ``warned`` the keys of warnings
    already reported for this session, which are not repeated.
    """
    layout = inspect_surface(session, pending)
    seal_before = layout.last_turn - config.history.keepRecentTurns + 1
    last_turns, seqs = layout.last_turns, layout.seqs
    segments: list[list[int]] = []  # of node indices
    warnings: list[SealWarning] = []
    run: list[int] = []

    def flush() -> None:
        segment: list[int] = []
        i = 0
        while i < len(run):
            j = i + 1
            while j < len(run) and last_turns[run[j]] == last_turns[run[i]]:
                j += 1
            group = run[i:j]
            ids = _unpaired(layout, group)
            if not ids:
                segment += group
            else:
                key = js_json([seqs[group[0]], sorted(ids, key=_utf16_key)])
                if key not in warned:
                    warnings.append(
                        SealWarning(
                            key,
                            f"slice tape: turn {last_turns[group[0]]} (seq {seqs[group[0]]}..{seqs[group[-1]]}) "
                            f"kept raw and cut the sealed span, unpaired tool call/result "
                            f"{', '.join(quoted(i, None) for i in ids)}",  # the log's ids whole (the spec's join), escaped: one line
                        )
                    )
                if segment:
                    segments.append(segment)
                segment = []
            i = j
        if segment:
            segments.append(segment)
        run.clear()

    # Entries already on the surface sit in the frozen prefix, so they are protected and never join a run.
    for k in range(len(layout)):
        if not layout.protected(k) and last_turns[k] < seal_before:
            run.append(k)
        else:
            flush()
    flush()
    entries = []
    for offset, segment in enumerate(segments):
        seq = session.next_seq + offset
        nodes = [layout.node(k) for k in segment]  # built one segment at a time
        for k in segment:
            layout.replies[k] = ""  # the entry holds it now
        text, span, count = render_entry(session, nodes, config.history.entryMaxChars)
        entries.append(
            PlannedEntry(
                seq,
                nodes[0].seq,
                nodes[-1].seq,
                tuple(n.seq for n in nodes),
                span,
                count,
                text,
                _entry_event(session, seq, nodes, text),
            )  # fmt: skip
        )
    return SealPlan(entries, warnings)
