"""Synthetic DeepSeek Harness session logs of any size, for the engine and context-economics benchmarks.

The output follows the DSH log format (``shared/spec/dsh-session-format.md`` §1-§5): a version-0 header with
``delegationDepth``, contiguous ``seq``, integer epoch-ms ``time``, compact JSON, packed chunk rows
(``text-chunks``/``reasoning-chunks``/``tool-call-chunks``) next to unpacked ``assistant/chunk`` events, surface
events with ``surfaceOp``/``sourceEventSeqs``, and in zstd mode one checksummed frame for the header followed by
one frame per write batch. The content imitates a coding agent at work: file reads (with ``meta`` line arrays,
which is what makes multi-MB lines), grep hits, test runs, build logs, JSON dumps, edits, steering messages,
runtime-context snapshots, retried model calls, error results, compactions and tool-result prunes.

Everything is drawn from one seeded ``random.Random`` and written as it is produced, so memory stays bounded
and the same (seed, size, profile, flags) always gives the same bytes. ``FACT-<hex>`` tokens are planted in
tool outputs and assistant answers; ``--facts`` lists them with their seq in ``OUT.facts.json``.

Usage: ``python bench/gen_session.py OUT --size 200MB [--zstd] [--seed N] [--profile P] [--facts]``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import string
import sys
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
import zstandard

PROVIDER = "deepseek-official"
MODEL = "deepseek-v4-flash"
BASE_TIME = 1_786_000_000_000
BATCH_WINDOW_MS = 200  # DSH's default write-batch window: chunk rows are packed per batch
RAW_WRITE_BYTES = 1 << 20
MIN_RESULT = 100
MAX_RESULT = 2_000_000
FILE_CACHE_BYTES = 24 << 20
RUNTIME_CONTEXT_PREFIX = (
    "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."
)
RUNTIME_CONTEXT_PLUGIN = "@deepseek-ai/dsh-system-prompt"

_UNITS = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "kb": 10**3,
    "m": 10**6,
    "mb": 10**6,
    "g": 10**9,
    "gb": 10**9,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", re.ASCII)  # not \d: any script's digits
MAX_SIZE = 10**12  # 1 TB: far beyond any benchmark, and a mistyped size fails at once, not after filling a disk


def parse_size(text: str) -> int:
    """Bytes in a size such as ``200MB``, ``1.5GB``, ``512KiB`` or ``4096`` (KB/MB/GB are decimal), in ASCII
    digits, from 1 to ``MAX_SIZE``."""
    m = _SIZE.fullmatch(text)
    unit = m.group(2).lower() if m else ""
    said = repr(text) if len(text) <= 40 else f"{text[:40]!r}… ({len(text):,} characters)"
    if m is None or unit not in _UNITS:
        raise ValueError(
            f"invalid size {said}: use ASCII digits with an optional unit B, KB, MB, GB, KiB, MiB or GiB"
        )
    value = float(m.group(1)) * _UNITS[unit]  # inf for thousands of digits: refused below, not an OverflowError
    if not value <= MAX_SIZE:
        raise ValueError(f"invalid size {said}: at most {MAX_SIZE:,} bytes (1TB)")
    size = int(value)
    if size <= 0:
        raise ValueError(f"invalid size {said}: must be greater than zero")
    return size


# ---------------------------------------------------------------------------------------------------------
# profiles


@dataclass(frozen=True)
class Profile:
    """How a synthetic session behaves: the mix of turn styles and how often the rarer events happen."""

    styles: dict[str, float]  # turn style -> weight: explore, fix, dump, chat
    calls_per_step: tuple[int, int]  # parallel calls in an exploring step
    explore_steps: tuple[int, int]
    huge_prob: float  # chance that an ordinary command output is 0.5-2 MB
    error_prob: float
    fact_prob: float  # chance that a command output or final answer carries FACT tokens
    steer_prob: float  # chance of a steering message between two steps
    prune_prob: float  # chance of a tool-result prune between two steps
    context_limit: int  # surface characters that trigger a compaction
    reasoning_median: int
    files: int
    facts_per_hit: int = 1  # FACT tokens planted in one command output that carries any
    read_meta: bool = True  # read results carry a ``meta.lines`` array (else their text alone)


PROFILES: dict[str, Profile] = {
    "mixed": Profile(
        styles={"explore": 0.35, "fix": 0.3, "dump": 0.05, "chat": 0.3},
        calls_per_step=(1, 4),
        explore_steps=(4, 14),
        huge_prob=0.002,
        error_prob=0.03,
        fact_prob=0.3,
        steer_prob=0.03,
        prune_prob=0.04,
        context_limit=400_000,
        reasoning_median=900,
        files=300,
    ),
    "read-heavy": Profile(
        styles={"explore": 0.85, "fix": 0.05, "chat": 0.1},
        calls_per_step=(2, 6),
        explore_steps=(8, 24),
        huge_prob=0.001,
        error_prob=0.02,
        fact_prob=0.25,
        steer_prob=0.02,
        prune_prob=0.06,
        context_limit=400_000,
        reasoning_median=700,
        files=160,
    ),
    "test-fix": Profile(
        styles={"fix": 0.85, "explore": 0.1, "chat": 0.05},
        calls_per_step=(1, 3),
        explore_steps=(3, 8),
        huge_prob=0.001,
        error_prob=0.05,
        fact_prob=0.5,
        steer_prob=0.03,
        prune_prob=0.05,
        context_limit=400_000,
        reasoning_median=1200,
        files=120,
    ),
    "huge-output": Profile(
        styles={"dump": 0.7, "explore": 0.2, "chat": 0.1},
        calls_per_step=(1, 3),
        explore_steps=(3, 8),
        huge_prob=0.01,
        error_prob=0.03,
        fact_prob=0.8,
        facts_per_hit=16,
        steer_prob=0.02,
        prune_prob=0.1,
        context_limit=600_000,
        reasoning_median=600,
        files=200,
    ),
    "short-turns": Profile(
        styles={"chat": 0.9, "explore": 0.05, "fix": 0.05},
        calls_per_step=(1, 2),
        explore_steps=(2, 5),
        huge_prob=0.0,
        error_prob=0.03,
        fact_prob=0.5,
        steer_prob=0.06,
        prune_prob=0.02,
        context_limit=300_000,
        reasoning_median=350,
        files=80,
    ),
    # shaped like real DSH output: streams packed, plain-text results (no meta.lines), nothing ever cut
    "dsh-plain": Profile(
        styles={"explore": 0.45, "fix": 0.3, "chat": 0.25},
        calls_per_step=(1, 3),
        explore_steps=(3, 10),
        huge_prob=0.002,
        error_prob=0.03,
        fact_prob=0.3,
        steer_prob=0.03,
        prune_prob=0.0,
        context_limit=1 << 62,
        reasoning_median=700,
        files=200,
        read_meta=False,
    ),
}


# ---------------------------------------------------------------------------------------------------------
# text


_WORD_TEXT = (
    "the a an of to in for on with by from at as is are was be been this that these those it its we our "
    "they their then than when while if else because so but and or not no only also just still already "
    "function method class module package import export call return value values result results error "
    "errors exception handler request response client server cache index offset buffer stream queue "
    "worker thread process task job batch retry timeout config option flag default path file files line "
    "lines test tests case fixture assert expected actual failure passes fails build compile run runs "
    "check verify parse decode encode schema field record entry key keys map list array object string "
    "number count size length limit range start end first last next previous current new old update "
    "change changes fix bug issue patch diff commit branch merge review logic state status event events "
    "message messages session token tokens context window model step turn tool output input log logs "
    "look looks seems likely probably maybe need needs should could would will can must might read "
    "write open close load save store fetch send receive handle handles wrap wraps inside outside before "
    "after between across into over under every each some any all both either neither same different "
    "simple small large huge slow fast safe unsafe missing extra wrong right correct broken stale fresh "
    "naïve café déjà-vu"
)
_WORDS = _WORD_TEXT.split()
_SYLLABLES = (
    "ba be bi bo cor da de di fa fe fi ga go ka ke ki lo lu ma me mi na ne no pa pe po ra re ri sa se si"
)
_SYLLABLE_LIST = (_SYLLABLES + " ta te ti to va ve vi za ze").split()
_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "DEBUG", "WARN", "ERROR")
_STATUSES = ("active", "pending", "archived", "failed", "queued", "done")
_ALNUM = string.ascii_letters + string.digits
_CODE_LINES = (
    "def {a}({b}, {c}=None):",
    "    {a} = {b}.{c}({d})",
    "    if {a} is None:",
    "        return {b}",
    "    for {a} in {b}:",
    "        {a}.append({b}[{n}])",
    '        raise {C}Error(f"{a} {{{b}!r}} is not valid")',
    "class {C}({D}):",
    '    """{s}"""',
    "    # {s}",
    "",
    "",
    "import {a}",
    "from {a}.{b} import {C}",
    '    return {{"{a}": {b}, "{c}": {n}}}',
    "        self.{a} = {b}",
    "    assert {a} == {n}, {b}",
    "    {a}: {C} | None = None",
    "    with open({a}) as {b}:",
    "        {a} += len({b})",
    "    except {C}Error as exc:",
    '        log.warning("{s} %s", exc)',
    "    @property",
    "    def {a}(self) -> {C}:",
    "        return self._{a}.get({b}, {n})",
    "    # 缓存 {a}: {s}",
)
_LOG_MESSAGES = (
    "request {a} completed in {n}ms status=200",
    "retrying {a} after {n}ms (attempt {m})",
    "cache miss for key={a}:{b}",
    "worker {m} picked job {a} from {b}",
    "flushed {n} records to {a}",
    "connection to {a}:{n} reset by peer",
    "slow query on {a}.{b}: {n}ms",
    "config {a}.{b} = {n}",
    "compiled {a}/{b}.ts in {n}ms",
    "warning: unused variable `{a}` in {b}",
)


def _lognormal(rng: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    return max(lo, min(hi, int(rng.lognormvariate(math.log(median), sigma))))


class _Text:
    """Realistic-looking text of a requested size: prose, code, logs, grep hits, JSON, test output."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.idents = sorted({self._ident() for _ in range(600)})
        self.classes = sorted({"".join(w.capitalize() for w in self._ident().split("_")) for _ in range(120)})
        self.prose_pool = _WORDS * 4 + [f"`{i}`" for i in self.idents[:80]]

    def _ident(self) -> str:
        parts = ["".join(self.rng.choices(_SYLLABLE_LIST, k=self.rng.randint(1, 3))) for _ in range(2)]
        return "_".join(parts[: self.rng.randint(1, 2)])

    def ident(self) -> str:
        """One identifier."""
        return self.rng.choice(self.idents)

    def prose(self, n: int) -> str:
        """About ``n`` characters of sentences, split into paragraphs."""
        rng = self.rng
        words = rng.choices(self.prose_pool, k=max(2, n // 6))
        sentences: list[str] = []
        i = 0
        while i < len(words):
            k = rng.randint(5, 18)
            sentences.append(" ".join(words[i : i + k]).capitalize() + rng.choice(".....:?"))
            i += k
        paragraphs = [" ".join(sentences[j : j + 5]) for j in range(0, len(sentences), 5)]
        return "\n\n".join(paragraphs)

    def _fill(self, make: Callable[[int], list[str]], n: int, avg: int) -> list[str]:
        """Lines from ``make(count)`` until they hold about ``n`` bytes."""
        lines: list[str] = []
        total = 0
        while total < n:
            batch = make(max(4, (n - total) // avg + 1))
            for line in batch:
                lines.append(line)
                total += len(line) + 1
                if total >= n:
                    break
        return lines

    def code(self, n: int) -> list[str]:
        """Lines of a Python-looking source file."""
        rng = self.rng

        def make(k: int) -> list[str]:
            names = rng.choices(self.idents, k=4 * k)
            kinds = rng.choices(self.classes, k=2 * k)
            nums = rng.choices(range(1000), k=k)
            templates = rng.choices(_CODE_LINES, k=k)
            short = self.prose(40)
            return [
                t.format(
                    a=names[4 * j],
                    b=names[4 * j + 1],
                    c=names[4 * j + 2],
                    d=names[4 * j + 3],
                    C=kinds[2 * j],
                    D=kinds[2 * j + 1],
                    n=nums[j],
                    s=short,
                )
                for j, t in enumerate(templates)
            ]

        return self._fill(make, n, 30)

    def log(self, n: int) -> list[str]:
        """Timestamped service log lines."""
        rng = self.rng
        clock = [BASE_TIME // 1000 + rng.randrange(10**6)]

        def make(k: int) -> list[str]:
            names = rng.choices(self.idents, k=2 * k)
            msgs = rng.choices(_LOG_MESSAGES, k=k)
            levels = rng.choices(_LEVELS, k=k)
            out = []
            for j, msg in enumerate(msgs):
                clock[0] += rng.randint(0, 3)
                ms = rng.randrange(1000)
                text = msg.format(a=names[2 * j], b=names[2 * j + 1], n=rng.randrange(5000), m=j % 8)
                out.append(
                    f"2026-08-{(clock[0] // 86400) % 28 + 1:02d}T{_hms(clock[0])}.{ms:03d}Z "
                    f"{levels[j]:<5} {names[2 * j + 1]}[{j % 16}] {text}"
                )
            return out

        return self._fill(make, n, 90)

    def grep(self, paths: list[str], n: int) -> list[str]:
        """``path:line:text`` hits."""
        rng = self.rng

        def make(k: int) -> list[str]:
            code = self.code(k * 30)[:k]
            hits = rng.choices(paths, k=len(code))
            return [f"{p}:{rng.randint(1, 900)}:{c}" for p, c in zip(hits, code, strict=True) if c]

        return self._fill(make, n, 60)

    def json_lines(self, n: int) -> list[str]:
        """An indented JSON array of records, as an API or ``jq`` would print it."""
        rng = self.rng
        count = max(1, n // 230)
        records = [
            {
                "id": 10_000 + j,
                "name": rng.choice(self.idents),
                "status": rng.choice(_STATUSES),
                "owner": rng.choice(self.idents),
                "tags": rng.sample(self.idents, 2),
                "score": round(rng.random() * 100, 3),
                "updatedAt": BASE_TIME + rng.randrange(10**9),
            }
            for j in range(count)
        ]
        return orjson.dumps(records, option=orjson.OPT_INDENT_2).decode().split("\n")

    def markdown(self, n: int) -> list[str]:
        """A documentation page."""
        lines: list[str] = []
        total = 0
        while total < n:
            block = [f"## {self.ident().replace('_', ' ').title()}", ""]
            block += _wrap(self.prose(self.rng.randint(200, 900)), 88) + [""]
            lines += block
            total += sum(len(b) + 1 for b in block)
        return lines

    def pytest(self, paths: list[str], failures: int, n: int) -> list[str]:
        """Output of a pytest run with ``failures`` failing tests, about ``n`` bytes."""
        rng = self.rng
        test_file = rng.choice(paths)
        passed = rng.randint(20, 400)
        out = [
            "============================= test session starts ==============================",
            "platform linux -- Python 3.11.9, pytest-8.3.2, pluggy-1.5.0",
            f"rootdir: /home/dev/{self.ident()}",
            f"collected {passed + failures} items",
            "",
        ]
        dots = "".join(rng.choices(".....s", k=passed)) + "F" * failures
        out += [f"{test_file} {dots[i : i + 70]}" for i in range(0, len(dots), 70)]
        if failures:
            out += ["", "=================================== FAILURES ==================================="]
            budget = max(0, n - sum(len(line) + 1 for line in out)) // failures
            for _ in range(failures):
                name = f"test_{self.ident()}"
                out += [f"_____________________________ {name} _____________________________", ""]
                out += ["    " + line for line in self.code(min(budget // 2, 3000))]
                out += [
                    f"E       AssertionError: expected {rng.randrange(99)} but got {rng.randrange(99)}",
                    "",
                ]
                if budget > 4000:
                    out += [
                        "------------------------------ Captured log call -------------------------------"
                    ]
                    out += self.log(budget // 2)
        summary = f"{failures} failed, {passed} passed" if failures else f"{passed} passed"
        out.append(f"======================= {summary} in {rng.random() * 30:.2f}s =======================")
        return out

    def diff(self, path: str, old: list[str], new: list[str], at: int) -> list[str]:
        """A unified diff replacing ``old`` with ``new`` at line ``at``."""
        return (
            [f"--- a/{path}", f"+++ b/{path}", f"@@ -{at},{len(old)} +{at},{len(new)} @@"]
            + ["-" + line for line in old]
            + ["+" + line for line in new]
        )


def _hms(t: int) -> str:
    return f"{(t // 3600) % 24:02d}:{(t // 60) % 60:02d}:{t % 60:02d}"


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for para in text.split("\n\n"):
        line = ""
        for word in para.split(" "):
            if line and len(line) + len(word) + 1 > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines += [line, ""]
    return lines


# ---------------------------------------------------------------------------------------------------------
# the simulated repository


class _Repo:
    """The files the agent works on: stable content per (path, version), regenerated on demand."""

    def __init__(self, rng: random.Random, text: _Text, seed: int, count: int) -> None:
        self.text = text
        self.seed = seed
        dirs = ["src/" + text.ident() for _ in range(12)] + ["tests", "docs", "config", "logs", "scripts"]
        exts = {"tests": ".py", "docs": ".md", "config": ".json", "logs": ".log", "scripts": ".sh"}
        paths: dict[str, tuple[int, int]] = {}
        for _ in range(count):
            d = rng.choice(dirs)
            ext = exts.get(d, rng.choice((".py", ".py", ".py", ".ts")))
            name = ("test_" if d == "tests" else "") + text.ident() + ext
            big = d in ("logs", "config") and rng.random() < 0.3
            size = rng.randint(500_000, MAX_RESULT) if big else _lognormal(rng, 5000, 1.0, 200, 300_000)
            paths[f"{d}/{name}"] = (size, 0)
        self.files = paths
        self.paths = list(paths)
        self.observed: set[str] = set()
        self._cache: OrderedDict[tuple[str, int], tuple[list[str], int]] = OrderedDict()
        self._cached_bytes = 0

    def lines(self, path: str) -> list[str]:
        """Current content of ``path`` as lines."""
        size, version = self.files[path]
        key = (path, version)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached[0]
        saved = self.text.rng
        self.text.rng = random.Random(f"{self.seed}:{path}:{version}")
        try:
            ext = path.rsplit(".", 1)[-1]
            make = {"md": self.text.markdown, "json": self.text.json_lines, "log": self.text.log}
            lines = make.get(ext, self.text.code)(size)
        finally:
            self.text.rng = saved
        self._cache[key] = (lines, size)
        self._cached_bytes += size
        while self._cached_bytes > FILE_CACHE_BYTES and len(self._cache) > 1:
            _, (_, old_size) = self._cache.popitem(last=False)
            self._cached_bytes -= old_size
        return lines

    def bump(self, path: str, delta: int) -> None:
        """Record an edit of ``path`` (its content changes from now on)."""
        size, version = self.files[path]
        self.files[path] = (max(200, size + delta), version + 1)


# ---------------------------------------------------------------------------------------------------------
# the output file


class _Sink:
    """Writes logical lines as raw JSONL or as one zstd frame per batch; keeps size statistics."""

    def __init__(self, f: IO[bytes], zstd: bool) -> None:
        self._f = f
        self._cctx = zstandard.ZstdCompressor(write_checksum=True) if zstd else None
        self._batch: list[bytes] = []
        self._pending = 0
        self.logical_bytes = 0
        self.lines = 0
        self.max_line = 0
        self.frames = 0
        self.big_lines = 0  # lines of 1 MB or more

    def line(self, obj: dict[str, Any]) -> None:
        data = orjson.dumps(obj) + b"\n"
        n = len(data)
        self._batch.append(data)
        self._pending += n
        self.logical_bytes += n
        self.lines += 1
        if n > self.max_line:
            self.max_line = n
        if n >= 1_000_000:
            self.big_lines += 1

    def flush(self) -> None:
        """End the current write batch (a zstd frame; raw lines are buffered up to 1 MB)."""
        if not self._batch:
            return
        if self._cctx is not None:
            self._f.write(self._cctx.compress(b"".join(self._batch)))
            self.frames += 1
            self._batch.clear()
            self._pending = 0
        elif self._pending >= RAW_WRITE_BYTES:
            self._drain()

    def close(self) -> None:
        if self._cctx is not None:
            self.flush()
        else:
            self._drain()

    def _drain(self) -> None:
        self._f.write(b"".join(self._batch))
        self._batch.clear()
        self._pending = 0


# ---------------------------------------------------------------------------------------------------------
# the session


@dataclass
class _Result:
    text: str
    is_error: bool = False
    error: dict[str, str] | None = None
    meta: dict[str, Any] | None = None
    facts: tuple[str, ...] = ()


@dataclass
class _Call:
    name: str
    args: dict[str, Any]
    result: _Result
    call_id: str = ""
    arguments: str = ""


@dataclass
class _Node:
    """A surface node the generator may later compact or prune."""

    chars: int
    kind: str  # user, assistant, tool
    tool: tuple[int, int, str, str, bool] | None = None  # (turn, step, message id, call id, isError)


@dataclass
class GenStats:
    """What ``generate`` wrote."""

    path: str
    profile: str
    seed: int
    zstd: bool
    explicit_envelope: bool
    events: int = 0
    lines: int = 0
    logical_bytes: int = 0
    file_bytes: int = 0
    frames: int = 0
    max_line: int = 0
    big_lines: int = 0
    turns: int = 0
    tool_results: int = 0
    error_results: int = 0
    packed_rows: int = 0
    unpacked_chunks: int = 0
    compactions: int = 0
    prunes: int = 0
    facts: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """All counters, with the fact list reduced to its length."""
        out = asdict(self)
        out["facts"] = len(self.facts)
        return out


_PIECE = re.compile(r"\s*[^\s]{1,6}|\s+")
_DT_POOL = [0] * 40 + [1] * 35 + [2, 3, 4, 5, 2] + list(range(24, 32)) * 2 + [-1] + [28] * 3


class _Session:
    """Drives one synthetic session from turn to turn until the byte budget is spent."""

    def __init__(self, sink: _Sink, stats: GenStats, profile: Profile, target: int) -> None:
        self.rng = rng = random.Random(stats.seed)
        # Facts draw from their own stream, so planting more of them leaves the session's shape as it was.
        self.fact_rng = random.Random(f"facts-{stats.seed}")
        self.sink = sink
        self.stats = stats
        self.profile = profile
        self.target = target
        self.explicit = stats.explicit_envelope
        self.text = _Text(rng)
        self.repo = _Repo(rng, self.text, stats.seed, profile.files)
        self.now = BASE_TIME + rng.randrange(10**9)
        self.session_id = self.uuid()
        self.seq = 0
        self.turn = 0
        self.surface: list[int] = []
        self.nodes: dict[int, _Node] = {}
        self.surface_chars = 0
        self.runtime_seq: int | None = None
        self.runtime_pending = True
        self.sandbox = "workspace-write"
        self.effort = "high"
        self.header_written = False
        self.prev_context = 0
        self.system_prompt = self._system_prompt()

    # primitives ------------------------------------------------------------------------------------------
    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def tick(self, lo: int, hi: int) -> None:
        self.now += self.rng.randint(lo, hi)

    def emit(self, etype: str, data: dict[str, Any], op: Any = None, sources: list[int] | None = None) -> int:
        """Write one event; return its seq."""
        seq = self.seq
        obj: dict[str, Any] = {"type": etype}
        if self.explicit:
            obj["seq"] = seq
            obj["time"] = self.now
        obj["data"] = data
        if sources is not None:
            obj["sourceEventSeqs"] = sources
        if op is not None:
            obj["surfaceOp"] = op
        self.sink.line(obj)
        self.seq += 1
        self.now += self.rng.randint(0, 2)
        return seq

    def over_budget(self) -> bool:
        return self.sink.logical_bytes >= self.target

    def add_node(self, seq: int, node: _Node) -> None:
        self.surface.append(seq)
        self.nodes[seq] = node
        self.surface_chars += node.chars

    def user_message(self, text: str, source: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "id": self.uuid(),
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": source or {"kind": "user"},
        }

    def append_user(self, message: dict[str, Any]) -> int:
        seq = self.emit("user/message", message, op="append")
        self.add_node(seq, _Node(sum(len(b.get("text", "")) for b in message["content"]), "user"))
        return seq

    def fact(self) -> str:
        return f"FACT-{self.fact_rng.getrandbits(48):012x}"

    def record_fact(self, token: str, seq: int, etype: str, tool: str | None) -> None:
        entry: dict[str, Any] = {"fact": token, "seq": seq, "type": etype, "turn": self.turn}
        if tool:
            entry["tool"] = tool
        self.stats.facts.append(entry)

    # header ----------------------------------------------------------------------------------------------
    def _system_prompt(self) -> str:
        guidance = [
            "You are a coding agent working inside the user's repository through the tools listed below.",
            "Look at files with the read tool; it numbers lines and takes offset and limit for long files.",
            "Prefer edit for small changes and write for new files; read a file before you change it.",
            "Every bash result ends with an [exit code: N] marker: check it before you continue.",
            "Keep the final answer short and concrete, and say what you verified.",
        ]
        notes = self.text.prose(self.rng.randint(2500, 4500))
        return "\n\n".join(guidance) + "\n\nProject notes:\n\n" + notes

    def tools_schema(self) -> list[dict[str, Any]]:
        def obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
            return {"type": "object", "properties": props, "required": required}

        s, i = {"type": "string"}, {"type": "integer"}
        todo = obj(
            {"content": s, "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}},
            ["content", "status"],
        )
        return [
            {
                "name": "read",
                "description": "Show a text file with line numbers.",
                "parameters": obj({"path": s, "offset": i, "limit": i}, ["path"]),
            },
            {
                "name": "grep",
                "description": "Search file contents with a regular expression.",
                "parameters": obj({"pattern": s, "path": s}, ["pattern"]),
            },
            {
                "name": "bash",
                "description": "Run a shell command in the workspace.",
                "parameters": obj({"command": s, "description": s}, ["command"]),
            },
            {
                "name": "edit",
                "description": "Replace one exact snippet of a file with another.",
                "parameters": obj(
                    {"path": s, "old_string": s, "new_string": s}, ["path", "old_string", "new_string"]
                ),
            },
            {
                "name": "write",
                "description": "Create or overwrite a file.",
                "parameters": obj({"path": s, "content": s}, ["path", "content"]),
            },
            {
                "name": "todo_write",
                "description": "Replace the task list.",
                "parameters": obj({"todos": {"type": "array", "items": todo}}, ["todos"]),
            },
        ]

    def request_header(self, reason: str) -> None:
        config: dict[str, Any] = {"provider": PROVIDER, "model": MODEL, "reasoningEffort": self.effort}
        header = {"config": config, "system": self.system_prompt, "tools": self.tools_schema()}
        self.emit("request/header", {"header": header, "reason": reason})

    def runtime_context(self) -> None:
        sections = [
            {
                "name": "sandbox:policy",
                "text": f"File sandbox: {self.sandbox}; writes outside the workspace are refused.",
            },
            {"name": "approval:policy", "text": "Commands that need approval are declined without asking."},
        ]
        text = RUNTIME_CONTEXT_PREFIX + "\n\n" + "\n\n".join(s["text"] for s in sections)
        source = {
            "kind": "plugin",
            "plugin": RUNTIME_CONTEXT_PLUGIN,
            "form": "snapshot",
            "sections": sections,
        }
        self.runtime_seq = self.append_user(self.user_message(text, source))
        self.runtime_pending = False

    # turns -----------------------------------------------------------------------------------------------
    def run(self, hosted: bool = False) -> None:
        header = {
            "type": "session",
            "version": 0,
            "id": self.session_id,
            "createdAt": self.now,
            "cwd": f"/home/dev/{self.text.ident()}",
            "delegationDepth": 0,
        }
        self.sink.line(header)
        if hosted:
            host: dict[str, Any] = {"type": "tapedeck/host"}
            if self.explicit:
                host.update(seq=self.seq, time=self.now)
            host.update(data={"pid": 0, "version": "bench", "provider": "scripted", "model": "generated"},
                        ignorable=True)  # fmt: skip
            self.sink.line(host)
            self.seq += 1
        self.sink.flush()
        styles = list(self.profile.styles)
        weights = list(self.profile.styles.values())
        while True:
            self.play_turn(self.rng.choices(styles, weights)[0])
            if self.over_budget():
                break
        self.stats.turns = self.turn

    def prompt(self, style: str) -> str:
        t, p = self.text, self.rng.choice(self.repo.paths)
        options = {
            "explore": [
                f"How does `{t.ident()}` end up calling `{t.ident()}`? Walk me through {p}.",
                f"Map out where {p} gets its configuration and who else reads it.",
                f"Find every place that touches `{t.ident()}` and summarise the data flow.",
            ],
            "fix": [
                f"The tests in {p} fail since the last merge. Find out why and fix it.",
                f"`{t.ident()}` raises on empty input; make it return an empty result and add a test.",
                f"CI is red on {p}. Get it green without skipping tests.",
            ],
            "dump": [
                f"Dump the full build log and tell me what slowed it down. Start with {p}.",
                f"Show me everything in {p} and point out anything unusual.",
            ],
            "chat": [
                f"What does `{t.ident()}` return when the cache is cold?",
                f"Is {p} still used?",
                "Thanks. Now rename it consistently.",
                f"Why is `{t.ident()}` passed by keyword here?",
                "ok, go on",
            ],
        }
        text = self.rng.choice(options[style])
        if self.rng.random() < 0.05:
            text += (
                "\n\nHere is what I see:\n\n```\n" + "\n".join(t.log(self.rng.randint(2000, 20000))) + "\n```"
            )
        return text

    def play_turn(self, style: str) -> None:
        self.turn += 1
        turn = self.turn
        prompt = self.user_message(self.prompt(style))
        self.emit("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [prompt]})
        self.sink.flush()
        self.tick(500, 60_000)
        self.emit("turn/start", {"turn": turn})
        self.emit(
            "agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []}
        )
        pending = [prompt]
        step = 0
        aborted = style != "chat" and self.rng.random() < 0.02
        for calls in self.plan(style):
            step += 1
            self.play_step(turn, step, calls, pending)
            pending = []
            if self.over_budget():
                break
            pending = self.between_steps(turn)
        if aborted:
            self.emit("turn/end", {"turn": turn, "reason": {"kind": "aborted", "reason": {"kind": "user"}}})
        else:
            self.play_step(turn, step + 1, [], pending)
            self.emit("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        self.sink.flush()

    def between_steps(self, turn: int) -> list[dict[str, Any]]:
        """Log-only and surface events that happen between two steps; return steering messages to append."""
        p, rng = self.profile, self.rng
        if self.surface_chars > p.context_limit:
            self.compact(turn)
        elif rng.random() < p.prune_prob:
            self.prune()
        if rng.random() < 0.01:
            self.sandbox = "read-only" if self.sandbox == "workspace-write" else "workspace-write"
            self.runtime_pending = True
        if rng.random() >= p.steer_prob:
            return []
        message = self.user_message(
            rng.choice(
                [
                    "Also check the tests while you are there.",
                    "Skip the docs, focus on the code path.",
                    f"Don't touch {rng.choice(self.repo.paths)}.",
                ]
            )
        )
        self.emit("agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": [message]})
        self.sink.flush()
        claim: dict[str, Any] = {"target": "next-step", "start": 0, "removedCount": 1, "inserted": []}
        if rng.random() < 0.15:
            claim["outcome"] = "canceled"
            self.emit("agent/inbox/spliced", claim)
            return []
        self.emit("agent/inbox/spliced", claim)
        return [message]

    # steps -----------------------------------------------------------------------------------------------
    def play_step(self, turn: int, step: int, calls: list[_Call], pending: list[dict[str, Any]]) -> None:
        self.emit("step/start", {"turn": turn, "step": step})
        for message in pending:
            seq = self.append_user(message)
            if turn == 1 and step == 1:
                text = message["content"][0]["text"]
                title = text[:24].rsplit(" ", 1)[0] if len(text) > 24 else text
                self.emit(
                    "session/title", {"title": title, "messageSeqs": [seq], "source": {"kind": "fallback"}}
                )
        if self.runtime_pending:
            self.runtime_context()
        if not self.header_written:
            self.request_header("initial")
            self.emit("request/context", {"provider": PROVIDER, "model": MODEL, "contextWindow": 131072})
            self.header_written = True
        elif self.rng.random() < 0.003:
            self.effort = "max" if self.effort == "high" else "high"
            self.request_header("change")
        self.sink.flush()
        if self.rng.random() < 0.01:
            self.failed_attempt(turn, step)
        self.assistant(turn, step, calls)
        grouped = len(calls) > 1 and self.rng.random() < 0.5
        if grouped:
            call_seqs = [self.tool_call(turn, step, c) for c in calls]
            for c, seq in zip(calls, call_seqs, strict=True):
                self.tool_result(turn, step, c, seq)
        else:
            for c in calls:
                self.tool_result(turn, step, c, self.tool_call(turn, step, c))
        self.emit("step/end", {"turn": turn, "step": step})

    def failed_attempt(self, turn: int, step: int) -> None:
        """A streamed attempt that dies with a provider error, then the retry bookkeeping."""
        self.chunk(turn, step, {"type": "block-start", "index": 0, "blockType": "reasoning"})
        self.stream(turn, step, 0, "reasoning-delta", self.text.prose(self.rng.randint(30, 400)))
        failure = {
            "message": "upstream provider returned 503 Service Unavailable",
            "code": "PROVIDER_UNAVAILABLE",
        }
        self.chunk(turn, step, {"type": "finish", "reason": {"kind": "error", "failure": failure}})
        retry_id = self.uuid()
        self.emit(
            "llm/retry",
            {
                "retryId": retry_id,
                "turn": turn,
                "step": step,
                "provider": PROVIDER,
                "mode": "stream",
                "policyKey": "default",
                "retry": 1,
                "maxRetries": 3,
                "delayMs": 1000,
                "failure": failure,
            },
        )
        self.sink.flush()
        self.tick(1000, 1200)
        self.emit("llm/retry-started", {"retryId": retry_id, "turn": turn, "step": step, "retry": 1})

    def chunk(self, turn: int, step: int, chunk: dict[str, Any]) -> None:
        self.emit("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk})

    def stream(
        self, turn: int, step: int, index: int, kind: str, text: str, call: _Call | None = None
    ) -> None:
        """Deltas of one block, packed into rows per write batch (runs under 3, and a few others, stay unpacked)."""
        pieces = _PIECE.findall(text) or [text]
        rng = self.rng
        dts = rng.choices(_DT_POOL, k=len(pieces))
        n, i = len(pieces), 0
        while i < n:
            j, acc = i + 1, 0
            while j < n and acc + dts[j] <= BATCH_WINDOW_MS:
                acc += dts[j]
                j += 1
            self.now += dts[i]
            if j - i >= 3 and rng.random() > 0.03:
                self.row(turn, step, index, kind, pieces[i:j], dts[i + 1 : j], call)
            else:
                for k in range(i, j):
                    if k > i:
                        self.now += dts[k]
                    delta: dict[str, Any] = {"type": kind, "index": index}
                    if call is not None:
                        delta.update(id=call.call_id, name=call.name, argumentsDelta=pieces[k])
                    else:
                        delta["text"] = pieces[k]
                    self.chunk(turn, step, delta)
                    self.stats.unpacked_chunks += 1
            self.sink.flush()
            i = j

    def row(
        self,
        turn: int,
        step: int,
        index: int,
        kind: str,
        pieces: list[str],
        dt: list[int],
        call: _Call | None,
    ) -> None:
        tag = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks"}.get(
            kind, "tool-call-chunks"
        )
        data: dict[str, Any] = {"turn": turn, "step": step, "index": index}
        if call is not None:
            data["id"] = call.call_id
            data["name"] = call.name
        data["dt"] = dt
        data["args" if call is not None else "texts"] = pieces
        obj: dict[str, Any] = {"type": tag}
        if self.explicit:
            obj["seq0"] = self.seq
            obj["time0"] = self.now
        obj["data"] = data
        self.sink.line(obj)
        self.seq += len(pieces)
        self.now += sum(dt)
        self.stats.packed_rows += 1

    def usage(self, output_chars: int, reasoning_chars: int) -> dict[str, int]:
        context = (len(self.system_prompt) + self.surface_chars) // 4 + 900
        cached = min(self.prev_context, context) // 128 * 128
        self.prev_context = context
        return {
            "inputTokens": context - cached,
            "outputTokens": max(1, output_chars // 4),
            "cacheReadTokens": cached,
            "reasoningTokens": reasoning_chars // 4,
        }

    def assistant(self, turn: int, step: int, calls: list[_Call]) -> None:
        rng, p = self.rng, self.profile
        self.tick(300, 3000)  # time to first token
        first = self.seq
        reasoning = self.text.prose(_lognormal(rng, p.reasoning_median, 0.9, 40, 30_000))
        blocks: list[dict[str, Any]] = [{"type": "reasoning", "text": reasoning}]
        fact = None
        if not calls:
            answer = self.answer()
            if self.fact_rng.random() < p.fact_prob:
                fact = self.fact()
                answer += f"\n\nFor the record, the value we settled on is {fact}."
            blocks.append({"type": "text", "text": answer})
        elif rng.random() < 0.3:
            blocks.append({"type": "text", "text": self.text.prose(rng.randint(40, 300))})
        for n, c in enumerate(calls):
            c.call_id = f"call_{n:02d}_{''.join(rng.choices(_ALNUM, k=24))}"
            c.arguments = json.dumps(c.args)
            blocks.append({"type": "tool-call", "id": c.call_id, "name": c.name, "arguments": c.arguments})
        for index, block in enumerate(blocks):
            btype = block["type"]
            self.chunk(turn, step, {"type": "block-start", "index": index, "blockType": btype})
            if btype == "tool-call":
                call = calls[index - (len(blocks) - len(calls))]
                self.stream(turn, step, index, "tool-call-delta", call.arguments, call)
            else:
                self.stream(turn, step, index, f"{btype}-delta", block["text"])
        for index, block in enumerate(blocks):
            self.chunk(turn, step, {"type": "block-end", "index": index, "block": block})
        out_chars = sum(len(b.get("text", b.get("arguments", ""))) for b in blocks)
        usage = self.usage(out_chars, len(reasoning))
        self.chunk(turn, step, {"type": "usage", "usage": usage})
        self.chunk(turn, step, {"type": "finish", "reason": {"kind": "tool-calls" if calls else "stop"}})
        message = {
            "id": self.uuid(),
            "role": "assistant",
            "content": blocks,
            "source": {"kind": "model", "provider": PROVIDER, "model": MODEL},
        }
        sources = list(range(first, self.seq))
        seq = self.emit(
            "assistant/message",
            {"turn": turn, "step": step, "message": message, "usage": usage},
            op="append",
            sources=sources,
        )
        self.add_node(seq, _Node(out_chars, "assistant"))
        if fact:
            self.record_fact(fact, seq, "assistant/message", None)
        self.sink.flush()

    def answer(self) -> str:
        rng = self.rng
        lines = [self.text.prose(rng.randint(80, 600)), ""]
        for _ in range(rng.randint(0, 5)):
            lines.append(f"- `{rng.choice(self.repo.paths)}`: {self.text.prose(rng.randint(30, 160))}")
        return "\n".join(lines).strip()

    def tool_call(self, turn: int, step: int, c: _Call) -> int:
        seq = self.emit(
            "tool/call",
            {"turn": turn, "step": step, "callId": c.call_id, "name": c.name, "arguments": c.arguments},
        )
        if c.name == "todo_write":
            self.emit("todo/write", {"todos": c.args["todos"]})
        self.sink.flush()
        return seq

    def tool_result(self, turn: int, step: int, c: _Call, call_seq: int) -> None:
        r = c.result
        self.tick(20, 4000 if c.name != "bash" else 60_000)
        message = {
            "id": self.uuid(),
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": c.call_id,
                    "content": [{"type": "text", "text": r.text}],
                    "isError": r.is_error,
                }
            ],
            "source": {"kind": "tool", "callId": c.call_id},
        }
        data: dict[str, Any] = {"turn": turn, "step": step, "message": message}
        if r.error:
            data["error"] = r.error
        if r.meta is not None:
            data["meta"] = r.meta
        seq = self.emit("tool/result", data, op="append", sources=[call_seq])
        self.add_node(seq, _Node(len(r.text), "tool", (turn, step, message["id"], c.call_id, r.is_error)))
        self.stats.tool_results += 1
        self.stats.error_results += r.is_error
        for fact in r.facts:
            self.record_fact(fact, seq, "tool/result", c.name)
        self.sink.flush()

    # surface replacements --------------------------------------------------------------------------------
    def compact(self, turn: int) -> None:
        """Replace the oldest surface nodes by a summary, ending the region before a user/assistant node."""
        goal = self.surface_chars * 0.7
        acc, cut = 0, 0
        for pos in range(len(self.surface) - 6):
            if acc >= goal:
                break
            acc += self.nodes[self.surface[pos]].chars
            nxt = self.nodes[self.surface[pos + 1]]
            if nxt.kind != "tool":
                cut = pos + 1
        if cut == 0:
            return
        shadowed = self.surface[:cut]
        cid = self.uuid()
        start = self.emit("compaction/start", {"compactionId": cid, "turn": turn})
        self.sink.flush()
        self.tick(5_000, 40_000)
        summary = self.text.prose(self.rng.randint(1500, 5000))
        tokens = sum(self.nodes[s].chars for s in shadowed) // 4
        span = {"start": shadowed[0], "end": shadowed[-1]}
        summary_seq = self.emit(
            "compaction/summary",
            {
                "compactionId": cid,
                "summary": [{"type": "text", "text": summary}],
                "shadowedRange": span,
                "shadowedSeqs": shadowed,
                "shadowedTokenCount": tokens,
                "provider": PROVIDER,
                "model": MODEL,
            },
        )
        text = (
            "Earlier conversation, condensed to save context; rely on it as background.\n\n"
            f"<compacted-summary>\n{summary}\n</compacted-summary>"
        )
        message = self.user_message(text, {"kind": "plugin", "plugin": "compact", "compactionId": cid})
        op = {"op": "replace", **span}
        seq = self.emit("user/message", message, op=op, sources=[start, summary_seq, *shadowed])
        self.emit("compaction/end", {"compactionId": cid, "turn": turn})
        for s in shadowed:
            self.surface_chars -= self.nodes.pop(s).chars
        if self.runtime_seq in shadowed:
            self.runtime_pending = True
        node = _Node(len(text), "user")
        self.surface[:cut] = [seq]
        self.nodes[seq] = node
        self.surface_chars += node.chars
        self.stats.compactions += 1
        self.sink.flush()

    def prune(self) -> None:
        """Replace the oldest large tool output still on the surface by a short stub."""
        target = next(
            (s for s in self.surface[:-8] if self.nodes[s].kind == "tool" and self.nodes[s].chars >= 8000),
            None,
        )
        if target is None:
            return
        node = self.nodes[target]
        assert node.tool is not None
        turn, step, mid, call_id, is_error = node.tool
        span = {"start": target, "end": target}
        self.emit(
            "compaction/prune",
            {"shadowedRange": span, "shadowedSeqs": [target], "shadowedTokenCount": node.chars // 4},
        )
        stub = f"[output pruned to save context: {node.chars} characters; run the tool again if needed]"
        message = {
            "id": mid,
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "content": [{"type": "text", "text": stub}],
                    "isError": is_error,
                }
            ],
            "source": {"kind": "tool", "callId": call_id},
        }
        seq = self.emit(
            "tool/result",
            {"turn": turn, "step": step, "message": message},
            op={"op": "replace", **span},
            sources=[target],
        )
        pos = self.surface.index(target)
        self.surface[pos] = seq
        self.surface_chars += len(stub) - self.nodes.pop(target).chars
        self.nodes[seq] = _Node(len(stub), "tool", node.tool)
        self.stats.prunes += 1
        self.sink.flush()

    # plans -----------------------------------------------------------------------------------------------
    def plan(self, style: str) -> Iterator[list[_Call]]:
        """The tool-calling steps of a turn (the final answer step is added by the caller)."""
        rng, p = self.rng, self.profile
        if style == "explore":
            for _ in range(rng.randint(*p.explore_steps)):
                yield [self.explore_call() for _ in range(rng.randint(*p.calls_per_step))]
        elif style == "fix":
            if rng.random() < 0.4:
                yield [self.todo_call()]
            for _ in range(rng.randint(1, 4)):
                yield [self.test_call(failing=True)]
                yield [self.read_call() for _ in range(rng.randint(1, 2))]
                yield [self.edit_call()]
            if rng.random() < 0.3:
                yield [self.write_call()]
            yield [self.test_call(failing=False)]
        elif style == "dump":
            for _ in range(rng.randint(1, 4)):
                yield [self.huge_call()]
        elif rng.random() < 0.5:
            yield [self.explore_call(small=True)]

    def explore_call(self, small: bool = False) -> _Call:
        roll = self.rng.random()
        if roll < 0.55:
            return self.read_call(limit=200 if small else 2000)
        if roll < 0.8:
            return self.grep_call()
        return self.shell_call()

    def maybe_fact(self, lines: list[str], template: str) -> tuple[str, ...]:
        if self.fact_rng.random() >= self.profile.fact_prob or not lines:
            return ()
        tokens = tuple(self.fact() for _ in range(self.profile.facts_per_hit))
        for token in tokens:
            lines.insert(self.fact_rng.randrange(len(lines) + 1), template.format(token))
        return tokens

    def read_call(self, limit: int = 2000, path: str | None = None) -> _Call:
        rng, repo = self.rng, self.repo
        path = path or (rng.choice(repo.paths[:40]) if rng.random() < 0.5 else rng.choice(repo.paths))
        if rng.random() < self.profile.error_prob:
            missing = path.rsplit("/", 1)[0] + f"/{self.text.ident()}.py"
            result = _Result(
                f"Error: no such file: {missing}", True, {"name": "FsError", "code": "FS_NOT_FOUND"}
            )
            return _Call("read", {"path": missing}, result)
        lines = repo.lines(path)
        total = len(lines)
        offset = rng.randrange(total) if total > limit and rng.random() < 0.4 else 0
        numbered: list[str] = []
        size = 0
        for n, line in enumerate(lines[offset : offset + limit], offset + 1):
            size += len(line) + 8
            if size > MAX_RESULT - 100:  # the read tool caps its output at MAX_RESULT
                break
            numbered.append(f"{n:>6}\t{line}")
        shown = lines[offset : offset + len(numbered)]
        end = offset + len(shown)
        text = "\n".join(numbered)
        if end < total:
            text += f"\n\n({total - end} more lines; continue with offset={end})"
        meta = {
            "path": path,
            "offset": offset,
            "lines": [{"number": n, "text": line} for n, line in enumerate(shown, offset + 1)],
            "totalLines": total,
        }
        repo.observed.add(path)
        args: dict[str, Any] = {"path": path}
        if offset:
            args["offset"] = offset
        if limit != 2000:
            args["limit"] = limit
        return _Call("read", args, _Result(text, meta=meta if self.profile.read_meta else None))

    def output_size(self) -> int:
        if self.rng.random() < self.profile.huge_prob:
            return self.rng.randint(500_000, MAX_RESULT)
        return _lognormal(self.rng, 1500, 1.3, MIN_RESULT, MAX_RESULT)

    def grep_call(self) -> _Call:
        pattern = self.text.ident()
        lines = self.text.grep(self.repo.paths, self.output_size())
        facts = self.maybe_fact(lines, 'config/defaults.json:12:  "marker": "{}",')
        return _Call("grep", {"pattern": pattern, "path": "."}, _Result("\n".join(lines), facts=facts))

    def bash(self, command: str, lines: list[str], code: int = 0, fact_line: str | None = None) -> _Call:
        facts = self.maybe_fact(lines, fact_line or "note: build id {}")
        text = "\n".join(lines) + f"\n[exit code: {code}]"
        return _Call(
            "bash", {"command": command, "description": f"Run {command.split()[0]}"}, _Result(text, facts=facts)
        )

    def shell_call(self) -> _Call:
        rng, t = self.rng, self.text
        size = self.output_size()
        if rng.random() < self.profile.error_prob:
            result = _Result("Error: tool call aborted", True, {"name": "AbortError", "code": "ABORTED"})
            return _Call("bash", {"command": "sleep 600", "description": "Wait for the server"}, result)
        kind = rng.randrange(4)
        if kind == 0:
            return self.bash(
                "git log --oneline -n 200",
                [
                    f"{rng.getrandbits(28):07x} {t.prose(rng.randint(20, 70)).splitlines()[0]}"
                    for _ in range(max(1, size // 60))
                ],
            )
        if kind == 1:
            return self.bash(
                "find . -name '*.py' | head -500",
                ["./" + p for p in rng.choices(self.repo.paths, k=max(1, size // 30))],
            )
        if kind == 2:
            return self.bash(
                f"curl -s localhost:8080/api/{t.ident()}", t.json_lines(size), fact_line='  "trace": "{}",'
            )
        return self.bash(
            f"tail -n 400 logs/{t.ident()}.log",
            t.log(size),
            fact_line="2026-08-21T00:00:00.000Z INFO  audit[0] token={}",
        )

    def test_call(self, failing: bool) -> _Call:
        rng = self.rng
        target = rng.choice([p for p in self.repo.paths if p.startswith("tests/")] or self.repo.paths)
        size = self.output_size() * 3
        lines = self.text.pytest(self.repo.paths, rng.randint(1, 4) if failing else 0, size)
        return self.bash(
            f"python -m pytest {target} -q", lines, 1 if failing else 0, "E       note: fixture seed {}"
        )

    def edit_call(self) -> _Call:
        rng, repo = self.rng, self.repo
        path = rng.choice(sorted(repo.observed)) if repo.observed else rng.choice(repo.paths)
        lines = repo.lines(path)
        at = rng.randrange(len(lines))
        old = lines[at : at + rng.randint(1, 6)]
        new = self.text.code(rng.randint(40, 600))
        args = {"path": path, "old_string": "\n".join(old), "new_string": "\n".join(new)}
        if path not in repo.observed:
            result = _Result(
                f"Error: {path} must be read before it is edited",
                True,
                {"name": "FsError", "code": "FS_NOT_OBSERVED"},
            )
            return _Call("edit", args, result)
        if rng.random() < self.profile.error_prob:
            return _Call("edit", args, _Result(f"Error: old_string was not found in {path}", True))
        repo.bump(path, len(args["new_string"]) - len(args["old_string"]))
        meta = {"diffs": [{"path": path, "oldText": args["old_string"], "newText": args["new_string"]}]}
        text = f"Edited {path}: 1 replacement.\n" + "\n".join(self.text.diff(path, old, new, at + 1))
        return _Call("edit", args, _Result(text, meta=meta))

    def write_call(self) -> _Call:
        """A new test file (never read back: its content lives only in the call's arguments)."""
        path = f"tests/test_{self.text.ident()}_regression.py"
        content = "\n".join(self.text.code(self.rng.randint(300, 6000))) + "\n"
        size = len(content.encode())
        return _Call("write", {"path": path, "content": content}, _Result(f"Wrote {size} bytes to {path}."))

    def todo_call(self) -> _Call:
        todos = [
            {"content": self.text.prose(self.rng.randint(20, 80)).splitlines()[0], "status": s}
            for s in ("in_progress", "pending", "pending")
        ]
        return _Call("todo_write", {"todos": todos}, _Result(f"Todo list updated ({len(todos)} items)."))

    def huge_call(self) -> _Call:
        rng = self.rng
        big = [p for p in self.repo.paths if self.repo.files[p][0] >= 500_000]
        if big and rng.random() < 0.5:
            return self.read_call(limit=100_000, path=rng.choice(big))
        t, size = self.text, rng.randint(200_000, MAX_RESULT)
        if rng.random() < 0.5:
            return self.bash("npm run build -- --verbose 2>&1", t.log(size))
        return self.bash(
            f"curl -s localhost:8080/api/{t.ident()}?limit=all",
            t.json_lines(size),
            fact_line='  "trace": "{}",',
        )


# ---------------------------------------------------------------------------------------------------------
# entry points


def generate(
    path: str | Path,
    target_bytes: int,
    *,
    seed: int,
    profile: str,
    zstd: bool = False,
    explicit_envelope: bool = True,
    facts: bool = False,
    hosted: bool = False,
) -> GenStats:
    """Write a synthetic DSH log of about ``target_bytes`` decompressed bytes to ``path``.

    The session always ends with a closed turn, so the log is slightly larger than the target. With
    ``explicit_envelope=False`` the envelope fields (seq/time, seq0/time0) are left out, as in DSH's committed
    fixtures. With ``facts=True`` the planted ``FACT-`` tokens are listed in ``<path>.facts.json``. With
    ``hosted=True`` the first event is the ``tapedeck/host`` event a tapedeck host starts its logs with (a log
    ``tapedeck repair`` takes; it refuses DSH's).
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: choose one of {', '.join(PROFILES)}")
    if target_bytes <= 0:
        raise ValueError("target_bytes must be greater than zero")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    stats = GenStats(str(out), profile, seed, zstd, explicit_envelope)
    with open(out, "wb") as f:
        sink = _Sink(f, zstd)
        session = _Session(sink, stats, PROFILES[profile], target_bytes)
        session.run(hosted)
        sink.close()
    stats.events = session.seq
    stats.lines = sink.lines
    stats.logical_bytes = sink.logical_bytes
    stats.file_bytes = out.stat().st_size
    stats.frames = sink.frames
    stats.max_line = sink.max_line
    stats.big_lines = sink.big_lines
    if facts:
        sidecar = {"session": session.session_id, "seed": seed, "profile": profile, "facts": stats.facts}
        Path(f"{out}.facts.json").write_bytes(orjson.dumps(sidecar, option=orjson.OPT_INDENT_2))
    return stats


def main(argv: list[str] | None = None) -> int:
    """CLI: generate one log and print what was written as JSON."""
    parser = argparse.ArgumentParser(description="Write a synthetic DeepSeek Harness session log.")
    parser.add_argument("out", help="output file (e.g. bench/out/session.jsonl)")
    parser.add_argument(
        "--size", default="200MB", help="decompressed size to reach, e.g. 200MB, 50MiB (default 200MB)"
    )
    parser.add_argument(
        "--zstd", action="store_true", help="write zstd frames (header frame + one per batch)"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--profile", choices=list(PROFILES), default="mixed")
    parser.add_argument(
        "--facts", action="store_true", help="also write OUT.facts.json listing the planted facts"
    )
    parser.add_argument(
        "--no-envelope", action="store_true", help="omit seq/time like DSH's committed fixtures"
    )
    parser.add_argument(
        "--hosted", action="store_true", help="start with a tapedeck host's event (a log tapedeck repair takes)"
    )
    args = parser.parse_args(argv)
    try:
        size = parse_size(args.size)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        stats = generate(
            args.out,
            size,
            seed=args.seed,
            profile=args.profile,
            zstd=args.zstd,
            explicit_envelope=not args.no_envelope,
            facts=args.facts,
            hosted=args.hosted,
        )
    except OSError as exc:
        print(f"gen_session: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(json.dumps(stats.summary(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
