"""Price lookups and price files."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ConfigError
from core.pricing import DEEPSEEK, Price, load_prices, price_for


def test_deepseek_models_get_deepseek_prices_and_unknown_models_none() -> None:
    assert price_for("deepseek-chat") == DEEPSEEK
    assert price_for("deepseek-v4-flash") == DEEPSEEK
    assert price_for("gpt-x") is None
    assert price_for(None) is None


def test_cost_splits_hit_miss_and_output() -> None:
    assert Price(1.0, 10.0, 100.0).cost(1_000_000, 100_000, 10_000) == pytest.approx(1.0 + 1.0 + 1.0)


def test_a_price_file_overrides_and_the_longest_prefix_wins(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(
        '[models."deepseek-v4-*"]\ncacheHit = 0.01\ncacheMiss = 0.1\noutput = 0.2\n'
        '[models.mine]\ncacheHit = 0\ncacheMiss = 1\noutput = 2\n'
    )
    table = load_prices(path)
    assert price_for("deepseek-v4-flash", table) == Price(0.01, 0.1, 0.2)
    assert price_for("deepseek-chat", table) == DEEPSEEK
    assert price_for("mine", table) == Price(0.0, 1.0, 2.0)


def test_the_environment_names_the_price_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"models": {"m": {"cacheHit": 1, "cacheMiss": 2, "output": 3}}}')
    monkeypatch.setenv("TAPEDECK_PRICES", str(path))
    assert price_for("m", load_prices()) == Price(1.0, 2.0, 3.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1]", 'expected an object with a "models" table'),
        ('{"models": {"m": {"cacheHit": 1}}}', "'m' needs exactly cacheHit, cacheMiss, output"),
        ('{"models": {"m": {"cacheHit": -1, "cacheMiss": 2, "output": 3}}}', "m.cacheHit must be a non-negative"),
        ('{"models": {"m": {"cacheHit": true, "cacheMiss": 2, "output": 3}}}', "m.cacheHit must be a non-negative"),
        ("{not json", "cannot read it"),
    ],
)
def test_bad_price_files_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match="price file .*" + message.replace("(", r"\(")):
        load_prices(path)
