"""Every numeric config key has a sane upper bound (``NUMBER_RANGES``; the ``alerts`` keys their own), and a value
past it is refused by a config file, ``config.set`` and ``--set`` alike, naming the key, the value and the range:
``slice.fold.pinMaxChars = 1e26`` and ``spillPreviewMinBytes = 1e26`` were taken, switching the pins and the spill
previews off for good without a word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.alerts.config import _NUMBERS as ALERT_NUMBERS
from core.cli import main
from core.control.config import _defaults, load_config, set_value, validate_config
from core.control.config_values import NUMBER_RANGES, number_range
from core.shared.errors import ConfigError
from core.shared.text import plain_number

# a name for each ``*``: a task profile and a prune level the defaults hold, a model named in the config
NAMES = {
    "adaptive.taskProfiles": "read",
    "adaptive.pruneLevels": _defaults()["adaptive"]["pruneLevels"][0]["name"],
    "model.limits": "m",
    "model.prices": "m",
}
PATTERNS = sorted(NUMBER_RANGES)


def _concrete(pattern: str) -> str:
    """``pattern`` with its ``*`` named (``adaptive.taskProfiles.read.maxTokens``)."""
    head, star, tail = pattern.partition(".*.")
    return f"{head}.{NAMES[head]}.{tail}" if star else pattern


def _numeric_leaves(node: Any, path: str) -> list[str]:
    if isinstance(node, dict):
        return [
            leaf
            for name, child in node.items()
            for leaf in _numeric_leaves(child, f"{path}.{name}".lstrip("."))
        ]
    if isinstance(node, list):
        return [leaf for child in node[:1] for leaf in _numeric_leaves(child, f"{path}.*")]
    return [path] if isinstance(node, int | float) and not isinstance(node, bool) else []


def _said(key: str) -> str:
    bounds = number_range(key)
    assert bounds is not None, key
    low, high = (plain_number(bound) for bound in bounds)
    return f"{key} must be from {low} to {high} (got "


def test_every_numeric_key_has_a_range() -> None:
    """Each number the defaults hold, and each key the defaults leave unset, has a range; each range names a key
    that is there (one a config may set: its top is taken, or refused only for what the other keys say)."""
    leaves = _numeric_leaves(_defaults(), "")
    unbounded = [leaf for leaf in leaves if number_range(leaf) is None and not leaf.startswith("alerts.")]
    assert not unbounded, unbounded
    alerts = [leaf for leaf in leaves if leaf.startswith("alerts.")]
    assert alerts and all(leaf.split(".")[2] in ALERT_NUMBERS[leaf.split(".")[1]] for leaf in alerts), alerts
    assert all(high < 1e12 for _, high in NUMBER_RANGES.values()), NUMBER_RANGES
    for pattern in PATTERNS:
        key = _concrete(pattern)
        try:
            set_value(validate_config({}), key, NUMBER_RANGES[pattern][1])
        except (
            ConfigError
        ) as exc:  # a cross-key rule (a soft budget over the hard one, a price without the others)
            assert "Unknown" not in str(exc) and " must be from " not in str(exc), (key, exc)


def _over(pattern: str) -> st.SearchStrategy[float]:
    high = NUMBER_RANGES[pattern][1]
    return st.integers(int(high) + 1, 2**63 - 1) | st.floats(
        min_value=high, max_value=1e300, exclude_min=True
    )


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_number_past_the_range_is_refused(data: st.DataObject) -> None:
    pattern = data.draw(st.sampled_from(PATTERNS))
    value = data.draw(_over(pattern))
    key = _concrete(pattern)
    with pytest.raises(ConfigError) as refused:
        set_value(validate_config({}), key, value)
    assert str(refused.value).startswith(_said(key)), refused.value
    if "*" not in pattern:  # as a config file gives it: the section with the value in place
        section, *inner, last = key.split(".")
        raw: dict[str, Any] = {last: value}
        for part in reversed(inner):
            raw = {part: raw}
        with pytest.raises(ConfigError) as refused:
            validate_config({section: raw})
        assert str(refused.value).startswith(_said(key)), refused.value


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_number_in_the_range_is_not_refused_for_its_size(data: st.DataObject) -> None:
    pattern = data.draw(st.sampled_from(PATTERNS))
    low, high = NUMBER_RANGES[pattern]
    value = data.draw(st.integers(int(low), int(high)) if high > 1 else st.floats(low, high))
    key = _concrete(pattern)
    try:
        set_value(validate_config({}), key, value)
    except ConfigError as exc:  # what the section says of a value in range, never the range
        assert " must be from " not in str(exc), (key, value, exc)


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        (
            "[slice.fold]\npinMaxChars = 1e26\n",
            "slice.fold.pinMaxChars must be from 0 to 100,000,000 (got 1e+26)",
        ),
        (
            "[slice.fold]\nspillPreviewMinBytes = 1e26\n",
            "slice.fold.spillPreviewMinBytes must be from 0 to 1,073,741,824 (got 1e+26)",
        ),
        (
            "[[adaptive.pruneLevels]]\nname = 'a'\natStep = 1000000\n",
            "adaptive.pruneLevels[0].atStep must be from 1 to 10,000 (got 1000000)",
        ),
    ],
)
def test_a_config_file(tmp_path: Path, toml: str, said: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert str(refused.value) == f"{path}: {said}"


def test_a_command_line_set(fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = fixtures_dir / "tool-call-turn.session.jsonl"
    assert main(["fold", str(log), "--set", "fold.pinMaxChars=1e26"]) == 2
    assert (
        capsys.readouterr().err
        == "tapedeck: slice.fold.pinMaxChars must be from 0 to 100,000,000 (got 1e+26)\n"
    )
