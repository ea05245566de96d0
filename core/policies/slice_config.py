"""Validation of the slice plugin's config section (seed 000): ``history``, ``fold``, ``digest`` and the top level.

Key names, defaults and error messages follow the seed so a profile written for the DSH plugin loads here
unchanged and a bad one fails with the same words (but for the two that offered Infinity, below), followed by the value
it was given (``(got "8000")``, escaped and cut as ``shown`` writes it). A number under its key's range is the
exception: it is refused as ``core.control.config_values`` refuses one over the top, naming the full key and the
range (``slice.fold.pinSteps must be from 0 to 10,000 (got -1)``, ``core.shared.config_ranges``). Checks run in load order: top-level key names first (retired
keys explain where they went; unknown keys get a "did you mean"), then each value, section by section.

Numbers follow JavaScript's rules as the seed applied them: ``2.0`` is the integer 2, ``True`` is not a number,
NaN and infinities are rejected unless a key takes ``Infinity`` as "no limit" (two digest caps and the pin budget,
for a caller of ``validate``: a config file's or ``config.set``'s Infinity is refused before this section sees it,
since the log cannot record it, so their messages name a large number instead). Three digest choices go beyond
the recovered seed defaults; ``core.policies.digest`` explains why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from core.shared.config_ranges import number_range, out_of_range
from core.shared.errors import ConfigError, unknown_config_key
from core.shared.text import describe, shown
from core.shared.values import MAX_SAFE_INTEGER, whole_number

MIN_ENTRY_MAX_CHARS = 256
REASONING_EFFORTS = ("off", "low", "high", "max", "inherit")

TOP_LEVEL_KEYS = ("maxStepsPerTurn", "defaultReasoningEffort", "digest", "fold", "history", "mode")

RETIRED_TOP_LEVEL: dict[str, str] = {
    "maxParallelToolCalls": "scheduling belongs to the stock agent-loop row",
    "inTurnSeal": "in-turn sealing was retired with the replacement driver",
    "tape": "file-base tape options were retired with the replacement driver",
    "state": "the state/stream rollback experiments were retired",
    "maxRequestChars": (
        "the plugin no longer enforces a request ceiling; tape entries accumulate, "
        "so context-window handling must be configured in the host"
    ),
    "maxHistoryChars": (
        "honouring a history cap means rewriting entries, which is the prefix rewrite this policy exists to avoid"
    ),
}

RETIRED_HISTORY: dict[str, str] = {
    "highWaterChars": "every completed turn is sealed, so there is no pressure threshold to cross",
    "lowWaterChars": "every completed turn is sealed, so there is no archive target to fall back to",
    "keepRecentChars": "use history.keepRecentTurns — the window is counted in turns now",
    "checkpointMaxChars": "renamed to history.entryMaxChars",
    "pinFirstTurn": "original human messages now always stay in place on the surface, so no turn needs a pin",
    "pinUserChars": "user messages are never excerpted into entries any more, so there is no user text budget",
}


@dataclass(frozen=True, slots=True)
class HistoryConfig:
    """``history.*``: how many completed turns stay raw, and the optional entry size cap (code points)."""

    keepRecentTurns: int = 0
    entryMaxChars: int | None = None


@dataclass(frozen=True, slots=True)
class FoldConfig:
    """``fold.*``: the tool-result fold switch, position pins, the spill arm threshold and expansion backoff."""

    enabled: bool = True
    pinSteps: int = 0
    pinMaxChars: float = 8000
    spillPreviewMinBytes: float = 50000
    backoffAfterExpansions: int = 2


@dataclass(frozen=True, slots=True)
class DigestConfig:
    """``digest.*``: content routing thresholds. Lengths are UTF-16 units, as in the seed."""

    enabled: bool = True
    minChars: int = 1500
    headLines: int = 10
    tailLines: int = 4
    maxKeepRatio: float = 0.55
    structuredBlockCap: float = 12
    structuredBlockMin: int = 3
    logMinChars: int = 512
    logMaxErrors: int = 10
    logContextLines: int = 3
    maxLineChars: float = 1500
    lineHeadChars: int = 700
    lineTailChars: int = 300
    searchMinMatches: int = 100
    searchMinChars: int = 6000
    searchMaxPerFile: int = 4


@dataclass(frozen=True, slots=True)
class SliceConfig:
    """The whole slice section. ``None`` means "not set" for the two optional caps."""

    history: HistoryConfig = field(default_factory=HistoryConfig)
    fold: FoldConfig = field(default_factory=FoldConfig)
    digest: DigestConfig = field(default_factory=DigestConfig)
    maxStepsPerTurn: int | None = None
    defaultReasoningEffort: str = "inherit"
    mode: str = "slice"

    def to_dict(self) -> dict[str, Any]:
        """The config as seed-named keys; unset optional caps are omitted, so ``validate(c.to_dict()) == c``."""
        out: dict[str, Any] = {
            "history": _section_dict(self.history),
            "fold": _section_dict(self.fold),
            "digest": _section_dict(self.digest),
            "defaultReasoningEffort": self.defaultReasoningEffort,
            "mode": self.mode,
        }
        if self.maxStepsPerTurn is not None:
            out["maxStepsPerTurn"] = self.maxStepsPerTurn
        return out


def _section_dict(section: Any) -> dict[str, Any]:
    values = {f.name: getattr(section, f.name) for f in fields(section)}
    return {k: v for k, v in values.items() if v is not None}


# ---------------------------------------------------------------------------------------------- key checks
def _check_top_level_keys(raw: Mapping[str, Any]) -> None:
    for key in raw:
        name = str(key)
        if name in TOP_LEVEL_KEYS:
            continue
        if name in RETIRED_TOP_LEVEL:
            raise ConfigError(
                f"Retired slice configuration {name}: {RETIRED_TOP_LEVEL[name]}. See README migration."
            )
        # A typo of a retired key is still a typo: suggest it, and its own message explains the retirement.
        raise unknown_config_key(name, TOP_LEVEL_KEYS, "slice", also=tuple(RETIRED_TOP_LEVEL))


def _check_section_keys(
    section: str, raw: Mapping[str, Any], valid: tuple[str, ...], retired: Mapping[str, str]
) -> None:
    for key in raw:
        name = str(key)
        if name in valid:
            continue
        if name in retired:
            raise ConfigError(f"Retired {section} configuration {name}: {retired[name]}")
        raise unknown_config_key(name, valid, f"slice.{section}", also=tuple(retired))


def _section(raw: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = raw.get(name)
    if value is None and name not in raw:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{name} must be a mapping of {name}.* options, got {describe(value)}")
    return value


# ---------------------------------------------------------------------------------------------- value checks
def _number(value: Any) -> float | None:
    """``value`` when it is a non-NaN, non-boolean number (infinities allowed)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and math.isnan(value))
    ):
        return None
    return value


def _refused(message: str, value: Any, key: str = "") -> ConfigError:
    """The seed's ``message`` for a bad value, then the ``value`` given (``shown``: escaped, cut) and, where the
    message names two keys, the ``key`` that held it: ``(got -2 for tailLines)``."""
    return ConfigError(f"{message} (got {shown(value)}{f' for {key}' if key else ''})")


def _at_least_low(number: float, key: str, value: Any) -> None:
    """Refuse ``number`` (as ``value`` was given) under the low end of ``slice.<key>``'s range (``NUMBER_RANGES``)
    in the words ``check_ranges`` uses for a number over the top, which a config file's value meets first: both
    ends read alike, naming the full key and the range."""
    bounds = number_range(f"slice.{key}")
    assert bounds is not None, key  # every numeric key of the section has a range
    if number < bounds[0]:
        raise out_of_range(f"slice.{key}", bounds, value)


def _int_at_least(value: Any, key: str, message: str, *, safe: bool = False, name: str = "") -> int:
    """A whole number (the seed's ``message`` when it is none, or past ``MAX_SAFE_INTEGER`` when ``safe``) not
    under the low end of ``slice.<key>``'s range."""
    number = whole_number(value)
    if number is None or (safe and number > MAX_SAFE_INTEGER):
        raise _refused(message, value, name)
    _at_least_low(number, key, value)
    return number


def _int_or_infinity(value: Any, key: str, message: str) -> float:
    if isinstance(value, float) and value == math.inf:
        return value
    return _int_at_least(value, key, message)


def _non_negative_number(value: Any, key: str, message: str) -> float:
    number = _number(value)
    if number is None:
        raise _refused(message, value)
    _at_least_low(number, key, value)
    return number


def _boolean(value: Any, message: str) -> bool:
    if not isinstance(value, bool):
        raise _refused(message, value)
    return value


def _history(raw: Mapping[str, Any]) -> HistoryConfig:
    _check_section_keys("history", raw, ("keepRecentTurns", "entryMaxChars"), RETIRED_HISTORY)
    keep = 0
    if "keepRecentTurns" in raw:
        keep = _int_at_least(
            raw["keepRecentTurns"],
            "history.keepRecentTurns",
            "history.keepRecentTurns must be a non-negative safe integer",
            safe=True,
        )
    cap = None
    if "entryMaxChars" in raw:
        cap = _int_at_least(
            raw["entryMaxChars"],
            "history.entryMaxChars",
            f"history.entryMaxChars must be a safe integer >= {MIN_ENTRY_MAX_CHARS}",
            safe=True,
        )
    return HistoryConfig(keep, cap)


def _fold(raw: Mapping[str, Any]) -> FoldConfig:
    _check_section_keys("fold", raw, tuple(f.name for f in fields(FoldConfig)), {})
    d = FoldConfig()
    return FoldConfig(
        enabled=_boolean(raw.get("enabled", d.enabled), "fold.enabled must be a boolean"),
        pinSteps=_int_at_least(
            raw.get("pinSteps", d.pinSteps), "fold.pinSteps", "pinSteps must be a non-negative integer"
        ),
        pinMaxChars=_non_negative_number(
            raw.get("pinMaxChars", d.pinMaxChars), "fold.pinMaxChars", "pinMaxChars must be >= 0"
        ),
        spillPreviewMinBytes=_non_negative_number(
            raw.get("spillPreviewMinBytes", d.spillPreviewMinBytes),
            "fold.spillPreviewMinBytes",
            "spillPreviewMinBytes must be >= 0",
        ),
        backoffAfterExpansions=_int_at_least(
            raw.get("backoffAfterExpansions", d.backoffAfterExpansions),
            "fold.backoffAfterExpansions",
            "backoffAfterExpansions must be an integer >= 1",
        ),
    )


def _ratio(value: Any) -> float:
    number = _number(value)
    if number is None:
        raise _refused("digest.maxKeepRatio must be in (0, 1]", value)
    _at_least_low(number, "digest.maxKeepRatio", value)
    if number == 0:  # the low end itself is not in the range
        raise _refused("slice.digest.maxKeepRatio must be above 0 and at most 1", value)
    return float(number)


def _digest(raw: Mapping[str, Any]) -> DigestConfig:
    _check_section_keys("digest", raw, tuple(f.name for f in fields(DigestConfig)), {})
    d = DigestConfig()
    v = {f.name: raw.get(f.name, getattr(d, f.name)) for f in fields(DigestConfig)}
    head_tail = "digest.headLines/tailLines must be non-negative integers"
    line_cut = "digest.lineHeadChars/lineTailChars must be non-negative integers"
    log_limits = "digest.logMaxErrors/logContextLines invalid"
    return DigestConfig(
        enabled=_boolean(v["enabled"], "digest.enabled must be a boolean"),
        minChars=_int_at_least(
            v["minChars"], "digest.minChars", "digest.minChars must be a non-negative integer"
        ),
        headLines=_int_at_least(v["headLines"], "digest.headLines", head_tail, name="headLines"),
        tailLines=_int_at_least(v["tailLines"], "digest.tailLines", head_tail, name="tailLines"),
        maxKeepRatio=_ratio(v["maxKeepRatio"]),
        structuredBlockCap=_int_or_infinity(
            v["structuredBlockCap"],
            "digest.structuredBlockCap",
            "digest.structuredBlockCap must be a whole number >= 1 (for no cap, one past any run of structured "
            "lines, such as 1000000000)",
        ),
        structuredBlockMin=_int_at_least(
            v["structuredBlockMin"],
            "digest.structuredBlockMin",
            "digest.structuredBlockMin must be a non-negative integer",
        ),
        logMinChars=_int_at_least(
            v["logMinChars"], "digest.logMinChars", "digest.logMinChars must be a non-negative integer"
        ),
        logMaxErrors=_int_at_least(v["logMaxErrors"], "digest.logMaxErrors", log_limits, name="logMaxErrors"),
        logContextLines=_int_at_least(
            v["logContextLines"], "digest.logContextLines", log_limits, name="logContextLines"
        ),
        maxLineChars=_int_or_infinity(
            v["maxLineChars"],
            "digest.maxLineChars",
            "digest.maxLineChars must be a whole number > 0 (to never cut a line, one past any line's length, such "
            "as 1000000000)",
        ),
        lineHeadChars=_int_at_least(
            v["lineHeadChars"], "digest.lineHeadChars", line_cut, name="lineHeadChars"
        ),
        lineTailChars=_int_at_least(
            v["lineTailChars"], "digest.lineTailChars", line_cut, name="lineTailChars"
        ),
        searchMinMatches=_int_at_least(
            v["searchMinMatches"],
            "digest.searchMinMatches",
            "digest.searchMinMatches must be a positive integer",
        ),
        searchMinChars=_int_at_least(
            v["searchMinChars"],
            "digest.searchMinChars",
            "digest.searchMinChars must be a non-negative integer",
        ),
        searchMaxPerFile=_int_at_least(
            v["searchMaxPerFile"],
            "digest.searchMaxPerFile",
            "digest.searchMaxPerFile must be an integer >= 2",
        ),
    )


def validate(raw: Mapping[str, Any]) -> SliceConfig:
    """Check a raw slice config section and return it with defaults filled in; raise ``ConfigError`` if bad."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"the slice configuration must be a mapping of keys, got {describe(raw)}")
    _check_top_level_keys(raw)
    max_steps = None
    if "maxStepsPerTurn" in raw:
        max_steps = _int_at_least(
            raw["maxStepsPerTurn"],
            "maxStepsPerTurn",
            "maxStepsPerTurn must be a positive safe integer",
            safe=True,
        )
    effort = raw.get("defaultReasoningEffort", "inherit")
    if effort not in REASONING_EFFORTS:
        raise ConfigError(
            f"Invalid defaultReasoningEffort {describe(effort)}; expected one of {', '.join(REASONING_EFFORTS)}"
        )
    if raw.get("mode", "slice") != "slice":
        raise ConfigError(
            f"Only mode: slice is supported (got {shown(raw['mode'])}); state/stream rollback experiments are retired."
        )
    return SliceConfig(
        history=_history(_section(raw, "history")),
        fold=_fold(_section(raw, "fold")),
        digest=_digest(_section(raw, "digest")),
        maxStepsPerTurn=max_steps,
        defaultReasoningEffort=str(effort),
        mode="slice",
    )
