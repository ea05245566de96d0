"""The slice policy's prompt section and the ``defaultReasoningEffort`` rule (seed 000 §1.f)."""

from __future__ import annotations

import pytest

from core.policies.slice import default_reasoning_effort, prompt_section
from core.policies.slice_config import validate


def test_prompt_section_names_the_tape_and_every_recall_tool() -> None:
    text = prompt_section()
    assert text.startswith("<slice>\n") and text.endswith("\n</slice>")
    assert "[slice tape v1 · turns A-B …]" in text and "unknown, not false" in text
    for call in (
        'recall_search({"query"',
        'recall_turn({"turn"',
        'recall_step({"turn"',
        '{"seq": 41, "formatVersion": 4}',
    ):
        assert call in text


@pytest.mark.parametrize(
    ("configured", "requested", "declared", "expected"),
    [
        ("inherit", None, ["low", "high"], (None, None)),
        ("inherit", "max", ["low"], ("max", None)),
        ("high", "low", ["high"], ("low", None)),
        ("high", None, None, (None, None)),
        ("high", None, ["low", "high"], ("high", None)),
        (
            "max",
            None,
            ["low", "high"],
            (None, "slice defaultReasoningEffort=max is not declared by deepseek/v4 (declared: low, high); "
             "inheriting the adapter default"),
        ),
        (
            "off",
            None,
            [],
            (None, "slice defaultReasoningEffort=off is not declared by deepseek/v4 (declared: none); "
             "inheriting the adapter default"),
        ),
    ],
)  # fmt: skip
def test_default_reasoning_effort(
    configured: str, requested: str | None, declared: list[str] | None, expected: tuple
) -> None:
    config = validate({"defaultReasoningEffort": configured})
    assert default_reasoning_effort(config, requested, declared, "deepseek", "v4") == expected
