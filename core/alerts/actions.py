"""What an alert does beyond telling the operator: a control request to the session's host, when its rule says so.

Actions are off unless configured (``alerts.budget.action = "pause"``, ``alerts.runRate.action = "pause"``,
``alerts.loop.action = "message"`` with ``alerts.loop.message``). Each goes through the control inbox like an
operator's request, with ``origin`` ``alert:<cause>``, so its outcome in the log says which rule sent it.

Two places can act. A tapedeck host whose own config turns an action on evaluates the rules over its own events
(``HostGuard``): the request is in its inbox before its next model call, which it then never starts while
paused. A watcher (the TUI, ``tapedeck alerts --follow``) acts on a live host that does not guard itself (a DSH
run with the bridge, or a tapedeck host started without the action), and leaves alone the rules that host acts on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.alerts.config import RULE_KEYS, AlertsConfig
from core.alerts.engine import Alert, AlertEngine
from core.control.inbox import append_request
from core.shared.model_specs import ModelConfig


def origin_of(cause: str) -> str:
    """The ``origin`` of the control requests the rule raising ``cause`` sends."""
    return f"alert:{cause}"


def action_request(alert: Alert, config: AlertsConfig) -> tuple[str, dict[str, Any]] | None:
    """The control request (op, args) the alert's rule sends, or None when it takes no action."""
    rule = config.rule(alert.cause)
    if rule.action == "pause":
        return "pause", {}
    if rule.action == "message" and rule.message:
        return "message", {"text": rule.message}
    return None


def send_action(
    alert: Alert, config: AlertsConfig, inbox: str | os.PathLike[str], check: Callable[[], None] | None = None
) -> dict[str, Any] | None:
    """Append the alert's action to ``inbox`` (a ControlError when it cannot be written, or when ``check``, called
    under the inbox's lock as ``append_request`` does, refuses it); the request, or None when the rule takes no
    action."""
    found = action_request(alert, config)
    if found is None:
        return None
    op, args = found
    return append_request(inbox, op, args, check=check, origin=origin_of(alert.cause))


class HostGuard:
    """A tapedeck host's own alert rules with actions: fed every event the host appends, it puts each action's
    request in the host's inbox at once (the host reads it at its next boundary, before the next model call).

    A guard made while the session is already over one of its lines (the host resumed a log past its budget, or
    an action was turned on, or a limit lowered, below what was spent) acts on it once, at its first evaluation,
    naming the newest seq then: the line is crossed for this guard when it starts. A guard remade with the same
    rule as the one before it (another key of the alerts config changed) leaves a line that one acted on alone.
    """

    def __init__(self, config: AlertsConfig, models: ModelConfig | None, inbox: Path, header: Mapping[str, Any]) -> None:
        acting = {cause for cause, rule in config.rules.items() if rule.enabled and rule.action != "none"}
        raw = {key: {"enabled": cause in acting} for cause, key in RULE_KEYS.items()}
        from core.alerts.config import validate

        only = validate({**raw, **{RULE_KEYS[c]: config.to_dict()[RULE_KEYS[c]] for c in acting}})
        self.config = config
        self.inbox = inbox
        self.engine = AlertEngine(only, models, path=str(inbox.parent))
        self.engine.start(header)
        self.sent: list[dict[str, Any]] = []
        self._standing: list[str] = []  # causes over their line when primed, acted on at the first evaluation

    def prime(self, events: Iterable[Mapping[str, Any]], settled: HostGuard | None = None) -> None:
        """Fold what the log held before this guard was made (the host started, resumed, or its alerts config
        changed), acting on none of it yet: the lines it is over then are acted on at the next ``observe``, but
        those ``settled`` (the guard this one replaces) was over already with the same rule."""
        self.engine.feed(events)
        self._standing = [
            cause for cause in self.engine.active
            if settled is None or cause not in settled.engine.active or settled.config.rule(cause) != self.config.rule(cause)
        ]  # fmt: skip

    def observe(self, events: Iterable[Mapping[str, Any]]) -> list[Alert]:
        """Fold the host's newly appended events; send the actions of the alerts they raise (and, the first time,
        of the lines the guard was made over). Returns the alerts acted on."""
        raised = self.engine.feed(events)
        standing, self._standing = self._standing, []
        fresh = {alert.cause for alert in raised}
        signals = self.engine.signals
        raised += [replace(self.engine.active[c], seq=signals.seq, at=signals.last_time)
                   for c in standing if c in self.engine.active and c not in fresh]  # fmt: skip
        acted = []
        for alert in raised:
            request = send_action(alert, self.config, self.inbox)
            if request is not None:
                self.sent.append(request)
                acted.append(alert)
        return acted
