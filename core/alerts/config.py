"""The ``alerts`` config section: which alert rules run, their thresholds, their actions and how they are delivered.

    [alerts]
    bell = true                   # ring the terminal bell on an alert (the TUI)
    notify = true                 # desktop notification through OSC 9 and OSC 777 (the TUI)
    [alerts.errorStreak]
    count = 3                     # failed tool results in a row
    [alerts.stalled]
    seconds = 300                 # running, but nothing written for this long
    [alerts.context]
    percent = 85                  # context used, as % of the model's window
    [alerts.cacheBreak]
    tokens = 50000                # one cache break re-billing this many input tokens …
    usd = 0.05                    # … or this many dollars
    [alerts.budget]
    usd = 10                      # session cost
    action = "none"               # or "pause"
    [alerts.runRate]
    usdPerHour = 5                # spend over the last windowMinutes, per hour
    windowMinutes = 10
    action = "none"               # or "pause"
    [alerts.loop]
    count = 3                     # the same tool call with the same arguments, in one turn
    action = "none"               # or "message", sending ``message`` to the agent
    message = "…"

Every rule table also takes ``enabled = false`` to turn the rule off (``waiting``, ``hostDied``, ``turnError``,
``rewindGuard``, ``classChange`` and ``unreachable`` have nothing else to set).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any

from core.shared.errors import ConfigError, unknown_config_key
from core.shared.records import record
from core.shared.text import plain_number, shown

# cause id -> the rule's config table
RULE_KEYS: dict[str, str] = {
    "error-streak": "errorStreak",
    "stalled": "stalled",
    "waiting": "waiting",
    "context": "context",
    "cache-break": "cacheBreak",
    "budget": "budget",
    "run-rate": "runRate",
    "loop": "loop",
    "host-died": "hostDied",
    "turn-error": "turnError",
    "rewind-guard": "rewindGuard",
    "class-change": "classChange",
    "unreachable": "unreachable",
}
CAUSES: tuple[str, ...] = tuple(RULE_KEYS)
DEFAULT_LOOP_MESSAGE = (
    "tapedeck noticed the same tool call with the same arguments several times in this turn. Its result will "
    "not change: use what you already have, or try a different approach."
)
# per rule: its numeric settings (key -> (default, lowest, highest, whole number)) and the actions it may take
_NUMBERS: dict[str, dict[str, tuple[float, float, float, bool]]] = {
    "errorStreak": {"count": (3, 1, 1_000_000, True)},
    "stalled": {"seconds": (300, 1, 10_000_000, False)},
    "context": {"percent": (85, 1, 100, False)},
    "cacheBreak": {"tokens": (50_000, 0, 1e12, True), "usd": (0.05, 0, 1e9, False)},
    "budget": {"usd": (10, 0, 1e9, False)},
    "runRate": {"usdPerHour": (5, 0, 1e9, False), "windowMinutes": (10, 1, 10_080, False)},
    "loop": {"count": (3, 2, 1_000_000, True)},
}
ACTIONS: dict[str, tuple[str, ...]] = {"budget": ("none", "pause"), "runRate": ("none", "pause"), "loop": ("none", "message")}


@record(frozen=True, slots=True)
class RuleConfig:
    """One rule: on or off, its numbers (by config key), its action (``none`` for rules that cannot act)."""

    enabled: bool = True
    numbers: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    action: str = "none"
    message: str | None = None

    def __getitem__(self, key: str) -> float:
        return self.numbers[key]


@record(frozen=True, slots=True)
class AlertsConfig:
    """The validated ``alerts`` section."""

    rules: Mapping[str, RuleConfig]  # by cause id
    bell: bool = True
    notify: bool = True

    def rule(self, cause: str) -> RuleConfig:
        """The settings of the rule raising ``cause``."""
        return self.rules[cause]

    def enabled(self, cause: str) -> bool:
        """Whether the rule raising ``cause`` runs."""
        return self.rules[cause].enabled

    @property
    def acts(self) -> bool:
        """Whether any rule has an action turned on."""
        return any(r.enabled and r.action != "none" for r in self.rules.values())

    def to_dict(self) -> dict[str, Any]:
        """The effective values under their config key names."""
        out: dict[str, Any] = {"bell": self.bell, "notify": self.notify}
        for cause, key in RULE_KEYS.items():
            rule = self.rules[cause]
            table: dict[str, Any] = {"enabled": rule.enabled, **rule.numbers}
            if key in ACTIONS:
                table["action"] = rule.action
            if key == "loop":
                table["message"] = rule.message
            out[key] = table
        return out


def _number(where: str, value: object, low: float, high: float, whole: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where} must be a number (got {shown(value)})")
    if whole and not float(value).is_integer():
        raise ConfigError(f"{where} must be a whole number (got {shown(value)})")
    if not low <= value <= high:
        raise ConfigError(f"{where} must be from {plain_number(low)} to {plain_number(high)} (got {shown(value)})")
    return int(value) if whole else value


def _rule(key: str, raw: object) -> RuleConfig:
    where = f"alerts.{key}"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a table/object (got {shown(raw)})")
    numbers = _NUMBERS.get(key, {})
    allowed = ("enabled", *numbers, *(("action",) if key in ACTIONS else ()), *(("message",) if key == "loop" else ()))
    for name in raw:
        if name not in allowed:
            raise unknown_config_key(name, allowed, where)
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{where}.enabled must be true or false (got {shown(enabled)})")
    values = {
        name: _number(f"{where}.{name}", raw.get(name, default), low, high, whole)
        for name, (default, low, high, whole) in numbers.items()
    }
    action = raw.get("action", "none")
    if key in ACTIONS and action not in ACTIONS[key]:
        raise ConfigError(f"{where}.action must be one of {', '.join(ACTIONS[key])} (got {shown(action)})")
    message = None
    if key == "loop":
        message = raw.get("message", DEFAULT_LOOP_MESSAGE)
        if not isinstance(message, str) or not message.strip():
            raise ConfigError(f"{where}.message must be a non-empty string (got {shown(message)})")
    return RuleConfig(enabled, MappingProxyType(values), str(action), message)


def validate(raw: Mapping[str, object]) -> AlertsConfig:
    """Check a raw ``alerts`` mapping and return the frozen config; raises ConfigError naming the key."""
    known = ("bell", "notify", *RULE_KEYS.values())
    for name in raw:
        if name not in known:
            raise unknown_config_key(name, known, "alerts")
    flags = {}
    for name in ("bell", "notify"):
        value = raw.get(name, True)
        if not isinstance(value, bool):
            raise ConfigError(f"alerts.{name} must be true or false (got {shown(value)})")
        flags[name] = value
    rules = {cause: _rule(key, raw.get(key, {})) for cause, key in RULE_KEYS.items()}
    return AlertsConfig(MappingProxyType(rules), **flags)
