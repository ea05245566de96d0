"""Model limits and prices: DeepSeek's table, overridable in the ``model`` config section."""

from __future__ import annotations

import pytest

from core.control.config import set_value, validate_config
from core.shared.errors import ConfigError
from core.shared.model_specs import Limits, Prices, limits_for, price_for


def test_deepseek_models_have_a_window_an_output_limit_and_prices() -> None:
    chat = limits_for("deepseek-chat")
    assert chat.context_window and chat.max_output_tokens and chat.max_output_tokens < 65_536
    assert limits_for("DeepSeek-Reasoner").max_output_tokens > chat.max_output_tokens
    prices = price_for("deepseek-chat")
    assert prices is not None and prices.hit < prices.miss
    assert prices.cost(1_000_000, 0, 0) == pytest.approx(prices.hit)


def test_an_unknown_model_has_no_limits_and_no_prices_until_configured() -> None:
    assert limits_for("my-model") == Limits(None, None)
    assert price_for("my-model") is None
    config = validate_config(
        {"model": {"limits": {"my-model": {"contextWindow": 32768}}, "prices": {"my-model": {"hit": 0, "miss": 1, "output": 2}}}}
    ).model
    assert limits_for("my-model", config) == Limits(32768, None)
    assert price_for("my-model", config) == Prices(0.0, 1.0, 2.0)


def test_the_routed_model_overrides_win_over_every_table() -> None:
    config = validate_config({"model": {"contextWindow": 64000, "maxOutputTokens": 4096}}).model
    assert limits_for("deepseek-chat", config) == Limits(64000, 4096)
    assert limits_for("any-openai-compatible-model", config) == Limits(64000, 4096)
    partial = validate_config({"model": {"maxOutputTokens": 2048}}).model
    assert limits_for("deepseek-chat", partial) == Limits(limits_for("deepseek-chat").context_window, 2048)


def test_config_set_reaches_the_model_section() -> None:
    config, old = set_value(validate_config({}), "model.contextWindow", 100_000)
    assert old is None and config.model.context_window == 100_000


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"window": 1}, "Unknown model configuration key window. Valid keys:"),
        ({"contextWindow": 0}, "model.contextWindow must be a positive integer"),
        ({"maxOutputTokens": 1.5}, "model.maxOutputTokens must be a positive integer"),
        ({"limits": {"m": {"context": 1}}}, "Unknown model.limits.m configuration key context. Valid keys:"),
        ({"prices": {"m": {"hit": 1, "miss": 1}}}, "missing output"),
        ({"prices": {"m": {"hit": -1, "miss": 1, "output": 1}}}, "model.prices.m.hit must be a non-negative"),
        ({"prices": []}, "model.prices must be a table"),
    ],
)
def test_bad_model_config_names_the_key(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate_config({"model": raw})
    assert message in str(info.value)


def test_deepseek_v4_flash_the_model_dsh_logs_name_has_the_flash_peak_price_and_limits() -> None:
    # DeepSeek's pricing page: the legacy name deepseek-v4-flash is billed as deepseek-flash (V4.1 Flash), peak
    # USD 0.006 hit / 0.30 miss / 1.20 output per 1M tokens; 1M-token window, 384K output tokens.
    for name in ("deepseek-v4-flash", "deepseek-flash"):
        assert price_for(name) == Prices(0.006, 0.30, 1.20)
        assert limits_for(name) == Limits(1_000_000, 384_000)
    assert price_for("deepseek-v4-pro") == Prices(0.044, 1.32, 3.96)
