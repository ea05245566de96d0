"""A hostile number for any numeric config key (huge ints, floats up to 1.8e308, the forms a command line gives:
``1e400``, ``-0``, ``0x..``) is refused before a section's validator sees it or kept as the log can record it: no
section ever turns a float into an integer beyond 64 bits, which the session log could not hold. The key's range
(``core.control.config_values.NUMBER_RANGES``, the alerts' own) refuses every such float first."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from core.control.config import load_config, parse_value, set_value, validate_config
from core.control.config_values import INT_RANGE
from core.shared.errors import ConfigError

CONFIG = load_config(None)


def _numeric_keys(tree: Any, prefix: str) -> Iterator[str]:
    """Every dotted key of the defaults holding a number (a list entry by its name, as config.set addresses it)."""
    if isinstance(tree, Mapping):
        for name, value in tree.items():
            yield from _numeric_keys(value, f"{prefix}.{name}")
    elif isinstance(tree, list):
        for i, entry in enumerate(tree):
            name = entry.get("taskClass") or entry.get("name") or i if isinstance(entry, Mapping) else i
            yield from _numeric_keys(entry, f"{prefix}.{name}")
    elif isinstance(tree, int | float) and not isinstance(tree, bool):
        yield prefix


# the section's own keys, and the keys of an entry or a model no default names
KEYS = sorted(
    {key for name, section in CONFIG.to_dict().items() for key in _numeric_keys(section, name)}
    | {"model.limits.other.contextWindow", "model.limits.other.maxOutputTokens", "model.prices.other.hit"}
)
HUGE = 2**64
NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=9e18, max_value=1.8e308).flatmap(lambda f: st.sampled_from([f, -f])),
    st.sampled_from(
        [
            "1e400",
            "-1e400",
            "-0",
            "-0.0",
            "0x10",
            "0X7fffffffffffffff",
            "1e+23",
            "18446744073709551616",
            "-9223372036854775809",
            "9" * 400,
        ]
    ).map(parse_value),  # fmt: skip
)


def _ints(value: Any) -> Iterator[int]:
    if isinstance(value, Mapping):
        for child in value.values():
            yield from _ints(child)
    elif isinstance(value, list | tuple):
        for child in value:
            yield from _ints(child)
    elif isinstance(value, int) and not isinstance(value, bool):
        yield value


def _sent_beyond_64_bits(value: Any) -> bool:
    return any(n not in INT_RANGE for n in _ints(value))


@given(key=st.sampled_from(KEYS), value=NUMBERS)
@example(key="slice.fold.pinSteps", value=1e23)
@example(key="slice.maxStepsPerTurn", value=-1e23)
@example(key="prolong.logWindow", value=-1e19)
@example(key="alerts.budget.usd", value=1.8e308)
@example(key="alerts.loop.count", value=-1.8e19)
@example(key="model.limits.other.contextWindow", value=float(HUGE))
def test_no_section_makes_an_integer_the_log_cannot_hold(key: str, value: Any) -> None:
    """``config.set`` and a config file alike: accepted, every integer in force fits 64 bits; refused, never as an
    integer beyond 64 bits unless one was sent."""
    section, _, rest = key.partition(".")
    nested: Any = value
    for part in reversed(rest.split(".")):
        nested = {part: nested}
    for change in (lambda: set_value(CONFIG, key, value)[0], lambda: validate_config({section: nested})):
        try:
            config = change()
        except ConfigError as exc:
            said = str(exc)
            assert "the session log can record" not in said, (key, value, said)  # the check after the section
            assert "beyond 64 bits" not in said or _sent_beyond_64_bits(value), (key, value, said)
            continue
        assert all(n in INT_RANGE for n in _ints(config.to_dict())), (key, value)
