"""A slice value out of its key's range is refused in one wording at both ends, naming the full key and the range:
a negative one said ``history.keepRecentTurns must be a non-negative safe integer`` (no ``slice.`` prefix, no
range) where a too-large one said ``slice.history.keepRecentTurns must be from 0 to 10,000``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.control.config import validate_config
from core.policies.slice_config import DigestConfig, FoldConfig, HistoryConfig, validate
from core.shared.config_ranges import number_range
from core.shared.errors import ConfigError
from core.shared.text import plain_number

SECTIONS = {"history": HistoryConfig, "fold": FoldConfig, "digest": DigestConfig}
KEYS = ["maxStepsPerTurn"] + [f"{name}.{f.name}" for name, cls in SECTIONS.items() for f in fields(cls)]
NUMERIC = [key for key in KEYS if number_range(f"slice.{key}") is not None]


def test_every_numeric_key_of_the_section_has_a_range() -> None:
    assert sorted(NUMERIC) == sorted(k for k in KEYS if not k.endswith(".enabled")), NUMERIC


def nested(key: str, value: Any) -> dict[str, Any]:
    section, _, name = key.rpartition(".")
    return {section: {name: value}} if section else {key: value}


@st.composite
def out_of_range(draw: st.DrawFn, only_below: bool = False) -> tuple[str, float]:
    key = draw(st.sampled_from(NUMERIC))
    low, high = number_range(f"slice.{key}")  # type: ignore[misc]
    integral = key != "digest.maxKeepRatio"
    below = only_below or draw(st.booleans())
    if integral:
        value: float = (
            draw(st.integers(min_value=-(10**12), max_value=int(low) - 1))
            if below
            else draw(st.integers(min_value=int(high) + 1, max_value=10**15))
        )
    else:
        value = (
            draw(st.floats(max_value=low, min_value=-1e12, exclude_max=True, allow_nan=False))
            if below
            else draw(st.floats(min_value=high, max_value=1e12, exclude_min=True, allow_nan=False))
        )
    return key, value


def refusal(check: Callable[[dict[str, Any]], object], key: str, value: float) -> str:
    with pytest.raises(ConfigError) as info:
        check(nested(key, value))
    return str(info.value)


def said(key: str) -> str:
    low, high = number_range(f"slice.{key}")  # type: ignore[misc]
    return f"slice.{key} must be from {plain_number(low)} to {plain_number(high)} (got "


@given(case=out_of_range())
def test_a_config_value_out_of_range_names_the_full_key_and_its_range(case: tuple[str, float]) -> None:
    """Through a config file, ``config.set`` or ``--set``: the top of the range is checked before the section."""
    key, value = case
    message = refusal(lambda raw: validate_config({"slice": raw}), key, value)
    assert message.startswith(said(key)), message


@given(case=out_of_range(only_below=True))
def test_the_section_words_a_value_under_its_range_alike(case: tuple[str, float]) -> None:
    """The section itself, which sees a value under the range first."""
    key, value = case
    message = refusal(validate, key, value)
    assert message.startswith(said(key)), message


def test_a_negative_value_reads_as_a_too_large_one() -> None:
    with pytest.raises(ConfigError) as info:
        validate({"history": {"keepRecentTurns": -1}})
    assert str(info.value) == "slice.history.keepRecentTurns must be from 0 to 10,000 (got -1)"
    with pytest.raises(ConfigError) as info:
        validate_config({"slice": {"history": {"keepRecentTurns": 10_001}}})
    assert str(info.value) == "slice.history.keepRecentTurns must be from 0 to 10,000 (got 10001)"


def test_a_ratio_of_zero_is_under_its_range() -> None:
    with pytest.raises(ConfigError) as info:
        validate({"digest": {"maxKeepRatio": 0}})
    assert str(info.value) == "slice.digest.maxKeepRatio must be above 0 and at most 1 (got 0)"
