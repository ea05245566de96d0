"""The ``host`` config section: what the shell tool may reach.

    [host.shell]
    sandbox = "auto"      # "auto": bubblewrap when it works here, else unconfined with a warning;
                          # "required": refuse to run commands without it; "off": never sandbox
    network = false       # let sandboxed commands use the network
    passEnv = ["GOPATH"]  # environment variables passed to commands besides the built-in allow-list

The section is read once, when the host starts: a running host refuses ``config.set`` of any ``host`` key. A
``passEnv`` name that looks like a secret (``SECRET_PARTS`` inside it, or a ``SECRET_WORDS`` word between its
underscores) is refused, so API keys and tokens never reach a command.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from core.shared.errors import ConfigError, unknown_config_key
from core.shared.text import shown

SANDBOX_MODES = ("auto", "required", "off")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
SECRET_PARTS = ("SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY", "API_KEY", "PRIVATE_KEY")
SECRET_WORDS = frozenset({"KEY", "KEYS", "TOKEN", "TOKENS", "PASS", "PASSPHRASE", "AUTH", "PAT", "COOKIE"})


def looks_secret(name: str) -> bool:
    """Whether an environment variable's name says it holds a key, token, password or credential."""
    upper = name.upper()
    return any(part in upper for part in SECRET_PARTS) or not SECRET_WORDS.isdisjoint(upper.split("_"))


@dataclass(frozen=True, slots=True)
class ShellSettings:
    """Validated ``host.shell`` settings."""

    sandbox: str = "auto"
    network: bool = False
    pass_env: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The effective values under their config key names."""
        return {"sandbox": self.sandbox, "network": self.network, "passEnv": list(self.pass_env)}


@dataclass(frozen=True, slots=True)
class HostConfig:
    """The validated ``host`` section."""

    shell: ShellSettings = ShellSettings()

    def to_dict(self) -> dict[str, object]:
        """The effective values under their config key names."""
        return {"shell": self.shell.to_dict()}


def _unknown(raw: Mapping[str, object], keys: tuple[str, ...], where: str) -> None:
    for key in raw:
        if key not in keys:
            raise unknown_config_key(key, keys, where)


def validate(raw: Mapping[str, object]) -> HostConfig:
    """Check a raw ``host`` mapping and return the frozen config; raises ConfigError naming the key."""
    _unknown(raw, ("shell",), "host")
    shell = raw.get("shell", {})
    if not isinstance(shell, Mapping):
        raise ConfigError(f"host.shell must be a table/object (got {shown(shell)})")
    _unknown(shell, ("sandbox", "network", "passEnv"), "host.shell")
    sandbox = shell.get("sandbox", "auto")
    if sandbox not in SANDBOX_MODES:
        raise ConfigError(f"host.shell.sandbox must be one of {', '.join(SANDBOX_MODES)} (got {shown(sandbox)})")
    network = shell.get("network", False)
    if not isinstance(network, bool):
        raise ConfigError(f"host.shell.network must be true or false (got {shown(network)})")
    names = shell.get("passEnv", [])
    if not isinstance(names, list) or not all(isinstance(n, str) and ENV_NAME.match(n) for n in names):
        raise ConfigError(f"host.shell.passEnv must be a list of environment variable names (got {shown(names)})")
    for name in names:
        if looks_secret(name):
            raise ConfigError(
                f"host.shell.passEnv: {name} looks like a secret (a key, token, password or credential); "
                "secrets are never passed to shell commands"
            )
    return HostConfig(ShellSettings(str(sandbox), network, tuple(names)))
