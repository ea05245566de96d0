"""Small text helpers that reproduce the JavaScript semantics the seed plugins rely on."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from core.shared.deepjson import TOO_DEEP, deep_dumps

BIDI = frozenset(map(chr, (*range(0x202A, 0x202F), *range(0x2066, 0x206A))))  # embeddings, overrides, isolates
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# C0 controls but tab and newline as their Unicode control pictures (ESC is ␛), DEL as ␡, C1 controls (0x9b is a
# CSI) and the BiDi controls (U+202E shows the text after it right to left: "exe.txt" as "txt.exe") as U+FFFD
_PICTURES = {**{c: 0x2400 + c for c in range(0x20) if c not in (9, 10)}, 0x7F: 0x2421,
             **{c: 0xFFFD for c in (*range(0x80, 0xA0), *map(ord, BIDI))}}  # fmt: skip


def model_label(provider: object, model: object, missing: str = "unknown") -> str:
    """``provider/model`` as a report names a session's model (``?`` for a part the log does not say; ``missing``
    when it says neither), never Python's ``None``."""
    if not provider and not model:
        return missing
    return f"{provider or '?'}/{model or '?'}"


def usd(value: float | None) -> str:
    """A dollar amount to four places as reports write it (``$0.0301``, ``-$0.0301``; an amount that rounds to
    nothing is ``$0.0000`` whatever its sign), or ``n/a`` when it is not known."""
    if value is None:
        return "n/a"
    text = f"{abs(value):.4f}"
    return f"-${text}" if value < 0 and text.strip("0.") else f"${text}"


def printable(text: str) -> str:
    """``text`` with every terminal control character but tab and newline, and every BiDi control, replaced by a
    visible stand-in of one code point, so that text from a log drawn on a terminal shows its escapes instead of
    running them (clipboard writes, screen clears, colours) and reads in the order it was written."""
    if text.isprintable():  # no control character (each is unprintable): no scan by the regex engine
        return text
    return text.translate(_PICTURES) if _CONTROLS.search(text) else text


_SURROGATE = re.compile("[\ud800-\udfff]")


def path_text(path: str | os.PathLike[str]) -> str:
    """``path`` (or any text the system gave: a message naming one) as UTF-8 text, the one way tapedeck writes a
    name that is not UTF-8 for a person or a tool (the CLI's JSON, exports, stderr): each byte that is not UTF-8,
    which Python reads as a surrogate escape that no UTF-8 writer takes, as the four characters ``\\xNN`` (a lone
    surrogate of another kind as ``\\uNNNN``); any other text as it is."""
    text = os.fspath(path)
    return _SURROGATE.sub(_escaped, text) if _SURROGATE.search(text) else text


def _escaped(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is one (``1 row``, ``0 rows``; nouns whose plural takes an
    ``s``)."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def first_few(items: Sequence[str], shown: int, sep: str = ", ") -> str:
    """``items`` joined by ``sep``, the first ``shown`` of a longer list followed by ``and N more``."""
    head = sep.join(items[:shown])
    return f"{head}{sep}and {len(items) - shown} more" if len(items) > shown else head


def number_runs(numbers: Iterable[int], shown: int = 8) -> str:
    """Sorted whole numbers as runs (``1-2, 5``), the first ``shown`` runs of more followed by ``and N more``."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return first_few([f"{a}" if a == b else f"{a}-{b}" for a, b in runs], shown)


def a_or_an(word: str) -> str:
    """``word`` after its indefinite article: ``an assistant/message``, ``a step/start`` (a leading ``u`` takes
    ``a``, as in ``a user/message``)."""
    return f"{'an' if word[:1].lower() in ('a', 'e', 'i', 'o') else 'a'} {word}"


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance between two strings: the fewest insertions, deletions and substitutions from one to the
    other."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def nearest(word: str, options: Iterable[str], within: int = 2) -> str | None:
    """The option of ``options`` fewest edits (``edit_distance``) from ``word``, at most ``within``, letter case
    aside (the first of those as near): the name a "did you mean" offers for ``word``, which names nothing known
    (None: no option is that near). An option whose length differs from the word's by more than ``within`` is not
    measured (no fewer edits bridge them), so a hostile word of megabytes is refused at the cost of its length."""
    options = list(options)
    if len(word) > max((len(o.lower()) for o in options), default=0) + within:  # lower-casing never shortens text
        return None
    folded = word.lower()
    best, fewest = None, within + 1
    for option in options:
        other = option.lower()
        if abs(len(folded) - len(other)) < fewest and (edits := edit_distance(folded, other)) < fewest:
            best, fewest = option, edits
    return best


def plain_number(value: float) -> str:
    """``value`` as a person reads it, never in e-notation: a whole one with thousands separators (``1,000,000``,
    not ``1e+06``), any other to three significant digits (``0.0000174``, not ``1.74e-05``)."""
    if float(value).is_integer():
        return f"{int(value):,}"
    text = f"{value:.3g}"
    if "e" not in text:
        return text
    return f"{float(text):.{max(0, 2 - int(text.split('e')[1]))}f}"  # 1.74e-05: seven places


def cp_len(text: str) -> int:
    """Length in Unicode code points (Python's native ``len``)."""
    return len(text)


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, i.e. JavaScript's ``String.prototype.length``."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-16 units (never splitting a surrogate pair), marked with ``…``."""
    if utf16_len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    out, used = [], 0
    for ch in text:
        width = 2 if ord(ch) > 0xFFFF else 1
        if used + width > limit - 1:
            break
        out.append(ch)
        used += width
    return "".join(out) + "…"


QUOTED = 80  # characters of text from outside (a key, a pattern, an id) a message quotes at most
# What a message never writes as it is: the C0 controls (tab and newline too: a message is one line), DEL, the C1
# controls, the line and paragraph separators, the BiDi controls and a lone surrogate (no UTF-8 writer takes one)
_UNQUOTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def quoted(text: object, limit: int | None = QUOTED) -> str:
    """``text`` from outside (a config key, a pattern, an id) as a message names it, as it is: cut to ``limit``
    characters, the cut marked with ``…`` (clip), so a key of 100,000 characters is not written back whole, and each
    character a terminal acts on or draws out of order as its JSON escape (``\u001b``, ``\n``), as ``shown`` writes
    a value. ``limit`` None: never cut, for a name that must stay usable (a file a tool lists; ``unquoted`` reads it
    back)."""
    cut = str(text) if limit is None else clip(str(text), limit)
    if not _UNQUOTABLE.search(cut):
        return cut
    return _UNQUOTABLE.sub(lambda m: _terminal_safe(_string_json(m.group()))[1:-1], cut)


def json_line_problem(raw: bytes | bytearray, exc: ValueError) -> str:
    """Why a JSON parser refused the line ``raw`` (``exc``, its error), after "is": orjson says any line that is not
    UTF-8 is "str is not valid UTF-8: surrogates not allowed" at its first character, wherever the byte is and
    though no surrogate is in it; such a line names its first byte that is not UTF-8 instead."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not UTF-8: its byte {bad.start} (0x{raw[bad.start]:02x}) cannot be decoded"
    return f"not valid JSON ({exc})"


def quoted_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a message names it: whole, so that it can be copied back, each byte that is no UTF-8 as
    ``path_text`` writes it (``\\xff``) and each character a terminal acts on or that breaks the line as ``quoted``
    escapes it (``\\n``, ``\\u001b``), so a name holding a newline or an escape sequence neither forges a line nor
    acts on the terminal."""
    return quoted(path_text(path), None)


_QUOTED_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|([bfnrt]))")
_ESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def unquoted(text: str) -> str:
    """``text`` with each escape ``quoted`` writes for a character (``\\n``, ``\\u001b``, ``\\udcff``) as that
    character; any other backslash, and an escape of a character ``quoted`` writes as it is (``\\u0041``), stays."""
    if "\\" not in text:
        return text

    def character(m: re.Match[str]) -> str:
        char = chr(int(m[1], 16)) if m[1] else _ESCAPED[m[2]]
        return char if _UNQUOTABLE.match(char) else m.group()

    return _QUOTED_ESCAPE.sub(character, text)


def shown(value: object, limit: int = QUOTED) -> str:
    """``value`` from outside (a config value, a request's argument) as a message shows it: as JSON (``json_shown``),
    a cut one followed by its whole length, ``"kkkk…" (100,000 characters)``."""
    text, length = json_shown(value, limit)
    if length is None:
        return text
    return f"{text} ({length:,} characters{'' if isinstance(value, str) else ' of JSON'})"


def describe(value: Any) -> str:
    """A refused value as a message shows it: as JSON (``json_shown``: cut to ``QUOTED`` characters, each character a
    terminal acts on escaped), then its JSON type, and the whole length of one that was cut (``"kkk…" (a string of
    100,000 characters)``)."""
    if value is None:
        return "null"
    text, length = json_shown(value)
    if isinstance(value, bool):
        kind = "a boolean"
    elif isinstance(value, int | float):
        kind = "a number"
    elif isinstance(value, str):
        kind = "a string"
    elif isinstance(value, Mapping):
        kind = "a table"
    elif isinstance(value, list | tuple):
        kind = "a list"
    else:
        kind = f"a {type(value).__name__}"
    if length is None:
        return f"{text} ({kind})"
    return f"{text} ({kind} of {length:,} characters)" if isinstance(value, str) else f"{text} ({kind}, {length:,} characters of JSON)"


def json_shown(value: object, limit: int = QUOTED) -> tuple[str, int | None]:
    """``value`` as JSON as the DSH bridge words it too (``JSON.stringify``'s text, ``js_number``'s numbers), each
    character a terminal acts on or draws out of order as its escape (``\\u001b``, ``\\u202e``), cut to ``limit``
    characters (a string before it is quoted, so the quotes stay) with ``…``; and, when it was cut, its whole length
    in characters (a string's own, else its JSON text's)."""
    if isinstance(value, str):
        cut = clip(value, limit)
        return _terminal_safe(_string_json(cut)), None if cut == value else len(value)
    text = _terminal_safe("".join(_json_pieces(value)))
    cut = clip(text, limit)
    return cut, None if cut == text else len(text)


_ACTIVE_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # JSON leaves them as they are
_INDEX = re.compile(r"(?:0|[1-9][0-9]{0,9})\Z")  # a key JavaScript takes for an array index (below 2**32 - 1)


def _terminal_safe(json_text: str) -> str:
    """``json_text`` with DEL, the C1 controls, the line and paragraph separators and the BiDi controls, which JSON
    writes as they are, as their ``\\uXXXX`` escapes (still the same JSON)."""
    if not _ACTIVE_IN_JSON.search(json_text):
        return json_text
    return _ACTIVE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def _js_keys(keys: Iterable[str]) -> list[str]:
    """Keys in the order JavaScript lists an object's: those that are array indexes first, by value, then the others
    in the order given."""
    keys = list(keys)
    index = sorted((k for k in keys if _INDEX.match(k) and int(k) < 2**32 - 1), key=int)
    first = set(index)
    return index + [k for k in keys if k not in first] if index else keys


def _json_pieces(value: object) -> Iterable[str]:
    """The pieces of ``value``'s text as ``JSON.stringify`` writes it, in order, however deep it is nested (a float
    as ``js_number`` writes it; any other value, such as a TOML date, as the JSON string of its text)."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Piece):
            yield item.text
        elif item is None or isinstance(item, bool):
            yield "null" if item is None else "true" if item else "false"
        elif isinstance(item, float):
            yield js_number(item)
        elif isinstance(item, int):
            try:
                yield str(item)
            except ValueError:  # more digits than Python writes
                yield f"{'-' if item < 0 else ''}1e+{int(item.bit_length() * 0.30103)}"
        elif isinstance(item, Mapping):
            keys = _js_keys(str(k) for k in item)
            named = {str(k): v for k, v in item.items()}
            parts: list[object] = []
            for n, key in enumerate(keys):
                parts += [_Piece(("{" if n == 0 else ",") + _string_json(key) + ":"), named[key]]
            stack.extend(reversed([*parts, _Piece("}")] if parts else [_Piece("{}")]))
        elif isinstance(item, list | tuple):
            parts = [_Piece("[")]
            for n, member in enumerate(item):
                parts += [_Piece(","), member] if n else [member]
            stack.extend(reversed([*parts, _Piece("]")]))
        else:
            yield _string_json(str(item))


class _Piece:
    """Text ``_json_pieces`` writes as it is (a bracket, a comma, a key)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def js_number(value: float) -> str:
    """``value`` as JavaScript writes a number (``1``, ``1.5``, ``1e+21``, ``1e-7``; NaN and the infinities by their
    JavaScript names), from the shortest digits that read back as it, which Python's repr gives too."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    from decimal import Decimal  # imported where a number is written: no reading command needs it

    _, digits_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digits_tuple)).rstrip("0")
    k = len(digits)
    n = int(exponent) + len(digits_tuple)  # value = 0.digits × 10**n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        body = f"{digits[0]}{'.' + digits[1:] if k > 1 else ''}e{'+' if n >= 1 else '-'}{abs(n - 1)}"
    return ("-" if value < 0 else "") + body


def js_json(value: Any) -> str:
    """Serialize like ``JSON.stringify``: compact separators, non-ASCII kept as is, a lone surrogate (a model's JSON
    can send one as an escape, and Python's parser keeps it) written as its ``\\uXXXX`` escape, as JSON.stringify
    writes one (orjson refuses a str holding one), and a value nested deeper than orjson writes (254 levels) in the
    bytes it would write (``deep_dumps``)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except orjson.JSONEncodeError as exc:
        if "surrogates" in str(exc):
            return js_json(_with_escapes(value))
        if str(exc) != TOO_DEEP:
            raise
        return deep_dumps(_with_escapes(value)).decode("utf-8")  # a surrogate in it is not seen until a member's turn


def _with_escapes(value: Any) -> Any:
    """``value`` with each str that holds a surrogate as its JSON text, escapes and all (an object with such a key
    as its whole JSON text), for orjson to write as it is."""
    if isinstance(value, str):
        return orjson.Fragment(_string_json(value)) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        if any(isinstance(key, str) and _SURROGATE.search(key) for key in value):
            members = (f"{_string_json(str(key))}:{js_json(item)}" for key, item in value.items())
            return orjson.Fragment("{" + ",".join(members) + "}")
        return {key: _with_escapes(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_with_escapes(item) for item in value]
    return value


def _string_json(text: str) -> str:
    """``text`` as a JSON string, each surrogate in it as its ``\\uXXXX`` escape."""
    import json  # here: only a str holding a surrogate comes this way

    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def sha256_hex(text: str) -> str:
    """Hex sha256 of the UTF-8 bytes of ``text`` (lone surrogates become U+FFFD, as in JS)."""
    import hashlib  # here, not at module level: most commands never hash, and hashlib costs ms to import

    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def text_of_blocks(blocks: Iterable[Mapping[str, Any]] | None, sep: str = "") -> str:
    """Join the ``text`` of every ``{"type": "text"}`` content block."""
    if not blocks:
        return ""
    # a list, not a generator, and a dict checked without the abstract ``Mapping``'s Python: every row's summary
    # and an export's texts come here, mostly with one text block, which comes back as it is (as ``join`` gives it)
    texts = [
        b.get("text", "") for b in blocks if (b.__class__ is dict or isinstance(b, Mapping)) and b.get("type") == "text"
    ]
    return texts[0] if len(texts) == 1 and texts[0].__class__ is str else sep.join(texts)


def tool_result_block(message: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The single ``tool-result`` block of a DSH tool-result message, or None."""
    if not message:
        return None
    for block in message.get("content") or ():
        # dict first: the abstract ``Mapping`` check runs Python code, a dict needs none
        if isinstance(block, (dict, Mapping)) and block.get("type") == "tool-result":
            return block
    return None


def result_call_id(message: Any) -> str:
    """The call id a tool-result message answers: its block's ``toolCallId``, else its source's ``callId``."""
    block = tool_result_block(message if isinstance(message, Mapping) else None) or {}
    source = message.get("source") if isinstance(message, Mapping) else None
    return str(block.get("toolCallId") or (source or {}).get("callId") or "")


def tool_result_text(message: Mapping[str, Any] | None, sep: str = "") -> str:
    """Text parts of a tool-result message's inner content, joined by ``sep``."""
    block = tool_result_block(message)
    return text_of_blocks(block.get("content") if block else None, sep)


def tool_result_is_error(message: Mapping[str, Any] | None) -> bool:
    """The model-visible ``isError`` flag of a tool-result message."""
    block = tool_result_block(message)
    return bool(block and block.get("isError") is True)


# the last line DSH's shell tools (``bash``, ``pwsh``) give a command that failed, as DSH's own ``parseExitStatus``
# reads it back: they report a non-zero exit or a kill in the text, with ``isError: false`` (only a command that
# could not run at all is an ``isError`` result)
_SHELL_FAILED = re.compile(r"\n\[(?:exit code: 0*[1-9][0-9]*|killed by signal: [^\]\n]+)\]\Z")


def tool_block_failed(block: Mapping[str, Any]) -> bool:
    """Whether a tool-result block reports a failed call: its ``isError`` flag, or a DSH shell command's text (the
    block's only part) ending in a non-zero ``[exit code: N]`` or a ``[killed by signal: S]`` line."""
    if block.get("isError") is True:
        return True
    content = block.get("content")
    if content.__class__ is not list or len(content) != 1:
        return False
    part = content[0]
    text = part.get("text") if part.__class__ is dict and part.get("type") == "text" else None
    if text.__class__ is not str or not text.endswith("]"):
        return False
    # the marker holds no newline but its first character, so it can only start at the text's last newline: the
    # pattern is tried there alone, not searched for over a result of many kB (every tool result is checked)
    last = text.rfind("\n")
    return last >= 0 and _SHELL_FAILED.match(text, last) is not None


def tool_result_failed(message: Mapping[str, Any] | None) -> bool:
    """Whether a tool-result message reports a failed call (``tool_block_failed`` of its block): what the error
    counts, the error rows and the ``error-streak`` alert count."""
    block = tool_result_block(message)
    return block is not None and tool_block_failed(block)


def short_session(session_id: str) -> str:
    """A session's id in 8 characters that tell it from the others: DSH's ``session-`` prefix, which every DSH
    session id starts with, left out."""
    return session_id.removeprefix("session-")[:8]
