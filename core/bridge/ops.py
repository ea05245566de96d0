"""What the bridge plugin accepts beyond our host's ops: the DSH-only arguments and the ``config.set`` keys.

``config.set`` on a DSH session takes ``model`` or ``reasoningEffort`` (this session's next requests; text, or
null to drop the override) or ``<namespace>.<key>`` of one of DSH's live settings (``shell.timeoutMs``), which the
plugin checks against the namespaces the running DSH describes; ``message`` takes ``mode``: ``steer`` enters the
running turn at its next step, ``queue`` waits for the next turn.
"""

from __future__ import annotations

from typing import Any

from core.shared.text import shown

SESSION_KEYS = ("model", "reasoningEffort")
# the keys the Config screen lists for a DSH session: the per-session ones and a common live setting
DSH_CONFIG_KEYS = (*SESSION_KEYS, "shell.timeoutMs")
SUPPORTED = (
    "model, reasoningEffort (this session) or <namespace>.<key> of a live DSH setting, e.g. shell.timeoutMs"
)
MESSAGE_MODES = ("steer", "queue")


def dsh_config_error(key: str, value: Any) -> str | None:
    """Why ``config.set key=value`` cannot be sent to a DSH session, or None when the bridge may take it."""
    if key in SESSION_KEYS:
        if value is None or (isinstance(value, str) and value.strip()):
            return None
        return f"config.set: {key!r} on DSH takes text, or null to drop the override (got {shown(value)})"
    namespace, dot, rest = key.partition(".")
    if namespace and dot and rest and "" not in rest.split("."):
        return None
    return f"config.set: DSH has no live setting {shown(key)}; the bridge takes {SUPPORTED}"
