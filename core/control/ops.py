"""The control ops and their arguments: ``OPS`` for a tapedeck host, ``DSH_OPS`` for a session the DSH bridge runs
(``core.control.inbox`` checks requests against them)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from core.bridge.ops import MESSAGE_MODES, SUPPORTED

ArgKind = Literal["string", "integer", "any"]


@dataclass(frozen=True)
class ArgSpec:
    """One argument of a control op."""

    name: str
    kind: ArgKind
    description: str
    required: bool = False
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Op:
    """A control op: its arguments, and whether a host applies it at its next boundary (before its next model
    call, acknowledging it ``pending`` at once) or at once. The reference host's handler of op ``x.y`` is its
    method ``op_x_y`` (``core.host.operator.Operator`` or ``core.host.hooks.PolicyHooks``)."""

    args: tuple[ArgSpec, ...] = ()
    at_boundary: bool = False


OPS: dict[str, Op] = {
    "checkpoint": Op((ArgSpec("objective", "string", "what the exploration after the mark is for"),)),
    "rewind": Op(
        (
            ArgSpec("markId", "integer", "the checkpoint mark to rewind to (default: the newest)"),
            ArgSpec("preview", "any", "what the sender previewed: {seq, nodes, chars}"),
        ),
        at_boundary=True,
    ),
    "expand": Op(
        (ArgSpec("seq", "integer", "seq of the tool result (or of its fold)", required=True),),
        at_boundary=True,
    ),
    "config.set": Op(
        (
            ArgSpec("key", "string", "dotted config key, e.g. slice.history.keepRecentTurns", required=True),
            ArgSpec("value", "any", "the new value (JSON); null restores the default", required=True),
        ),
        at_boundary=True,
    ),
    "pause": Op(),
    "resume": Op(),
    "message": Op(
        (
            ArgSpec("text", "string", "the message", required=True),
            ArgSpec(
                "kind", "string", "steer (the model sees it) or note (log only)", choices=("steer", "note")
            ),
        )
    ),
    "stop": Op((ArgSpec("reason", "string", "why the run should end"),)),
}
# The ops of a DSH session (through the bridge): the same, but message can also wait for the next turn.
DSH_OPS: dict[str, Op] = {
    **OPS,
    "message": replace(
        OPS["message"],
        args=(
            *OPS["message"].args,
            ArgSpec(
                "mode",
                "string",
                "DSH only: steer (into the running turn) or queue (next turn)",
                choices=MESSAGE_MODES,
            ),
        ),
    ),
    "config.set": replace(
        OPS["config.set"],
        args=(ArgSpec("key", "string", f"DSH: {SUPPORTED}", required=True), OPS["config.set"].args[1]),
    ),
}
