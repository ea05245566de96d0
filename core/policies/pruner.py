"""Progressive tool-result pruning (seed 004 §4.e) as a pure planner.

A tool result whose text exceeds a level's ``thresholdChars`` keeps its first ``headChars`` and last
``tailChars`` code points with ``PRUNE_MARKER`` in place of the middle. Lengths are code points over the text
blocks of the result's inner content, read as one stream: non-text blocks (images) stay where they are, the
marker goes into the first text block that meets the removed span, and text blocks emptied by the cut are
dropped.

``plan_prune`` takes one snapshot of the surface and plans, per pruned result, a ``compaction/prune`` event
(``shadowedRange``, ``shadowedSeqs``, ``shadowedTokenCount``) followed by the ``tool/result`` replacement (same
data, new inner content, ``surfaceOp {"op":"replace","start":S,"end":S}``, ``sourceEventSeqs [S]``) whose
``data.meta`` is ``{"policy": "prune", "level", "charsBefore", "charsAfter"}``. Both are known DSH types, so
neither carries ``ignorable``. Rules:

- Surface results whose text is still raw (the original append) or folded (a fold replacement) are
  candidates, and so is a result pruned by a milder level (``milder``): a harsher tier re-prunes it to its own
  budget, so a result pruned at ``moderate`` does not keep 14K chars through ``critical``. A milder level never
  un-prunes a result, and an operator-expanded result is left alone.
- ``eligible`` (optional) limits the candidates further; the cache-aware schedule passes the results that lie
  after the point where the request already differs from what the provider cached.
- The results of the newest ``protectRecentSteps`` distinct (turn, step) pairs among the surface's tool
  results stay verbatim.
- When the planned replacements together save fewer than ``minimumCharsRemoved`` code points nothing is
  planned at all.

``shadowedTokenCount`` is an estimate (a quarter of the shadowed message's model-visible code points, rounded
up); DSH prices it with its token meter, which tapedeck does not have.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.policies.adaptive_config import PRUNE_MARKER, PruneBudget, PruneLevel
from core.read.session import Session, content_chars

PRUNE_POLICY = "prune"
FOLD_POLICY = "fold"


@dataclass(frozen=True, slots=True)
class PrunedResult:
    """One planned prune: the surface node it shadows and the replacement that takes its place."""

    shadowed_seq: int
    replacement_seq: int
    call_id: str
    chars_before: int
    chars_after: int

    def to_dict(self) -> dict[str, object]:
        """Plain-dict form for ``--json`` output."""
        return {
            "shadowedSeq": self.shadowed_seq,
            "replacementSeq": self.replacement_seq,
            "callId": self.call_id,
            "charsBefore": self.chars_before,
            "charsAfter": self.chars_after,
        }


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """The events to append (in order) and what they prune; empty when below the saving floor."""

    events: tuple[dict[str, Any], ...] = ()
    pruned: tuple[PrunedResult, ...] = ()

    @property
    def chars_removed(self) -> int:
        """Code points the replacements remove in total."""
        return sum(p.chars_before - p.chars_after for p in self.pruned)


def measure(blocks: Sequence[Any]) -> int:
    """Code points of the text blocks in ``blocks``; other blocks cost nothing."""
    return sum(len(_text(b)) for b in blocks if _is_text(b))


def prune_content(blocks: Sequence[Any], budget: PruneBudget) -> list[Any] | None:
    """``blocks`` with the middle of their text stream cut out, or None when within ``budget``."""
    total = measure(blocks)
    if total <= budget.threshold_chars:
        return None
    cut_start, cut_end = budget.head_chars, total - budget.tail_chars
    pruned: list[Any] = []
    consumed = 0
    marked = False
    for block in blocks:
        if not _is_text(block):
            pruned.append(block)
            continue
        text = _text(block)
        start, end = consumed, consumed + len(text)
        head = min(len(text), max(0, cut_start - start))
        tail = min(len(text), max(0, cut_end - start))
        marker = PRUNE_MARKER if not marked and start < cut_end and end > cut_start else ""
        marked = marked or bool(marker)
        kept = text[:head] + marker + text[tail:]
        if kept:
            pruned.append({**block, "text": kept})
        consumed = end
    return pruned


def is_prunable(session: Session, seq: int, milder: Collection[str] = ()) -> bool:
    """True for a surface ``tool/result`` whose text is raw, folded, or pruned by a level in ``milder``."""
    event = session.events[seq]
    if event.get("type") != "tool/result" or not session.on_surface(seq):
        return False
    if session.is_original(seq):
        return True
    meta = (event.get("data") or {}).get("meta")
    if not isinstance(meta, Mapping):
        return False
    return meta.get("policy") == FOLD_POLICY or (meta.get("policy") == PRUNE_POLICY and meta.get("level") in milder)


def protected_steps(session: Session, count: int) -> set[tuple[Any, Any]]:
    """The newest ``count`` distinct (turn, step) pairs among the surface's tool results."""
    found: set[tuple[Any, Any]] = set()
    for seq in reversed(session.surface):
        if len(found) >= count:
            break
        event = session.events[seq]
        if event.get("type") == "tool/result":
            data = event.get("data") or {}
            found.add((data.get("turn"), data.get("step")))
    return found


def plan_prune(
    session: Session,
    level: PruneLevel,
    first_seq: int | None = None,
    *,
    milder: Collection[str] = (),
    eligible: Callable[[int], bool] | None = None,
) -> PrunePlan:
    """Plan the prune events of ``level`` over the current surface.

    ``first_seq`` is the seq the first planned event will receive (default ``session.next_seq``); a caller
    that appends other events first passes its own offset so the replacements cite the right seqs.
    ``milder`` names the levels whose prunes this level may re-prune; ``eligible`` filters candidate seqs.
    """
    keep = protected_steps(session, level.protect_recent_steps)
    prepared: list[tuple[int, dict[str, Any], int, list[Any], int, int]] = []
    for seq in session.surface:
        if not is_prunable(session, seq, milder) or (eligible is not None and not eligible(seq)):
            continue
        event = session.events[seq]
        data = event.get("data") or {}
        if (data.get("turn"), data.get("step")) in keep:
            continue
        located = _result_block(data.get("message"))
        if located is None:
            continue
        index, block = located
        inner = block.get("content") if isinstance(block.get("content"), list) else []
        content = prune_content(inner, level.budget)
        if content is not None:
            prepared.append((seq, data, index, content, measure(inner), measure(content)))
    if sum(before - after for *_, before, after in prepared) < level.minimum_chars_removed:
        return PrunePlan()
    base = session.next_seq if first_seq is None else first_seq
    events: list[dict[str, Any]] = []
    pruned: list[PrunedResult] = []
    for seq, data, index, content, before, after in prepared:
        message = data["message"]
        blocks = list(message["content"])
        blocks[index] = {**blocks[index], "content": content}
        meta = {"policy": PRUNE_POLICY, "level": level.name, "charsBefore": before, "charsAfter": after}
        events.append(
            {
                "type": "compaction/prune",
                "data": {
                    "shadowedRange": {"start": seq, "end": seq},
                    "shadowedSeqs": [seq],
                    "shadowedTokenCount": -(-content_chars(message.get("content")) // 4),
                },
            }
        )
        events.append(
            {
                "type": "tool/result",
                "data": {**data, "message": {**message, "content": blocks}, "meta": meta},
                "surfaceOp": {"op": "replace", "start": seq, "end": seq},
                "sourceEventSeqs": [seq],
            }
        )
        call_id = str(blocks[index].get("toolCallId") or (message.get("source") or {}).get("callId") or "")
        pruned.append(PrunedResult(seq, base + len(events) - 1, call_id, before, after))
    return PrunePlan(tuple(events), tuple(pruned))


def _is_text(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "text"


def _text(block: Mapping[str, Any]) -> str:
    text = block.get("text")
    return text if isinstance(text, str) else ""


def _result_block(message: Any) -> tuple[int, Mapping[str, Any]] | None:
    if not isinstance(message, Mapping) or not isinstance(message.get("content"), list):
        return None
    for index, block in enumerate(message["content"]):
        if isinstance(block, Mapping) and block.get("type") == "tool-result":
            return index, block
    return None
