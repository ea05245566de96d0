"""Which events a list shows: the TUI's filter (type items, tool names, a turn range, errors only, a regex) and its
text search, one implementation for the TUI's list and for an export of what it shows (``export --type …``)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import re2

from core.log.validate import readable
from core.read.facts import is_error_event
from core.read.session import Session
from core.read.streams import CHUNK_TYPE
from core.read.summary import turn_span
from core.read.type_select import TypeSelection
from core.shared.jsonout import dumps
from core.shared.regex import RegexRefused, linear_regex
from core.shared.text import quoted
from core.shared.values import whole_digits

_TURNS = re.compile(r"^\s*([0-9]+)\s*(?:(-)\s*([0-9]+)?)?\s*$")  # not \d: any script's digits
Predicate = Callable[[dict[str, Any]], bool]


def _json_text(event: dict[str, Any]) -> str:
    """The event as compact JSON text: what search and regex filters look at (also one nested deeper than orjson
    writes)."""
    return dumps(event).decode()


def tool_names(event: dict[str, Any], session: Session) -> set[str]:
    """Tool names an event is about: a call, its result, a code-mode dispatch, an assistant's tool-call blocks
    (none for a flagged event: its fields are not read)."""
    event = readable(event)
    etype = event.get("type")
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    if etype in ("tool/call", "tool/code-dispatch-start", "tool/code-dispatch"):
        return {str(data.get("name"))}
    if etype == "assistant/message":
        content = (data.get("message") or {}).get("content") or ()
        return {str(b.get("name")) for b in content if isinstance(b, dict) and b.get("type") == "tool-call"}
    if etype == "tool/result":
        source = (data.get("message") or {}).get("source") or {}
        turn, step = data.get("turn"), data.get("step")
        if isinstance(turn, int) and isinstance(step, int) and isinstance(source, dict):
            call = session.tool_call_at(turn, step, str(source.get("callId")))
            if call is not None:
                return {call.name}
    return set()


def parse_turns(text: str) -> tuple[int, int | None] | None:
    """``"3"`` → (3, 3), ``"3-7"`` → (3, 7), ``"3-"`` → (3, None), ``""`` → None; ValueError otherwise (turn 0
    too: turns count from 1)."""
    if not text.strip():
        return None
    m = _TURNS.match(text)
    if m is None:
        raise ValueError(f"turn range '{quoted(text.strip())}' must look like 3, 3-7 or 3-")
    if any(whole_digits(n) is None for n in m.group(1, 3) if n):
        raise ValueError(f"turn range: a number has more than {sys.get_int_max_str_digits()} digits")
    first = int(m.group(1))
    if first == 0:  # no event is in turn 0: the range would list nothing, without a word
        raise ValueError(f"turn range '{quoted(text.strip())}': turns count from 1")
    last = None if m.group(2) and m.group(3) is None else int(m.group(3) or first)
    if last is not None and last < first:
        raise ValueError(f"turn range '{quoted(text.strip())}' ends before it starts")
    return first, last


def _items(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


@dataclass(frozen=True)
class EventFilter:
    """Which events the list shows: type prefixes (``!`` in front leaves a type out), tool names, a turn range,
    errors only, a regex."""

    types: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    turns: tuple[int, int | None] | None = None
    errors: bool = False
    regex: str = ""
    _pattern: re2._Regexp | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.regex and self._pattern is None:  # RE2: no pattern backtracks for ever over a log's text
            try:
                object.__setattr__(self, "_pattern", linear_regex(self.regex))
            except RegexRefused as exc:
                raise ValueError(f"regex '{quoted(self.regex)}' does not compile: {exc}") from exc

    @classmethod
    def parse(cls, types: str, tools: str, turns: str, errors: bool, regex: str) -> EventFilter:
        """Build a filter from the dialog's fields; ValueError names the field that is wrong."""
        return cls(TypeSelection.parse(types).items, _items(tools), parse_turns(turns), errors, regex.strip())

    @property
    def active(self) -> bool:
        """True when the filter hides anything."""
        return bool(self.types or self.tools or self.turns or self.errors or self.regex)

    def describe(self, regex: str | None = None) -> str:
        """A short description for the status bar (``regex``: what to show for the regex, when not itself)."""
        parts = []
        if self.types:
            parts.append("type " + "|".join(t.replace("!", "not ", 1) for t in self.types))
        if self.tools:
            parts.append("tool " + "|".join(self.tools))
        if self.turns:
            first, last = self.turns
            parts.append(f"turns {first}-" if last is None else turn_span(first, last))
        if self.errors:
            parts.append("errors")
        if self.regex:
            parts.append(f"/{self.regex if regex is None else regex}/")
        return ", ".join(parts) or "none"

    def finds(self, event: dict[str, Any]) -> bool:
        """True when the regex (if any) finds something in ``event``'s JSON text, as the filter's test looks."""
        return self._pattern is None or self._pattern.search(_json_text(event)) is not None

    def found(self, event: dict[str, Any]) -> set[str]:
        """Each text the regex (if any) finds in ``event``'s JSON text, as the filter's test looks."""
        if self._pattern is None:
            return set()
        return {m.group() for m in self._pattern.finditer(_json_text(event))}

    @property
    def raw_chunks(self) -> bool:
        """True when a type item asks for stream chunks (``assistant/chunk``): the list shows every delta."""
        return bool(TypeSelection(self.types).wanted) and self.picks_type(CHUNK_TYPE)

    def picks_type(self, etype: str) -> bool:
        """True when the type items let events of ``etype`` through (``core.read.type_select``)."""
        return etype in TypeSelection(self.types)

    def toggled_type(self, item: str) -> EventFilter:
        """This filter with the type item ``item`` (e.g. ``!assistant/chunk``) added, or removed if present."""
        types = tuple(t for t in self.types if t != item) if item in self.types else (*self.types, item)
        return replace(self, types=types)

    def passes_stream(
        self, test: Predicate, first: int, end: int, read: Callable[[int], dict[str, Any]]
    ) -> bool:
        """True when a delta of the model stream ``first``..``end - 1`` (deltas of one step; ``read`` reads one)
        passes ``test``, this filter's ``predicate``: the list shows the stream's row then. Its first delta
        answers for all when only the type and the turn are asked, none passes when a tool is (a delta names
        none: ``tool_names``), else each is read until one passes."""
        if CHUNK_TYPE not in TypeSelection(self.types) or self.tools:
            return False
        if not (self.errors or self.regex):
            return test(read(first))
        return any(test(read(seq)) for seq in range(first, end))

    def predicate(self, session: Session) -> Predicate:
        """A test for one event against this filter, given the session it belongs to."""

        selection = TypeSelection(self.types)

        def test(event: dict[str, Any]) -> bool:
            if str(event.get("type")) not in selection:
                return False
            if self.turns is not None:
                seq = int(event.get("seq", 0))
                turn = session.turn_of(seq) if seq < session.next_seq and session.in_turn(seq) else -1
                first, last = self.turns
                if turn < first or (last is not None and turn > last):
                    return False
            if self.errors and not is_error_event(event):
                return False
            if self.tools and not tool_names(event, session) & set(self.tools):
                return False
            return self.finds(event)

        return test


def search_predicate(query: str, shown: Predicate | None = None) -> Predicate:
    """Case-insensitive substring search over an event's JSON text; with ``shown`` (a filter's predicate), over
    the events it passes only, so that a search counts and steps through the matches the filtered list shows."""
    needle = query.casefold()
    if shown is None:
        return lambda event: needle in _json_text(event).casefold()
    return lambda event: shown(event) and needle in _json_text(event).casefold()
