"""The ``adaptive`` config section: seed defaults, frozen values and the seed's error messages (§4.f)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from core.control.config import set_value, validate_config
from core.policies.adaptive_config import (
    DEFAULT_PRUNE_LEVELS,
    AdaptiveConfig,
    PruneBudget,
    RiskRouterConfig,
    validate,
    validate_prune_budget,
)
from core.shared.errors import ConfigError


def profiles() -> list[dict[str, Any]]:
    return [p.to_dict() for p in AdaptiveConfig().task_profiles]


def level(**overrides: Any) -> dict[str, Any]:
    base = {"name": "first", "atStep": 10, "atPressureRatio": 0.5, "thresholdChars": 100, "headChars": 20,
            "tailChars": 10, "protectRecentSteps": 1, "minimumCharsRemoved": 1}  # fmt: skip
    return {**base, **overrides}


def test_defaults_are_the_seeds_and_frozen() -> None:
    config = validate({})
    assert [p.task_class for p in config.task_profiles] == ["read", "small", "frontend", "large", "batch"]
    assert [(p.max_tokens, p.soft_step_budget, p.hard_step_budget) for p in config.task_profiles] == [
        (16384, 4, 8),
        (32768, 5, 9),
        (32768, 8, 14),
        (65536, 10, 18),
        (65536, 10, 20),
    ]
    assert [lv.name for lv in config.prune_levels] == ["moderate", "tight", "critical"]
    assert [lv.to_dict() for lv in config.prune_levels][1] == {
        "name": "tight", "atStep": 10, "atPressureRatio": 0.65, "thresholdChars": 8192, "headChars": 4096,
        "tailChars": 1024, "protectRecentSteps": 1, "minimumCharsRemoved": 4096,
    }  # fmt: skip
    assert config.risk_router.to_dict() == {
        "enabled": True,
        "minimumScore": 4,
        "maxRequestChars": 4096,
        "maxEvidenceChars": 8192,
        "skipCovered": True,
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.risk_router = RiskRouterConfig(enabled=False)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.task_profiles[0].max_tokens = 1  # type: ignore[misc]
    assert isinstance(config.task_profiles, tuple) and isinstance(config.prune_levels, tuple)


def test_round_trip_and_custom_values() -> None:
    raw = {"taskProfiles": profiles()[::-1], "pruneLevels": [level()], "riskRouter": {"minimumScore": 6.0}}
    config = validate(raw)
    assert [p.task_class for p in config.task_profiles] == ["batch", "large", "frontend", "small", "read"]
    assert config.profile("small").max_tokens == 32768
    assert config.prune_levels[0].budget == PruneBudget(100, 20, 10)
    assert config.risk_router.minimum_score == 6
    assert validate(config.to_dict()) == config


def test_level_budgets_default_to_the_pruner_defaults() -> None:
    partial = {k: v for k, v in level(thresholdChars=9000).items() if k not in ("headChars", "tailChars")}
    assert validate({"pruneLevels": [partial]}).prune_levels[0].budget == PruneBudget(9000, 4096, 1024)


def test_empty_level_table_turns_pruning_off() -> None:
    assert validate({"pruneLevels": []}).prune_levels == ()


P = "adaptive-agent-policy: "


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"taskProfiles": profiles()[1:]}, P + "missing task profiles: read"),
        ({"taskProfiles": profiles()[2:4]}, P + "missing task profiles: read, small, batch"),
        ({"taskProfiles": [{**profiles()[0], "taskClass": "huge"}]}, P + 'taskProfiles[0].taskClass is invalid (got "huge"; one of read, small, frontend, large, batch)'),
        ({"taskProfiles": [profiles()[0], profiles()[0]]}, P + 'duplicate task profile "read"'),
        ({"taskProfiles": [{**profiles()[0], "maxTokens": 0}]}, P + "taskProfiles[0].maxTokens must be a positive integer (got 0)"),
        ({"taskProfiles": [{**profiles()[0], "softStepBudget": 1.5}]}, P + "taskProfiles[0].softStepBudget must be a positive integer (got 1.5)"),
        ({"taskProfiles": [{**profiles()[0], "hardStepBudget": True}]}, P + "taskProfiles[0].hardStepBudget must be a positive integer (got true)"),
        ({"taskProfiles": [{**profiles()[0], "hardStepBudget": 4}]}, P + "taskProfiles[0].hardStepBudget must exceed softStepBudget"),
        ({"pruneLevels": [level(name="")]}, P + "pruneLevels[0].name must not be empty"),
        ({"pruneLevels": [level(), level(atStep=11, thresholdChars=90)]}, P + 'duplicate prune level "first"'),
        ({"pruneLevels": [level(atStep=0)]}, P + "pruneLevels[0].atStep must be a positive integer (got 0)"),
        ({"pruneLevels": [level(atPressureRatio=1.5)]}, P + "pruneLevels[0].atPressureRatio must be between 0 and 1 (got 1.5)"),
        ({"pruneLevels": [level(atPressureRatio="high")]}, P + 'pruneLevels[0].atPressureRatio must be between 0 and 1 (got "high")'),
        ({"pruneLevels": [level(protectRecentSteps=-1)]}, P + "pruneLevels[0].protectRecentSteps must be a non-negative integer (got -1)"),
        ({"pruneLevels": [level(minimumCharsRemoved=0.5)]}, P + "pruneLevels[0].minimumCharsRemoved must be a non-negative integer (got 0.5)"),
        (
            {"pruneLevels": [level(), level(name="backwards", atStep=9, atPressureRatio=0.6, thresholdChars=80)]},
            P + "pruneLevels must increase triggers and strictly decrease thresholds",
        ),
        (
            {"pruneLevels": [level(), level(name="lower", atStep=11, atPressureRatio=0.4, thresholdChars=80)]},
            P + "pruneLevels must increase triggers and strictly decrease thresholds",
        ),
        (
            {"pruneLevels": [level(), level(name="same", atStep=11, thresholdChars=100)]},
            P + "pruneLevels must increase triggers and strictly decrease thresholds",
        ),
        ({"riskRouter": {"maxEvidenceChars": 0}}, P + "riskRouter.maxEvidenceChars must be a positive integer (got 0)"),
        ({"riskRouter": {"minimumScore": -2}}, P + "riskRouter.minimumScore must be a positive integer (got -2)"),
        ({"riskRouter": {"maxRequestChars": "4k"}}, P + 'riskRouter.maxRequestChars must be a positive integer (got "4k")'),
        ({"pruneLevels": [level(thresholdChars=20, headChars=10, tailChars=10)]},
         "ToolResultPruneConfig: headChars + marker + tailChars (59) must be at most thresholdChars (20)"),
    ],
)  # fmt: skip
def test_seed_error_messages(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate(raw)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"thresholdChars": 20, "headChars": 10, "tailChars": 10},
         "ToolResultPruneConfig: headChars + marker + tailChars (59) must be at most thresholdChars (20)"),
        ({"maxChars": 1}, 'ToolResultPruneConfig: unknown key "maxChars" (allowed: thresholdChars, headChars, tailChars)'),
        ({"thresholdChars": 0}, "ToolResultPruneConfig: thresholdChars (0) must be a positive integer"),
        ({"thresholdChars": 1.5}, "ToolResultPruneConfig: thresholdChars (1.5) must be a positive integer"),
        ({"headChars": -1}, "ToolResultPruneConfig: headChars (-1) must be a non-negative integer"),
        ({"tailChars": "x"}, "ToolResultPruneConfig: tailChars (x) must be a non-negative integer"),
        ({"tailChars": None}, "ToolResultPruneConfig: tailChars (null) must be a non-negative integer"),
        ({"headChars": True}, "ToolResultPruneConfig: headChars (true) must be a non-negative integer"),
    ],
)  # fmt: skip
def test_pruner_budget_messages(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate_prune_budget(raw)
    assert str(info.value) == message


def test_pruner_budget_accepts_the_exact_limit() -> None:
    assert validate_prune_budget({"thresholdChars": 59, "headChars": 10, "tailChars": 10}) == PruneBudget(
        59, 10, 10
    )
    assert validate_prune_budget({}) == PruneBudget(8192, 4096, 1024)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "adaptive-agent-policy: config must be a table/object (got [])"),
        ({"levels": []}, "Unknown adaptive configuration key levels. Valid keys: taskProfiles, pruneLevels, riskRouter, pruneSchedule."),
        ({"taskProfiles": {}}, "adaptive-agent-policy: taskProfiles must be a list (got {})"),
        ({"pruneLevels": [3]}, "adaptive-agent-policy: pruneLevels[0] must be a table/object (got 3)"),
        ({"pruneLevels": [level(name=7)]}, "adaptive-agent-policy: pruneLevels[0].name must be a string (got 7)"),
        ({"pruneLevels": [level(name=["a\x1b"])]}, 'adaptive-agent-policy: pruneLevels[0].name must be a string (got ["a\\u001b"])'),
        ({"pruneLevels": [level(name={"n": 1})]}, 'adaptive-agent-policy: pruneLevels[0].name must be a string (got {"n":1})'),
        ({"pruneLevels": [level(atStepp=1)]}, "Unknown adaptive.pruneLevels[0] configuration key atStepp. Did you mean "
         "atStep? Valid keys: name, atStep, atPressureRatio, thresholdChars, headChars, tailChars, protectRecentSteps, "
         "minimumCharsRemoved."),
        ({"taskProfiles": [{**profiles()[0], "budget": 1}]}, "Unknown adaptive.taskProfiles[0] configuration key budget. "
         "Valid keys: taskClass, maxTokens, softStepBudget, hardStepBudget."),
        ({"riskRouter": {"enabled": "yes"}}, 'adaptive-agent-policy: riskRouter.enabled must be true or false (got "yes")'),
        ({"riskRouter": {"enabled": {"on": 1}}}, 'adaptive-agent-policy: riskRouter.enabled must be true or false (got {"on":1})'),
        ({"riskRouter": {"enabled": None}}, "adaptive-agent-policy: riskRouter.enabled must be true or false (got null)"),
        ({"riskRouter": {"skipCoverd": False}}, "Unknown adaptive.riskRouter configuration key skipCoverd. Did you mean "
         "skipCovered? Valid keys: enabled, minimumScore, maxRequestChars, maxEvidenceChars, skipCovered."),
        ({"riskRouter": 1}, "adaptive-agent-policy: riskRouter must be a table/object (got 1)"),
    ],
)  # fmt: skip
def test_shape_errors_name_the_key(raw: Any, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate(raw)
    assert str(info.value) == message


def test_policy_config_section_and_dotted_set() -> None:
    config = validate_config({"adaptive": {"riskRouter": {"minimumScore": 5}}})
    assert config.adaptive.risk_router.minimum_score == 5
    assert config.adaptive.prune_levels == DEFAULT_PRUNE_LEVELS
    changed, old = set_value(config, "adaptive.riskRouter.skipCovered", False)
    assert old is True and changed.adaptive.risk_router.skip_covered is False
    assert changed.get("adaptive.riskRouter.minimumScore") == 5
    with pytest.raises(ConfigError, match="riskRouter.minimumScore must be a positive integer"):
        set_value(config, "adaptive.riskRouter.minimumScore", 0)
    assert config.adaptive.risk_router.minimum_score == 5


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"taskProfiles": [{**profiles()[0], "taskClass": "huge\x1b[2J"}]},
         P + 'taskProfiles[0].taskClass is invalid (got "huge\\u001b[2J"; one of read, small, frontend, large, batch)'),
        ({"taskProfiles": [{**profiles()[0], "maxTokens": "9" * 100}]},
         P + 'taskProfiles[0].maxTokens must be a positive integer (got "' + "9" * 79 + '…" (100 characters))'),
        ({"taskProfiles": [{k: v for k, v in profiles()[0].items() if k != "softStepBudget"}]},
         P + "taskProfiles[0].softStepBudget must be a positive integer (missing)"),
        ({"pruneLevels": [level(atPressureRatio="high")]}, P + 'pruneLevels[0].atPressureRatio must be between 0 and 1 (got "high")'),
        ({"pruneLevels": [level(protectRecentSteps=-1)]}, P + "pruneLevels[0].protectRecentSteps must be a non-negative integer (got -1)"),
        ({"riskRouter": {"maxRequestChars": "4k"}}, P + 'riskRouter.maxRequestChars must be a positive integer (got "4k")'),
    ],
)  # fmt: skip
def test_a_refused_value_is_named(raw: dict[str, Any], message: str) -> None:
    """The seed's words, then the value given, escaped and cut as every config refusal shows one (they named none)."""
    with pytest.raises(ConfigError) as info:
        validate(raw)
    assert str(info.value) == message
