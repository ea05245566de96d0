"""The ``adaptive`` config section (seed 004 keys verbatim) and its validator.

Three tables, each with the seed's defaults: ``taskProfiles`` (exactly one profile per task class: output cap and
soft/hard step budgets), ``pruneLevels`` (ordered from mildest to harshest: step and pressure triggers plus the
pruner budgets) and ``riskRouter`` (the checkpoint risk router's switches and input bounds). Error messages are
the seed's, prefixed ``adaptive-agent-policy:``, and name the value given (``(got "4k")``, ``shown``) or that it is
missing; the pruner budgets keep their own ``ToolResultPruneConfig:`` messages. Messages for shapes the seed's schema loader rejected on its own (unknown keys, wrong types) are ours.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.shared.errors import ConfigError, unknown_config_key
from core.shared.text import quoted, shown
from core.shared.values import whole_number

PREFIX = "adaptive-agent-policy: "
# What the pruner puts in place of a result's middle; a budget must leave room for it (``_budget``).
PRUNE_MARKER = "\n\n[... tool result middle pruned ...]\n\n"
TASK_CLASSES = ("read", "small", "frontend", "large", "batch")
SECTION_KEYS = ("taskProfiles", "pruneLevels", "riskRouter", "pruneSchedule")
CACHE_AWARE, STEP_SCHEDULE = "cache-aware", "step"
PRUNE_SCHEDULES = (CACHE_AWARE, STEP_SCHEDULE)
PROFILE_KEYS = ("taskClass", "maxTokens", "softStepBudget", "hardStepBudget")
BUDGET_KEYS = ("thresholdChars", "headChars", "tailChars")
LEVEL_KEYS = (
    "name",
    "atStep",
    "atPressureRatio",
    *BUDGET_KEYS,
    "protectRecentSteps",
    "minimumCharsRemoved",
)
ROUTER_KEYS = ("enabled", "minimumScore", "maxRequestChars", "maxEvidenceChars", "skipCovered")


@dataclass(frozen=True, slots=True)
class TaskProfile:
    """Output cap and step budgets of one task class."""

    task_class: str
    max_tokens: int
    soft_step_budget: int
    hard_step_budget: int

    def to_dict(self) -> dict[str, object]:
        """The profile under the seed's key names."""
        return {
            "taskClass": self.task_class,
            "maxTokens": self.max_tokens,
            "softStepBudget": self.soft_step_budget,
            "hardStepBudget": self.hard_step_budget,
        }


@dataclass(frozen=True, slots=True)
class PruneBudget:
    """The tool-result pruner's character budgets (``ToolResultPruneConfig``), in code points."""

    threshold_chars: int = 8192
    head_chars: int = 4096
    tail_chars: int = 1024

    def to_dict(self) -> dict[str, int]:
        """The budgets under the seed's key names."""
        return {
            "thresholdChars": self.threshold_chars,
            "headChars": self.head_chars,
            "tailChars": self.tail_chars,
        }


@dataclass(frozen=True, slots=True)
class PruneLevel:
    """One pruning tier: when it applies (step or context pressure) and how hard it prunes."""

    name: str
    at_step: int
    at_pressure_ratio: float
    budget: PruneBudget
    protect_recent_steps: int
    minimum_chars_removed: int

    def to_dict(self) -> dict[str, object]:
        """The level under the seed's (flat) key names."""
        return {
            "name": self.name,
            "atStep": self.at_step,
            "atPressureRatio": self.at_pressure_ratio,
            **self.budget.to_dict(),
            "protectRecentSteps": self.protect_recent_steps,
            "minimumCharsRemoved": self.minimum_chars_removed,
        }


@dataclass(frozen=True, slots=True)
class RiskRouterConfig:
    """Switches and input bounds (UTF-16 units) of the checkpoint risk router."""

    enabled: bool = True
    minimum_score: int = 4
    max_request_chars: int = 4096
    max_evidence_chars: int = 8192
    skip_covered: bool = True

    def to_dict(self) -> dict[str, object]:
        """The settings under the seed's key names."""
        return {
            "enabled": self.enabled,
            "minimumScore": self.minimum_score,
            "maxRequestChars": self.max_request_chars,
            "maxEvidenceChars": self.max_evidence_chars,
            "skipCovered": self.skip_covered,
        }


DEFAULT_TASK_PROFILES = (
    TaskProfile("read", 16384, 4, 8),
    TaskProfile("small", 32768, 5, 9),
    TaskProfile("frontend", 32768, 8, 14),
    TaskProfile("large", 65536, 10, 18),
    TaskProfile("batch", 65536, 10, 20),
)
DEFAULT_PRUNE_LEVELS = (
    PruneLevel("moderate", 6, 0.45, PruneBudget(16384, 12288, 2048), 2, 8192),
    PruneLevel("tight", 10, 0.65, PruneBudget(8192, 4096, 1024), 1, 4096),
    PruneLevel("critical", 14, 0.75, PruneBudget(4096, 2048, 1024), 1, 2048),
)


@dataclass(frozen=True, slots=True)
class AdaptiveConfig:
    """The validated adaptive policy: profiles in config order, levels mildest first, router settings."""

    task_profiles: tuple[TaskProfile, ...] = DEFAULT_TASK_PROFILES
    prune_levels: tuple[PruneLevel, ...] = DEFAULT_PRUNE_LEVELS
    risk_router: RiskRouterConfig = RiskRouterConfig()
    prune_schedule: str = CACHE_AWARE  # tapedeck's key: when the tiers' prunes are written (see adaptive.py)

    def profile(self, task_class: str) -> TaskProfile:
        """The profile of ``task_class`` (validation guarantees there is exactly one)."""
        return next(p for p in self.task_profiles if p.task_class == task_class)

    def to_dict(self) -> dict[str, object]:
        """Every effective value under the seed's key names."""
        return {
            "taskProfiles": [p.to_dict() for p in self.task_profiles],
            "pruneLevels": [level.to_dict() for level in self.prune_levels],
            "riskRouter": self.risk_router.to_dict(),
            "pruneSchedule": self.prune_schedule,
        }


# ---------------------------------------------------------------------------------------------- helpers
def js_string(value: object) -> str:
    """``String(value)`` as JavaScript renders a JSON value inside the seed's messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, list | tuple):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, Mapping):
        return "[object Object]"
    return str(value)


def _fail(message: str) -> ConfigError:
    return ConfigError(PREFIX + message)


def _table(value: object, where: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise _fail(f"{where} must be a table/object (got {shown(value)})")
    return value


def _known(raw: Mapping[str, object], allowed: Sequence[str], where: str | None) -> None:
    """Refuse a key of ``raw`` not in ``allowed``, ``where`` the table's place in the section (None: the section)."""
    for key in raw:
        if key not in allowed:
            raise unknown_config_key(key, allowed, "adaptive" + (f".{where}" if where else ""))


def _list(raw: Mapping[str, object], key: str) -> list[Mapping[str, object]]:
    value = raw[key]
    if not isinstance(value, list | tuple):
        raise _fail(f"{key} must be a list (got {shown(value)})")
    return [_table(entry, f"{key}[{i}]") for i, entry in enumerate(value)]


_ABSENT = object()  # a key an entry does not hold (``entry.get(key, _ABSENT)``), told apart from a null


def _given(value: object) -> str:
    """What a refusal says was given: ``got`` the value (``shown``: escaped, cut), or ``missing``."""
    return "missing" if value is _ABSENT else f"got {shown(value)}"


def _positive(name: str, value: object) -> int:
    number = whole_number(value)
    if number is None or number < 1:
        raise _fail(f"{name} must be a positive integer ({_given(value)})")
    return number


def _non_negative(name: str, value: object) -> int:
    number = whole_number(value)
    if number is None or number < 0:
        raise _fail(f"{name} must be a non-negative integer ({_given(value)})")
    return number


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _fail(f"{name} must be true or false ({_given(value)})")
    return value


# ---------------------------------------------------------------------------------------------- budgets
def validate_prune_budget(raw: Mapping[str, object]) -> PruneBudget:
    """Check a ``ToolResultPruneConfig`` mapping (missing keys take the pruner defaults)."""
    for key in raw:
        if key not in BUDGET_KEYS:
            raise ConfigError(
                f'ToolResultPruneConfig: unknown key "{quoted(key)}" (allowed: {", ".join(BUDGET_KEYS)})'
            )
    defaults = PruneBudget()
    values = {
        "thresholdChars": raw.get("thresholdChars", defaults.threshold_chars),
        "headChars": raw.get("headChars", defaults.head_chars),
        "tailChars": raw.get("tailChars", defaults.tail_chars),
    }
    numbers: dict[str, int] = {}
    for key, low, rule in (
        ("thresholdChars", 1, "a positive integer"),
        ("headChars", 0, "a non-negative integer"),
        ("tailChars", 0, "a non-negative integer"),
    ):
        number = whole_number(values[key])
        if number is None or number < low:
            raise ConfigError(
                f"ToolResultPruneConfig: {key} ({quoted(js_string(values[key]))}) must be {rule}"
            )
        numbers[key] = number
    emitted = numbers["headChars"] + len(PRUNE_MARKER) + numbers["tailChars"]
    if emitted > numbers["thresholdChars"]:
        raise ConfigError(
            f"ToolResultPruneConfig: headChars + marker + tailChars ({emitted}) "
            f"must be at most thresholdChars ({numbers['thresholdChars']})"
        )
    return PruneBudget(numbers["thresholdChars"], numbers["headChars"], numbers["tailChars"])


# ---------------------------------------------------------------------------------------------- sections
def _profiles(entries: list[Mapping[str, object]]) -> tuple[TaskProfile, ...]:
    profiles: list[TaskProfile] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        where = f"taskProfiles[{i}]"
        _known(entry, PROFILE_KEYS, where)
        task_class = entry.get("taskClass", _ABSENT)
        if not isinstance(task_class, str) or task_class not in TASK_CLASSES:
            raise _fail(
                f"{where}.taskClass is invalid ({_given(task_class)}; one of {', '.join(TASK_CLASSES)})"
            )
        if task_class in seen:
            raise _fail(f'duplicate task profile "{task_class}"')
        seen.add(task_class)
        max_tokens = _positive(f"{where}.maxTokens", entry.get("maxTokens", _ABSENT))
        soft = _positive(f"{where}.softStepBudget", entry.get("softStepBudget", _ABSENT))
        hard = _positive(f"{where}.hardStepBudget", entry.get("hardStepBudget", _ABSENT))
        if hard <= soft:
            raise _fail(f"{where}.hardStepBudget must exceed softStepBudget")
        profiles.append(TaskProfile(task_class, max_tokens, soft, hard))
    missing = [c for c in TASK_CLASSES if c not in seen]
    if missing:
        raise _fail(f"missing task profiles: {', '.join(missing)}")
    return tuple(profiles)


def _ratio(name: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise _fail(f"{name} must be between 0 and 1 ({_given(value)})")
    return float(value)


def _levels(entries: list[Mapping[str, object]]) -> tuple[PruneLevel, ...]:
    levels: list[PruneLevel] = []
    names: set[str] = set()
    previous: PruneLevel | None = None
    for i, entry in enumerate(entries):
        where = f"pruneLevels[{i}]"
        _known(entry, LEVEL_KEYS, where)
        name = entry.get("name", "")
        if not isinstance(name, str):
            raise _fail(f"{where}.name must be a string ({_given(name)})")
        if not name:
            raise _fail(f"{where}.name must not be empty")
        if name in names:
            raise _fail(f'duplicate prune level "{quoted(name)}"')
        names.add(name)
        level = PruneLevel(
            name=name,
            at_step=_positive(f"{where}.atStep", entry.get("atStep", _ABSENT)),
            at_pressure_ratio=_ratio(f"{where}.atPressureRatio", entry.get("atPressureRatio", _ABSENT)),
            protect_recent_steps=_non_negative(
                f"{where}.protectRecentSteps", entry.get("protectRecentSteps", _ABSENT)
            ),
            minimum_chars_removed=_non_negative(
                f"{where}.minimumCharsRemoved", entry.get("minimumCharsRemoved", _ABSENT)
            ),
            budget=validate_prune_budget({k: entry[k] for k in BUDGET_KEYS if k in entry}),
        )
        if previous is not None and (
            level.at_step < previous.at_step
            or level.at_pressure_ratio < previous.at_pressure_ratio
            or level.budget.threshold_chars >= previous.budget.threshold_chars
        ):
            raise _fail("pruneLevels must increase triggers and strictly decrease thresholds")
        previous = level
        levels.append(level)
    return tuple(levels)


def _router(raw: Mapping[str, object]) -> RiskRouterConfig:
    _known(raw, ROUTER_KEYS, "riskRouter")
    defaults = RiskRouterConfig()
    return RiskRouterConfig(
        enabled=_flag("riskRouter.enabled", raw.get("enabled", defaults.enabled)),
        minimum_score=_positive("riskRouter.minimumScore", raw.get("minimumScore", defaults.minimum_score)),
        max_request_chars=_positive(
            "riskRouter.maxRequestChars", raw.get("maxRequestChars", defaults.max_request_chars)
        ),
        max_evidence_chars=_positive(
            "riskRouter.maxEvidenceChars", raw.get("maxEvidenceChars", defaults.max_evidence_chars)
        ),
        skip_covered=_flag("riskRouter.skipCovered", raw.get("skipCovered", defaults.skip_covered)),
    )


def validate(raw: Mapping[str, object]) -> AdaptiveConfig:
    """Check a raw ``adaptive`` mapping and return the frozen config; raises ConfigError with the seed's text."""
    raw = _table(raw, "config")
    _known(raw, SECTION_KEYS, None)
    schedule = raw.get("pruneSchedule", CACHE_AWARE)
    if schedule not in PRUNE_SCHEDULES:
        raise _fail(f"pruneSchedule must be one of {', '.join(PRUNE_SCHEDULES)} (got {shown(schedule)})")
    return AdaptiveConfig(
        prune_schedule=str(schedule),
        task_profiles=_profiles(_list(raw, "taskProfiles"))
        if "taskProfiles" in raw
        else DEFAULT_TASK_PROFILES,
        prune_levels=_levels(_list(raw, "pruneLevels")) if "pruneLevels" in raw else DEFAULT_PRUNE_LEVELS,
        risk_router=_router(_table(raw["riskRouter"], "riskRouter"))
        if "riskRouter" in raw
        else RiskRouterConfig(),
    )
