"""Token prices per model: DeepSeek's list prices by default, overridable from a JSON or TOML file.

Prices are US dollars per million tokens, split the way DeepSeek bills a request: input served from the
provider's prefix cache (``cacheHit``), input that missed it (``cacheMiss``) and output (``output``, which
includes reasoning tokens). A table maps a model name, or a prefix ending in ``*``, to its price; the
longest matching key wins. A price file looks like::

    {"models": {"deepseek-*": {"cacheHit": 0.028, "cacheMiss": 0.28, "output": 0.42},
                "my-model": {"cacheHit": 0.1, "cacheMiss": 1.0, "output": 2.0}}}

and is merged over the defaults.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from core.errors import ConfigError

PRICES_ENV = "TAPEDECK_PRICES"
_FIELDS = {"cacheHit": "cache_hit", "cacheMiss": "cache_miss", "output": "output"}


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens."""

    cache_hit: float
    cache_miss: float
    output: float

    def cost(self, hit: int, miss: int, output: int) -> float:
        """Dollars for that many cache-hit, cache-miss and output tokens."""
        return (hit * self.cache_hit + miss * self.cache_miss + output * self.output) / 1_000_000


# DeepSeek's API list prices (deepseek-chat and deepseek-reasoner share them).
DEEPSEEK = Price(cache_hit=0.028, cache_miss=0.28, output=0.42)
DEFAULT_PRICES: dict[str, Price] = {"deepseek-*": DEEPSEEK}


def price_for(model: str | None, table: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``model`` in ``table`` (default: ``DEFAULT_PRICES``), or None when no key matches."""
    if not model:
        return None
    prices = DEFAULT_PRICES if table is None else table
    if model in prices:
        return prices[model]
    matches = [k for k in prices if k.endswith("*") and model.startswith(k[:-1])]
    return prices[max(matches, key=len)] if matches else None


def load_prices(path: str | os.PathLike[str] | None = None) -> dict[str, Price]:
    """The defaults merged with a price file (``path``, else ``$TAPEDECK_PRICES`` when set).

    Raises ConfigError naming the file and the entry when the file is unreadable or malformed.
    """
    source = path if path is not None else os.environ.get(PRICES_ENV) or None
    table = dict(DEFAULT_PRICES)
    if source is None:
        return table
    p = Path(source)
    try:
        text = p.read_text(encoding="utf-8")
        raw = tomllib.loads(text) if p.suffix == ".toml" else json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"price file {p}: cannot read it ({exc})") from exc
    models = raw.get("models") if isinstance(raw, dict) else None
    if not isinstance(models, dict):
        raise ConfigError(f'price file {p}: expected an object with a "models" table')
    for name, entry in models.items():
        table[str(name)] = _price(p, str(name), entry)
    return table


def _price(path: Path, name: str, entry: object) -> Price:
    if not isinstance(entry, dict) or set(entry) != set(_FIELDS):
        raise ConfigError(f"price file {path}: {name!r} needs exactly {', '.join(_FIELDS)}")
    values = {}
    for key, attr in _FIELDS.items():
        value = entry[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"price file {path}: {name}.{key} must be a non-negative number")
        values[attr] = float(value)
    return Price(**values)
