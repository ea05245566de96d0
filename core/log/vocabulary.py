"""The DSH event vocabulary: which types exist, which carry a surface op, and the envelope whitelist."""

from __future__ import annotations

SURFACE_TYPES: frozenset[str] = frozenset({"user/message", "assistant/message", "tool/result"})

ENVELOPE_KEYS: frozenset[str] = frozenset(
    {"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"}
)

# DSH 0.1.1's KNOWN_SESSION_EVENT_TYPES (spec §2.1); the four ``team/*`` names are matched by prefix.
KNOWN_TYPES: frozenset[str] = frozenset(
    {
        "turn/start", "turn/end", "step/start", "step/end",
        "user/message", "assistant/chunk", "assistant/message", "tool/call", "tool/result",
        "request/header", "request/context", "todo/write", "session/end-seed",
        "agent/inbox/spliced", "session/title", "session/title-llm-request",
        "compaction/start", "compaction/summary", "compaction/prune", "compaction/end",
        "tool/code-dispatch-start", "tool/code-dispatch", "llm/retry", "llm/retry-started",
        "approval/asked", "approval/decided", "approval/policy", "sandbox/mode", "permission/preset",
        "plan/mode", "command/run", "command/done", "hook/invoked", "hook/result", "goal/change",
        "subagent/descriptor", "tool-workflow/run-start", "tool-workflow/agent-start",
        "tool-workflow/agent-end", "tool-workflow/run-end", "feedback/record", "agent-preset/selected",
        "schedule/change", "web/deepseek-search-llm-request",
    }
)  # fmt: skip

PACKED_ROW_TYPES: frozenset[str] = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})

# Types DSH refuses outright on load (legacy shapes with no upgrade path).
REJECTED_LEGACY_TYPES: frozenset[str] = frozenset({"request/header-delta", "mode/set"})


def is_known_type(event_type: str) -> bool:
    """True when DSH itself knows ``event_type`` (it would load it without ``ignorable``)."""
    return event_type in KNOWN_TYPES or event_type.startswith("team/")


def is_logged_type(event_type: str) -> bool:
    """True when a DSH or tapedeck log may hold ``event_type``: DSH knows it, it is a packed row, or it is tapedeck's."""
    return is_known_type(event_type) or event_type in PACKED_ROW_TYPES or event_type in TAPEDECK_TYPES


# tapedeck's own event types (written with ``"ignorable": true``, so DSH loads a log that holds them)
HOST_EVENT = "tapedeck/host"  # a host started or resumed on the log
ROUTE_EVENT = "tapedeck/route"  # the adaptive policy's routing decision
CONTROL_EVENT = "tapedeck/control"  # the outcome of an operator's control request
CHECKPOINT_EVENT = "tapedeck/checkpoint"  # a checkpoint mark (``core.policies.checkpoint``)
LOST_EVENT = "tapedeck/lost"  # stands for a seq a damaged log lost (``core.log.repair``)
# and the host's state changes, config changes and rewind reports (``core.control.host_state.STATE_EVENT``,
# ``core.control.config.CONFIG_EVENT``, ``core.policies.checkpoint.REWIND_EVENT``: layers above this one)
TAPEDECK_TYPES = (HOST_EVENT, ROUTE_EVENT, CONTROL_EVENT, CHECKPOINT_EVENT, LOST_EVENT,
                  "tapedeck/state", "tapedeck/config", "tapedeck/rewind")  # fmt: skip
# a control request's outcomes (its ``tapedeck/control`` event's, the DSH bridge's outcome file's): pending, then one
# of the final ones; ``unknown`` only for a DSH bridge that died while it ran the request (it may have taken effect)
PENDING = "pending"
APPLIED = "applied"
REJECTED = "rejected"
CANCELLED = "cancelled"
EXPIRED = "expired"
UNKNOWN = "unknown"
FINAL = (APPLIED, REJECTED, CANCELLED, EXPIRED, UNKNOWN)
OUTCOMES = (PENDING, *FINAL)
MAX_ID_CHARS = 200  # the longest control request id
# the ``source`` of the user message the rewind plugin leaves after a fold (its guard reminder)
GUARD_SOURCE = {"kind": "plugin", "plugin": "rewind", "form": "notice"}
