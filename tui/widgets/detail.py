"""The detail pane: one event as highlighted text and pretty JSON, with the model-visible version beside it.

Everything that decodes, pretty-prints or highlights runs in a thread worker and hands back finished
``rich.text.Text``; payloads beyond ``limit`` characters are cut and grow on request (``more``).
"""

from __future__ import annotations

from typing import Any

import orjson
from pygments.lexers import get_lexer_for_filename
from pygments.util import ClassNotFound
from rich.console import Console
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from core.log.validate import INVALID, is_invalid
from core.read.rows import clip_strings
from core.read.session import Session, cut_kind
from core.read.streams import Block, stream_text
from core.read.summary import INTERRUPTED_MARK, human_chars
from core.shared.clock import IMPLAUSIBLE, utc_time
from core.shared.jsonout import dumps
from core.shared.text import printable, text_of_blocks, tool_block_failed, tool_result_block, tool_result_text
from tui.failures import READ_ERRORS
from tui.keymap import key_of
from tui.live import LiveSession
from tui.widgets.rows import SHADOW_BADGES, originals
from tui.widgets.scrolling import set_virtual_size

DETAIL_LIMIT = 6_000  # chars of each payload shown at first; ``more`` multiplies it
SETTLE_SECONDS = 0.06  # a burst of cursor moves (or appends while following) builds the pane once
REFORMAT_LIMIT = 1 << 20  # JSON payloads up to this many chars are parsed and re-indented; bigger ones never
JSON_STRING_LIMIT = 400  # long strings inside the JSON view (their full text is in the payload section)
SYNTAX_THEMES = {True: "monokai", False: "friendly"}  # pygments styles for dark and light app themes


def syntax_theme(dark: bool) -> str:
    """The pygments style that stays readable on the app theme's background."""
    return SYNTAX_THEMES[dark]


def guess_lexer(text: str, hint: str | None = None) -> str:
    """A pygments lexer name for a payload: JSON, a diff, a file's language from ``hint`` (a path), or text."""
    head = (text if len(text) <= REFORMAT_LIMIT else text[:4096]).lstrip()[:1]
    if head and head in "{[":
        if len(text) > REFORMAT_LIMIT:  # too big to parse just for a lexer: judge by its ends
            return "json" if text[-64:].rstrip()[-1:] in ("}", "]") else "text"
        try:
            orjson.loads(text)
            return "json"
        except orjson.JSONDecodeError:
            pass
    if text.startswith(("diff --git", "--- ", "@@ ")) or "\n@@ " in text[:4000] and "\n+" in text[:4000]:
        return "diff"
    if hint:
        try:
            return get_lexer_for_filename(hint).aliases[0]
        except ClassNotFound:
            pass
    return "text"


def highlight(text: str, lexer: str, theme: str = SYNTAX_THEMES[True]) -> Text:
    """Syntax-highlighted text in pygments style ``theme`` (computed now, so rendering it later costs nothing)."""
    if lexer == "text":
        return Text(text)
    syntax = Syntax(text, lexer, theme=theme, word_wrap=True, background_color="default")
    out = syntax.highlight(text)
    out.rstrip()
    return out


def clip(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to ``limit`` chars, and how many chars were left out."""
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


def _tool_hint(session: Session, event: dict[str, Any]) -> tuple[str | None, str | None]:
    """The tool name and a file-path hint (from its arguments) of a tool result."""
    data = event.get("data") or {}
    source = ((data.get("message") or {}).get("source")) or {}
    call = None
    if isinstance(data.get("turn"), int) and isinstance(data.get("step"), int):
        call = session.tool_call_at(data["turn"], data["step"], str(source.get("callId")))
    if call is None:
        return None, None
    try:
        args = orjson.loads(call.arguments or "{}")
    except orjson.JSONDecodeError:
        return call.name, None
    path = args.get("path") or args.get("file") if isinstance(args, dict) else None
    return call.name, path if isinstance(path, str) else None


def payload_sections(session: Session, event: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(title, text, lexer)`` for each readable payload of an event (none of a flagged one: its JSON is all the
    pane shows of it)."""
    if is_invalid(event):
        return []
    etype = event.get("type")
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    out: list[tuple[str, str, str]] = []
    if etype == "user/message":
        text = text_of_blocks(data.get("content"), "\n")
        out.append(("text", text, guess_lexer(text)))
    elif etype == "assistant/message":
        for block in (data.get("message") or {}).get("content") or ():
            if not isinstance(block, dict):
                continue
            if block.get("type") in ("text", "reasoning"):
                out.append((str(block["type"]), str(block.get("text") or ""), "markdown"))
            elif block.get("type") == "tool-call":
                args = str(block.get("arguments") or "")
                out.append((f"tool call {block.get('name')} [{block.get('id')}]", args, guess_lexer(args)))
    elif etype == "tool/result":
        message = data.get("message") if isinstance(data.get("message"), dict) else {}
        name, path = _tool_hint(session, event)
        text = tool_result_text(message, "\n")
        block = tool_result_block(message) or {}
        title = f"result of {name or 'tool'}" + (" (error)" if tool_block_failed(block) else "")
        lexer = guess_lexer(text, path)
        if lexer == "text" and name in ("bash", "shell", "run_code"):
            lexer = "output"
        out.append((title, text, lexer))
    elif etype == "tool/call":
        args = str(data.get("arguments") or "")
        out.append((f"arguments of {data.get('name')}", args, guess_lexer(args)))
    elif etype == "turn/end" and isinstance(data.get("stop"), dict) and data["stop"].get("reason"):
        stop = data["stop"]
        out.append((f"why the operator stopped it (request {stop.get('requestId')})", str(stop["reason"]), "text"))
    return [section for section in out if section[1]]


def render_sections(
    title: str, sections: list[tuple[str, str, str]], limit: int, theme: str, more_key: str
) -> tuple[list[Text], int]:
    """A title line and each ``(name, text, lexer)`` section highlighted (cut at ``limit``, saying ``more_key``
    shows more); and chars left out."""
    parts: list[Text] = [Text(title, style="bold")]
    hidden = 0
    for name, text, lexer in sections:
        shown, cut = clip(text, limit)
        hidden += cut
        if lexer == "json" and len(text) <= REFORMAT_LIMIT:  # a bigger one is shown as written, clipped
            try:
                shown = dumps(orjson.loads(text), option=orjson.OPT_INDENT_2).decode()
                shown, cut = clip(shown, limit)
            except orjson.JSONDecodeError:
                pass
        parts.append(Text(f"── {name} · {human_chars(len(text))} chars", style="dim"))
        parts.append(highlight(shown, lexer, theme))
        if cut:
            parts.append(Text(f"… {human_chars(cut)} more chars (press {more_key} to show more)", style="italic"))
    return parts, hidden


def render_event(
    session: Session, event: dict[str, Any], limit: int, title: str, theme: str, more_key: str
) -> tuple[Text, int]:
    """One column: a title line, each payload highlighted, then the event's pretty JSON; and chars left out."""
    parts, hidden = render_sections(title, payload_sections(session, event), limit, theme, more_key)
    if is_invalid(event):
        parts.append(Text(f"not read: {event[INVALID]}", style="bold yellow"))
    pretty = dumps(clip_strings(event, JSON_STRING_LIMIT, note=True), option=orjson.OPT_INDENT_2).decode()
    pretty, cut = clip(pretty, limit)
    hidden += cut
    parts.append(Text("── event JSON", style="dim"))
    parts.append(highlight(pretty, "json", theme))
    return Text("\n").join(parts), hidden


def render_stream(live: LiveSession, block: Block, limit: int, theme: str, more_key: str) -> tuple[Text, int]:
    """A model stream as one column: what it said, block by block, read from its deltas up to ``limit`` chars."""
    events = (live.event(seq) for seq in range(block.start, block.end))
    said, read = stream_text((e for e in events if e is not None), limit)
    sections = [
        (name, text, "markdown" if name in ("text", "reasoning") else guess_lexer(text)) for name, text in said
    ]
    title = (
        f"seq {block.start}-{block.end - 1} · model stream of turn {block.turn} step {block.step} · "
        f"{block.deltas} deltas · {block.chars} chars"
    )
    parts, hidden = render_sections(title, sections, limit, theme, more_key)
    if read < block.deltas:
        shown = sum(len(text) for _, text in said)
        hidden += max(0, block.chars - shown)
        parts.append(Text(f"… {block.deltas - read} more deltas (press {more_key} to show more)", style="italic"))
    if not said:
        parts.append(Text("no text streamed yet", style="dim"))
    return Text("\n").join(parts), hidden


def surface_node_for(session: Session, seq: int) -> int:
    """The current surface node that stands for ``seq`` (``seq`` itself when it is still on the surface)."""
    seen = set()
    while seq in session.replaced_by and seq not in seen:
        seen.add(seq)
        seq = session.replaced_by[seq]
    return seq


def describe(
    live: LiveSession,
    seq: int,
    limit: int,
    theme: str = SYNTAX_THEMES[True],
    block: Block | None = None,
    more_key: str = "+",
) -> tuple[Text, Text | None, int]:
    """Build the pane for ``seq`` (worker side): original column, model-visible column (or None), chars cut.

    On a stream's row (``block``) the pane shows what the stream said instead of its first delta. A payload cut
    short says ``more_key`` (the key of ``main.more``, which the worker cannot ask the app for) shows more.
    """
    if block is not None:
        text, hidden = render_stream(live, block, limit, theme, more_key)
        return text, None, hidden
    session = live.session
    event = live.event(seq)
    if event is None:
        return Text(f"seq {seq} is not loaded yet"), None, 0
    is_replacement = 0 <= seq < session.next_seq and session.is_replacement(seq)
    if is_replacement:
        kind = cut_kind(event)
        origin = originals(session, seq)
        left_parts = []
        hidden = 0
        for n in origin[:20]:
            text, cut = render_event(session, session.events[n], limit, f"original seq {n}", theme, more_key)
            left_parts.append(text)
            hidden += cut
        more = len(origin) - 20
        if more > 0:
            left_parts.append(Text(f"… and {more} more originals (expand the row to list them)"))
        right, cut = render_event(session, event, limit, f"model sees · {kind} seq {seq}", theme, more_key)
        left = Text("\n\n").join(left_parts) if left_parts else Text("no originals recorded")
        return left, right, hidden + cut
    left, hidden = render_event(session, event, limit, _title(session, seq, event), theme, more_key)
    if 0 <= seq < session.next_seq and seq in session.replaced_by:
        node = surface_node_for(session, seq)
        kind = SHADOW_BADGES.get(cut_kind(session.events[node]), "replaced")
        right, cut = render_event(
            session, session.events[node], limit, f"model sees · {kind} by seq {node}", theme, more_key
        )
        return left, right, hidden + cut
    return left, None, hidden


def _title(session: Session, seq: int, event: dict[str, Any]) -> str:
    if not 0 <= seq < session.next_seq:
        where = "loading"
    elif session.in_turn(seq):
        where = f"turn {session.turn_of(seq)}"
    else:
        where = f"between turns (after turn {session.turn_of(seq)})" if session.turn_of(seq) else "before turn 1"
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    step = f" step {data['step']}" if isinstance(data.get("step"), int) else ""
    cut = f" · {INTERRUPTED_MARK}" if data.get("interrupted") is True else ""
    written = event.get("time")
    dated = isinstance(written, int | float) and not isinstance(written, bool) and written != 0  # 0: none written
    when = f" · {utc_time(written) or IMPLAUSIBLE}" if dated else ""
    return f"seq {seq} · {event.get('type')} · {where}{step}{when}{cut}"


def render_strips(text: Text, width: int) -> list[Strip]:
    """Wrap ``text`` to ``width`` cells as screen lines (worker side, with a private console); control characters
    from the log are drawn as pictures (``printable``: one code point for one, so every style span holds), never
    written to the terminal."""
    shown = printable(text.plain)
    if shown is not text.plain:
        text = text.copy()
        text.plain = shown
    console = Console(width=max(1, width), color_system="truecolor", force_terminal=True, highlight=False)
    return [Strip(line) for line in console.render_lines(text, console.options, pad=False)]


COLUMN_CHROME = 4  # each column's border and padding
SCROLLBAR = 2  # the vertical scrollbar's gutter, always reserved (``scrollbar-gutter: stable``)


def column_width(outer: int) -> int:
    """Cells a column of ``outer`` cells has for text: text wrapped wider would be cut at the scrollbar."""
    return max(1, outer - COLUMN_CHROME - SCROLLBAR)


class TextView(ScrollView, can_focus=True):
    """Pre-rendered lines in a scrolling column: showing or scrolling them wraps and parses nothing."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[Strip] = []
        self._style_key: str | None = None
        self._style = Style()

    def set_lines(self, lines: list[Strip]) -> None:
        """Show ``lines`` from the top."""
        self.lines = lines
        set_virtual_size(self, Size(self.scrollable_content_region.width, len(lines)))
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        """The line at ``scroll_y + y``."""
        index = int(self.scroll_y) + y
        width = self.scrollable_content_region.width
        if self._style_key != self.app.theme:
            self._style_key, self._style = self.app.theme, self.rich_style
        if index >= len(self.lines):
            return Strip.blank(width, self._style)
        return self.lines[index].crop_extend(0, width, self._style).apply_style(self._style)


class DetailPane(Horizontal):
    """Original on the left; the model-visible version on the right for folded, pruned and sealed items."""

    def __init__(self, live: LiveSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.live = live
        self.seq: int | None = None
        self.block: Block | None = None  # the stream shown, when the selected row stands for one
        self.limit = DETAIL_LIMIT
        self.hidden = 0
        self._timer: Timer | None = None
        self._width = 0
        self.notes: dict[int, str] = {}  # the operator's notes by seq, shown above the event
        self._described: tuple[bool, int | None] | None = None  # ``_standing`` when the pane was last asked for

    def compose(self) -> ComposeResult:
        """Two scrolling columns."""
        yield TextView(id="detail-original")
        yield TextView(id="detail-visible")

    def on_mount(self) -> None:
        """Nothing selected yet; a new app theme highlights the shown event again."""
        self.query_one("#detail-visible", TextView).display = False
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: object) -> None:
        if self.seq is not None:
            self.show(self.seq, keep_limit=True, block=self.block)

    def on_resize(self) -> None:
        """Wrap again for the new width."""
        if self.seq is not None and self.size.width != self._width:
            self.show(self.seq, keep_limit=True, block=self.block)

    def on_show(self) -> None:
        """Shown again (``d``, or a wider screen): wrap for the width it has now, whatever it had when hidden."""
        self.call_after_refresh(self.on_resize)

    def show(self, seq: int | None, *, keep_limit: bool = False, block: Block | None = None) -> None:
        """Describe ``seq`` (or the stream ``block`` whose row it is) in a worker, after a short settle; None clears
        the pane."""
        self.seq, self.block = seq, block
        self._described = self._standing()
        if not keep_limit:
            self.limit = DETAIL_LIMIT
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(SETTLE_SECONDS, self._start)

    def _standing(self) -> tuple[bool, int | None] | None:
        """What the pane of the selected event depends on beyond the event itself: whether it is projected yet,
        and the surface node that replaced it (None for a stream's row, whose pane follows its block)."""
        seq, session = self.seq, self.live.session
        if seq is None or self.block is not None:
            return None
        return 0 <= seq < session.next_seq, surface_node_for(session, seq) if seq in session.replaced_by else None

    def session_changed(self) -> None:
        """The projection moved on: describe the selected event again when what its pane says changed (it was
        loading, or a fold, seal or prune replaced it while selected)."""
        if self.seq is not None and self._standing() != self._described:
            self.show(self.seq, keep_limit=True, block=self.block)

    def _start(self) -> None:
        self._timer = None
        seq, limit, block = self.seq, self.limit, self.block
        self._width = width = self.size.width
        if not width:  # folded away: nothing to wrap for (one cell a line); shown again, it is wrapped then
            return
        widths = (column_width(width), column_width(width // 2))
        theme = syntax_theme(self.app.current_theme.dark)
        more_key = key_of(self.app, "main.more")
        self.run_worker(
            lambda: self._build(seq, limit, widths, theme, block, more_key),
            thread=True,
            group="detail",
            exclusive=True,
            exit_on_error=False,
        )

    @property
    def busy(self) -> bool:
        """True while a requested description has not been started yet (tests wait for this to clear)."""
        return self._timer is not None

    def more(self) -> None:
        """Show four times as much of each payload."""
        if self.seq is not None and self.hidden:
            self.limit *= 4
            self.show(self.seq, keep_limit=True, block=self.block)

    def _build(
        self, seq: int | None, limit: int, widths: tuple[int, int], theme: str, block: Block | None, more_key: str
    ) -> None:
        if seq is None:
            left, right, hidden = Text("no event selected"), None, 0
        else:
            try:
                left, right, hidden = describe(self.live, seq, limit, theme, block, more_key)
            except READ_ERRORS as exc:  # the file changed since it was projected: the pane says so
                left, right, hidden = Text(f"seq {seq} cannot be read: {exc}", style="bold red"), None, 0
            # the event's note, and on a stream's row the notes on its deltas
            notes = [
                (s, text)
                for s, text in sorted(self.notes.items())
                if s == seq or (block is not None and block.start <= s < block.end)
            ]
            if notes:
                said = "\n".join(
                    f"✎ note: {text}" if s == seq else f"✎ note on seq {s}: {text}" for s, text in notes
                )
                left = Text.assemble((said, "bold yellow"), "\n\n", left)
        column = widths[0] if right is None else widths[1]
        left_lines = render_strips(left, column)
        right_lines = render_strips(right, column) if right is not None else None
        self.app.call_from_thread(self._set, left_lines, right_lines, hidden, seq)

    def _set(self, left: list[Strip], right: list[Strip] | None, hidden: int, seq: int | None) -> None:
        if seq != self.seq:
            return
        self.hidden = hidden
        self.query_one("#detail-original", TextView).set_lines(left)
        visible = self.query_one("#detail-visible", TextView)
        visible.display = right is not None
        if right is not None:
            visible.set_lines(right)
