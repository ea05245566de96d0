"""The HTML export: one self-contained page (inline CSS and SVG, no network), readable without JavaScript.

A Content-Security-Policy meta tag forbids every fetch, so the page cannot reach the network even if a log's text
tried to, and lets only the page's own script run (by its hash): no script or event handler a log's text could
make runs, whatever its escaping. Long texts sit in ``<details>`` (collapsed, open with a click, no script needed); a small inline script
adds a search box that hides the rows that do not match.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
from collections.abc import Callable, Iterator
from html import escape
from typing import Any

from core.export.build import FOUND, NOTES_UNREAD, cache_break, count_shown, in_step, turns_line, unlisted
from core.export.redact import KINDS
from core.export.spool import replay, spool
from core.read.rows import REPLACEMENT_GLYPHS
from core.read.summary import human_chars
from core.shared.diagnostics import Diagnostic
from core.shared.text import counted, model_label, printable, usd
from core.shared.wire import call_text

REQUEST_CLIP = 4000  # code points of a request message's text (and tool calls) the page shows
CUT_LETTERS = {"tape": "s", "fold": "f", "prune": "p", "rewind": "r", "compaction": "c", "expand": "+"}
STYLE = """
main{display:flex;flex-direction:column}.top{order:-1}
body{font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin:0;background:#fafafa;color:#1d1d1f}
main{max-width:1200px;margin:0 auto;padding:1em 1.5em}
h1{font-size:1.3em;margin:.2em 0}h2{font-size:1.1em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse}td,th{padding:.1em .6em;text-align:left;border-bottom:1px solid #eee;vertical-align:top}
th{background:#f0f0f0}.num{text-align:right}
ol.events{list-style:none;padding:0;margin:0}
ol.events li{padding:.15em .3em;border-bottom:1px solid #eee;display:grid;grid-template-columns:1.5em 4.5em 4em minmax(0,1fr) 5em;gap:.5em}
td:last-child,.sum,summary,.note{overflow-wrap:anywhere}
ol.events li:target{background:#fff6c8}ol.events li[hidden]{display:none}
.g{text-align:center}.seq,.ts,.size{color:#777}.size{text-align:right}
.err{background:#fde8e8}.repl{background:#eef3ff}.stream{color:#555}.later{opacity:.5}.later:hover{opacity:1}
.body{grid-column:4/6}.pair{display:grid;grid-template-columns:1fr 1fr;gap:.8em}
.call{border-left:3px solid #6a8fd8;padding-left:.5em}.result{border-left:3px solid #6aa86a;padding-left:.5em}
pre{white-space:pre-wrap;word-break:break-word;margin:.2em 0;background:#f3f3f3;padding:.3em}
.note{background:#fff3c4;border-left:3px solid #e0b400;padding:.1em .5em;margin:.2em 0;white-space:pre-wrap}
ul.notes .note{display:inline-block;vertical-align:top;margin:0}
.mark{color:#b08900;font-weight:bold}.more{color:#999}.dim{color:#888}
.links a{margin-right:.4em}#q{font:inherit;padding:.2em;width:20em}
svg text{font:10px ui-monospace,monospace}
"""
SCRIPT = """
const q=document.getElementById('q');q.hidden=false;
q.addEventListener('input',()=>{const t=q.value.toLowerCase();
for(const li of document.querySelectorAll('ol.events>li')){li.hidden=t!==''&&!li.textContent.toLowerCase().includes(t);}});
"""

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; "
    f"script-src 'sha256-{base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()}'; img-src data:"
)


def _drawn(value: Any) -> str:
    """``value`` as the page writes it, before its markup is escaped: a page is read and shared, and ``cat`` on it
    must run none of a log's escapes, so every control character but newline and tab is drawn (``printable``; a
    picture is neither one of the five characters escaping replaces nor made by it: either order, the same text)."""
    return printable("" if value is None else str(value))


def _e(value: Any) -> str:
    return escape(_drawn(value), quote=True)


def _b(value: Any) -> bytes:
    """``_e(value).encode()``, escaped in UTF-8 (each of the five characters is one byte there, never part of
    another character's bytes): several times faster on the long texts, most of which are not all ASCII."""
    data = _drawn(value).encode()
    return (
        data.replace(b"&", b"&amp;").replace(b"<", b"&lt;").replace(b">", b"&gt;").replace(b'"', b"&quot;")
        .replace(b"'", b"&#x27;")
    )  # fmt: skip


_CLASSES = {  # an event-list item's classes by whether it is an error, a replacement, a stream, after the moment
    (err, repl, stream, later): " ".join(
        c for c, on in (("err", err), ("repl", repl), ("stream", stream), ("later", later)) if on
    )
    for err in (False, True) for repl in (False, True) for stream in (False, True) for later in (False, True)
}  # fmt: skip
_MARK = ' <span class="mark" title="note">✎</span>'.encode()
_NOTE = '<div class="note">✎ '.encode()
_CALLED = '<pre>→ '.encode()
_ELLIPSIS = "…".encode()
_MORE = '<div class="more">… '.encode()
_RESULT = '</pre></div><div class="result">← result'.encode()
WORDS_KEPT = 256  # distinct types, glyphs, roles and sources the writer keeps escaped
PROBLEMS_SHOWN = 50  # diagnostics the header lists (the JSON has them all)
LONG_TEXT = 200  # code points from which the writer remembers a text it escaped (see ``HtmlFormat._escaped``)


def _link(seq: int, row: int | None = None) -> str:
    """A link to the row of event ``seq`` (``row``: the row's own seq, when the event is one of a stream's)."""
    return f'<a href="#e{seq if row is None else row}">#{seq}</a>'


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


class HtmlFormat:
    """Rows as ``<li>`` items of the event list; the sections around them."""

    messages = True
    costs = False
    late = True  # the head names the session by its last title
    unshown = frozenset({"path"})
    problems_shown = PROBLEMS_SHOWN
    joined = False  # a request message is written between pieces of its own (``_request``)

    def __init__(self, log_name: str, at: int | None = None, cut: bool = False, filtered: bool = False) -> None:
        self.log_name = log_name
        self.at = at  # the moment: the rows after it are dimmed …
        self.cut = cut  # … or, when cut, left out (and counted)
        self.later = 0  # rows left out
        self.listed: set[int] | None = set() if filtered else None  # a filtered list's rows, by seq
        self.found = [0] * len(KINDS)  # what redacting the rows it shows replaced
        self.moment: int | None = None  # the row that shows the moment: the last at or before it
        self._last: tuple[Any, bytes] = (None, b"")  # the last long text escaped, and its bytes
        self._before: tuple[Any, bytes] = (None, b"")  # the one escaped before it
        self._words: dict[str, str] = {}  # types, glyphs, roles and sources, escaped (``_word``)
        self._openings: dict[tuple[Any, Any, bool, bool, bool, bool], bytes] = {}  # rows' openings by kind (``_opening``)

    def _escaped(self, text: Any) -> bytes:
        """``_b(text)``; the last two long texts are remembered: a surface node's text is escaped for its surface
        row, its request message and its event-list row one after the other (mostly the same text; a model
        message's request text is its text blocks alone, between the other two)."""
        if text.__class__ is str:
            if text == self._last[0]:
                return self._last[1]
            if text == self._before[0]:
                return self._before[1]
        data = _b(text)
        if text.__class__ is str and len(text) >= LONG_TEXT:
            self._before, self._last = self._last, (text, data)
        return data

    def _text(self, block: dict[str, Any] | None) -> tuple[bytes, ...]:
        """The pieces of a clipped text's ``<pre>`` and its count of chars left out (none for no text), to be
        joined with the rest of their item once."""
        if not block or not block.get("text"):
            return ()
        more = _MORE + f'{block["more"]} more chars</div>'.encode() if block.get("more") else b""
        return b"<pre>", self._escaped(block["text"]), b"</pre>", more

    def row(self, r: dict[str, Any]) -> bytes:
        """One event-list item, joined once from its pieces (its text is kilobytes). What rows of a kind share
        (classes, type, glyph) is made once, and glyphs and marks go in as UTF-8 bytes, so that the pieces made
        here are mostly ASCII (a string with a character past Latin-1 is built and encoded two bytes a character)."""
        seq, turn, step, note = str(r["seq"]), r["turn"], r.get("step"), r.get("note")
        step = f"{turn}.{step}" if step is not None else f"{turn}" if turn else "–"
        stream = "deltas" in r
        later = self.at is not None and r["seq"] > self.at
        found = r.pop(FOUND, None)
        if later and self.cut:
            self.later += 1
            return b""
        if found is not None:
            count_shown(self.found, found)
        if not later:
            self.moment = r["seq"]
        if self.listed is not None:
            self.listed.add(r["seq"])
        kind = (r["type"], r["glyph"], bool(r["error"]), bool(r["replacement"]), stream, later)
        opening = self._openings.get(kind)
        if opening is None:
            opening = self._opening(kind)
        parts = [
            f'<li id="e{seq}'.encode(), opening, f'{seq}</span><span class="ts">{step}</span><span class="sum">'.encode(),
            _b(r["summary"]), _MARK if note else b"",
            f'</span><span class="size">{human_chars(r["size"])} {r["unit"]}</span>'.encode(), b'<div class="body">',
        ]  # fmt: skip
        body = len(parts)
        if note:
            parts += (_NOTE, _b(note), b"</div>")
        text = self._text(r.get("text"))
        call = r.get("call")
        if call:
            link = self._ref(call["seq"]).encode() if call["seq"] is not None else b""
            parts += (b'<div class="pair"><div class="call">', link, _CALLED, _b(f"{call['name']}({call['arguments']['text']})"),
                      _ELLIPSIS if call["arguments"]["more"] else b"", _RESULT, *text, b"</div></div>")  # fmt: skip
        elif text:
            parts += (b"<details><summary>text</summary>", *text, b"</details>")
        if r.get("replaced"):
            parts.append(
                ('<div class="links">replaced: ' + " ".join(map(self._ref, r["replaced"])) + "</div>").encode()
            )
        if stream:
            parts.append(f'<div class="dim">seq {seq}–{r["endSeq"]}</div>'.encode())
        if len(parts) == body:  # no body
            parts[-1] = b"</li>\n"
        else:
            parts.append(b"</div></li>\n")
        return b"".join(parts)

    def _opening(self, kind: tuple[Any, Any, bool, bool, bool, bool]) -> bytes:
        """What a row of ``kind`` (type, glyph, error, replacement, stream, after the moment) has between its seq in
        its id and its seq shown, kept for up to ``WORDS_KEPT`` kinds."""
        etype, glyph, err, repl, stream, later = kind
        opening = (f'" class="{_CLASSES[err, repl, stream, later]}" data-type="{self._word(etype)}"><span class="g">'
                   f'{self._word(glyph)}</span><span class="seq">').encode()  # fmt: skip
        if len(self._openings) < WORDS_KEPT:
            self._openings[kind] = opening
        return opening

    def _word(self, value: Any) -> str:
        """``_e(value)`` of a row's type or glyph, or a message's role or source: the same few words on every row,
        each escaped once (up to ``WORDS_KEPT`` of them)."""
        words = self._words
        escaped = words.get(value) if value.__class__ is str else None
        if escaped is None:
            escaped = _e(value)
            if value.__class__ is str and len(words) < WORDS_KEPT:
                words[value] = escaped
        return escaped

    def opening(self, doc: dict[str, Any] | None) -> bytes:
        """The page's head, titled by the session's last title (else its id) and the moment, and the opening of
        the event list (the sections follow the rows in the file; CSS shows them first)."""
        assert doc is not None  # ``late``: asked once the pass is over
        s = doc["session"]
        at = f" · at seq {self.at}" if self.at is not None else ""
        return "".join([
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
            f"<title>{_e(s['title'] or s['id'])}{at} · tapedeck export</title>",
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            f'<meta name="viewport" content="width=device-width"><style>{STYLE}</style>',
            "</head><body><main>",
            '<section><h2 id="events">Events</h2><input id="q" type="search" placeholder="search rows" hidden>',
            '<ol class="events">\n',
        ]).encode()  # fmt: skip

    def closing(self, doc: dict[str, Any]) -> Iterator[bytes]:
        """The end of the list, then the header and the sections (shown above the list), and the script, in
        parts (a long session's surface and request run to megabytes). The request is written first to a spool
        file (in memory while it is small), the header's redaction summary counts what redacting it replaced; so
        are the surface's rows (read in step with it), whose heading counts them, unless their count is known
        (``Rows.count``: the pass kept every node) and the request reads no message back: then they are read
        where the pass kept them, after the heading."""
        surface, chosen = doc["surface"]["nodes"], doc["request"]
        count = surface.count
        ahead = count is None or (chosen is not None and chosen["messages"].read_back)
        with spool() as rows, spool() as request:
            pieces = self._request(doc)
            if ahead:
                count = 0
                for row in in_step(surface, pieces, request.write):
                    rows.write(row)
                    count += 1
            for piece in pieces:
                request.write(piece)
            s = doc["session"]
            title = f"tapedeck · {s['id']}"
            turns = turns_line(s["turns"])
            at = doc["at"]
            after = f"the list ends there: {counted(self.later, 'later row')} left out" if self.cut else "the rows after it are dimmed"
            moment = f" · at {_link(at, self.moment)} ({after})" if at is not None else ""
            parts: list[str | Callable[[], str]] = [
                '</ol></section><div class="top">',
                f"<header><h1>{_e(title)}</h1><table>"
                + (f"<tr><th>title</th><td>{_e(s['title'])}</td></tr>" if s["title"] else ""),
                f"<tr><th>model</th><td>{_e(model_label(s['provider'], s['model']))}</td></tr>",
                f"<tr><th>state</th><td>{_e(s['state'])}</td></tr>",
                f"<tr><th>turns</th><td>{len(s['turns'])}: {_e(turns)}</td></tr>",
                f'<tr><th>events</th><td id="event-count">{s["events"]}</td></tr>',
                f'<tr><th>rows</th><td id="row-count">{self._rows(doc)}</td></tr>',
                f"<tr><th>cost</th><td>{usd(s['usd'])}</td></tr>",
                f"<tr><th>cwd</th><td>{_e(s['cwd'])}</td></tr>" + self._filter(doc),
                f"<tr><th>exported</th><td>{_e(self._redaction(doc))}{moment}</td></tr>{self._problems(doc)}",
                "</table></header>",
                lambda: self._chart(doc),
                lambda: self._notes(doc),
                lambda: self._surface_head(doc, count),
            ]
            for i, part in enumerate(parts):
                yield ("\n" if i else "").encode() + (part() if callable(part) else part).encode()
            yield from replay(rows) if ahead else surface
            yield b"</table>\n"
            yield from replay(request)
        for part in (lambda: self._cost(doc), lambda: self._marks(doc)):
            yield ("\n" + part()).encode()
        yield f"\n</div></main><script>{SCRIPT}</script></body></html>\n".encode()

    def shown(self, doc: dict[str, Any]) -> int:
        """Every row, but those a cut list leaves out."""
        return int(doc["rows"]) - self.later

    def _rows(self, doc: dict[str, Any]) -> str:
        """The header's count of rows: how many of them the list shows, when it is cut."""
        return f"{self.shown(doc)} of {doc['rows']}" if self.later else str(doc["rows"])

    @staticmethod
    def _redaction(doc: dict[str, Any]) -> str:
        counts = doc["redaction"]
        if counts is None:
            return "not redacted"
        return "redacted: " + ", ".join(f"{n} {kind}" for kind, n in counts.items())

    @staticmethod
    def _problems(doc: dict[str, Any]) -> str:
        """The header's row of what the readers found wrong in the log (none: no row)."""
        found = doc["diagnostics"]
        if not found:
            return ""
        items = "".join(f"<li>{_e(Diagnostic(**d))}</li>" for d in found[:PROBLEMS_SHOWN])
        left = len(found) - PROBLEMS_SHOWN
        more = f"<li>… {left} more (tapedeck inspect)</li>" if left > 0 else ""
        return (f"<tr><th>log problems</th><td>{len(found)}<details><summary>what the readers found wrong"
                f"</summary><ul>{items}{more}</ul></details></td></tr>")  # fmt: skip

    @staticmethod
    def _filter(doc: dict[str, Any]) -> str:
        """The header's row naming the filter the list was exported with, and how many rows it left out (none: no
        row)."""
        f = doc["filter"]
        return f"<tr><th>filter</th><td>{_e(f['text'])} ({counted(f['rowsLeftOut'], 'row')} left out)</td></tr>" if f else ""

    def _listed(self, row: int) -> bool:
        """Whether the page lists the row of seq ``row`` (a list cut at the moment leaves the later ones out, a
        filtered one those the filter did)."""
        if self.listed is not None and row not in self.listed:
            return False
        return not (self.cut and self.at is not None and row > self.at)

    def _ref(self, seq: int, row: int | None = None) -> str:
        """``_link``, or ``#seq`` alone where the page does not list the row."""
        return _link(seq, row) if self._listed(seq if row is None else row) else f"#{seq}"

    def _chart(self, doc: dict[str, Any]) -> str:
        samples, cuts = doc["chart"]["samples"], doc["chart"]["cuts"]
        if not samples:
            return "<h2>Context</h2><p>no model request in this log</p>"
        width, height, pad = 900, 160, 30  # the bars' width; the picture is 10 wider, for a cut past the last bar
        top = max(s["chars"] for s in samples) or 1
        n = len(samples)
        bar = (width - pad) / n
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width + 10} {height + 30}" width="100%" '
               f'role="img" aria-label="context size per model request">']  # fmt: skip
        out.append(f'<text x="0" y="10">{human_chars(top)} ch</text>')
        seqs = [s["seq"] for s in samples]
        for i, s in enumerate(samples):
            h = max(1.0, s["chars"] / top * (height - 20))
            at = doc["at"] is not None and s["seq"] <= doc["at"] and (i + 1 == n or seqs[i + 1] > doc["at"])
            fill = "#e0a000" if at else "#6a8fd8"
            out.append(f'<rect x="{pad + i * bar:.1f}" y="{height - h:.1f}" width="{max(bar - 1, 0.5):.1f}" '
                       f'height="{h:.1f}" fill="{fill}"><title>turn {s["turn"]} step {s["step"]} · seq {s["seq"]} · '
                       f'{s["chars"]} chars</title></rect>')  # fmt: skip
        for c in cuts:
            i = bisect.bisect_right(seqs, c["seq"])  # the first request after the cut (n: none, past the last bar)
            x = pad + i * bar
            letter = CUT_LETTERS.get(c["kind"], "x")
            line = (f'<line x1="{x:.1f}" x2="{x:.1f}" y1="10" y2="{height}" stroke="#c0392b" stroke-dasharray="3,2"/>'
                    f'<text x="{x + 1:.1f}" y="{height + 12}" fill="#c0392b">{letter}<title>{_e(c["kind"])} at seq '
                    f'{c["seq"]}: {c["charsRemoved"]} chars removed</title></text>')  # fmt: skip
            out.append(f'<a href="#e{c["seq"]}">{line}</a>' if self._listed(c["seq"]) else line)
        out.append("</svg>")
        legend = (
            "s seal · f fold · p prune · r rewind · c compaction (dashed lines: cuts, linked to their events)"
        )
        return f'<h2>Context</h2><p class="dim">chars sent per model request · {legend}</p>' + "".join(out)

    def _notes(self, doc: dict[str, Any]) -> str:
        if doc["notesUnread"]:
            return f'<h2>Notes</h2><p class="dim">{NOTES_UNREAD}</p>'
        if not doc["notes"]:
            return ""
        items = []
        for n in doc["notes"]:  # a note on a seq past the log's end (a copy cut short) or the filter left out: no row
            where = self._ref(n["seq"], n["row"]) if n["row"] is not None else f"#{n['seq']} ({unlisted(doc, n['seq'])})"
            items.append(f'<li>{where} <span class="note">{_e(n["text"])}</span></li>')
        return f'<h2>Notes</h2><ul class="notes">{"".join(items)}</ul>'

    @staticmethod
    def _surface_head(doc: dict[str, Any], count: int) -> str:
        at = doc["surface"]["at"]
        when = f"right after seq {at}" if at is not None else "at the end of the log"
        return (f'<h2 id="surface">Surface {when}</h2><p class="dim">{count} model-visible messages</p><table>'
                "<tr><th>seq</th><th>role</th><th>source</th><th class=\"num\">chars</th><th>message</th></tr>")  # fmt: skip

    def surface_piece(self, r: dict[str, Any]) -> bytes:
        """A surface row: one table row."""
        repl = " (replacement)" if r["replacement"] else ""
        return b"".join((
            f"<tr><td>{self._ref(r['seq'])}</td><td>{self._word(r['role'])}</td><td>{self._word(r['source'])}{repl}</td>"
            f"<td class=\"num\">{r['chars']}</td><td><details><summary>".encode(), _b(r["summary"]), b"</summary>",
            *self._text(r["text"]), b"</details></td></tr>",
        ))  # fmt: skip

    def message_piece(self, m: dict[str, Any]) -> bytes:
        """A request message: its list item but for ``<li>`` and, before ``<details>``, its node's link and mark
        (``_request`` adds them: it knows where the cache broke)."""
        text = m.get("content") or ""
        text = text if isinstance(text, str) else str(text)
        made = m.get("tool_calls") or ()
        calls = "".join("\n" + call_text(c) for c in made)[:REQUEST_CLIP]  # shown however long the text
        label = f"{len(text)} chars" + (f" · {len(made)} tool call{'s' * (len(made) > 1)}" if made else "")
        return b"".join((f"{self._word(m['role'])} <details><summary>{label}</summary><pre>".encode(),
                         self._escaped(text[:REQUEST_CLIP]), _ELLIPSIS if len(text) > REQUEST_CLIP else b"",
                         _b(calls), b"</pre></details></li>"))  # fmt: skip

    def _request(self, doc: dict[str, Any]) -> Iterator[bytes]:
        r = doc["request"]
        if r is None:
            yield b"<h2>Request</h2><p>no model request</p>"
            return
        b = r["cacheBreak"]
        where = cache_break(b)
        fresh = set(b["added"]) | {x["by"] for x in b["replaced"]}
        again = f" attempt {r['attempt']}" if r["attempt"] > 1 else ""
        yield (f"<h2 id=\"request\">Request: turn {r['turn']} step {r['step']}{again} (at seq {r['seq']})</h2>").encode()
        yield (f"<p>{_e(model_label(r['provider'], r['model'], 'model unknown'))} · {len(r['messages'])} messages · {r['chars']} chars · "
               f"tools: {_e(', '.join(r['tools']) or 'none')}</p><p><b>{_e(where)}</b></p><ol>").encode()  # fmt: skip
        lead = max(0, len(r["messages"]) - len(r["nodes"]))  # the system prompt comes from no surface node
        # what is new to the cache: nothing stands out in a first request, where nothing was cached
        mark = "" if b["first"] else "new: past the cache break" if b["broke"] else "new: after the cached prefix"
        for i, piece in enumerate(r["messages"]):
            node = r["nodes"][i - lead] if i >= lead else None
            new = f' <span class="mark">{mark}</span>' if mark and node in fresh else ""
            anchor = self._ref(node) if isinstance(node, int) else "(from no event) " if node is None else _e(node)
            cut = piece.index(b"<details>")  # the role before it is escaped: it holds no "<"
            yield b"<li>" + piece[:cut] + (anchor + new).encode() + piece[cut:]
        yield b"</ol>"

    def _cost(self, doc: dict[str, Any]) -> str:
        c = doc["cost"]
        out = ['<h2 id="cost">Cost</h2><table><tr><th>turn</th><th class="num">requests</th><th class="num">cost</th>'
               '<th class="num">cached</th></tr>']  # fmt: skip
        for t in c["turns"]:
            out.append(f"<tr><td>{t['turn']}</td><td class=\"num\">{t['requests']}</td><td class=\"num\">{usd(t['usd'])}</td>"
                       f"<td class=\"num\">{_pct(t['cached'])}</td></tr>")  # fmt: skip
        t = c["total"]
        out.append(f"<tr><th>session</th><th class=\"num\">{t['requests']}</th><th class=\"num\">{usd(t['usd'])}</th>"
                   f"<th class=\"num\">{_pct(t['cached'])}</th></tr></table>"
                   f"<p>tokens: hit {t['hit']} · miss {t['miss']} · output {t['output']}</p>")  # fmt: skip
        if c["unpriced"]:
            out.append(f"<p>no price known for {_e(', '.join(c['unpriced']))}</p>")
        if c["cuts"]:
            out.append("<table><tr><th>seq</th><th>cut</th><th>turn</th><th class=\"num\">chars off</th>"
                       "<th class=\"num\">saved</th><th class=\"num\">cache break cost</th><th class=\"num\">net</th></tr>")  # fmt: skip
            for k in c["cuts"]:
                out.append(f"<tr><td>{self._ref(k['seq'])}</td><td>{_e(k['kind'])}</td><td>{k['turn']}</td>"
                           f"<td class=\"num\">{k['charsRemoved']}</td><td class=\"num\">{usd(k['savedUsd'])}</td>"
                           f"<td class=\"num\">{usd(k['costUsd'])}</td><td class=\"num\">{usd(k['netUsd'])}</td></tr>")  # fmt: skip
            out.append("</table>")
        return "".join(out)

    def _marks(self, doc: dict[str, Any]) -> str:
        if not doc["marks"]:
            return ""
        out = ['<h2 id="marks">Tape entries, folds and marks</h2><table><tr><th>seq</th><th>kind</th><th>what</th>'
               "<th>replaced</th></tr>"]  # fmt: skip
        for m in doc["marks"]:
            glyph = REPLACEMENT_GLYPHS.get(m["kind"], "◇")
            out.append(f"<tr><td>{self._ref(m['seq'])}</td><td>{glyph} {_e(m['kind'])}</td><td>{_e(m['summary'])}</td>"
                       f"<td class=\"links\">{' '.join(self._ref(s) for s in m['replaced'][:200])}"
                       f"{' …' if len(m['replaced']) > 200 else ''}</td></tr>")  # fmt: skip
        out.append("</table>")
        return "".join(out)
