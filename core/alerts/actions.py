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
from collections.abc import Iterable, Mapping
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


def send_action(alert: Alert, config: AlertsConfig, inbox: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Append the alert's action to ``inbox`` (a ControlError when it cannot be written); the request, or None
    when the rule takes no action."""
    found = action_request(alert, config)
    if found is None:
        return None
    op, args = found
    return append_request(inbox, op, args, origin=origin_of(alert.cause))


class HostGuard:
    """A tapedeck host's own alert rules with actions: fed every event the host appends, it puts each action's
    request in the host's inbox at once (the host reads it at its next boundary, before the next model call)."""

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

    def prime(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Fold what the log held before this guard was made (the host started, resumed, or its alerts config
        changed), acting on none of it: a guard acts on the crossings that come after it."""
        self.engine.feed(events)

    def observe(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Fold the host's newly appended events; send the actions of the alerts they raise."""
        for alert in self.engine.feed(events):
            request = send_action(alert, self.config, self.inbox)
            if request is not None:
                self.sent.append(request)
