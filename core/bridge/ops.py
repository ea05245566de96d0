"""What the bridge plugin accepts beyond our host's ops: the DSH-only arguments and the ``config.set`` keys.

DSH has a live setting for only a few things, so ``config.set`` on a DSH session takes one of
``DSH_CONFIG_KEYS`` (the plugin rejects any other key with the same list); ``message`` takes ``mode``: ``steer``
enters the running turn at its next step, ``queue`` waits for the next turn.
"""

from __future__ import annotations

from typing import Any

# key -> (what the value must be, what the key changes)
DSH_CONFIG_KEYS: dict[str, tuple[str, str]] = {
    "model": ("string", "the model of the session's next request"),
    "reasoningEffort": ("string", "the reasoning effort of the next request (e.g. low, medium, high)"),
    "shell.timeoutMs": ("positive integer", "the shell tool's time limit in milliseconds"),
}
MESSAGE_MODES = ("steer", "queue")


def dsh_config_error(key: str, value: Any) -> str | None:
    """Why ``config.set key=value`` cannot be sent to a DSH session, or None when it can."""
    spec = DSH_CONFIG_KEYS.get(key)
    if spec is None:
        return (
            f"config.set: DSH has no live setting {key!r}; the bridge supports {', '.join(DSH_CONFIG_KEYS)}"
        )
    kind = spec[0]
    if kind == "string" and not (isinstance(value, str) and value.strip()):
        return f"config.set: {key!r} on DSH takes a non-empty string (got {value!r})"
    if kind == "positive integer" and not (
        isinstance(value, int) and not isinstance(value, bool) and value > 0
    ):
        return f"config.set: {key!r} on DSH takes a positive integer (got {value!r})"
    return None
