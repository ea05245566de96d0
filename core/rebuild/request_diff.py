"""What changed between two consecutive model requests, and where the provider's prefix cache broke.

A provider caches the prompt as it renders it: the system prompt and the tool schemas first, then the messages.
``prompt_bytes`` serializes a request in that order (the system message, the tools, then each further
message, all compact JSON with UTF-8 text) and the break offset is the length of the prefix two requests
share in it. The cause is read from the log between them: the replacement that swapped out the first node
that differs (a seal, fold, prune, rewind, compaction or operator expansion), a phase note that appeared or
went, or a changed request header.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import field, replace
from itertools import chain, islice
from typing import Any

from core.read.session import Session, cut_kind
from core.rebuild.request import Request, prompt_bytes, prompt_head, prompt_parts
from core.shared.records import record

CAUSE_NAMES = {"tape": "seal"}  # cut kinds whose user-facing name differs
HEADER_CHANGE = "header change"
PHASE_NOTE = "phase note"
REWRITE = "rewrite"


def diff_base(request: Request) -> Request:
    """``request`` as a later ``diff_requests`` needs it as ``before``: its address, keys, head and rendered
    prompt, without its messages (a pass that diffs each request against the last holds one request whole);
    a lean request as it is (its ``Digest`` holds no message)."""
    if request.digest is not None and not request.digest.done:
        return request
    prompt_bytes(request)
    return replace(request, messages=[], body={"messages": request.wire[:1], "tools": request.body.get("tools")})


@record()
class RequestDiff:
    """The second request against the first."""

    before: Request | None
    after: Request
    prefix_bytes: int  # bytes of the prompt the two share: where the cache broke
    total_bytes: int  # bytes of the second prompt
    broke: bool  # False when the second prompt extends the first one whole
    cause: str | None  # seal, fold, prune, rewind, compaction, expand, phase note, header change, rewrite
    cause_seq: int | None
    added: list[int | str] = field(default_factory=list)
    removed: list[int | str] = field(default_factory=list)
    replaced: list[tuple[int | str, int]] = field(default_factory=list)  # (old node, the replacement)

    def to_dict(self) -> dict[str, Any]:
        """The ``diff --json`` object."""
        b, a = self.before, self.after
        return {
            "before": _point(b) if b else None,
            "after": _point(a),
            "prefixBytes": self.prefix_bytes,
            "totalBytes": self.total_bytes,
            "broke": self.broke,
            "cause": self.cause,
            "causeSeq": self.cause_seq,
            "added": self.added,
            "removed": self.removed,
            "replaced": [{"node": old, "by": new} for old, new in self.replaced],
        }


def _point(request: Request) -> dict[str, Any]:
    """Which request ``request`` is, as ``diff --json`` names it."""
    return {"turn": request.turn, "step": request.step, "attempt": request.attempt, "seq": request.seq,
            "unfinished": request.unfinished}  # fmt: skip


def break_point(prefix_bytes: int, total_bytes: int, cause: str | None, cause_seq: int | None) -> str:
    """Where a request broke the prefix cache and what broke it, as every report words it (``diff``, the export,
    the cache-break alert): ``cache broke at byte 18140 of 18839: compaction at seq 21``."""
    what = (cause or "cache") + (f" at seq {cause_seq}" if cause_seq is not None else "")
    return f"cache broke at byte {prefix_bytes} of {total_bytes}: {what}"


PREFIX_STEP = 1 << 16


def _common_prefix(a: bytes | bytearray, b: bytes | bytearray, lo: int = 0) -> int:
    """Bytes ``a`` and ``b`` share at their start, of which the first ``lo`` are known to match."""
    n = min(len(a), len(b))
    while lo < n and a[lo : lo + PREFIX_STEP] == b[lo : lo + PREFIX_STEP]:  # slices of 64 KiB, never of MBs
        lo += PREFIX_STEP
    lo, hi = min(lo, n), min(lo + PREFIX_STEP, n)
    start = lo
    while lo < hi:  # binary search on slice equality within the step that differs
        mid = (lo + hi + 1) // 2
        if a[start:mid] == b[start:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _replacement_between(session: Session, node: int, lo: int, hi: int) -> int | None:
    """The first replacement in seqs ``(lo, hi]`` that took ``node`` (or what replaced it) off the surface."""
    seen: set[int] = set()
    while node in session.replaced_by and node not in seen:
        seen.add(node)
        node = session.replaced_by[node]
        if lo < node <= hi:
            return node
        if node > hi:
            return None
    return None


def _stream_prefix(a: Iterator[bytes], b: Iterator[bytes]) -> int:
    """Bytes the concatenations of the parts ``a`` and ``b`` share at their start, reading each part only as far
    as the comparison gets."""
    shared = 0
    x = y = b""
    while True:
        if not x:
            x = next(a, None)  # type: ignore[assignment]
        if not y:
            y = next(b, None)  # type: ignore[assignment]
        if x is None or y is None:
            return shared
        n = min(len(x), len(y))
        if x[:n] != y[:n]:
            return shared + _common_prefix(x[:n], y[:n])
        shared += n
        x, y = x[n:], y[n:]


def _lean_diff(before: Request, after: Request, session: Session) -> RequestDiff:
    """``diff_requests`` of two lean requests, from their digests: the nodes both carry first are the same
    messages (a node's message never changes), so the prompts are compared byte by byte (read back) only from
    the first node where they differ, and only as far as they agree."""
    old, new = before.digest, after.digest
    assert old is not None and new is not None
    size = new.size
    grown = old.keys is new.keys and old.count <= new.count  # the same list, only grown since
    if grown:
        first = old.count
        added: list[int | str] = new.keys[old.count : new.count]
        removed: list[int | str] = []
        new_keys: set[int | str] = set()
    else:
        old_keys, keys = old.keys[: old.count], new.keys[: new.count]
        first = next((i for i, (a, b) in enumerate(zip(old_keys, keys, strict=False)) if a != b), min(old.count, new.count))
        new_keys, known = set(keys), set(old_keys)
        removed = [k for k in old_keys if k not in new_keys]
        added = [k for k in keys if k not in known]
    if old.head == new.head:
        head = sum(map(len, new.head))
        shared = head + (old.ends[first - 1] if first else 0)
        if first < old.count:
            shared += _stream_prefix(old.message_parts(first), new.message_parts(first))
    else:
        shared = _stream_prefix(chain(old.head, old.message_parts()), chain(new.head, new.message_parts()))
    replaced = _replaced(session, before, after, removed, new_keys) if removed else []
    broke = shared < old.size
    if not broke:
        return RequestDiff(before, after, shared, size, False, None, None, added, removed, replaced)
    cause, cause_seq = _cause(before, after, session, removed, replaced, old.keys[: old.count], new.keys[: new.count])
    return RequestDiff(before, after, shared, size, True, cause, cause_seq, added, removed, replaced)


def _replaced(
    session: Session, before: Request, after: Request, removed: list[int | str], new_keys: set[int | str]
) -> list[tuple[int | str, int]]:
    """The removed nodes a replacement between the two requests took off the surface, each with what replaced
    it (the replacement on ``after``'s surface, when a chain of them led there)."""
    replaced = []
    for key in removed:
        by = _replacement_between(session, key, before.seq, after.seq) if isinstance(key, int) else None
        if by is not None:
            final = by
            while final not in new_keys and final in session.replaced_by:
                final = session.replaced_by[final]
            replaced.append((key, final if final in new_keys else by))
    return replaced


def diff_requests(before: Request | None, after: Request, session: Session) -> RequestDiff:
    """``after`` against ``before``; ``session`` must have projected at least up to ``after.seq``."""
    if before is None:
        if after.digest is not None and not after.digest.done:
            digest = after.digest
            return RequestDiff(None, after, 0, digest.size, True, None, None, digest.keys[: digest.count])
        return RequestDiff(None, after, 0, len(prompt_bytes(after)), True, None, None, list(after.keys))
    first, second = before.digest, after.digest
    if first is not None and second is not None and not first.done and not second.done:
        return _lean_diff(before, after, session)
    before.materialize()
    after.materialize()
    new = prompt_bytes(after)
    old = prompt_bytes(before)
    if old is new:  # rendered in the buffer of ``before``'s prompt, cut back to what the two share
        cut = after.cache.cut_from(before, after) if after.cache is not None else None
        if cut is None:
            raise ValueError(f"request at seq {before.seq}: its prompt was re-used by a later request than {after.seq}")
        at, tail, old_size = cut
        shared = at + _common_prefix(tail, new[at : at + len(tail)])
    else:
        shared, old_size = _common_prefix(old, new), len(old)
    old_keys, grown = set(before.keys), after.keys[: len(before.keys)] == before.keys
    # a surface that only grew: nothing went, and only the tail can be new (the sets are built in C)
    new_keys = set() if grown else set(after.keys)
    removed = [] if grown else [k for k in before.keys if k not in new_keys]
    added = [k for k in islice(after.keys, len(before.keys) if grown else 0, None) if k not in old_keys]
    replaced = _replaced(session, before, after, removed, new_keys)
    broke = shared < old_size
    cause, cause_seq = (None, None) if not broke else _cause(before, after, session, removed, replaced)
    return RequestDiff(before, after, shared, len(new), broke, cause, cause_seq, added, removed, replaced)


def _cause(
    before: Request,
    after: Request,
    session: Session,
    removed: list[int | str],
    replaced: list[tuple[int | str, int]],
    old_keys: list[int] | None = None,
    new_keys: list[int] | None = None,
) -> tuple[str, int | None]:
    """What broke the cache (``old_keys`` and ``new_keys``: the two requests' keys, when they are not on them)."""
    if prompt_head(before) != prompt_head(after):
        return HEADER_CHANGE, after.header_seq
    before_keys: list[Any] = before.keys if old_keys is None else old_keys
    after_keys: list[Any] = after.keys if new_keys is None else new_keys
    first = next((i for i, (a, b) in enumerate(zip(before_keys, after_keys, strict=False)) if a != b), None)
    if first is None:
        return REWRITE, None  # same nodes, different rendering (a repaired tool pairing, for example)
    by = dict(replaced)
    gone = set(removed)
    run = [before_keys[first]]  # the run of nodes that went, starting where the two first differ
    for key in before_keys[first + 1 :]:
        if key not in gone:
            break
        run.append(key)
    for key in run:  # a note that went with the nodes around it went because they were replaced
        if key in by:
            kind = cut_kind(session.events[by[key]])
            return CAUSE_NAMES.get(kind, kind), by[key]
    if isinstance(run[0], str) and run[0] in gone:
        return PHASE_NOTE, int(run[0].split(":", 1)[1])
    moved = after_keys[first] if first < len(after_keys) else None
    if isinstance(moved, str):
        return PHASE_NOTE, int(moved.split(":", 1)[1])
    return REWRITE, None


def break_location(diff: RequestDiff) -> tuple[str, int] | None:
    """Where in the second request the cache broke: ``("message", i)`` for wire message ``i``, ``("tools", 0)``
    for the tool list, or None when nothing broke."""
    if not diff.broke:
        return None
    parts = prompt_parts(diff.after)
    has_system = bool(diff.after.wire) and diff.after.wire[0].get("role") == "system"
    offset = 0
    for k, part in enumerate(parts):
        offset += len(part)
        if diff.prefix_bytes < offset:
            if has_system:
                return ("message", 0) if k == 0 else ("tools", 0) if k == 1 else ("message", k - 1)
            return ("tools", 0) if k == 0 else ("message", k - 1)
    return ("message", len(diff.after.wire) - 1) if diff.after.wire else None
