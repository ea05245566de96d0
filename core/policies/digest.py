"""Tool-result digests: route a result by tool and content, then condense it into a view of its useful lines.

Routing (``digest_tool_result``):

- ``recall_turn``, ``recall_step``, ``recall_search``: never touched; they already are retrieved originals.
- ``grep`` / ``glob`` and command output that looks like search hits (``path:line:``): kept whole unless one search
  returns very many matches; then every file keeps its first and last matches and a
  ``[... and N more matches in <file>]`` line says exactly what was dropped.
- file reads (``read``, ``read_file``, ``read_section``): ``code`` when the path has a source extension or at least
  15% of 8+ non-blank lines look like code, otherwise ``data``. Other tools are classified by content as code,
  search, log (30%+ log-like lines) or data.
- ``code`` is never condensed: a model editing from a function with a hole in it writes broken code.
- ``data``: head and tail lines plus structured lines (``key = value``, ``key: value``, headings, ``[sections]``,
  fences); a run of structured lines outside the head keeps its first few lines and then only keys not seen yet.
- ``log``: every distinct error with context and its stack frames, the first warnings and summary lines, head
  and tail; similar lines are deduplicated.

Every dropped run of lines becomes ``…[+K lines / C chars]…`` where C counts the dropped lines exactly (each
line's length plus its newline); a dropped run of blank lines becomes one blank line. A digest that would keep
``maxKeepRatio`` or more of the original is abandoned: a fold must pay for itself. Lengths are UTF-16 units, the
unit the seed measured in, so thresholds mean the same here as in a DSH profile.

Three choices the recovered seed left open, decided here:

- ``minChars`` is 1500, not 6000. A 5 KB configuration dump or table read is worth condensing, and the
  structured-line rule keeps the keys a rule document depends on; the ratio guard stops folds that save little.
- Long lines are cut (``maxLineChars`` 1500, keeping ``lineHeadChars`` 700 and ``lineTailChars`` 300 around
  ``…[+N chars]…``). Without it a large single-line JSON response, a base64 blob or a minified file could never
  fold, because a line-based digest has nothing to drop from one line.
- Search results fold only when one result has at least ``searchMinMatches`` (100) matches and
  ``searchMinChars`` (6000) units, keeping ``searchMaxPerFile`` (4) matches per file: the first half and the last
  half. Below that a search is cheap to read whole and every hit may be the one the model wants. ``glob`` output
  is grouped by directory, since each line is a file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from core.policies.slice_config import DigestConfig
from core.shared.text import utf16_len

ContentKind = Literal["code", "search", "log", "data"]

RECALL_TOOLS = frozenset({"recall_turn", "recall_step", "recall_search"})
FILE_READ_TOOLS = frozenset({"read", "read_file", "read_section"})
SEARCH_TOOLS = frozenset({"grep", "glob"})


@dataclass(frozen=True, slots=True)
class Digest:
    """The outcome of digesting one text: the view (or the original text) and why it was or was not condensed."""

    kind: ContentKind
    text: str
    digested: bool
    total_lines: int
    kept_lines: int
    reason: str = ""


# ---------------------------------------------------------------------------------------------- patterns
_A = re.ASCII
_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+[:|]\s?", _A)
_SPACES = " \t\n\r\f\v"  # what ``\s`` matches in an ASCII pattern
_STRUCTURED = re.compile(r"^\s*(?:[A-Za-z_][\w.\-]*\s*[=:]\s*\S|#{1,6}\s|\[[^\]]+\]\s*$|```)", _A)
_STRUCTURED_KEY = re.compile(r"^([A-Za-z_][\w.\-]*)\s*[=:]", _A)
_CODE_EXT = re.compile(
    r"\.(?:py|pyi|ts|tsx|js|jsx|mjs|cjs|go|rs|c|h|cc|cpp|hpp|cs|java|kt|scala|rb|php|swift|m|mm|sh|bash|zsh|fish"
    r"|ps1|sql|lua|pl|r|jl|ex|exs|erl|hs|ml|clj|scm|lisp|el|vim|dart|zig|nim|v|sv|vhd|proto|thrift|tf|hcl|gradle"
    r"|cmake|make|mk)$",
    re.I | _A,
)
_CODE_LINE = re.compile(
    r"^\s*(?:def |class |function\b|func |fn |import |from .+ import |#include|package |return\b"
    r"|if\b.*[:{]\s*$|for\b.*[:{]\s*$|while\b.*[:{]\s*$|else\b|try\b|except\b|catch\b|\}\s*$|\{\s*$"
    r"|export |const |let |var |public |private |static |@\w+)",
    _A,
)
_SEARCH_LINE = re.compile(r"^(?:[\w.\-~]+/)*[\w.\-]+\.\w{1,8}:\d+[:|]|^(?:[\w.\-~]+/)+[\w.\-]+:\d+[:|]", _A)
# A line of log output: one that starts as a log line does (a timestamp, a stack frame, a TAP or check mark) or
# holds a level or outcome word anywhere. The two are apart: searched as one pattern, every start anchor was tried
# again at each position of the line (2.5 times the cost, on a tool result's lines).
_LOG_START = re.compile(
    r"\s*\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\s*\[?\d{2}:\d{2}:\d{2}|\s+at \S+ \(|\s+File \"|(?:ok|not ok) \d|\s*[✓✗]",
    _A,
)
_LOG_WORD = re.compile(
    r"\b(?:ERROR|WARN(?:ING)?|INFO|DEBUG|TRACE|FATAL|PANIC|CRITICAL)\b"
    r"|\b(?:PASSED|FAILED|SKIPPED|passed|failed|error\[E\d+\]|Traceback|Exception|npm (?:ERR|WARN)!|Compiling"
    r"|warning:|error:)\b",
    _A,
)
# An error line: one that starts with a failure mark, or holds an error word anywhere (matched and searched apart,
# as ``_LOG_START`` and ``_LOG_WORD`` are)
_ERROR_START = re.compile(r"\s*(?:✗|not ok|E\s{2,})", re.I | _A)
_ERROR_WORD = re.compile(
    r"\b(?:ERROR|FATAL|PANIC|CRITICAL|FAIL(?:ED|URE|S)?|Traceback|Exception|AssertionError|Segmentation fault"
    r"|panicked at|npm ERR!|error(?:\[E\d+\]| TS\d+)?:)\b|\berror\b.*\bexit code\b",
    re.I | _A,
)
_WARN_LINE = re.compile(r"\b(?:WARN(?:ING)?|warning:|deprecat(?:ed|ion))\b", re.I | _A)
_SUMMARY_LINE = re.compile(
    r"^(?:=+ .* =+|-{3,}.*-{3,}|\d+ (?:passed|failed|errors?|warnings?|tests?)\b|Tests?:|Test Suites:|FAILED \("
    r"|Ran \d+ tests?|.*\b(?:passed|failed)\b.* in \d|BUILD (?:SUCCESS|FAILED)|Finished\b|test result:"
    r"|error: could not compile|\d+ problems?\b)",
    re.I | _A,
)
_STACK_LINE = re.compile(r"^\s+(?:at \S+|File \"|\.{3}|#\d+ |\w+(?:\.\w+)*\(.*\)\s*$|\S+:\d+:\d+)", _A)
_GREP_MATCH = re.compile(r"^(?P<file>[^\s:][^:]*?):\d+[:|]")
_GREP_BARE = re.compile(r"^\s*\d+[:|]")
_HEX_RUN = re.compile(r"0x[0-9a-f]+|\b[0-9a-f]{7,}\b", re.I | _A)
_PATHISH = re.compile(r"\S*/\S+")
_DIGITS = re.compile(r"\d+", _A)
_KEY_CUT = re.compile(r"[:=]")


def _strip(line: str) -> str:
    """``line`` without its line-number prefix (``12: ``, ``  7| ``), if it has one. The pattern is tried only on
    a line whose first character after ASCII spaces (``\\s`` in an ASCII pattern) is a digit: most lines are not
    numbered, and a call of the pattern costs more than that look."""
    first = line.lstrip(_SPACES)[:1]
    return _LINE_NUMBER_PREFIX.sub("", line, count=1) if "0" <= first <= "9" else line


def _is_blank(line: str) -> bool:
    return not _strip(line).strip()


def _is_structured(line: str) -> bool:
    return _STRUCTURED.match(_strip(line)) is not None


def _structured_key(line: str) -> str:
    s = _strip(line).strip()
    m = _STRUCTURED_KEY.match(s)
    return m.group(1) if m else s


def _non_blank(lines: Iterable[str]) -> list[str]:
    return [s for s in map(_strip, lines) if s.strip()]


# ---------------------------------------------------------------------------------------------- kinds
def looks_like_code_path(path: str | None) -> bool:
    """True when ``path`` ends in a source-code extension."""
    return bool(path) and _CODE_EXT.search(path or "") is not None


def looks_like_code(text: str) -> bool:
    """True when at least 15% of 8 or more non-blank lines look like code."""
    return _code_lines(_non_blank(text.split("\n")))


def _code_lines(lines: list[str]) -> bool:
    """``looks_like_code`` of the text whose non-blank lines are ``lines``."""
    if len(lines) < 8:
        return False
    return sum(1 for line in lines if _CODE_LINE.match(line)) >= len(lines) * 0.15


def detect_content_kind(text: str, path: str | None = None) -> ContentKind:
    """Classify command output: code, search hits, log output, or anything else as data."""
    if looks_like_code_path(path):
        return "code"
    lines = _non_blank(text.split("\n"))  # split and stripped once, for the code test and the others
    if _code_lines(lines):
        return "code"
    if len(lines) < 4:
        return "data"
    if sum(1 for line in lines if _SEARCH_LINE.match(line)) >= len(lines) * 0.6:
        return "search"
    if sum(1 for line in lines if _LOG_START.match(line) or _LOG_WORD.search(line)) >= len(lines) * 0.3:
        return "log"
    return "data"


# ---------------------------------------------------------------------------------------------- rendering
def _utf16_head(text: str, units: int) -> str:
    """The longest prefix of ``text`` within ``units`` UTF-16 units (never splitting a surrogate pair)."""
    if utf16_len(text) == len(text):
        return text[:units]
    used = 0
    for i, ch in enumerate(text):
        used += 2 if ord(ch) > 0xFFFF else 1
        if used > units:
            return text[:i]
    return text


def _utf16_tail(text: str, units: int) -> str:
    """The longest suffix of ``text`` within ``units`` UTF-16 units."""
    return _utf16_head(text[::-1], units)[::-1] if units > 0 else ""


def cut_long_line(line: str, policy: DigestConfig) -> str:
    """Cut a line longer than ``maxLineChars`` to ``head …[+N chars]… tail``; shorter lines are returned as is."""
    size = utf16_len(line)
    if size <= policy.maxLineChars:
        return line
    head = _utf16_head(line, policy.lineHeadChars)
    tail = _utf16_tail(line, policy.lineTailChars)
    dropped = size - utf16_len(head) - utf16_len(tail)
    if dropped <= 0:
        return line
    return f"{head} …[+{dropped} chars]… {tail}"


def _render(lines: list[str], keep: set[int], policy: DigestConfig) -> str:
    out: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        if i in keep:
            out.append(cut_long_line(lines[i], policy))
            i += 1
            continue
        j = i
        while j < n and j not in keep:
            j += 1
        run = lines[i:j]
        if all(_is_blank(line) for line in run):
            out.append(run[0])
        else:
            chars = sum(utf16_len(line) + 1 for line in run)
            out.append(f"…[+{j - i} lines / {chars} chars]…")
        i = j
    return "\n".join(out)


def _untouched(text: str, kind: ContentKind, reason: str) -> Digest:
    n = text.count("\n") + 1
    return Digest(kind, text, False, n, n, reason)


def _finish(
    text: str, rendered: str, kind: ContentKind, total: int, kept: int, policy: DigestConfig
) -> Digest:
    if utf16_len(rendered) >= utf16_len(text) * policy.maxKeepRatio:
        return _untouched(text, kind, f"the view would keep at least {policy.maxKeepRatio:g} of the text")
    return Digest(kind, rendered, True, total, kept)


# ---------------------------------------------------------------------------------------------- data
def digest_data(text: str, policy: DigestConfig) -> Digest:
    """Head, tail and structured lines (novel keys only after the first few of a run); the rest is marked."""
    if utf16_len(text) < policy.minChars:
        return _untouched(text, "data", f"shorter than digest.minChars ({policy.minChars})")
    lines = text.split("\n")
    n = len(lines)
    head = min(policy.headLines, n)
    keep = set(range(head)) | set(range(max(0, n - policy.tailLines), n))
    structured = [_is_structured(line) for line in lines]
    cap = math.inf if sum(structured) >= n * 0.8 else policy.structuredBlockCap
    seen = {_structured_key(lines[i]) for i in range(head) if structured[i]}
    kept_in_run = 0
    for i in range(n):
        if not structured[i]:
            kept_in_run = 0
            continue
        if i < head:
            continue
        key = _structured_key(lines[i])
        novel = key not in seen
        seen.add(key)
        if kept_in_run < cap and (kept_in_run < policy.structuredBlockMin or novel):
            keep.add(i)
            kept_in_run += 1
    return _finish(text, _render(lines, keep, policy), "data", n, len(keep), policy)


# ---------------------------------------------------------------------------------------------- log
def _dedupe_key(line: str) -> str:
    s = _strip(line).strip()
    m = _KEY_CUT.search(s)
    cut = m.start() if m else -1
    prefix = s[:cut] if cut > 0 else ""
    rest = s[cut:] if cut > 0 else s
    rest = _DIGITS.sub("0", _PATHISH.sub("P", _HEX_RUN.sub("H", rest)))
    return f"{_DIGITS.sub('0', prefix)}|{rest}"


def digest_log(text: str, policy: DigestConfig) -> Digest:
    """Errors first: distinct error, warning and summary lines with context and stack frames, head 3, tail 6."""
    if utf16_len(text) < policy.logMinChars:
        return _untouched(text, "log", f"shorter than digest.logMinChars ({policy.logMinChars})")
    lines = text.split("\n")
    n = len(lines)
    stripped = [_strip(line) for line in lines]
    level = [
        3
        if _ERROR_START.match(s) or _ERROR_WORD.search(s)
        else 2
        if _WARN_LINE.search(s) or _SUMMARY_LINE.match(s)
        else 0
        for s in stripped
    ]
    seen: set[str] = set()
    errors: list[int] = []
    warns: list[int] = []
    for i in range(n):
        if not level[i]:
            continue
        key = _dedupe_key(lines[i])
        if key in seen:
            continue
        seen.add(key)
        (errors if level[i] == 3 else warns).append(i)
    picked = set(errors[: policy.logMaxErrors]) | set(warns[: max(2, policy.logMaxErrors // 2)])
    picked |= {errors[-1]} if errors else set()
    picked |= {warns[-1]} if warns else set()
    keep = set(range(min(3, n))) | set(range(max(0, n - 6), n))
    for i in picked:
        keep.update(range(max(0, i - policy.logContextLines), min(n - 1, i + policy.logContextLines) + 1))
        if level[i] == 3:
            k = i + 1
            while k < n and (_STACK_LINE.match(lines[k]) or not stripped[k].strip()):
                keep.add(k)
                k += 1
    return _finish(text, _render(lines, keep, policy), "log", n, len(keep), policy)


# ---------------------------------------------------------------------------------------------- search
Grouper = Callable[[list[str]], list[tuple[str, bool] | None]]


def _grep_groups(lines: list[str]) -> list[tuple[str, bool] | None]:
    """Per line ``(file, is_match)``: ``path:N:`` hits, or ``N:`` lines under a file heading; others are None."""
    out: list[tuple[str, bool] | None] = []
    heading: str | None = None
    for line in lines:
        m = _GREP_MATCH.match(line)
        if m:
            out.append((m.group("file"), True))
        elif heading is not None and _GREP_BARE.match(line):
            out.append((heading, True))
        else:
            stripped = line.strip()
            if stripped and stripped != "--":
                heading = stripped
            out.append(None)
    return out


def _glob_groups(lines: list[str]) -> list[tuple[str, bool] | None]:
    """Each non-blank line is one matching path, grouped by its directory; ``[bracketed]`` notes are not."""
    out: list[tuple[str, bool] | None] = []
    for line in lines:
        path = line.strip()
        if not path or (path.startswith("[") and path.endswith("]")):
            out.append(None)
        else:
            out.append((path.rsplit("/", 1)[0] if "/" in path else ".", True))
    return out


def digest_search(text: str, policy: DigestConfig, grouper: Grouper = _grep_groups) -> Digest:
    """Very many matches: each file keeps its first and last matches; the middle becomes one exact count line."""
    lines = text.split("\n")
    groups = grouper(lines)
    matches: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        if g is not None and g[1]:
            matches.setdefault(g[0], []).append(i)
    total_matches = sum(len(v) for v in matches.values())
    if total_matches < policy.searchMinMatches or utf16_len(text) < policy.searchMinChars:
        return _untouched(
            text, "search", f"fewer than {policy.searchMinMatches} matches or {policy.searchMinChars} chars"
        )
    head_n = math.ceil(policy.searchMaxPerFile / 2)
    tail_n = policy.searchMaxPerFile - head_n
    markers: dict[int, str] = {}
    dropped: set[int] = set()
    for name, idx in matches.items():
        if len(idx) <= policy.searchMaxPerFile:
            continue
        first, last = idx[head_n - 1], idx[len(idx) - tail_n]
        span = [k for k in range(first + 1, last) if (g := groups[k]) is None or g[0] == name]
        gone = [k for k in span if k not in dropped]
        if not gone:
            continue
        dropped.update(gone)
        markers[gone[0]] = f"[... and {len(idx) - policy.searchMaxPerFile} more matches in {name}]"
    if not dropped:
        return _untouched(text, "search", f"no file has more than {policy.searchMaxPerFile} matches")
    out = [markers.get(i, line) for i, line in enumerate(lines) if i in markers or i not in dropped]
    return _finish(text, "\n".join(out), "search", len(lines), len(lines) - len(dropped), policy)


# ---------------------------------------------------------------------------------------------- entry point
def digest_tool_result(text: str, tool: str, path: str | None, policy: DigestConfig) -> Digest:
    """Route one tool result text by tool name and content, and digest it (or say why not)."""
    if tool in RECALL_TOOLS:
        return _untouched(text, "search", "recalled originals are never condensed")
    if not policy.enabled:
        return _untouched(text, detect_content_kind(text, path), "digest.enabled is false")
    if tool in SEARCH_TOOLS:
        return digest_search(text, policy, _glob_groups if tool == "glob" else _grep_groups)
    if tool in FILE_READ_TOOLS:
        kind: ContentKind = "code" if looks_like_code_path(path) or looks_like_code(text) else "data"
    else:
        kind = detect_content_kind(text, path)
    if kind == "code":
        return _untouched(text, "code", "source code is never condensed")
    if kind == "search":
        return digest_search(text, policy)
    if kind == "log":
        return digest_log(text, policy)
    return digest_data(text, policy)
