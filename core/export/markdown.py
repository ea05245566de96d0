"""The Markdown export: a transcript sized for an issue comment.

Turns, the user's and the model's messages, each tool call with its result clipped (with the command that prints
the whole result), notes where they are anchored, and the cost summary. Texts are clipped to ``CLIP`` characters
and the transcript stops adding rows past ``BUDGET`` characters (saying how many rows it left out, and listing
the notes on them up to ``NOTES_BUDGET``); the head counts the turns by how they ended and the cost table shows the
``COST_ROWS`` costliest, so the whole comment stays under GitHub's 65,536-character limit whatever the session.
"""

from __future__ import annotations

import re
import shlex
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from html import escape
from typing import Any

from core.export.build import FOUND, NOTES_UNREAD, cache_break, count_shown, turns_line, unlisted
from core.export.redact import KINDS, Counts
from core.rebuild.cost import cached_share
from core.shared.diagnostics import Diagnostic
from core.shared.text import counted, model_label, printable, usd

CLIP = 600
BUDGET = 50_000  # characters of rows and, at a moment, of the surface; the head and tail add a few thousand at most
SURFACE_BUDGET = 8_000  # characters of the surface's lines (the newest kept), taken from ``BUDGET``
NOTES_BUDGET = 5_000  # characters of the notes on rows left out
COST_ROWS = 40  # turns the cost table shows (the costliest; one row sums the others)
PROBLEMS_SHOWN = 5  # diagnostics the head lists
HEAD_FIELD = 300  # characters of a field of the head taken from the log (its id, title, model, a problem)
FENCE = "~~~~"  # texts hold ``` often, ~~~~ rarely
_FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")  # a line that opens or closes a code fence
_RAW_HTML = re.compile(r"<(?=[A-Za-z/!?])")  # a ``<`` that may open a tag, a comment or a declaration
_TICKS = re.compile(r"`+")
_LINE_END = re.compile(r"\r\n?|\n")  # where CommonMark ends a line
_CALL_LINE = re.compile(r"(?m)^→ (\S+\(.*)$")  # a call an answer made, as the export's text writes it
_NOTE_MARKS = re.compile(r"[\\`*_\[\]<>#|~&]")  # what Markdown reads as markup anywhere in a line
# what GitHub links in a comment's text and tells whoever it names: a mention (``@user``, ``@org/team``: a log's
# ``@pytest.fixture`` or ``@property`` would ping those users) and an issue reference (``#12``, ``owner/repo#12``:
# listed on that timeline); written as code, which GitHub leaves alone
_REFERENCE = re.compile(
    r"(?<![\w`/.@#&-])(?:@[A-Za-z0-9][A-Za-z0-9-]*(?:/[\w.-]+|(?:\.\w+)*)|(?:[\w.-]+/[\w.-]+)?#[0-9]+\b)"
)
_NOTE_START = re.compile(r"^(\d*)([-+=.)])")  # a list item's or a setext heading's mark at a line's start


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{share * 100:.0f}%"


def _cost_row(label: str, row: dict[str, Any]) -> str:
    return f"| {label} | {row['requests']} | {usd(row['usd'])} | {_pct(row['cached'])} |"


def _priced(values: Iterable[float | None]) -> float | None:
    """The sum of the dollar amounts known, as ``tapedeck cost`` sums them (None: none is)."""
    priced = [v for v in values if v is not None]
    return sum(priced) if priced else None


def _summed(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Cost rows of turns as one, summed as ``tapedeck cost`` sums its rows."""
    reported = any(row["cached"] is not None for row in rows)
    hit, miss = sum(row["hit"] for row in rows), sum(row["miss"] for row in rows)
    share = cached_share(hit if reported else None, miss)
    return {"requests": sum(row["requests"] for row in rows), "usd": _priced(row["usd"] for row in rows),
            "cached": None if share is None else round(share, 4)}  # fmt: skip


def _clip(text: str, more: int = 0, limit: int = CLIP) -> tuple[str, int]:
    if len(text) > limit:
        return text[:limit], more + len(text) - limit
    return text, more


def _quiet(text: str, escape: Callable[[str], str], ticks: str) -> str:
    """``text`` (outside code) with each mention and issue reference a code span of ``ticks`` (a run no other in
    its paragraph has, so it closes no span of the text) and the rest ``escape``d."""
    out, at = [], 0
    for m in _REFERENCE.finditer(text):
        out += (escape(text[at : m.start()]), ticks, m.group(), ticks)
        at = m.end()
    out.append(escape(text[at:]))
    return "".join(out)


def _no_html(text: str) -> str:
    """``text`` (a paragraph) with every ``<`` that may open raw HTML written ``&lt;`` and every mention or issue
    reference code (``_REFERENCE``), but inside code spans."""
    out, at = [], 0
    ticks = "`" * (max(map(len, _TICKS.findall(text)), default=0) + 1)

    def prose(part: str) -> str:
        return _quiet(part, lambda t: _RAW_HTML.sub("&lt;", t), ticks)

    while (tick := _TICKS.search(text, at)) is not None:
        run = len(tick.group())
        closed = next((m.end() for m in _TICKS.finditer(text, tick.end()) if len(m.group()) == run), None)
        end = tick.end() if closed is None else closed  # a run no other run of its length closes is text
        out.append(prose(text[at : tick.start()]))
        out.append(text[tick.start() : end])
        at = end
    out.append(prose(text[at:]))
    return "".join(out)


def _safe(text: str, after_label: bool = False) -> str:
    """A message's text as Markdown that stays within its paragraphs: no raw HTML outside code (a ``<details>``,
    ``</details>`` or ``<!--`` of the log would reshape or hide the rest of the transcript), and a code fence it
    leaves open (a clip cuts most long answers inside one) closed at its end; its lines end in ``\n`` (a bare
    ``\r`` ends one too). ``after_label``: its first line goes on the line of a label, where it opens no fence."""
    out: list[str] = []
    prose: list[str] = []
    fence = ""  # the open fence's run of backticks or tildes
    for i, line in enumerate(_LINE_END.split(text)):
        m = _FENCE_LINE.fullmatch(line)
        if fence:
            out.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                fence = ""
        elif m and not (i == 0 and after_label) and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            if prose:
                out.append(_no_html("\n".join(prose)))
            prose = []
            out.append(line)
            fence = m.group(1)
        elif line.strip():
            prose.append(line)
        else:
            out.append(_no_html("\n".join([*prose, line])))
            prose = []
    if prose:
        out.append(_no_html("\n".join(prose)))
    if fence:
        out.append(fence)
    return "\n".join(out)


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines() or [""])


def _fenced(text: str) -> str:
    return f"{FENCE}\n{text.replace(FENCE, '~~~ ~')}\n{FENCE}"


def _code_span(text: str) -> str:
    """``text`` as a Markdown code span, whatever backticks it holds."""
    ticks = "`" * (max(map(len, _TICKS.findall(text)), default=0) + 1)
    return f"{ticks} {text} {ticks}" if text[:1] in "` " or text[-1:] in "` " else f"{ticks}{text}{ticks}"


def _calls(text: str) -> str:
    """An answer's text with each tool call it made (``→ name(arguments)``) a code span: arguments are no Markdown
    (``**/*.py``, ``__init__.py``)."""
    return _CALL_LINE.sub(lambda m: "→ " + _code_span(m.group(1)), text)


def _field(text: str) -> str:
    """A field of the head taken from the log on one line, clipped to ``HEAD_FIELD`` characters: a log's title or id
    of any length leaves the comment its room."""
    line = " ".join(text.split())
    return line if len(line) <= HEAD_FIELD else line[: HEAD_FIELD - 1] + "…"


def _inline(text: str) -> str:
    return "`" + " ".join(text.replace("`", "'").split()) + "`"


def _literal(line: str) -> str:
    """One line of plain text (a note's, a surface row's summary) as Markdown that shows it as typed: every
    character that could start a block (a heading, a fence, a list, a quote, a table, raw HTML) or mark inline text
    escaped, mentions and issue references code (``_quiet``), its indentation kept."""
    body = line.expandtabs(4).lstrip(" ")
    indent = "&nbsp;" * (len(line.expandtabs(4)) - len(body))  # leading spaces would make it a code block
    body = _quiet(body.rstrip(), lambda t: _NOTE_MARKS.sub(r"\\\g<0>", t), "`")  # its backticks are escaped
    return indent + _NOTE_START.sub(r"\1\\\2", body, count=1)


def _note(where: str, text: str) -> str:
    """A note's block quote: where it is anchored, then its text as typed (notes are plain text), each of its
    lines a line of the quote (a hard break between lines, a blank line between paragraphs)."""
    lines = [line.strip() and _literal(line) for line in _LINE_END.split(text.strip("\r\n"))]
    quoted = [
        f"> {line}\\" if line and i + 1 < len(lines) and lines[i + 1] else f"> {line}" if line else ">"
        for i, line in enumerate(lines)
    ]
    quoted[0] = f"> 📝 **note on {where}:** {quoted[0][2:]}"
    return "\n".join(quoted)


def _one_line(text: Any) -> str:
    """``text`` on one line, as text of a line of raw HTML (where Markdown is not read)."""
    return escape(" ".join(str(text).split()), quote=False)


def _code(text: str) -> str:
    """``text`` on one line as an HTML ``<code>`` element, in a line of raw HTML."""
    return f"<code>{_one_line(text)}</code>"


class MarkdownFormat:
    """Rows as transcript paragraphs (only turns, messages, tool results and notes); the head and the cost."""

    messages = False  # no request's messages, and the surface only at a moment: the rows it shows are counted here
    costs = False
    late = False
    unshown = frozenset({"cwd", "path"})  # (the path is in the commands it gives, counted in each: ``_command``)
    problems_shown = PROBLEMS_SHOWN

    def __init__(self, log_name: str, at: int | None = None, log_found: Counts | None = None) -> None:
        self.log_name = log_name
        self.log_found = log_found  # what redacting the log's path replaced
        self.commands = 0  # the commands the text being made gives (``_command``), not counted yet
        self.at = at  # the moment: the transcript stops after it and the surface is shown as it stood then
        self.budget = BUDGET if at is None else BUDGET - SURFACE_BUDGET
        self.used = 0
        self.left_out = 0
        self.later = 0  # rows past the moment
        self.rows: list[str] = []  # held to follow the head: at most ``BUDGET`` characters
        self.notes: list[str] = []  # the notes on no row shown, listed after the rows (``NOTES_BUDGET``)
        self.notes_used = 0
        self.notes_left_out = 0
        self.found = [0] * len(KINDS)  # what redacting the rows, surface rows and notes it shows replaced

    def opening(self, doc: dict[str, Any] | None) -> bytes:
        """Nothing: the transcript starts with its head, known once the log is read."""
        return b""

    def row(self, r: dict[str, Any]) -> bytes:
        """Nothing yet: the row's paragraph (if the transcript keeps it) is held for ``closing``."""
        note = r.get("note")
        found = r.pop(FOUND, None)
        # a stream's row carries the notes on its deltas; a note on no paragraph shown says what its row is
        where = f"seqs {r['seq']}–{r['endSeq']}" if "endSeq" in r else f"seq {r['seq']}"
        alone = _note(f"{where} ({_code_span(str(r['type']))})", note) if note else ""
        self.commands = 0
        if self.at is not None and r["seq"] > self.at:  # after the moment (its notes go after the rows)
            self.later += 1
            if note and self._late_note(alone):
                count_shown(self.found, found, row=False)
            return b""
        text = self._paragraph(r) if not self.left_out else ""
        if note:
            text = f"{text}\n\n{_note(where, note)}" if text else alone
        if not text:
            return b""
        # the transcript stops at the first row left out
        if self.left_out or self.used + len(text) > self.budget:
            self.left_out += 1
            if note and self._late_note(alone):
                count_shown(self.found, found, row=False)
            return b""
        self.used += len(text) + 2
        self.rows.append(text + "\n\n")
        count_shown(self.found, found)
        self._count_commands()
        return b""

    def _command(self, name: str, *args: object) -> str:
        """The ``tapedeck`` command ``name`` on the log, with ``args``, as code a shell runs as it is: the log's
        path quoted (a space in it), but for the ``~/`` a redacted home leaves, which the shell expands."""
        path = self.log_name
        home = "~/" if path.startswith("~/") else ""
        words = ["tapedeck", name, home + shlex.quote(path[len(home) :]), *map(str, args)]
        self.commands += 1
        return _code_span(" ".join(words))

    def _count_commands(self) -> None:
        """Count what redacting the log's path replaced once for each command the text just kept gives."""
        if self.log_found is not None:
            for i, n in enumerate(self.log_found):
                self.found[i] += n * self.commands
        self.commands = 0

    def _late_note(self, note: str) -> bool:
        """Keep a note on no row shown for the tail, while the notes kept fit ``NOTES_BUDGET`` (else count it);
        True when it is kept."""
        if self.notes_used + len(note) <= NOTES_BUDGET and not self.notes_left_out:
            self.notes.append(note + "\n")
            self.notes_used += len(note) + 1
            return True
        self.notes_left_out += 1
        return False

    def _paragraph(self, r: dict[str, Any]) -> str:
        t = r["type"]
        block = r.get("text") or {"text": "", "more": 0}
        body, more = _clip(block["text"], block["more"])
        hint = f"\n\n*… {more} more chars*" if more else ""
        if t == "turn/start":
            return f"### Turn {r['turn']}"
        if t == "turn/end":
            return f"*{_no_html(r['summary'])}*"
        if t == "user/message":
            return _quote(f"**{r['glyph']} user** (seq {r['seq']}): {_safe(body, True)}") + hint if r["glyph"] == "❯" else (
                f"**{r['glyph']}** (seq {r['seq']}) {_no_html(r['summary'])}"
            )  # fmt: skip
        if t == "assistant/message":
            return f"**● assistant** (seq {r['seq']}):\n\n{_safe(_calls(body))}{hint}"
        if t == "tool/result":
            call = r.get("call")
            called = (
                f"{_one_line(call['name'])} {_code(call['arguments']['text'][:200])}" if call else "a tool"
            )
            expand = f"whole result: {self._command('expand', '--seq', r['seq'], '--format-version', 4)}" if more else ""
            hint = f"\n\n*… {more} more chars; {expand}*" if more else ""
            flag = " (error)" if r["error"] else ""
            return f"<details><summary>→ {called}{flag} · seq {r['seq']}</summary>\n\n{_fenced(body)}{hint}\n\n</details>"
        if r.get("replacement"):
            return f"*{r['glyph']} {r['replacement']} (seq {r['seq']}): {_no_html(r['summary'])}*"
        return ""

    def closing(self, doc: dict[str, Any]) -> Iterator[bytes]:
        """The head, the transcript, the chosen request's line, the surface at the moment (when there is one) and
        the cost summary. The head's redaction summary counts what the transcript shows: the rows and notes it
        holds and the surface's lines (the request's messages are not shown)."""
        before = self.found.copy()  # the rows', which the summary holds: the tail's are added to it
        tail = self._tail(doc)
        if doc["redaction"] is not None:
            doc["redaction"] = {kind: n + now - was for (kind, n), now, was
                                in zip(doc["redaction"].items(), self.found, before, strict=True)}  # fmt: skip
        # a document to read and paste: a log's controls (but newline and tab) drawn, so `cat` runs none of them
        yield printable(self._head(doc) + "".join(self.rows) + tail).encode()

    def shown(self, doc: dict[str, Any]) -> int:
        """The rows the transcript shows (a paragraph, or a note under one)."""
        return len(self.rows)

    def _request(self, doc: dict[str, Any]) -> list[str]:
        """The chosen request (``--turn``/``--step``, else the last at or before the moment) in a line: where its
        cache broke and the command that prints its messages."""
        r = doc["request"]
        if r is None:
            return [
                "### Request\n",
                "no model request" + (f" at or before seq {self.at}" if self.at is not None else ""),
                "",
            ]
        again = f" attempt {r['attempt']}" if r["attempt"] > 1 else ""
        return [
            f"### Request: turn {r['turn']} step {r['step']}{again} (seq {r['seq']})\n",
            f"{_literal(_field(model_label(r['provider'], r['model'], 'model unknown')))} · {r['chars']} chars · "
            f"{cache_break(r['cacheBreak'])}; its messages: {self._command('request', '--seq', r['seq'])}",
            "",
        ]

    def _surface(self, doc: dict[str, Any]) -> list[str]:
        """At a moment, the surface as it stood: a line per model-visible message, the newest that fit
        ``SURFACE_BUDGET`` (saying how many earlier ones are left out)."""
        if self.at is None:
            return []
        kept: deque[tuple[str, Any]] = deque()
        used = count = 0
        for row in doc["surface"]["nodes"]:
            count += 1
            repl = " (replacement)" if row["replacement"] else ""
            line = (f"- seq {row['seq']} · {_literal(str(row['role']))} · {_literal(str(row['source']))}{repl} · "
                    f"{row['chars']} chars: {_literal(' '.join(str(row['summary']).split()))}")  # fmt: skip
            kept.append((line, row.pop(FOUND, None)))
            used += len(line) + 1
            while used > SURFACE_BUDGET and len(kept) > 1:
                used -= len(kept.popleft()[0]) + 1
        left = count - len(kept)
        for _, found in kept:
            count_shown(self.found, found)
        return [
            f"### Surface right after seq {self.at}\n",
            f"{count} model-visible messages"
            + (f"; the {left} oldest left out to fit a comment" if left else ""),
            "",
            *(line for line, _ in kept),
            "",
        ]

    def _head(self, doc: dict[str, Any]) -> str:
        """Title, header lines and the redaction summary."""
        s = doc["session"]
        turns = turns_line(s["turns"])
        counts = doc["redaction"]
        redaction = (
            "not redacted"
            if counts is None
            else "redacted: " + ", ".join(f"{n} {k}" for k, n in counts.items())
        )
        title = [f"- title: {_literal(_field(s['title']))}"] if s.get("title") else []  # plain text
        lines = [
            f"## tapedeck session {_inline(_field(str(s['id'])))}",
            "",
            *title,
            f"- model: {_no_html(_field(model_label(s['provider'], s['model'])))} · state: {s['state']}",
            f"- turns: {len(s['turns'])} ({turns}) · events: {s['events']} · cost: {usd(s['usd'])}",
            f"- {redaction}" + (f" · at seq {doc['at']}" if doc["at"] is not None else ""),
            *([f"- filter: {_literal(f['text'])} ({counted(f['rowsLeftOut'], 'row')} left out)"] if (f := doc["filter"]) else []),
            *self._problems(doc["diagnostics"]),
            *([f"- {NOTES_UNREAD}"] if doc["notesUnread"] else []),
            "",
            "",
        ]
        return "\n".join(lines)

    @staticmethod
    def _problems(found: list[dict[str, Any]]) -> list[str]:
        """The head's lines of what the readers found wrong in the log (none: no line)."""
        if not found:
            return []
        shown = [f"  - {_no_html(_field(str(Diagnostic(**d))))}" for d in found[:PROBLEMS_SHOWN]]
        left = len(found) - PROBLEMS_SHOWN
        more = [f"  - … {left} more (`tapedeck inspect`)"] if left > 0 else []
        return [f"- log problems: {len(found)}", *shown, *more]

    def _tail(self, doc: dict[str, Any]) -> str:
        """Rows left out, the notes on no row shown (on rows left out, on seqs the log does not have), and the cost
        summary."""
        lines = []
        if self.left_out:
            lines.append(
                f"*… {counted(self.left_out, 'more row')} left out to fit a comment: export as HTML or JSON for all*\n"
            )
        if self.later:
            lines.append(f"*… {counted(self.later, 'row')} after seq {self.at}, the moment of this export, left out*\n")
        for n in doc["notes"]:  # on no row: a seq the log does not have, or a row the filter left out
            if n["row"] is None and self._late_note(_note(f"seq {n['seq']} ({unlisted(doc, n['seq'])})", n["text"])):
                count_shown(self.found, n.pop(FOUND, None))
        lines.extend(self.notes)
        if self.notes_left_out:
            lines.append(f"*… {counted(self.notes_left_out, 'more note')}*\n")
        self.commands = 0
        lines.extend(self._request(doc))
        self._count_commands()
        lines.extend(self._surface(doc))
        c = doc["cost"]
        t = c["total"]
        lines.append("### Cost\n")
        lines.append("| turn | requests | cost | cached |\n|---:|---:|---:|---:|")
        costliest = {id(row) for row in sorted(c["turns"], key=lambda row: -(row["usd"] or 0))[:COST_ROWS]}
        others = [row for row in c["turns"] if id(row) not in costliest]
        for row in c["turns"]:
            if id(row) in costliest:
                lines.append(_cost_row(str(row["turn"]), row))
        if others:
            lines.append(_cost_row(f"{len(others)} other turns", _summed(others)))
        lines.append(_cost_row("**session**", t))
        tokens = f"\ntokens: hit {t['hit']} · miss {t['miss']} · output {t['output']}"
        if c["cuts"]:  # what they saved less what their cache breaks (and summary calls) cost, as ``cost`` nets them
            saved, spent, net = (usd(_priced(k[key] for k in c["cuts"])) for key in ("savedUsd", "costUsd", "netUsd"))
            tokens += f" · {len(c['cuts'])} cut(s) saved {saved}, their cache breaks cost {spent}: net {net} (estimated)"
        lines.append(tokens)
        return "\n".join(lines) + "\n"
