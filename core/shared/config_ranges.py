"""The allowed range of every numeric config key, and the one wording of a value out of it.

Here, in the shared layer, so that ``core.control.config_values`` (which checks the top of every key's range before
any section sees a value) and a section's own validator (``core.policies.slice_config``, which checks both ends)
read one table and refuse in one wording: the full key, the range and the value given.
"""

from __future__ import annotations

import re
from typing import Any

from core.shared.errors import ConfigError
from core.shared.text import plain_number, quoted, shown

_INDEX = re.compile(r"\[([0-9]+)\]")
_TEXT = 100_000_000  # chars: more than any request holds (a 1M-token window is a few million chars)
_COUNT = 1_000_000  # lines, errors, matches: more than any one tool result shows
_STEPS = 10_000  # steps or turns: more than any session runs
_TOKENS = 100_000_000  # tokens: a hundred times the largest context window a model offers today
# The allowed range of every numeric key a config file, ``config.set`` or ``--set`` gives (``*``: any list entry or
# model name), checked before the key's section sees the value: an upper bound no sane setting reaches, so a slip
# (``1e26``, a bytes count where chars were meant) is refused by name instead of switching a policy off for good.
# A section's validator refuses a value under the low end in the same words. The ``alerts`` keys carry their
# ranges in ``core.alerts.config``. README "Config" lists these bounds.
NUMBER_RANGES: dict[str, tuple[float, float]] = {
    "slice.maxStepsPerTurn": (1, _STEPS),
    "slice.history.keepRecentTurns": (0, _STEPS),
    "slice.history.entryMaxChars": (256, _TEXT),
    "slice.fold.pinSteps": (0, _STEPS),
    "slice.fold.pinMaxChars": (0, _TEXT),
    "slice.fold.spillPreviewMinBytes": (0, 1 << 30),
    "slice.fold.backoffAfterExpansions": (1, 1_000),
    "slice.digest.minChars": (0, _TEXT),
    "slice.digest.headLines": (0, _COUNT),
    "slice.digest.tailLines": (0, _COUNT),
    "slice.digest.maxKeepRatio": (0, 1),
    "slice.digest.structuredBlockCap": (1, 1_000_000_000),  # its message offers 1000000000 for "no cap"
    "slice.digest.structuredBlockMin": (0, _COUNT),
    "slice.digest.logMinChars": (0, _TEXT),
    "slice.digest.logMaxErrors": (1, _COUNT),
    "slice.digest.logContextLines": (0, _COUNT),
    "slice.digest.maxLineChars": (1, 1_000_000_000),  # as structuredBlockCap
    "slice.digest.lineHeadChars": (0, _TEXT),
    "slice.digest.lineTailChars": (0, _TEXT),
    "slice.digest.searchMinMatches": (1, _COUNT),
    "slice.digest.searchMinChars": (0, _TEXT),
    "slice.digest.searchMaxPerFile": (2, _COUNT),
    "rewind.maxTokens": (1, _TOKENS),
    "rewind.maxSummarizationRetries": (0, 8),
    "prolong.logWindow": (-1, _COUNT),
    "prolong.promptOrder": (100, 199),
    "prolong.denyKeep": (0, _COUNT),
    "adaptive.taskProfiles.*.maxTokens": (1, _TOKENS),
    "adaptive.taskProfiles.*.softStepBudget": (1, _STEPS),
    "adaptive.taskProfiles.*.hardStepBudget": (1, _STEPS),
    "adaptive.pruneLevels.*.atStep": (1, _STEPS),
    "adaptive.pruneLevels.*.atPressureRatio": (0, 1),
    "adaptive.pruneLevels.*.thresholdChars": (1, _TEXT),
    "adaptive.pruneLevels.*.headChars": (0, _TEXT),
    "adaptive.pruneLevels.*.tailChars": (0, _TEXT),
    "adaptive.pruneLevels.*.protectRecentSteps": (0, _STEPS),
    "adaptive.pruneLevels.*.minimumCharsRemoved": (0, _TEXT),
    "adaptive.riskRouter.minimumScore": (1, 1_000),
    "adaptive.riskRouter.maxRequestChars": (1, _TEXT),
    "adaptive.riskRouter.maxEvidenceChars": (1, _TEXT),
    "model.contextWindow": (1, _TOKENS),
    "model.maxOutputTokens": (1, _TOKENS),
    "model.limits.*.contextWindow": (1, _TOKENS),
    "model.limits.*.maxOutputTokens": (1, _TOKENS),
    "model.prices.*.hit": (0, 1_000_000),  # USD per 1M tokens
    "model.prices.*.miss": (0, 1_000_000),
    "model.prices.*.output": (0, 1_000_000),
}


def number_range(key: str) -> tuple[float, float] | None:
    """The allowed range of the dotted ``key`` (``NUMBER_RANGES``, a ``*`` there matching any one part), or None
    for a key without one."""
    parts = _INDEX.sub(r".\1", key).split(".")  # a list entry by index: taskProfiles[0] as taskProfiles.0
    for pattern, bounds in NUMBER_RANGES.items():
        wanted = pattern.split(".")
        if len(wanted) == len(parts) and all(w in ("*", p) for w, p in zip(wanted, parts, strict=True)):
            return bounds
    return None


def out_of_range(key: str, bounds: tuple[float, float], value: Any) -> ConfigError:
    """The refusal of ``value`` for the dotted ``key``, outside its ``bounds``: the key, the range and the value."""
    low, high = (plain_number(bound) for bound in bounds)
    return ConfigError(f"{quoted(key)} must be from {low} to {high} (got {shown(value)})")
