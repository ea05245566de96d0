"""What tapedeck knows about models: context window, output limit and prices, plus the ``model`` config section.

The built-in tables hold DeepSeek's published figures for ``deepseek-chat`` and ``deepseek-reasoner``
(DeepSeek-V3.2: a 128K-token window; 8K output tokens for chat, 64K for the reasoner; USD per million
tokens: cache hit 0.028, cache miss 0.28, output 0.42) and for the V4 names ``deepseek-flash``,
``deepseek-v4-flash`` and ``deepseek-v4-pro`` (at their peak rates; see the tables' comment). Providers change
these; the ``model`` section overrides or extends them without a release::

    [model]
    contextWindow = 131072        # the routed model's window, whatever its name
    maxOutputTokens = 8192        # the routed model's output limit
    [model.limits."my-local-model"]
    contextWindow = 32768
    maxOutputTokens = 4096
    [model.prices."deepseek-chat"]
    hit = 0.028
    miss = 0.28
    output = 0.42

``price_for(model)`` and ``limits_for(model)`` answer from the tables, the config's entries first. The host
uses the limits (the adaptive pressure trigger, clamping output caps), ``bench/context.py`` and
``tapedeck cost`` use the prices.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import field

from core.shared.errors import ConfigError, unknown_config_key
from core.shared.records import record
from core.shared.text import plain_number, quoted, shown
from core.shared.values import MAX_SAFE_INTEGER, whole_number

KEYS = ("contextWindow", "maxOutputTokens", "limits", "prices")
LIMIT_KEYS = ("contextWindow", "maxOutputTokens")
PRICE_KEYS = ("hit", "miss", "output")
PER_TOKENS = 1_000_000


@record(frozen=True, slots=True)
class Prices:
    """USD per million tokens: input served from the provider's prompt cache, input that missed it, output."""

    hit: float
    miss: float
    output: float

    def cost(self, hit_tokens: int, miss_tokens: int, output_tokens: int) -> float:
        """USD for that many cache-hit input, cache-miss input and output tokens."""
        return (hit_tokens * self.hit + miss_tokens * self.miss + output_tokens * self.output) / PER_TOKENS

    def to_dict(self) -> dict[str, float]:
        """The config form."""
        return {"hit": self.hit, "miss": self.miss, "output": self.output}


@record(frozen=True, slots=True)
class Limits:
    """A model's context window and output limit in tokens (None: unknown)."""

    context_window: int | None = None
    max_output_tokens: int | None = None

    def to_dict(self) -> dict[str, int | None]:
        """The config form."""
        return {"contextWindow": self.context_window, "maxOutputTokens": self.max_output_tokens}


# deepseek-chat / deepseek-reasoner: DeepSeek-V3.2's figures (DeepSeek retired both names on 2026-07-24).
# The V4 names: DeepSeek's "Models & Pricing" page, https://api-docs.deepseek.com/quick_start/pricing, as listed
# in November 2026. deepseek-flash is DeepSeek-V4.1-Flash; the legacy name deepseek-v4-flash (the model DSH logs
# name) is served by it and billed at the Flash price. Both V4 names: a 1M-token window, 384K output tokens. The
# prices are the peak rates (weekdays 01:00-04:00 and 06:00-10:00 UTC); off-peak rates are half of them, so a
# cost priced from this table is an upper bound (``model.prices`` in the config sets the off-peak figures).
DEEPSEEK_LIMITS: dict[str, Limits] = {
    "deepseek-chat": Limits(128_000, 8_192),
    "deepseek-reasoner": Limits(128_000, 65_536),
    "deepseek-flash": Limits(1_000_000, 384_000),
    "deepseek-v4-flash": Limits(1_000_000, 384_000),
    "deepseek-v4-pro": Limits(1_000_000, 384_000),
}
DEEPSEEK_PRICES: dict[str, Prices] = {
    "deepseek-chat": Prices(0.028, 0.28, 0.42),
    "deepseek-reasoner": Prices(0.028, 0.28, 0.42),
    "deepseek-flash": Prices(0.006, 0.30, 1.20),
    "deepseek-v4-flash": Prices(0.006, 0.30, 1.20),
    "deepseek-v4-pro": Prices(0.044, 1.32, 3.96),
}


@record(frozen=True, slots=True)
class ModelConfig:
    """The validated ``model`` section: overrides for the routed model and per-model table entries."""

    context_window: int | None = None
    max_output_tokens: int | None = None
    limits: Mapping[str, Limits] = field(default_factory=dict)
    prices: Mapping[str, Prices] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """The effective values under the config's key names."""
        return {
            "contextWindow": self.context_window,
            "maxOutputTokens": self.max_output_tokens,
            "limits": {name: limit.to_dict() for name, limit in self.limits.items()},
            "prices": {name: price.to_dict() for name, price in self.prices.items()},
        }


def _key(model: str) -> str:
    return model.strip().lower()


def missing_price(model: str) -> str:
    """What to tell a reader whose session used ``model`` (a name from its log: quoted) when no table prices it."""
    name = quoted(model)
    return f"no price for model {name} (set model.prices.{name} in the config)"


def price_for(model: str, config: ModelConfig | None = None) -> Prices | None:
    """The prices of ``model`` (the config's entry, else DeepSeek's table); None for a model with no entry."""
    key = _key(model)
    entries = {_key(k): v for k, v in (config.prices if config else {}).items()}
    return entries.get(key) or DEEPSEEK_PRICES.get(key)


def price_lookup(config: ModelConfig | None = None) -> Callable[[str], Prices | None]:
    """``price_for`` with ``config``, each model's prices looked up once (a pass prices every request)."""
    return functools.cache(lambda model: price_for(model, config))


def limits_for(model: str, config: ModelConfig | None = None, known: Limits | None = None) -> Limits:
    """The window and output limit of the routed ``model``.

    ``model.contextWindow`` / ``model.maxOutputTokens`` win, then the config's ``limits`` entry for the model,
    then ``known`` (what the provider itself declares), then DeepSeek's table; whatever none of them knows
    stays None.
    """
    key = _key(model)
    entries = {_key(k): v for k, v in (config.limits if config else {}).items()}
    found = [entries.get(key), known, DEEPSEEK_LIMITS.get(key)]
    window = config.context_window if config else None
    output = config.max_output_tokens if config else None
    for limit in found:
        if limit is not None:
            window = window if window is not None else limit.context_window
            output = output if output is not None else limit.max_output_tokens
    return Limits(window, output)


# ---------------------------------------------------------------------------------------------- validation
def _mapping(value: object, where: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a table (got {shown(value)})")
    return value


def _check_keys(raw: Mapping[str, object], keys: tuple[str, ...], where: str) -> None:
    unknown = [key for key in raw if key not in keys]
    if unknown:
        raise unknown_config_key(unknown[0], keys, where)


def _tokens(raw: Mapping[str, object], key: str, where: str) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    number = whole_number(value)
    if number is None or not 1 <= number <= MAX_SAFE_INTEGER:
        raise ConfigError(f"{where}.{key} must be a positive integer (got {shown(value)})")
    return number


def _price(raw: Mapping[str, object], key: str, where: str) -> float:
    if key not in raw:
        raise ConfigError(f"{where} needs {', '.join(PRICE_KEYS)} (missing {key})")
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"{where}.{key} must be a non-negative number of USD per 1M tokens (got {shown(value)})")
    return float(value)


def _named(raw: Mapping[str, object], key: str) -> Mapping[str, Mapping[str, object]]:
    table = _mapping(raw.get(key, {}), f"model.{key}")
    out = {}
    for name, entry in table.items():
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"model.{key}: model names must be non-empty strings (got {shown(name)})")
        out[name] = _mapping(entry, f"model.{key}.{quoted(name)}")
    return out


def _fits(limits: Limits, where: str) -> Limits:
    """``limits``, refused when its output limit is over its window (both given): no model writes more tokens than
    its context window holds, and a host would ask it to."""
    window, output = limits.context_window, limits.max_output_tokens
    if window is not None and output is not None and output > window:
        raise ConfigError(
            f"{where}.maxOutputTokens ({plain_number(output)}) is more than {where}.contextWindow "
            f"({plain_number(window)}): a model cannot write more tokens than its context window holds"
        )
    return limits


def validate(raw: Mapping[str, object]) -> ModelConfig:
    """Check a raw ``model`` mapping and return the frozen config; raises ConfigError naming the key."""
    _mapping(raw, "model config")
    _check_keys(raw, KEYS, "model")
    limits = {}
    for name, entry in _named(raw, "limits").items():
        where = f"model.limits.{quoted(name)}"
        _check_keys(entry, LIMIT_KEYS, where)
        limits[name] = _fits(
            Limits(_tokens(entry, "contextWindow", where), _tokens(entry, "maxOutputTokens", where)), where
        )
    prices = {}
    for name, entry in _named(raw, "prices").items():
        where = f"model.prices.{quoted(name)}"
        _check_keys(entry, PRICE_KEYS, where)
        prices[name] = Prices(*(_price(entry, key, where) for key in PRICE_KEYS))
    routed = _fits(Limits(_tokens(raw, "contextWindow", "model"), _tokens(raw, "maxOutputTokens", "model")), "model")
    return ModelConfig(
        context_window=routed.context_window,
        max_output_tokens=routed.max_output_tokens,
        limits=limits,
        prices=prices,
    )
