"""Where the host applies the policies: pre-step planning, the policy-owned tools, the turn guard, the policy
requests of the control inbox (checkpoint, rewind, expand, config.set).

Every decision is made by a pure planner in ``core.policies``; this module only calls them at the right
points and appends what they plan through the host's single write path.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
from collections.abc import ValuesView
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.control.config import PolicyConfig, config_event, set_value
from core.host.operator import Answer
from core.host.port import HostPort
from core.host.report_client import report_client_factory
from core.host.toolbox import CallResult, ToolBox
from core.host.tools import TOOL_CLASSES
from core.policies import adaptive as adaptive_policy
from core.policies import checkpoint as checkpoint_policy
from core.policies import fold as fold_policy
from core.policies import phase_notes
from core.policies import prolong as prolong_policy
from core.policies import recall as recall_policy
from core.policies import rewind as rewind_policy
from core.policies import slice as slice_policy
from core.policies.report import ReportError, ReportWriter, default_writer
from core.policies.spill import SPILL_DIR
from core.read.session import Session
from core.shared.chat import ChatModel
from core.shared.errors import ConfigError, TapedeckError
from core.shared.model_specs import Limits, limits_for
from core.shared.text import js_json, shown

SLICE_PROMPT_ORDER = -1200  # seed 000's slice:kernel section
REWIND_PROMPT_ORDER = 151  # seed 001's tool:rewind section
ADAPTIVE_PROMPT_ORDER = 1000  # seed 004 puts its section after every other one
SPILL_HINT = "expand_result reads it back, whole or by grep/lines"
BASE_SYSTEM = (
    "You are a coding agent working inside the workspace given to you. Use the tools to read, search, run and "
    "edit files; keep tool outputs small; report what you changed and how you verified it."
)


def request_tokens(session: Session, system: str, tools: list[dict[str, Any]]) -> int:
    """An estimate of the next request in tokens (four characters each): messages, system prompt, schemas."""
    return (session.surface_chars + len(system) + len(js_json(tools))) // 4


def _file_safe(text: str) -> str:
    """``text`` with every character but letters, digits, ``-`` and ``_`` replaced (a call id as a file name); when
    that changed it (or cut it at 80), a hash of the whole id follows, so two ids never name one file."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in text)[:80]
    if safe == text and safe:
        return safe
    return f"{safe or 'call'}-{hashlib.blake2b(text.encode('utf-8', 'surrogatepass'), digest_size=6).hexdigest()}"


@dataclass
class StepPlan:
    """What the next model call may use, decided before it."""

    system: str
    tools: list[dict[str, Any]]
    tool_names: set[str]
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    tool_choice: str | None = None  # "none" in finalization: schemas sent, calls refused
    reject: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


def check_tool_names(config: PolicyConfig) -> None:
    """Refuse a config whose rewind tool takes the name of another tool the host offers: the request would list
    two tools of that name, and every call of it would run the rewind."""
    name = config.rewind.tool_name
    taken = (
        {cls.name for cls in TOOL_CLASSES}
        | fold_policy.RECALL_FAMILY
        | {checkpoint_policy.CHECKPOINT_TOOL_NAME}
    )
    if name in taken:
        raise ConfigError(
            f"rewind.toolName {shown(name)} is the name of another tool ({', '.join(sorted(taken))}); choose another name"
        )


def _with_value(config: PolicyConfig, args: dict[str, Any]) -> tuple[PolicyConfig, Any]:
    """``config`` with a ``config.set`` request's ``args`` applied, and the key's old value; a ConfigError when
    the value is refused."""
    new, old = set_value(config, args["key"], args.get("value"))
    check_tool_names(new)
    return new, old


class PolicyHooks:
    """The policies as the host sees them."""

    def __init__(
        self, host: HostPort, config: PolicyConfig, model: ChatModel, toolbox: ToolBox, workspace: Path
    ) -> None:
        """The policies of ``host``, which calls ``model`` with the tools of ``toolbox`` in ``workspace``."""
        self.host = host
        self._config = config
        self.model = model
        self.toolbox = toolbox
        self._prolong = prolong_policy.ProlongMemory(workspace, config.prolong, host.session.id)
        self._seal_warned: set[str] = set()
        self._effort_warned: set[str] = set()
        self._clamp_warned: set[int | None] = set()
        # the configs the config.set requests waiting for the next step make on top of the config in force: the
        # i-th after the first i + 1 of them (those that apply); the operator cuts it where it takes one out
        self._made: list[PolicyConfig] = []

    @property
    def config(self) -> PolicyConfig:
        """The policy config in force: the one the host started with, and every ``config.set`` since."""
        return self._config

    # lifecycle -------------------------------------------------------------------------------------------
    def replay(self) -> None:
        """Rebuild policy state after a restart (everything lives in the log; the start-only sections keep what
        this host started with): the config in force, and what prolong memory had not written yet."""
        from core.control.config import START_ONLY, replay_config

        events = self.host.session.events
        self._config = replay_config(self._config, events, START_ONLY)
        self._prolong.catch_up(events)

    def observe(self, stored: list[dict[str, Any]]) -> None:
        """Called with every batch the host appended: prolong memory sees every event."""
        for event in stored:
            self._prolong.observe(event)

    def close(self) -> None:
        """Drain the prolong writer."""
        self._prolong.close()

    # planning --------------------------------------------------------------------------------------------
    def report_writer(self) -> ReportWriter:
        """The model-written report when a real model is configured, else the extractive one."""
        model = self.model if self.model.writes_reports else None
        # Another route than the agent's own gets its own client, on the agent's endpoint or the configured one.
        return default_writer(self._config.rewind, model, report_client_factory(model, self._config.rewind))

    def model_limits(self) -> Limits:
        """The routed model's window and output limit: the ``model`` config, the provider, DeepSeek's table."""
        model = self.model
        return limits_for(model.model, self._config.model, model.limits)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """Every tool the model may call: workspace tools, the recall family, checkpoint and rewind.

        ``recall_step`` comes with folding, as in the seed, whose fold part registers it: with
        ``slice.fold.enabled`` false only the other recall tools are offered.
        """
        folding = self._config.slice.fold.enabled
        return [
            *self.toolbox.schemas(),
            *(s for s in recall_policy.recall_tool_schemas() if folding or s["name"] != "recall_step"),
            checkpoint_policy.checkpoint_tool_schema(self._config.rewind.tool_name),
            rewind_policy.rewind_tool_schema(self._config.rewind),
        ]

    def request_messages(self) -> list[dict[str, Any]]:
        """The next request's messages: the surface with the adaptive phase notes pinned in place."""
        return phase_notes.request_messages(self.host.session)

    def system_prompt(self) -> str:
        """The logged system prompt: our base text, then the policies' sections in their seeds' order.

        Orders: slice -1200 (its kernel section), rewind 151, prolong ``promptOrder`` (150 by default, in the
        100-199 tool-guidance band), the adaptive policy's standing task policy 1000 (last, as in seed 004); the
        base text comes first. Equal orders keep this listing's order.
        """
        sections = sorted(
            [
                (SLICE_PROMPT_ORDER, slice_policy.prompt_section(self._config.slice.fold.enabled)),
                (REWIND_PROMPT_ORDER, rewind_policy.rewind_prompt_section(self._config.rewind)),
                (self._config.prolong.prompt_order, prolong_policy.prompt_section(self._config.prolong)),
                (ADAPTIVE_PROMPT_ORDER, adaptive_policy.prompt_section()),
            ],
            key=lambda item: item[0],
        )
        return "\n\n".join([BASE_SYSTEM, *(text for _, text in sections if text)])

    def pre_step(self, turn: int, step: int) -> StepPlan:
        """Seal finished turns (step 1), fold what landed, then build the request context."""
        host = self.host
        limit = self._config.slice.maxStepsPerTurn
        if limit is not None and step > limit:
            host.say(f"slice maxStepsPerTurn={limit} reached")
            return StepPlan("", [], set(), reject={"kind": "blocked"})
        if step == 1:
            seal = slice_policy.plan_seal(host.session, self._config.slice, warned=self._seal_warned)
            for warning in seal.warnings:
                self._seal_warned.add(warning.key)
                host.say(warning.message)
            host.append(seal.events)
        host.append(fold_policy.plan_fold(host.session, self._config.slice))
        system = self.system_prompt()
        # Finalization keeps the schemas (a stable, cacheable head) and forbids calls instead.
        tools = self.tool_schemas()
        limits = self.model_limits()
        window = limits.context_window
        route = adaptive_policy.plan_route(
            host.session,
            self._config.adaptive,
            context_window=window,
            context_tokens=request_tokens(host.session, system, tools) if window else None,
            output_limit=limits.max_output_tokens,
        )
        host.append(list(route.events))
        if route.clamped and route.class_max_tokens not in self._clamp_warned:
            self._clamp_warned.add(route.class_max_tokens)
            host.say(
                f"adaptive: the {route.task_class} cap of {route.class_max_tokens} output tokens is above "
                f"{self.model.model}'s limit; sending max_tokens {route.max_tokens}"
            )
        self._log_header(system, tools)
        effort, warning = slice_policy.default_reasoning_effort(
            self._config.slice,
            None,
            self.model.reasoning_efforts() or None,
            self.model.provider,
            self.model.model,
        )
        if warning and warning not in self._effort_warned:
            self._effort_warned.add(warning)
            host.say(warning)
        return StepPlan(
            system=system,
            tools=tools,
            tool_names={t["name"] for t in tools} if route.tools_allowed else set(),
            tool_choice=None if route.tools_allowed else "none",
            max_tokens=route.cap(None),
            reasoning_effort=effort,
        )

    def hard_step(self, turn: int, step: int) -> bool:
        """True when the adaptive route logged ``(turn, step)`` as its finalization (hard) step."""
        return any(
            data.get("step") == step and data.get("phase") == adaptive_policy.FINALIZATION
            for data in adaptive_policy.turn_routes(self.host.session, turn)
        )

    def _log_header(self, system: str, tools: list[dict[str, Any]]) -> None:
        session = self.host.session
        header = {
            "config": {"provider": self.model.provider, "model": self.model.model},
            "system": system,
            "tools": tools,
        }
        previous = session.request_header()
        if previous == header:
            return
        if previous is None:
            reason = "initial"
        elif session.request_header_seq is not None and self._resumed_since(session.request_header_seq):
            reason = "resume"
        else:
            reason = "change"
        self.host.append([{"type": "request/header", "data": {"header": header, "reason": reason}}])

    def _resumed_since(self, seq: int) -> bool:
        events = self.host.session.events
        return any(
            events[s].get("type") == "tapedeck/host" and (events[s].get("data") or {}).get("resumed")
            for s in range(seq + 1, self.host.session.next_seq)
        )

    # policy-owned tools ------------------------------------------------------------------------------------
    def run_tool(self, name: str, arguments: str, turn: int, step: int) -> CallResult | None:
        """Run the recall family, checkpoint and rewind; None for tools the workspace toolbox handles."""
        session = self.host.session
        if name in recall_policy.RECALL_TOOLS:
            recalled = recall_policy.run_recall_tool(session, name, arguments)
            return CallResult(recalled.text, recalled.is_error)
        if name == checkpoint_policy.CHECKPOINT_TOOL_NAME:
            try:
                objective = checkpoint_policy.parse_checkpoint_arguments(arguments)
                [event] = checkpoint_policy.plan_checkpoint(session, objective, by="model")
            except TapedeckError as exc:
                return CallResult(f"Error: {exc}", True)
            result = checkpoint_policy.checkpoint_result(event)
            text = checkpoint_policy.render_checkpoint_result(result, self._config.rewind.tool_name)
            return CallResult(text, False, meta=result, before=[event])
        if name == self._config.rewind.tool_name:
            try:
                mark_id = rewind_policy.parse_rewind_arguments(arguments)
                plan = rewind_policy.plan_rewind(
                    session,
                    self._config.rewind,
                    self.report_writer(),
                    by="model",
                    mark_id=mark_id,
                    commit=self.host.append,
                )
            except rewind_policy.RewindError as exc:
                return CallResult(f"Error: {exc}", True, {"name": "RewindError", "code": exc.code})
            except ReportError as exc:
                return CallResult(f"Error: {exc}", True, {"name": "ReportError", "code": "REPORT_FAILED"})
            return CallResult(rewind_policy.rewind_tool_result(plan.result), False, meta=plan.result)
        return None

    def spill(
        self, outcome: CallResult, name: str, arguments: str, turn: int, step: int, call_id: str
    ) -> CallResult:
        """A workspace tool's result, or its spill: the full text stored beside the log, a digest logged.

        Seed 000's spill arm: an output of at least ``fold.spillPreviewMinBytes`` UTF-8 bytes (not an error, a
        file read or a recall tool; not pinned or backed off) is written to ``spill/`` in the session
        directory and logged as a digest whose first line names the file; ``expand_result`` reads it back.
        """
        session = self.host.session
        digest = fold_policy.spill_digest(
            session, self._config.slice, tool=name, arguments=arguments, text=outcome.text, step=step,
            is_error=outcome.is_error,
        )  # fmt: skip
        if digest is None or session.path is None:
            return outcome
        data = outcome.text.encode("utf-8", "replace")
        locator = f"{SPILL_DIR}/{turn}-{step}-{_file_safe(call_id)}.txt"
        path = session.path.parent / locator
        path_for = fold_policy.argument_path(fold_policy.parse_arguments(arguments))
        view = fold_policy.render_spill_view(name, path_for, digest, len(data), locator, SPILL_HINT)
        if view is None:
            return outcome
        try:
            path.parent.mkdir(exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        except OSError as exc:
            self.host.say(f"spill: cannot store {locator} ({exc.strerror or exc}); logging the whole output")
            return outcome
        return CallResult(view, outcome.is_error, outcome.error, outcome.meta, list(outcome.before))

    def turn_stopping(self, turn: int) -> dict[str, Any] | None:
        """The guard: one reminder per turn while a checkpoint is active."""
        planned = rewind_policy.plan_turn_guard(self.host.session, turn, self._config.rewind)
        return planned[0] if planned else None

    # control -----------------------------------------------------------------------------------------------
    # Each returns the events to log with the request's outcome and the outcome's detail; a TapedeckError says
    # why the request cannot be applied.
    def op_checkpoint(self, args: dict[str, Any], _request: dict[str, Any]) -> Answer:
        """Place a checkpoint mark at the end of the log."""
        [event] = checkpoint_policy.plan_checkpoint(self.host.session, args.get("objective"), by="operator")
        return [event], checkpoint_policy.checkpoint_result(event)

    def op_rewind(self, args: dict[str, Any], _request: dict[str, Any]) -> Answer:
        """Fold everything after a checkpoint mark into a report."""
        session = self.host.session
        plan = rewind_policy.plan_rewind(
            session,
            self._config.rewind,
            self.report_writer(),
            by="operator",
            commit=self.host.append,
            mark_id=args.get("markId"),
        )
        detail = {**plan.result, "seq": session.next_seq}
        if args.get("preview") is not None:
            preview = args["preview"]
            steps = sum(1 for _ in session.seqs_of(("step/start",), preview["seq"] + 1))
            detail["preview"] = {**preview, "stepsSince": steps}
        return [], detail

    def op_expand(self, args: dict[str, Any], _request: dict[str, Any]) -> Answer:
        """Put the original of a folded tool result back on the surface."""
        return fold_policy.plan_unfold(self.host.session, args["seq"]), {"seq": args["seq"]}

    def check_expand(self, args: dict[str, Any], _ahead: ValuesView[dict[str, Any]]) -> None:
        """On arrival: a TapedeckError when no later boundary could apply it (its seq is no tool result in the
        log), so it is rejected at once."""
        fold_policy.check_unfold_target(self.host.session, args["seq"])

    def check_config_set(self, args: dict[str, Any], ahead: ValuesView[dict[str, Any]]) -> None:
        """On arrival: the ConfigError applying it would raise on top of the config in force and the ``config.set``
        requests ``ahead`` of it (those that apply), so a refused value is rejected at once, not at the next step.

        Each waiting request is taken in once: the configs they make are kept until ``forget_ahead``."""
        config = self._made[-1] if self._made else self._config
        for earlier in reversed(list(itertools.islice(reversed(ahead), len(ahead) - len(self._made)))):
            with contextlib.suppress(ConfigError):
                config = _with_value(config, earlier)[0]
            self._made.append(config)
        _with_value(config, args)

    def forget_ahead(self, op: str, position: int) -> None:
        """The operator took the ``op`` request waiting at ``position`` out of those ahead (a withdrawal; 0 at a
        step, which answers them all): what they made from there on no longer stands."""
        if op == "config.set":
            del self._made[position:]

    def op_config_set(self, args: dict[str, Any], request: dict[str, Any]) -> Answer:
        """Change one dotted policy config key."""
        key = args["key"]
        new, old = _with_value(self._config, args)
        self._config = new
        effective = new.get(key)
        return [config_event({key: (old, effective)}, "operator", request["id"])], {
            "key": key,
            "old": old,
            "new": effective,
        }
