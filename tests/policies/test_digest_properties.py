"""Properties of every digest: it pays for itself, keeps lines verbatim and in order, and accounts exactly."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from core.policies.digest import Digest, digest_data, digest_log, digest_search, digest_tool_result
from core.policies.slice_config import DigestConfig
from core.shared.text import utf16_len

RUN_MARKER = re.compile(r"^…\[\+(\d+) lines / (\d+) chars\]…$")
CUT = re.compile(r"^(.*) …\[\+(\d+) chars\]… (.*)$", re.S)
SEARCH_MARKER = re.compile(r"^\[\.\.\. and (\d+) more matches in (.+)\]$")
PREFIX = re.compile(r"^\s*\d+[:|]\s?", re.ASCII)

# No "…" in generated text, so every line holding one is a marker or a cut; "😀" exercises UTF-16 lengths.
ALPHABET = st.sampled_from(list("abcxyz019 :=#[]`-./_é😀") + ["ERROR", "WARN", "key: v", "  at f (a.js:1:2)"])
LINE = st.lists(ALPHABET, min_size=0, max_size=14).map("".join)
FILLER = st.integers(0, 99).map(lambda n: f"plain row {n} of filler text")
MIXED = st.one_of(LINE, FILLER, FILLER)


def not_blank(line: str) -> bool:
    return bool(PREFIX.sub("", line, count=1).strip())


NON_BLANK_LINES = st.lists(MIXED.filter(not_blank), min_size=1, max_size=80)
ANY_LINES = st.lists(MIXED, min_size=1, max_size=80)

POLICIES = st.builds(
    DigestConfig,
    minChars=st.integers(0, 120),
    headLines=st.integers(0, 3),
    tailLines=st.integers(0, 3),
    maxKeepRatio=st.floats(0.3, 1.0),
    structuredBlockCap=st.one_of(st.integers(1, 5), st.just(math.inf)),
    structuredBlockMin=st.integers(0, 3),
    logMinChars=st.integers(0, 120),
    logMaxErrors=st.integers(1, 5),
    logContextLines=st.integers(0, 3),
    maxLineChars=st.one_of(st.integers(4, 40), st.just(math.inf)),
    lineHeadChars=st.integers(0, 12),
    lineTailChars=st.integers(0, 12),
)
DIGESTS: list[Callable[[str, DigestConfig], Digest]] = [digest_data, digest_log]


def check_size(text: str, d: Digest, policy: DigestConfig) -> None:
    if d.digested:
        assert utf16_len(d.text) < utf16_len(text) * policy.maxKeepRatio
    else:
        assert d.text == text and d.kept_lines == d.total_lines
    assert d.total_lines == len(text.split("\n"))


def walk(original: list[str], out: list[str]) -> int:
    """Replay ``out`` over ``original`` (no blank lines), asserting exact accounting; returns the kept count."""
    p = kept = 0
    for line in out:
        run = RUN_MARKER.match(line)
        if run:
            k, chars = int(run.group(1)), int(run.group(2))
            assert k >= 1 and p + k <= len(original)
            assert chars == sum(utf16_len(x) + 1 for x in original[p : p + k])
            p += k
            continue
        source = original[p]
        cut = CUT.match(line) if line != source else None
        if cut:
            head, dropped, tail = cut.group(1), int(cut.group(2)), cut.group(3)
            assert source.startswith(head) and source.endswith(tail)
            assert utf16_len(head) + dropped + utf16_len(tail) == utf16_len(source)
        else:
            assert line == source
        p += 1
        kept += 1
    assert p == len(original)
    return kept


@settings(max_examples=300, deadline=None)
@given(lines=NON_BLANK_LINES, policy=POLICIES, which=st.sampled_from(DIGESTS))
def test_markers_account_exactly_for_what_was_dropped(
    lines: list[str], policy: DigestConfig, which: Callable[[str, DigestConfig], Digest]
) -> None:
    text = "\n".join(lines)
    d = which(text, policy)
    check_size(text, d, policy)
    kept = walk(lines, d.text.split("\n"))
    assert kept == d.kept_lines


@settings(max_examples=300, deadline=None)
@given(
    lines=ANY_LINES, policy=POLICIES, tool=st.sampled_from(["read", "bash", "grep", "glob", "read_section"])
)
def test_kept_lines_are_verbatim_and_in_order(lines: list[str], policy: DigestConfig, tool: str) -> None:
    text = "\n".join(lines)
    d = digest_tool_result(text, tool, "notes.txt", policy)
    check_size(text, d, policy)
    p = 0
    for line in d.text.split("\n"):
        if RUN_MARKER.match(line) or SEARCH_MARKER.match(line):
            continue
        cut = CUT.match(line)
        while p < len(lines) and not (
            lines[p] == line
            or (cut and lines[p].startswith(cut.group(1)) and lines[p].endswith(cut.group(3)))
        ):
            p += 1
        assert p < len(lines), f"{line!r} is not an original line in order"
        p += 1


FILES = st.sampled_from(["a.py", "src/b.ts", "lib/deep/c.go"])


@settings(max_examples=200, deadline=None)
@given(
    hits=st.lists(st.tuples(FILES, st.integers(1, 999), LINE), min_size=1, max_size=120),
    per_file=st.integers(2, 6),
    ratio=st.floats(0.05, 1.0),
)
def test_search_markers_count_the_dropped_matches(
    hits: list[tuple[str, int, str]], per_file: int, ratio: float
) -> None:
    lines = [f"{name}:{n}:{body}" for name, n, body in hits]
    text = "\n".join(lines)
    policy = DigestConfig(searchMinMatches=1, searchMinChars=0, searchMaxPerFile=per_file, maxKeepRatio=ratio)
    d = digest_search(text, policy)
    check_size(text, d, policy)
    out = d.text.split("\n")
    dropped = sum(int(m.group(1)) for line in out if (m := SEARCH_MARKER.match(line)))
    kept = [line for line in out if not SEARCH_MARKER.match(line)]
    assert dropped == d.total_lines - d.kept_lines == len(lines) - len(kept)
    for name in {h[0] for h in hits}:
        total = sum(1 for h in hits if h[0] == name)
        shown = sum(1 for line in kept if line.startswith(f"{name}:"))
        assert shown == (min(total, per_file) if d.digested else total)


# every character class the line-number prefix's pattern tells apart: ASCII spaces, the separators' look-alikes,
# ASCII and other digits, and whitespace that ``\s`` leaves alone in an ASCII pattern (``\x1c``, no-break space)
PREFIX_ALPHABET = st.sampled_from(list(" \t\n\r\f\v\x1c\x1f\x85\xa0\u2003:|;0123456789٣０xé😀"))


@given(st.one_of(st.lists(PREFIX_ALPHABET, max_size=12).map("".join), st.text(max_size=12)))
@settings(max_examples=2000, deadline=None)
def test_strip_is_the_prefix_pattern(line: str) -> None:
    """``_strip`` tries the pattern only on lines that may hold a prefix: it gives what the pattern alone does."""
    from core.policies.digest import _strip

    assert _strip(line) == PREFIX.sub("", line, count=1)


# the log-line pattern as one search (before it was split into a start match and a word search)
OLD_LOG_LINE = re.compile(
    r"^\s*\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|^\s*\[?\d{2}:\d{2}:\d{2}"
    r"|\b(?:ERROR|WARN(?:ING)?|INFO|DEBUG|TRACE|FATAL|PANIC|CRITICAL)\b"
    r"|\b(?:PASSED|FAILED|SKIPPED|passed|failed|error\[E\d+\]|Traceback|Exception|npm (?:ERR|WARN)!|Compiling"
    r"|warning:|error:)\b|^\s+at \S+ \(|^\s+File \"|^(?:ok|not ok) \d|^\s*[✓✗]",
    re.ASCII,
)
LOG_PIECES = st.sampled_from(
    [" ", "\t", "\x1c", "\xa0", "x", "_", "é", "1", "12", "2024-01-02", "T", ":", "[", "(", '"', "-", "✓", "✗",
     "at ", "File ", "ok ", "not ok ", "ERROR", "WARN", "WARNING", "INFO", "PASSED", "failed", "error[E0308]",
     "error:", "warning:", "npm ERR!", "npm WARN!", "Traceback", "Compiling", "Exception", "12:34:56", "2024-01-02 10:11"]
)  # fmt: skip


@given(st.one_of(st.lists(LOG_PIECES, max_size=10).map("".join), st.text(max_size=16)))
@settings(max_examples=3000, deadline=None)
def test_log_line_is_the_one_pattern(line: str) -> None:
    """A start match or a word search finds a log line exactly where the one pattern's search did."""
    from core.policies.digest import _LOG_START, _LOG_WORD

    assert bool(_LOG_START.match(line) or _LOG_WORD.search(line)) == bool(OLD_LOG_LINE.search(line))


# the error-line pattern as one search (before it was split into a start match and a word search)
OLD_ERROR_LINE = re.compile(
    r"\b(?:ERROR|FATAL|PANIC|CRITICAL|FAIL(?:ED|URE|S)?|Traceback|Exception|AssertionError|Segmentation fault"
    r"|panicked at|npm ERR!|error(?:\[E\d+\]| TS\d+)?:)\b|^\s*(?:✗|not ok|E\s{2,})|\berror\b.*\bexit code\b",
    re.I | re.ASCII,
)
ERROR_PIECES = st.sampled_from(
    [" ", "\t", "\x1c", "\xa0", "x", "_", "é", "1", ":", "-", "✗", "not ok", "E", "e", "error", "Error", "ERROR:",
     "error[E0308]:", "error TS2322:", "fail", "FAILS", "failure", "panicked at", "npm ERR!", "exit code", "K"]
)  # fmt: skip


@given(st.one_of(st.lists(ERROR_PIECES, max_size=10).map("".join), st.text(max_size=16)))
@settings(max_examples=3000, deadline=None)
def test_error_line_is_the_one_pattern(line: str) -> None:
    """A start match or a word search finds an error line exactly where the one pattern's search did."""
    from core.policies.digest import _ERROR_START, _ERROR_WORD

    assert bool(_ERROR_START.match(line) or _ERROR_WORD.search(line)) == bool(OLD_ERROR_LINE.search(line))
