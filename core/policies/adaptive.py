"""The adaptive policy (seed 004): task router, output caps, step budgets, phases and progressive pruning.

Before each model call the host asks ``plan_route`` what the step may do. The answer is derived from the log
alone, so a restarted host decides what the previous one would have:

1. The newest human request (``newest_request_text``) is classified into ``read``, ``small``, ``frontend``,
   ``large`` or ``batch`` (``classify_task``); no request at all counts as ``small``.
2. The class's profile gives the output cap and the soft and hard step budgets. The step being planned is
   the open turn's step in progress (its ``step/start`` logged, no ``step/end`` yet), else the next one.
   Phase: ``finalization`` from the hard budget on (no tools), ``checkpoint`` from the soft budget on,
   ``normal`` before.
3. At the first checkpoint step of a turn the risk router runs over the request and the newest tool results;
   its decision is logged and every later checkpoint step of the turn reuses it, so the checkpoint text
   stays the same for the whole phase.
4. Pruning level: the last level whose ``atStep`` the step has reached or whose ``atPressureRatio`` the
   context pressure (``context_tokens / context_window``) has reached; without a known window only steps
   count. Within one step the level never drops (a prune that relieves pressure does not flip the level
   back), and each level prunes at most once per step. The ``cache-aware`` schedule writes a tier's prunes only
   at the moments ``prune_moment`` names; without a known window it prunes on the seed's step schedule.
5. Everything decided is planned as one ``tapedeck/route`` event (``"ignorable": true``), after the prune
   events it explains. Planning again with nothing changed plans no event.

The phase text (the seed's system section) is returned to the host and never written to the log as a message.
It is fixed per (class, phase, frozen risk decision), so it is byte-stable within a phase;
``core.policies.phase_notes`` decides where it goes in a request: the normal phase's standing instruction is a
system-prompt section (``prompt_section``), checkpoint and finalization texts are notes pinned where their
phase began, so the prompt prefix stays cacheable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.log.vocabulary import ROUTE_EVENT
from core.policies.adaptive_config import STEP_SCHEDULE, AdaptiveConfig, PruneLevel, TaskProfile
from core.policies.pruner import PrunePlan, plan_prune
from core.policies.risk import (
    ALREADY_COVERED,
    RiskDecision,
    build_evidence,
    js_pattern,
    risk_checkpoint,
    route_risk,
)
from core.read.session import Session
from core.shared.errors import TapedeckError
from core.shared.text import text_of_blocks, utf16_len

NORMAL, CHECKPOINT, FINALIZATION = "normal", "checkpoint", "finalization"
LARGE_REQUEST_UNITS = 1500
DEFAULT_CLASS = "small"

_BATCH = js_pattern(
    r"(?:批量|所有文件|全部文件|全仓库|全局替换|大规模迁移|代码迁移)"
    r"|(?:monorepo|all\s+files|across\s+the\s+(?:repo|repository)|mass\s+(?:change|edit)|codemod|bulk)"
)
_FRONTEND = js_pattern(
    r"(?:网页|页面|网站|前端|静态页|落地页|仪表盘|响应式|界面)"
    r"|(?:dashboard|landing\s+page|front[- ]?end|responsive|\bhtml\b|\bcss\b|\bui\b)"
)
_LARGE = js_pattern(
    r"(?:架构|跨模块|跨包|端到端|完整实现|全面重构|重大重构)"
    r"|(?:architecture|cross[- ](?:module|package)|multi[- ]package|end[- ]to[- ]end|large[- ]scale)"
)
_READ = js_pattern(
    r"(?:分析|解释|审查|评估|比较|为什么|原因|诊断|看看|review|analy[sz]e|explain|diagnos|compare|audit|investigate)"
)
_READ_ONLY = js_pattern(
    r"(?:不要修改|无需修改|不用修改|不要改|只读|read[- ]only)"
    r"|(?:do\s+not\s+(?:modify|change|edit)|without\s+(?:modifying|changing|editing))"
)
# No \b on the English words, as in the seed: "address" counts as "add".
_MUTATION = js_pattern(
    r"(?:修改|实现|修复|新增|创建|改造|优化|编写|生成|做一个)"
    r"|(?:build|implement|fix|add|create|change|edit|refactor|optimi[sz]e|write|generate)"
)

POLICY_TEXT = {
    "read": (
        "This request asks for an investigation, not a change. Collect just enough evidence to answer, leave "
        "every file as it is, and stop as soon as the conclusion is supported."
    ),
    "small": (
        "This is a contained change. Look at the target code and the conventions right around it, make the "
        "smallest change that fully solves the request, and confirm it with a narrow existing check."
    ),
    "frontend": (
        "This is user-interface work. Pick a clear visual direction, start building early, and confirm what "
        "the user will see with the checks the project already has."
    ),
    "large": (
        "This change spans several parts of the code. Trace only the architecture, callers, data flow and "
        "tests that matter here, then implement and confirm every contract the change touches."
    ),
    "batch": (
        "This is a batch job. Run independent discovery and edits in groups, keep tool output short, keep the "
        "order wherever one operation depends on another, and confirm a representative sample as well as "
        "the overall result."
    ),
}
CHECKPOINT_TEXT = {
    "read": "Conclude now: answer from the evidence you have, or name the evidence still missing.",
    "small": "Wrap up: run an existing narrow check only if the change is still unconfirmed, then finish.",
    "frontend": (
        "Wrap up: no new previews or browser tooling; run an existing check only if the visible change is still "
        "unconfirmed, then finish."
    ),
    "large": (
        "Stop exploring: run an existing targeted check only for a touched contract that is still unconfirmed, "
        "then finish or name the blocker."
    ),
    "batch": (
        "Stop exploring: rely on the sample and aggregate evidence you have; run one project check only if the "
        "batch invariant is still unconfirmed, then finish."
    ),
}
RISK_CHECKPOINT_FRAME = "Wrap up now. {check} Change code only where the evidence calls for it, then finish."
COVERED_TEXT = (
    "Wrap up: recent output already confirms the likeliest risk, so verify nothing more; finish from what you have."
)
FINALIZATION_TEXT = (
    "Step budget used up: no tools in this step. Give the best final answer the work supports and name any "
    "remaining work or blocker."
)
# The standing instruction of every turn, sent once as a system-prompt section (``prompt_section``): the host
# pins a note in the conversation only when a phase that changes what the model should do begins.
STANDING_POLICY = (
    "<task_sizing>\n"
    "Fit the effort to the request. Investigation: just enough evidence, no edits, stop once the answer holds. "
    "Contained change: the smallest complete fix, one narrow existing check. Interface work: a clear visual "
    "direction, built early, checked as the user sees it. Cross-module or batch work: trace only what matters, "
    "short outputs, dependent steps in order, confirm each touched contract (a batch: a sample plus the "
    "aggregate).\n"
    "A checkpoint or finalization note governs the rest of its turn; a newer one replaces an older one.\n"
    "</task_sizing>"
)


class RouteError(TapedeckError):
    """A route cannot be planned (the session has no open turn)."""


# ---------------------------------------------------------------------------------------------- routing
def classify_task(text: str | None) -> str:
    """The task class of a human request; first match wins: batch, frontend, large, read, else small."""
    if not text:
        return DEFAULT_CLASS
    if _BATCH.search(text):
        return "batch"
    if _FRONTEND.search(text):
        return "frontend"
    if _LARGE.search(text) or utf16_len(text) >= LARGE_REQUEST_UNITS:
        return "large"
    if _READ.search(text) and (_READ_ONLY.search(text) or not _MUTATION.search(text)):
        return "read"
    return DEFAULT_CLASS


def newest_request_text(session: Session) -> str | None:
    """Text blocks (joined by newlines) of the newest ``user/message`` whose source kind is ``user``."""
    for seq in range(session.next_seq - 1, -1, -1):
        event = session.events[seq]
        if event.get("type") != "user/message":
            continue
        data = event.get("data") or {}
        source = data.get("source")
        if isinstance(source, Mapping) and source.get("kind") == "user":
            content = data.get("content")
            return text_of_blocks(content if isinstance(content, list) else None, "\n")
    return None


@dataclass(frozen=True, slots=True)
class Position:
    """The turn and step a route is planned for."""

    turn: int
    step: int


def current_position(session: Session) -> Position | None:
    """The open turn's step in progress, else its next step; None when no turn is open."""
    turn = session.open_turn
    if turn is None:
        return None
    steps = session.turns[turn].steps
    if not steps:
        return Position(turn, 1)
    latest = max(steps)
    return Position(turn, latest if steps[latest].end_seq is None else latest + 1)


def phase_for(profile: TaskProfile, step: int) -> str:
    """``finalization`` from the hard budget on, ``checkpoint`` from the soft budget on, else ``normal``."""
    if step >= profile.hard_step_budget:
        return FINALIZATION
    if step >= profile.soft_step_budget:
        return CHECKPOINT
    return NORMAL


def checkpoint_body(task_class: str, decision: RiskDecision) -> str:
    """The checkpoint instruction: the selected risk's check, the covered note, or the class fallback."""
    if task_class == "read":
        return CHECKPOINT_TEXT["read"]
    if decision.risk is not None:
        return RISK_CHECKPOINT_FRAME.format(check=risk_checkpoint(decision.risk))
    if decision.reason == ALREADY_COVERED:
        return COVERED_TEXT
    return CHECKPOINT_TEXT[task_class]


def phase_text(task_class: str, phase: str, decision: RiskDecision | None = None) -> str:
    """The system section for one request, wrapped in the tag tools parse (``decision`` only at checkpoints)."""
    if phase == FINALIZATION:
        return f'<task_finalization class="{task_class}">\n{FINALIZATION_TEXT}\n</task_finalization>'
    if phase == CHECKPOINT:
        body = checkpoint_body(task_class, decision) if decision else CHECKPOINT_TEXT[task_class]
        risk = decision.risk if decision and decision.risk else "none"
        return f'<task_checkpoint class="{task_class}" risk="{risk}">\n{body}\n</task_checkpoint>'
    return f'<task_policy class="{task_class}">\n{POLICY_TEXT[task_class]}\n</task_policy>'


def prompt_section() -> str:
    """The standing task policy for the system prompt: how to size each kind of request, and that a phase
    note, once pinned, governs the rest of its turn (the newest one wins)."""
    return STANDING_POLICY


def pressure_ratio(context_window: int | None, context_tokens: int | None) -> float | None:
    """``context_tokens / context_window``, or None when either is unknown or the window is not positive."""
    if context_window is None or context_tokens is None or context_window <= 0:
        return None
    return context_tokens / context_window


def level_index(levels: tuple[PruneLevel, ...], step: int, pressure: float | None) -> int | None:
    """Index of the last level reached by ``step`` or by ``pressure`` (None: no pressure trigger)."""
    found = None
    for index, level in enumerate(levels):
        if step >= level.at_step or (pressure is not None and pressure >= level.at_pressure_ratio):
            found = index
    return found


def turn_routes(session: Session, turn: int) -> list[dict[str, Any]]:
    """``data`` of every ``tapedeck/route`` event logged for ``turn``, oldest first."""
    routes = []
    for seq in session.seqs_of((ROUTE_EVENT,), session.turns[turn].start_seq):
        event = session.events[seq]
        data = event.get("data")
        if event.get("type") == ROUTE_EVENT and isinstance(data, dict) and data.get("turn") == turn:
            routes.append(data)
    return routes


def logged_risk(routes: list[dict[str, Any]]) -> RiskDecision | None:
    """The newest risk decision among a turn's routes (the one its checkpoint steps share)."""
    for data in reversed(routes):
        risk = data.get("risk")
        if data.get("phase") == CHECKPOINT and isinstance(risk, Mapping):
            decision = RiskDecision.from_dict(risk)
            if decision is not None:
                return decision
    return None


# ---------------------------------------------------------------------------------------------- the plan
@dataclass(frozen=True, slots=True)
class RouteDecision:
    """What one step may do, and the events that record the decision (append them in order).

    ``max_tokens`` is the class's output cap clamped to the model's output limit (see ``cap``; ``class_max_tokens``
    is the unclamped cap); ``tools_allowed`` is False in finalization, when
    the model may not call tools (the host keeps sending the schemas with ``tool_choice: none``, so the
    request prefix stays cacheable); ``phase_text`` is the seed's system section for this request (the host
    sends it as a phase note from the checkpoint on, see ``core.policies.phase_notes``).
    """

    turn: int
    step: int
    task_class: str
    phase: str
    phase_text: str
    max_tokens: int
    tools_allowed: bool
    soft_step_budget: int
    hard_step_budget: int
    risk: RiskDecision | None
    prune_level: str | None
    pressure: float | None
    prune: PrunePlan
    events: tuple[dict[str, Any], ...]
    class_max_tokens: int | None = None

    @property
    def clamped(self) -> bool:
        """True when the model's output limit lowered the class's cap."""
        return self.class_max_tokens is not None and self.class_max_tokens > self.max_tokens

    def cap(self, requested: int | None) -> int:
        """The max tokens to send: ``requested`` when it is already within the cap, else the cap.

        A host whose operator set an explicit max-tokens value keeps it and does not call this.
        """
        return requested if requested is not None and requested <= self.max_tokens else self.max_tokens

    def to_dict(self) -> dict[str, Any]:
        """The logged route data plus the phase text, the planned prunes and the planned event count."""
        return {
            **route_data(self),
            "toolsAllowed": self.tools_allowed,
            "phaseText": self.phase_text,
            "pruned": [p.to_dict() for p in self.prune.pruned],
            "plannedEvents": len(self.events),
        }


def route_data(decision: RouteDecision) -> dict[str, Any]:
    """The ``data`` of the ``tapedeck/route`` event recording ``decision``."""
    return {
        "turn": decision.turn,
        "step": decision.step,
        "taskClass": decision.task_class,
        "phase": decision.phase,
        "caps": {"maxTokens": decision.max_tokens}
        | ({"classMaxTokens": decision.class_max_tokens} if decision.clamped else {}),
        "budgets": {"soft": decision.soft_step_budget, "hard": decision.hard_step_budget},
        "risk": decision.risk.to_dict() if decision.risk else None,
        "pruneLevel": decision.prune_level,
        "pressure": decision.pressure,
        "charsRemoved": decision.prune.chars_removed,
        "prunedSeqs": [p.shadowed_seq for p in decision.prune.pruned],
    }


def plan_route(
    session: Session,
    config: AdaptiveConfig,
    *,
    context_window: int | None,
    context_tokens: int | None,
    output_limit: int | None = None,
    routed_this_turn: bool | None = None,
) -> RouteDecision:
    """Plan the route of the step the open turn is about to run (see the module docstring).

    ``context_window`` is the routed model's window and ``context_tokens`` the size of the request being
    built, both in tokens (either None: no pressure trigger). ``output_limit`` is the most output tokens the
    model accepts: a class cap above it is clamped to it (the seed: "a stricter caller or provider limit always
    wins"). ``routed_this_turn`` says whether the risk
    router already ran in this turn: None (the default) reads it from the log, False forces a fresh routing
    (for instance after the operator changed ``riskRouter``), True reuses the turn's logged decision and
    routes afresh only when the log holds none. Raises RouteError when no turn is open.
    """
    position = current_position(session)
    if position is None:
        raise RouteError("no open turn: a route is planned for the step a running turn is about to take")
    request = newest_request_text(session)
    task_class = classify_task(request)
    profile = config.profile(task_class)
    phase = phase_for(profile, position.step)
    routes = turn_routes(session, position.turn)
    step_routes = [data for data in routes if data.get("step") == position.step]

    risk = None
    if phase == CHECKPOINT:
        risk = None if routed_this_turn is False else logged_risk(routes)
        if risk is None:
            evidence = build_evidence(session, config.risk_router.max_evidence_chars)
            risk = route_risk(task_class, request or "", evidence, config.risk_router)

    pressure = pressure_ratio(context_window, context_tokens)
    index = level_index(config.prune_levels, position.step, pressure)
    names = [level.name for level in config.prune_levels]
    reached = [names.index(d["pruneLevel"]) for d in step_routes if d.get("pruneLevel") in names]
    if reached and (index is None or max(reached) > index):
        index = max(reached)
    level = config.prune_levels[index] if index is not None else None
    prune = PrunePlan()
    if level is not None and all(d.get("pruneLevel") != level.name for d in step_routes):
        milder = names[: names.index(level.name)]
        if config.prune_schedule == STEP_SCHEDULE or pressure is None:
            # Without a known window no pressure can ever force a prune: the cache-aware schedule would let a
            # turn grow unbounded, so the seed's step triggers write the tier's prunes.
            prune = plan_prune(session, level, milder=milder)
        else:
            moment = prune_moment(session, config.prune_levels, position, routes, pressure)
            if moment is not None:
                prune = plan_prune(session, level, milder=milder, eligible=moment)

    decision = RouteDecision(
        turn=position.turn,
        step=position.step,
        task_class=task_class,
        phase=phase,
        phase_text=phase_text(task_class, phase, risk),
        max_tokens=profile.max_tokens if output_limit is None else min(profile.max_tokens, output_limit),
        class_max_tokens=profile.max_tokens,
        tools_allowed=phase != FINALIZATION,
        soft_step_budget=profile.soft_step_budget,
        hard_step_budget=profile.hard_step_budget,
        risk=risk,
        prune_level=level.name if level else None,
        pressure=pressure,
        prune=prune,
        events=(),
    )
    data = route_data(decision)
    events = list(prune.events)
    if prune.events or not step_routes or _decision_part(step_routes[-1]) != _decision_part(data):
        events.append({"type": ROUTE_EVENT, "data": data, "ignorable": True})
    return replace(decision, events=tuple(events))


def _previous_route_seq(session: Session, position: Position) -> int | None:
    """Seq of the newest route event planned for an earlier step (the previous model call's route)."""
    for number in sorted((t for t in session.turns if t <= position.turn), reverse=True):
        found = None
        for seq in session.seqs_of((ROUTE_EVENT,), session.turns[number].start_seq):
            data = session.events[seq].get("data")
            if isinstance(data, Mapping) and (data.get("turn"), data.get("step")) != (position.turn, position.step):
                found = seq
        if found is not None:
            return found
    return None


def prune_moment(
    session: Session,
    levels: tuple[PruneLevel, ...],
    position: Position,
    routes: list[dict[str, Any]],
    pressure: float | None,
) -> Callable[[int], bool] | None:
    """When the cache-aware schedule may write the tier's prunes now, which results it may touch; else None.

    The seed prunes at every step a tier is in force, rewriting results the provider has cached, so each such
    step re-sends everything after the first pruned result at the cache-miss price. This schedule keeps the
    seed's decisions (tier, thresholds, protected steps) and only changes when they are written:

    - a step whose request already differs from what the previous one sent (a seal's tape entries at the
      turn's first step, a rewind report or any other replacement since the previous model call): results
      after the first such replacement may be pruned, since those bytes are re-sent anyway;
    - a tier change under real pressure (the pressure alone reaches a harsher tier than it did at the turn's
      previous route), or a later step of that tier while the crossing's prune is still owed (every route since
      the crossing removed nothing, because the results were in protected recent steps): every result may be
      pruned, since the context must shrink.

    Between those moments a turn's requests stay append-only.
    """
    previous = [d for d in routes if d.get("step") != position.step]
    now = level_index(levels, -1, pressure) if pressure is not None else None
    if now is not None and levels[now].at_pressure_ratio > 0 and _pressure_prune_owed(levels, previous, now):
        return lambda seq: True
    since = _previous_route_seq(session, position)
    surface = session.surface
    start = next(
        (i for i, seq in enumerate(surface) if (since is None or seq > since) and session.is_replacement(seq)), None
    )
    if start is None:
        return None
    after = set(surface[start:])
    return after.__contains__


def _pressure_prune_owed(levels: tuple[PruneLevel, ...], previous: list[dict[str, Any]], now: int) -> bool:
    """True when pressure tier ``now`` was crossed in this turn (or the turn starts in it) and no route since has
    removed anything: the newest earlier routes are walked back to the crossing."""
    for data in reversed(previous):
        before = data.get("pressure")
        then = level_index(levels, -1, before) if isinstance(before, int | float) else None
        if then is None or then < now:
            return True
        if data.get("charsRemoved"):
            return False
    return True


def _decision_part(data: Mapping[str, Any]) -> dict[str, Any]:
    """Route data without what a prune pass removed (a re-plan after a prune repeats the same decision)."""
    return {k: v for k, v in data.items() if k not in ("charsRemoved", "prunedSeqs")}
