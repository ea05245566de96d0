"""The detail pane never parses or re-indents a multi-MB JSON payload just to show its first screen."""

from __future__ import annotations

import orjson
import pytest

import tui.widgets.detail as detail
from tui.widgets.detail import REFORMAT_LIMIT, guess_lexer


def test_huge_json_is_recognised_by_its_ends_without_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    huge = orjson.dumps({"rows": ["r" * 100] * (REFORMAT_LIMIT // 100)}).decode()
    small = orjson.dumps({"rows": [1, 2]}).decode()

    def refuse(data: object) -> object:
        raise AssertionError("a huge payload was parsed")

    assert guess_lexer(small) == "json"
    monkeypatch.setattr(detail.orjson, "loads", refuse)
    assert guess_lexer(huge) == "json"
    assert guess_lexer(huge[:-2]) == "text"  # cut short: not shown as JSON
    assert guess_lexer(" " * 10 + huge) == "json"
