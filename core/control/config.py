"""One validated policy configuration: a section per policy, each validated by its own module.

A config file is TOML (``.toml``) or JSON (``.json``)::

    [slice.history]
    keepRecentTurns = 1
    [slice.fold]
    pinSteps = 0
    [rewind]
    reportLanguage = "en"
    [prolong]
    logFile = "log.txt"
    [adaptive.riskRouter]
    minimumScore = 4

Section keys are the seed plugins' own names. Operators change single values at run time with dotted keys
(``slice.history.keepRecentTurns``); every change is validated by the section's validator before it applies,
and is recorded in the session log as a ``tapedeck/config`` event, so a resumed host rebuilds the same config.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Protocol

from core.control.config_values import check_loggable, check_ranges, check_type, child
from core.log.vocabulary import HOST_EVENT
from core.shared.errors import ConfigError, unknown_config_key
from core.shared.parsers import Failure, Unparsable, Wording, load_document, parse_json
from core.shared.records import record
from core.shared.text import describe, quoted, quoted_path

SECTIONS: dict[str, str] = {
    "slice": "core.policies.slice_config",
    "rewind": "core.policies.rewind_config",
    "prolong": "core.policies.prolong_config",
    "adaptive": "core.policies.adaptive_config",
    "model": "core.shared.model_specs",
    "host": "core.host.host_config",
    "alerts": "core.alerts.config",
}
CONFIG_EVENT = "tapedeck/config"
# What a host reads once, when it starts (a section, or one key): the inbox refuses changes to it and a resumed
# host does not replay the changes an older host applied (what the shell may reach is the operator's choice at
# start; the prolong log file is opened once, with its window).
START_ONLY = ("host", "prolong.logFile", "prolong.logWindow")


def is_start_only(key: str, fixed: tuple[str, ...] = START_ONLY) -> bool:
    """True when the dotted ``key`` is one of ``fixed`` or lies in one of them."""
    return any(key == f or key.startswith(f + ".") for f in fixed)


def _validate_section(name: str, raw: Mapping[str, Any]) -> Any:
    module = importlib.import_module(SECTIONS[name])
    return module.validate(raw)


@record(frozen=True)
class PolicyConfig:
    """The effective configuration: validated sections plus the raw values they came from, and the file they were
    read from (None: no file, or changed since), which a later check of them names first as ``load_config`` does."""

    raw: dict[str, dict[str, Any]] = field(default_factory=dict)
    sections: dict[str, Any] = field(default_factory=dict)
    source: Path | None = field(default=None, compare=False)

    def refused(self, exc: ConfigError) -> ConfigError:
        """``exc``, a check of this config's values that failed, as ``load_config`` words its own refusals: after
        the file the config came from."""
        return ConfigError(f"{quoted_path(self.source)}: {exc}") if self.source is not None else exc

    def __getattr__(self, name: str) -> Any:
        sections = object.__getattribute__(self, "sections")
        if name in sections:
            return sections[name]
        raise AttributeError(name)

    def to_dict(self) -> dict[str, Any]:
        """Every effective value (defaults included), by section."""
        return {name: _plain(section) for name, section in self.sections.items()}

    def get(self, dotted: str) -> Any:
        """The effective value at a dotted key (list entries by name: ``adaptive.taskProfiles.read``);
        ConfigError if no such key."""
        return _lookup(self.to_dict(), dotted)


def _lookup(tree: dict[str, Any], dotted: str) -> Any:
    node: Any = tree
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        found = child(node, part, dotted) if isinstance(node, list) else None
        if found is None and (not isinstance(node, dict) or part not in node):
            where = ".".join(parts[:i]) or None
            if isinstance(node, dict):
                raise unknown_config_key(part, list(node), where)
            raise ConfigError(f"{quoted(dotted)}: {quoted(where)} is a value, not a table")
        node = found if found is not None else node[part]
    return node


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        to_dict = getattr(value, "to_dict", None)
        if callable(to_dict):
            return to_dict()
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def validate_config(raw: Mapping[str, Any]) -> PolicyConfig:
    """Validate a whole config mapping (sections may be omitted: their defaults apply)."""
    if not isinstance(raw, Mapping):
        raise ConfigError("config must be a table/object of sections")
    for name in raw:
        if name not in SECTIONS:
            raise unknown_config_key(name, list(SECTIONS))
    sections: dict[str, Any] = {}
    clean: dict[str, dict[str, Any]] = {}
    for name in SECTIONS:
        value = raw.get(name, {})
        if not isinstance(value, Mapping):
            raise ConfigError(f"config section {name} must be a table/object, got {describe(value)}")
        check_loggable(value, name)
        check_type(value, _defaults()[name], name)
        check_ranges(value, name)
        clean[name] = copy.deepcopy(dict(value))
        sections[name] = _validate_section(name, clean[name])
        check_loggable(_plain(sections[name]), name)
    _check_across(sections)
    return PolicyConfig(clean, sections)


def _check_across(sections: Mapping[str, Any]) -> None:
    """Rules that span sections: the report route's key variable is never passed to shell commands."""
    key_env = sections["rewind"].summarization_api_key_env
    if key_env and key_env in sections["host"].shell.pass_env:
        raise ConfigError(
            f"host.shell.passEnv: {key_env} holds the report route's API key (rewind.summarizationApiKeyEnv); "
            "secrets are never passed to shell commands"
        )


@functools.cache
def _defaults() -> dict[str, Any]:
    return PolicyConfig({}, {name: _validate_section(name, {}) for name in SECTIONS}).to_dict()


def _default_at(dotted: str) -> Any:
    """The default value at a dotted key, or None when the key has none (or is unknown)."""
    try:
        return _lookup(_defaults(), dotted)
    except ConfigError:
        return None


_WORDING = Wording(  # how a policy config that cannot be read is named
    unreadable="{path}: cannot read config ({why})",
    too_large="{why}",
    not_utf8="{path}: {why}",
    syntax="{path}: not valid {kind}: {why}",
    depth="{path}: not a usable {kind} config: it is nested too deeply",
    digits="{path}: not a usable {kind} config: a number has more than {digits} digits",
)


def load_config(path: str | Path | None, only: tuple[str, ...] | None = None) -> PolicyConfig:
    """Load and validate a TOML or JSON config file; None gives the defaults: of ``only`` those sections when
    given (a command that reads no other section need not import or validate them; a file is validated whole)."""
    if path is None:
        if only is not None:
            return PolicyConfig(
                {name: {} for name in only}, {name: _validate_section(name, {}) for name in only}
            )
        return validate_config({})
    p = Path(path).expanduser()
    raw = load_document(p, "JSON" if p.suffix == ".json" else "TOML", "policy config", _WORDING, ConfigError)
    try:
        config = validate_config(raw)
    except ConfigError as exc:
        raise PolicyConfig(source=p).refused(exc) from exc
    return dataclasses.replace(config, source=p)


def parse_value(text: str) -> Any:
    """A command-line value: JSON when it parses (``3``, ``true``, ``null``, ``[1]``), else the plain string;
    ConfigError for JSON the parser cannot hold (nested past its depth, a number past Python's digits)."""
    try:
        return parse_json(text)
    except Unparsable as why:
        if why.failure is Failure.SYNTAX:
            return text
        if why.failure is Failure.DEPTH:
            raise ConfigError("the value is nested too deeply to read") from None
        raise ConfigError(f"the value holds a number of more than {why.digits} digits") from None


def check_section(section: str) -> None:
    """Refuse a section name that is none of ``SECTIONS`` (``unknown_config_key``: the one wording of an unknown
    key, a did-you-mean included), before anything is sent or changed."""
    if section not in SECTIONS:
        raise unknown_config_key(section, list(SECTIONS))


def set_value(config: PolicyConfig, dotted: str, value: Any) -> tuple[PolicyConfig, Any]:
    """Return a new config with ``dotted`` set to ``value`` and the old effective value.

    The section is re-validated as a whole, so a rejected value changes nothing. ``None`` removes the key
    (its default applies again).
    """
    section, _, rest = dotted.partition(".")
    check_section(section)
    if not rest:
        raise ConfigError(f"config key {quoted(dotted)} must be <section>.<key>, such as {section}.<key>")
    check_loggable(value, dotted)
    try:
        old = config.get(dotted)
    except ConfigError:
        if value is None:
            raise
        old = None
    check_type(value, _default_at(dotted), dotted)
    check_ranges(value, dotted)
    raw = copy.deepcopy(config.raw)
    node: Any = raw.setdefault(section, {})
    effective: Any = config.to_dict()[section]
    parts = rest.split(".")
    for part in parts[:-1]:
        seen = child(effective, part, dotted) if isinstance(effective, dict | list) else None
        inner = child(node, part, dotted)
        if inner is None:
            inner = copy.deepcopy(seen) if isinstance(seen, dict | list) else {}
            node[part] = inner
        elif not isinstance(inner, dict | list):
            raise ConfigError(f"config key {quoted(dotted)}: {quoted(part)} is a value, not a table")
        node, effective = inner, seen
    if isinstance(node, list):
        raise ConfigError(
            f"config key {quoted(dotted)}: set one key of a list entry, such as {quoted(dotted)}.<key>"
        )
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value
    sections = {**config.sections, section: _validate_section(section, raw[section])}
    _check_across(sections)
    new = PolicyConfig(raw, sections)
    check_loggable(new.get(dotted), dotted)
    return new, old


def config_event(
    changes: Mapping[str, tuple[Any, Any]], by: str, request_id: str | None = None
) -> dict[str, Any]:
    """A planned ``tapedeck/config`` event recording ``key: (old, new)`` changes."""
    data: dict[str, Any] = {
        "changes": {k: {"old": old, "new": new} for k, (old, new) in changes.items()},
        "by": by,
    }
    if request_id:
        data["requestId"] = request_id
    return {"type": CONFIG_EVENT, "data": data, "ignorable": True}


def replay_config(
    base: PolicyConfig, events: Iterable[Mapping[str, Any]], fixed: tuple[str, ...] = ()
) -> PolicyConfig:
    """Apply every ``tapedeck/config`` change found in ``events`` on top of ``base`` (used on resume), except
    changes to the ``fixed`` sections and keys (``is_start_only``), which keep ``base``'s values."""
    config = base
    for event in events:
        if event.get("type") != CONFIG_EVENT:
            continue
        for key, change in ((event.get("data") or {}).get("changes") or {}).items():
            if not is_start_only(key, fixed):
                config, _ = set_value(config, key, (change or {}).get("new"))
    return config


def logged_config(events: Iterable[Mapping[str, Any]]) -> PolicyConfig | None:
    """The config a tapedeck host ran a session with, read from its log; None when no host recorded one.

    ``events`` are the log's ``tapedeck/host`` and ``tapedeck/config`` events in log order (others are
    skipped). The newest host event's ``config`` (what that host started or resumed with) applies, then
    every logged change in order but those to start-only keys, as a resumed host rebuilds it.
    """
    events = list(events)
    started = None
    for event in events:
        data = event.get("data")
        if (
            event.get("type") == HOST_EVENT
            and isinstance(data, Mapping)
            and isinstance(data.get("config"), Mapping)
        ):
            started = data["config"]
    if started is None:
        return None
    try:
        return replay_config(validate_config(started), events, START_ONLY)
    except ConfigError as exc:
        raise ConfigError(f"the session log's config does not validate here: {exc}") from exc


class LoggedEvents(Protocol):
    """What ``config_events`` reads of a session (``core.read.session.Session``, which this layer may not import)."""

    events: Any

    def seqs_of(self, types: Collection[str]) -> Iterable[int]:
        """The seqs of the events whose type is in ``types``, in log order."""
        ...


def config_events(session: LoggedEvents) -> list[Mapping[str, Any]]:
    """The ``tapedeck/host`` and ``tapedeck/config`` events of ``session`` in log order: what ``logged_config`` and
    ``session_config`` rebuild its config from."""
    return [session.events[seq] for seq in session.seqs_of((HOST_EVENT, CONFIG_EVENT))]


def session_config(events: Iterable[Mapping[str, Any]]) -> PolicyConfig:
    """The config a session runs under: the one its tapedeck host logged (``logged_config``), else the defaults
    with any logged changes. ``events`` as for ``logged_config``."""
    events = list(events)
    return logged_config(events) or replay_config(validate_config({}), events)
