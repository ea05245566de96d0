"""The live settings of a DSH session that the bridge can change, as its log shows them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.bridge.commands import td_commands
from core.bridge.ops import DSH_CONFIG_KEYS
from core.read.session import Session


def dsh_settings(session: Session) -> list[tuple[str, Any]]:
    """Each of ``DSH_CONFIG_KEYS`` with its current value as far as the log tells: the latest request header's
    model and reasoning effort, then every ``config.set`` the bridge applied after that header (None: unknown)."""
    values: dict[str, Any] = dict.fromkeys(DSH_CONFIG_KEYS)
    headers = list(session.seqs_of(("request/header",)))
    after = headers[-1] if headers else -1
    header = session.request_header() or {}
    config = header.get("config") if isinstance(header.get("config"), Mapping) else {}
    for key in ("model", "reasoningEffort"):
        if isinstance(config.get(key), str):
            values[key] = config[key]
    for seq, key, value in dsh_config_changes(session):
        if seq > after:
            values[key] = value
    return list(values.items())


def dsh_config_changes(session: Session) -> list[tuple[int, str, Any]]:
    """``(seq, key, value)`` of every ``config.set`` the bridge applied, oldest first (seq: its ``command/done``)."""
    found = []
    for command in td_commands(session):
        args = command.request.get("args")
        if command.op != "config.set" or not command.applied or not isinstance(args, Mapping):
            continue
        key = args.get("key")
        if isinstance(key, str) and key in DSH_CONFIG_KEYS:
            found.append((command.done_seq or command.run_seq, key, args.get("value")))
    return found
